// SPDX-License-Identifier: MIT
/*
 * frame_producer.c - fpgad's end of the frame plane (frame_producer.h):
 * publish frames into a client's descriptor ring, take slots back, revoke,
 * raise events.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "channel/frame_producer.h"
#include "clock.h"
#include "futex.h"

static const size_t header_size = sizeof(struct fpgad_frames_header);
static const size_t desc_size = sizeof(struct fpgad_frame_desc);

struct shadow {
	uint64_t pos;
	uint32_t slot;
	bool used;
};

struct frame_producer {
	struct fpgad_frames_header *hdr;
	struct fpgad_frame_desc *descs;
	uint32_t n_desc;
	uint32_t mask;
	uint32_t n_slots;
	uint64_t slot_size;
	uint64_t frame_size;
	uint64_t head;		/* never read back from the page */
	uint32_t events;
	uint32_t event_seq;
	uint32_t event_count[FPGAD_EVENT_COUNT];
	unsigned outstanding;
	uint32_t async_seen;	/* async_issued when last looked at ... */
	uint64_t async_seen_ns;	/* ... and when it last moved (0: never) */
	bool held;		/* frame_producer_hold(): wake nobody yet */
	bool unwoken;		/* published while held */
	uint32_t *slot_desc;	/* per slot: descriptor + 1, 0 = not out */
	struct shadow shadow[];	/* per descriptor: what was published */
};

int frame_producer_init(void *mem, size_t len,
			const struct frame_ring_geometry *geo,
			uint64_t generation,
			struct frame_producer **ret_p)
{
	struct fpgad_frames_header *hdr = mem;
	struct frame_producer *p;
	uint32_t n_desc;
	size_t need;

	if (!mem || !geo || ((uintptr_t)mem % FPGAD_FRAMES_LINE) ||
	    generation == 0)
		return -EINVAL;
	if (geo->slots == 0 || geo->slot_size == 0 ||
	    geo->frame_size > geo->slot_size)
		return -EINVAL;
	n_desc = geo->desc_count ? geo->desc_count :
		 frame_ring_desc_count_for(geo->slots);
	need = frame_ring_size(n_desc);
	if (!need || n_desc < geo->slots || len < need)
		return -EINVAL;

	p = calloc(1, sizeof(*p) + (size_t)n_desc * sizeof(p->shadow[0]));
	if (!p)
		return -ENOMEM;
	p->slot_desc = calloc(geo->slots, sizeof(p->slot_desc[0]));
	if (!p->slot_desc) {
		free(p);
		return -ENOMEM;
	}
	p->hdr = hdr;
	p->descs = (struct fpgad_frame_desc *)((char *)mem + header_size);
	p->n_desc = n_desc;
	p->mask = n_desc - 1;
	p->n_slots = geo->slots;
	p->slot_size = geo->slot_size;
	p->frame_size = geo->frame_size;

	/* Invalidate first, fill in, make valid last. */
	atomic_store_explicit(FR_A32(&hdr->magic), 0, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	hdr->version_major = FPGAD_FRAMES_VERSION_MAJOR;
	hdr->version_minor = FPGAD_FRAMES_VERSION_MINOR;
	hdr->header_size = (uint32_t)header_size;
	hdr->desc_size = (uint32_t)desc_size;
	hdr->desc_count = n_desc;
	hdr->slot_count = geo->slots;
	hdr->slot_size = geo->slot_size;
	hdr->frame_size = geo->frame_size;
	atomic_store_explicit(FR_A64(&hdr->generation), generation,
			      memory_order_relaxed);
	hdr->direction = geo->direction;
	memset(hdr->reserved0, 0, sizeof(hdr->reserved0));
	memset(hdr->reserved1, 0, sizeof(hdr->reserved1));
	memset(hdr->event_count, 0, sizeof(hdr->event_count));
	memset(hdr->reserved2, 0, sizeof(hdr->reserved2));
	atomic_store_explicit(FR_A64(&hdr->head), 0, memory_order_relaxed);
	atomic_store_explicit(FR_A32(&hdr->events), 0, memory_order_relaxed);
	atomic_store_explicit(FR_A32(&hdr->event_seq), 0, memory_order_relaxed);
	atomic_store_explicit(FR_A32(&hdr->prod_waiting), 0, memory_order_relaxed);
	atomic_store_explicit(FR_A32(&hdr->async_issued), 0, memory_order_relaxed);
	atomic_store_explicit(FR_A32(&hdr->async_done), 0, memory_order_relaxed);
	atomic_store_explicit(FR_A64(&hdr->cursor), 0, memory_order_relaxed);
	atomic_store_explicit(FR_A32(&hdr->cons_waiting), 0, memory_order_relaxed);
	/* The futex words keep counting: a sleeper on an old value wakes. */
	atomic_fetch_add_explicit(FR_A32(&hdr->cons_futex), 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(FR_A32(&hdr->prod_futex), 1,
				  memory_order_relaxed);
	for (uint32_t i = 0; i < n_desc; i++) {
		struct fpgad_frame_desc *d = &p->descs[i];

		atomic_store_explicit(FR_A64(&d->state), FR_WORD(0, FPGAD_DESC_EMPTY),
				      memory_order_relaxed);
		d->seq = 0;
		d->slot = 0;
		d->flags = 0;
		d->length = 0;
		d->t_dma_start_ns = 0;
		d->t_dma_end_ns = 0;
		d->t_publish_ns = 0;
		d->fill = 0;
		d->t_sender_start_ns = 0;
		d->t_sender_end_ns = 0;
		memset(d->reserved, 0, sizeof(d->reserved));
	}
	atomic_store_explicit(FR_A32(&hdr->magic), FPGAD_FRAMES_MAGIC,
			      memory_order_release);
	/* Anyone asleep on the previous generation of this page: wake up. */
	futex_wake(&hdr->cons_futex, true);
	futex_wake(&hdr->prod_futex, true);
	*ret_p = p;
	return 0;
}

void frame_producer_free(struct frame_producer *p)
{
	if (!p)
		return;
	free(p->slot_desc);
	free(p);
}

int frame_producer_publish(struct frame_producer *p,
			   const struct frame_ring_frame *f, uint64_t *ret_pos)
{
	struct fpgad_frame_desc *d;
	uint32_t idx = 0, k;
	uint64_t pos;

	if (!f || f->slot >= p->n_slots || f->length > p->slot_size)
		return -EINVAL;
	if (p->slot_desc[f->slot])
		return -EBUSY;
	for (k = 0; k < p->n_desc; k++) {
		idx = (uint32_t)(p->head + k) & p->mask;
		if (!p->shadow[idx].used)
			break;
	}
	if (k == p->n_desc)
		return -ENOBUFS;
	pos = p->head + k;
	if (pos >= FR_POS_LIMIT)
		return -EOVERFLOW;

	d = &p->descs[idx];
	d->seq = f->seq;
	d->slot = f->slot;
	d->flags = f->flags;
	d->length = f->length;
	d->t_dma_start_ns = f->t_dma_start_ns;
	d->t_dma_end_ns = f->t_dma_end_ns;
	d->t_publish_ns = f->t_publish_ns ? f->t_publish_ns : clock_now_ns();
	d->fill = 0;
	d->t_sender_start_ns = f->t_sender_start_ns;
	d->t_sender_end_ns = f->t_sender_end_ns;
	atomic_store_explicit(FR_A64(&d->state), FR_WORD(pos, FPGAD_DESC_READY),
			      memory_order_release);

	p->shadow[idx] = (struct shadow){ .pos = pos, .slot = f->slot,
					  .used = true };
	p->slot_desc[f->slot] = idx + 1;
	p->outstanding++;
	p->head = pos + 1;
	atomic_store_explicit(FR_A64(&p->hdr->head), p->head,
			      memory_order_release);
	if (p->held)
		p->unwoken = true;
	else
		frame_ring_wake(&p->hdr->cons_waiting, &p->hdr->cons_futex);
	if (ret_pos)
		*ret_pos = pos;
	return 0;
}

void frame_producer_hold(struct frame_producer *p)
{
	p->held = true;
}

void frame_producer_wake(struct frame_producer *p)
{
	if (p->unwoken)
		frame_ring_wake(&p->hdr->cons_waiting, &p->hdr->cons_futex);
	p->held = false;
	p->unwoken = false;
}

/* Forget descriptor @idx; the slot is back with the producer. */
static void shadow_put(struct frame_producer *p, uint32_t idx,
		       uint32_t how, struct frame_returned *out)
{
	struct shadow *s = &p->shadow[idx];

	if (out)
		*out = (struct frame_returned){ .slot = s->slot,
						     .how = how,
						     .pos = s->pos };
	p->slot_desc[s->slot] = 0;
	s->used = false;
	p->outstanding--;
}

/* Is descriptor @idx (in use) released or revoked?  Acquire: yes. */
static bool shadow_done(const struct frame_producer *p, uint32_t idx)
{
	const struct shadow *s = &p->shadow[idx];
	uint64_t w = atomic_load_explicit(FR_A64(&p->descs[idx].state),
					  memory_order_acquire);

	return w == FR_WORD(s->pos, FPGAD_DESC_RELEASED) ||
	       w == FR_WORD(s->pos, FPGAD_DESC_REVOKED);
}

int frame_producer_reclaim(struct frame_producer *p,
			   struct frame_returned *out, unsigned max)
{
	unsigned n = 0;

	if (!out && max)
		return -EINVAL;
	for (uint32_t i = 0; i < p->n_desc && n < max && p->outstanding; i++) {
		uint64_t fill;

		if (!p->shadow[i].used || !shadow_done(p, i))
			continue;
		/* Untrusted: a fill the slot cannot hold counts as none. */
		fill = p->descs[i].fill;
		if (fill > p->slot_size)
			fill = 0;
		atomic_store_explicit(FR_A64(&p->descs[i].state),
				      FR_WORD(p->shadow[i].pos, FPGAD_DESC_EMPTY),
				      memory_order_relaxed);
		shadow_put(p, i, FPGAD_DESC_RELEASED, &out[n]);
		out[n++].fill = fill;
	}
	return (int)n;
}

int frame_producer_reclaim_all(struct frame_producer *p,
			       struct frame_returned *out, unsigned max)
{
	unsigned n = 0;

	if (!out && max)
		return -EINVAL;
	for (uint32_t i = 0; i < p->n_desc && n < max && p->outstanding; i++) {
		struct shadow *s = &p->shadow[i];
		uint64_t ready = FR_WORD(s->pos, FPGAD_DESC_READY);
		uint32_t how;

		if (!s->used)
			continue;
		if (atomic_compare_exchange_strong_explicit(
			    FR_A64(&p->descs[i].state), &ready,
			    FR_WORD(s->pos, FPGAD_DESC_REVOKED),
			    memory_order_acq_rel, memory_order_acquire))
			how = FPGAD_DESC_REVOKED;
		else if (shadow_done(p, i))
			how = FPGAD_DESC_RELEASED;
		else
			how = FPGAD_DESC_HELD;
		shadow_put(p, i, how, &out[n++]);
	}
	return (int)n;
}

int frame_producer_revoke(struct frame_producer *p, uint32_t slot)
{
	uint32_t idx;
	uint64_t expect;
	struct shadow *s;

	if (slot >= p->n_slots || !p->slot_desc[slot])
		return -ENOENT;
	idx = p->slot_desc[slot] - 1;
	s = &p->shadow[idx];
	expect = FR_WORD(s->pos, FPGAD_DESC_READY);
	if (atomic_compare_exchange_strong_explicit(
		    FR_A64(&p->descs[idx].state), &expect,
		    FR_WORD(s->pos, FPGAD_DESC_REVOKED), memory_order_acq_rel,
		    memory_order_acquire)) {
		shadow_put(p, idx, FPGAD_DESC_REVOKED, NULL);
		return 0;
	}
	if (shadow_done(p, idx)) {
		atomic_store_explicit(FR_A64(&p->descs[idx].state),
				      FR_WORD(s->pos, FPGAD_DESC_EMPTY),
				      memory_order_relaxed);
		shadow_put(p, idx, FPGAD_DESC_RELEASED, NULL);
		return -EALREADY;
	}
	return -EBUSY;
}

void frame_producer_raise(struct frame_producer *p, uint32_t events)
{
	for (unsigned i = 0; i < FPGAD_EVENT_COUNT; i++) {
		if (!(events & (1u << i)))
			continue;
		p->event_count[i]++;
		atomic_store_explicit(FR_A32(&p->hdr->event_count[i]),
				      p->event_count[i], memory_order_relaxed);
	}
	p->events |= events;
	p->event_seq++;
	atomic_store_explicit(FR_A32(&p->hdr->events), p->events,
			      memory_order_release);
	atomic_store_explicit(FR_A32(&p->hdr->event_seq), p->event_seq,
			      memory_order_release);
	frame_ring_wake(&p->hdr->cons_waiting, &p->hdr->cons_futex);
}

/*
 * Stream-ordered releases are on their way.  The counters are read before
 * any state word: a GPU stores a descriptor's state before async_done, so
 * when async_done has caught up with async_issued, the states it covers
 * are visible to the loads that follow.
 */
static bool async_pending(const struct frame_producer *p)
{
	uint32_t issued = atomic_load_explicit(FR_A32(&p->hdr->async_issued),
					       memory_order_relaxed);

	return issued != atomic_load_explicit(FR_A32(&p->hdr->async_done),
					      memory_order_acquire);
}

/*
 * > 0 when a slot is back to take, none is out, or stream-ordered releases
 * are on their way (the GPU's stores wake nobody: the caller looks again
 * shortly); see fpgad_frames.h.
 */
static int producer_check(const void *arg)
{
	const struct frame_producer *p = arg;

	return !p->outstanding || async_pending(p) ||
	       frame_producer_returned(p);
}

bool frame_producer_returned(const struct frame_producer *p)
{
	for (uint32_t i = 0; i < p->n_desc; i++)
		if (p->shadow[i].used && shadow_done(p, i))
			return true;
	return false;
}

int frame_producer_wait(struct frame_producer *p, int timeout_ms)
{
	return frame_ring_sleep(&p->hdr->prod_waiting, &p->hdr->prod_futex,
				producer_check, p, timeout_ms);
}

bool frame_producer_slot_out(const struct frame_producer *p, uint32_t slot)
{
	return slot < p->n_slots && p->slot_desc[slot] != 0;
}

bool frame_producer_async_pending(const struct frame_producer *p)
{
	return async_pending(p);
}

bool frame_producer_async_recent(struct frame_producer *p, uint64_t now_ns)
{
	uint32_t issued = atomic_load_explicit(FR_A32(&p->hdr->async_issued),
					       memory_order_relaxed);

	if (issued != p->async_seen) {
		p->async_seen = issued;
		p->async_seen_ns = now_ns;
	}
	return p->async_seen_ns &&
	       now_ns - p->async_seen_ns < FRAME_PRODUCER_ASYNC_RECENT_NS;
}
