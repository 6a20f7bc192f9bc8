/* SPDX-License-Identifier: MIT */
/*
 * fpgad_frames.h - the frame plane: the shared-memory descriptor ring
 * through which fpgad publishes frames to one client and the client takes
 * and releases them.  This header is an ABI; it is the specification.
 *
 * One ring per channel and per client, in a POSIX shared-memory object
 * that fpgad creates and the client maps read-write:
 *
 *   offset 0            struct fpgad_frames_header (header_size bytes)
 *   offset header_size  desc_count descriptors of desc_size bytes each
 *
 * Roles.  fpgad is the producer, the client the consumer.  Each field
 * below is marked [P] (written by the producer only), [C] (written by the
 * consumer only), [PC] (both, by compare-and-swap) or [I] (written once by
 * the producer before the header is made valid, then read-only).  [P] and
 * [C] fields live on separate 64-byte cache lines.  Neither side trusts
 * the other: the producer keeps its own copy of everything it wrote and
 * reads consumer-written words only as hints it validates; the consumer
 * checks the geometry against the mapped length and every slot index and
 * length it is given.
 *
 * Atomicity.  Every field is naturally aligned.  Fields marked atomic are
 * read and written with atomic operations (C11 atomics on the same
 * addresses); the descriptor payload fields are plain and are ordered by
 * the descriptor state word (written before it is set READY with release
 * semantics, read after it is seen READY with acquire semantics).
 *
 * Positions.  Every published descriptor has a position: 0, 1, 2, ... in
 * publish order, never reused within a generation.  The descriptor for
 * position p lives at index p & (desc_count - 1).  The producer never
 * overwrites a descriptor that is still in use (READY, HELD): it skips
 * that index and publishes at the next free one, so positions may have no
 * descriptor (a skipped position), and a consumer at position c that sees
 * head > c but no READY descriptor for c simply moves on.
 *
 * Descriptor states (low 4 bits of the state word; the upper 60 bits
 * carry the descriptor's position, which makes every compare-and-swap
 * name one publication exactly and rules out ABA):
 *
 *   EMPTY     never used, or reclaimed by the producer
 *   READY     published, not claimed yet        set by the producer
 *   HELD      claimed by the consumer           READY -> HELD (consumer CAS)
 *   RELEASED  the consumer is done with it, or skipped it unclaimed
 *                                     HELD or READY -> RELEASED (consumer CAS)
 *   REVOKED   taken back unclaimed              READY -> REVOKED (producer CAS)
 *
 * Once the producer has taken back the slot of a RELEASED or REVOKED
 * descriptor, the descriptor is its to write again (a reclaimed RELEASED
 * one is first marked EMPTY).
 *
 * A claim (CAS READY->HELD) and a revoke (CAS READY->REVOKED) race for
 * the same word, so exactly one wins: a frame is either delivered once or
 * revoked once.  Releases may come in any order.
 *
 * Wake-ups (no system call while frames flow and the reader is busy).
 * The consumer sleeps with FUTEX_WAIT (shared, not private) on
 * cons_futex; before it sleeps it reads cons_futex, sets cons_waiting,
 * issues a sequentially consistent fence and checks head and event_seq
 * once more.  The producer, after storing head (or events), issues a
 * sequentially consistent fence and only if it then sees cons_waiting set
 * increments cons_futex and calls FUTEX_WAKE.  Either the consumer sees
 * the new head, or the producer sees the flag; no wake-up is lost.  The
 * producer waits for releases the same way on prod_futex with
 * prod_waiting; the consumer's release does the waking.
 */
#ifndef FPGAD_FRAMES_H
#define FPGAD_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "fpgad_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "FRMQ" read as a little-endian uint32_t. */
#define FPGAD_FRAMES_MAGIC 0x514d5246u

/*
 * A consumer accepts any minor version of its major version: minor
 * versions only append fields (the size fields say how much there is)
 * and give meaning to reserved bits and bytes that were zero before.
 */
#define FPGAD_FRAMES_VERSION_MAJOR 1
#define FPGAD_FRAMES_VERSION_MINOR 4

/* Largest descriptor count either side accepts. */
#define FPGAD_FRAMES_MAX_DESCS (1u << 16)

/* Descriptor state word. */
#define FPGAD_DESC_EMPTY 0u
#define FPGAD_DESC_READY 1u
#define FPGAD_DESC_HELD 2u
#define FPGAD_DESC_RELEASED 3u
#define FPGAD_DESC_REVOKED 4u
#define FPGAD_DESC_STATE_BITS 4
#define FPGAD_DESC_STATE_MASK 0xfull
#define FPGAD_DESC_WORD(pos, state) \
	(((uint64_t)(pos) << FPGAD_DESC_STATE_BITS) | (uint64_t)(state))
#define FPGAD_DESC_WORD_STATE(w) ((uint32_t)((w) & FPGAD_DESC_STATE_MASK))
#define FPGAD_DESC_WORD_POS(w) ((uint64_t)(w) >> FPGAD_DESC_STATE_BITS)

/* Descriptor flags. */
#define FPGAD_FRAME_ERROR 0x1u		/* the card reported an error */
#define FPGAD_FRAME_TRUNCATED 0x2u	/* shorter than the frame size */
#define FPGAD_FRAME_DROPPED_BEFORE 0x4u	/* frames were lost before it */

/* Ring direction. */
#define FPGAD_FRAMES_C2H 0u
#define FPGAD_FRAMES_H2C 1u

/*
 * Event bits: sticky within a generation.  Each raise also counts in
 * event_count[] (minor 2), so a consumer can tell an event that comes
 * again (a second reset) from one it has seen.
 */
#define FPGAD_EVENT_RESET 0x1u		/* the channel's engine was reset
					   after a DMA error or timeout */
#define FPGAD_EVENT_CLOSED 0x2u		/* lease ended; no more frames */
#define FPGAD_EVENT_DAEMON_GONE 0x4u	/* fpgad is shutting down */
#define FPGAD_EVENT_FAILED 0x8u		/* the channel FAILED after repeated
					   DMA errors; no frames until it is
					   reset (fpgactl reset) */
#define FPGAD_EVENT_COUNT 8		/* event bits with a counter */

struct fpgad_frame_desc {
	/*
	 * [PC] atomic.  FPGAD_DESC_WORD(position, state).
	 */
	uint64_t state;
	/* [P] frame sequence number from the card; gaps mean lost frames. */
	uint64_t seq;
	/* [P] ring slot holding the frame, < slot_count. */
	uint32_t slot;
	/* [P] FPGAD_FRAME_* bits. */
	uint32_t flags;
	/* [P] bytes of valid data in the slot, <= slot_size. */
	uint64_t length;
	/* [P] CLOCK_MONOTONIC ns: DMA started, DMA ended, published. */
	uint64_t t_dma_start_ns;
	uint64_t t_dma_end_ns;
	uint64_t t_publish_ns;
	/*
	 * [C] (minor 1) h2c rings only: the bytes the consumer wrote into the
	 * slot for the card to read, <= slot_size, stored before the state
	 * becomes RELEASED (0 = give the buffer back unused).  The producer
	 * sets it to 0 when it publishes.  Unused in c2h rings.
	 */
	uint64_t fill;

	/* --- minor 4: descriptors are two cache lines (desc_size 128) --- */

	/*
	 * [P] (minor 4) The sender's own times for the frame, in ns since
	 * the epoch of the sender's clock (PTP time when the sender runs
	 * PTP, else whatever its clock counts): when the frame started and
	 * when it ended (HSB's metadata: frame start, metadata time).  0 when
	 * the source gives none (the sim, the XDMA card, a sender that sends
	 * zeros) or one that is no time (nanoseconds of 10^9 or more).  Read
	 * them only where version_minor >= 4 and desc_size covers them
	 * (FPGAD_FRAMES_DESC_HAS()): a descriptor of 64 bytes has none.
	 */
	uint64_t t_sender_start_ns;
	uint64_t t_sender_end_ns;
	uint8_t reserved[48];		/* [P] 0 */
};

/* The descriptor size of minors 0 to 3, the least a consumer accepts. */
#define FPGAD_FRAMES_DESC_MIN_SIZE 64u

/*
 * Whether descriptors of @desc_size bytes in a ring of minor @minor carry
 * @field of struct fpgad_frame_desc.
 */
#define FPGAD_FRAMES_DESC_HAS(minor, desc_size, field)			\
	((minor) >= 4 &&						\
	 (desc_size) >= offsetof(struct fpgad_frame_desc, field) +	\
			sizeof(((struct fpgad_frame_desc *)0)->field))

struct fpgad_frames_header {
	/* --- line 0: [I] identity and geometry --- */

	/*
	 * [I] atomic.  FPGAD_FRAMES_MAGIC, stored last (release) when the
	 * producer has filled everything else; 0 while it does.
	 */
	uint32_t magic;
	/* [I] FPGAD_FRAMES_VERSION_MAJOR / _MINOR of the producer. */
	uint16_t version_major;
	uint16_t version_minor;
	/* [I] bytes from the start of the header to descriptor 0; >= 192. */
	uint32_t header_size;
	/*
	 * [I] bytes per descriptor (stride); >= 64, a multiple of 8: 128
	 * from minor 4.  A consumer reads the fields that fit in it and
	 * ignores the rest.
	 */
	uint32_t desc_size;
	/*
	 * [I] number of descriptors: a power of two, >= slot_count,
	 * <= FPGAD_FRAMES_MAX_DESCS.
	 */
	uint32_t desc_count;
	/* [I] number of ring slots frames may name, >= 1. */
	uint32_t slot_count;
	/* [I] bytes per slot (the stride in the channel's buffer). */
	uint64_t slot_size;
	/* [I] nominal frame size, <= slot_size. */
	uint64_t frame_size;
	/*
	 * [I] nonzero; different each time fpgad (re)creates the ring, so a
	 * consumer can tell that what it mapped is no longer the ring it
	 * attached to.
	 */
	uint64_t generation;
	/*
	 * [I] (minor 1) FPGAD_FRAMES_C2H: descriptors carry frames from the
	 * card; FPGAD_FRAMES_H2C: descriptors offer empty slots, which the
	 * consumer fills and releases with a fill length for the card.
	 */
	uint32_t direction;
	uint8_t reserved0[12];

	/* --- line 1: [P] producer-written --- */

	/* [P] atomic.  Next position to publish; all below are published. */
	uint64_t head;
	/* [P] atomic.  FPGAD_EVENT_* bits, set and never cleared. */
	uint32_t events;
	/* [P] atomic.  Incremented each time an event is raised. */
	uint32_t event_seq;
	/* [P] atomic.  Futex word the consumer sleeps on. */
	uint32_t cons_futex;
	/* [P] atomic.  Nonzero while the producer sleeps on prod_futex. */
	uint32_t prod_waiting;
	/*
	 * [P] atomic.  (minor 2) How many times event bit (1 << i) was
	 * raised; incremented before events and event_seq are stored.
	 */
	uint32_t event_count[FPGAD_EVENT_COUNT];
	uint8_t reserved1[8];

	/* --- line 2: [C] consumer-written --- */

	/* [C] atomic.  Next position the consumer will look at. */
	uint64_t cursor;
	/* [C] atomic.  Nonzero while the consumer sleeps on cons_futex. */
	uint32_t cons_waiting;
	/* [C] atomic.  Futex word the producer sleeps on. */
	uint32_t prod_futex;
	/*
	 * [C] atomic.  (minor 3) Stream-ordered releases.  A consumer may have
	 * a GPU store a descriptor's RELEASED state (its low 32 bits) once the
	 * GPU work queued before it is done, with no CPU thread waiting.  It
	 * counts each such release it queues in async_issued (a CPU store,
	 * before it queues the GPU's), then wakes the producer as a release
	 * does (the fence, prod_waiting, prod_futex; see Wake-ups above), and
	 * has the GPU store that count in async_done after the state.  The
	 * GPU's stores wake nobody: while the two counts differ, the producer
	 * looks at the state words now and then instead of sleeping on
	 * prod_futex; it reads both counts before any state word.  Without the
	 * wake (a consumer of minor 3 needed none), a producer that went to
	 * sleep just before the count moved notices only when its sleep ends.
	 */
	uint32_t async_issued;
	uint32_t async_done;
	uint8_t reserved2[40];
};

#define FPGAD_FRAMES_LINE 64

FPGAD_ABI_ASSERT(sizeof(struct fpgad_frame_desc) == 2 * FPGAD_FRAMES_LINE,
		 "a descriptor is two cache lines");
FPGAD_ABI_AT(fpgad_frame_desc, state, 0);
FPGAD_ABI_AT(fpgad_frame_desc, seq, 8);
FPGAD_ABI_AT(fpgad_frame_desc, slot, 16);
FPGAD_ABI_AT(fpgad_frame_desc, flags, 20);
FPGAD_ABI_AT(fpgad_frame_desc, length, 24);
FPGAD_ABI_AT(fpgad_frame_desc, t_dma_start_ns, 32);
FPGAD_ABI_AT(fpgad_frame_desc, t_dma_end_ns, 40);
FPGAD_ABI_AT(fpgad_frame_desc, t_publish_ns, 48);
FPGAD_ABI_AT(fpgad_frame_desc, fill, 56);
FPGAD_ABI_AT(fpgad_frame_desc, t_sender_start_ns, 64);
FPGAD_ABI_AT(fpgad_frame_desc, t_sender_end_ns, 72);

FPGAD_ABI_ASSERT(sizeof(struct fpgad_frames_header) ==
		 3 * FPGAD_FRAMES_LINE, "the header is three cache lines");
FPGAD_ABI_AT(fpgad_frames_header, magic, 0);
FPGAD_ABI_AT(fpgad_frames_header, version_major, 4);
FPGAD_ABI_AT(fpgad_frames_header, version_minor, 6);
FPGAD_ABI_AT(fpgad_frames_header, header_size, 8);
FPGAD_ABI_AT(fpgad_frames_header, desc_size, 12);
FPGAD_ABI_AT(fpgad_frames_header, desc_count, 16);
FPGAD_ABI_AT(fpgad_frames_header, slot_count, 20);
FPGAD_ABI_AT(fpgad_frames_header, slot_size, 24);
FPGAD_ABI_AT(fpgad_frames_header, frame_size, 32);
FPGAD_ABI_AT(fpgad_frames_header, generation, 40);
FPGAD_ABI_AT(fpgad_frames_header, direction, 48);
/* The producer's line. */
FPGAD_ABI_AT(fpgad_frames_header, head, 64);
FPGAD_ABI_AT(fpgad_frames_header, events, 72);
FPGAD_ABI_AT(fpgad_frames_header, event_seq, 76);
FPGAD_ABI_AT(fpgad_frames_header, cons_futex, 80);
FPGAD_ABI_AT(fpgad_frames_header, prod_waiting, 84);
FPGAD_ABI_AT(fpgad_frames_header, event_count, 88);
/* The consumer's line. */
FPGAD_ABI_AT(fpgad_frames_header, cursor, 128);
FPGAD_ABI_AT(fpgad_frames_header, cons_waiting, 136);
FPGAD_ABI_AT(fpgad_frames_header, prod_futex, 140);
FPGAD_ABI_AT(fpgad_frames_header, async_issued, 144);
FPGAD_ABI_AT(fpgad_frames_header, async_done, 148);

#ifdef __cplusplus
}
#endif

#endif
