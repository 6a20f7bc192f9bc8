// SPDX-License-Identifier: MIT
/* xfer_queue.c - the client's end of the transfer queue (xfer_queue.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "xfer_queue.h"

struct xfer_queue {
	struct fpgad_xfer_header *hdr;
	struct xfer_ring_layout l;	/* as checked at attach */
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t sq_tail;		/* private copy of what we write */
	uint32_t cq_head;
	uint32_t published;		/* sq_tail fpgad has seen */
	struct spin spin;		/* before sleeping for a completion */
};

int xfer_queue_attach(void *mem, size_t len, struct xfer_queue **ret_q)
{
	struct fpgad_xfer_header *h = mem;
	struct xfer_ring_layout l;
	struct xfer_queue *q;
	int r = xfer_ring_validate(mem, len, &l);

	if (r)
		return r;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->hdr = h;
	q->l = l;
	q->sq_entries = l.sq_entries;
	q->cq_entries = l.cq_entries;
	q->sq_tail = atomic_load_explicit(FR_A32(&h->sq_tail),
					  memory_order_relaxed);
	q->published = q->sq_tail;
	q->cq_head = atomic_load_explicit(FR_A32(&h->cq_head),
					  memory_order_relaxed);
	*ret_q = q;
	return 0;
}

void xfer_queue_free(struct xfer_queue *q)
{
	free(q);
}

const struct fpgad_xfer_header *xfer_queue_header(const struct xfer_queue *q)
{
	return q->hdr;
}

const struct xfer_ring_layout *xfer_queue_layout(const struct xfer_queue *q)
{
	return &q->l;
}

int xfer_queue_room(struct xfer_queue *q)
{
	uint32_t head = atomic_load_explicit(FR_A32(&q->hdr->sq_head),
					     memory_order_acquire);
	uint32_t used = q->sq_tail - head;

	/* fpgad cannot have taken what was not published. */
	if (q->published - head > q->sq_entries || used > q->sq_entries)
		return -EPROTO;
	return (int)(q->sq_entries - used);
}

void xfer_queue_push(struct xfer_queue *q, const struct fpgad_xfer_sqe *s)
{
	memcpy(xfer_ring_sqe(q->hdr, &q->l, q->sq_tail), s, sizeof(*s));
	q->sq_tail++;
}

bool xfer_queue_publish(struct xfer_queue *q)
{
	if (q->published == q->sq_tail)
		return false;
	q->published = q->sq_tail;
	atomic_store_explicit(FR_A32(&q->hdr->sq_tail), q->sq_tail,
			      memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	return atomic_load_explicit(FR_A32(&q->hdr->srv_waiting),
				    memory_order_relaxed) != 0;
}

int xfer_queue_pop(struct xfer_queue *q, struct fpgad_xfer_cqe *out,
		   unsigned max)
{
	uint32_t tail = atomic_load_explicit(FR_A32(&q->hdr->cq_tail),
					     memory_order_acquire);
	unsigned n = 0;

	if (tail - q->cq_head > q->cq_entries)
		return -EPROTO;
	while (q->cq_head != tail && n < max) {
		memcpy(&out[n++], xfer_ring_cqe(q->hdr, &q->l, q->cq_head),
		       sizeof(*out));
		q->cq_head++;
	}
	if (n)
		atomic_store_explicit(FR_A32(&q->hdr->cq_head), q->cq_head,
				      memory_order_release);
	return (int)n;
}

uint32_t xfer_queue_events(const struct xfer_queue *q)
{
	return atomic_load_explicit(FR_A32(&q->hdr->events),
				    memory_order_acquire);
}

/* > 0 when the sleeper has something to look at. */
static int xfer_queue_check(const void *arg)
{
	const struct xfer_queue *q = arg;

	return atomic_load_explicit(FR_A32(&q->hdr->cq_tail),
				    memory_order_acquire) != q->cq_head ||
	       xfer_queue_events(q);
}

int xfer_queue_wait(struct xfer_queue *q, int timeout_ms, bool spin)
{
	uint64_t t0 = clock_now_ns();
	int r;

	spin = spin && timeout_ms != 0;
	if (spin && spin_wait(&q->spin, t0, xfer_queue_check, q))
		return 0;
	r = frame_ring_sleep(&q->hdr->cli_waiting, &q->hdr->cq_futex,
			     xfer_queue_check, q, timeout_ms);
	if (spin && (r == 0 || r == -ETIMEDOUT))
		spin_learn(&q->spin, clock_now_ns() - t0);
	return r;
}
