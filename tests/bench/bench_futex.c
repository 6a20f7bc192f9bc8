// SPDX-License-Identifier: MIT
/*
 * bench_futex.c - the baseline of the wake-up latency figure: a bare futex
 * ping-pong between two processes over shared memory.
 *
 *   bench_futex COUNT INTERVAL_US
 *
 * Every INTERVAL_US the parent takes a timestamp, stores it and a new
 * value into shared memory and calls FUTEX_WAKE; the child, asleep in
 * FUTEX_WAIT, takes a timestamp as soon as it runs: one-way wake-up
 * latency, CLOCK_MONOTONIC, measured as fpgad's frame latency is (DMA end
 * stamped before the wake, the consumer's clock after it).  The child
 * answers through a second futex so that the next round starts with it
 * asleep again.  Prints one JSON line.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

struct pingpong {
	_Atomic uint32_t ping;		/* round number, parent -> child */
	_Atomic uint32_t pong;		/* round number, child -> parent */
	_Atomic uint64_t t_wake_ns;
	uint64_t lat_ns[];
};

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}

/* Sleep until *@addr == @want. */
static void wait_for(_Atomic uint32_t *addr, uint32_t want)
{
	uint32_t v;

	while ((v = atomic_load(addr)) != want)
		futex(addr, FUTEX_WAIT, v);
}

static void child(struct pingpong *pp, uint32_t count)
{
	for (uint32_t i = 1; i <= count; i++) {
		wait_for(&pp->ping, i);
		pp->lat_ns[i - 1] = bench_now_ns() - atomic_load(&pp->t_wake_ns);
		atomic_store(&pp->pong, i);
		futex(&pp->pong, FUTEX_WAKE, 1);
	}
}

int main(int argc, char **argv)
{
	struct timespec gap;
	struct pingpong *pp;
	uint32_t count;
	long interval_us;
	size_t len;
	int status;
	pid_t pid;

	if (argc != 3 || (count = (uint32_t)atoi(argv[1])) == 0 ||
	    (interval_us = atol(argv[2])) < 0) {
		fprintf(stderr, "usage: bench_futex COUNT INTERVAL_US\n");
		return 2;
	}
	len = sizeof(*pp) + count * sizeof(uint64_t);
	pp = bench_shared_alloc(len);
	if (!pp) {
		fprintf(stderr, "bench_futex: mmap: %s\n", strerror(errno));
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench_futex: fork: %s\n", strerror(errno));
		bench_shared_free(pp, len);
		return 1;
	}
	if (pid == 0) {
		child(pp, count);
		_exit(0);
	}
	gap.tv_sec = interval_us / 1000000;
	gap.tv_nsec = (interval_us % 1000000) * 1000;
	for (uint32_t i = 1; i <= count; i++) {
		/* Give the child time to fall asleep in FUTEX_WAIT. */
		nanosleep(&gap, NULL);
		atomic_store(&pp->t_wake_ns, bench_now_ns());
		atomic_store(&pp->ping, i);
		futex(&pp->ping, FUTEX_WAKE, 1);
		wait_for(&pp->pong, i);
	}
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "bench_futex: the child failed\n");
		bench_shared_free(pp, len);
		return 1;
	}
	bench_sort(pp->lat_ns, count);
	printf("{\"bench\":\"futex\",\"n\":%" PRIu32 ",\"interval_us\":%ld,"
	       "\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f,\"lat_max_us\":%.1f}\n",
	       count, interval_us, bench_pct_us(pp->lat_ns, count, 0.5),
	       bench_pct_us(pp->lat_ns, count, 0.99),
	       bench_pct_us(pp->lat_ns, count, 1.0));
	bench_shared_free(pp, len);
	return 0;
}
