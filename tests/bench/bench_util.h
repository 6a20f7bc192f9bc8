/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - what the benchmark programs share: clocks, percentiles,
 * a start barrier for forked workers, and the CPU time and memory of
 * another process (fpgad) from /proc, per thread.
 */
#ifndef FPGAD_BENCH_UTIL_H
#define FPGAD_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

uint64_t bench_now_ns(void);
void bench_sort(uint64_t *v, size_t n);
/* Element @p (0..1) of sorted @v, in microseconds; 0 when @n is 0. */
double bench_pct_us(const uint64_t *v, size_t n, double p);
/* Parse "4K", "1M", "8M", "123": bytes, or 0 when malformed. */
uint64_t bench_parse_size(const char *s);

/* Anonymous shared memory for forked workers; NULL on failure. */
void *bench_shared_alloc(size_t len);
void bench_shared_free(void *p, size_t len);

#define BENCH_MAX_THREADS 512

struct bench_thread {
	int tid;
	char comm[20];
	uint64_t ticks;		/* utime + stime, clock ticks */
	uint64_t run_ns;	/* schedstat: time on a CPU, 0 if unknown */
};

struct bench_cpu {
	uint64_t ticks;		/* the whole process, dead threads included */
	unsigned n;
	struct bench_thread t[BENCH_MAX_THREADS];
};

/* Snapshot @pid's CPU time, per thread. */
int bench_cpu_read(pid_t pid, struct bench_cpu *ret);
/*
 * Print, as a JSON string, per thread name the CPU time used between
 * @a and @b divided by @frames, in us ("sim-c2h0=1.23 fpgad=0.45 ...").
 */
void bench_cpu_split(const struct bench_cpu *a, const struct bench_cpu *b,
		     uint64_t frames, char *buf, size_t len);
/* VmRSS of @pid in KiB, or a negative errno. */
int64_t bench_rss_kb(pid_t pid);

#endif
