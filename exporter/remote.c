// SPDX-License-Identifier: MIT
/* remote.c - the remote status listener (remote.h). */
#include <errno.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/supplemental/tls/tls.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "addr.h"
#include "errmap.h"
#include "log.h"
#include "remote.h"
#include "upstream.h"

#define REMOTE_WORKERS 4
/* nng's REQ/REP header ahead of the body: 4 bytes a hop, 8 hops at most. */
#define REMOTE_HEADER_MAX (4 * 8)

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
	rv = nng_listener_create(&r->l, r->sock, opt->url);
	if (rv)
		goto fail;
	if (strncmp(opt->url, "tls+", 4) == 0) {
		rv = nng_listener_set_string(r->l, NNG_OPT_TLS_CERT_KEY_FILE,
					     opt->tls_cert_key ? opt->tls_cert_key : "");
		if (rv) {
			log_err("remote: %s: cannot use %s as certificate and key: %s",
				opt->url, opt->tls_cert_key ? opt->tls_cert_key : "(none)",
				nng_strerror(rv));
			remote_stop(r);
			return errmap_nng(rv);
		}
	}
	rv = nng_listener_start(r->l, 0);
	if (rv)
		goto fail;
	bound_url(r, opt->url);
	guard(r, opt);
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
	if (r->open)
		nng_close(r->sock);
	for (unsigned i = 0; i < r->n_workers; i++)
		pthread_join(r->workers[i], NULL);
	accept_guard(NULL, 0, NULL, NULL);
	log_limit_destroy(&r->refused);
	free(r);
}
