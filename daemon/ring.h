/* SPDX-License-Identifier: MIT */
/*
 * ring.h - who owns each slot of one channel's ring.
 *
 * Every slot is in exactly one state, and the state says who owns it:
 *
 *   FREE  (daemon) --arm--> DMA (card) --complete ok--> READY (published)
 *   READY --hold--> HELD (one or more readers) --last release--> FREE
 *
 * and besides:
 *
 *   DMA   --complete failed / cancel--> FREE   (recycled, never delivered)
 *   READY --drop (drop-oldest policy)--> FREE  (counted as a drop)
 *   READY --every reader skipped or was revoked--> FREE
 *   HELD  --last holder released, readers still pending--> READY
 *
 * Readers.  A READY slot is handed to zero or more readers (one per client
 * frame ring it was published into, ring_publish()).  Each reader is
 * "pending" until the daemon learns what it did with the frame: it claimed
 * it (ring_hold: pending -> holder), gave it up unclaimed (ring_skip), or
 * the daemon took it back from it (ring_revoke).  A holder ends with
 * ring_release().  The slot is HELD while it has holders, and goes back to
 * FREE when it has neither holders nor pending readers.  Only a slot with
 * no holders and no pending readers may be taken back without asking
 * anyone (ring_drop_oldest, and the reclaim inside ring_arm); a READY slot
 * with pending readers must first be revoked from each of them.
 *
 * A HELD slot is never handed to DMA.  Illegal transitions are refused
 * with -EINVAL (-EBUSY where the slot is merely in use) and change
 * nothing.  Every call is O(slots) at most and nothing is allocated after
 * ring_create().  A ring has one user thread (the channel's streaming
 * thread) and no lock.
 *
 * Last owner.  Each slot records where its valid data was last written
 * (card, GPU, host) and in which locations a current copy exists, so that
 * ring_sync() can say whether making the frame available somewhere needs
 * a copy at all.
 */
#ifndef FPGAD_RING_H
#define FPGAD_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define RING_MAX_SLOTS 65536u

enum ring_slot_state {
	RING_SLOT_FREE,		/* the daemon's; may be armed */
	RING_SLOT_DMA,		/* the card's; a transfer is queued */
	RING_SLOT_READY,	/* a frame, published, nobody holds it */
	RING_SLOT_HELD,		/* readers hold it; never written */
};

enum ring_owner {
	RING_OWNER_NONE,	/* no valid data */
	RING_OWNER_CARD,	/* written by the card, location not told */
	RING_OWNER_GPU,		/* valid data in GPU memory */
	RING_OWNER_HOST,	/* valid data in host memory */
};

#define RING_OWNER_COUNT 4

struct ring;

struct ring_slot_info {
	enum ring_slot_state state;
	uint32_t holders;	/* readers holding it */
	uint32_t pending;	/* readers handed it, not decided yet */
	uint64_t seq;		/* frame sequence number (READY, HELD) */
	uint64_t order;		/* publish order, larger = newer */
	enum ring_owner owner;	/* last writer */
	unsigned valid;		/* 1u << owner per place with a copy */
};

struct ring_stats {
	uint64_t frames;	/* transfers completed and published */
	uint64_t drops;		/* frames taken back undelivered */
	uint64_t stalls;	/* times arming ran out of slots (episodes) */
	uint64_t errors;	/* transfers that failed */
	uint64_t cancels;	/* transfers cancelled (reset, shutdown) */
};

/* A ring of @n_slots (1..RING_MAX_SLOTS) FREE slots under @policy. */
int ring_create(unsigned n_slots, enum ring_policy policy,
		struct ring **ret_ring);
/* Accepts NULL. */
void ring_destroy(struct ring *r);

unsigned ring_slots(const struct ring *r);
enum ring_policy ring_get_policy(const struct ring *r);
void ring_set_policy(struct ring *r, enum ring_policy policy);
/*
 * Where a completed transfer's data lies (RING_OWNER_GPU for gpudirect,
 * RING_OWNER_HOST for host and bounce staging).  Default RING_OWNER_CARD,
 * for which every sync reports a copy.
 */
int ring_set_dma_target(struct ring *r, enum ring_owner where);

/*
 * Hand a FREE slot to the card (FREE -> DMA) and return its index.  When
 * none is FREE: under POLICY_DROP_OLDEST the oldest READY slot without
 * holders or pending readers is taken back (a drop) and armed; if the
 * oldest READY slot still has pending readers, -EBUSY (revoke it from
 * them first, see ring_oldest_ready()); otherwise -EAGAIN, and the first
 * refusal after a success counts one stall.
 */
int ring_arm(struct ring *r);

/*
 * The card finished @slot (DMA -> READY with @seq, a frame), or failed
 * (@ok false: DMA -> FREE, an error, never delivered).
 */
int ring_complete(struct ring *r, unsigned slot, bool ok, uint64_t seq);
/* A queued transfer was cancelled: DMA -> FREE, not an error. */
int ring_cancel(struct ring *r, unsigned slot);

/* @slot (READY) was handed to one more reader: pending + 1. */
int ring_publish(struct ring *r, unsigned slot);
/*
 * A reader holds @slot: READY or HELD -> HELD, holders + 1; a pending
 * reader, if any, becomes the holder.
 */
int ring_hold(struct ring *r, unsigned slot);
/*
 * A holder let go (HELD only): holders - 1; with no holders left the
 * slot is FREE, or READY while readers are still pending.
 */
int ring_release(struct ring *r, unsigned slot);
/*
 * A pending reader gave the frame up unclaimed (skipped it, or died):
 * pending - 1; a READY slot with no pending reader left is FREE.
 */
int ring_skip(struct ring *r, unsigned slot);
/*
 * The daemon took the frame back from a pending reader: like ring_skip,
 * and when that frees the slot it counts as a drop.
 */
int ring_revoke(struct ring *r, unsigned slot);

/* The oldest READY slot (holders == 0), or -ENOENT. */
int ring_oldest_ready(const struct ring *r);
/*
 * Take back the oldest READY slot (READY -> FREE, a drop) and return it;
 * -ENOENT when none is READY, -EBUSY when it still has pending readers.
 */
int ring_drop_oldest(struct ring *r);

/*
 * Make @slot's data valid at @to: *ret_copy is true when a copy is
 * needed (the data is not there yet); the record then says @to holds a
 * current copy and was the last writer.  -EBUSY while the card owns the
 * slot, -ENODATA when it holds no valid data.
 */
int ring_sync(struct ring *r, unsigned slot, enum ring_owner to,
	      bool *ret_copy);
/* @who wrote @slot in place: the only current copy is now at @who. */
int ring_note_write(struct ring *r, unsigned slot, enum ring_owner who);

int ring_slot_info(const struct ring *r, unsigned slot,
		   struct ring_slot_info *ret_info);
/* Number of slots in @state. */
unsigned ring_count(const struct ring *r, enum ring_slot_state state);
void ring_get_stats(const struct ring *r, struct ring_stats *ret_stats);

const char *ring_slot_state_name(enum ring_slot_state s);
const char *ring_owner_name(enum ring_owner o);

#endif
