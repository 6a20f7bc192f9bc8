/* SPDX-License-Identifier: MIT */
/*
 * clock.h - the clocks fpgad and libfpgad read: CLOCK_MONOTONIC for every
 * duration, deadline and frame timestamp, CLOCK_REALTIME only for "connected
 * since" times shown to people.
 */
#ifndef FPGAD_COMMON_CLOCK_H
#define FPGAD_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

#define CLOCK_NS_PER_SEC 1000000000ull
#define CLOCK_NS_PER_MS 1000000ull

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t clock_now_ns(void);
/* CLOCK_REALTIME in milliseconds since the epoch. */
uint64_t clock_realtime_ms(void);
/*
 * The CLOCK_MONOTONIC deadline @timeout_ms from now; 0 (none) for a
 * negative @timeout_ms.
 */
uint64_t clock_deadline_ns(int timeout_ms);
/* @ns as a struct timespec. */
struct timespec clock_timespec(uint64_t ns);

#endif
