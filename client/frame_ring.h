/* SPDX-License-Identifier: MIT */
/*
 * frame_ring.h - both ends of the frame plane's descriptor ring (the ABI
 * is client/include/fpgad_frames.h).  Internal: linked into fpgad and
 * into libfpgad, not installed.
 *
 * The producer (fpgad) initialises a ring in a mapped region, publishes
 * frames, takes slots back when the consumer releases them, revokes
 * frames the consumer has not claimed, and raises events.  It keeps its
 * own copy of every word it writes and reads consumer-written words only
 * as hints: whatever the consumer scribbles on the shared pages, the
 * producer hands each slot back at most once per publication and never
 * overwrites a descriptor that is still out.
 *
 * The consumer (a client) validates the header against the mapped length
 * before it uses anything, claims frames in order (or the newest,
 * skipping older ones), releases them in any order, and sleeps on a futex
 * when there is nothing to do.  It checks every slot index and length the
 * producer gives it.
 *
 * Threads: one thread at a time per producer.  On the consumer side, one
 * thread claims and waits at a time; releases may come from any thread.
 * Functions return 0 (or a count) or a negative errno; ret_* are written
 * only on success.
 */
#ifndef FPGAD_FRAME_RING_H
#define FPGAD_FRAME_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "fpgad_frames.h"

struct frame_ring_geometry {
	uint32_t desc_count;	/* power of two >= slots; 0 = smallest */
	uint32_t slots;
	uint64_t slot_size;
	uint64_t frame_size;	/* <= slot_size */
	uint32_t direction;	/* FPGAD_FRAMES_C2H or FPGAD_FRAMES_H2C */
};

/* One frame as published and as claimed. */
struct frame_ring_frame {
	uint64_t pos;		/* position; set by publish and claim */
	uint64_t seq;
	uint32_t slot;
	uint32_t flags;		/* FPGAD_FRAME_* */
	uint64_t length;
	uint64_t t_dma_start_ns;
	uint64_t t_dma_end_ns;
	uint64_t t_publish_ns;	/* 0 at publish = now */
};

/* A slot the producer got back. */
struct frame_ring_returned {
	uint32_t slot;
	/*
	 * FPGAD_DESC_RELEASED: the consumer released or skipped it;
	 * FPGAD_DESC_REVOKED: it was never claimed (frame_ring_reclaim_all);
	 * FPGAD_DESC_HELD: the consumer still held it (frame_ring_reclaim_all).
	 */
	uint32_t how;
	uint64_t pos;
	/* h2c, RELEASED: bytes the consumer filled (0 = unused, or invalid). */
	uint64_t fill;
};

/* Bytes a ring of @desc_count descriptors needs; 0 if out of range. */
size_t frame_ring_size(uint32_t desc_count);
/* Smallest power of two >= @slots, or 0 if above FPGAD_FRAMES_MAX_DESCS. */
uint32_t frame_ring_desc_count_for(uint32_t slots);

/* FUTEX_WAIT (shared) on @addr while it holds @val; @rel NULL = forever. */
int frame_ring_futex_wait(uint32_t *addr, uint32_t val,
			  const struct timespec *rel);
/* FUTEX_WAKE (shared) up to @n waiters on @addr. */
void frame_ring_futex_wake(uint32_t *addr, int n);

/* --- producer ------------------------------------------------------------ */

struct frame_ring_producer;

/*
 * Lay out a ring in @mem (64-byte aligned, @len bytes, already mapped
 * shared) with a nonzero @generation, every descriptor EMPTY, and make
 * the header valid last.
 */
int frame_ring_producer_init(void *mem, size_t len,
			     const struct frame_ring_geometry *geo,
			     uint64_t generation,
			     struct frame_ring_producer **ret_p);
/* Frees the producer's private state, not the mapping; accepts NULL. */
void frame_ring_producer_free(struct frame_ring_producer *p);

/*
 * Publish @f (pos and, if 0, t_publish_ns are filled in) and wake the
 * consumer if it sleeps.  -EINVAL for a bad slot or length, -EBUSY when
 * @f->slot is already out with this consumer, -ENOBUFS when no
 * descriptor is free.  On success *ret_pos (may be NULL) is the position.
 */
int frame_ring_publish(struct frame_ring_producer *p,
		       const struct frame_ring_frame *f, uint64_t *ret_pos);
/*
 * Hand back up to @max slots whose descriptors the consumer released (or
 * skipped); returns how many were written to @out.
 */
int frame_ring_reclaim(struct frame_ring_producer *p,
		       struct frame_ring_returned *out, unsigned max);
/*
 * The consumer is gone: revoke what it has not claimed, and hand back up
 * to @max outstanding slots, claimed or not; returns how many.
 */
int frame_ring_reclaim_all(struct frame_ring_producer *p,
			   struct frame_ring_returned *out, unsigned max);
/*
 * Take @slot back from the consumer if it has not claimed it: 0 when
 * revoked (the slot is back), -EALREADY when the consumer had already
 * released or skipped it (the slot is back too, as if reclaimed), -EBUSY
 * when the consumer holds it, -ENOENT when @slot is not out.
 */
int frame_ring_revoke(struct frame_ring_producer *p, uint32_t slot);
/*
 * Revoke the oldest frame the consumer has not claimed and return its
 * slot; -ENOENT when there is none.
 */
int frame_ring_revoke_oldest(struct frame_ring_producer *p,
			     uint32_t *ret_slot);
/* Raise FPGAD_EVENT_* bits and wake the consumer if it sleeps. */
void frame_ring_raise(struct frame_ring_producer *p, uint32_t events);
/*
 * Sleep until the consumer released something (or nothing is out), at
 * most @timeout_ms (-1 = forever, 0 = just check): 0, -ETIMEDOUT, -EINTR.
 */
int frame_ring_producer_wait(struct frame_ring_producer *p, int timeout_ms);
/* Descriptors out with the consumer (published, not yet handed back). */
unsigned frame_ring_outstanding(const struct frame_ring_producer *p);
/* Whether @slot is out with the consumer. */
bool frame_ring_slot_out(const struct frame_ring_producer *p, uint32_t slot);
/* Next position to publish. */
uint64_t frame_ring_head(const struct frame_ring_producer *p);

/* --- consumer ------------------------------------------------------------ */

struct frame_ring_consumer;

/*
 * Check a mapped ring: magic, major version, header and descriptor sizes,
 * geometry, and that everything lies within @len.  -EINVAL (malformed or
 * misaligned), -EPROTONOSUPPORT (other major version), -EAGAIN (not
 * initialised yet: magic 0).
 */
int frame_ring_validate(const void *mem, size_t len);
/* Validate and attach; the consumer starts at the shared cursor. */
int frame_ring_consumer_attach(void *mem, size_t len,
			       struct frame_ring_consumer **ret_c);
/* Frees the consumer's private state, not the mapping; accepts NULL. */
void frame_ring_consumer_free(struct frame_ring_consumer *c);

void frame_ring_consumer_geometry(const struct frame_ring_consumer *c,
				  struct frame_ring_geometry *ret_geo);
uint64_t frame_ring_generation(const struct frame_ring_consumer *c);

/*
 * Claim the next frame in order.  -EAGAIN when there is none, -ESTALE when
 * the ring was re-created (generation changed), -EPROTO when the producer
 * published a bad descriptor (it is given back and skipped).
 */
int frame_ring_claim(struct frame_ring_consumer *c,
		     struct frame_ring_frame *ret_frame);
/*
 * Claim the newest frame, releasing every older unclaimed one; returns
 * how many were skipped, or the errors of frame_ring_claim().
 */
int frame_ring_claim_newest(struct frame_ring_consumer *c,
			    struct frame_ring_frame *ret_frame);
/*
 * h2c: hand a claimed slot back with @fill bytes written for the card
 * (any order); -EINVAL if @f is not held or @fill > slot_size.
 */
int frame_ring_submit(struct frame_ring_consumer *c,
		      const struct frame_ring_frame *f, uint64_t fill);
/* Release a claimed frame (any order); -EINVAL if @f is not held. */
int frame_ring_release(struct frame_ring_consumer *c,
		       const struct frame_ring_frame *f);
/*
 * Sleep until a frame may be claimable or an event not yet read with
 * frame_ring_events() was raised, at most @timeout_ms (-1 = forever,
 * 0 = just check): 0, -ETIMEDOUT, -EINTR, -ESTALE.
 */
int frame_ring_wait(struct frame_ring_consumer *c, int timeout_ms);
/* The FPGAD_EVENT_* bits raised so far; marks them read. */
uint32_t frame_ring_events(struct frame_ring_consumer *c);

#endif
