// SPDX-License-Identifier: MIT
/*
 * channel.c - a configured DMA channel: its ring memory (allocated and
 * pinned once, at start, in the memory and transfer mode that work), its
 * leases, its counters.  The streaming thread is stream.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel_impl.h"
#include "log.h"

const char *channel_state_name(enum channel_state st)
{
	static const char *const names[] = {
		"idle", "streaming", "recovering", "failed",
	};
	return names[st];
}

/* --- set-up: memory, transfer mode, pinning ------------------------------ */

/* auto: GPU memory when a GPU answers, else host, saying why. */
static int choose_memory(struct channel *ch)
{
	char why[160];
	int ordinal, r;

	if (ch->cfg.memory == MEMORY_HOST) {
		ch->memory = MEMORY_HOST;
		snprintf(ch->reason, sizeof(ch->reason), "memory = host");
		return 0;
	}
	r = memory_cuda_probe(ch->cfg.gpu, &ordinal, why, sizeof(why));
	if (r == 0) {
		ch->memory = MEMORY_CUDA;
		return 0;
	}
	if (ch->cfg.memory == MEMORY_CUDA) {
		log_err("channel %s: memory = cuda, but %s", ch->cfg.name, why);
		return r;
	}
	ch->memory = MEMORY_HOST;
	snprintf(ch->reason, sizeof(ch->reason), "no GPU: %s", why);
	log_notice("channel %s: host memory (%s)", ch->cfg.name, ch->reason);
	return 0;
}

static int pin_host(struct channel *ch, void *addr)
{
	struct dev_region reg = {
		.kind = DEV_REGION_HOST,
		.addr = addr,
		.fd = -1,
		.length = ch->mem->size,
	};

	return ch->ops->pin(ch->q, &reg, &ch->pin);
}

/*
 * A host-memory ring of its own for each new lessee: a process that leased
 * the channel before keeps whatever it mapped, so it must not be where the
 * card writes next.  The card is idle (no lease, no stream) when this runs.
 */
static int renew_host_ring(struct channel *ch)
{
	struct mem_region *old = ch->mem, *fresh;
	uint64_t old_pin = ch->pin;
	int r;

	r = ch->mops->alloc(old->size, ch->cfg.gpu, ch->cfg.name, &fresh);
	if (r < 0)
		return r;
	ch->mem = fresh;
	r = pin_host(ch, fresh->host);
	if (r < 0) {
		ch->mem = old;
		ch->pin = old_pin;
		ch->mops->free(fresh);
		return r;
	}
	ch->ops->unpin(ch->q, old_pin);
	ch->mops->free(old);
	return 0;
}

/*
 * gpudirect: the card writes the GPU slots.  A dma-buf of the ring is what
 * a real card imports; the sim takes the device pointer.
 */
static int pin_gpu(struct channel *ch)
{
	struct dev_region reg = {
		.kind = DEV_REGION_CUDA,
		.addr = ch->mem->dev,
		.fd = -1,
		.length = ch->mem->size,
		.gpu = ch->mem->gpu,
	};
	int fd, r;

	r = ch->mops->export_dmabuf(ch->mem, 0, ch->mem->size, &fd);
	if (r == 0) {
		struct dev_region buf = reg;

		buf.kind = DEV_REGION_DMABUF;
		buf.fd = fd;
		r = ch->ops->pin(ch->q, &buf, &ch->pin);
		close(fd);
		if (r == 0)
			return 0;
	}
	return ch->ops->pin(ch->q, &reg, &ch->pin);
}

static int setup_bounce(struct channel *ch)
{
	int r;

	r = copy_host_alloc(ch->mem->size, &ch->staging);
	if (r < 0)
		return r;
	ch->pending = calloc(ch->cfg.slots, sizeof(*ch->pending));
	if (!ch->pending)
		return -ENOMEM;
	r = copy_open(ch->mem->gpu, ch->cfg.queue_depth, &ch->ce);
	if (r < 0)
		return r;
	return pin_host(ch, ch->staging);
}

static int choose_mode(struct channel *ch)
{
	int r;

	if (ch->memory == MEMORY_HOST) {
		ch->mode = MODE_HOST;
		return pin_host(ch, ch->mem->host);
	}
	if (ch->cfg.mode != MODE_BOUNCE) {
		r = pin_gpu(ch);
		if (r == 0) {
			ch->mode = MODE_GPUDIRECT;
			snprintf(ch->reason, sizeof(ch->reason),
				 "card DMA straight into GPU memory");
			return 0;
		}
		if (ch->cfg.mode == MODE_GPUDIRECT) {
			log_err("channel %s: mode = gpudirect, but the card cannot pin GPU memory: %s",
				ch->cfg.name, strerror(-r));
			return r;
		}
		snprintf(ch->reason, sizeof(ch->reason),
			 "gpudirect unavailable (%s): bounce through host memory",
			 strerror(-r));
		log_notice("channel %s: %s", ch->cfg.name, ch->reason);
	} else {
		snprintf(ch->reason, sizeof(ch->reason), "mode = bounce");
	}
	if (ch->cfg.direction == DIR_H2C) {
		log_err("channel %s: h2c in GPU memory needs gpudirect; bounce serves c2h only",
			ch->cfg.name);
		return -EOPNOTSUPP;
	}
	ch->mode = MODE_BOUNCE;
	r = setup_bounce(ch);
	if (r < 0)
		log_err("channel %s: bounce set-up: %s", ch->cfg.name, strerror(-r));
	return r;
}

int channel_create(const struct config *cfg, const struct config_channel *cc,
		   const struct device_ops *ops, struct device *dev,
		   struct channel **ret_ch)
{
	struct channel *ch;
	int r;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	if (cc->direction == DIR_H2C) {
		ch->h2c = calloc(cc->slots, 1);
		ch->h2c_fill = calloc(cc->slots, sizeof(*ch->h2c_fill));
		if (!ch->h2c || !ch->h2c_fill) {
			free(ch->h2c);
			free(ch->h2c_fill);
			free(ch);
			return -ENOMEM;
		}
	}
	ch->cfg = *cc;
	if (!ch->cfg.gpu[0])
		snprintf(ch->cfg.gpu, sizeof(ch->cfg.gpu), "%s", cfg->device.gpu);
	ch->dma_timeout_ms = cfg->device.dma_timeout_ms;
	ch->ops = ops;
	ch->dev = dev;
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->cond, NULL);

	r = choose_memory(ch);
	if (r < 0)
		goto fail;
	ch->mops = memory_ops_for(ch->memory);
	r = ch->mops->alloc((size_t)cc->slots * cc->slot_size, ch->cfg.gpu,
			    cc->name, &ch->mem);
	if (r < 0) {
		log_err("channel %s: cannot allocate %u x %llu bytes of %s memory: %s",
			cc->name, cc->slots, (unsigned long long)cc->slot_size,
			memory_kind_name(ch->memory), strerror(-r));
		goto fail;
	}
	r = ops->queue_open(dev, &ch->cfg, &ch->q);
	if (r < 0) {
		log_err("channel %s: cannot open DMA engine %u: %s", cc->name,
			cc->engine, strerror(-r));
		goto fail;
	}
	r = choose_mode(ch);
	if (r < 0)
		goto fail;
	r = stream_ring_renew(ch);
	if (r < 0)
		goto fail;
	log_info("channel %s: %u slots of %llu bytes in %s memory, %s (%s)",
		 cc->name, cc->slots, (unsigned long long)cc->slot_size,
		 memory_kind_name(ch->memory), transfer_mode_name(ch->mode),
		 ch->reason);
	*ret_ch = ch;
	return 0;
fail:
	channel_destroy(ch);
	return r;
}

void channel_destroy(struct channel *ch)
{
	struct lease *l;

	if (!ch)
		return;
	stream_stop(ch);
	while ((l = ch->leases)) {
		ch->leases = l->next;
		lease_destroy(l, FPGAD_EVENT_DAEMON_GONE | FPGAD_EVENT_CLOSED);
	}
	if (ch->q) {
		if (ch->pin)
			ch->ops->unpin(ch->q, ch->pin);
		ch->ops->queue_close(ch->q);
	}
	copy_close(ch->ce);
	copy_host_free(ch->staging);
	free(ch->pending);
	if (ch->mem)
		ch->mops->free(ch->mem);
	ring_destroy(ch->ring);
	free(ch->h2c);
	free(ch->h2c_fill);
	pthread_cond_destroy(&ch->cond);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

/* --- leases (control path) ------------------------------------------------ */

static struct lease *lease_of(const struct channel *ch, const struct session *s)
{
	for (struct lease *l = ch->leases; l; l = l->next)
		if (l->session == s)
			return l;
	return NULL;
}

bool channel_leased_by(const struct channel *ch, const struct session *s)
{
	return lease_of(ch, s) != NULL;
}

static uint64_t ring_bytes(const struct channel *ch)
{
	return (uint64_t)ch->cfg.slots * ch->cfg.slot_size;
}

int channel_open(struct channel *ch, struct session *s, bool shared,
		 const struct config_control *limits,
		 struct channel_grant *ret_grant, char *err, size_t errlen)
{
	struct frame_ring_geometry geo = {
		.slots = ch->cfg.slots,
		.slot_size = ch->cfg.slot_size,
		.frame_size = ch->cfg.frame_size,
		.direction = ch->cfg.direction == DIR_H2C ? FPGAD_FRAMES_H2C :
							      FPGAD_FRAMES_C2H,
	};
	struct lease *l;
	int r;

	if (lease_of(ch, s)) {
		snprintf(err, errlen, "channel %s is already open on this connection",
			 ch->cfg.name);
		return -EALREADY;
	}
	if (shared && ch->cfg.direction == DIR_H2C) {
		snprintf(err, errlen, "channel %s is h2c: one writer, no shared lease",
			 ch->cfg.name);
		return -EINVAL;
	}
	if (ch->state == CHANNEL_FAILED) {
		snprintf(err, errlen, "channel %s has FAILED after repeated DMA errors",
			 ch->cfg.name);
		return -EIO;
	}
	if (ch->leases && (!shared || !ch->leases->shared)) {
		snprintf(err, errlen, "channel %s is busy: leased %s by pid %d (uid %u)",
			 ch->cfg.name, ch->leases->shared ? "shared" : "exclusively",
			 (int)ch->leases->pid, (unsigned)ch->leases->uid);
		return -EBUSY;
	}
	if (ch->leases && ch->leases->uid != s->peer.uid) {
		snprintf(err, errlen, "channel %s is busy: shared readers must share a uid (%u)",
			 ch->cfg.name, (unsigned)ch->leases->uid);
		return -EBUSY;
	}
	if (s->n_leases >= limits->max_leases) {
		snprintf(err, errlen, "lease limit reached (max_leases %u)",
			 limits->max_leases);
		return -ENOSPC;
	}
	if (s->pinned + ring_bytes(ch) > limits->max_pinned) {
		snprintf(err, errlen, "pinned-memory limit reached: %llu + %llu bytes > max_pinned %llu",
			 (unsigned long long)s->pinned,
			 (unsigned long long)ring_bytes(ch),
			 (unsigned long long)limits->max_pinned);
		return -ENOSPC;
	}
	r = lease_create(ch->cfg.name, &geo, s, shared, &l);
	if (r < 0) {
		snprintf(err, errlen, "cannot create the descriptor ring: %s", strerror(-r));
		return r;
	}
	if (!ch->leases && ch->memory == MEMORY_HOST) {
		r = renew_host_ring(ch);
		if (r < 0) {
			snprintf(err, errlen, "cannot make a fresh ring: %s", strerror(-r));
			lease_destroy(l, 0);
			return r;
		}
	}
	if (!ch->leases && s->peer.creds) {
		r = ch->mops->grant(ch->mem, s->peer.uid);
		if (r < 0) {
			snprintf(err, errlen, "cannot give the ring to uid %u: %s",
				 (unsigned)s->peer.uid, strerror(-r));
			lease_destroy(l, 0);
			return r;
		}
	}

	pthread_mutex_lock(&ch->lock);
	l->next = ch->leases;
	ch->leases = l;
	ch->n_leases++;
	pthread_mutex_unlock(&ch->lock);
	s->n_leases++;
	s->pinned += ring_bytes(ch);

	if (!ch->running) {
		r = stream_start(ch);
		if (r < 0) {
			channel_close(ch, s);
			snprintf(err, errlen, "cannot start streaming: %s", strerror(-r));
			return r;
		}
	}

	memset(ret_grant, 0, sizeof(*ret_grant));
	ret_grant->memory = ch->memory;
	ret_grant->mode = ch->mode;
	ret_grant->ring_size = ch->mem->size;
	ret_grant->gpu = ch->memory == MEMORY_CUDA ? ch->mem->gpu : -1;
	snprintf(ret_grant->gpu_bus_id, sizeof(ret_grant->gpu_bus_id), "%s",
		 ch->memory == MEMORY_CUDA ? ch->mem->gpu_bus_id : "");
	snprintf(ret_grant->shm_name, sizeof(ret_grant->shm_name), "%s",
		 ch->memory == MEMORY_HOST ? ch->mem->shm_name : "");
	memcpy(ret_grant->ipc_handle, ch->mem->ipc_handle,
	       sizeof(ret_grant->ipc_handle));
	snprintf(ret_grant->desc_name, sizeof(ret_grant->desc_name), "%s",
		 l->desc->shm_name);
	ret_grant->generation = l->generation;
	log_info("channel %s: leased %s by pid %d (uid %u)", ch->cfg.name,
		 shared ? "shared" : "exclusively", (int)s->peer.pid,
		 (unsigned)s->peer.uid);
	return 0;
}

int channel_close(struct channel *ch, struct session *s)
{
	struct frame_returned out[CHANNEL_BATCH];
	struct lease *l, **pp;
	int n;

	pthread_mutex_lock(&ch->lock);
	for (pp = &ch->leases; (l = *pp) && l->session != s; pp = &l->next)
		;
	if (!l) {
		pthread_mutex_unlock(&ch->lock);
		return -ENOENT;
	}
	/* The stream may be asleep on this lease's releases. */
	l->closing = true;
	while (ch->waiting_on == l)
		pthread_cond_wait(&ch->cond, &ch->lock);
	*pp = l->next;
	ch->n_leases--;
	/* Whatever the client had is the ring's again. */
	while ((n = frame_producer_reclaim_all(l->prod, out, CHANNEL_BATCH)) > 0)
		for (int i = 0; i < n; i++) {
			/* Unfinished h2c buffers of a departed writer are dropped. */
			out[i].fill = 0;
			stream_returned(ch, l, &out[i]);
		}
	pthread_mutex_unlock(&ch->lock);

	s->n_leases--;
	s->pinned -= ring_bytes(ch);
	log_info("channel %s: lease of pid %d ended", ch->cfg.name, (int)l->pid);
	lease_destroy(l, FPGAD_EVENT_CLOSED);
	if (!ch->leases)
		stream_stop(ch);
	return 0;
}

int channel_reset(struct channel *ch, char *err, size_t errlen)
{
	pthread_mutex_lock(&ch->lock);
	if (ch->state != CHANNEL_FAILED) {
		snprintf(err, errlen, "channel %s is %s, not failed: nothing to reset",
			 ch->cfg.name, channel_state_name(ch->state));
		pthread_mutex_unlock(&ch->lock);
		return -EALREADY;
	}
	/* The engine was stopped and reset when it failed; arm it again. */
	ch->failures = 0;
	ch->state = ch->running ? CHANNEL_STREAMING : CHANNEL_IDLE;
	pthread_mutex_unlock(&ch->lock);
	if (ch->running)
		ch->ops->kick(ch->q);
	log_notice("channel %s: reset, %s", ch->cfg.name,
		   ch->running ? "streaming again" : "idle");
	return 0;
}

enum channel_state channel_state(struct channel *ch)
{
	enum channel_state st;

	pthread_mutex_lock(&ch->lock);
	st = ch->state;
	pthread_mutex_unlock(&ch->lock);
	return st;
}

const struct config_channel *channel_config(const struct channel *ch)
{
	return &ch->cfg;
}

void channel_get_stats(struct channel *ch, struct channel_stats *ret_stats)
{
	struct ring_stats rs;

	pthread_mutex_lock(&ch->lock);
	*ret_stats = ch->stats;
	ring_get_stats(ch->ring, &rs);
	ret_stats->drops = ch->acc.drops + rs.drops;
	ret_stats->stalls = ch->acc.stalls + rs.stalls;
	ret_stats->state = ch->state;
	ret_stats->memory = ch->memory;
	ret_stats->mode = ch->mode;
	ret_stats->lessees = ch->n_leases;
	pthread_mutex_unlock(&ch->lock);
	if (ch->ops->sink_counts && ch->cfg.direction == DIR_H2C)
		ch->ops->sink_counts(ch->q, &ret_stats->card_good,
				     &ret_stats->card_bad);
}

bool channel_is_streaming(struct channel *ch)
{
	return ch->running;
}

const char *channel_mode_reason(const struct channel *ch)
{
	return ch->reason;
}
