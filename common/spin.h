/* SPDX-License-Identifier: MIT */
/*
 * spin.h - the adaptive spin before a sleep.  A thread that hands work to
 * another and waits for the answer pays a wake-up each time it sleeps (a
 * futex or eventfd round trip: 8-25 us on a virtual machine, more when
 * the sleeper's CPU has gone idle).  A card memory transfer crosses four
 * such waits (the client, fpgad's transfer thread twice, the engine), so
 * whether each one slept decided whether a 4 KiB transfer took a few
 * microseconds or sixty.
 *
 * A waiter spins for its window before it sleeps.  The window learns from
 * the waits that slept: one that ended within SPIN_MAX_NS + SPIN_WAKE_NS
 * of its start (the answer came within SPIN_MAX_NS, and the sleeper's own
 * wake-up took the rest: a longer spin would have caught it) doubles the
 * window, up to SPIN_MAX_NS; a longer one (the answer came from far:
 * spinning was waste) halves it, down to nothing below SPIN_MIN_NS.  The
 * allowance matters: a closed window makes the waiter sleep, and a wait
 * that slept lasts a wake-up longer than its answer took; judged without
 * it, answers that come soon but not sooner than a wake-up would keep the
 * window closed for good (transfers bimodal, fast or slow for a whole run).  So a waiter
 * whose answers come soon never sleeps, one whose answers come late soon
 * stops spinning, and one that never waits (an idle client) spins never:
 * a wait costs at most SPIN_MAX_NS of a CPU.  Each step of the spin
 * yields the CPU to any other thread that wants it, so spinning never
 * delays the work it waits for on a machine with few CPUs.
 */
#ifndef FPGAD_COMMON_SPIN_H
#define FPGAD_COMMON_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#define SPIN_MAX_NS 50000u	/* the longest window */
#define SPIN_MIN_NS 2000u	/* a shorter one is none */
#define SPIN_FIRST_NS 8000u	/* the first window a short wait opens */
#define SPIN_WAKE_NS 50000u	/* a sleeper's wake-up, at most, on a VM */

struct spin {
	uint32_t window_ns;	/* spin this long before sleeping; 0: none */
};

/*
 * Spin while @ready(@arg) returns 0, until @t0 (the wait's start,
 * CLOCK_MONOTONIC ns) + the window: true as soon as it returns nonzero,
 * false when the window ends first (or is empty: @ready is then called
 * once).
 */
bool spin_wait(const struct spin *s, uint64_t t0,
	       int (*ready)(const void *arg), const void *arg);
/* One step of an adaptive spin: another thread of this CPU may run. */
void spin_step(void);
/* A wait slept and was over @waited_ns after its start: adapt the window. */
void spin_learn(struct spin *s, uint64_t waited_ns);

#endif
