// SPDX-License-Identifier: MIT
/* http.c - the metrics listener (http.h). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "addr.h"
#include "http.h"
#include "log.h"
#include "upstream.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct conn;

struct http {
	uv_loop_t *loop;
	uv_tcp_t listener;
	struct http_options opt;
	struct upstream *up;
	char path[256];
	char bound[300];
	struct conn *conns;		/* admitted, open */
	unsigned n_conns;
	unsigned handles;		/* the listener and every conn not yet freed */
	bool stopping;
	struct log_limit refused, closed;
};

struct conn {
	uv_tcp_t tcp;
	uv_timer_t timer;
	uv_work_t work;
	uv_write_t wr;
	struct http *h;
	struct conn *next, **pprev;
	char name[ADDR_NAME_MAX];
	uint8_t key[16];
	char buf[HTTP_HEADER_MAX];
	size_t len;			/* bytes in buf */
	size_t used;			/* the header being answered, in buf */
	char *out;			/* the response being written */
	char *text;			/* the scrape's, from the thread pool */
	size_t text_len;
	bool fpgad_up;
	bool head, keep_alive;
	bool busy;			/* a scrape or a write in flight */
	bool closing;
	unsigned open_handles;
};

/* The host of an http URL, from @host to @end: a name or an IPv4 address. */
static bool host_name_valid(const char *host, const char *end)
{
	for (const char *p = host; p < end; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-')
			return false;
	return end > host;
}

/* An [IPv6 address] at @host; where it ends (past ']') or NULL. */
static const char *ipv6_literal_end(const char *host)
{
	const char *end = strchr(host, ']');
	struct in6_addr a;
	char buf[INET6_ADDRSTRLEN];

	if (!end || (size_t)(end - host - 1) >= sizeof(buf))
		return NULL;
	memcpy(buf, host + 1, (size_t)(end - host - 1));
	buf[end - host - 1] = '\0';
	return inet_pton(AF_INET6, buf, &a) == 1 ? end + 1 : NULL;
}

/*
 * --metrics URL: http.h.  PORT 0: a free port the kernel picks, logged at
 * start.  Whether the address can be bound is known at start.
 */
int http_check_url(const char *url, char *err, size_t len)
{
	const char *host = url + 7, *end, *p;
	unsigned long port;
	char *pend;

	if (strncmp(url, "https://", 8) == 0)
		return snprintf(err, len, "--metrics '%s': metrics are served over plain http only (a TLS proxy in front can serve https)",
				url), -EINVAL;
	if (strncmp(url, "http://", 7) != 0)
		return snprintf(err, len, "--metrics '%s' is not http://ADDRESS:PORT/PATH (such as http://0.0.0.0:9110/metrics)",
				url), -EINVAL;
	if (*host == '[') {
		end = ipv6_literal_end(host);
		if (!end)
			return snprintf(err, len, "--metrics '%s': the address in [] is not an IPv6 address",
					url), -EINVAL;
	} else {
		end = host + strcspn(host, ":/");
		if (end == host)
			return snprintf(err, len, "--metrics '%s' has no address (0.0.0.0 for every IPv4 address, [::] for every address)",
					url), -EINVAL;
		if (!host_name_valid(host, end))
			return snprintf(err, len, "--metrics '%s': '%.*s' is not an IPv4 address, an [IPv6 address] or a host name",
					url, (int)(end - host), host), -EINVAL;
	}
	if (*end != ':' || !isdigit((unsigned char)end[1]))
		return snprintf(err, len, "--metrics '%s' has no port (ADDRESS:PORT)", url), -EINVAL;
	p = end + 1;
	errno = 0;
	port = strtoul(p, &pend, 10);
	if (errno || port > 65535 || (*pend && *pend != '/'))
		return snprintf(err, len, "--metrics '%s': port '%.*s' is not a number from 0 to 65535",
				url, (int)strcspn(p, "/"), p), -EINVAL;
	if (*pend != '/')
		return snprintf(err, len, "--metrics '%s' has no path after the port (such as /metrics)",
				url), -EINVAL;
	for (p = pend; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("/-._~", *p))
			return snprintf(err, len, "--metrics '%s': a path holds letters, digits and / - . _ ~ only",
					url), -EINVAL;
	return 0;
}

static void http_release(struct http *h)
{
	if (--h->handles)
		return;
	log_limit_destroy(&h->refused);
	log_limit_destroy(&h->closed);
	free(h);
}

static void conn_handle_closed(uv_handle_t *handle)
{
	struct conn *c = handle->data;

	if (--c->open_handles)
		return;
	free(c->out);
	free(c->text);
	http_release(c->h);
	free(c);
}

/* Close @c; it is freed once its handles are (and no work of it runs). */
static void conn_close(struct conn *c)
{
	if (c->closing)
		return;
	c->closing = true;
	if (c->pprev) {
		*c->pprev = c->next;
		if (c->next)
			c->next->pprev = c->pprev;
		c->pprev = NULL;
		c->h->n_conns--;
	}
	if (c->busy)
		return;		/* the work's or the write's end closes it */
	uv_close((uv_handle_t *)&c->tcp, conn_handle_closed);
	uv_close((uv_handle_t *)&c->timer, conn_handle_closed);
}

/* A busy @c's work or write ended: close it now if that was asked. */
static bool conn_idle_again(struct conn *c)
{
	c->busy = false;
	if (!c->closing)
		return false;
	c->closing = false;
	conn_close(c);
	return true;
}

static void on_timer(uv_timer_t *t)
{
	struct conn *c = t->data;

	if (c->len)
		log_limited(&c->h->closed, LOG_NOTICE,
			    "metrics: closing %s: a request header not whole within %u ms",
			    c->name, c->h->opt.request_ms);
	else
		log_limited(&c->h->closed, LOG_INFO,
			    "metrics: closing %s: no request for %u ms",
			    c->name, c->h->opt.idle_ms);
	conn_close(c);
}

/* Waiting for a request: the idle timeout, when there is one. */
static void wait_request(struct conn *c)
{
	uv_timer_stop(&c->timer);
	if (c->h->opt.idle_ms)
		uv_timer_start(&c->timer, on_timer, c->h->opt.idle_ms, 0);
}

static void process(struct conn *c);
static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf);
static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void on_written(uv_write_t *wr, int status)
{
	struct conn *c = wr->data;

	free(c->out);
	c->out = NULL;
	if (conn_idle_again(c))
		return;
	if (status < 0 || !c->keep_alive) {
		conn_close(c);
		return;
	}
	/* A request sent behind this one (pipelined) is next. */
	memmove(c->buf, c->buf + c->used, c->len - c->used);
	c->len -= c->used;
	c->used = 0;
	if (c->len) {
		uv_timer_start(&c->timer, on_timer, c->h->opt.request_ms, 0);
		process(c);
		return;
	}
	wait_request(c);
	uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
}

/* Send @status with @body (@len bytes; not for HEAD) and @extra headers. */
static void respond(struct conn *c, const char *status, const char *type,
		    const char *extra, const char *body, size_t len)
{
	uv_buf_t b;
	int n;

	n = asprintf(&c->out,
		     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: %s\r\n\r\n%.*s",
		     status, type, len, extra, c->keep_alive ? "keep-alive" : "close",
		     c->head ? 0 : (int)len, body);
	if (n < 0) {
		c->out = NULL;
		conn_close(c);
		return;
	}
	b = uv_buf_init(c->out, (unsigned)n);
	c->wr.data = c;
	c->busy = true;
	if (uv_write(&c->wr, (uv_stream_t *)&c->tcp, &b, 1, on_written) < 0) {
		c->busy = false;
		conn_close(c);
	}
}

/* An error: said in a line of text, and the connection closes after it. */
static void respond_error(struct conn *c, const char *status, const char *extra,
			  const char *fmt, const char *arg)
{
	char body[256];
	int n = snprintf(body, sizeof(body), fmt, arg);

	c->keep_alive = false;
	respond(c, status, "text/plain; charset=utf-8", extra, body,
		n < 0 ? 0 : (size_t)n < sizeof(body) ? (size_t)n : sizeof(body) - 1);
}

static void scrape_work(uv_work_t *w)
{
	struct conn *c = w->data;

	free(c->text);
	c->text = NULL;
	if (upstream_scrape(c->h->up, &c->text, &c->text_len, &c->fpgad_up) < 0)
		c->text = NULL;
}

static void scrape_done(uv_work_t *w, int status)
{
	struct conn *c = w->data;

	if (conn_idle_again(c))
		return;
	if (status < 0 || !c->text) {
		respond_error(c, "500 Internal Server Error", "", "%s\n",
			      "out of memory");
		return;
	}
	respond(c, "200 OK", METRICS_CONTENT_TYPE, "", c->text, c->text_len);
	free(c->text);
	c->text = NULL;
}

/* Whether the header (@hdr, up to its blank line) asks to close. */
static bool asks_close(const char *hdr)
{
	for (const char *p = strstr(hdr, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
		const char *v = p + 2;

		if (strncasecmp(v, "connection:", 11) != 0)
			continue;
		v += 11;
		v += strspn(v, " \t");
		return strncasecmp(v, "close", 5) == 0;
	}
	return false;
}

/* buf holds a whole header of c->used bytes: answer it. */
static void answer(struct conn *c)
{
	char method[16], target[512], version[16];
	char *hdr = c->buf, *q;

	c->buf[c->used - 1] = '\0';	/* the last '\n' of the blank line */
	c->head = false;
	c->keep_alive = false;
	if (sscanf(hdr, "%15[A-Z] %511[^ \r\n] %15[^\r\n]", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7) != 0 || !(q = strstr(hdr, "\r\n")) ||
	    (size_t)(q - hdr) != strlen(method) + strlen(target) + strlen(version) + 2) {
		respond_error(c, "400 Bad Request", "", "%s\n",
			      "not an HTTP/1.x request line");
		return;
	}
	c->head = strcmp(method, "HEAD") == 0;
	c->keep_alive = strcmp(version, "HTTP/1.1") == 0 && !asks_close(hdr);
	if (strcmp(method, "GET") != 0 && !c->head) {
		respond_error(c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n",
			      "%s: only GET and HEAD are served\n", method);
		return;
	}
	q = strchr(target, '?');
	if (q)
		*q = '\0';
	if (strcmp(target, c->h->path) != 0) {
		respond_error(c, "404 Not Found", "", "metrics are at %s\n", c->h->path);
		return;
	}
	c->busy = true;
	c->work.data = c;
	if (uv_queue_work(c->h->loop, &c->work, scrape_work, scrape_done) < 0) {
		c->busy = false;
		respond_error(c, "500 Internal Server Error", "", "%s\n",
			      "cannot queue the scrape");
	}
}

/* Answer the header in buf when it is whole. */
static void process(struct conn *c)
{
	char *end;

	c->buf[c->len < HTTP_HEADER_MAX ? c->len : HTTP_HEADER_MAX - 1] = '\0';
	end = memmem(c->buf, c->len, "\r\n\r\n", 4);
	if (!end) {
		if (c->len < HTTP_HEADER_MAX - 1)
			return;
		uv_read_stop((uv_stream_t *)&c->tcp);
		uv_timer_stop(&c->timer);
		c->len = 0;
		respond_error(c, "431 Request Header Fields Too Large", "",
			      "a request header is %s bytes at most\n", "8191");
		return;
	}
	uv_read_stop((uv_stream_t *)&c->tcp);
	uv_timer_stop(&c->timer);
	c->used = (size_t)(end - c->buf) + 4;
	answer(c);
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf)
{
	struct conn *c = handle->data;
	size_t room = HTTP_HEADER_MAX - 1 - c->len;

	(void)suggested;
	*buf = uv_buf_init(c->buf + c->len, (unsigned)room);
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct conn *c = s->data;

	(void)buf;
	if (n == 0)
		return;
	if (n < 0) {
		conn_close(c);
		return;
	}
	/* A request's first bytes: its header must be whole within request_ms. */
	if (c->len == 0 && c->h->opt.request_ms) {
		uv_timer_stop(&c->timer);
		uv_timer_start(&c->timer, on_timer, c->h->opt.request_ms, 0);
	}
	c->len += (size_t)n;
	process(c);
}

static void refused_closed(uv_handle_t *handle)
{
	struct conn *c = handle->data;

	http_release(c->h);
	free(c);
}

/* Connections from the address @key now. */
static unsigned conns_from(const struct http *h, const uint8_t key[16])
{
	unsigned n = 0;

	for (const struct conn *c = h->conns; c; c = c->next)
		n += memcmp(c->key, key, 16) == 0;
	return n;
}

static void on_connection(uv_stream_t *server, int status)
{
	struct http *h = server->data;
	struct sockaddr_storage ss = { 0 };
	int sl = sizeof(ss);
	struct conn *c;
	unsigned from;

	if (status < 0 || h->stopping)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	c->h = h;
	h->handles++;
	uv_tcp_init(h->loop, &c->tcp);
	c->tcp.data = c;
	if (uv_accept(server, (uv_stream_t *)&c->tcp) < 0) {
		uv_close((uv_handle_t *)&c->tcp, refused_closed);
		return;
	}
	if (uv_tcp_getpeername(&c->tcp, (struct sockaddr *)&ss, &sl) < 0)
		ss.ss_family = AF_UNSPEC;
	if (addr_format((struct sockaddr *)&ss, "tcp", c->name, sizeof(c->name)) < 0)
		snprintf(c->name, sizeof(c->name), "a tcp peer");
	addr_key(&ss, c->key);
	from = conns_from(h, c->key);
	if (h->n_conns >= h->opt.max_clients ||
	    (h->opt.max_per_address && from >= h->opt.max_per_address)) {
		if (h->n_conns >= h->opt.max_clients)
			log_limited(&h->refused, LOG_WARNING,
				    "metrics: refusing %s: %u connections on the metrics listener already (--metrics-max-clients %u)",
				    c->name, h->n_conns, h->opt.max_clients);
		else
			log_limited(&h->refused, LOG_WARNING,
				    "metrics: refusing %s: %u connections from its address already (--metrics-max-per-address %u)",
				    c->name, from, h->opt.max_per_address);
		uv_close((uv_handle_t *)&c->tcp, refused_closed);
		return;
	}
	uv_timer_init(h->loop, &c->timer);
	c->timer.data = c;
	c->open_handles = 2;
	c->next = h->conns;
	if (h->conns)
		h->conns->pprev = &c->next;
	c->pprev = &h->conns;
	h->conns = c;
	h->n_conns++;
	wait_request(c);
	if (uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read) < 0)
		conn_close(c);
}

/* Bind @host (a name, an IPv4 or an [IPv6] literal) and @port. */
static int bind_listener(struct http *h, const char *host, size_t hlen,
			 const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;
	char name[256];
	int r;

	if (*host == '[') {
		host++;
		hlen -= 2;
	}
	snprintf(name, sizeof(name), "%.*s", (int)hlen, host);
	r = getaddrinfo(name, port, &hints, &ai);
	if (r) {
		log_err("metrics: cannot resolve %s: %s", name, gai_strerror(r));
		return -EADDRNOTAVAIL;
	}
	r = uv_tcp_bind(&h->listener, ai->ai_addr, 0);
	freeaddrinfo(ai);
	if (r == 0)
		r = uv_listen((uv_stream_t *)&h->listener, 128, on_connection);
	if (r < 0)
		log_err("metrics: cannot listen on %s: %s", h->opt.url, uv_strerror(r));
	return r;
}

/* h->bound: the URL with the port the listener holds. */
static void bound_url(struct http *h, const char *host, size_t hlen)
{
	struct sockaddr_storage ss;
	int sl = sizeof(ss);
	unsigned port = 0;

	if (uv_tcp_getsockname(&h->listener, (struct sockaddr *)&ss, &sl) == 0)
		port = ntohs(ss.ss_family == AF_INET6 ?
				     ((struct sockaddr_in6 *)&ss)->sin6_port :
				     ((struct sockaddr_in *)&ss)->sin_port);
	snprintf(h->bound, sizeof(h->bound), "http://%.*s:%u%s", (int)hlen, host,
		 port, h->path);
}

static void listener_closed(uv_handle_t *handle)
{
	http_release(handle->data);
}

int http_start(uv_loop_t *loop, const struct http_options *opt,
	       struct upstream *up, struct http **ret_h)
{
	const char *host, *colon, *slash;
	char err[512], port[8];
	struct http *h;
	int r;

	if (http_check_url(opt->url, err, sizeof(err)) < 0) {
		log_err("%s", err);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->loop = loop;
	h->opt = *opt;
	h->up = up;
	log_limit_init(&h->refused, "metrics: refused connections");
	log_limit_init(&h->closed, "metrics: connections closed");
	host = opt->url + 7;
	colon = *host == '[' ? strchr(host, ']') + 1 : host + strcspn(host, ":");
	slash = strchr(colon, '/');
	snprintf(port, sizeof(port), "%.*s", (int)(slash - colon - 1), colon + 1);
	snprintf(h->path, sizeof(h->path), "%s", slash);
	uv_tcp_init(loop, &h->listener);
	h->listener.data = h;
	h->handles = 1;
	r = bind_listener(h, host, (size_t)(colon - host), port);
	if (r < 0) {
		h->stopping = true;
		uv_close((uv_handle_t *)&h->listener, listener_closed);
		return r;
	}
	bound_url(h, host, (size_t)(colon - host));
	*ret_h = h;
	return 0;
}

const char *http_url(const struct http *h)
{
	return h->bound;
}

void http_stop(struct http *h)
{
	if (!h)
		return;
	h->stopping = true;
	while (h->conns)
		conn_close(h->conns);
	uv_close((uv_handle_t *)&h->listener, listener_closed);
}
