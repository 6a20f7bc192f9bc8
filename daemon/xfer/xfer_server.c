// SPDX-License-Identifier: MIT
/* xfer_server.c - fpgad's end of a transfer queue (xfer_server.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "memory/memory.h"
#include "xfer/xfer_server.h"

struct xfer_server {
	struct mem_region *mem;		/* the sealed memfd, mapped */
	struct fpgad_xfer_header *hdr;
	int doorbell;
	bool armed;
	/* Private copies: the shared words are the client's to scribble on. */
	struct xfer_ring_layout l;
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t sq_head;
	uint32_t cq_tail;
	uint32_t cq_head;		/* the last cq_head that made sense */
	uint32_t bad_tail;		/* last nonsense sq_tail counted */
	uint32_t bad_head;		/* last nonsense cq_head counted */
	uint32_t bad;
	uint32_t events;
	uint64_t taken;
	uint64_t refused;
};

static uint64_t xfer_server_generation(void)
{
	static _Atomic uint64_t next;

	return (clock_now_ns() << 16) ^ (atomic_fetch_add(&next, 1) + 1);
}

int xfer_server_create(uint32_t entries, const struct xfer_server_rules *rules,
		       const char *name_hint, struct xfer_server **ret_s)
{
	struct fpgad_xfer_header *h;
	struct xfer_ring_layout l;
	struct xfer_server *s;
	int r;

	r = xfer_ring_layout(entries, 2 * entries, &l);
	if (r)
		return r;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->doorbell = -1;
	r = memory_host_ops.alloc(l.size, NULL, name_hint, 0, &s->mem);
	if (r)
		goto fail;
	s->doorbell = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->doorbell < 0) {
		r = -errno;
		goto fail;
	}
	s->l = l;
	s->sq_entries = l.sq_entries;
	s->cq_entries = l.cq_entries;

	h = s->hdr = s->mem->host;
	memset(h, 0, l.size);
	h->version_major = FPGAD_XFER_VERSION_MAJOR;
	h->version_minor = FPGAD_XFER_VERSION_MINOR;
	h->header_size = sizeof(*h);
	h->sqe_size = sizeof(struct fpgad_xfer_sqe);
	h->cqe_size = sizeof(struct fpgad_xfer_cqe);
	h->sq_entries = l.sq_entries;
	h->cq_entries = l.cq_entries;
	h->sq_offset = l.sq_offset;
	h->cq_offset = l.cq_offset;
	h->generation = xfer_server_generation() | 1;
	h->card_memory = rules->card_memory;
	h->max_length = rules->max_length;
	h->part_size = rules->part_size;
	h->host_align = rules->host_align;
	h->gpu_align = rules->gpu_align;
	h->max_timeout_ms = rules->max_timeout_ms;
	/* Born asking for the doorbell: the serving thread may be asleep. */
	h->srv_waiting = 1;
	s->armed = true;
	atomic_store_explicit(FR_A32(&h->magic), FPGAD_XFER_MAGIC,
			      memory_order_release);
	*ret_s = s;
	return 0;
fail:
	xfer_server_free(s);
	return r;
}

void xfer_server_free(struct xfer_server *s)
{
	if (!s)
		return;
	if (s->doorbell >= 0)
		close(s->doorbell);
	if (s->mem)
		memory_host_ops.free(s->mem);
	free(s);
}

void xfer_server_fds(const struct xfer_server *s, int *ret_memfd,
		     int *ret_doorbell)
{
	*ret_memfd = s->mem->fd;
	*ret_doorbell = s->doorbell;
}

size_t xfer_server_size(const struct xfer_server *s)
{
	return s->mem->size;
}

/* Count a nonsense position once per value, in the header for the client. */
static void xfer_server_count_bad(struct xfer_server *s, uint32_t *last,
				  uint32_t v)
{
	if (*last == v && s->bad)
		return;
	*last = v;
	s->bad++;
	atomic_store_explicit(FR_A32(&s->hdr->bad_positions), s->bad,
			      memory_order_relaxed);
}

/* Entries the client has submitted and the server not taken: 0 if nonsense. */
static uint32_t xfer_server_submitted(struct xfer_server *s)
{
	uint32_t tail = atomic_load_explicit(FR_A32(&s->hdr->sq_tail),
					     memory_order_acquire);
	uint32_t n = tail - s->sq_head;

	if (n > s->sq_entries) {
		xfer_server_count_bad(s, &s->bad_tail, tail);
		return 0;
	}
	return n;
}

/* Completions the client has not consumed yet. */
static uint32_t xfer_server_unconsumed(struct xfer_server *s)
{
	uint32_t head = atomic_load_explicit(FR_A32(&s->hdr->cq_head),
					     memory_order_acquire);

	/* In [the last head that made sense, cq_tail]: a step forward. */
	if (head - s->cq_head <= s->cq_tail - s->cq_head)
		s->cq_head = head;
	else
		xfer_server_count_bad(s, &s->bad_head, head);
	return s->cq_tail - s->cq_head;
}

bool xfer_server_pending(struct xfer_server *s)
{
	return xfer_server_submitted(s) > 0;
}

int xfer_server_take(struct xfer_server *s, unsigned outstanding,
		     struct fpgad_xfer_sqe *ret_sqe)
{
	struct fpgad_xfer_sqe *e;

	if (!xfer_server_submitted(s) ||
	    (uint64_t)outstanding + xfer_server_unconsumed(s) >= s->cq_entries)
		return 0;
	e = xfer_ring_sqe(s->hdr, &s->l, s->sq_head);
	/* One copy, taken once: the client may change the entry meanwhile. */
	memcpy(ret_sqe, e, sizeof(*ret_sqe));
	s->sq_head++;
	s->taken++;
	atomic_store_explicit(FR_A32(&s->hdr->sq_head), s->sq_head,
			      memory_order_release);
	atomic_store_explicit(FR_A64(&s->hdr->taken), s->taken,
			      memory_order_relaxed);
	return 1;
}

void xfer_server_complete(struct xfer_server *s,
			  const struct fpgad_xfer_cqe *cqe)
{
	memcpy(xfer_ring_cqe(s->hdr, &s->l, s->cq_tail), cqe, sizeof(*cqe));
	s->cq_tail++;
	if (cqe->rule != FPGAD_XFER_RULE_NONE)
		atomic_store_explicit(FR_A64(&s->hdr->refused), ++s->refused,
				      memory_order_relaxed);
	atomic_store_explicit(FR_A32(&s->hdr->cq_tail), s->cq_tail,
			      memory_order_release);
}

void xfer_server_wake(struct xfer_server *s)
{
	frame_ring_wake(&s->hdr->cli_waiting, &s->hdr->cq_futex);
}

void xfer_server_raise(struct xfer_server *s, uint32_t events)
{
	s->events |= events;
	atomic_store_explicit(FR_A32(&s->hdr->events), s->events,
			      memory_order_release);
	xfer_server_wake(s);
}

bool xfer_server_arm(struct xfer_server *s)
{
	atomic_store_explicit(FR_A32(&s->hdr->srv_waiting), 1,
			      memory_order_relaxed);
	s->armed = true;
	atomic_thread_fence(memory_order_seq_cst);
	if (!xfer_server_pending(s))
		return false;
	xfer_server_disarm(s);
	return true;
}

void xfer_server_disarm(struct xfer_server *s)
{
	if (!s->armed)
		return;
	s->armed = false;
	atomic_store_explicit(FR_A32(&s->hdr->srv_waiting), 0,
			      memory_order_relaxed);
}
