// SPDX-License-Identifier: MIT
/*
 * policy.c - what a c2h channel does when the card wants a buffer and no
 * slot is FREE (the channel's `policy`):
 *
 *   block        stop arming until a reader lets a slot go, each such
 *                episode counted as a stall (slots_stall).
 *   drop-oldest  take back the oldest ready frame no reader holds: from
 *                every lessee that has not claimed it (a revoke; one that
 *                claimed it keeps it), then the slot is FREE again, counted
 *                as a drop.  The newest ready frame is kept while the card
 *                still has work queued: taking back the only ready frame
 *                to queue one more transfer would hand a slow reader
 *                nothing, ever.
 *
 * Under drop-oldest a ring with nothing to take back (every frame held, or
 * the newest kept) waits too, but that is no stall: stalls exist under
 * block only.  Drops and stalls show in stats and as gaps in seq (a frame
 * published after a drop carries FPGAD_FRAME_DROPPED_BEFORE).
 */
#include <errno.h>

#include "channel/channel_impl.h"

/*
 * Take @slot (READY) back from each reader that has not claimed it.
 * Afterwards the slot is FREE (nobody had claimed it) or HELD.
 */
static void revoke_unclaimed(struct channel *ch, unsigned slot)
{
	for (struct lease *l = ch->leases; l; l = l->next) {
		int r;

		if (!frame_producer_slot_out(l->prod, slot))
			continue;
		r = frame_producer_revoke(l->prod, slot);
		if (r == 0) {
			slots_revoke(ch->slots, slot);
			atomic_fetch_add_explicit(&l->dropped, 1, memory_order_relaxed);
		}
		else if (r == -EALREADY)
			slots_let_go(ch->slots, l->held, slot);
		else if (r == -EBUSY)
			slots_held_by(ch->slots, l->held, slot);
	}
}

int policy_take_slot(struct channel *ch)
{
	int slot;

	while (ch->cfg.policy == POLICY_DROP_OLDEST &&
	       !slots_count(ch->slots, SLOT_FREE)) {
		slot = slots_oldest_ready(ch->slots);
		if (slot < 0 || slots_drop(ch->slots, (unsigned)slot) == 0)
			break;
		/* Readers have it: keep the newest while the card works. */
		if (ch->inflight && slots_count(ch->slots, SLOT_READY) <= 1)
			break;
		revoke_unclaimed(ch, (unsigned)slot);
	}
	slot = slots_arm(ch->slots);
	if (slot == -EAGAIN && ch->cfg.policy == POLICY_BLOCK)
		slots_stall(ch->slots);
	return slot;
}
