// SPDX-License-Identifier: MIT
/* clock.c - the one clock helper (see clock.h). */
#include "clock.h"

uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * CLOCK_NS_PER_SEC + (uint64_t)ts.tv_nsec;
}

uint64_t clock_realtime_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

uint64_t clock_deadline_ns(int timeout_ms)
{
	if (timeout_ms < 0)
		return 0;
	return clock_now_ns() + (uint64_t)timeout_ms * CLOCK_NS_PER_MS;
}

struct timespec clock_timespec(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / CLOCK_NS_PER_SEC),
		.tv_nsec = (long)(ns % CLOCK_NS_PER_SEC),
	};

	return ts;
}
