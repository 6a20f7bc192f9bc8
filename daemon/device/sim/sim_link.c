// SPDX-License-Identifier: MIT
/*
 * sim_link.c - the sim's PCIe link: one per card, full duplex, shared by
 * every queue of a direction; a transfer occupies it for its bytes at the
 * link's payload rate and completes no earlier (sim.h).
 */
#include <stdatomic.h>

#include "device/sim/sim.h"

struct sim_gen {
	unsigned gt10;		/* transfer rate, 0.1 GT/s per lane */
	unsigned payload;	/* line encoding: payload bits ... */
	unsigned total;		/* ... per this many bits on the wire */
};

static const struct sim_gen sim_gens[] = {
	[1] = { 25, 8, 10 },
	[2] = { 50, 8, 10 },
	[3] = { 80, 128, 130 },
	[4] = { 160, 128, 130 },
	[5] = { 320, 128, 130 },
};

/* Nanoseconds @bytes take on the link, rounded up; 0 when unlimited. */
static uint64_t sim_link_ns(const struct link_model *l, uint64_t bytes)
{
	const struct sim_gen *g;
	uint64_t num, den;

	if (!l->gen)
		return 0;
	g = &sim_gens[l->gen];
	/* bytes * 8 bit * 1e9 ns / (gt10 * 1e8 * payload / total * width) */
	num = bytes * 80u * g->total;
	den = (uint64_t)g->gt10 * g->payload * l->width;
	return (num + den - 1) / den;
}

uint64_t sim_link_rate(const struct link_model *l)
{
	const struct sim_gen *g = &sim_gens[l->gen];

	return (uint64_t)g->gt10 * 100000000u * g->payload * l->width /
	       (8u * g->total);
}

uint64_t sim_link_reserve(struct device *d, enum direction dir,
			  uint64_t now, uint64_t bytes,
			  uint64_t *ret_start)
{
	uint64_t dur = sim_link_ns(&d->sim.link, bytes);
	uint64_t cur, start;

	if (!dur) {
		*ret_start = now;
		return now;
	}
	cur = atomic_load(&d->link_free[dir]);
	do {
		start = cur > now ? cur : now;
	} while (!atomic_compare_exchange_weak(&d->link_free[dir], &cur,
					       start + dur));
	*ret_start = start;
	return start + dur;
}

bool sim_link_valid(const struct link_model *l)
{
	return l->gen < sizeof(sim_gens) / sizeof(sim_gens[0]) &&
	       (!l->gen || (l->width >= 1 && l->width <= 16));
}
