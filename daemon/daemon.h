/* SPDX-License-Identifier: MIT */
/*
 * daemon.h - the fpgad process's life cycle: start, loop, signals,
 * watchdog, reload, stop.  One struct daemon exists; its owner is main().
 * What it serves is its struct core (core.h).
 */
#ifndef FPGAD_DAEMON_H
#define FPGAD_DAEMON_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "config/config.h"
#include "core.h"
#include "control/control.h"
#include "control/fdlimit.h"
#include "control/handoff.h"
#include "control/session.h"
#include "log.h"

struct runtime;

struct daemon {
	struct core core;		/* what the requests and the metrics see */
	struct runtime *rt;		/* the runtime directory, locked */
	uv_loop_t loop;
	bool loop_init;
	struct control *ctl;
	char socket_url[PATH_MAX + 32];
	struct handoff *handoff;

	uv_signal_t sig_term, sig_int, sig_hup;
	uv_timer_t watchdog;
	bool handles_init;
	uint64_t watchdog_usec;
	int exit_code;
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
