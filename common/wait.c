// SPDX-License-Identifier: MIT
/* wait.c - sleeping on a word until a check holds (wait.h). */
#include <errno.h>
#include <stdatomic.h>

#include "clock.h"
#include "futex.h"
#include "wait.h"

#define A32(p) ((_Atomic uint32_t *)(p))

void wait_wake(uint32_t *waiting, uint32_t *word, bool shared)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(A32(waiting), memory_order_relaxed)) {
		atomic_fetch_add_explicit(A32(word), 1, memory_order_seq_cst);
		futex_wake(word, shared);
	}
}

void wait_kick(uint32_t *kicked, uint32_t *waiting, uint32_t *word, bool shared)
{
	atomic_store_explicit(A32(kicked), 1, memory_order_seq_cst);
	wait_wake(waiting, word, shared);
}

int wait_until(uint32_t *waiting, uint32_t *word,
	       int (*check)(const void *arg), const void *arg, int timeout_ms,
	       bool shared)
{
	uint64_t deadline = clock_deadline_ns(timeout_ms);
	int ret;

	for (;;) {
		uint32_t val = atomic_load_explicit(A32(word), memory_order_acquire);

		atomic_store_explicit(A32(waiting), 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_seq_cst);
		ret = check(arg);
		if (ret) {
			ret = ret < 0 ? ret : 0;
			break;
		}
		if (timeout_ms == 0 ||
		    (deadline && clock_now_ns() >= deadline)) {
			ret = -ETIMEDOUT;
			break;
		}
		ret = futex_wait(word, val, deadline, shared);
		if (ret == -EINTR)
			break;
		if (ret == -ETIMEDOUT) {
			ret = check(arg);
			ret = ret > 0 ? 0 : ret < 0 ? ret : -ETIMEDOUT;
			break;
		}
	}
	atomic_store_explicit(A32(waiting), 0, memory_order_relaxed);
	return ret;
}
