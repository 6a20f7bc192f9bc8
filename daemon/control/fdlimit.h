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
#include <sys/socket.h>

#include "config/config.h"

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
 * FDLIMIT_PER_CHANNEL x channels; remote connections get what is left
 * beside the metrics listener's [metrics] max_clients (twice: the guard
 * holds a duplicate of each), when it listens.
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

/* The most connections a capped listener may hold open. */
#define FDLIMIT_CAP_MAX 1024

/*
 * A connection limit of its own for the tcp listener bound to @addr (one
 * such listener per process; the metrics listener's): from now on a
 * connection accepted on it while @max accepted there are still open is
 * closed at once, logged (rate-limited) with the peer, @what (the
 * listener's name) and @key (the limit's config key).  Open connections
 * are counted at each accept, so no close needs to be seen: a descriptor
 * accepted there counts while it is still that socket.  @max 1 to
 * FDLIMIT_CAP_MAX; @addr NULL lifts the limit.
 */
void fdlimit_cap(const struct sockaddr *addr, socklen_t len, unsigned max,
		 const char *what, const char *key);
/*
 * New limits for the capped listener (at start, and at reload; open
 * connections stay): @max connections, @per_address from one address (0:
 * any), shut down when nothing was answered for @idle_ms (0: never).
 */
void fdlimit_cap_set(unsigned max, unsigned per_address, unsigned idle_ms);
/*
 * Shut down the capped listener's connections that have had nothing sent
 * to them for its idle_ms (logged, rate-limited); the loop calls it from
 * a timer.
 */
void fdlimit_cap_close_idle(void);

#endif
