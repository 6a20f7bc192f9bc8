// SPDX-License-Identifier: MIT
/* frame_ring.c - producer and consumer ends of the frame plane. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "frame_ring.h"

/*
 * The shared fields are plain fixed-width integers in the ABI header; they
 * are accessed here through pointers to the atomic type of the same size,
 * which must be lock-free to work between processes.
 */
_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t) &&
	       alignof(_Atomic uint64_t) == alignof(uint64_t), "atomic u64");
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t) &&
	       alignof(_Atomic uint32_t) == alignof(uint32_t), "atomic u32");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
	       "shared-memory atomics must be lock-free");

#define A64(p) ((_Atomic uint64_t *)(p))
#define A32(p) ((_Atomic uint32_t *)(p))

#define WORD(pos, st) FPGAD_DESC_WORD(pos, st)
#define W_STATE(w) FPGAD_DESC_WORD_STATE(w)
#define W_POS(w) FPGAD_DESC_WORD_POS(w)

/* Positions must fit in the 60 bits of a state word. */
#define POS_LIMIT (UINT64_MAX >> FPGAD_DESC_STATE_BITS)

static const size_t header_size = sizeof(struct fpgad_frames_header);
static const size_t desc_size = sizeof(struct fpgad_frame_desc);

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

size_t frame_ring_size(uint32_t desc_count)
{
	if (!is_pow2(desc_count) || desc_count > FPGAD_FRAMES_MAX_DESCS)
		return 0;
	return header_size + (size_t)desc_count * desc_size;
}

uint32_t frame_ring_desc_count_for(uint32_t slots)
{
	uint32_t n = 1;

	if (slots > FPGAD_FRAMES_MAX_DESCS)
		return 0;
	while (n < slots)
		n <<= 1;
	return n;
}

/* --- futex --------------------------------------------------------------- */

int frame_ring_futex_wait(uint32_t *addr, uint32_t val,
			  const struct timespec *rel)
{
	if (syscall(SYS_futex, addr, FUTEX_WAIT, val, rel, NULL, 0) == 0)
		return 0;
	return -errno;
}

void frame_ring_futex_wake(uint32_t *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Deadline for @timeout_ms (< 0: none, returned as 0). */
static uint64_t deadline_for(int timeout_ms)
{
	if (timeout_ms < 0)
		return 0;
	return now_ns() + (uint64_t)timeout_ms * 1000000ull;
}

/*
 * One futex sleep on @word while it holds @val, bounded by @deadline
 * (0 = none).  Returns 0 (woken, value changed, spurious), -ETIMEDOUT or
 * -EINTR.
 */
static int sleep_on(uint32_t *word, uint32_t val, uint64_t deadline)
{
	struct timespec rel, *relp = NULL;
	int ret;

	if (deadline) {
		uint64_t now = now_ns();

		if (now >= deadline)
			return -ETIMEDOUT;
		rel.tv_sec = (time_t)((deadline - now) / 1000000000ull);
		rel.tv_nsec = (long)((deadline - now) % 1000000000ull);
		relp = &rel;
	}
	ret = frame_ring_futex_wait(word, val, relp);
	if (ret == -EAGAIN)
		return 0;
	return ret;
}

/*
 * The waker's half of the protocol: the caller stored what the sleeper
 * checks; if the sleeper announced itself, change its futex word and wake.
 */
static void wake_if_waiting(uint32_t *waiting, uint32_t *futex_word)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(A32(waiting), memory_order_relaxed)) {
		atomic_fetch_add_explicit(A32(futex_word), 1,
					  memory_order_seq_cst);
		frame_ring_futex_wake(futex_word, INT_MAX);
	}
}

/* --- producer ------------------------------------------------------------ */

struct shadow {
	uint64_t pos;
	uint32_t slot;
	bool used;
};

struct frame_ring_producer {
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
	unsigned outstanding;
	uint32_t *slot_desc;	/* per slot: descriptor + 1, 0 = not out */
	struct shadow shadow[];	/* per descriptor: what was published */
};

int frame_ring_producer_init(void *mem, size_t len,
			     const struct frame_ring_geometry *geo,
			     uint64_t generation,
			     struct frame_ring_producer **ret_p)
{
	struct fpgad_frames_header *hdr = mem;
	struct frame_ring_producer *p;
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
	atomic_store_explicit(A32(&hdr->magic), 0, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	hdr->version_major = FPGAD_FRAMES_VERSION_MAJOR;
	hdr->version_minor = FPGAD_FRAMES_VERSION_MINOR;
	hdr->header_size = (uint32_t)header_size;
	hdr->desc_size = (uint32_t)desc_size;
	hdr->desc_count = n_desc;
	hdr->slot_count = geo->slots;
	hdr->slot_size = geo->slot_size;
	hdr->frame_size = geo->frame_size;
	atomic_store_explicit(A64(&hdr->generation), generation,
			      memory_order_relaxed);
	hdr->direction = geo->direction;
	memset(hdr->reserved0, 0, sizeof(hdr->reserved0));
	memset(hdr->reserved1, 0, sizeof(hdr->reserved1));
	memset(hdr->reserved2, 0, sizeof(hdr->reserved2));
	atomic_store_explicit(A64(&hdr->head), 0, memory_order_relaxed);
	atomic_store_explicit(A32(&hdr->events), 0, memory_order_relaxed);
	atomic_store_explicit(A32(&hdr->event_seq), 0, memory_order_relaxed);
	atomic_store_explicit(A32(&hdr->prod_waiting), 0, memory_order_relaxed);
	atomic_store_explicit(A64(&hdr->cursor), 0, memory_order_relaxed);
	atomic_store_explicit(A32(&hdr->cons_waiting), 0, memory_order_relaxed);
	/* The futex words keep counting: a sleeper on an old value wakes. */
	atomic_fetch_add_explicit(A32(&hdr->cons_futex), 1,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(A32(&hdr->prod_futex), 1,
				  memory_order_relaxed);
	for (uint32_t i = 0; i < n_desc; i++) {
		struct fpgad_frame_desc *d = &p->descs[i];

		atomic_store_explicit(A64(&d->state), WORD(0, FPGAD_DESC_EMPTY),
				      memory_order_relaxed);
		d->seq = 0;
		d->slot = 0;
		d->flags = 0;
		d->length = 0;
		d->t_dma_start_ns = 0;
		d->t_dma_end_ns = 0;
		d->t_publish_ns = 0;
		d->fill = 0;
	}
	atomic_store_explicit(A32(&hdr->magic), FPGAD_FRAMES_MAGIC,
			      memory_order_release);
	/* Anyone asleep on the previous generation of this page: wake up. */
	frame_ring_futex_wake(&hdr->cons_futex, INT_MAX);
	frame_ring_futex_wake(&hdr->prod_futex, INT_MAX);
	*ret_p = p;
	return 0;
}

void frame_ring_producer_free(struct frame_ring_producer *p)
{
	if (!p)
		return;
	free(p->slot_desc);
	free(p);
}

int frame_ring_publish(struct frame_ring_producer *p,
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
	if (pos >= POS_LIMIT)
		return -EOVERFLOW;

	d = &p->descs[idx];
	d->seq = f->seq;
	d->slot = f->slot;
	d->flags = f->flags;
	d->length = f->length;
	d->t_dma_start_ns = f->t_dma_start_ns;
	d->t_dma_end_ns = f->t_dma_end_ns;
	d->t_publish_ns = f->t_publish_ns ? f->t_publish_ns : now_ns();
	d->fill = 0;
	atomic_store_explicit(A64(&d->state), WORD(pos, FPGAD_DESC_READY),
			      memory_order_release);

	p->shadow[idx] = (struct shadow){ .pos = pos, .slot = f->slot,
					  .used = true };
	p->slot_desc[f->slot] = idx + 1;
	p->outstanding++;
	p->head = pos + 1;
	atomic_store_explicit(A64(&p->hdr->head), p->head,
			      memory_order_release);
	wake_if_waiting(&p->hdr->cons_waiting, &p->hdr->cons_futex);
	if (ret_pos)
		*ret_pos = pos;
	return 0;
}

/* Forget descriptor @idx; the slot is back with the producer. */
static void shadow_put(struct frame_ring_producer *p, uint32_t idx,
		       uint32_t how, struct frame_ring_returned *out)
{
	struct shadow *s = &p->shadow[idx];

	if (out)
		*out = (struct frame_ring_returned){ .slot = s->slot,
						     .how = how,
						     .pos = s->pos };
	p->slot_desc[s->slot] = 0;
	s->used = false;
	p->outstanding--;
}

/* Is descriptor @idx (in use) released or revoked?  Acquire: yes. */
static bool shadow_done(const struct frame_ring_producer *p, uint32_t idx)
{
	const struct shadow *s = &p->shadow[idx];
	uint64_t w = atomic_load_explicit(A64(&p->descs[idx].state),
					  memory_order_acquire);

	return w == WORD(s->pos, FPGAD_DESC_RELEASED) ||
	       w == WORD(s->pos, FPGAD_DESC_REVOKED);
}

int frame_ring_reclaim(struct frame_ring_producer *p,
		       struct frame_ring_returned *out, unsigned max)
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
		atomic_store_explicit(A64(&p->descs[i].state),
				      WORD(p->shadow[i].pos, FPGAD_DESC_EMPTY),
				      memory_order_relaxed);
		shadow_put(p, i, FPGAD_DESC_RELEASED, &out[n]);
		out[n++].fill = fill;
	}
	return (int)n;
}

int frame_ring_reclaim_all(struct frame_ring_producer *p,
			   struct frame_ring_returned *out, unsigned max)
{
	unsigned n = 0;

	if (!out && max)
		return -EINVAL;
	for (uint32_t i = 0; i < p->n_desc && n < max && p->outstanding; i++) {
		struct shadow *s = &p->shadow[i];
		uint64_t ready = WORD(s->pos, FPGAD_DESC_READY);
		uint32_t how;

		if (!s->used)
			continue;
		if (atomic_compare_exchange_strong_explicit(
			    A64(&p->descs[i].state), &ready,
			    WORD(s->pos, FPGAD_DESC_REVOKED),
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

int frame_ring_revoke(struct frame_ring_producer *p, uint32_t slot)
{
	uint32_t idx;
	uint64_t expect;
	struct shadow *s;

	if (slot >= p->n_slots || !p->slot_desc[slot])
		return -ENOENT;
	idx = p->slot_desc[slot] - 1;
	s = &p->shadow[idx];
	expect = WORD(s->pos, FPGAD_DESC_READY);
	if (atomic_compare_exchange_strong_explicit(
		    A64(&p->descs[idx].state), &expect,
		    WORD(s->pos, FPGAD_DESC_REVOKED), memory_order_acq_rel,
		    memory_order_acquire)) {
		shadow_put(p, idx, FPGAD_DESC_REVOKED, NULL);
		return 0;
	}
	if (shadow_done(p, idx)) {
		atomic_store_explicit(A64(&p->descs[idx].state),
				      WORD(s->pos, FPGAD_DESC_EMPTY),
				      memory_order_relaxed);
		shadow_put(p, idx, FPGAD_DESC_RELEASED, NULL);
		return -EALREADY;
	}
	return -EBUSY;
}

int frame_ring_revoke_oldest(struct frame_ring_producer *p,
			     uint32_t *ret_slot)
{
	uint64_t floor = 0;

	/*
	 * Each failed attempt means the consumer claimed (or let go of)
	 * that frame meanwhile; look again above it.  The consumer can make
	 * this fail at most once per frame out, so the loop is bounded.
	 */
	for (unsigned attempt = 0; attempt <= p->n_desc; attempt++) {
		uint32_t best = UINT32_MAX;
		uint64_t expect;

		for (uint32_t i = 0; i < p->n_desc; i++) {
			const struct shadow *s = &p->shadow[i];
			uint64_t w;

			if (!s->used || s->pos < floor)
				continue;
			if (best != UINT32_MAX && s->pos >= p->shadow[best].pos)
				continue;
			w = atomic_load_explicit(A64(&p->descs[i].state),
						 memory_order_relaxed);
			if (w == WORD(s->pos, FPGAD_DESC_READY))
				best = i;
		}
		if (best == UINT32_MAX)
			return -ENOENT;
		expect = WORD(p->shadow[best].pos, FPGAD_DESC_READY);
		if (atomic_compare_exchange_strong_explicit(
			    A64(&p->descs[best].state), &expect,
			    WORD(p->shadow[best].pos, FPGAD_DESC_REVOKED),
			    memory_order_acq_rel, memory_order_acquire)) {
			uint32_t slot = p->shadow[best].slot;

			shadow_put(p, best, FPGAD_DESC_REVOKED, NULL);
			*ret_slot = slot;
			return 0;
		}
		floor = p->shadow[best].pos + 1;
	}
	return -ENOENT;
}

void frame_ring_raise(struct frame_ring_producer *p, uint32_t events)
{
	p->events |= events;
	p->event_seq++;
	atomic_store_explicit(A32(&p->hdr->events), p->events,
			      memory_order_release);
	atomic_store_explicit(A32(&p->hdr->event_seq), p->event_seq,
			      memory_order_release);
	wake_if_waiting(&p->hdr->cons_waiting, &p->hdr->cons_futex);
}

static bool producer_has_work(const struct frame_ring_producer *p)
{
	if (!p->outstanding)
		return true;
	for (uint32_t i = 0; i < p->n_desc; i++)
		if (p->shadow[i].used && shadow_done(p, i))
			return true;
	return false;
}

int frame_ring_producer_wait(struct frame_ring_producer *p, int timeout_ms)
{
	struct fpgad_frames_header *hdr = p->hdr;
	uint64_t deadline = deadline_for(timeout_ms);
	int ret;

	for (;;) {
		uint32_t val = atomic_load_explicit(A32(&hdr->prod_futex),
						    memory_order_acquire);

		atomic_store_explicit(A32(&hdr->prod_waiting), 1,
				      memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (producer_has_work(p)) {
			ret = 0;
			break;
		}
		if (timeout_ms == 0) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = sleep_on(&hdr->prod_futex, val, deadline);
		if (ret == -EINTR)
			break;
		if (ret == -ETIMEDOUT) {
			ret = producer_has_work(p) ? 0 : -ETIMEDOUT;
			break;
		}
	}
	atomic_store_explicit(A32(&hdr->prod_waiting), 0, memory_order_relaxed);
	return ret;
}

unsigned frame_ring_outstanding(const struct frame_ring_producer *p)
{
	return p->outstanding;
}

bool frame_ring_slot_out(const struct frame_ring_producer *p, uint32_t slot)
{
	return slot < p->n_slots && p->slot_desc[slot] != 0;
}

uint64_t frame_ring_head(const struct frame_ring_producer *p)
{
	return p->head;
}

/* --- consumer ------------------------------------------------------------ */

struct frame_ring_consumer {
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
	uint32_t direction;
};

int frame_ring_validate(const void *mem, size_t len)
{
	const struct fpgad_frames_header *hdr = mem;
	uint64_t need;

	if (!mem || ((uintptr_t)mem % alignof(uint64_t)) ||
	    len < header_size)
		return -EINVAL;
	switch (atomic_load_explicit(A32(&hdr->magic), memory_order_acquire)) {
	case FPGAD_FRAMES_MAGIC:
		break;
	case 0:
		return -EAGAIN;
	default:
		return -EINVAL;
	}
	if (hdr->version_major != FPGAD_FRAMES_VERSION_MAJOR)
		return -EPROTONOSUPPORT;
	if (hdr->header_size < header_size ||
	    hdr->header_size % FPGAD_FRAMES_LINE ||
	    hdr->desc_size < desc_size || hdr->desc_size % alignof(uint64_t))
		return -EINVAL;
	if (!is_pow2(hdr->desc_count) ||
	    hdr->desc_count > FPGAD_FRAMES_MAX_DESCS ||
	    hdr->slot_count == 0 || hdr->desc_count < hdr->slot_count)
		return -EINVAL;
	if (hdr->slot_size == 0 || hdr->frame_size > hdr->slot_size)
		return -EINVAL;
	if (atomic_load_explicit(A64(&hdr->generation),
				 memory_order_relaxed) == 0)
		return -EINVAL;
	/* Both factors are bounded above, so this cannot overflow. */
	need = (uint64_t)hdr->header_size +
	       (uint64_t)hdr->desc_count * hdr->desc_size;
	if (need > len)
		return -EINVAL;
	return 0;
}

int frame_ring_consumer_attach(void *mem, size_t len,
			       struct frame_ring_consumer **ret_c)
{
	struct fpgad_frames_header *hdr = mem;
	struct frame_ring_consumer *c;
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
	c->descs = (unsigned char *)mem + hdr->header_size;
	c->generation = atomic_load_explicit(A64(&hdr->generation),
					     memory_order_relaxed);
	/* What was validated must still hold for the copies just taken. */
	if (!is_pow2(c->n_desc) || c->n_desc > FPGAD_FRAMES_MAX_DESCS ||
	    c->n_slots == 0 || c->n_desc < c->n_slots ||
	    c->desc_size < desc_size || c->desc_size % alignof(uint64_t) ||
	    c->frame_size > c->slot_size || c->generation == 0 ||
	    c->direction > FPGAD_FRAMES_H2C ||
	    (uint64_t)(c->descs - (unsigned char *)mem) +
	    (uint64_t)c->n_desc * c->desc_size > len ||
	    (uint64_t)(c->descs - (unsigned char *)mem) < header_size) {
		free(c);
		return -EINVAL;
	}
	c->mask = c->n_desc - 1;
	head = atomic_load_explicit(A64(&hdr->head), memory_order_acquire);
	cursor = atomic_load_explicit(A64(&hdr->cursor), memory_order_relaxed);
	c->cursor = cursor <= head ? cursor : head;
	c->seen_event_seq = 0;
	*ret_c = c;
	return 0;
}

void frame_ring_consumer_free(struct frame_ring_consumer *c)
{
	free(c);
}

void frame_ring_consumer_geometry(const struct frame_ring_consumer *c,
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

uint64_t frame_ring_generation(const struct frame_ring_consumer *c)
{
	return c->generation;
}

static struct fpgad_frame_desc *cdesc(const struct frame_ring_consumer *c,
				      uint64_t pos)
{
	return (struct fpgad_frame_desc *)(c->descs +
		(size_t)(pos & c->mask) * c->desc_size);
}

static bool stale(const struct frame_ring_consumer *c)
{
	return atomic_load_explicit(A64(&c->hdr->generation),
				    memory_order_relaxed) != c->generation ||
	       atomic_load_explicit(A32(&c->hdr->magic),
				    memory_order_relaxed) != FPGAD_FRAMES_MAGIC;
}

static void publish_cursor(struct frame_ring_consumer *c)
{
	atomic_store_explicit(A64(&c->hdr->cursor), c->cursor,
			      memory_order_relaxed);
}

/* Smallest position in [from, to) with a READY descriptor, else @to. */
static uint64_t oldest_ready(const struct frame_ring_consumer *c,
			     uint64_t from, uint64_t to)
{
	uint64_t best = to;

	for (uint32_t i = 0; i < c->n_desc; i++) {
		const struct fpgad_frame_desc *d = cdesc(c, i);
		uint64_t w = atomic_load_explicit(A64(&d->state),
						  memory_order_relaxed);
		uint64_t pos = W_POS(w);

		if (W_STATE(w) == FPGAD_DESC_READY && pos >= from &&
		    pos < best && (pos & c->mask) == i)
			best = pos;
	}
	return best;
}

/* Give a claimed descriptor back: it is released, the producer told. */
static void give_back(struct frame_ring_consumer *c,
		      struct fpgad_frame_desc *d, uint64_t pos)
{
	uint64_t held = WORD(pos, FPGAD_DESC_HELD);

	atomic_compare_exchange_strong_explicit(
		A64(&d->state), &held, WORD(pos, FPGAD_DESC_RELEASED),
		memory_order_seq_cst, memory_order_relaxed);
	wake_if_waiting(&c->hdr->prod_waiting, &c->hdr->prod_futex);
}

/*
 * Copy out a descriptor just claimed at @pos and check it; a bad one is
 * given back at once.
 */
static int take(struct frame_ring_consumer *c, struct fpgad_frame_desc *d,
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

	if (f.slot >= c->n_slots || f.length > c->slot_size) {
		give_back(c, d, pos);
		return -EPROTO;
	}
	*ret_frame = f;
	return 0;
}

int frame_ring_claim(struct frame_ring_consumer *c,
		     struct frame_ring_frame *ret_frame)
{
	/* Bounded, so a misbehaving producer cannot keep us here. */
	unsigned budget = 2 * c->n_desc + 16;

	if (stale(c))
		return -ESTALE;
	while (budget--) {
		uint64_t head = atomic_load_explicit(A64(&c->hdr->head),
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
		w = atomic_load_explicit(A64(&d->state), memory_order_acquire);
		if (w != WORD(pos, FPGAD_DESC_READY)) {
			/* Skipped, revoked or already gone: move on. */
			c->cursor++;
			continue;
		}
		if (!atomic_compare_exchange_strong_explicit(
			    A64(&d->state), &w, WORD(pos, FPGAD_DESC_HELD),
			    memory_order_acq_rel, memory_order_acquire))
			continue;	/* revoked meanwhile: look again */
		c->cursor++;
		publish_cursor(c);
		return take(c, d, pos, ret_frame);
	}
	publish_cursor(c);
	return -EAGAIN;
}

int frame_ring_claim_newest(struct frame_ring_consumer *c,
			    struct frame_ring_frame *ret_frame)
{
	unsigned budget = c->n_desc + 16;

	if (stale(c))
		return -ESTALE;
	while (budget--) {
		uint64_t head = atomic_load_explicit(A64(&c->hdr->head),
						     memory_order_acquire);
		struct fpgad_frame_desc *nd = NULL;
		uint64_t newest = 0, w;
		int skipped = 0, ret;

		if (c->cursor >= head)
			break;
		for (uint32_t i = 0; i < c->n_desc; i++) {
			struct fpgad_frame_desc *d = cdesc(c, i);
			uint64_t pos;

			w = atomic_load_explicit(A64(&d->state),
						 memory_order_relaxed);
			pos = W_POS(w);
			if (W_STATE(w) == FPGAD_DESC_READY &&
			    pos >= c->cursor && pos < head &&
			    (pos & c->mask) == i && (!nd || pos > newest)) {
				nd = d;
				newest = pos;
			}
		}
		if (!nd) {
			c->cursor = head;
			break;
		}
		w = WORD(newest, FPGAD_DESC_READY);
		if (!atomic_compare_exchange_strong_explicit(
			    A64(&nd->state), &w, WORD(newest, FPGAD_DESC_HELD),
			    memory_order_acq_rel, memory_order_acquire))
			continue;	/* revoked meanwhile: look again */
		/* Let go of everything older that is still unclaimed. */
		for (uint32_t i = 0; i < c->n_desc; i++) {
			struct fpgad_frame_desc *d = cdesc(c, i);
			uint64_t pos;

			w = atomic_load_explicit(A64(&d->state),
						 memory_order_relaxed);
			pos = W_POS(w);
			if (W_STATE(w) != FPGAD_DESC_READY || pos < c->cursor ||
			    pos >= newest || (pos & c->mask) != i)
				continue;
			if (atomic_compare_exchange_strong_explicit(
				    A64(&d->state), &w,
				    WORD(pos, FPGAD_DESC_RELEASED),
				    memory_order_seq_cst, memory_order_relaxed))
				skipped++;
		}
		if (skipped)
			wake_if_waiting(&c->hdr->prod_waiting,
					&c->hdr->prod_futex);
		c->cursor = newest + 1;
		publish_cursor(c);
		ret = take(c, nd, newest, ret_frame);
		return ret < 0 ? ret : skipped;
	}
	publish_cursor(c);
	return -EAGAIN;
}

int frame_ring_submit(struct frame_ring_consumer *c,
		      const struct frame_ring_frame *f, uint64_t fill)
{
	struct fpgad_frame_desc *d;
	uint64_t held;

	if (!f || f->pos >= POS_LIMIT || fill > c->slot_size)
		return -EINVAL;
	d = cdesc(c, f->pos);
	held = WORD(f->pos, FPGAD_DESC_HELD);
	if (atomic_load_explicit(A64(&d->state), memory_order_relaxed) != held)
		return -EINVAL;
	d->fill = fill;
	if (!atomic_compare_exchange_strong_explicit(
		    A64(&d->state), &held, WORD(f->pos, FPGAD_DESC_RELEASED),
		    memory_order_seq_cst, memory_order_relaxed))
		return -EINVAL;
	wake_if_waiting(&c->hdr->prod_waiting, &c->hdr->prod_futex);
	return 0;
}

int frame_ring_release(struct frame_ring_consumer *c,
		       const struct frame_ring_frame *f)
{
	struct fpgad_frame_desc *d;
	uint64_t held;

	if (!f || f->pos >= POS_LIMIT)
		return -EINVAL;
	d = cdesc(c, f->pos);
	held = WORD(f->pos, FPGAD_DESC_HELD);
	if (!atomic_compare_exchange_strong_explicit(
		    A64(&d->state), &held, WORD(f->pos, FPGAD_DESC_RELEASED),
		    memory_order_seq_cst, memory_order_relaxed))
		return -EINVAL;
	wake_if_waiting(&c->hdr->prod_waiting, &c->hdr->prod_futex);
	return 0;
}

static bool consumer_has_work(const struct frame_ring_consumer *c)
{
	const struct fpgad_frames_header *hdr = c->hdr;

	return atomic_load_explicit(A64(&hdr->head), memory_order_acquire) >
	       c->cursor ||
	       atomic_load_explicit(A32(&hdr->event_seq),
				    memory_order_acquire) != c->seen_event_seq;
}

int frame_ring_wait(struct frame_ring_consumer *c, int timeout_ms)
{
	struct fpgad_frames_header *hdr = c->hdr;
	uint64_t deadline = deadline_for(timeout_ms);
	int ret;

	for (;;) {
		uint32_t val = atomic_load_explicit(A32(&hdr->cons_futex),
						    memory_order_acquire);

		atomic_store_explicit(A32(&hdr->cons_waiting), 1,
				      memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		if (stale(c)) {
			ret = -ESTALE;
			break;
		}
		if (consumer_has_work(c)) {
			ret = 0;
			break;
		}
		if (timeout_ms == 0) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = sleep_on(&hdr->cons_futex, val, deadline);
		if (ret == -EINTR)
			break;
		if (ret == -ETIMEDOUT) {
			ret = consumer_has_work(c) ? 0 : -ETIMEDOUT;
			break;
		}
	}
	atomic_store_explicit(A32(&hdr->cons_waiting), 0, memory_order_relaxed);
	return ret;
}

uint32_t frame_ring_events(struct frame_ring_consumer *c)
{
	c->seen_event_seq = atomic_load_explicit(A32(&c->hdr->event_seq),
						 memory_order_acquire);
	return atomic_load_explicit(A32(&c->hdr->events), memory_order_acquire);
}
