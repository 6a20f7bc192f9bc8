/* SPDX-License-Identifier: MIT */
/*
 * remote.h - the read-only remote status listener: nng REP on tcp:// or
 * tls+tcp://, the protocol fpgactl --url tcp://HOST:PORT speaks.  Each
 * request is relayed to fpgad by libfpgad's fpgad_relay(), which decodes
 * it and lets only the read-only ones through (upstream.h); REMOTE_WORKERS
 * threads each serve one request at a time.  Connection limits are kept
 * where nng accepts (accept_guard.h).
 */
#ifndef FPGAD_EXPORTER_REMOTE_H
#define FPGAD_EXPORTER_REMOTE_H

#include <stddef.h>

#include "accept_guard.h"

struct remote;
struct upstream;

struct remote_options {
	const char *url;		/* tcp://ADDRESS:PORT or tls+tcp://... */
	const char *tls_cert_key;	/* tls+tcp: PEM, certificate and key */
	size_t max_message;		/* a request's body, bytes */
	struct accept_limits limits;
};

int remote_start(const struct remote_options *opt, struct upstream *up,
		 struct remote **ret_r);
/* The URL with the port bound (tcp://ADDRESS:0 binds one the kernel picks). */
const char *remote_url(const struct remote *r);
/* Stop listening and join the workers; accepts NULL. */
void remote_stop(struct remote *r);

#endif
