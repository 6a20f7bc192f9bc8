/* SPDX-License-Identifier: MIT */
/*
 * roce_rx.h - frames from RoCE completions: what fpgad decides when the
 * NIC says a WRITE with Immediate arrived, with no verbs and no locks, so
 * that tests drive it with a fake verbs layer (roce_rx_ops).
 *
 * The NIC writes the sender's pages into a LANDING ring (pages of
 * roce_layout's stride, in fpgad's memory); the sender has no
 * backpressure, so the landing ring, not the consumers' ring, is what it
 * writes.  At each WRITE with Immediate fpgad checks the frame in its
 * landing page and copies it into the slot armed for it (fpgad chooses
 * the slot, as on the UDP path; a slot a lessee holds is never armed, so
 * never written).  Verbs show no packet to the receiver, so a frame is
 * good only when
 *   - the immediate's page is one of the ring's, and its PSN[19:0] is the
 *     metadata block's;
 *   - the metadata block was written (its first 8 bytes no longer hold the
 *     page's canary) and its byte count is from 1 to frame_size;
 *   - the frame's first PSN (the metadata's PSN less the data packets,
 *     ceil(bytes / payload)) follows the previous frame's immediate: a gap
 *     is lost packets (a lost immediate shows here), going back is a late
 *     or replayed frame;
 *   - its frame number is not behind the last one's (16 bits, as HSB's);
 *   - no payload-sized chunk of the page still starts with the page's
 *     canary, a random 64-bit word written at each chunk's start before
 *     the page went back to the sender: such a chunk's packet was lost;
 *   - the page does not hold a newer frame than the immediate's (the
 *     sender came back to it before fpgad took this one: overrun, and the
 *     PSN count starts over);
 *   - the sender did not come back to the page while fpgad copied it
 *     (overrun): the metadata block and each chunk's first bytes are
 *     the same after the copy as when checked (the landing page against
 *     itself: the slot may be GPU memory), and no completion queued
 *     after this one is for its page or pages - 1 frames ahead of it.
 * Anything else is counted and the frame is never handed on; its slot
 * takes the next frame.  The page gets new canaries after each frame,
 * unless the sender may be back at it (lapped): new canaries would tear
 * its next frame, which then cannot be checked and is counted as overrun.
 *
 * Not caught: a packet of an older frame arriving late, after the page's
 * new canaries were written, into a chunk whose own packet is then lost:
 * the chunk holds the old frame's bytes, not the canary.  Such a packet
 * must outlive pages - 1 frames in the network (README).
 */
#ifndef FPGAD_NET_ROCE_RX_H
#define FPGAD_NET_ROCE_RX_H

#include <stdbool.h>
#include <stdint.h>

#include "device/net/net_frame.h"
#include "device/net/roce_wire.h"

#define ROCE_RX_BATCH 64	/* completions polled and looked ahead at once */

/* One receive completion, as the verbs wrapper gives it. */
struct roce_wc {
	int status;		/* 0, or -EIO for an error completion */
	bool has_imm;		/* a WRITE with Immediate */
	uint32_t imm;		/* host order */
};

struct roce_rx_ops {
	/* Up to @max completions into @wc: how many, or -errno. */
	int (*poll)(void *user, struct roce_wc *wc, unsigned max);
	/* Post @n receive requests again (each completion consumed one). */
	int (*post_recv)(void *user, unsigned n);
	/* The next armed slot, or -EAGAIN when there is none. */
	int (*take)(void *user, struct net_slot *ret_slot);
	/* A good frame copied into @d->cookie's slot. */
	void (*done)(void *user, const struct net_frame_done *d);
};

/*
 * How roce_rx reaches a landing ring it cannot address (one in GPU
 * memory): the few bytes it checks, the canaries it writes and the frame
 * it copies out.  Offsets are from the ring's start.  Each returns 0 or
 * -errno.  The calls may be queued, done in the order made: a get's
 * destination is filled only once wait returns 0 (wait NULL: each call
 * is done when it returns).  A put's source may be reused at once.
 */
struct roce_landing_io {
	/* @n pieces of @width bytes at @off + i * @pitch, one after another into @dst. */
	int (*get)(void *user, void *dst, uint64_t off, uint64_t pitch,
		   size_t width, size_t n);
	/* @n pieces of @width bytes from @src to @off + i * @pitch. */
	int (*put)(void *user, uint64_t off, uint64_t pitch, const void *src,
		   size_t width, size_t n);
	/* @len bytes at @off into the slot at @dst. */
	int (*copy_out)(void *user, void *dst, uint64_t off, size_t len);
	/* Everything queued done: 0, or -errno when any of it failed. */
	int (*wait)(void *user);
};

struct roce_rx_cfg {
	struct sender_layout layout;	/* of the landing ring */
	uint32_t payload;		/* bytes per WRITE: the path MTU */
	uint64_t frame_size;		/* metadata at roundup(frame_size, 128) */
	uint64_t slot_size;
	/* NULL: the landing ring is host memory, read in place. */
	const struct roce_landing_io *io;
	void *io_user;
};

struct roce_rx {
	struct roce_rx_cfg cfg;
	unsigned char *landing;		/* pages * stride bytes */
	struct roce_page {
		uint64_t canary;	/* at each chunk's start */
		bool stale;		/* lapped: no new canaries */
	} *page;
	uint64_t canary_state;
	uint64_t *scratch;		/* a page's chunk starts: chunks + 1 */
	uint64_t *before;		/* ... as checked, before the copy */
	uint32_t arm_page;		/* armed since the last io wait, */
	bool arm_queued;		/* ... if any */
	const struct roce_landing_io *io;
	void *io_user;
	struct source_counters cnt;

	bool synced;
	uint32_t expect_psn;		/* the next frame's first PSN */
	struct roce_frame_numbers numbers;
	bool have_slot;
	struct net_slot slot;

	struct roce_wc wc[ROCE_RX_BATCH];	/* polled, not yet handled */
	unsigned wc_n;
};

/*
 * 0, or -ENOMEM; @landing is the caller's and outlives @rx (with
 * cfg->io, it is only passed on to cfg->io's calls as their offset 0).
 */
int roce_rx_init(struct roce_rx *rx, const struct roce_rx_cfg *cfg,
		 unsigned char *landing);
void roce_rx_free(struct roce_rx *rx);

/*
 * The host bytes one wait's worth of roce_landing_io calls for @cfg
 * passes at most (a queueing io stages them): a page's canaries, then a
 * page's metadata and chunk starts.
 */
size_t roce_rx_io_staging(const struct roce_rx_cfg *cfg);

/* A new ring (a new R_Key): the sender starts over; every page re-armed. */
void roce_rx_restart(struct roce_rx *rx);

/* Where the metadata block of a page lies. */
uint64_t roce_rx_meta_offset(uint64_t frame_size);

/*
 * Take what the NIC completed: each WRITE with Immediate checked, copied
 * into an armed slot or counted, its receive request posted again.
 * Returns the good frames handed to ops->done, or -errno from poll.
 */
int roce_rx_drain(struct roce_rx *rx, const struct roce_rx_ops *ops,
		  void *user, uint64_t now_ns);

/* Give back the slot held for the next frame (a reset), as net_frame. */
bool roce_rx_release(struct roce_rx *rx, struct net_slot *ret_slot);

#endif
