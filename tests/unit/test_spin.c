// SPDX-License-Identifier: MIT
/*
 * test_spin.c - spin.c: how the adaptive spin's window learns from the
 * waits that slept, and that a spin ends.  The window is set and read
 * directly; assertions are about the window and about how often the
 * readiness check was called, never about how long anything took, but
 * for the lower bound that a spin lasts its window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "clock.h"
#include "spin.h"

#define US 1000u

struct probe {
	unsigned calls;
	unsigned ready_at;	/* ready from this call on; 0: never */
};

static int probe_ready(const void *arg)
{
	struct probe *p = (struct probe *)arg;

	p->calls++;
	return p->ready_at && p->calls >= p->ready_at;
}

/* A waiter that never learnt a short wait does not spin: one look. */
static void test_no_window_one_look(void **state)
{
	struct spin s = { 0 };
	struct probe p = { 0 };

	(void)state;
	assert_false(spin_wait(&s, clock_now_ns(), probe_ready, &p));
	assert_int_equal(p.calls, 1);
	p.calls = 0;
	p.ready_at = 1;
	assert_true(spin_wait(&s, clock_now_ns(), probe_ready, &p));
	assert_int_equal(p.calls, 1);
}

/* Ready while spinning: true at the look that found it, no more looks. */
static void test_spin_finds_work(void **state)
{
	/* A window of seconds: no stall of a loaded machine outlasts it. */
	struct spin s = { .window_ns = UINT32_MAX };
	struct probe p = { .ready_at = 5 };

	(void)state;
	assert_true(spin_wait(&s, clock_now_ns(), probe_ready, &p));
	assert_int_equal(p.calls, 5);
}

/* The spin ends: never ready, it gives up once its window has passed. */
static void test_spin_ends(void **state)
{
	struct spin s = { .window_ns = 20 * US };
	struct probe p = { 0 };
	uint64_t t0 = clock_now_ns();

	(void)state;
	assert_false(spin_wait(&s, t0, probe_ready, &p));
	assert_true(clock_now_ns() - t0 >= 20 * US);
	assert_true(p.calls >= 1);
	/* A window that had passed before the wait began: one look. */
	p.calls = 0;
	assert_false(spin_wait(&s, clock_now_ns() - 21 * US, probe_ready, &p));
	assert_int_equal(p.calls, 1);
}

/* Short waits that slept open the window, double it, up to the cap. */
static void test_short_sleeps_grow(void **state)
{
	struct spin s = { 0 };

	(void)state;
	spin_learn(&s, 1 * US);
	assert_int_equal(s.window_ns, SPIN_FIRST_NS);
	spin_learn(&s, 1 * US);
	assert_int_equal(s.window_ns, 2 * SPIN_FIRST_NS);
	for (int i = 0; i < 10; i++)
		spin_learn(&s, 1 * US);
	assert_int_equal(s.window_ns, SPIN_MAX_NS);
	/* At once as long as a short wait that slept. */
	s.window_ns = 0;
	spin_learn(&s, 30 * US);
	assert_int_equal(s.window_ns, 30 * US);
	/* A wait just within the cap still grows it, never past the cap. */
	spin_learn(&s, SPIN_MAX_NS);
	assert_int_equal(s.window_ns, SPIN_MAX_NS);
}

/* Long waits halve it, and below the floor it closes: an idle waiter
 * costs nothing. */
static void test_long_waits_shrink(void **state)
{
	struct spin s = { .window_ns = SPIN_MAX_NS };
	unsigned halvings = 0;

	(void)state;
	spin_learn(&s, SPIN_MAX_NS + SPIN_WAKE_NS + 1);
	assert_int_equal(s.window_ns, SPIN_MAX_NS / 2);
	while (s.window_ns && halvings < 32) {
		spin_learn(&s, 10ull * 1000 * US);
		halvings++;
	}
	assert_int_equal(s.window_ns, 0);
	assert_true(halvings < 8);
	/* Closed, it stays closed while the waits stay long. */
	spin_learn(&s, 10ull * 1000 * US);
	assert_int_equal(s.window_ns, 0);
}

/*
 * A closed window reopens when answers come soon, though each wait now
 * sleeps and so lasts a wake-up longer than its answer took (a 12 us
 * answer seen after a 45 us wake-up): the window must not stay closed.
 */
static void test_closed_window_reopens(void **state)
{
	struct spin s = { 0 };

	(void)state;
	spin_learn(&s, 57 * US);
	assert_true(s.window_ns >= SPIN_FIRST_NS);
	assert_true(s.window_ns <= SPIN_MAX_NS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_window_one_look),
		cmocka_unit_test(test_spin_finds_work),
		cmocka_unit_test(test_spin_ends),
		cmocka_unit_test(test_short_sleeps_grow),
		cmocka_unit_test(test_long_waits_shrink),
		cmocka_unit_test(test_closed_window_reopens),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
