/* SPDX-License-Identifier: MIT */
/*
 * core.h - what fpgad serves, as the request path (requests.c,
 * xfer_requests.c), the metrics (metrics.c) and the placement
 * (placement.c) see it: the configuration, the card, its channels, the
 * transfer plane, the sessions and what fpgad found out at start.
 * struct daemon (daemon.h) owns the one struct core, beside what only the
 * life cycle touches: the loop, the listeners, the signals, the watchdog.
 */
#ifndef FPGAD_CORE_H
#define FPGAD_CORE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "control/session.h"
#include "log.h"

struct channel;
struct device;
struct device_ops;
struct p2p;
struct xfer;

struct core {
	struct config cfg;
	uint64_t start_ns;
	struct session_table sessions;
	char handoff_path[PATH_MAX + 32];

	const struct device_ops *dev_ops;
	struct device *dev;
	char dev_name[64];
	struct p2p *p2p;		/* topology, probes, auto's choices */
	unsigned n_channels;
	struct channel *channels[CONFIG_MAX_CHANNELS];
	struct xfer *xfer;		/* card memory transfers */

	/* How fpgad's CUDA work shares the GPU with its consumers'. */
	const char *gpu_sharing;	/* "mps", "time-slicing", "unknown", "" */
	const char *gpu_sharing_note;

	/* Where the card's work runs (placement.c), "" when not placed. */
	char numa_placed[192];		/* "node 1: threads on CPUs 4-7, ..." */
	char gpu_choice[192];		/* gpu = nearest: which and why */

	/* What peers can make fpgad log at will (requests.c). */
	bool log_limits_init;
	struct log_limit log_bad_request;
	struct log_limit log_denied;
	struct log_limit log_refused;
};

#endif
