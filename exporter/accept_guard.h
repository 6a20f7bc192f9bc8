/* SPDX-License-Identifier: MIT */
/*
 * accept_guard.h - the remote status listener's connection limits, kept
 * where nng makes the descriptor.
 *
 * nng accepts connections on its own threads, and an idle tcp peer holds
 * a descriptor for the 10 s nng waits for its protocol header, before any
 * pipe event could refuse it: a flood of idle peers would hold every
 * place.  So fpgad-exporter defines accept() and accept4(), which nng
 * calls (the program's definitions come before libc's; the Makefile
 * exports them), makes the system call itself and closes a connection on
 * the guarded listening socket at once when the listener holds max
 * connections, or max_per_address from the peer's address, already.
 * Every other socket passes untouched.
 *
 * accept_guard_sweep() (a loop timer's) shuts down a guarded connection
 * that has had nothing answered for idle_ms, and one whose request has
 * not been answered within request_ms of the last answer (a request sent
 * slowly, a byte at a time, or never finished).  For that the guard keeps
 * a duplicate of each descriptor: the socket cannot go while it is held,
 * so shutdown() on the duplicate reaches that connection and no other,
 * whatever nng has closed and the kernel handed out again since.
 *
 * The hook has no context to carry state, so the guarded listener is this
 * file's own process-wide value.
 */
#ifndef FPGAD_EXPORTER_ACCEPT_GUARD_H
#define FPGAD_EXPORTER_ACCEPT_GUARD_H

#include <stdbool.h>
#include <sys/socket.h>

/* The most connections the guarded listener may hold open. */
#define ACCEPT_GUARD_MAX 1024

struct accept_limits {
	unsigned max;			/* connections at once */
	unsigned per_address;		/* ... from one address, 0 = any */
	unsigned idle_ms;		/* nothing answered so long: shut, 0 = never */
	unsigned request_ms;		/* a request unanswered so long: shut, 0 = never */
};

/*
 * Guard the tcp listener bound to @addr with @lim; @what names it in logs
 * ("remote").  NULL @addr: no listener is guarded.
 */
void accept_guard(const struct sockaddr *addr, socklen_t len,
		  const struct accept_limits *lim, const char *what);
/* Whether the program's accept() is what libnng calls (it is exported). */
bool accept_guard_in_effect(void);
/* Shut down the connections past idle_ms or request_ms (logged, rate-limited). */
void accept_guard_sweep(void);

#endif
