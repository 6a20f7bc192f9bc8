/* SPDX-License-Identifier: MIT */
/*
 * xfer_server.h - fpgad's end of one connection's transfer queue (the ABI
 * is include/fpgad_xfer.h; what both ends share is
 * common/xfer_ring.h).
 *
 * The server makes the queue (a sealed memfd, mapped here) and its
 * doorbell (an eventfd), takes submission entries, posts completions,
 * raises events and wakes the client.  It keeps its own copy of every
 * position it writes and reads the client's positions once per look, as
 * hints it checks: whatever the client scribbles on the shared pages, the
 * server takes each entry at most once, copies it before anyone looks at
 * it, and always has room for the completions it owes.  Checking what an
 * entry asks for is the caller's (xfer_thread.c).
 *
 * One thread at a time per server.  Functions return 0 (or a count) or a
 * negative errno; ret_* are written only on success.
 */
#ifndef FPGAD_XFER_SERVER_H
#define FPGAD_XFER_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xfer_ring.h"

struct xfer_server;

/* What the header tells the client (fpgad_xfer_header, line 1). */
struct xfer_server_rules {
	uint64_t card_memory;
	uint64_t max_length;
	uint64_t part_size;
	uint32_t host_align;
	uint32_t gpu_align;
	uint32_t max_timeout_ms;
};

/*
 * A queue of @entries submission entries (twice as many completions);
 * @name_hint names the memfd.
 */
int xfer_server_create(uint32_t entries, const struct xfer_server_rules *rules,
		       const char *name_hint, struct xfer_server **ret_s);
/* Unmaps and closes everything; accepts NULL. */
void xfer_server_free(struct xfer_server *s);

/* The memfd and the doorbell, for the handoff (still the server's). */
void xfer_server_fds(const struct xfer_server *s, int *ret_memfd,
		     int *ret_doorbell);
/* Bytes of the memfd. */
size_t xfer_server_size(const struct xfer_server *s);

/*
 * Take the next entry into *@ret_sqe: 1, or 0 when there is none, or no
 * room for one more completion with @outstanding entries taken and not
 * yet completed.
 */
int xfer_server_take(struct xfer_server *s, unsigned outstanding,
		     struct fpgad_xfer_sqe *ret_sqe);
/* Whether an entry waits to be taken (the client's sq_tail moved). */
bool xfer_server_pending(struct xfer_server *s);
/*
 * Post the completion of an entry taken earlier (there is always room);
 * @refused counts it as refused by a rule.  The client is woken by
 * xfer_server_wake().
 */
void xfer_server_complete(struct xfer_server *s,
			  const struct fpgad_xfer_cqe *cqe);
/* Wake the client if it sleeps on completions. */
void xfer_server_wake(struct xfer_server *s);
/* Raise FPGAD_XFER_EVENT_* bits and wake the client. */
void xfer_server_raise(struct xfer_server *s, uint32_t events);

/*
 * Before the serving thread sleeps: ask for the doorbell (srv_waiting)
 * and look once more; returns true when an entry is waiting, and then
 * asks no longer.
 */
bool xfer_server_arm(struct xfer_server *s);
/*
 * The thread is awake: no doorbell needed.  Emptying the doorbell is the
 * poller's business (it reads it when epoll says it rang).
 */
void xfer_server_disarm(struct xfer_server *s);

#endif
