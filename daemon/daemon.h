/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - the fpgad process: config, loop, control plane, sessions,
 * device and channels.  One struct daemon exists; its owner is main().
 */
#ifndef FPGAD_DAEMON_H
#define FPGAD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config/config.h"
#include "control/control.h"
#include "control/fdlimit.h"
#include "control/handoff.h"
#include "control/session.h"
#include "log.h"

struct channel;
struct device;
struct p2p;
struct runtime;
struct xfer;

struct daemon {
	struct config cfg;
	struct runtime *rt;		/* the runtime directory, locked */
	uv_loop_t loop;
	bool loop_init;
	struct control *ctl;
	struct session_table sessions;
	uint64_t start_ns;
	char socket_url[PATH_MAX + 32];
	struct handoff *handoff;
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

	uv_signal_t sig_term, sig_int, sig_hup;
	uv_timer_t watchdog;
	bool handles_init;
	uint64_t watchdog_usec;
	int exit_code;

	/* What peers can make fpgad log at will (requests.c). */
	bool log_limits_init;
	struct log_limit log_bad_request;
	struct log_limit log_denied;
	struct log_limit log_refused;
};

/* Set up everything up to READY=1; on failure tear down what was built. */
int daemon_start(struct daemon *d, const struct config *cfg);
/* Run the loop until SIGTERM/SIGINT; returns the exit code. */
int daemon_run(struct daemon *d);
/* Tear down; safe on a half-built daemon. */
void daemon_stop(struct daemon *d);

/* Re-read the config file; keeps the running one when the new one is bad. */
void daemon_reload(struct daemon *d);

#endif
