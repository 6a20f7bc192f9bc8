/* SPDX-License-Identifier: MIT */
/*
 * histogram.h - a histogram of durations cheap enough for a hot path
 * (a channel's streaming thread, the transfer thread): fixed power-of-two
 * bounds in nanoseconds, so that a sample costs a count-leading-zeros, an
 * increment and an addition.  It has no lock of its own: its owner's lock
 * guards it (the channel lock for the channel histograms of channel.h, the
 * transfer plane's lock for the transfer latencies of xfer.h).
 *
 * Bound i is 2^(HISTO_MIN_SHIFT + i) ns, from 256 ns to 2^30 ns (1.07 s).
 * bucket[i] counts the samples above bound i - 1 and at most bound i (the
 * first from 0); bucket[HISTO_BOUNDS] counts those above the last bound.
 * Buckets are not cumulative here; the exposition (metrics.c) sums them.
 */
#ifndef FPGAD_HISTOGRAM_H
#define FPGAD_HISTOGRAM_H

#include <stdint.h>

#define HISTO_MIN_SHIFT 8
#define HISTO_BOUNDS 23

struct histo {
	uint64_t bucket[HISTO_BOUNDS + 1];
	uint64_t count;
	uint64_t sum_ns;
};

/* The upper bound of bucket @i (< HISTO_BOUNDS), in nanoseconds. */
static inline uint64_t histo_bound_ns(unsigned i)
{
	return 1ull << (HISTO_MIN_SHIFT + i);
}

/* The bucket of a sample of @ns nanoseconds. */
static inline unsigned histo_bucket(uint64_t ns)
{
	unsigned b;

	if (ns <= histo_bound_ns(0))
		return 0;
	/* ceil(log2(ns)): the bit length of ns - 1. */
	b = 64u - (unsigned)__builtin_clzll(ns - 1) - HISTO_MIN_SHIFT;
	return b < HISTO_BOUNDS ? b : HISTO_BOUNDS;
}

static inline void histo_add(struct histo *h, uint64_t ns)
{
	h->bucket[histo_bucket(ns)]++;
	h->count++;
	h->sum_ns += ns;
}

#endif
