// SPDX-License-Identifier: MIT
/*
 * reconnect.c - the connection to fpgad, made and made again: the REQ
 * socket and its dialer, which nng connection (pipe) is the live one, and
 * a new socket when the dialer stopped bringing one back.
 *
 * A lease or a transfer queue belongs to the connection that carried the
 * reply granting it: the pipe of that reply, not a count of connections
 * lost so far.  libfpgad can notice that fpgad died (its handoff link
 * closes) before nng runs the callback for the old pipe; a reopen made
 * meanwhile goes out on the new pipe, and must not be taken for a lease
 * of the old one when that callback lands.
 *
 * nng's dialer redials by itself, but one that stopped doing so (nng
 * 1.5.2's can, after a storm of refused connections) would leave a client
 * waiting forever (so would a connection whose negotiation never ends, or
 * that carries no answer): while no answer came for RECONNECT_STUCK_MS with
 * no connection up, or RECONNECT_SILENT_MS with one, each failed attempt
 * gets a new socket and dialer.
 */
#include <errno.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "clock.h"
#include "dial.h"
#include "errmap.h"

/* After fpgad restarts, be back within a fraction of a second. */
#define RECONNECT_REDIAL_MIN_MS 20
#define RECONNECT_REDIAL_MAX_MS 250
/*
 * No answer for this long, redials or not: a new socket; with no
 * connection up, or with one up that answers nothing (a caller polling
 * with short timeouts waits on a slow fpgad, not on a broken connection).
 */
#define RECONNECT_STUCK_MS (4 * RECONNECT_REDIAL_MAX_MS)
#define RECONNECT_SILENT_MS (20 * RECONNECT_REDIAL_MAX_MS)

/*
 * Runs on an nng thread before a new connection carries anything: it is
 * the live one.
 */
static void on_pipe_added(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	fpgad_client *c = arg;

	(void)ev;
	atomic_store(&c->live_pipe, nng_pipe_id(p));
}

/*
 * Runs on an nng thread when a connection to fpgad is lost: every lease
 * made on it ended.  fpgad closes a connection over its listener's limit
 * before it answers anything: while Hello waits, a closed connection ends
 * the wait.
 */
static void on_pipe_gone(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	fpgad_client *c = arg;
	uint32_t id = nng_pipe_id(p);

	(void)ev;
	/* A newer connection may be up already: it stays the live one. */
	atomic_compare_exchange_strong(&c->live_pipe, &id, 0);
	pthread_mutex_lock(&c->lock);
	if (c->connecting) {
		c->refused = true;
		nng_aio_cancel(c->aio);
	}
	pthread_mutex_unlock(&c->lock);
}

/* At most this many addresses of one name are tried. */
#define DIAL_ADDRESSES 8

/*
 * A dialer for @url on c->sock, started with @flags (nng_dialer_start's);
 * tls+tcp:// verifies fpgad's certificate against $FPGAD_TLS_CA, under
 * $FPGAD_TLS_SERVER_NAME when set, else @name when not "".  Returns 0,
 * nng's error (the dialer closed), or -errno of a TLS setting refused.
 */
static int dial_one(fpgad_client *c, const char *url, const char *name,
		    int flags)
{
	nng_dialer d;
	int rv, r;

	rv = nng_dialer_create(&d, c->sock, url);
	if (rv)
		return rv;
	rv = nng_dialer_set_ms(d, NNG_OPT_RECONNMINT, RECONNECT_REDIAL_MIN_MS);
	if (rv == 0)
		rv = nng_dialer_set_ms(d, NNG_OPT_RECONNMAXT, RECONNECT_REDIAL_MAX_MS);
	if (rv == 0 && strncmp(url, "tls+", 4) == 0) {
		r = client_dial_tls_setup(c, d, getenv("FPGAD_TLS_CA"),
					  name[0] ? name : NULL);
		if (r < 0) {
			nng_dialer_close(d);
			return r;
		}
	}
	if (rv == 0)
		rv = nng_dialer_start(d, flags);
	if (rv)
		nng_dialer_close(d);
	return rv;
}

/* An error after which the name's next address is worth a try. */
static bool next_address(int nng_err)
{
	return nng_err == NNG_ECONNREFUSED || nng_err == NNG_EUNREACHABLE ||
	       nng_err == NNG_ETIMEDOUT || nng_err == NNG_EADDRINVAL;
}

/*
 * Dial c->url: the address that answered before, else each address of its
 * host in turn until one answers (client_dial_addresses); a failure is
 * explained (dial.c).
 */
static int dial(fpgad_client *c, int flags)
{
	char urls[DIAL_ADDRESSES][CLIENT_URL_MAX];
	size_t n;
	int rv = NNG_ECONNREFUSED;

	client_dial_begin();
	if (c->dial_url[0]) {
		rv = dial_one(c, c->dial_url, c->dial_name, flags);
		return rv > 0 ? client_dial_failed(c, rv) : rv;
	}
	n = client_dial_addresses(c->url, urls, DIAL_ADDRESSES, c->dial_name,
				  sizeof(c->dial_name));
	for (size_t i = 0; i < n; i++) {
		rv = dial_one(c, urls[i], c->dial_name, flags);
		if (rv == 0)
			snprintf(c->dial_url, sizeof(c->dial_url), "%s", urls[i]);
		if (rv <= 0)
			return rv;
		if (!next_address(rv))
			break;
	}
	return client_dial_failed(c, rv);
}

int reconnect_open(fpgad_client *c, bool wait)
{
	int rv, r;

	rv = nng_req0_open(&c->sock);
	if (rv)
		return errmap_nng(rv);
	c->sock_open = true;
	reconnect_set_timeouts(c, c->rt_timeout_ms ? c->rt_timeout_ms : c->timeout_ms);
	rv = nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_PRE, on_pipe_added, c);
	if (rv == 0)
		rv = nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, on_pipe_gone, c);
	if (rv)
		return errmap_nng(rv);
	r = dial(c, wait ? 0 : NNG_FLAG_NONBLOCK);
	if (r < 0)
		return r;
	c->down_since_ns = 0;
	return 0;
}

void reconnect_close(fpgad_client *c)
{
	if (c->sock_open)
		nng_close(c->sock);
	c->sock_open = false;
	atomic_store(&c->live_pipe, 0);
}

void reconnect_set_timeouts(fpgad_client *c, int timeout_ms)
{
	c->rt_timeout_ms = timeout_ms;
	nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, timeout_ms);
}

bool reconnect_conn_alive(fpgad_client *c, uint32_t conn)
{
	return conn && atomic_load(&c->live_pipe) == conn;
}

void reconnect_attempt_failed(fpgad_client *c)
{
	uint64_t now = clock_now_ns();
	unsigned long long stuck_ms;

	if (!c->sock_open) {
		if (reconnect_open(c, false) < 0)
			reconnect_close(c);
		return;
	}
	if (!c->down_since_ns) {
		c->down_since_ns = now;
		return;
	}
	stuck_ms = atomic_load(&c->live_pipe) ? RECONNECT_SILENT_MS :
						 RECONNECT_STUCK_MS;
	if (now - c->down_since_ns < stuck_ms * CLOCK_NS_PER_MS)
		return;
	conn_log(c, FPGAD_LOG_INFO, "%s: no answer for %llu ms: a new socket",
		 c->url, stuck_ms);
	reconnect_close(c);
	/* Failing, the next attempt tries again. */
	if (reconnect_open(c, false) < 0)
		reconnect_close(c);
	c->down_since_ns = now;
}
