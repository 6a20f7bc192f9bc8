/* SPDX-License-Identifier: MIT */
/*
 * control.h - the control plane transport: the local nng REP socket
 * (ipc://, SO_PEERCRED) with contexts.
 *
 * nng's threads never touch daemon state: each received request and each
 * pipe event is queued and the libuv loop is woken with uv_async_send; the
 * loop drains the queue fully and answers with control_reply().  Requests
 * of one connection are answered in any order (one nng context each).
 *
 * The listener has a connection limit.  A connection over it is
 * closed before it is added (NNG_PIPE_EV_ADD_PRE), so it never reaches the
 * loop and never holds a place; the refusal is logged, rate-limited, with
 * the peer named.
 */
#ifndef FPGAD_CONTROL_H
#define FPGAD_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "control/peer.h"

struct control;
struct control_ctx;

struct control_handlers {
	void *user;
	void (*connected)(void *user, const struct peer *p);
	void (*disconnected)(void *user, uint32_t pipe_id);
	/* Must end with exactly one control_reply() for @ctx. */
	void (*request)(void *user, struct control_ctx *ctx,
			const struct peer *p, const void *buf, size_t len);
};

struct control_options {
	const char *local_url;		/* ipc://... */
	unsigned socket_mode;
	gid_t socket_gid;		/* (gid_t)-1 = leave as is */
	size_t max_message;		/* request body, bytes */
	unsigned max_clients;		/* connections at once */
};

/*
 * nng's REQ/REP header ahead of the body: 4 bytes per hop, at most 8 hops
 * (NNG_OPT_MAXTTL's default).  The receive limit is max_message plus this,
 * so that max_message is the body's limit; a body above max_message that
 * nng lets through is refused by the request path with STATUS_LIMIT.
 */
#define CONTROL_HEADER_MAX (4 * 8)

int control_start(uv_loop_t *loop, const struct control_options *opt,
		  const struct control_handlers *h, struct control **ret_ctl);
/* Stops listening, cancels what is in flight; accepts NULL. */
void control_stop(struct control *ctl);

/* Send @len bytes as the reply to the request that gave @ctx. */
void control_reply(struct control_ctx *ctx, const void *buf, size_t len);
/* Close one connection (e.g. when a client exceeds a limit). */
void control_close_pipe(struct control *ctl, uint32_t pipe_id);
/* New connection limits (reload); connections already open stay. */
void control_set_limits(struct control *ctl, const struct control_options *opt);

#endif
