// SPDX-License-Identifier: MIT
/* test_slots.c - the slot ownership state machine (daemon/channel/slots.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "channel/slots.h"

/* Deterministic pseudo-random numbers (xorshift64*). */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static struct slots *mkslots(unsigned n)
{
	struct slots *r = NULL;

	assert_int_equal(slots_create(n, &r), 0);
	assert_non_null(r);
	return r;
}

static struct slot_info info(const struct slots *r, unsigned slot)
{
	struct slot_info si;

	assert_int_equal(slots_info(r, slot, &si), 0);
	return si;
}

static struct slots_stats stats(const struct slots *r)
{
	struct slots_stats st;

	slots_get_stats(r, &st);
	return st;
}

/* Every slot in exactly one state: the per-state counts add up. */
static void check_counts(const struct slots *r)
{
	unsigned n[SLOT_HELD + 1] = { 0 };
	struct slot_info si;

	for (unsigned i = 0; slots_info(r, i, &si) == 0; i++) {
		assert_true(si.state <= SLOT_HELD);
		n[si.state]++;
		if (si.state == SLOT_HELD)
			assert_true(si.holders > 0);
		else
			assert_int_equal(si.holders, 0);
		if (si.state == SLOT_FREE || si.state == SLOT_DMA)
			assert_int_equal(si.pending, 0);
	}
	for (unsigned s = 0; s <= SLOT_HELD; s++)
		assert_int_equal(n[s], slots_count(r, s));
}

static void assert_same_slot(const struct slot_info *a,
			     const struct slot_info *b)
{
	assert_int_equal(a->state, b->state);
	assert_int_equal(a->holders, b->holders);
	assert_int_equal(a->pending, b->pending);
	assert_int_equal(a->seq, b->seq);
	assert_int_equal(a->order, b->order);
}

/* --- the transition table ------------------------------------------------ */

enum from {
	F_FREE,
	F_DMA,
	F_READY,	/* no reader yet */
	F_READY_P1,	/* one pending reader */
	F_READY_P2,
	F_HELD1,
	F_HELD1_P1,	/* one holder, one reader still pending */
	F_HELD2,
};

enum op {
	OP_ARM,
	OP_COMPLETE_OK,
	OP_COMPLETE_FAIL,
	OP_CANCEL,
	OP_PUBLISH,
	OP_HOLD,
	OP_RELEASE,
	OP_SKIP,
	OP_REVOKE,
	OP_DROP,
};

struct row {
	enum from from;
	enum op op;
	int ret;
	/* expected after success (on failure: unchanged) */
	enum slot_state to;
	uint32_t holders;
	uint32_t pending;
	/* expected counter deltas */
	unsigned frames, drops, stalls, errors, cancels;
};

#define FR SLOT_FREE
#define DM SLOT_DMA
#define RD SLOT_READY
#define HD SLOT_HELD

static const struct row rows[] = {
	/* FREE */
	{ F_FREE, OP_ARM, 0, DM, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_COMPLETE_OK, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_COMPLETE_FAIL, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_CANCEL, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_PUBLISH, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_HOLD, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_RELEASE, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_SKIP, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_REVOKE, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_FREE, OP_DROP, -EINVAL, FR, 0, 0, 0, 0, 0, 0, 0 },
	/* DMA */
	{ F_DMA, OP_ARM, -EAGAIN, DM, 0, 0, 0, 0, 0, 0, 0 },
	{ F_DMA, OP_COMPLETE_OK, 0, RD, 0, 0, 1, 0, 0, 0, 0 },
	{ F_DMA, OP_COMPLETE_FAIL, 0, FR, 0, 0, 0, 0, 0, 1, 0 },
	{ F_DMA, OP_CANCEL, 0, FR, 0, 0, 0, 0, 0, 0, 1 },
	{ F_DMA, OP_PUBLISH, -EINVAL, DM, 0, 0, 0, 0, 0, 0, 0 },
	{ F_DMA, OP_HOLD, -EINVAL, DM, 0, 0, 0, 0, 0, 0, 0 },
	{ F_DMA, OP_RELEASE, -EINVAL, DM, 0, 0, 0, 0, 0, 0, 0 },
	{ F_DMA, OP_SKIP, -EINVAL, DM, 0, 0, 0, 0, 0, 0, 0 },
	{ F_DMA, OP_REVOKE, -EINVAL, DM, 0, 0, 0, 0, 0, 0, 0 },
	{ F_DMA, OP_DROP, -EINVAL, DM, 0, 0, 0, 0, 0, 0, 0 },
	/* READY, no reader */
	{ F_READY, OP_ARM, -EAGAIN, RD, 0, 0, 0, 0, 0, 0, 0 },
	{ F_READY, OP_COMPLETE_OK, -EINVAL, RD, 0, 0, 0, 0, 0, 0, 0 },
	{ F_READY, OP_COMPLETE_FAIL, -EINVAL, RD, 0, 0, 0, 0, 0, 0, 0 },
	{ F_READY, OP_CANCEL, -EINVAL, RD, 0, 0, 0, 0, 0, 0, 0 },
	{ F_READY, OP_PUBLISH, 0, RD, 0, 1, 0, 0, 0, 0, 0 },
	{ F_READY, OP_HOLD, 0, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_READY, OP_RELEASE, -EINVAL, RD, 0, 0, 0, 0, 0, 0, 0 },
	{ F_READY, OP_SKIP, -EINVAL, RD, 0, 0, 0, 0, 0, 0, 0 },
	{ F_READY, OP_REVOKE, -EINVAL, RD, 0, 0, 0, 0, 0, 0, 0 },
	{ F_READY, OP_DROP, 0, FR, 0, 0, 0, 1, 0, 0, 0 },
	/* READY, one pending reader */
	{ F_READY_P1, OP_ARM, -EAGAIN, RD, 0, 1, 0, 0, 0, 0, 0 },
	{ F_READY_P1, OP_COMPLETE_OK, -EINVAL, RD, 0, 1, 0, 0, 0, 0, 0 },
	{ F_READY_P1, OP_CANCEL, -EINVAL, RD, 0, 1, 0, 0, 0, 0, 0 },
	{ F_READY_P1, OP_PUBLISH, 0, RD, 0, 2, 0, 0, 0, 0, 0 },
	{ F_READY_P1, OP_HOLD, 0, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_READY_P1, OP_RELEASE, -EINVAL, RD, 0, 1, 0, 0, 0, 0, 0 },
	{ F_READY_P1, OP_SKIP, 0, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_READY_P1, OP_REVOKE, 0, FR, 0, 0, 0, 1, 0, 0, 0 },
	{ F_READY_P1, OP_DROP, -EBUSY, RD, 0, 1, 0, 0, 0, 0, 0 },
	/* READY, two pending readers */
	{ F_READY_P2, OP_HOLD, 0, HD, 1, 1, 0, 0, 0, 0, 0 },
	{ F_READY_P2, OP_SKIP, 0, RD, 0, 1, 0, 0, 0, 0, 0 },
	{ F_READY_P2, OP_REVOKE, 0, RD, 0, 1, 0, 0, 0, 0, 0 },
	{ F_READY_P2, OP_RELEASE, -EINVAL, RD, 0, 2, 0, 0, 0, 0, 0 },
	/* HELD by one */
	{ F_HELD1, OP_ARM, -EAGAIN, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_COMPLETE_OK, -EINVAL, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_COMPLETE_FAIL, -EINVAL, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_CANCEL, -EINVAL, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_PUBLISH, -EINVAL, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_HOLD, 0, HD, 2, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_RELEASE, 0, FR, 0, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_SKIP, -EINVAL, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_REVOKE, -EINVAL, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1, OP_DROP, -EINVAL, HD, 1, 0, 0, 0, 0, 0, 0 },
	/* HELD by one, one reader pending */
	{ F_HELD1_P1, OP_ARM, -EAGAIN, HD, 1, 1, 0, 0, 0, 0, 0 },
	{ F_HELD1_P1, OP_PUBLISH, -EINVAL, HD, 1, 1, 0, 0, 0, 0, 0 },
	{ F_HELD1_P1, OP_HOLD, 0, HD, 2, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1_P1, OP_RELEASE, 0, RD, 0, 1, 0, 0, 0, 0, 0 },
	{ F_HELD1_P1, OP_SKIP, 0, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1_P1, OP_REVOKE, 0, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD1_P1, OP_DROP, -EINVAL, HD, 1, 1, 0, 0, 0, 0, 0 },
	/* HELD by two */
	{ F_HELD2, OP_RELEASE, 0, HD, 1, 0, 0, 0, 0, 0, 0 },
	{ F_HELD2, OP_HOLD, 0, HD, 3, 0, 0, 0, 0, 0, 0 },
	{ F_HELD2, OP_ARM, -EAGAIN, HD, 2, 0, 0, 0, 0, 0, 0 },
	{ F_HELD2, OP_SKIP, -EINVAL, HD, 2, 0, 0, 0, 0, 0, 0 },
};

static void bring(struct slots *r, enum from f)
{
	if (f == F_FREE)
		return;
	assert_int_equal(slots_arm(r), 0);
	if (f == F_DMA)
		return;
	assert_int_equal(slots_complete(r, 0, true, 42), 0);
	switch (f) {
	case F_READY_P2:
		assert_int_equal(slots_publish(r, 0), 0);
		/* fall through */
	case F_READY_P1:
		assert_int_equal(slots_publish(r, 0), 0);
		break;
	case F_HELD2:
		assert_int_equal(slots_hold(r, 0), 0);
		assert_int_equal(slots_hold(r, 0), 0);
		break;
	case F_HELD1:
		assert_int_equal(slots_hold(r, 0), 0);
		break;
	case F_HELD1_P1:
		assert_int_equal(slots_publish(r, 0), 0);
		assert_int_equal(slots_publish(r, 0), 0);
		assert_int_equal(slots_hold(r, 0), 0);
		break;
	default:
		break;
	}
}

static int apply(struct slots *r, enum op op, unsigned slot)
{
	switch (op) {
	case OP_ARM:
		return slots_arm(r);
	case OP_COMPLETE_OK:
		return slots_complete(r, slot, true, 7);
	case OP_COMPLETE_FAIL:
		return slots_complete(r, slot, false, 7);
	case OP_CANCEL:
		return slots_cancel(r, slot);
	case OP_PUBLISH:
		return slots_publish(r, slot);
	case OP_HOLD:
		return slots_hold(r, slot);
	case OP_RELEASE:
		return slots_release(r, slot);
	case OP_SKIP:
		return slots_skip(r, slot);
	case OP_REVOKE:
		return slots_revoke(r, slot);
	case OP_DROP:
		return slots_drop(r, slot);
	}
	return -ENOSYS;
}

static void test_transition_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *t = &rows[i];
		struct slots *r = mkslots(1);
		struct slot_info before, after;
		struct slots_stats s0, s1;
		int ret;

		bring(r, t->from);
		before = info(r, 0);
		s0 = stats(r);
		ret = apply(r, t->op, 0);
		after = info(r, 0);
		s1 = stats(r);
		if (ret != t->ret)
			fail_msg("row %zu: from %d op %d: got %d want %d", i,
				 t->from, t->op, ret, t->ret);
		if (ret < 0)
			assert_same_slot(&before, &after);
		assert_int_equal(after.state, t->to);
		assert_int_equal(after.holders, t->holders);
		assert_int_equal(after.pending, t->pending);
		assert_int_equal(s1.frames - s0.frames, t->frames);
		assert_int_equal(s1.drops - s0.drops, t->drops);
		assert_int_equal(s1.stalls - s0.stalls, t->stalls);
		assert_int_equal(s1.errors - s0.errors, t->errors);
		assert_int_equal(s1.cancels - s0.cancels, t->cancels);
		check_counts(r);
		slots_destroy(r);
	}
}

/* Every per-slot call refuses a slot index out of range and changes nothing. */
static void test_bad_slot(void **state)
{
	struct slots *r = mkslots(2);
	struct slot_info si;
	struct slots_stats s0 = stats(r), s1;

	(void)state;
	for (enum op op = OP_COMPLETE_OK; op <= OP_DROP; op++) {
		assert_int_equal(apply(r, op, 2), -EINVAL);
		assert_int_equal(apply(r, op, UINT32_MAX), -EINVAL);
	}
	assert_int_equal(slots_info(r, 2, &si), -EINVAL);
	s1 = stats(r);
	assert_memory_equal(&s0, &s1, sizeof(s0));
	assert_int_equal(slots_count(r, SLOT_FREE), 2);
	slots_destroy(r);
}

static void test_create(void **state)
{
	struct slots *r = (struct slots *)&r;	/* must stay untouched */

	(void)state;
	assert_int_equal(slots_create(0, &r), -EINVAL);
	assert_int_equal(slots_create(SLOTS_MAX + 1, &r), -EINVAL);
	assert_ptr_equal(r, (struct slots *)&r);
	slots_destroy(NULL);

	r = mkslots(SLOTS_MAX);
	assert_int_equal(slots_count(r, SLOT_FREE), SLOTS_MAX);
	slots_destroy(r);

	assert_string_equal(slot_state_name(SLOT_HELD), "held");
	assert_string_equal(slot_state_name((enum slot_state)9), "?");
}

/* Fan-out: a slot is FREE only when every reader is done with it. */
static void test_shared_readers(void **state)
{
	struct slots *r = mkslots(2);
	int s;

	(void)state;
	s = slots_arm(r);
	assert_true(s >= 0);
	assert_int_equal(slots_complete(r, s, true, 100), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(slots_publish(r, s), 0);
	assert_int_equal(info(r, s).pending, 3);

	/* Reader A claims, reader B claims, reader C skips. */
	assert_int_equal(slots_hold(r, s), 0);
	assert_int_equal(slots_hold(r, s), 0);
	assert_int_equal(info(r, s).state, SLOT_HELD);
	assert_int_equal(info(r, s).holders, 2);
	assert_int_equal(info(r, s).pending, 1);
	assert_int_equal(slots_skip(r, s), 0);
	assert_int_equal(info(r, s).pending, 0);

	/* A releases: still held by B, not armable, not droppable. */
	assert_int_equal(slots_release(r, s), 0);
	assert_int_equal(info(r, s).state, SLOT_HELD);
	assert_int_equal(info(r, s).holders, 1);
	assert_int_equal(slots_drop(r, (unsigned)s), -EINVAL);
	assert_int_equal(slots_oldest_ready(r), -ENOENT);
	/* The other slot is armed; then nothing is left to arm. */
	assert_int_equal(slots_arm(r), 1 - s);
	assert_int_equal(slots_arm(r), -EAGAIN);

	/* B releases: FREE. */
	assert_int_equal(slots_release(r, s), 0);
	assert_int_equal(info(r, s).state, SLOT_FREE);
	assert_int_equal(slots_release(r, s), -EINVAL);
	assert_int_equal(slots_arm(r), s);
	check_counts(r);

	/*
	 * A holder lets go while another reader has not decided: the frame
	 * is READY again and may be taken back from that reader.
	 */
	assert_int_equal(slots_complete(r, s, true, 101), 0);
	assert_int_equal(slots_publish(r, s), 0);
	assert_int_equal(slots_publish(r, s), 0);
	assert_int_equal(slots_hold(r, s), 0);
	assert_int_equal(slots_release(r, s), 0);
	assert_int_equal(info(r, s).state, SLOT_READY);
	assert_int_equal(info(r, s).pending, 1);
	assert_int_equal(slots_oldest_ready(r), s);
	assert_int_equal(slots_revoke(r, s), 0);
	assert_int_equal(info(r, s).state, SLOT_FREE);
	assert_int_equal(stats(r).drops, 1);
	check_counts(r);
	slots_destroy(r);
}

/* What block does at the slot level (policy.c): arm, else wait, a stall. */
static int arm_blocking(struct slots *r)
{
	int s = slots_arm(r);

	if (s == -EAGAIN)
		slots_stall(r);
	return s;
}

static void test_block_stalls(void **state)
{
	struct slots *r = mkslots(4);
	int s[4];

	(void)state;
	for (int i = 0; i < 4; i++) {
		s[i] = arm_blocking(r);
		assert_int_equal(s[i], i);
	}
	assert_int_equal(stats(r).stalls, 0);
	assert_int_equal(arm_blocking(r), -EAGAIN);
	assert_int_equal(stats(r).stalls, 1);
	/* Refusals in a row are one stall. */
	assert_int_equal(arm_blocking(r), -EAGAIN);
	assert_int_equal(stats(r).stalls, 1);

	/* Completed, unread frames are not taken back under block. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(slots_complete(r, s[i], true, (uint64_t)i), 0);
	assert_int_equal(arm_blocking(r), -EAGAIN);
	assert_int_equal(stats(r).stalls, 1);
	assert_int_equal(stats(r).drops, 0);
	assert_int_equal(slots_count(r, SLOT_READY), 4);

	assert_int_equal(slots_hold(r, s[2]), 0);
	assert_int_equal(slots_release(r, s[2]), 0);
	assert_int_equal(arm_blocking(r), s[2]);
	assert_int_equal(arm_blocking(r), -EAGAIN);
	assert_int_equal(stats(r).stalls, 2);
	assert_int_equal(stats(r).frames, 4);
	check_counts(r);
	slots_destroy(r);
}

/*
 * What drop-oldest does at the slot level (policy.c adds the revoking):
 * arm, else drop the oldest READY slot nobody is pending on and arm it.
 */
static int arm_dropping(struct slots *r)
{
	int o;

	if (slots_count(r, SLOT_FREE) == 0 &&
	    (o = slots_oldest_ready(r)) >= 0) {
		o = slots_drop(r, (unsigned)o);
		if (o < 0)
			return o;
	}
	return slots_arm(r);
}

/* Arming goes round the ring, and dropping takes READY slots in order. */
static void test_drop_oldest_order(void **state)
{
	struct slots *r = mkslots(4);
	int order[4] = { 2, 0, 3, 1 };

	(void)state;
	for (int i = 0; i < 4; i++)
		assert_int_equal(slots_arm(r), i);
	/* Complete out of order: publish order is completion order. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(slots_complete(r, order[i], true,
					       (uint64_t)(10 + i)), 0);
	assert_int_equal(slots_oldest_ready(r), 2);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(arm_dropping(r), order[i]);
		assert_int_equal(stats(r).drops, (uint64_t)i + 1);
	}
	assert_int_equal(slots_oldest_ready(r), -ENOENT);
	assert_int_equal(arm_dropping(r), -EAGAIN);
	/* Nothing to drop: the ring waits, but stalls are block's only. */
	assert_int_equal(stats(r).stalls, 0);

	/* Explicit drop-oldest, and the reclaim refused while readers wait. */
	for (int i = 0; i < 4; i++)
		assert_int_equal(slots_complete(r, order[i], true, 20), 0);
	assert_int_equal(slots_publish(r, order[0]), 0);
	assert_int_equal(slots_drop(r, order[0]), -EBUSY);
	assert_int_equal(arm_dropping(r), -EBUSY);
	assert_int_equal(slots_revoke(r, order[0]), 0);
	assert_int_equal(slots_drop(r, order[1]), 0);
	assert_int_equal(slots_arm(r), order[0]);
	assert_int_equal(slots_arm(r), order[1]);
	check_counts(r);
	slots_destroy(r);
}

/*
 * Drive many frames through a drop-oldest ring while some slots are held
 * for a long time and others come and go: no held slot is ever armed.
 */
static void test_drop_oldest_never_takes_held(void **state)
{
	enum { N = 8, FRAMES = 200000 };
	struct slots *r = mkslots(N);
	unsigned held[N] = { 0 };	/* holders per slot, the model */
	uint64_t seed = 0x9e3779b97f4a7c15ull, seq = 0;
	unsigned armed[N], n_armed = 0;

	(void)state;
	/* Slots 1, 4 and 6 are held for the whole run (6 by two readers). */
	for (int i = 0; i < N; i++)
		assert_int_equal(slots_arm(r), i);
	for (int i = 0; i < N; i++)
		assert_int_equal(slots_complete(r, i, true, seq++), 0);
	assert_int_equal(slots_hold(r, 1), 0);
	assert_int_equal(slots_hold(r, 4), 0);
	assert_int_equal(slots_hold(r, 6), 0);
	assert_int_equal(slots_hold(r, 6), 0);
	held[1] = held[4] = 1;
	held[6] = 2;

	for (unsigned f = 0; f < FRAMES; f++) {
		uint64_t x = rng_next(&seed);
		int s = arm_dropping(r);

		if (s >= 0) {
			assert_true(s < N);
			assert_int_equal(held[s], 0);
			armed[n_armed++] = (unsigned)s;
		} else {
			assert_int_equal(s, -EAGAIN);
		}
		/* Complete the oldest armed one (or fail it now and then). */
		if (n_armed && (x & 3) != 0) {
			unsigned c = armed[0];

			memmove(armed, armed + 1, --n_armed * sizeof(armed[0]));
			assert_int_equal(slots_complete(r, c, (x & 0xff) != 1,
						       seq++), 0);
		}
		/* Sometimes a reader takes a READY frame for a while. */
		if ((x >> 8) % 5 == 0) {
			int o = slots_oldest_ready(r);

			if (o >= 0 && o != 1 && o != 4 && o != 6) {
				assert_int_equal(slots_hold(r, o), 0);
				held[o]++;
			}
		}
		if ((x >> 16) % 3 == 0) {
			unsigned v = (unsigned)(x >> 24) % N;

			if (held[v] && v != 1 && v != 4 && v != 6) {
				assert_int_equal(slots_release(r, v), 0);
				held[v]--;
			}
		}
		for (unsigned i = 0; i < N; i++) {
			struct slot_info si = info(r, i);

			if (held[i]) {
				assert_int_equal(si.state, SLOT_HELD);
				assert_int_equal(si.holders, held[i]);
			} else {
				assert_int_not_equal(si.state, SLOT_HELD);
			}
		}
	}
	assert_true(stats(r).drops > 0);
	assert_int_equal(info(r, 1).seq, 1);
	assert_int_equal(info(r, 4).seq, 4);
	assert_int_equal(info(r, 6).seq, 6);
	check_counts(r);
	slots_destroy(r);
}

/* Everything held: drop-oldest has to wait, which is not a stall. */
static void test_drop_oldest_all_held(void **state)
{
	struct slots *r = mkslots(3);

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(slots_arm(r), i);
		assert_int_equal(slots_complete(r, i, true, (uint64_t)i), 0);
		assert_int_equal(slots_hold(r, i), 0);
	}
	assert_int_equal(arm_dropping(r), -EAGAIN);
	assert_int_equal(slots_oldest_ready(r), -ENOENT);
	assert_int_equal(stats(r).stalls, 0);
	assert_int_equal(stats(r).drops, 0);
	slots_destroy(r);
}

/* A failed or cancelled transfer is recycled and never delivered. */
static void test_failed_transfer(void **state)
{
	struct slots *r = mkslots(2);

	(void)state;
	assert_int_equal(slots_arm(r), 0);
	assert_int_equal(slots_arm(r), 1);
	assert_int_equal(slots_complete(r, 0, false, 5), 0);
	assert_int_equal(slots_cancel(r, 1), 0);
	assert_int_equal(slots_count(r, SLOT_FREE), 2);
	assert_int_equal(slots_oldest_ready(r), -ENOENT);
	assert_int_equal(slots_hold(r, 0), -EINVAL);
	assert_int_equal(stats(r).errors, 1);
	assert_int_equal(stats(r).cancels, 1);
	assert_int_equal(stats(r).frames, 0);
	slots_destroy(r);
}

/* A holder count never goes below zero. */
static void test_release_underflow(void **state)
{
	struct slots *r = mkslots(1);

	(void)state;
	assert_int_equal(slots_arm(r), 0);
	assert_int_equal(slots_complete(r, 0, true, 0), 0);
	assert_int_equal(slots_hold(r, 0), 0);
	assert_int_equal(slots_release(r, 0), 0);
	assert_int_equal(slots_release(r, 0), -EINVAL);
	slots_destroy(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transition_table),
		cmocka_unit_test(test_bad_slot),
		cmocka_unit_test(test_create),
		cmocka_unit_test(test_shared_readers),
		cmocka_unit_test(test_block_stalls),
		cmocka_unit_test(test_drop_oldest_order),
		cmocka_unit_test(test_drop_oldest_never_takes_held),
		cmocka_unit_test(test_drop_oldest_all_held),
		cmocka_unit_test(test_failed_transfer),
		cmocka_unit_test(test_release_underflow),
	};

	return cmocka_run_group_tests_name("slots", tests, NULL, NULL);
}
