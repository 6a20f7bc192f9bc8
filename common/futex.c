// SPDX-License-Identifier: MIT
/* futex.c - the one futex wrapper (see futex.h). */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "clock.h"
#include "futex.h"

int futex_wait(uint32_t *word, uint32_t val, uint64_t deadline_ns,
	       bool shared)
{
	/* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
	int op = FUTEX_WAIT_BITSET | (shared ? 0 : FUTEX_PRIVATE_FLAG);
	struct timespec ts = clock_timespec(deadline_ns);

	if (syscall(SYS_futex, word, op, val, deadline_ns ? &ts : NULL, NULL,
		    FUTEX_BITSET_MATCH_ANY) == 0)
		return 0;
	return errno == EAGAIN ? 0 : -errno;
}

void futex_wake(uint32_t *word, bool shared)
{
	int op = FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG);

	syscall(SYS_futex, word, op, INT_MAX, NULL, NULL, 0);
}
