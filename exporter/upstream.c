// SPDX-License-Identifier: MIT
/* upstream.c - the connection to fpgad (upstream.h). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpgad.h"
#include "log.h"
#include "upstream.h"

struct upstream {
	pthread_mutex_t lock;
	char url[512];
	int timeout_ms;
	fpgad_client *c;		/* NULL until connected, and after a failure */
	bool was_up;			/* for logging the changes only */
};

int upstream_new(const char *url, int timeout_ms, struct upstream **ret_up)
{
	struct upstream *up = calloc(1, sizeof(*up));

	if (!up)
		return -ENOMEM;
	pthread_mutex_init(&up->lock, NULL);
	snprintf(up->url, sizeof(up->url), "%s", url);
	up->timeout_ms = timeout_ms;
	up->was_up = true;
	*ret_up = up;
	return 0;
}

void upstream_free(struct upstream *up)
{
	if (!up)
		return;
	fpgad_disconnect(up->c);
	pthread_mutex_destroy(&up->lock);
	free(up);
}

/* fpgad answered (@ok) or not: log a change once. */
static void note(struct upstream *up, bool ok, const char *why)
{
	if (ok && !up->was_up)
		log_notice("fpgad answers again on %s", up->url);
	else if (!ok && up->was_up)
		log_warn("fpgad does not answer on %s: %s; serving fpgad_up 0 until it does",
			 up->url, why);
	up->was_up = ok;
}

/* The connection, made when there is none; under up->lock. */
static fpgad_client *conn(struct upstream *up)
{
	fpgad_client *c;
	int r;

	if (up->c)
		return up->c;
	r = fpgad_connect(up->url, &c);
	if (r < 0) {
		note(up, false, strerror(-r));
		return NULL;
	}
	fpgad_set_timeout(c, up->timeout_ms);
	up->c = c;
	return c;
}

/* A round trip on the connection failed with @r: make a new one next time. */
static void failed(struct upstream *up, int r)
{
	note(up, false, up->c && fpgad_errmsg(up->c)[0] ? fpgad_errmsg(up->c) : strerror(-r));
	fpgad_disconnect(up->c);
	up->c = NULL;
}

int upstream_relay(struct upstream *up, const void *req, size_t len,
		   size_t max_len, void **ret_reply, size_t *ret_len, char *why,
		   size_t whylen)
{
	fpgad_client *c;
	int r;

	pthread_mutex_lock(&up->lock);
	c = conn(up);
	/*
	 * Without a connection the request is still decoded and answered
	 * (refused, or "fpgad does not answer") by a client that is not
	 * connected: fpgad_relay() needs one, so one is made unconnected.
	 */
	if (!c) {
		pthread_mutex_unlock(&up->lock);
		r = fpgad_relay(NULL, req, len, max_len, ret_reply, ret_len, why, whylen);
		return r < 0 && r != -ENOMEM ? 0 : r;
	}
	r = fpgad_relay(c, req, len, max_len, ret_reply, ret_len, why, whylen);
	if (r < 0 && r != -ENOMEM) {
		failed(up, r);
		r = 0;
	} else if (r == 0) {
		note(up, true, NULL);
	}
	pthread_mutex_unlock(&up->lock);
	return r;
}

#define UP_HELP "# HELP fpgad_up Whether fpgad answered this scrape (1) or not (0).\n" \
		"# TYPE fpgad_up gauge\n"

int upstream_scrape(struct upstream *up, char **ret_text, size_t *ret_len,
		    bool *ret_up)
{
	char *metrics = NULL, *text;
	fpgad_client *c;
	int r = -ENOTCONN;

	pthread_mutex_lock(&up->lock);
	c = conn(up);
	if (c) {
		r = fpgad_metrics_get(c, &metrics);
		if (r < 0 && r != -ENOMEM)
			failed(up, r);
		else if (r == 0)
			note(up, true, NULL);
	}
	pthread_mutex_unlock(&up->lock);
	if (r == -ENOMEM)
		return r;
	if (asprintf(&text, "%s" UP_HELP "fpgad_up %d\n", metrics ? metrics : "",
		     metrics ? 1 : 0) < 0) {
		free(metrics);
		return -ENOMEM;
	}
	*ret_up = metrics != NULL;
	free(metrics);
	*ret_text = text;
	*ret_len = strlen(text);
	return 0;
}
