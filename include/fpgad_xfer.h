/* SPDX-License-Identifier: MIT */
/*
 * fpgad_xfer.h - the transfer plane: the shared-memory submission and
 * completion queue through which a client asks fpgad to move bytes between
 * its registered buffers and card memory, and fpgad answers.  This header
 * is an ABI; it is the specification.
 *
 * One queue per control connection.  fpgad creates it as a sealed memfd
 * (no shrinking or growing) and hands it to the client over the handoff
 * socket (proto/fpgad.proto, OpenXferQueue) together with the queue's
 * doorbell, an eventfd; both sides map the memfd read-write:
 *
 *   offset 0          struct fpgad_xfer_header (header_size bytes)
 *   offset sq_offset  sq_entries submission entries, sqe_size bytes each
 *   offset cq_offset  cq_entries completion entries, cqe_size bytes each
 *
 * Roles.  The client submits, fpgad serves.  Each field below is marked
 * [I] (written once by fpgad before the header is made valid, then
 * read-only), [C] (written by the client only) or [S] (written by fpgad
 * only).  [C] and [S] fields live on separate 64-byte cache lines.
 *
 * Positions.  sq_tail, sq_head, cq_tail and cq_head are free-running
 * uint32_t counters; the entry of position p is p & (entries - 1).
 *
 * Submission.  The client writes the entry at sq_tail, then stores
 * sq_tail + 1 (release).  fpgad copies each entry in [sq_head, sq_tail)
 * before it looks at it and then stores sq_head past it (release): from
 * then on the client may write that entry again.  The client never has
 * more than sq_entries entries between sq_head and sq_tail.  fpgad takes
 * an entry only when it has room for its completion: the entries it has
 * taken and not yet completed, plus the completions the client has not
 * consumed (cq_tail - cq_head), stay below cq_entries.  Entries are taken
 * in order; an entry flagged FPGAD_XFER_F_BARRIER is taken only once
 * every earlier entry has completed.
 *
 * Completion.  Every entry fpgad takes gets exactly one completion, with
 * the entry's user_data: fpgad writes the entry at cq_tail, then stores
 * cq_tail + 1 (release).  The client reads the completions in [cq_head,
 * cq_tail) and stores cq_head past those it consumed.  Transfers run
 * concurrently (on several engines, split into parts), so completions
 * come in the order transfers finish, not in submission order.
 *
 * Checks.  Each entry is checked in full before anything moves: a bad one
 * completes at once with status -EINVAL (-ENOENT for an unknown buffer,
 * -EOPNOTSUPP for a direction no engine serves) and rule naming what it
 * broke, and limit the value of that rule
 * (the alignment, the card memory size, the buffer length, the largest
 * transfer).  Alignment: card_addr, buf_offset and length are multiples
 * of host_align (the card's engines' granule) in host memory, of gpu_align
 * (4 KiB at least, as GPUDirect pins pages) in GPU memory.  A transfer
 * longer than part_size is split into parts; when a part fails, the parts
 * after it are not started, and the transfer completes with that part's
 * status, fail_addr its card address and length the bytes that arrived
 * before it.  A buffer id names a buffer registered on the same control
 * connection, and no other: a buffer of another connection is unknown.
 *
 * Trust.  fpgad treats every byte of the queue as written by an adversary:
 * it reads client-written positions once, and an sq_tail more than
 * sq_entries ahead of sq_head, or a cq_head outside [the last cq_head it
 * accepted, cq_tail], is ignored (counted in bad_positions) until it makes
 * sense again.  The client checks the geometry against the mapped length
 * and the positions fpgad writes.
 *
 * Wake-ups (no system call while transfers flow and both sides are busy).
 * Client to fpgad: one fpgad thread serves the queues of every
 * connection, so it sleeps on descriptors (epoll), not on a futex word.
 * Before it sleeps it stores srv_waiting = 1, issues a sequentially
 * consistent fence and reads sq_tail once more; the client, after storing
 * sq_tail, issues a sequentially consistent fence and, only if it then
 * sees srv_waiting set, writes 1 to the doorbell.  fpgad to client, as in
 * the frame plane (fpgad_frames.h): the client sleeps with FUTEX_WAIT
 * (shared) on cq_futex after reading it, storing cli_waiting = 1, a
 * sequentially consistent fence and a last look at cq_tail and events;
 * fpgad, after storing cq_tail (or events), issues a sequentially
 * consistent fence and, only if it sees cli_waiting set, increments
 * cq_futex and calls FUTEX_WAKE.
 *
 * Life.  The queue lives as long as the control connection: fpgad keeps
 * its end of the handoff connection open and closes it when the queue
 * ends (the connection closed, the process died, fpgad stopped), having
 * raised FPGAD_XFER_EVENT_CLOSED where it could.  Transfers still queued
 * then are dropped; those running finish before fpgad lets go of the
 * buffers they use.
 */
#ifndef FPGAD_XFER_H
#define FPGAD_XFER_H

#include <stddef.h>
#include <stdint.h>

#include "fpgad_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "XFRQ" read as a little-endian uint32_t. */
#define FPGAD_XFER_MAGIC 0x51524658u

/*
 * A client accepts any minor version of its major version: minor versions
 * only append fields (the size fields say how much there is) and give
 * meaning to reserved bits and bytes that were zero before.
 */
#define FPGAD_XFER_VERSION_MAJOR 1
#define FPGAD_XFER_VERSION_MINOR 0

/* Bounds either side accepts for sq_entries and cq_entries. */
#define FPGAD_XFER_MIN_ENTRIES 8u
#define FPGAD_XFER_MAX_ENTRIES 4096u

/* Operations. */
#define FPGAD_XFER_OP_READ 1u		/* card memory -> buffer (C2H) */
#define FPGAD_XFER_OP_WRITE 2u		/* buffer -> card memory (H2C) */

/* Submission flags. */
#define FPGAD_XFER_F_BARRIER 0x1u	/* start after every earlier entry
					   of this queue has completed */
#define FPGAD_XFER_F_ALL 0x1u

/*
 * Rules an entry can break (fpgad_xfer_cqe.rule); each completion that
 * names one has status -EINVAL, except FPGAD_XFER_RULE_BUFFER (-ENOENT)
 * and FPGAD_XFER_RULE_ENGINE (-EOPNOTSUPP).
 */
#define FPGAD_XFER_RULE_NONE 0u
#define FPGAD_XFER_RULE_OPCODE 1u	/* opcode is not READ or WRITE */
#define FPGAD_XFER_RULE_RESERVED 2u	/* unknown flags or reserved bytes
					   not zero */
#define FPGAD_XFER_RULE_BUFFER 3u	/* buffer_id is not a buffer registered
					   on this connection */
#define FPGAD_XFER_RULE_ZERO_LENGTH 4u	/* length is 0 */
#define FPGAD_XFER_RULE_MAX_LENGTH 5u	/* length > limit, the longest transfer */
#define FPGAD_XFER_RULE_CARD_ALIGN 6u	/* card_addr not a multiple of limit */
#define FPGAD_XFER_RULE_BUF_ALIGN 7u	/* buf_offset not a multiple of limit */
#define FPGAD_XFER_RULE_LEN_ALIGN 8u	/* length not a multiple of limit */
#define FPGAD_XFER_RULE_CARD_RANGE 9u	/* card_addr + length > limit, the card
					   memory size */
#define FPGAD_XFER_RULE_BUF_RANGE 10u	/* buf_offset + length > limit, the
					   buffer's length */
#define FPGAD_XFER_RULE_TIMEOUT 11u	/* timeout_ms > limit */
#define FPGAD_XFER_RULE_MODE 12u	/* the buffer's transfer mode cannot run
					   (e.g. bounce with no staging) */
#define FPGAD_XFER_RULE_ENGINE 13u	/* no engine of the card serves this
					   direction (every one drives a channel);
					   status -EOPNOTSUPP */
#define FPGAD_XFER_RULE_COUNT 14u

/* Transfer modes (fpgad_xfer_cqe.mode). */
#define FPGAD_XFER_MODE_HOST 1u		/* card DMA into host shared memory */
#define FPGAD_XFER_MODE_GPUDIRECT 2u	/* card DMA straight into GPU memory */
#define FPGAD_XFER_MODE_BOUNCE 3u	/* card DMA into pinned host staging,
					   copied to or from GPU memory */

/* Completion flags. */
#define FPGAD_XFER_CF_CARD_WROTE 0x1u	/* the buffer holds what the card
					   wrote (a READ that succeeded) */

/* Events: sticky. */
#define FPGAD_XFER_EVENT_CLOSED 0x1u	/* the queue ended; no more completions */
#define FPGAD_XFER_EVENT_DAEMON_GONE 0x2u /* fpgad is shutting down */

struct fpgad_xfer_sqe {
	/* [C] returned in the completion, never interpreted. */
	uint64_t user_data;
	/* [C] FPGAD_XFER_OP_*. */
	uint32_t opcode;
	/* [C] FPGAD_XFER_F_* bits. */
	uint32_t flags;
	/* [C] a buffer registered on this connection (RegisterBuffer). */
	uint64_t buffer_id;
	/* [C] bytes into the buffer. */
	uint64_t buf_offset;
	/* [C] card memory address. */
	uint64_t card_addr;
	/* [C] bytes to move, >= 1. */
	uint64_t length;
	/* [C] per part: 0 = fpgad's [device] dma_timeout_ms. */
	uint32_t timeout_ms;
	/* [C] zero. */
	uint32_t reserved0;
	uint64_t reserved1;
};

struct fpgad_xfer_cqe {
	/* [S] the entry's user_data. */
	uint64_t user_data;
	/*
	 * [S] 0, or a negative errno: -EINVAL or -ENOENT (rule says why),
	 * -EIO, -ETIMEDOUT (the card; fail_addr says where), -ECANCELED (the
	 * engine was reset, the buffer went away), -ENOMEM.
	 */
	int32_t status;
	/* [S] FPGAD_XFER_RULE_* broken, or FPGAD_XFER_RULE_NONE. */
	uint32_t rule;
	/* [S] bytes moved: all on success, before fail_addr on failure. */
	uint64_t length;
	/* [S] card address of the part that failed, when status != 0. */
	uint64_t fail_addr;
	/* [S] the value of the rule broken (see FPGAD_XFER_RULE_*). */
	uint64_t limit;
	/* [S] CLOCK_MONOTONIC ns: fpgad took the entry, and completed it. */
	uint64_t t_start_ns;
	uint64_t t_end_ns;
	/* [S] FPGAD_XFER_MODE_* it ran in; 0 when refused. */
	uint32_t mode;
	/* [S] FPGAD_XFER_CF_* bits. */
	uint32_t flags;
};

struct fpgad_xfer_header {
	/* --- line 0: [I] identity and geometry --- */

	/*
	 * [I] atomic.  FPGAD_XFER_MAGIC, stored last (release) when fpgad
	 * has filled everything else; 0 while it does.
	 */
	uint32_t magic;
	/* [I] FPGAD_XFER_VERSION_MAJOR / _MINOR of fpgad. */
	uint16_t version_major;
	uint16_t version_minor;
	/* [I] bytes of this header; >= 256, a multiple of 64. */
	uint32_t header_size;
	/* [I] bytes per submission entry; >= 64, a multiple of 8. */
	uint32_t sqe_size;
	/* [I] bytes per completion entry; >= 64, a multiple of 8. */
	uint32_t cqe_size;
	/* [I] submission entries: a power of two in [MIN, MAX]_ENTRIES. */
	uint32_t sq_entries;
	/* [I] completion entries: a power of two >= sq_entries. */
	uint32_t cq_entries;
	/* [I] where the entries start; multiples of 64, within the memfd. */
	uint32_t sq_offset;
	uint32_t cq_offset;
	uint32_t reserved0;
	/* [I] nonzero; different for every queue fpgad makes. */
	uint64_t generation;
	uint8_t reserved1[16];

	/* --- line 1: [I] the rules, for the client's information --- */

	/* [I] bytes of card address space; 0: unknown (the card checks). */
	uint64_t card_memory;
	/* [I] longest transfer (FPGAD_XFER_RULE_MAX_LENGTH). */
	uint64_t max_length;
	/* [I] longest part an engine takes; longer transfers are split. */
	uint64_t part_size;
	/* [I] alignment in host memory and in GPU memory, powers of two. */
	uint32_t host_align;
	uint32_t gpu_align;
	/* [I] longest timeout_ms (FPGAD_XFER_RULE_TIMEOUT). */
	uint32_t max_timeout_ms;
	uint8_t reserved2[28];

	/* --- line 2: [C] client-written --- */

	/* [C] atomic.  Next position the client will fill. */
	uint32_t sq_tail;
	/* [C] atomic.  Next completion the client will read. */
	uint32_t cq_head;
	/* [C] atomic.  Nonzero while the client sleeps on cq_futex. */
	uint32_t cli_waiting;
	uint8_t reserved3[52];

	/* --- line 3: [S] fpgad-written --- */

	/* [S] atomic.  Entries below it have been taken. */
	uint32_t sq_head;
	/* [S] atomic.  Completions below it are written. */
	uint32_t cq_tail;
	/* [S] atomic.  Nonzero while fpgad's thread may sleep: ring the
	   doorbell. */
	uint32_t srv_waiting;
	/* [S] atomic.  Futex word the client sleeps on. */
	uint32_t cq_futex;
	/* [S] atomic.  FPGAD_XFER_EVENT_* bits, set and never cleared. */
	uint32_t events;
	/* [S] atomic.  Client-written positions fpgad had to ignore. */
	uint32_t bad_positions;
	/* [S] atomic.  Entries taken, and of those refused by a rule. */
	uint64_t taken;
	uint64_t refused;
	uint8_t reserved4[24];
};

#define FPGAD_XFER_LINE 64

FPGAD_ABI_ASSERT(sizeof(struct fpgad_xfer_sqe) == 64,
		 "a submission entry is one cache line");
FPGAD_ABI_AT(fpgad_xfer_sqe, user_data, 0);
FPGAD_ABI_AT(fpgad_xfer_sqe, opcode, 8);
FPGAD_ABI_AT(fpgad_xfer_sqe, flags, 12);
FPGAD_ABI_AT(fpgad_xfer_sqe, buffer_id, 16);
FPGAD_ABI_AT(fpgad_xfer_sqe, buf_offset, 24);
FPGAD_ABI_AT(fpgad_xfer_sqe, card_addr, 32);
FPGAD_ABI_AT(fpgad_xfer_sqe, length, 40);
FPGAD_ABI_AT(fpgad_xfer_sqe, timeout_ms, 48);
FPGAD_ABI_AT(fpgad_xfer_sqe, reserved0, 52);
FPGAD_ABI_AT(fpgad_xfer_sqe, reserved1, 56);

FPGAD_ABI_ASSERT(sizeof(struct fpgad_xfer_cqe) == 64,
		 "a completion entry is one cache line");
FPGAD_ABI_AT(fpgad_xfer_cqe, user_data, 0);
FPGAD_ABI_AT(fpgad_xfer_cqe, status, 8);
FPGAD_ABI_AT(fpgad_xfer_cqe, rule, 12);
FPGAD_ABI_AT(fpgad_xfer_cqe, length, 16);
FPGAD_ABI_AT(fpgad_xfer_cqe, fail_addr, 24);
FPGAD_ABI_AT(fpgad_xfer_cqe, limit, 32);
FPGAD_ABI_AT(fpgad_xfer_cqe, t_start_ns, 40);
FPGAD_ABI_AT(fpgad_xfer_cqe, t_end_ns, 48);
FPGAD_ABI_AT(fpgad_xfer_cqe, mode, 56);
FPGAD_ABI_AT(fpgad_xfer_cqe, flags, 60);

FPGAD_ABI_ASSERT(sizeof(struct fpgad_xfer_header) == 4 * FPGAD_XFER_LINE,
		 "the header is four cache lines");
FPGAD_ABI_AT(fpgad_xfer_header, magic, 0);
FPGAD_ABI_AT(fpgad_xfer_header, version_major, 4);
FPGAD_ABI_AT(fpgad_xfer_header, version_minor, 6);
FPGAD_ABI_AT(fpgad_xfer_header, header_size, 8);
FPGAD_ABI_AT(fpgad_xfer_header, sqe_size, 12);
FPGAD_ABI_AT(fpgad_xfer_header, cqe_size, 16);
FPGAD_ABI_AT(fpgad_xfer_header, sq_entries, 20);
FPGAD_ABI_AT(fpgad_xfer_header, cq_entries, 24);
FPGAD_ABI_AT(fpgad_xfer_header, sq_offset, 28);
FPGAD_ABI_AT(fpgad_xfer_header, cq_offset, 32);
FPGAD_ABI_AT(fpgad_xfer_header, reserved0, 36);
FPGAD_ABI_AT(fpgad_xfer_header, generation, 40);
/* The rules' line. */
FPGAD_ABI_AT(fpgad_xfer_header, card_memory, 64);
FPGAD_ABI_AT(fpgad_xfer_header, max_length, 72);
FPGAD_ABI_AT(fpgad_xfer_header, part_size, 80);
FPGAD_ABI_AT(fpgad_xfer_header, host_align, 88);
FPGAD_ABI_AT(fpgad_xfer_header, gpu_align, 92);
FPGAD_ABI_AT(fpgad_xfer_header, max_timeout_ms, 96);
/* The client's line. */
FPGAD_ABI_AT(fpgad_xfer_header, sq_tail, 128);
FPGAD_ABI_AT(fpgad_xfer_header, cq_head, 132);
FPGAD_ABI_AT(fpgad_xfer_header, cli_waiting, 136);
/* fpgad's line. */
FPGAD_ABI_AT(fpgad_xfer_header, sq_head, 192);
FPGAD_ABI_AT(fpgad_xfer_header, cq_tail, 196);
FPGAD_ABI_AT(fpgad_xfer_header, srv_waiting, 200);
FPGAD_ABI_AT(fpgad_xfer_header, cq_futex, 204);
FPGAD_ABI_AT(fpgad_xfer_header, events, 208);
FPGAD_ABI_AT(fpgad_xfer_header, bad_positions, 212);
FPGAD_ABI_AT(fpgad_xfer_header, taken, 216);
FPGAD_ABI_AT(fpgad_xfer_header, refused, 224);

#ifdef __cplusplus
}
#endif

#endif
