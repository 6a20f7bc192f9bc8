// SPDX-License-Identifier: MIT
/*
 * xfer_buffer.c - buffers clients register for card transfers
 * (xfer_impl.h): ids that name a buffer of one connection and no other,
 * the limits, reaching the memory (a client's memfd, mapped; a client's
 * GPU allocation, opened once however many buffers it holds), pinning it
 * in every memory engine, the transfer mode and why, and letting go once
 * no transfer uses it.  Also the handoff socket's claim of a token: a
 * queue's (xfer_client.c), or a pending host buffer's, whose memfd comes
 * with it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "xfer/xfer_impl.h"

#define XFER_ID_INDEX(id) ((uint32_t)((id) & 0xffffffffu))
#define XFER_ID_GEN(id) ((uint32_t)((id) >> 32))

/* @c's buffer @id, pending or not; NULL if it has none such. */
static struct xfer_buffer *xfer_buffer_lookup(struct xfer_client *c,
					      uint64_t id)
{
	uint32_t idx = XFER_ID_INDEX(id) - 1;

	if (!XFER_ID_INDEX(id) || idx >= c->n_slots || !c->bufs[idx] ||
	    c->gens[idx] != XFER_ID_GEN(id))
		return NULL;
	return c->bufs[idx];
}

struct xfer_buffer *xfer_buffer_find(struct xfer_client *c, uint64_t id)
{
	struct xfer_buffer *b = xfer_buffer_lookup(c, id);

	return b && b->ready && !b->dead ? b : NULL;
}

/* A free place in @c's table, which grows as needed. */
static int xfer_buffer_slot(struct xfer_client *c, unsigned *ret_idx)
{
	struct xfer_buffer **bufs;
	uint32_t *gens;
	unsigned n;

	for (unsigned i = 0; i < c->n_slots; i++) {
		if (!c->bufs[i]) {
			*ret_idx = i;
			return 0;
		}
	}
	n = c->n_slots ? 2 * c->n_slots : 16;
	bufs = realloc(c->bufs, n * sizeof(*bufs));
	if (!bufs)
		return -ENOMEM;
	c->bufs = bufs;
	gens = realloc(c->gens, n * sizeof(*gens));
	if (!gens)
		return -ENOMEM;
	c->gens = gens;
	for (unsigned i = c->n_slots; i < n; i++) {
		c->bufs[i] = NULL;
		c->gens[i] = 1;
	}
	*ret_idx = c->n_slots;
	c->n_slots = n;
	return 0;
}

/* --- pins and modes (x->lock held) ------------------------------------- */

static void xfer_buffer_unpin(struct xfer *x, struct xfer_buffer *b)
{
	for (unsigned d = 0; d < 2; d++) {
		for (unsigned i = 0; i < x->n_eng[d]; i++) {
			if (!b->pins[d][i])
				continue;
			if (x->ops->unpin(x->eng[d][i].q, b->pins[d][i]))
				log_warn("transfer: buffer %" PRIu64 ": unpin "
					 "failed", b->id);
			b->pins[d][i] = 0;
		}
	}
	b->direct = false;
}

/* What the card pins for @b: host memory, a dma-buf of GPU memory, or the
   device pointer where no dma-buf comes (the sim, NV-P2P). */
static int xfer_buffer_pin_one(struct xfer *x, struct xfer_buffer *b,
			       struct xfer_engine *e, uint64_t *ret_pin)
{
	struct dev_region reg = {
		.kind = b->memory == MEMORY_CUDA ? DEV_REGION_CUDA :
			DEV_REGION_HOST,
		.addr = b->addr,
		.fd = -1,
		.length = b->length,
		.gpu = b->ipc ? b->ipc->mem->gpu : -1,
	};
	int fd, r;

	if (b->memory == MEMORY_CUDA && memory_cuda_ops.export_dmabuf &&
	    memory_cuda_ops.export_dmabuf(b->ipc->mem, b->offset, b->length,
					  &fd) == 0) {
		struct dev_region dma = reg;

		dma.kind = DEV_REGION_DMABUF;
		dma.fd = fd;
		r = x->ops->pin(e->q, &dma, ret_pin);
		close(fd);
		if (!r)
			return 0;
	}
	return x->ops->pin(e->q, &reg, ret_pin);
}

static int xfer_buffer_pin(struct xfer *x, struct xfer_buffer *b)
{
	if (b->direct)
		return 0;
	for (unsigned d = 0; d < 2; d++) {
		for (unsigned i = 0; i < x->n_eng[d]; i++) {
			int r = xfer_buffer_pin_one(x, b, &x->eng[d][i],
						    &b->pins[d][i]);

			if (r) {
				b->pins[d][i] = 0;
				xfer_buffer_unpin(x, b);
				return r;
			}
		}
	}
	b->direct = true;
	return 0;
}

static int xfer_buffer_bounce(struct xfer *x, struct xfer_buffer *b,
			      char *err, size_t errlen)
{
	struct copy_engine *ce;
	int r = xfer_staging(x, err, errlen);

	if (r)
		return r;
	r = xfer_copy_engine(x, b->ipc->mem->gpu, &ce);
	if (r)
		snprintf(err, errlen, "no copy engine on GPU %d: %s",
			 b->ipc->mem->gpu, strerror(-r));
	return r;
}

/* Put @b in @mode (auto: the first that works), saying why in b->reason. */
static int xfer_buffer_set(struct xfer *x, struct xfer_buffer *b,
			   enum transfer_mode mode, char *err, size_t errlen)
{
	bool gpu = b->memory == MEMORY_CUDA;
	char why[XFER_REASON];
	int r;

	if (gpu && mode == MODE_HOST) {
		snprintf(err, errlen, "mode host needs host memory; buffer "
			 "%" PRIu64 " is GPU memory", b->id);
		return -EINVAL;
	}
	if (!gpu && (mode == MODE_GPUDIRECT || mode == MODE_BOUNCE)) {
		snprintf(err, errlen, "mode %s needs GPU memory; buffer %" PRIu64
			 " is host memory", transfer_mode_name(mode), b->id);
		return -EINVAL;
	}
	if (!gpu) {
		r = xfer_buffer_pin(x, b);
		if (r) {
			snprintf(err, errlen, "the card cannot pin the buffer: %s",
				 strerror(-r));
			return r;
		}
		b->mode = MODE_HOST;
		snprintf(b->reason, sizeof(b->reason), "host memory");
		return 0;
	}
	if (mode != MODE_BOUNCE) {
		r = xfer_buffer_pin(x, b);
		if (!r) {
			b->mode = MODE_GPUDIRECT;
			snprintf(b->reason, sizeof(b->reason),
				 "card DMA straight into GPU memory; %s",
				 memory_rdma_order_rule(b->ipc ? b->ipc->mem->rdma_order :
							RDMA_ORDER_UNKNOWN));
			return 0;
		}
		if (mode == MODE_GPUDIRECT) {
			snprintf(err, errlen, "mode gpudirect: the card cannot "
				 "pin this GPU memory: %s", strerror(-r));
			return r;
		}
		snprintf(why, sizeof(why), "gpudirect unavailable (%s): bounce "
			 "through host memory", strerror(-r));
	} else {
		snprintf(why, sizeof(why), "mode bounce asked for");
	}
	r = xfer_buffer_bounce(x, b, err, errlen);
	if (r)
		return r;
	b->mode = MODE_BOUNCE;
	snprintf(b->reason, sizeof(b->reason), "%s", why);
	return 0;
}

/* --- release -------------------------------------------------------------- */

static void xfer_ipc_put(struct xfer *x, struct xfer_ipc *ipc)
{
	if (!ipc || --ipc->refs)
		return;
	for (struct xfer_ipc **pp = &x->ipcs; *pp; pp = &(*pp)->next) {
		if (*pp == ipc) {
			*pp = ipc->next;
			break;
		}
	}
	memory_cuda_ops.free(ipc->mem);
	free(ipc);
}

static void xfer_buffer_free(struct xfer *x, struct xfer_buffer *b)
{
	xfer_buffer_unpin(x, b);
	if (b->mem)
		memory_host_ops.free(b->mem);
	xfer_ipc_put(x, b->ipc);
	b->c->n_buffers--;
	b->c->registered -= b->length;
	log_debug("transfer: buffer %" PRIu64 " of pid %d let go", b->id,
		  (int)b->c->pid);
	free(b);
}

void xfer_buffer_maybe_free(struct xfer *x, struct xfer_buffer *b)
{
	if (b->dead && !b->inflight)
		xfer_buffer_free(x, b);
}

void xfer_buffer_kill(struct xfer *x, struct xfer_buffer *b)
{
	struct xfer_client *c = b->c;
	uint32_t idx = XFER_ID_INDEX(b->id) - 1;

	if (b->dead)
		return;
	b->dead = true;
	/* Unknown to new entries at once; the id is never valid again. */
	if (idx < c->n_slots && c->bufs[idx] == b) {
		c->bufs[idx] = NULL;
		c->gens[idx]++;
	}
	xfer_buffer_maybe_free(x, b);
}

/* --- registration ---------------------------------------------------------- */

/* Which pending host buffer holds @token; NULL if none. */
static struct xfer_buffer *xfer_buffer_pending(struct xfer *x,
					       const uint8_t *token)
{
	for (struct xfer_client *c = x->clients; c; c = c->next) {
		if (c->gone)
			continue;
		for (unsigned i = 0; i < c->n_slots; i++) {
			struct xfer_buffer *b = c->bufs[i];

			if (b && !b->ready && !b->dead && b->token.valid &&
			    !memcmp(b->token.bytes, token, sizeof(b->token.bytes)))
				return b;
		}
	}
	return NULL;
}

/* The memfd of pending @b arrived: map it, pin it. */
static int xfer_buffer_attach_fd(struct xfer *x, struct xfer_buffer *b,
				 int fd, char *err, size_t errlen)
{
	struct mem_import imp = { .length = b->length, .fd = fd };
	char why[160];
	int r;

	r = memory_host_ops.import(&imp, &b->mem, why, sizeof(why));
	if (r) {
		snprintf(err, errlen, "buffer %" PRIu64 ": %s", b->id, why);
		return r;
	}
	b->addr = b->mem->host;
	r = xfer_buffer_set(x, b, MODE_HOST, err, errlen);
	if (r) {
		/* The descriptor is the region's: let go of both here. */
		memory_host_ops.free(b->mem);
		b->mem = NULL;
		return r == -EBADF ? -EIO : r;
	}
	b->ready = true;
	log_info("transfer: buffer %" PRIu64 " of pid %d: %" PRIu64 " bytes of "
		 "host memory", b->id, (int)b->c->pid, b->length);
	return 0;
}

/* The client's GPU allocation, opened here once (loop thread). */
static int xfer_ipc_get(struct xfer *x, const struct xfer_register_args *a,
			struct xfer_ipc **ret_ipc, char *err, size_t errlen)
{
	struct mem_import imp = {
		.ipc_handle = a->ipc_handle,
		.gpu_bus_id = a->gpu_bus_id,
	};
	struct mem_region *mem;
	struct xfer_ipc *ipc;
	char why[192];
	int r;

	pthread_mutex_lock(&x->lock);
	for (ipc = x->ipcs; ipc; ipc = ipc->next) {
		if (!memcmp(ipc->mem->ipc_handle, a->ipc_handle,
			    MEMORY_IPC_HANDLE_SIZE) &&
		    !strcmp(ipc->mem->gpu_bus_id, a->gpu_bus_id)) {
			ipc->refs++;
			pthread_mutex_unlock(&x->lock);
			*ret_ipc = ipc;
			return 0;
		}
	}
	pthread_mutex_unlock(&x->lock);

	/* Opening takes long the first time (a CUDA context): unlocked. */
	r = memory_cuda_ops.import(&imp, &mem, why, sizeof(why));
	if (r) {
		snprintf(err, errlen, "GPU memory: %s", why);
		return r;
	}
	ipc = calloc(1, sizeof(*ipc));
	if (!ipc) {
		memory_cuda_ops.free(mem);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ipc->mem = mem;
	ipc->refs = 1;
	pthread_mutex_lock(&x->lock);
	ipc->next = x->ipcs;
	x->ipcs = ipc;
	pthread_mutex_unlock(&x->lock);
	*ret_ipc = ipc;
	return 0;
}

static int xfer_register_check(const struct xfer *x,
			       const struct xfer_register_args *a, char *err,
			       size_t errlen)
{
	uint32_t g = x->rules.gpu_align;

	if (!a->length) {
		snprintf(err, errlen, "a buffer of 0 bytes");
		return -EINVAL;
	}
	if (a->memory == MEMORY_HOST) {
		if (a->mode == MODE_GPUDIRECT || a->mode == MODE_BOUNCE) {
			snprintf(err, errlen, "mode %s needs GPU memory; the "
				 "buffer is host memory",
				 transfer_mode_name(a->mode));
			return -EINVAL;
		}
		return 0;
	}
	if (a->memory != MEMORY_CUDA) {
		snprintf(err, errlen, "memory is host or cuda");
		return -EINVAL;
	}
	if (a->mode == MODE_HOST) {
		snprintf(err, errlen, "mode host needs host memory; the buffer "
			 "is GPU memory");
		return -EINVAL;
	}
	if (a->ipc_offset % g || a->length % g) {
		snprintf(err, errlen, "a GPU buffer starts and ends on %u-byte "
			 "boundaries (it starts %" PRIu64 " bytes into its "
			 "allocation and is %" PRIu64 " bytes long)", g,
			 a->ipc_offset, a->length);
		return -EINVAL;
	}
	if (x->rules.part_size < g) {
		snprintf(err, errlen, "the card's engines move %" PRIu64
			 " bytes at most, less than GPU memory's %u",
			 x->rules.part_size, g);
		return -EINVAL;
	}
	return 0;
}

static int xfer_register_limits(const struct xfer_client *c,
				const struct config_transfer *limits,
				uint64_t length, char *err, size_t errlen)
{
	if (c->n_buffers >= limits->max_buffers) {
		snprintf(err, errlen, "buffer limit reached: %u buffers "
			 "registered (max_buffers %u)", c->n_buffers,
			 limits->max_buffers);
		return -ENOSPC;
	}
	if (length > limits->max_registered ||
	    c->registered > limits->max_registered - length) {
		snprintf(err, errlen, "registered-memory limit reached: %" PRIu64
			 " + %" PRIu64 " bytes > max_registered %" PRIu64,
			 c->registered, length, limits->max_registered);
		return -ENOSPC;
	}
	return 0;
}

int xfer_register(struct xfer *x, const struct xfer_who *who,
		  const struct config_transfer *limits,
		  const struct xfer_register_args *a,
		  struct xfer_register_grant *ret_grant, char *err,
		  size_t errlen)
{
	struct xfer_ipc *ipc = NULL;
	struct xfer_client *c;
	struct xfer_buffer *b;
	unsigned idx;
	int r;

	if (!x->on) {
		snprintf(err, errlen, "card memory transfers are off: %s",
			 x->why_off);
		return -ENODEV;
	}
	r = xfer_register_check(x, a, err, errlen);
	if (r)
		return r;
	pthread_mutex_lock(&x->lock);
	c = xfer_client_get(x, who);
	r = c ? xfer_register_limits(c, limits, a->length, err, errlen) :
		-ENOMEM;
	pthread_mutex_unlock(&x->lock);
	if (r)
		return r;
	if (a->memory == MEMORY_CUDA) {
		r = xfer_ipc_get(x, a, &ipc, err, errlen);
		if (r)
			return r;
		if (a->ipc_offset > ipc->mem->size ||
		    a->length > ipc->mem->size - a->ipc_offset ||
		    ((uintptr_t)ipc->mem->dev + a->ipc_offset) %
		    x->rules.gpu_align) {
			snprintf(err, errlen, "the buffer ends past its "
				 "allocation (%zu bytes), or its allocation "
				 "does not start on a %u-byte boundary",
				 ipc->mem->size, x->rules.gpu_align);
			pthread_mutex_lock(&x->lock);
			xfer_ipc_put(x, ipc);
			pthread_mutex_unlock(&x->lock);
			return -EINVAL;
		}
	}

	pthread_mutex_lock(&x->lock);
	/* The limits again: the lock was let go meanwhile. */
	r = xfer_register_limits(c, limits, a->length, err, errlen);
	if (!r)
		r = xfer_buffer_slot(c, &idx);
	b = r ? NULL : calloc(1, sizeof(*b));
	if (!b) {
		if (!r) {
			r = -ENOMEM;
			snprintf(err, errlen, "out of memory");
		}
		xfer_ipc_put(x, ipc);
		goto out;
	}
	b->c = c;
	b->id = (uint64_t)c->gens[idx] << 32 | (idx + 1);
	b->memory = a->memory;
	b->length = a->length;
	b->ipc = ipc;
	b->offset = a->ipc_offset;
	c->bufs[idx] = b;
	c->n_buffers++;
	c->registered += b->length;
	memset(ret_grant, 0, sizeof(*ret_grant));
	if (a->memory == MEMORY_HOST) {
		/* Usable once its memfd comes on the handoff socket. */
		r = handoff_token_make(&b->token);
		if (r) {
			snprintf(err, errlen, "no random bytes for a token");
			xfer_buffer_kill(x, b);
			goto out;
		}
		b->mode = MODE_HOST;
		snprintf(b->reason, sizeof(b->reason), "host memory");
		ret_grant->host = true;
		memcpy(ret_grant->token, b->token.bytes, sizeof(ret_grant->token));
	} else {
		b->addr = (unsigned char *)ipc->mem->dev + a->ipc_offset;
		r = xfer_buffer_set(x, b, a->mode, err, errlen);
		if (r) {
			xfer_buffer_kill(x, b);
			goto out;
		}
		b->ready = true;
		log_info("transfer: buffer %" PRIu64 " of pid %d: %" PRIu64
			 " bytes of GPU memory on %s, %s (%s)", b->id,
			 (int)c->pid, b->length, ipc->mem->gpu_bus_id,
			 transfer_mode_name(b->mode), b->reason);
	}
	ret_grant->id = b->id;
	ret_grant->mode = b->mode;
	snprintf(ret_grant->reason, sizeof(ret_grant->reason), "%s", b->reason);
out:
	pthread_mutex_unlock(&x->lock);
	return r;
}

int xfer_unregister(struct xfer *x, const void *session, uint64_t id,
		    char *err, size_t errlen)
{
	struct xfer_client *c;
	struct xfer_buffer *b = NULL;

	pthread_mutex_lock(&x->lock);
	c = xfer_client_find(x, session);
	if (c)
		b = xfer_buffer_lookup(c, id);
	if (b)
		xfer_buffer_kill(x, b);
	pthread_mutex_unlock(&x->lock);
	if (!b) {
		snprintf(err, errlen, "no buffer %" PRIu64 " on this connection",
			 id);
		return -ENOENT;
	}
	return 0;
}

int xfer_set_mode(struct xfer *x, const void *session, uint64_t id,
		  enum transfer_mode mode, enum transfer_mode *ret_mode,
		  char *reason, size_t reasonlen, char *err, size_t errlen)
{
	struct xfer_client *c;
	struct xfer_buffer *b = NULL;
	int r = -ENOENT;

	pthread_mutex_lock(&x->lock);
	c = xfer_client_find(x, session);
	if (c)
		b = xfer_buffer_find(c, id);
	if (!b) {
		snprintf(err, errlen, "no buffer %" PRIu64 " on this connection",
			 id);
		goto out;
	}
	r = xfer_buffer_set(x, b, mode, err, errlen);
	if (r)
		goto out;
	*ret_mode = b->mode;
	snprintf(reason, reasonlen, "%s", b->reason);
	log_info("transfer: buffer %" PRIu64 " of pid %d: mode %s (%s)", b->id,
		 (int)c->pid, transfer_mode_name(b->mode), b->reason);
out:
	pthread_mutex_unlock(&x->lock);
	return r;
}

/* A pending host buffer's memfd: the first descriptor that came. */
static int xfer_claim_buffer(struct xfer *x, struct xfer_buffer *b,
			     const struct handoff_peer *peer, char *err,
			     size_t errlen)
{
	int r;

	for (unsigned i = 0; i < peer->n_fds; i++) {
		int fd = peer->fds[i];

		if (fd < 0)
			continue;
		r = xfer_buffer_attach_fd(x, b, fd, err, errlen);
		if (r) {
			xfer_buffer_kill(x, b);
			return r;
		}
		peer->fds[i] = -1;	/* the buffer's now */
		snprintf(err, errlen, "buffer %llu registered",
			 (unsigned long long)b->id);
		return 0;
	}
	snprintf(err, errlen, "buffer %llu: no memfd came with the token",
		 (unsigned long long)b->id);
	xfer_buffer_kill(x, b);
	return -EINVAL;
}

int xfer_claim(struct xfer *x, const uint8_t *token,
	       const struct handoff_peer *peer, int *ret_fds,
	       unsigned *ret_n_fds, void **ret_target, char *err,
	       size_t errlen)
{
	struct xfer_buffer *b;
	int r;

	if (!x)
		return -ENOENT;
	pthread_mutex_lock(&x->lock);
	r = xfer_client_claim(x, token, peer, ret_fds, ret_n_fds, ret_target,
			      err, errlen);
	b = r == -ENOENT ? xfer_buffer_pending(x, token) : NULL;
	if (b)
		r = handoff_token_claim(&b->token, token, peer, b->c->pid, b->c->uid,
					"the buffer", err, errlen);
	if (b && !r) {
		r = xfer_claim_buffer(x, b, peer, err, errlen);
		if (!r) {
			*ret_n_fds = 0;
			*ret_target = x;
		}
	}
	pthread_mutex_unlock(&x->lock);
	return r;
}

static int claimer_claim(void *user, const uint8_t *token,
			 const struct handoff_peer *peer, int *ret_fds,
			 unsigned *ret_n_fds, void **ret_target, char *err,
			 size_t errlen)
{
	return xfer_claim(user, token, peer, ret_fds, ret_n_fds, ret_target,
			  err, errlen);
}

static void claimer_link(void *user, void *target, int fd)
{
	xfer_link(user, target, fd);
}

void xfer_claimer(struct xfer *x, struct handoff_claimer *ret)
{
	*ret = (struct handoff_claimer){
		.user = x,
		.claim = claimer_claim,
		.link = claimer_link,
	};
}
