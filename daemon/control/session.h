/* SPDX-License-Identifier: MIT */
/*
 * session.h - one record per control connection (nng pipe): who the peer
 * is (SO_PEERCRED through nng), since when, and the replies to its recent
 * mutating requests, so that a resent request is answered again instead of
 * being applied twice.  A resend is the same id with the same bytes: a
 * request that reuses an id for something else is a new request, and id 0
 * (proto3's default, "no id") is never cached nor answered from the cache.
 *
 * Connection limits are the transport's (control.c): every connection
 * that reaches the loop gets a session.
 */
#ifndef FPGAD_SESSION_H
#define FPGAD_SESSION_H

#include <stdatomic.h>
#include <stdint.h>

#include "control/control.h"
#include "control/identity.h"

#define SESSION_REPLY_CACHE 8

struct cached_reply {
	uint64_t id;
	uint64_t hash;			/* of the request's bytes */
	size_t req_len;
	void *buf;			/* the reply */
	size_t len;
};

struct session {
	struct session *next;
	struct peer peer;
	struct identity who;		/* process, container, pod: at connect */
	unsigned hello_version;		/* the protocol its Hello spoke; 0 before */
	uint64_t connected_ms;		/* CLOCK_REALTIME */
	unsigned n_leases;
	uint64_t pinned;		/* ring bytes leased */
	unsigned cache_next;
	struct cached_reply cache[SESSION_REPLY_CACHE];
};

#define SESSION_REMOVED_PIPES 64

struct session_table {
	struct session *head;
	/* Changed by the loop; the metrics listener's threads read it too. */
	_Atomic unsigned count;
	/* Connections that went away recently: a late request gets none. */
	uint32_t removed[SESSION_REMOVED_PIPES];
	unsigned removed_next;
};

/*
 * The session of @p's connection, created here if the connection event
 * has not come yet (a request may come first): 0 and the session (NULL
 * for a connection already gone), or -ENOMEM.
 */
int session_get(struct session_table *t, const struct peer *p,
		struct session **ret_s);
struct session *session_find(struct session_table *t, uint32_t pipe_id);
/* The connection went away: unlink and free its session, if any. */
void session_gone(struct session_table *t, uint32_t pipe_id);
void session_table_clear(struct session_table *t);

/*
 * The reply to an earlier request @id whose bytes were @req, @req_len
 * (a resend), or NULL; always NULL for id 0.
 */
const struct cached_reply *session_cached(const struct session *s, uint64_t id,
					  const void *req, size_t req_len);
/*
 * Remember the reply @buf, @len to request @id of bytes @req, @req_len
 * (takes a copy of the reply); id 0 is not remembered.
 */
int session_cache(struct session *s, uint64_t id, const void *req,
		  size_t req_len, const void *buf, size_t len);

#endif
