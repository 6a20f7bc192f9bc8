// SPDX-License-Identifier: MIT
/*
 * test_pace.c - pace.c: what it learns from the card's completions and how
 * it then looks for the next one, against a card whose answers are
 * scripted.  Assertions are about which calls the streaming thread makes
 * (a blocking wait, a look, a spin of looks), never about how long they
 * took, so a loaded machine cannot fail them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "channel/channel_impl.h"
#include "clock.h"

/* The scripted card: completes once the clock passes @due_ns. */
static struct {
	uint64_t due_ns;
	unsigned looks;		/* wait() with timeout 0 */
	unsigned blocks;	/* wait() with a timeout */
	int block_ms;		/* the last blocking wait's timeout */
	uint64_t first_call_ns;
} card;

static int card_wait(struct device_queue *q, struct dev_completion *out,
		     unsigned max, int timeout_ms)
{
	uint64_t now = clock_now_ns();

	(void)q;
	(void)max;
	if (!card.first_call_ns)
		card.first_call_ns = now;
	if (timeout_ms) {
		card.blocks++;
		card.block_ms = timeout_ms;
	} else {
		card.looks++;
	}
	/* A blocking wait is woken by the card: it always returns one. */
	if (!timeout_ms && now < card.due_ns)
		return 0;
	memset(out, 0, sizeof(*out));
	out->t_end_ns = now;
	return 1;
}

static const struct device_ops card_ops = { .wait = card_wait };

static struct channel *channel_new(enum pacing pacing)
{
	static struct channel ch;

	memset(&ch, 0, sizeof(ch));
	memset(&card, 0, sizeof(card));
	ch.ops = &card_ops;
	ch.cfg.pacing = pacing;
	ch.cfg.queue_depth = 8;
	return &ch;
}

/* A steady card: completions @interval_ns apart, @jitter_ns either way. */
static void steady(struct channel *ch, uint64_t interval_ns, uint64_t jitter_ns)
{
	struct dev_completion c = { 0 };
	uint64_t t = clock_now_ns() - 64 * interval_ns;

	for (int i = 0; i < 64; i++) {
		c.t_end_ns = t + (uint64_t)i * interval_ns +
			     (i & 1 ? jitter_ns : 0);
		pace_note(ch, &c, 1);
	}
}

static void test_learns_interval_and_jitter(void **state)
{
	struct channel *ch = channel_new(PACING_HYBRID);
	struct dev_completion bad = { .status = -EIO };

	(void)state;
	steady(ch, 100000, 0);
	assert_in_range(ch->pace.interval_ns, 99000, 101000);
	assert_true(ch->pace.jitter_ns < 1000);
	/* Failed transfers and times that go backwards teach nothing. */
	bad.t_end_ns = ch->pace.last_end_ns + 5;
	pace_note(ch, &bad, 1);
	bad.status = 0;
	bad.t_end_ns = ch->pace.last_end_ns - 1;
	pace_note(ch, &bad, 1);
	assert_in_range(ch->pace.interval_ns, 99000, 101000);
	/* Alternating +-20 us around 100 us: jitter ~20 us. */
	channel_new(PACING_HYBRID);
	steady(ch, 100000, 20000);
	assert_in_range(ch->pace.jitter_ns, 10000, 30000);
	pace_forget(ch);
	assert_int_equal(ch->pace.interval_ns, 0);
	assert_int_equal(ch->pace.last_end_ns, 0);
}

/* pacing = wait: the card wakes the thread, nothing else. */
static void test_wait_blocks_at_once(void **state)
{
	struct channel *ch = channel_new(PACING_WAIT);
	struct dev_completion c[4];

	(void)state;
	steady(ch, 1000000, 0);
	assert_int_equal(pace_wait(ch, c, 4, 70), 1);
	assert_int_equal(card.looks, 0);
	assert_int_equal(card.blocks, 1);
	assert_int_equal(card.block_ms, 70);
}

/* Nothing learnt yet, or a card too irregular to predict: block. */
static void test_unpredictable_blocks(void **state)
{
	struct channel *ch = channel_new(PACING_HYBRID);
	struct dev_completion c[4];

	(void)state;
	assert_int_equal(pace_wait(ch, c, 4, 70), 1);
	assert_int_equal(card.looks, 0);
	assert_int_equal(card.blocks, 1);

	ch = channel_new(PACING_HYBRID);
	steady(ch, 100000, 60000);
	assert_true(ch->pace.jitter_ns > ch->pace.interval_ns / 4);
	assert_int_equal(pace_wait(ch, c, 4, 70), 1);
	assert_int_equal(card.looks, 0);
	assert_int_equal(card.blocks, 1);
}

/*
 * 1,000 completions a second, steady: the thread sleeps until just before
 * the next is due (its first look comes no earlier than half an interval
 * later), then looks until it is there.
 */
static void test_steady_card_naps_then_looks(void **state)
{
	struct channel *ch = channel_new(PACING_HYBRID);
	struct dev_completion c[4];
	uint64_t t0;

	(void)state;
	steady(ch, 1000000, 500);
	ch->pace.last_end_ns = clock_now_ns();
	card.due_ns = ch->pace.last_end_ns + 1000000;
	t0 = clock_now_ns();
	assert_int_equal(pace_wait(ch, c, 4, 1000), 1);
	assert_true(card.first_call_ns >= t0 + 500000);
	assert_true(card.looks >= 1);
}

/*
 * 10,000 a second with 5 us of jitter: the spin that jitter needs would
 * take more than 5% of a core, so the thread looks once and otherwise lets
 * the card wake it: never a run of looks.
 */
static void test_dear_spin_looks_once(void **state)
{
	struct channel *ch = channel_new(PACING_HYBRID);
	struct dev_completion c[4];

	(void)state;
	steady(ch, 100000, 5000);
	ch->pace.last_end_ns = clock_now_ns();
	card.due_ns = UINT64_MAX;	/* late: the card has to wake it */
	assert_int_equal(pace_wait(ch, c, 4, 1000), 1);
	assert_int_equal(card.looks, 1);
	assert_int_equal(card.blocks, 1);
}

/*
 * 100,000 a second: the thread wakes once for several completions (at most
 * half the card's queue) and does not spin.
 */
static void test_fast_card_batches(void **state)
{
	struct channel *ch = channel_new(PACING_HYBRID);
	struct dev_completion c[8];
	uint64_t t0;

	(void)state;
	steady(ch, 10000, 0);
	ch->pace.last_end_ns = clock_now_ns();
	card.due_ns = UINT64_MAX;
	t0 = clock_now_ns();
	assert_int_equal(pace_wait(ch, c, 8, 1000), 1);
	/* Four completions' worth of nap (40 us), less timer lateness. */
	assert_true(card.first_call_ns >= t0 + 20000);
	assert_int_equal(card.looks, 1);
	assert_int_equal(card.blocks, 1);
}

/* poll_us: look without sleeping for that long, then block. */
static void test_busy_poll(void **state)
{
	struct channel *ch = channel_new(PACING_HYBRID);
	struct dev_completion c[4];

	(void)state;
	ch->cfg.poll_us = 20000;
	card.due_ns = UINT64_MAX;
	assert_int_equal(pace_wait(ch, c, 4, 50), 1);
	assert_true(card.looks > 1);
	assert_int_equal(card.blocks, 1);
}

/*
 * Awaited stream-ordered releases: spun for briefly, then looked for every
 * PACE_ASYNC_POLL_NS, less often the longer none comes back; soon again,
 * with a spin, once slots do.
 */
static void test_async_backs_off(void **state)
{
	struct channel *ch = channel_new(PACING_HYBRID);
	uint64_t t = 1000000000ull;

	(void)state;
	assert_int_equal(pace_async_spin_until(ch, t), 0);
	assert_int_equal(pace_async_due(ch, t), t + PACE_ASYNC_POLL_NS);
	/* Spin only in the first PACE_ASYNC_SPIN_NS of the wait. */
	assert_int_equal(pace_async_spin_until(ch, t + 1000), t + PACE_ASYNC_SPIN_NS);
	assert_int_equal(pace_async_spin_until(ch, t + PACE_ASYNC_SPIN_NS), 0);
	/* 160 us awaited: a sixteenth of it is still under the short step. */
	assert_int_equal(pace_async_due(ch, t + 160000), t + 160000 + PACE_ASYNC_POLL_NS);
	assert_int_equal(pace_async_due(ch, t + 3200000), t + 3200000 + 200000);
	assert_int_equal(pace_async_due(ch, t + 100000000),
			 t + 100000000 + PACE_ASYNC_POLL_MAX_NS);
	pace_async_progress(ch);
	assert_int_equal(pace_async_spin_until(ch, t + 200000000), 0);
	assert_int_equal(pace_async_due(ch, t + 200000000),
			 t + 200000000 + PACE_ASYNC_POLL_NS);
	assert_int_equal(pace_async_spin_until(ch, t + 200000000),
			 t + 200000000 + PACE_ASYNC_SPIN_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_learns_interval_and_jitter),
		cmocka_unit_test(test_wait_blocks_at_once),
		cmocka_unit_test(test_unpredictable_blocks),
		cmocka_unit_test(test_steady_card_naps_then_looks),
		cmocka_unit_test(test_dear_spin_looks_once),
		cmocka_unit_test(test_fast_card_batches),
		cmocka_unit_test(test_busy_poll),
		cmocka_unit_test(test_async_backs_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
