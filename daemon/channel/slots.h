/* SPDX-License-Identifier: MIT */
/*
 * slots.h - who owns each slot of one channel's ring of c2h buffers.
 *
 * Every slot is in exactly one state, and the state says who owns it:
 *
 *   FREE  (daemon) --arm--> DMA (card) --complete ok--> READY (published)
 *   READY --hold--> HELD (one or more readers) --last release--> FREE
 *
 * and besides:
 *
 *   DMA   --complete failed / cancel--> FREE   (recycled, never delivered)
 *   READY --drop--> FREE                       (counted as a drop)
 *   READY --every reader skipped or was revoked--> FREE
 *   HELD  --last holder released, readers still pending--> READY
 *
 * Readers.  A READY slot is handed to zero or more readers (one per client
 * frame ring it was published into, slots_publish()).  Each reader is
 * "pending" until the daemon learns what it did with the frame: it claimed
 * it (slots_hold: pending -> holder), gave it up unclaimed (slots_skip),
 * or the daemon took it back from it (slots_revoke).  A holder ends with
 * slots_release().  The slot is HELD while it has holders, and goes back
 * to FREE when it has neither holders nor pending readers.  Only a slot
 * with no holders and no pending readers may be dropped without asking
 * anyone; a READY slot with pending readers must first be revoked from
 * each of them.  When to drop is the channel's policy (policy.c).
 *
 * A HELD slot is never handed to DMA.  Illegal transitions are refused
 * with -EINVAL (-EBUSY where the slot is merely in use) and change
 * nothing.  Every call is O(slots) at most and nothing is allocated after
 * slots_create().  A ring has one user thread (the channel's streaming
 * thread) and no lock.
 */
#ifndef FPGAD_SLOTS_H
#define FPGAD_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

#define SLOTS_MAX 65536u

enum slot_state {
	SLOT_FREE,		/* the daemon's; may be armed */
	SLOT_DMA,		/* the card's; a transfer is queued */
	SLOT_READY,		/* a frame, published, nobody holds it */
	SLOT_HELD,		/* readers hold it; never written */
};

struct slots;

struct slot_info {
	enum slot_state state;
	uint32_t holders;	/* readers holding it */
	uint32_t pending;	/* readers handed it, not decided yet */
	uint64_t seq;		/* frame sequence number (READY, HELD) */
	uint64_t order;		/* publish order, larger = newer */
};

struct slots_stats {
	uint64_t frames;	/* transfers completed and published */
	uint64_t drops;		/* frames taken back undelivered */
	uint64_t stalls;	/* times the card waited for a slot (block; episodes) */
	uint64_t errors;	/* transfers that failed */
	uint64_t cancels;	/* transfers cancelled (reset, shutdown) */
};

/* A ring of @n_slots (1..SLOTS_MAX) FREE slots. */
int slots_create(unsigned n_slots, struct slots **ret_slots);
/* Accepts NULL. */
void slots_destroy(struct slots *r);

/*
 * Hand a FREE slot to the card (FREE -> DMA) and return its index;
 * -EAGAIN when none is FREE.  A refusal counts nothing: whether the card
 * now waits is the channel's policy (slots_stall).
 */
int slots_arm(struct slots *r);

/*
 * The card waits for a free slot (policy block, slots_arm refused): the
 * first call since the last slot armed counts one stall, the others none.
 */
void slots_stall(struct slots *r);

/*
 * The card finished @slot (DMA -> READY with @seq, a frame), or failed
 * (@ok false: DMA -> FREE, an error, never delivered).
 */
int slots_complete(struct slots *r, unsigned slot, bool ok, uint64_t seq);
/* A queued transfer was cancelled: DMA -> FREE, not an error. */
int slots_cancel(struct slots *r, unsigned slot);

/* @slot (READY) was handed to one more reader: pending + 1. */
int slots_publish(struct slots *r, unsigned slot);
/*
 * A reader holds @slot: READY or HELD -> HELD, holders + 1; a pending
 * reader, if any, becomes the holder.
 */
int slots_hold(struct slots *r, unsigned slot);
/*
 * A holder let go (HELD only): holders - 1; with no holders left the
 * slot is FREE, or READY while readers are still pending.
 */
int slots_release(struct slots *r, unsigned slot);
/*
 * A pending reader gave the frame up unclaimed (skipped it, or died):
 * pending - 1; a READY slot with no pending reader left is FREE.
 */
int slots_skip(struct slots *r, unsigned slot);
/*
 * The daemon took the frame back from a pending reader: like slots_skip,
 * and when that frees the slot it counts as a drop.
 */
int slots_revoke(struct slots *r, unsigned slot);

/*
 * One reader's (a lessee's) claims, kept in @held (one byte per slot, 1
 * while it holds the slot) so that a reader that goes away lets go of
 * exactly what it held.  slots_let_go: the reader is done with @slot
 * (releases it if held, else gives the unclaimed frame up);
 * slots_held_by: the reader was found holding @slot (counted once).
 */
void slots_let_go(struct slots *r, uint8_t *held, unsigned slot);
void slots_held_by(struct slots *r, uint8_t *held, unsigned slot);

/* The oldest READY slot (holders == 0), or -ENOENT. */
int slots_oldest_ready(const struct slots *r);
/*
 * Take back READY @slot that has no pending readers (READY -> FREE, a
 * drop); -EBUSY while readers are pending, -EINVAL if it is not READY.
 */
int slots_drop(struct slots *r, unsigned slot);

int slots_info(const struct slots *r, unsigned slot,
	       struct slot_info *ret_info);
/* Number of slots in @state. */
unsigned slots_count(const struct slots *r, enum slot_state state);
void slots_get_stats(const struct slots *r, struct slots_stats *ret_stats);

const char *slot_state_name(enum slot_state s);

#endif
