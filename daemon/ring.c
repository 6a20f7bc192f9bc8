// SPDX-License-Identifier: MIT
/* ring.c - the slot ownership state machine of one ring (see ring.h). */
#include <errno.h>
#include <stdlib.h>

#include "ring.h"

struct ring_slot {
	enum ring_slot_state state;
	uint32_t holders;
	uint32_t pending;
	uint64_t seq;
	uint64_t order;
	enum ring_owner owner;
	unsigned valid;
};

struct ring {
	unsigned n_slots;
	enum ring_policy policy;
	enum ring_owner dma_target;
	unsigned cursor;	/* where the next FREE search starts */
	bool stalled;		/* the last ring_arm() was refused */
	uint64_t next_order;
	unsigned count[RING_SLOT_HELD + 1];
	struct ring_stats stats;
	struct ring_slot slots[];
};

static bool owner_valid(enum ring_owner o)
{
	return (unsigned)o < RING_OWNER_COUNT;
}

static void set_state(struct ring *r, struct ring_slot *s,
		      enum ring_slot_state st)
{
	r->count[s->state]--;
	r->count[st]++;
	s->state = st;
}

static void to_free(struct ring *r, struct ring_slot *s)
{
	s->holders = 0;
	s->pending = 0;
	set_state(r, s, RING_SLOT_FREE);
}

static struct ring_slot *slot_get(const struct ring *r, unsigned slot)
{
	if (!r || slot >= r->n_slots)
		return NULL;
	return (struct ring_slot *)&r->slots[slot];
}

int ring_create(unsigned n_slots, enum ring_policy policy,
		struct ring **ret_ring)
{
	struct ring *r;

	if (n_slots == 0 || n_slots > RING_MAX_SLOTS)
		return -EINVAL;
	if (policy != POLICY_BLOCK && policy != POLICY_DROP_OLDEST)
		return -EINVAL;
	r = calloc(1, sizeof(*r) + (size_t)n_slots * sizeof(r->slots[0]));
	if (!r)
		return -ENOMEM;
	r->n_slots = n_slots;
	r->policy = policy;
	r->dma_target = RING_OWNER_CARD;
	r->next_order = 1;
	r->count[RING_SLOT_FREE] = n_slots;
	for (unsigned i = 0; i < n_slots; i++) {
		r->slots[i].state = RING_SLOT_FREE;
		r->slots[i].owner = RING_OWNER_NONE;
	}
	*ret_ring = r;
	return 0;
}

void ring_destroy(struct ring *r)
{
	free(r);
}

unsigned ring_slots(const struct ring *r)
{
	return r->n_slots;
}

enum ring_policy ring_get_policy(const struct ring *r)
{
	return r->policy;
}

void ring_set_policy(struct ring *r, enum ring_policy policy)
{
	if (policy == POLICY_BLOCK || policy == POLICY_DROP_OLDEST)
		r->policy = policy;
}

int ring_set_dma_target(struct ring *r, enum ring_owner where)
{
	if (!owner_valid(where) || where == RING_OWNER_NONE)
		return -EINVAL;
	r->dma_target = where;
	return 0;
}

/* Oldest READY slot, pending readers or not; NULL if none. */
static struct ring_slot *oldest_ready(const struct ring *r)
{
	const struct ring_slot *best = NULL;

	if (r->count[RING_SLOT_READY] == 0)
		return NULL;
	for (unsigned i = 0; i < r->n_slots; i++) {
		const struct ring_slot *s = &r->slots[i];

		if (s->state == RING_SLOT_READY &&
		    (!best || s->order < best->order))
			best = s;
	}
	return (struct ring_slot *)best;
}

int ring_oldest_ready(const struct ring *r)
{
	const struct ring_slot *s = oldest_ready(r);

	return s ? (int)(s - r->slots) : -ENOENT;
}

/* READY, no holders, no pending readers -> FREE, counted as a drop. */
static int drop_oldest(struct ring *r)
{
	struct ring_slot *s = oldest_ready(r);

	if (!s)
		return -ENOENT;
	if (s->pending > 0)
		return -EBUSY;
	to_free(r, s);
	r->stats.drops++;
	return (int)(s - r->slots);
}

int ring_drop_oldest(struct ring *r)
{
	return drop_oldest(r);
}

int ring_arm(struct ring *r)
{
	struct ring_slot *s = NULL;
	unsigned i;

	if (r->count[RING_SLOT_FREE] > 0) {
		for (unsigned n = 0; n < r->n_slots; n++) {
			i = (r->cursor + n) % r->n_slots;
			if (r->slots[i].state == RING_SLOT_FREE) {
				s = &r->slots[i];
				break;
			}
		}
	} else if (r->policy == POLICY_DROP_OLDEST) {
		int ret = drop_oldest(r);

		if (ret == -EBUSY)
			return -EBUSY;
		if (ret >= 0)
			s = &r->slots[ret];
	}
	if (!s) {
		if (!r->stalled)
			r->stats.stalls++;
		r->stalled = true;
		return -EAGAIN;
	}
	i = (unsigned)(s - r->slots);
	r->stalled = false;
	r->cursor = (i + 1) % r->n_slots;
	s->seq = 0;
	s->order = 0;
	set_state(r, s, RING_SLOT_DMA);
	return (int)i;
}

int ring_complete(struct ring *r, unsigned slot, bool ok, uint64_t seq)
{
	struct ring_slot *s = slot_get(r, slot);

	if (!s || s->state != RING_SLOT_DMA)
		return -EINVAL;
	if (!ok) {
		s->owner = RING_OWNER_NONE;
		s->valid = 0;
		to_free(r, s);
		r->stats.errors++;
		return 0;
	}
	s->seq = seq;
	s->order = r->next_order++;
	s->holders = 0;
	s->pending = 0;
	s->owner = r->dma_target;
	s->valid = 1u << r->dma_target;
	set_state(r, s, RING_SLOT_READY);
	r->stats.frames++;
	return 0;
}

int ring_cancel(struct ring *r, unsigned slot)
{
	struct ring_slot *s = slot_get(r, slot);

	if (!s || s->state != RING_SLOT_DMA)
		return -EINVAL;
	s->owner = RING_OWNER_NONE;
	s->valid = 0;
	to_free(r, s);
	r->stats.cancels++;
	return 0;
}

/* holders + pending must stay representable. */
static bool readers_full(const struct ring_slot *s)
{
	return (uint64_t)s->holders + s->pending >= UINT32_MAX;
}

int ring_publish(struct ring *r, unsigned slot)
{
	struct ring_slot *s = slot_get(r, slot);

	if (!s || s->state != RING_SLOT_READY)
		return -EINVAL;
	if (readers_full(s))
		return -EOVERFLOW;
	s->pending++;
	return 0;
}

int ring_hold(struct ring *r, unsigned slot)
{
	struct ring_slot *s = slot_get(r, slot);

	if (!s || (s->state != RING_SLOT_READY && s->state != RING_SLOT_HELD))
		return -EINVAL;
	if (s->pending > 0) {
		s->pending--;
	} else if (readers_full(s)) {
		return -EOVERFLOW;
	}
	s->holders++;
	if (s->state != RING_SLOT_HELD)
		set_state(r, s, RING_SLOT_HELD);
	return 0;
}

int ring_release(struct ring *r, unsigned slot)
{
	struct ring_slot *s = slot_get(r, slot);

	if (!s || s->state != RING_SLOT_HELD || s->holders == 0)
		return -EINVAL;
	if (--s->holders > 0)
		return 0;
	if (s->pending > 0)
		set_state(r, s, RING_SLOT_READY);
	else
		to_free(r, s);
	return 0;
}

static int unpend(struct ring *r, unsigned slot, bool revoked)
{
	struct ring_slot *s = slot_get(r, slot);

	if (!s || (s->state != RING_SLOT_READY && s->state != RING_SLOT_HELD) ||
	    s->pending == 0)
		return -EINVAL;
	s->pending--;
	if (s->state == RING_SLOT_READY && s->pending == 0) {
		to_free(r, s);
		if (revoked)
			r->stats.drops++;
	}
	return 0;
}

int ring_skip(struct ring *r, unsigned slot)
{
	return unpend(r, slot, false);
}

int ring_revoke(struct ring *r, unsigned slot)
{
	return unpend(r, slot, true);
}

int ring_sync(struct ring *r, unsigned slot, enum ring_owner to,
	      bool *ret_copy)
{
	struct ring_slot *s = slot_get(r, slot);
	bool copy;

	if (!s || !owner_valid(to) || to == RING_OWNER_NONE)
		return -EINVAL;
	if (s->state == RING_SLOT_DMA)
		return -EBUSY;
	if (s->owner == RING_OWNER_NONE || s->valid == 0)
		return -ENODATA;
	copy = !(s->valid & (1u << to));
	if (copy) {
		s->valid |= 1u << to;
		s->owner = to;
	}
	*ret_copy = copy;
	return 0;
}

int ring_note_write(struct ring *r, unsigned slot, enum ring_owner who)
{
	struct ring_slot *s = slot_get(r, slot);

	if (!s || !owner_valid(who) || who == RING_OWNER_NONE)
		return -EINVAL;
	if (s->state == RING_SLOT_DMA)
		return -EBUSY;
	s->owner = who;
	s->valid = 1u << who;
	return 0;
}

int ring_slot_info(const struct ring *r, unsigned slot,
		   struct ring_slot_info *ret_info)
{
	const struct ring_slot *s = slot_get(r, slot);

	if (!s)
		return -EINVAL;
	*ret_info = (struct ring_slot_info){
		.state = s->state,
		.holders = s->holders,
		.pending = s->pending,
		.seq = s->seq,
		.order = s->order,
		.owner = s->owner,
		.valid = s->valid,
	};
	return 0;
}

unsigned ring_count(const struct ring *r, enum ring_slot_state state)
{
	if ((unsigned)state > RING_SLOT_HELD)
		return 0;
	return r->count[state];
}

void ring_get_stats(const struct ring *r, struct ring_stats *ret_stats)
{
	*ret_stats = r->stats;
}

const char *ring_slot_state_name(enum ring_slot_state s)
{
	static const char *const names[] = { "free", "dma", "ready", "held" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *ring_owner_name(enum ring_owner o)
{
	static const char *const names[] = { "none", "card", "gpu", "host" };

	return owner_valid(o) ? names[o] : "?";
}
