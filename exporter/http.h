/* SPDX-License-Identifier: MIT */
/*
 * http.h - the metrics listener: HTTP/1.1 on libuv, GET (and HEAD) on one
 * path, the Prometheus text from upstream_scrape() (run on libuv's thread
 * pool, so a slow fpgad never stalls the loop).
 *
 * It is written for hostile peers: a request's header must arrive whole
 * within request_ms of its first byte (no matter how it is dripped) and
 * fit in HTTP_HEADER_MAX bytes; a connection with no request in progress
 * is closed after idle_ms; connections beyond max, or beyond per_address
 * from one address, are closed as they are accepted.  Every refusal and
 * closing is logged, rate-limited.  Anything but GET or HEAD on the path
 * gets 405, another path 404, a malformed request 400, and the
 * connection closes.
 */
#ifndef FPGAD_EXPORTER_HTTP_H
#define FPGAD_EXPORTER_HTTP_H

#include <stddef.h>
#include <uv.h>

#define HTTP_HEADER_MAX 8192

struct http;
struct upstream;

struct http_options {
	const char *url;		/* http://ADDRESS:PORT/PATH */
	unsigned max_clients;		/* connections at once */
	unsigned max_per_address;	/* ... from one address, 0 = any */
	unsigned idle_ms;		/* no request so long: closed, 0 = never */
	unsigned request_ms;		/* a header not whole so long: closed */
};

/*
 * Whether @url is http://ADDRESS:PORT/PATH: ADDRESS an IPv4 address, an
 * [IPv6 address] or a host name, PORT 0-65535, PATH of letters, digits
 * and / - . _ ~.  -EINVAL with what is wrong in @err.
 */
int http_check_url(const char *url, char *err, size_t len);
int http_start(uv_loop_t *loop, const struct http_options *opt,
	       struct upstream *up, struct http **ret_h);
/* http://ADDRESS:PORT/PATH with the port bound. */
const char *http_url(const struct http *h);
/* Close the listener and every connection; the loop finishes the closing. */
void http_stop(struct http *h);

#endif
