// SPDX-License-Identifier: MIT
/* slots.c - the slot ownership state machine of one ring (see slots.h). */
#include <errno.h>
#include <stdlib.h>

#include "channel/slots.h"

struct slot {
	enum slot_state state;
	uint32_t holders;
	uint32_t pending;
	uint64_t seq;
	uint64_t order;
};

struct slots {
	unsigned n_slots;
	unsigned cursor;	/* where the next FREE search starts */
	bool stalled;		/* slots_stall() since the last slot armed */
	uint64_t next_order;
	unsigned count[SLOT_HELD + 1];
	struct slots_stats stats;
	struct slot slots[];
};

static void set_state(struct slots *r, struct slot *s,
		      enum slot_state st)
{
	r->count[s->state]--;
	r->count[st]++;
	s->state = st;
}

static void to_free(struct slots *r, struct slot *s)
{
	s->holders = 0;
	s->pending = 0;
	set_state(r, s, SLOT_FREE);
}

static struct slot *slot_get(const struct slots *r, unsigned slot)
{
	if (!r || slot >= r->n_slots)
		return NULL;
	return (struct slot *)&r->slots[slot];
}

int slots_create(unsigned n_slots, struct slots **ret_slots)
{
	struct slots *r;

	if (n_slots == 0 || n_slots > SLOTS_MAX)
		return -EINVAL;
	r = calloc(1, sizeof(*r) + (size_t)n_slots * sizeof(r->slots[0]));
	if (!r)
		return -ENOMEM;
	r->n_slots = n_slots;
	r->next_order = 1;
	r->count[SLOT_FREE] = n_slots;
	for (unsigned i = 0; i < n_slots; i++)
		r->slots[i].state = SLOT_FREE;
	*ret_slots = r;
	return 0;
}

void slots_destroy(struct slots *r)
{
	free(r);
}

/* Oldest READY slot, pending readers or not; NULL if none. */
static struct slot *oldest_ready(const struct slots *r)
{
	const struct slot *best = NULL;

	if (r->count[SLOT_READY] == 0)
		return NULL;
	for (unsigned i = 0; i < r->n_slots; i++) {
		const struct slot *s = &r->slots[i];

		if (s->state == SLOT_READY &&
		    (!best || s->order < best->order))
			best = s;
	}
	return (struct slot *)best;
}

int slots_oldest_ready(const struct slots *r)
{
	const struct slot *s = oldest_ready(r);

	return s ? (int)(s - r->slots) : -ENOENT;
}

int slots_drop(struct slots *r, unsigned slot)
{
	struct slot *s = slot_get(r, slot);

	if (!s || s->state != SLOT_READY)
		return -EINVAL;
	if (s->pending > 0)
		return -EBUSY;
	to_free(r, s);
	r->stats.drops++;
	return 0;
}

int slots_arm(struct slots *r)
{
	struct slot *s = NULL;
	unsigned i;

	if (r->count[SLOT_FREE] > 0) {
		for (unsigned n = 0; n < r->n_slots; n++) {
			i = (r->cursor + n) % r->n_slots;
			if (r->slots[i].state == SLOT_FREE) {
				s = &r->slots[i];
				break;
			}
		}
	}
	if (!s)
		return -EAGAIN;
	i = (unsigned)(s - r->slots);
	r->stalled = false;
	r->cursor = (i + 1) % r->n_slots;
	s->seq = 0;
	s->order = 0;
	set_state(r, s, SLOT_DMA);
	return (int)i;
}

void slots_stall(struct slots *r)
{
	if (!r->stalled)
		r->stats.stalls++;
	r->stalled = true;
}

int slots_complete(struct slots *r, unsigned slot, bool ok, uint64_t seq)
{
	struct slot *s = slot_get(r, slot);

	if (!s || s->state != SLOT_DMA)
		return -EINVAL;
	if (!ok) {
		to_free(r, s);
		r->stats.errors++;
		return 0;
	}
	s->seq = seq;
	s->order = r->next_order++;
	s->holders = 0;
	s->pending = 0;
	set_state(r, s, SLOT_READY);
	r->stats.frames++;
	return 0;
}

int slots_cancel(struct slots *r, unsigned slot)
{
	struct slot *s = slot_get(r, slot);

	if (!s || s->state != SLOT_DMA)
		return -EINVAL;
	to_free(r, s);
	r->stats.cancels++;
	return 0;
}

/* holders + pending must stay representable. */
static bool readers_full(const struct slot *s)
{
	return (uint64_t)s->holders + s->pending >= UINT32_MAX;
}

int slots_publish(struct slots *r, unsigned slot)
{
	struct slot *s = slot_get(r, slot);

	if (!s || s->state != SLOT_READY)
		return -EINVAL;
	if (readers_full(s))
		return -EOVERFLOW;
	s->pending++;
	return 0;
}

int slots_hold(struct slots *r, unsigned slot)
{
	struct slot *s = slot_get(r, slot);

	if (!s || (s->state != SLOT_READY && s->state != SLOT_HELD))
		return -EINVAL;
	if (s->pending > 0) {
		s->pending--;
	} else if (readers_full(s)) {
		return -EOVERFLOW;
	}
	s->holders++;
	if (s->state != SLOT_HELD)
		set_state(r, s, SLOT_HELD);
	return 0;
}

int slots_release(struct slots *r, unsigned slot)
{
	struct slot *s = slot_get(r, slot);

	if (!s || s->state != SLOT_HELD || s->holders == 0)
		return -EINVAL;
	if (--s->holders > 0)
		return 0;
	if (s->pending > 0)
		set_state(r, s, SLOT_READY);
	else
		to_free(r, s);
	return 0;
}

static int unpend(struct slots *r, unsigned slot, bool revoked)
{
	struct slot *s = slot_get(r, slot);

	if (!s || (s->state != SLOT_READY && s->state != SLOT_HELD) ||
	    s->pending == 0)
		return -EINVAL;
	s->pending--;
	if (s->state == SLOT_READY && s->pending == 0) {
		to_free(r, s);
		if (revoked)
			r->stats.drops++;
	}
	return 0;
}

int slots_skip(struct slots *r, unsigned slot)
{
	return unpend(r, slot, false);
}

int slots_revoke(struct slots *r, unsigned slot)
{
	return unpend(r, slot, true);
}

void slots_let_go(struct slots *r, uint8_t *held, unsigned slot)
{
	if (held[slot]) {
		held[slot] = 0;
		slots_release(r, slot);
	} else {
		slots_skip(r, slot);
	}
}

void slots_held_by(struct slots *r, uint8_t *held, unsigned slot)
{
	if (!held[slot]) {
		held[slot] = 1;
		slots_hold(r, slot);
	}
}

int slots_info(const struct slots *r, unsigned slot,
	       struct slot_info *ret_info)
{
	const struct slot *s = slot_get(r, slot);

	if (!s)
		return -EINVAL;
	*ret_info = (struct slot_info){
		.state = s->state,
		.holders = s->holders,
		.pending = s->pending,
		.seq = s->seq,
		.order = s->order,
	};
	return 0;
}

unsigned slots_count(const struct slots *r, enum slot_state state)
{
	if ((unsigned)state > SLOT_HELD)
		return 0;
	return r->count[state];
}

void slots_get_stats(const struct slots *r, struct slots_stats *ret_stats)
{
	*ret_stats = r->stats;
}

const char *slot_state_name(enum slot_state s)
{
	static const char *const names[] = { "free", "dma", "ready", "held" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

