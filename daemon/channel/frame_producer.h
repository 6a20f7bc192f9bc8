/* SPDX-License-Identifier: MIT */
/*
 * frame_producer.h - fpgad's end of the frame plane (the ABI is
 * include/fpgad_frames.h; what both ends share is
 * common/frame_ring.h).
 *
 * The producer initialises a ring in a mapped region, publishes frames,
 * takes slots back when the consumer releases them, revokes frames the
 * consumer has not claimed, and raises events.  It keeps its own copy of
 * every word it writes and reads consumer-written words only as hints:
 * whatever the consumer scribbles on the shared pages, the producer hands
 * each slot back at most once per publication and never overwrites a
 * descriptor that is still out.
 *
 * One thread at a time per producer.  Functions return 0 (or a count) or a
 * negative errno; ret_* are written only on success.
 */
#ifndef FPGAD_FRAME_PRODUCER_H
#define FPGAD_FRAME_PRODUCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_ring.h"

struct frame_producer;

/* A slot the producer got back. */
struct frame_returned {
	uint32_t slot;
	/*
	 * FPGAD_DESC_RELEASED: the consumer released or skipped it;
	 * FPGAD_DESC_REVOKED: it was never claimed (frame_producer_reclaim_all);
	 * FPGAD_DESC_HELD: the consumer still held it (frame_producer_reclaim_all).
	 */
	uint32_t how;
	uint64_t pos;
	/* h2c, RELEASED: bytes the consumer filled (0 = unused, or invalid). */
	uint64_t fill;
};

/*
 * Lay out a ring in @mem (64-byte aligned, @len bytes, already mapped
 * shared) with a nonzero @generation, every descriptor EMPTY, and make
 * the header valid last.
 */
int frame_producer_init(void *mem, size_t len,
			const struct frame_ring_geometry *geo,
			uint64_t generation, struct frame_producer **ret_p);
/* Frees the producer's private state, not the mapping; accepts NULL. */
void frame_producer_free(struct frame_producer *p);

/*
 * Publish @f (pos and, if 0, t_publish_ns are filled in) and wake the
 * consumer if it sleeps (unless the wake-up is held).  -EINVAL for a bad
 * slot or length, -EBUSY when @f->slot is already out with this consumer,
 * -ENOBUFS when no descriptor is free.  On success *ret_pos (may be NULL)
 * is the position.
 */
int frame_producer_publish(struct frame_producer *p,
			   const struct frame_ring_frame *f, uint64_t *ret_pos);
/*
 * Hold the consumer's wake-up while a burst is published: from here until
 * frame_producer_wake(), publishing wakes nobody, and frame_producer_wake()
 * wakes the consumer once if anything was published (and it sleeps).  A
 * sleeping consumer then costs one wake-up per burst, not one per frame.
 */
void frame_producer_hold(struct frame_producer *p);
void frame_producer_wake(struct frame_producer *p);
/*
 * Hand back up to @max slots whose descriptors the consumer released (or
 * skipped); returns how many were written to @out.
 */
int frame_producer_reclaim(struct frame_producer *p,
			   struct frame_returned *out, unsigned max);
/*
 * The consumer is gone: revoke what it has not claimed, and hand back up
 * to @max outstanding slots, claimed or not; returns how many.
 */
int frame_producer_reclaim_all(struct frame_producer *p,
			       struct frame_returned *out, unsigned max);
/*
 * Take @slot back from the consumer if it has not claimed it: 0 when
 * revoked (the slot is back), -EALREADY when the consumer had already
 * released or skipped it (the slot is back too, as if reclaimed), -EBUSY
 * when the consumer holds it, -ENOENT when @slot is not out.
 */
int frame_producer_revoke(struct frame_producer *p, uint32_t slot);
/* Raise FPGAD_EVENT_* bits and wake the consumer if it sleeps. */
void frame_producer_raise(struct frame_producer *p, uint32_t events);
/*
 * Sleep until the consumer released something (or nothing is out), or has
 * stream-ordered releases on their way, at most @timeout_ms (-1 = forever,
 * 0 = just check): 0, -ETIMEDOUT, -EINTR.  A consumer that queues such a
 * release wakes this sleep when it counts it; the GPU's stores later wake
 * nobody, so after 0 the caller looks again while they are pending.
 */
int frame_producer_wait(struct frame_producer *p, int timeout_ms);
/*
 * Whether the consumer released or skipped a frame whose slot is not taken
 * back yet (frame_producer_reclaim would return it).  Read-only: the
 * streaming thread may spin on it without the channel's lock.
 */
bool frame_producer_returned(const struct frame_producer *p);
/* Whether @slot is out with the consumer. */
bool frame_producer_slot_out(const struct frame_producer *p, uint32_t slot);
/*
 * Whether the consumer has stream-ordered releases on their way (they wake
 * nobody: look for them now and then).  A hint from consumer memory.
 */
bool frame_producer_async_pending(const struct frame_producer *p);
/*
 * Whether the consumer counted a stream-ordered release in the last
 * FRAME_PRODUCER_ASYNC_RECENT_NS before @now_ns (CLOCK_MONOTONIC): the
 * caller then sleeps briefly, so that a consumer which counts its releases
 * but does not wake the producer (ABI minor 3 asked for no wake) is still
 * served.  A hint from consumer memory.
 */
#define FRAME_PRODUCER_ASYNC_RECENT_NS 1000000000ull
bool frame_producer_async_recent(struct frame_producer *p, uint64_t now_ns);

#endif
