/* SPDX-License-Identifier: MIT */
/*
 * dial.h - reaching fpgad (dial.c): the TLS settings of a dialer and the
 * cause of a failed connection; not installed.
 */
#ifndef FPGAD_DIAL_H
#define FPGAD_DIAL_H

#include <nng/nng.h>

#include "client_internal.h"

/* A connection attempt starts: forget the last one's failure. */
void client_dial_begin(void);
/*
 * Verify fpgad's certificate against @ca (a PEM file; NULL or "" fails
 * with -EINVAL), under the name $FPGAD_TLS_SERVER_NAME when set, else
 * @host when not NULL (the name of a URL dialled by address), else the
 * URL's own host.
 */
int client_dial_tls_setup(fpgad_client *c, nng_dialer d, const char *ca,
			  const char *host);
/*
 * The URLs to dial for @url, at most @max of them into @out, and how many:
 * a tcp:// or tls+tcp:// URL whose host is a name gives one URL per
 * address of that name, in getaddrinfo's order, with the name in @name
 * (for the certificate); any other URL gives itself, and @name "".  nng
 * would dial only a name's first address (::1 for localhost on a stock
 * Debian, where a listener on 0.0.0.0 is not).
 */
size_t client_dial_addresses(const char *url, char (*out)[CLIENT_URL_MAX],
			     size_t max, char *name, size_t namelen);
/*
 * The dial failed with @nng_err: write its cause into c->errmsg and the
 * thread's last-failure message, and return the errno that fits
 * (-EACCES: fpgad's certificate is refused; -EPROTO: TLS on one side
 * only).
 */
int client_dial_failed(fpgad_client *c, int nng_err);
/* Set the thread's last-failure message for a connect that never dialed. */
void client_dial_set_errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Why the calling thread's last fpgad_connect() failed to dial, or "". */
const char *client_dial_errmsg(void);

#endif
