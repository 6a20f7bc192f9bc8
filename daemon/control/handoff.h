/* SPDX-License-Identifier: MIT */
/*
 * handoff.h - the socket through which a lessee receives its rings' file
 * descriptors (proto/fpgad.proto, HandoffRequest).
 *
 * nng's ipc transport cannot carry file descriptors, so fpgad listens on a
 * second AF_UNIX socket (SOCK_SEQPACKET) beside the control socket, with
 * the same mode and group.  A lessee connects and sends the one-time token
 * OpenChannel gave it; the claim callback checks the token against the
 * socket's peer credentials and names the descriptors; fpgad sends them
 * with SCM_RIGHTS and hands the connection to the lease as its link: the
 * lessee sees it hang up when the lease ends or fpgad dies.  The same way
 * a client fetches its transfer queue (OpenXferQueue), and hands fpgad the
 * memfd of a host buffer (RegisterBuffer): that one travels with the
 * request, and the reply carries none.
 *
 * Runs on the libuv loop thread.  A connection that sends nothing within
 * HANDOFF_TIMEOUT_MS is closed; at most HANDOFF_MAX_PENDING are served at
 * once, and at most HANDOFF_MAX_PENDING_UID from one uid (so that one
 * user's idle connections cannot shut out every other user's handoffs);
 * the rest are closed when accepted.
 */
#ifndef FPGAD_HANDOFF_H
#define FPGAD_HANDOFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "protocol.h"

#define HANDOFF_TOKEN_SIZE PROTOCOL_TOKEN_SIZE
#define HANDOFF_MAX_FDS 2
#define HANDOFF_MAX_IN_FDS 2
#define HANDOFF_TIMEOUT_MS 2000
#define HANDOFF_MAX_PENDING 64
#define HANDOFF_MAX_PENDING_UID 8

struct handoff;

struct handoff_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	/*
	 * Descriptors that came with the request (SCM_RIGHTS), for a claim
	 * that takes some: it sets the ones it keeps to -1, and the handoff
	 * closes the rest.
	 */
	int *fds;
	unsigned n_fds;
};

/*
 * A one-time handoff token, the only way to a lease's, a transfer
 * queue's or a buffer's descriptors: made when one is granted, for the
 * process it was granted to, and matched once, by that process only.
 */
struct handoff_token {
	uint8_t bytes[HANDOFF_TOKEN_SIZE];
	bool valid;
};

/* A fresh token (getrandom); -EAGAIN when no random bytes can be had. */
int handoff_token_make(struct handoff_token *t);
/*
 * @token as presented by @peer against @t, granted to @pid (@uid): 0 when
 * it is @t and @peer is that process (@t is used up); -ENOENT when it is
 * another token (or @t is used); -EACCES when it is @t but another process
 * presents it (@err says whose @what it is).
 */
int handoff_token_claim(struct handoff_token *t, const uint8_t *token,
			const struct handoff_peer *peer, pid_t pid, uid_t uid,
			const char *what, char *err, size_t errlen);

/*
 * A holder of tokens (a channel's leases, the transfer plane's queues and
 * buffers): the handoff asks each in the order they were added which of
 * its objects holds a token, and routes the claim to the one that does.
 */
struct handoff_claimer {
	void *user;
	/*
	 * Which of @user's holds @token?  0 and up to HANDOFF_MAX_FDS
	 * descriptors (still owned by their holder) and an opaque target,
	 * -ENOENT when none of @user's does, or another negative errno with
	 * @err saying why.  On success @err, if set, goes in the reply (which
	 * must not be empty: a claim that sends no descriptor says something).
	 */
	int (*claim)(void *user, const uint8_t *token,
		     const struct handoff_peer *peer, int *ret_fds,
		     unsigned *ret_n_fds, void **ret_target, char *err,
		     size_t errlen);
	/* The descriptors were delivered: @fd is now @target's link. */
	void (*link)(void *user, void *target, int fd);
};

#define HANDOFF_MAX_CLAIMERS 32		/* each channel (16 at most) and the transfer plane */

int handoff_start(uv_loop_t *loop, const char *path, unsigned mode,
		  gid_t gid, struct handoff **ret_h);
/* Add a holder of tokens; -ENOSPC beyond HANDOFF_MAX_CLAIMERS. */
int handoff_add_claimer(struct handoff *h, const struct handoff_claimer *c);
/* Close the listener and every pending connection; accepts NULL. */
void handoff_stop(struct handoff *h);

#endif
