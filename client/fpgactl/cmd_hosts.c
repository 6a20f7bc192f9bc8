// SPDX-License-Identifier: MIT
/*
 * cmd_hosts.c - fpgactl --url URL --url URL ... status: one row per host, each
 * asked at the same time (a thread each), so that a host that does not
 * answer costs --timeout once, not once per host.  A host that cannot be
 * reached gets a row that says so and why, and the exit status is 1.
 * With --json: an array, one object per --url in the order given.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fpgactl.h"

struct host {
	const char *url;
	const char *label;		/* the row's name: the URL or the card */
	int timeout_ms;
	pthread_t thread;
	bool started;
	/* Under hosts.lock once the thread runs. */
	bool done;
	struct fpgad_status *status;	/* reachable */
	char error[256];		/* else why not */
};

struct hosts {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct host *h;
	unsigned n;
};

struct probe_arg {
	struct hosts *hs;
	struct host *h;
};

/* Connect and ask Status; on its own thread. */
static void *probe(void *arg)
{
	struct probe_arg *pa = arg;
	struct host *h = pa->h;
	struct fpgad_status *s = NULL;
	char error[256] = "";
	fpgad_client *c;
	int r;

	r = fpgad_connect(h->url, &c);
	if (r < 0) {
		fpgactl_connect_error(h->url, r, error, sizeof(error));
	} else {
		fpgad_set_timeout(c, h->timeout_ms);
		r = fpgad_status_get(c, &s);
		if (r < 0)
			snprintf(error, sizeof(error), "status: %s",
				 fpgad_errmsg(c)[0] ? fpgad_errmsg(c) : strerror(-r));
		fpgad_disconnect(c);
	}
	pthread_mutex_lock(&pa->hs->lock);
	h->status = s;
	snprintf(h->error, sizeof(h->error), "%s", error);
	h->done = true;
	pthread_cond_broadcast(&pa->hs->cond);
	pthread_mutex_unlock(&pa->hs->lock);
	free(pa);
	return NULL;
}

/* Until every host answered or --timeout (and a little) has passed. */
static void wait_all(struct hosts *hs, int timeout_ms)
{
	struct timespec ts = clock_timespec(clock_now_ns() +
					    (uint64_t)timeout_ms * CLOCK_NS_PER_MS +
					    100 * CLOCK_NS_PER_MS);
	unsigned left;

	pthread_mutex_lock(&hs->lock);
	for (;;) {
		left = 0;
		for (unsigned i = 0; i < hs->n; i++)
			left += hs->h[i].started && !hs->h[i].done;
		if (!left || pthread_cond_timedwait(&hs->cond, &hs->lock, &ts) == ETIMEDOUT)
			break;
	}
	for (unsigned i = 0; i < hs->n; i++)
		if (hs->h[i].started && !hs->h[i].done)
			snprintf(hs->h[i].error, sizeof(hs->h[i].error),
				 "no answer within %d ms", timeout_ms);
	pthread_mutex_unlock(&hs->lock);
}

static void start_all(struct hosts *hs)
{
	for (unsigned i = 0; i < hs->n; i++) {
		struct probe_arg *pa = malloc(sizeof(*pa));
		struct host *h = &hs->h[i];
		int r = ENOMEM;

		if (pa) {
			pa->hs = hs;
			pa->h = h;
			r = pthread_create(&h->thread, NULL, probe, pa);
		}
		if (r) {
			free(pa);
			snprintf(h->error, sizeof(h->error), "cannot ask: %s", strerror(r));
			continue;
		}
		h->started = true;
	}
}

static void print_row(const struct host *h, int width)
{
	const struct fpgad_status *s = h->status;
	unsigned streaming = 0, failed = 0;
	uint64_t frames = 0, drops = 0;
	char up[32];

	if (!s) {
		printf("%-*s unreachable: %s\n", width, h->label, h->error);
		return;
	}
	for (uint32_t i = 0; i < s->n_channels; i++) {
		streaming += !strcmp(s->channels[i].state, "streaming");
		failed += !strcmp(s->channels[i].state, "failed");
		frames += s->channels[i].frames;
		drops += s->channels[i].drops;
	}
	fpgactl_duration_text(s->uptime_ms, up, sizeof(up));
	printf("%-*s %-8s %7s %-16.16s %-9s %7u %8u %9u %6u %14llu %10llu\n", width,
	       h->label, s->version, up, s->backend, s->mode, s->clients,
	       s->n_channels, streaming, failed, (unsigned long long)frames,
	       (unsigned long long)drops);
}

static void print_table(const struct hosts *hs)
{
	int width = 4;

	for (unsigned i = 0; i < hs->n; i++)
		if ((int)strlen(hs->h[i].label) > width)
			width = (int)strlen(hs->h[i].label);
	printf("%-*s %-8s %7s %-16s %-9s %7s %8s %9s %6s %14s %10s\n", width,
	       hs->h[0].label == hs->h[0].url ? "HOST" : "CARD",
	       "VERSION", "UPTIME", "BACKEND", "MODE", "CLIENTS", "CHANNELS",
	       "STREAMING", "FAILED", "FRAMES", "DROPS");
	for (unsigned i = 0; i < hs->n; i++)
		print_row(&hs->h[i], width);
}

static void print_json(const struct hosts *hs)
{
	json_t *arr = json_array();

	for (unsigned i = 0; i < hs->n; i++) {
		const struct host *h = &hs->h[i];
		json_t *o = json_pack("{s:s, s:b}", "url", h->url, "reachable",
				      h->status != NULL);

		if (h->label != h->url)
			json_object_set_new(o, "instance", json_string(h->label));

		if (h->status) {
			json_t *st = fpgactl_status_json(h->status);

			json_object_update(o, st);
			json_decref(st);
		} else
			json_object_set_new(o, "error", json_string(h->error));
		json_array_append_new(arr, o);
	}
	fpgactl_print_json(arr);
}

/* The hosts of every --url; NULL without memory. */
static struct hosts *hosts_new(const struct fpgactl_opts *o)
{
	struct hosts *hs = calloc(1, sizeof(*hs));
	pthread_condattr_t ca;

	if (!hs)
		return NULL;
	hs->n = o->n_urls;
	hs->h = calloc(hs->n, sizeof(*hs->h));
	if (!hs->h) {
		free(hs);
		return NULL;
	}
	for (unsigned i = 0; i < hs->n; i++) {
		hs->h[i].url = o->urls[i];
		hs->h[i].label = o->labels ? o->labels[i] : o->urls[i];
		hs->h[i].timeout_ms = o->timeout_ms;
	}
	pthread_mutex_init(&hs->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hs->cond, &ca);
	pthread_condattr_destroy(&ca);
	return hs;
}

/*
 * Join the threads that are done and free what they found.  A host still
 * being asked keeps its thread, and the thread the records: then nothing
 * is freed, and the process ends the thread when it exits.
 */
static void hosts_free(struct hosts *hs)
{
	bool pending = false;

	pthread_mutex_lock(&hs->lock);
	for (unsigned i = 0; i < hs->n; i++) {
		struct host *h = &hs->h[i];

		if (!h->started)
			continue;
		if (!h->done) {
			pthread_detach(h->thread);
			pending = true;
			continue;
		}
		pthread_join(h->thread, NULL);
		fpgad_status_free(h->status);
		h->status = NULL;
	}
	pthread_mutex_unlock(&hs->lock);
	if (pending)
		return;
	pthread_cond_destroy(&hs->cond);
	pthread_mutex_destroy(&hs->lock);
	free(hs->h);
	free(hs);
}

int fpgactl_status_hosts(const struct fpgactl_opts *o)
{
	struct hosts *hs = hosts_new(o);
	unsigned unreachable = 0;

	if (!hs)
		return fpgactl_fail(NULL, "status", -ENOMEM);
	start_all(hs);
	wait_all(hs, o->timeout_ms);
	pthread_mutex_lock(&hs->lock);
	if (o->json)
		print_json(hs);
	else
		print_table(hs);
	for (unsigned i = 0; i < hs->n; i++)
		unreachable += !hs->h[i].status;
	pthread_mutex_unlock(&hs->lock);
	hosts_free(hs);
	return unreachable ? 1 : 0;
}
