// SPDX-License-Identifier: MIT
/*
 * frame_consumer.c - libfpgad's end of the frame plane (frame_consumer.h):
 * attach to a descriptor ring fpgad made, claim frames in order or the
 * newest, release or submit them in any order, sleep when there is nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "frame_consumer.h"

static const size_t header_size = sizeof(struct fpgad_frames_header);
struct frame_consumer {
	struct fpgad_frames_header *hdr;
	unsigned char *descs;
	size_t desc_size;
	uint32_t n_desc;
	uint32_t mask;
	uint32_t n_slots;
	uint64_t slot_size;
	uint64_t frame_size;
	uint64_t generation;
	uint64_t cursor;
	uint32_t seen_event_seq;
	uint32_t seen_bits;
	uint32_t seen_count[FPGAD_EVENT_COUNT];
	uint32_t direction;
	uint16_t minor;
	bool sender_times;		/* the descriptors carry them (minor 4) */
	uint32_t async_issued;
};

int frame_consumer_attach(void *mem, size_t len,
			  struct frame_consumer **ret_c)
{
	struct fpgad_frames_header *hdr = mem;
	struct frame_consumer *c;
	uint64_t head, cursor;
	int ret;

	ret = frame_ring_validate(mem, len);
	if (ret < 0)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	/* Read once: the producer could rewrite them under us. */
	c->hdr = hdr;
	c->desc_size = hdr->desc_size;
	c->n_desc = hdr->desc_count;
	c->n_slots = hdr->slot_count;
	c->slot_size = hdr->slot_size;
	c->frame_size = hdr->frame_size;
	c->direction = hdr->version_minor >= 1 ? hdr->direction : FPGAD_FRAMES_C2H;
	c->minor = hdr->version_minor;
	c->sender_times = FPGAD_FRAMES_DESC_HAS(c->minor, c->desc_size,
						t_sender_end_ns);
	c->descs = (unsigned char *)mem + hdr->header_size;
	c->generation = atomic_load_explicit(FR_A64(&hdr->generation),
					     memory_order_relaxed);
	/* What was validated must still hold for the copies just taken. */
	if (!frame_ring_size(c->n_desc) ||
	    c->n_slots == 0 || c->n_desc < c->n_slots ||
	    c->desc_size < FPGAD_FRAMES_DESC_MIN_SIZE ||
	    c->desc_size % _Alignof(uint64_t) ||
	    c->frame_size > c->slot_size || c->generation == 0 ||
	    c->direction > FPGAD_FRAMES_H2C ||
	    (uint64_t)(c->descs - (unsigned char *)mem) +
	    (uint64_t)c->n_desc * c->desc_size > len ||
	    (uint64_t)(c->descs - (unsigned char *)mem) < header_size) {
		free(c);
		return -EINVAL;
	}
	c->mask = c->n_desc - 1;
	head = atomic_load_explicit(FR_A64(&hdr->head), memory_order_acquire);
	cursor = atomic_load_explicit(FR_A64(&hdr->cursor), memory_order_relaxed);
	c->cursor = cursor <= head ? cursor : head;
	c->seen_event_seq = 0;
	*ret_c = c;
	return 0;
}

void frame_consumer_free(struct frame_consumer *c)
{
	free(c);
}

void frame_consumer_geometry(const struct frame_consumer *c,
			     struct frame_ring_geometry *ret_geo)
{
	*ret_geo = (struct frame_ring_geometry){
		.desc_count = c->n_desc,
		.slots = c->n_slots,
		.slot_size = c->slot_size,
		.frame_size = c->frame_size,
		.direction = c->direction,
	};
}

uint64_t frame_consumer_generation(const struct frame_consumer *c)
{
	return c->generation;
}

static struct fpgad_frame_desc *cdesc(const struct frame_consumer *c,
				      uint64_t pos)
{
	return (struct fpgad_frame_desc *)(c->descs +
		(size_t)(pos & c->mask) * c->desc_size);
}

static bool stale(const struct frame_consumer *c)
{
	return atomic_load_explicit(FR_A64(&c->hdr->generation),
				    memory_order_relaxed) != c->generation ||
	       atomic_load_explicit(FR_A32(&c->hdr->magic),
				    memory_order_relaxed) != FPGAD_FRAMES_MAGIC;
}

static void publish_cursor(struct frame_consumer *c)
{
	atomic_store_explicit(FR_A64(&c->hdr->cursor), c->cursor,
			      memory_order_relaxed);
}

/*
 * Descriptor @i holds a READY publication for a position in [from, to):
 * true and that position (and its state word) in *ret_pos (*ret_w).
 */
static bool ready_in(const struct frame_consumer *c, uint32_t i,
		     uint64_t from, uint64_t to, uint64_t *ret_pos,
		     uint64_t *ret_w)
{
	const struct fpgad_frame_desc *d = cdesc(c, i);
	uint64_t w = atomic_load_explicit(FR_A64(&d->state),
					  memory_order_relaxed);
	uint64_t pos = FR_POS(w);

	if (FR_STATE(w) != FPGAD_DESC_READY || pos < from || pos >= to ||
	    (pos & c->mask) != i)
		return false;
	*ret_pos = pos;
	*ret_w = w;
	return true;
}

/* Smallest position in [from, to) with a READY descriptor, else @to. */
static uint64_t oldest_ready(const struct frame_consumer *c,
			     uint64_t from, uint64_t to)
{
	uint64_t best = to, pos, w;

	for (uint32_t i = 0; i < c->n_desc; i++)
		if (ready_in(c, i, from, best, &pos, &w))
			best = pos;
	return best;
}

/* Give a claimed descriptor back: it is released, the producer told. */
static void give_back(struct frame_consumer *c,
		      struct fpgad_frame_desc *d, uint64_t pos)
{
	uint64_t held = FR_WORD(pos, FPGAD_DESC_HELD);

	atomic_compare_exchange_strong_explicit(
		FR_A64(&d->state), &held, FR_WORD(pos, FPGAD_DESC_RELEASED),
		memory_order_seq_cst, memory_order_relaxed);
	frame_ring_wake(&c->hdr->prod_waiting, &c->hdr->prod_futex);
}

/*
 * Copy out a descriptor just claimed at @pos and check it; a bad one is
 * given back at once.
 */
static int take(struct frame_consumer *c, struct fpgad_frame_desc *d,
		uint64_t pos, struct frame_ring_frame *ret_frame)
{
	struct frame_ring_frame f = {
		.pos = pos,
		.seq = d->seq,
		.slot = d->slot,
		.flags = d->flags,
		.length = d->length,
		.t_dma_start_ns = d->t_dma_start_ns,
		.t_dma_end_ns = d->t_dma_end_ns,
		.t_publish_ns = d->t_publish_ns,
	};

	/* A descriptor of an older minor ends before them. */
	if (c->sender_times) {
		f.t_sender_start_ns = d->t_sender_start_ns;
		f.t_sender_end_ns = d->t_sender_end_ns;
	}
	if (f.slot >= c->n_slots || f.length > c->slot_size) {
		give_back(c, d, pos);
		return -EPROTO;
	}
	*ret_frame = f;
	return 0;
}

int frame_consumer_claim(struct frame_consumer *c,
			 struct frame_ring_frame *ret_frame)
{
	/* Bounded, so a misbehaving producer cannot keep us here. */
	unsigned budget = 2 * c->n_desc + 16;

	if (stale(c))
		return -ESTALE;
	while (budget--) {
		uint64_t head = atomic_load_explicit(FR_A64(&c->hdr->head),
						     memory_order_acquire);
		struct fpgad_frame_desc *d;
		uint64_t w, pos;

		if (c->cursor >= head)
			break;
		if (head - c->cursor > c->n_desc)
			c->cursor = oldest_ready(c, c->cursor, head);
		if (c->cursor >= head)
			break;
		pos = c->cursor;
		d = cdesc(c, pos);
		w = atomic_load_explicit(FR_A64(&d->state), memory_order_acquire);
		if (w != FR_WORD(pos, FPGAD_DESC_READY)) {
			/* Skipped, revoked or already gone: move on. */
			c->cursor++;
			continue;
		}
		if (!atomic_compare_exchange_strong_explicit(
			    FR_A64(&d->state), &w, FR_WORD(pos, FPGAD_DESC_HELD),
			    memory_order_acq_rel, memory_order_acquire))
			continue;	/* revoked meanwhile: look again */
		c->cursor++;
		publish_cursor(c);
		return take(c, d, pos, ret_frame);
	}
	publish_cursor(c);
	return -EAGAIN;
}

int frame_consumer_claim_newest(struct frame_consumer *c,
				struct frame_ring_frame *ret_frame)
{
	unsigned budget = c->n_desc + 16;

	if (stale(c))
		return -ESTALE;
	while (budget--) {
		uint64_t head = atomic_load_explicit(FR_A64(&c->hdr->head),
						     memory_order_acquire);
		struct fpgad_frame_desc *nd = NULL;
		uint64_t newest = 0, pos, w;
		int skipped = 0, ret;

		if (c->cursor >= head)
			break;
		for (uint32_t i = 0; i < c->n_desc; i++) {
			if (ready_in(c, i, nd ? newest + 1 : c->cursor, head,
				     &pos, &w)) {
				nd = cdesc(c, i);
				newest = pos;
			}
		}
		if (!nd) {
			c->cursor = head;
			break;
		}
		w = FR_WORD(newest, FPGAD_DESC_READY);
		if (!atomic_compare_exchange_strong_explicit(
			    FR_A64(&nd->state), &w, FR_WORD(newest, FPGAD_DESC_HELD),
			    memory_order_acq_rel, memory_order_acquire))
			continue;	/* revoked meanwhile: look again */
		/* Let go of everything older that is still unclaimed. */
		for (uint32_t i = 0; i < c->n_desc; i++) {
			if (!ready_in(c, i, c->cursor, newest, &pos, &w))
				continue;
			if (atomic_compare_exchange_strong_explicit(
				    FR_A64(&cdesc(c, i)->state), &w,
				    FR_WORD(pos, FPGAD_DESC_RELEASED),
				    memory_order_seq_cst, memory_order_relaxed))
				skipped++;
		}
		if (skipped)
			frame_ring_wake(&c->hdr->prod_waiting,
					&c->hdr->prod_futex);
		c->cursor = newest + 1;
		publish_cursor(c);
		ret = take(c, nd, newest, ret_frame);
		return ret < 0 ? ret : skipped;
	}
	publish_cursor(c);
	return -EAGAIN;
}

/* The descriptor of @f, which this consumer holds; NULL when it does not. */
static struct fpgad_frame_desc *held_desc(struct frame_consumer *c,
					  const struct frame_ring_frame *f)
{
	struct fpgad_frame_desc *d;

	if (!f || f->pos >= FR_POS_LIMIT)
		return NULL;
	d = cdesc(c, f->pos);
	if (atomic_load_explicit(FR_A64(&d->state), memory_order_relaxed) !=
	    FR_WORD(f->pos, FPGAD_DESC_HELD))
		return NULL;
	return d;
}

/* HELD -> RELEASED, with @fill bytes for the card (h2c) or none (c2h). */
static int hand_back(struct frame_consumer *c, const struct frame_ring_frame *f,
		     bool h2c, uint64_t fill)
{
	struct fpgad_frame_desc *d = held_desc(c, f);
	uint64_t held;

	if (!d)
		return -EINVAL;
	held = FR_WORD(f->pos, FPGAD_DESC_HELD);
	if (h2c)
		d->fill = fill;
	if (!atomic_compare_exchange_strong_explicit(
		    FR_A64(&d->state), &held, FR_WORD(f->pos, FPGAD_DESC_RELEASED),
		    memory_order_seq_cst, memory_order_relaxed))
		return -EINVAL;
	frame_ring_wake(&c->hdr->prod_waiting, &c->hdr->prod_futex);
	return 0;
}

int frame_consumer_submit(struct frame_consumer *c,
			  const struct frame_ring_frame *f, uint64_t fill)
{
	if (fill > c->slot_size)
		return -EINVAL;
	return hand_back(c, f, true, fill);
}

int frame_consumer_release(struct frame_consumer *c,
			   const struct frame_ring_frame *f)
{
	return hand_back(c, f, false, 0);
}

/* > 0 when a frame may be claimable or an event is unread; -ESTALE. */
static int consumer_check(const void *arg)
{
	const struct frame_consumer *c = arg;
	const struct fpgad_frames_header *hdr = c->hdr;

	if (stale(c))
		return -ESTALE;
	return atomic_load_explicit(FR_A64(&hdr->head), memory_order_acquire) >
	       c->cursor ||
	       atomic_load_explicit(FR_A32(&hdr->event_seq),
				    memory_order_acquire) != c->seen_event_seq;
}

int frame_consumer_wait(struct frame_consumer *c, int timeout_ms)
{
	return frame_ring_sleep(&c->hdr->cons_waiting, &c->hdr->cons_futex,
				consumer_check, c, timeout_ms);
}

uint32_t frame_consumer_events(struct frame_consumer *c)
{
	uint32_t bits, news = 0;

	c->seen_event_seq = atomic_load_explicit(FR_A32(&c->hdr->event_seq),
						 memory_order_acquire);
	bits = atomic_load_explicit(FR_A32(&c->hdr->events),
				    memory_order_acquire);
	if (c->minor < 2) {
		/* No counters: each bit once. */
		news = bits & ~c->seen_bits;
		c->seen_bits |= bits;
		return news;
	}
	for (unsigned i = 0; i < FPGAD_EVENT_COUNT; i++) {
		uint32_t n = atomic_load_explicit(FR_A32(&c->hdr->event_count[i]),
						  memory_order_relaxed);

		if (n != c->seen_count[i])
			news |= 1u << i;
		c->seen_count[i] = n;
	}
	/* Bits without a counter (none yet): each once. */
	news |= bits & ~c->seen_bits & ~((1u << FPGAD_EVENT_COUNT) - 1);
	c->seen_bits |= bits;
	return news;
}

int frame_consumer_async_words(struct frame_consumer *c,
			       const struct frame_ring_frame *f,
			       struct frame_async *ret)
{
	struct fpgad_frame_desc *d = held_desc(c, f);

	if (!d)
		return -EINVAL;
	ret->state_low = &d->state;	/* little-endian: the low half first */
	ret->released_low = (uint32_t)FR_WORD(f->pos, FPGAD_DESC_RELEASED);
	ret->fill = &d->fill;
	ret->done = &c->hdr->async_done;
	ret->count = ++c->async_issued;
	atomic_store_explicit(FR_A32(&c->hdr->async_issued), ret->count,
			      memory_order_seq_cst);
	/*
	 * The GPU's stores will wake nobody: a producer asleep now would sleep
	 * through them.  Wake it as a release does; it sees the count ahead of
	 * async_done and looks at the state words until the GPU caught up.
	 */
	frame_ring_wake(&c->hdr->prod_waiting, &c->hdr->prod_futex);
	return 0;
}
