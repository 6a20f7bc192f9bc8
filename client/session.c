// SPDX-License-Identifier: MIT
/*
 * session.c - libfpgad's session with fpgad: Hello, once per connection,
 * and the session restored after fpgad came back (fpgad_set_reconnect):
 * a new connection greeted, every open channel whose lease is gone leased
 * again, the transfer queue opened again and every buffer registered
 * again.  That is one operation (session_restore), run from one place
 * (session_lost); the calls that found their lease or queue gone only see
 * its result: -ESTALE, once, for what came back.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "client_internal.h"
#include "clock.h"

/* Restoring: the pause between attempts, and their round trips at most. */
#define SESSION_RETRY_MS 50
#define SESSION_RT_MAX_MS (10 * SESSION_RETRY_MS)

int session_hello(fpgad_client *c)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__Hello h = FPGAD__HELLO__INIT;
	Fpgad__Response *resp;
	int r;

	if (reconnect_conn_alive(c, c->greeted_pipe))
		return 0;
	h.version = FPGAD_PROTOCOL_VERSION;
	h.min_version = FPGAD_PROTOCOL_MIN_VERSION;
	h.software = "libfpgad " FPGAD_VERSION;
	req.body_case = FPGAD__REQUEST__BODY_HELLO;
	req.hello = &h;
	r = conn_request(c, &req, FPGAD__RESPONSE__BODY_HELLO, &resp);
	if (r < 0)
		return r;
	snprintf(c->server, sizeof(c->server), "%s", resp->hello->software);
	fpgad__response__free_unpacked(resp, NULL);
	c->greeted_pipe = c->reply_pipe;
	return 0;
}

bool session_not_back(int r)
{
	return r == -ETIMEDOUT || r == -ECONNREFUSED || r == -EPIPE ||
	       r == -ECONNRESET || r == -EAGAIN;
}

/* The transfer queue again, and every buffer registered on it. */
static int restore_queue(struct xfer_ctx *xf)
{
	int r = xfer_open(xf);

	for (fpgad_buffer *b = xf->buffers; b && r == 0; b = b->next)
		r = xfer_ctx_register(xf->c, b);
	if (r)
		xfer_lose(xf);
	else
		xf->restored = true;
	return r;
}

/*
 * One attempt: Hello on the new connection, then whatever is gone.  An
 * error that says fpgad is not back ends it (the next attempt goes on
 * from there); any other is kept and the rest restored: the first of
 * them, or 0.
 */
static int restore_once(fpgad_client *c)
{
	struct xfer_ctx *xf = c->xf;
	int r = session_hello(c), err = 0;

	if (r)
		return r;
	for (fpgad_channel *ch = c->channels; ch; ch = ch->next) {
		if (ch->cons && ch->lease_id && !lease_gone(ch))
			continue;
		r = lease_renew(ch);
		if (session_not_back(r))
			return r;
		if (r == 0)
			conn_log(c, FPGAD_LOG_INFO,
				 "channel %s: reopened after fpgad came back",
				 ch->info.name);
		err = err ? err : r;
	}
	if (xf && (xf->lost || (xf->q && xfer_gone(xf, true)))) {
		/* What was outstanding completes with -EPIPE. */
		xfer_lose(xf);
		r = restore_queue(xf);
		if (session_not_back(r))
			return r;
		err = err ? err : r;
	}
	return err;
}

/*
 * Until @timeout_ms (-1 = no limit) runs out: short round trips, nng
 * redialing in the background meanwhile, and a new socket when the
 * dialer stopped bringing one back.  A request that timed out goes again,
 * as it was, and fpgad answers it from its cache if it granted it.
 */
static int session_restore(fpgad_client *c, int timeout_ms)
{
	uint64_t deadline = clock_deadline_ns(timeout_ms);
	int r;

	for (;;) {
		uint64_t now = clock_now_ns();
		int left = deadline ? (int)((deadline > now ? deadline - now : 0) /
					    CLOCK_NS_PER_MS) : SESSION_RT_MAX_MS;

		reconnect_set_timeouts(c, left < SESSION_RT_MAX_MS ? left + 1 :
					  SESSION_RT_MAX_MS);
		r = restore_once(c);
		if (!session_not_back(r))
			break;
		reconnect_attempt_failed(c);
		if (deadline && clock_now_ns() + SESSION_RETRY_MS *
		    CLOCK_NS_PER_MS >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		usleep(SESSION_RETRY_MS * 1000);
	}
	reconnect_set_timeouts(c, c->timeout_ms);
	return r;
}

int session_lost(fpgad_client *c, bool *restored, int timeout_ms)
{
	int r;

	if (!c->reconnect)
		return -EPIPE;
	r = session_restore(c, timeout_ms);
	if (*restored) {
		*restored = false;
		return -ESTALE;
	}
	return r ? r : -EPIPE;
}
