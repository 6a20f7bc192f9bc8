// SPDX-License-Identifier: MIT
/*
 * remote.c - the remote status listener (remote.h).
 *
 * nng 1.5 (Debian 12's) stops a listener for good when a peer's
 * connection fails during the SP header exchange in a way that reads as
 * NNG_ECLOSED (a peer that half-closes, then resets: nng issue #1518);
 * any host that reaches the port can do it.  A watch thread dials the
 * listener every REMOTE_PROBE_EVERY_MS: when no connection at all reached
 * the socket (ADD_PRE) within REMOTE_PROBE_WAIT_MS of a probe, the
 * listener is closed and made again on the same address and port (its
 * connections end with it: each carries one status request at a time).
 */
#include <errno.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <nng/supplemental/tls/tls.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "addr.h"
#include "errmap.h"
#include "log.h"
#include "remote.h"
#include "upstream.h"

#define REMOTE_WORKERS 4
/* nng's REQ/REP header ahead of the body: 4 bytes a hop, 8 hops at most. */
#define REMOTE_HEADER_MAX (4 * 8)
#define REMOTE_PROBE_EVERY_MS 500
#define REMOTE_PROBE_WAIT_MS 1500

struct remote {
	nng_socket sock;
	bool open;
	nng_listener l;
	char bound[300];
	const char *scheme;		/* "tcp" or "tls+tcp", for logs */
	size_t max_message;
	struct upstream *up;
	pthread_t workers[REMOTE_WORKERS];
	unsigned n_workers;
	struct log_limit refused;

	/* The listener's watch (above). */
	const char *tls_cert_key;
	char probe[300];		/* the URL it dials */
	atomic_uint added;		/* connections that reached the socket */
	atomic_bool stop;
	bool listening, watching;
	pthread_t watch;
};

/* "tcp 192.0.2.7:40512": the peer that sent @msg. */
static void msg_peer(const struct remote *r, nng_msg *msg, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	nng_sockaddr na;

	if (nng_pipe_get_addr(nng_msg_get_pipe(msg), NNG_OPT_REMADDR, &na) != 0 ||
	    addr_from_nng(&na, &ss) < 0 ||
	    addr_format((struct sockaddr *)&ss, r->scheme, buf, len) < 0)
		snprintf(buf, len, "a remote peer (address unknown)");
}

/* Answer @msg, a request, in place; false when nothing can be sent. */
static bool answer(struct remote *r, nng_msg *msg)
{
	char why[256], name[ADDR_NAME_MAX];
	void *reply;
	size_t len;

	if (upstream_relay(r->up, nng_msg_body(msg), nng_msg_len(msg),
			   r->max_message, &reply, &len, why, sizeof(why)) < 0)
		return false;
	if (why[0]) {
		msg_peer(r, msg, name, sizeof(name));
		log_limited(&r->refused, LOG_NOTICE, "remote: %s: %s", name, why);
	}
	nng_msg_clear(msg);
	if (nng_msg_append(msg, reply, len) != 0) {
		free(reply);
		return false;
	}
	free(reply);
	return true;
}

static void *worker(void *arg)
{
	struct remote *r = arg;
	nng_aio *aio;
	nng_ctx ctx;
	nng_msg *msg;
	int rv;

	if (nng_aio_alloc(&aio, NULL, NULL) != 0)
		return NULL;
	if (nng_ctx_open(&ctx, r->sock) != 0) {
		nng_aio_free(aio);
		return NULL;
	}
	for (;;) {
		nng_ctx_recv(ctx, aio);
		nng_aio_wait(aio);
		rv = nng_aio_result(aio);
		if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
			break;
		if (rv)
			continue;
		msg = nng_aio_get_msg(aio);
		if (!answer(r, msg)) {
			nng_msg_free(msg);
			continue;
		}
		nng_aio_set_msg(aio, msg);
		nng_ctx_send(ctx, aio);
		nng_aio_wait(aio);
		rv = nng_aio_result(aio);
		if (rv)
			nng_msg_free(nng_aio_get_msg(aio));
		if (rv == NNG_ECLOSED || rv == NNG_ECANCELED)
			break;
	}
	nng_ctx_close(ctx);
	nng_aio_free(aio);
	return NULL;
}

static void on_added(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct remote *r = arg;

	(void)p;
	(void)ev;
	atomic_fetch_add(&r->added, 1);
}

/* Listen on @url (tls+tcp: with r->tls_cert_key); a failure is logged. */
static int listen_on(struct remote *r, const char *url)
{
	int rv = nng_listener_create(&r->l, r->sock, url);

	if (rv) {
		log_err("remote: cannot listen on %s: %s", url, nng_strerror(rv));
		return rv;
	}
	if (strncmp(url, "tls+", 4) == 0) {
		rv = nng_listener_set_string(r->l, NNG_OPT_TLS_CERT_KEY_FILE,
					     r->tls_cert_key ? r->tls_cert_key : "");
		if (rv) {
			log_err("remote: %s: cannot use %s as certificate and key: %s",
				url, r->tls_cert_key ? r->tls_cert_key : "(none)",
				nng_strerror(rv));
			nng_listener_close(r->l);
			return rv;
		}
	}
	rv = nng_listener_start(r->l, 0);
	if (rv) {
		log_err("remote: cannot listen on %s: %s", url, nng_strerror(rv));
		nng_listener_close(r->l);
		return rv;
	}
	r->listening = true;
	return 0;
}

/* The URL the watch dials: the bound one, a wildcard address as loopback. */
static void probe_url(struct remote *r)
{
	const char *host = strstr(r->bound, "://"), *colon = strrchr(r->bound, ':');
	const char *loop = NULL;

	snprintf(r->probe, sizeof(r->probe), "%s", r->bound);
	if (!host || !colon || colon < host + 3)
		return;
	host += 3;
	if (colon == host || (colon - host == 7 && !strncmp(host, "0.0.0.0", 7)) ||
	    (colon - host == 1 && *host == '*'))
		loop = "127.0.0.1";
	else if (colon - host == 4 && !strncmp(host, "[::]", 4))
		loop = "[::1]";
	if (loop)
		snprintf(r->probe, sizeof(r->probe), "%.*s%s%s",
			 (int)(host - r->bound), r->bound, loop, colon);
}

/* Sleep @ms in short steps; false once told to stop. */
static bool nap(struct remote *r, unsigned ms)
{
	const struct timespec step = { 0, 50 * 1000000L };

	for (unsigned t = 0; t < ms; t += 50) {
		if (atomic_load(&r->stop))
			return false;
		nanosleep(&step, NULL);
	}
	return !atomic_load(&r->stop);
}

/* One probe: did any connection reach the socket while it dialed? */
static bool probe_answered(struct remote *r)
{
	unsigned before = atomic_load(&r->added);
	nng_dialer d;
	nng_socket ps;
	bool seen = false;

	if (nng_req0_open(&ps) != 0)
		return true;	/* no probe now: nothing learnt */
	if (nng_dialer_create(&d, ps, r->probe) == 0 &&
	    (strncmp(r->probe, "tls+", 4) != 0 ||
	     nng_dialer_set_int(d, NNG_OPT_TLS_AUTH_MODE, NNG_TLS_AUTH_MODE_NONE) == 0))
		nng_dialer_start(d, NNG_FLAG_NONBLOCK);
	for (unsigned t = 0; !seen && t < REMOTE_PROBE_WAIT_MS; t += 50) {
		seen = atomic_load(&r->added) != before;
		if (!seen && !nap(r, 50))
			break;
	}
	nng_close(ps);
	return seen || atomic_load(&r->stop);
}

static void *watch(void *arg)
{
	struct remote *r = arg;

	while (nap(r, REMOTE_PROBE_EVERY_MS)) {
		if (probe_answered(r))
			continue;
		log_warn("remote: the listener on %s stopped accepting connections; listening anew", r->bound);
		if (r->listening)
			nng_listener_close(r->l);
		r->listening = false;
		if (listen_on(r, r->bound))
			log_notice("remote: trying again in %u ms", REMOTE_PROBE_EVERY_MS);
	}
	return NULL;
}

/* @url with the port the listener holds (it differs for port 0). */
static void bound_url(struct remote *r, const char *url)
{
	const char *colon = strrchr(url, ':');
	int port;

	snprintf(r->bound, sizeof(r->bound), "%s", url);
	if (colon && nng_listener_get_int(r->l, NNG_OPT_TCP_BOUND_PORT, &port) == 0)
		snprintf(r->bound, sizeof(r->bound), "%.*s:%d",
			 (int)(colon - url), url, port);
}

/* Hand the listening socket's address to the accept guard. */
static void guard(struct remote *r, const struct remote_options *opt)
{
	struct sockaddr_storage ss;
	nng_sockaddr na;

	if (nng_listener_get_addr(r->l, NNG_OPT_LOCADDR, &na) != 0 ||
	    addr_from_nng(&na, &ss) < 0) {
		log_warn("remote: cannot read the listening address: connections are not limited");
		return;
	}
	accept_guard((struct sockaddr *)&ss, sizeof(ss), &opt->limits, "remote");
	if (!accept_guard_in_effect())
		log_warn("remote: nng does not call the accept guard (accept is not exported): connections are not limited");
}

int remote_start(const struct remote_options *opt, struct upstream *up,
		 struct remote **ret_r)
{
	struct remote *r = calloc(1, sizeof(*r));
	int rv;

	if (!r)
		return -ENOMEM;
	r->up = up;
	r->max_message = opt->max_message;
	r->scheme = strncmp(opt->url, "tls+", 4) == 0 ? "tls+tcp" : "tcp";
	log_limit_init(&r->refused, "remote: refused requests");
	rv = nng_rep0_open(&r->sock);
	if (rv)
		goto fail;
	r->open = true;
	rv = nng_socket_set_size(r->sock, NNG_OPT_RECVMAXSZ,
				 opt->max_message + REMOTE_HEADER_MAX);
	if (rv)
		goto fail;
	rv = nng_pipe_notify(r->sock, NNG_PIPE_EV_ADD_PRE, on_added, r);
	if (rv)
		goto fail;
	r->tls_cert_key = opt->tls_cert_key;
	rv = listen_on(r, opt->url);
	if (rv) {
		remote_stop(r);
		return errmap_nng(rv);
	}
	bound_url(r, opt->url);
	probe_url(r);
	guard(r, opt);
	rv = pthread_create(&r->watch, NULL, watch, r);
	if (rv) {
		log_err("remote: cannot start the listener's watch: %s", strerror(rv));
		remote_stop(r);
		return -rv;
	}
	r->watching = true;
	for (; r->n_workers < REMOTE_WORKERS; r->n_workers++) {
		rv = pthread_create(&r->workers[r->n_workers], NULL, worker, r);
		if (rv) {
			log_err("remote: cannot start a worker thread: %s", strerror(rv));
			remote_stop(r);
			return -rv;
		}
	}
	*ret_r = r;
	return 0;
fail:
	log_err("remote: cannot listen on %s: %s", opt->url, nng_strerror(rv));
	remote_stop(r);
	return errmap_nng(rv);
}

const char *remote_url(const struct remote *r)
{
	return r->bound;
}

void remote_stop(struct remote *r)
{
	if (!r)
		return;
	atomic_store(&r->stop, true);
	if (r->watching)
		pthread_join(r->watch, NULL);
	if (r->open)
		nng_close(r->sock);
	for (unsigned i = 0; i < r->n_workers; i++)
		pthread_join(r->workers[i], NULL);
	accept_guard(NULL, 0, NULL, NULL);
	log_limit_destroy(&r->refused);
	free(r);
}
