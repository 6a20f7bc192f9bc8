// SPDX-License-Identifier: MIT
/* spin.c - the adaptive spin before a sleep (see spin.h). */
#include <sched.h>

#include "clock.h"
#include "spin.h"

bool spin_wait(const struct spin *s, uint64_t t0,
	       int (*ready)(const void *arg), const void *arg)
{
	uint64_t until = t0 + s->window_ns;

	for (;;) {
		if (ready(arg))
			return true;
		if (clock_now_ns() >= until)
			return false;
		spin_step();
	}
}

void spin_step(void)
{
	sched_yield();
}

void spin_learn(struct spin *s, uint64_t waited_ns)
{
	uint64_t w = s->window_ns;

	if (waited_ns <= SPIN_MAX_NS + SPIN_WAKE_NS) {
		w = w < SPIN_FIRST_NS / 2 ? SPIN_FIRST_NS : 2 * w;
		if (w < waited_ns)
			w = waited_ns;
		if (w > SPIN_MAX_NS)
			w = SPIN_MAX_NS;
	} else {
		w /= 2;
		if (w < SPIN_MIN_NS)
			w = 0;
	}
	s->window_ns = (uint32_t)w;
}
