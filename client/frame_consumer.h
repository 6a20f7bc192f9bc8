/* SPDX-License-Identifier: MIT */
/*
 * frame_consumer.h - libfpgad's end of the frame plane (the ABI is
 * include/fpgad_frames.h; what both ends share is
 * common/frame_ring.h).
 *
 * The consumer validates the header against the mapped length before it
 * uses anything, claims frames in order (or the newest, skipping older
 * ones), releases them in any order, and sleeps on a futex when there is
 * nothing to do.  It checks every slot index and length fpgad gives it.
 *
 * One thread claims and waits at a time; releases may come from any
 * thread.  Functions return 0 (or a count) or a negative errno; ret_* are
 * written only on success.
 */
#ifndef FPGAD_FRAME_CONSUMER_H
#define FPGAD_FRAME_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "frame_ring.h"

struct frame_consumer;

/* Validate and attach; the consumer starts at the shared cursor. */
int frame_consumer_attach(void *mem, size_t len, struct frame_consumer **ret_c);
/* Frees the consumer's private state, not the mapping; accepts NULL. */
void frame_consumer_free(struct frame_consumer *c);

void frame_consumer_geometry(const struct frame_consumer *c,
			     struct frame_ring_geometry *ret_geo);
uint64_t frame_consumer_generation(const struct frame_consumer *c);

/*
 * Claim the next frame in order.  -EAGAIN when there is none, -ESTALE when
 * the ring was re-created (generation changed), -EPROTO when the producer
 * published a bad descriptor (it is given back and skipped).
 */
int frame_consumer_claim(struct frame_consumer *c,
			 struct frame_ring_frame *ret_frame);
/*
 * Claim the newest frame, releasing every older unclaimed one; returns
 * how many were skipped, or the errors of frame_consumer_claim().
 */
int frame_consumer_claim_newest(struct frame_consumer *c,
				struct frame_ring_frame *ret_frame);
/*
 * h2c: hand a claimed slot back with @fill bytes written for the card
 * (any order); -EINVAL if @f is not held or @fill > slot_size.
 */
int frame_consumer_submit(struct frame_consumer *c,
			  const struct frame_ring_frame *f, uint64_t fill);
/* What a GPU stream stores to release a held frame (fpgad_frames.h). */
struct frame_async {
	void *state_low;	/* store released_low here (32 bits) ... */
	uint32_t released_low;
	void *fill;		/* h2c: first the fill length (64 bits) */
	void *done;		/* ... then store count here (32 bits) */
	uint32_t count;
};

/*
 * The stores that release held frame @f from a GPU stream; counts the
 * release as issued (ABI minor 3) and wakes the producer if it sleeps, so
 * that it looks for the GPU's stores.  -EINVAL if @f is not held.
 */
int frame_consumer_async_words(struct frame_consumer *c,
			       const struct frame_ring_frame *f,
			       struct frame_async *ret);
/* Release a claimed frame (any order); -EINVAL if @f is not held. */
int frame_consumer_release(struct frame_consumer *c,
			   const struct frame_ring_frame *f);
/*
 * Sleep until a frame may be claimable or an event not yet read with
 * frame_consumer_events() was raised, at most @timeout_ms (-1 = forever,
 * 0 = just check): 0, -ETIMEDOUT, -EINTR, -ESTALE.
 */
int frame_consumer_wait(struct frame_consumer *c, int timeout_ms);
/*
 * The FPGAD_EVENT_* bits raised since the last call (an event raised again,
 * such as a second reset, is reported again); marks them read.
 */
uint32_t frame_consumer_events(struct frame_consumer *c);

#endif
