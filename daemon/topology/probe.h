/* SPDX-License-Identifier: MIT */
/*
 * probe.h - a short, bounded burst of card DMA into pinned memory, timed;
 * and how mode = auto chooses between gpudirect and bounce from two such
 * measurements and the card-GPU topology.
 *
 * probe_run() keeps @depth transfers of @length bytes in flight on a
 * device queue, into @slots places @stride apart in one pinned region,
 * until @max_bytes were submitted or @max_ms passed, and reports the bytes
 * per second delivered.  An optional second stage runs per transfer (for
 * bounce: the copy from host staging into the GPU) and a place is reused
 * only when its stage finished, so the rate is that of the whole path.
 * A transfer that fails stops the burst with its error; one that never
 * completes (the engine hangs) stops it after the DMA timeout, with the
 * queue reset and every transfer accounted for.
 */
#ifndef FPGAD_PROBE_H
#define FPGAD_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "device/device.h"
#include "topology/topology.h"

struct probe_params {
	uint64_t max_bytes;	/* submit no more than this */
	unsigned max_ms;	/* ... and stop submitting after this long */
	uint64_t length;	/* bytes per transfer */
	uint64_t stride;	/* between places in the region, >= length */
	unsigned slots;		/* places, used round robin */
	unsigned depth;		/* transfers in flight, 1..slots */
	unsigned timeout_ms;	/* DMA timeout of a transfer (0: device default) */
};

/* A second stage per transfer; every call from probe_run()'s thread. */
struct probe_stage {
	void *user;
	/* Start it for place @slot, which holds @length bytes. */
	int (*start)(void *user, unsigned slot, uint64_t length);
	/*
	 * The oldest started stage: 1 and its place when it has finished
	 * (waiting for it when @block), 0 when it has not, -errno when it
	 * failed.
	 */
	int (*finish)(void *user, bool block, unsigned *ret_slot);
};

struct probe_result {
	uint64_t bytes;		/* delivered, through every stage */
	uint64_t transfers;
	uint64_t ns;		/* first submit to last delivery */
	double bytes_per_s;
};

/*
 * Run a burst on @q into the pin @handle.  0 and the result, or -EINVAL
 * (bad parameters), the first failed transfer's or stage's error, or
 * -ETIMEDOUT (a transfer never completed; the queue was reset).
 */
int probe_run(const struct device_ops *ops, struct device_queue *q,
	      uint64_t handle, const struct probe_params *p,
	      const struct probe_stage *stage, struct probe_result *ret_result);

/* What was measured for one channel; a rate of 0 was not measured. */
struct probe_rates {
	double gpudirect;	/* bytes/s */
	double bounce;
	int gpudirect_err;	/* 0, or why gpudirect could not be set up or run */
	int bounce_err;
};

struct probe_choice {
	enum transfer_mode mode;	/* MODE_GPUDIRECT or MODE_BOUNCE */
	char reason[320];		/* "gpudirect: same switch ..., 7.1 GB/s vs bounce 5.2" */
};

/*
 * auto's choice for a channel in GPU memory, from @how ([device]
 * auto_choice), the topology of the card and the channel's GPU (@topo,
 * NULL when unknown) and @rates.  With AUTO_MEASURE: the one that works
 * when only one does; bounce when the kernel would not map gpudirect; else
 * the faster of two measured modes, the one measured when only one was,
 * and the topology's advice when nothing was measured.  With AUTO_FIRST: gpudirect when it works.
 * -ENODEV when neither mode works.
 */
int probe_choose(enum auto_choice how, const struct topo_pair *topo,
		 const struct probe_rates *rates, struct probe_choice *ret_choice);

#endif
