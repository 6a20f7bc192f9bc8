/* SPDX-License-Identifier: MIT */
/*
 * frame_ring.h - what both ends of the frame plane share (the ABI itself
 * is include/fpgad_frames.h): the ring's geometry and size, the
 * check a consumer makes before it trusts a mapped ring, a frame as the
 * two ends pass it, and the futex wake-up protocol of the ABI.  The
 * producer end is daemon/channel/frame_producer.c, the consumer end
 * client/frame_consumer.c.
 *
 * The shared fields are plain fixed-width integers in the ABI header; both
 * ends access them through pointers to the atomic type of the same size
 * (FR_A64, FR_A32), which must be lock-free to work between processes.
 */
#ifndef FPGAD_COMMON_FRAME_RING_H
#define FPGAD_COMMON_FRAME_RING_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpgad_frames.h"
#include "wait.h"

_Static_assert(sizeof(_Atomic uint64_t) == sizeof(uint64_t) &&
	       _Alignof(_Atomic uint64_t) == _Alignof(uint64_t), "atomic u64");
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t) &&
	       _Alignof(_Atomic uint32_t) == _Alignof(uint32_t), "atomic u32");
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_INT_LOCK_FREE == 2,
	       "shared-memory atomics must be lock-free");

#define FR_A64(p) ((_Atomic uint64_t *)(p))
#define FR_A32(p) ((_Atomic uint32_t *)(p))
#define FR_WORD(pos, st) FPGAD_DESC_WORD(pos, st)
#define FR_STATE(w) FPGAD_DESC_WORD_STATE(w)
#define FR_POS(w) FPGAD_DESC_WORD_POS(w)
/* Positions must fit in the 60 bits of a state word. */
#define FR_POS_LIMIT (UINT64_MAX >> FPGAD_DESC_STATE_BITS)

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
	uint64_t t_sender_start_ns;	/* the sender's clock; 0 = none */
	uint64_t t_sender_end_ns;
};

/* Bytes a ring of @desc_count descriptors needs; 0 if out of range. */
size_t frame_ring_size(uint32_t desc_count);
/* Smallest power of two >= @slots, or 0 if above FPGAD_FRAMES_MAX_DESCS. */
uint32_t frame_ring_desc_count_for(uint32_t slots);

/*
 * Check a mapped ring: magic, major version, header and descriptor sizes,
 * geometry, and that everything lies within @len.  -EINVAL (malformed or
 * misaligned), -EPROTONOSUPPORT (other major version), -EAGAIN (not
 * initialised yet: magic 0).
 */
int frame_ring_validate(const void *mem, size_t len);

/*
 * The frame plane's wake-ups: wait.h's protocol on the words of the
 * shared header (futexes shared between the processes).
 */
static inline void frame_ring_wake(uint32_t *waiting, uint32_t *word)
{
	wait_wake(waiting, word, true);
}

static inline int frame_ring_sleep(uint32_t *waiting, uint32_t *word,
				   int (*check)(const void *arg),
				   const void *arg, int timeout_ms)
{
	return wait_until(waiting, word, check, arg, timeout_ms, true);
}

#endif
