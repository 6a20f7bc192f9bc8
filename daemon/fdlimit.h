/* SPDX-License-Identifier: MIT */
/*
 * fdlimit.h - fpgad's file descriptors: RLIMIT_NOFILE raised to its hard
 * limit at start, a reserve for what must always work (the local socket
 * and its clients, the rings, the device), and a guard that keeps remote
 * connections out of that reserve.
 */
#ifndef FPGAD_FDLIMIT_H
#define FPGAD_FDLIMIT_H

#include <stdbool.h>

#include "config.h"

/* Descriptors fpgad keeps whatever the configuration: stdio, the loops'
 * own, the listeners, the lock, the notify socket, the GPU driver's. */
#define FDLIMIT_BASE 64
/* Per channel: its ring, staging, device queue and completion fds. */
#define FDLIMIT_PER_CHANNEL 8
/* Per lease a local client may hold: its rings' descriptors. */
#define FDLIMIT_PER_LEASE 2

struct fd_budget {
	unsigned long nofile;		/* the soft RLIMIT_NOFILE in force */
	unsigned long reserve;		/* kept from remote connections */
	unsigned long ceiling;		/* remote descriptors stay below */
	unsigned remote_clients;	/* max_remote_clients, clamped */
};

/*
 * Raise the soft RLIMIT_NOFILE to the hard limit (capped at
 * fs.nr_open); returns the soft limit in force (logged when raised).
 */
unsigned long fdlimit_raise(void);
/*
 * The budget for @cfg under @nofile: reserve = FDLIMIT_BASE + max_clients
 * x (1 + FDLIMIT_PER_LEASE x leases one client can hold) +
 * FDLIMIT_PER_CHANNEL x channels; remote connections get what is left.
 */
void fdlimit_plan(const struct config *cfg, unsigned long nofile,
		  struct fd_budget *ret_budget);
/*
 * From now on a tcp connection accepted on a descriptor at or above
 * @ceiling is closed at once (logged, rate-limited, with the peer).
 */
void fdlimit_guard(unsigned long ceiling);
/*
 * Whether the guard is what the listeners call: fpgad must export accept
 * and accept4 (see the Makefile) for libnng to bind to them.
 */
bool fdlimit_guard_in_effect(void);

#endif
