// SPDX-License-Identifier: MIT
/*
 * cmd_watch.c - fpgactl watch [CHANNEL...]: every second, each channel's
 * frames/s, GB/s, drops and errors in that second and the mean latency
 * from DMA end to publication, from the difference of two ChannelStats.
 * On a terminal the table is redrawn in place; otherwise each interval
 * prints one plain line per channel (or, with --json, one JSON object per
 * line), so that a pipe or a log gets something to parse.  -n COUNT stops
 * after COUNT intervals.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fpgactl.h"

#define WATCH_INTERVAL_NS CLOCK_NS_PER_SEC

struct watch_row {
	const char *name;
	struct fpgad_channel_stats prev, cur;
};

/* What one interval of one channel amounts to. */
struct watch_rates {
	double fps, gbps;
	uint64_t drops, errors;
	double latency_us;		/* < 0: no frame published */
};

static void rates(const struct watch_row *w, double secs, struct watch_rates *ret)
{
	uint64_t frames = w->cur.latency_frames - w->prev.latency_frames;

	ret->fps = (double)(w->cur.frames - w->prev.frames) / secs;
	ret->gbps = (double)(w->cur.bytes - w->prev.bytes) / secs / 1e9;
	ret->drops = w->cur.drops - w->prev.drops;
	ret->errors = w->cur.errors - w->prev.errors;
	ret->latency_us = frames ?
		(double)(w->cur.latency_ns_total - w->prev.latency_ns_total) /
		(double)frames / 1e3 : -1;
}

/* The channels to watch: those named, else every one fpgad has. */
static int watch_rows(fpgad_client *c, const struct fpgactl_opts *o,
		      struct watch_row **ret_rows, unsigned *ret_n,
		      struct fpgad_status **ret_status)
{
	struct fpgad_status *s = NULL;
	struct watch_row *rows;
	unsigned n = o->n_channels;
	int r;

	if (!n) {
		r = fpgad_status_get(c, &s);
		if (r < 0)
			return fpgactl_fail(c, "watch", r);
		n = s->n_channels;
		if (!n) {
			fprintf(stderr, "fpgactl: watch: fpgad has no channel\n");
			fpgad_status_free(s);
			return 1;
		}
	}
	rows = calloc(n, sizeof(*rows));
	if (!rows) {
		fpgad_status_free(s);
		return fpgactl_fail(NULL, "watch", -ENOMEM);
	}
	for (unsigned i = 0; i < n; i++)
		rows[i].name = s ? s->channels[i].name : o->channels[i];
	*ret_rows = rows;
	*ret_n = n;
	*ret_status = s;
	return 0;
}

static int sample(fpgad_client *c, struct watch_row *rows, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		int r = fpgad_channel_stats(c, rows[i].name, &rows[i].cur);

		if (r < 0)
			return fpgactl_fail(c, rows[i].name, r);
	}
	return 0;
}

static void print_json(const struct watch_row *w, const struct watch_rates *x,
		       const char *when)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:f, s:f, s:I, s:I, s:o}",
			      "time", when, "channel", w->name,
			      "state", w->cur.state, "frames", (json_int_t)w->cur.frames,
			      "fps", x->fps, "gbps", x->gbps,
			      "drops", (json_int_t)x->drops,
			      "errors", (json_int_t)x->errors,
			      "latency_us", x->latency_us < 0 ? json_null() :
							       json_real(x->latency_us));

	fpgactl_print_json_line(o);
}

static void print_line(const struct watch_row *w, const struct watch_rates *x,
		       const char *when)
{
	char lat[32] = "-";

	if (x->latency_us >= 0)
		snprintf(lat, sizeof(lat), "%.1f", x->latency_us);
	printf("%s %s state=%s frames=%llu fps=%.1f gbps=%.3f drops=%llu errors=%llu latency_us=%s\n",
	       when, w->name, w->cur.state, (unsigned long long)w->cur.frames,
	       x->fps, x->gbps, (unsigned long long)x->drops,
	       (unsigned long long)x->errors, lat);
}

/* The table, over the one drawn before (@drawn lines) on a terminal. */
static unsigned print_table(const struct watch_row *rows, unsigned n,
			    double secs, const char *when, unsigned drawn)
{
	struct watch_rates x;
	char lat[32];

	if (drawn)
		printf("\033[%uA", drawn);
	printf("%s, every %.0f s\033[K\n", when, WATCH_INTERVAL_NS / 1e9);
	printf("%-12s %-10s %10s %8s %7s %7s %9s %14s\033[K\n", "CHANNEL", "STATE",
	       "FRAMES/S", "GB/S", "DROPS", "ERRORS", "LAT(us)", "FRAMES");
	for (unsigned i = 0; i < n; i++) {
		rates(&rows[i], secs, &x);
		snprintf(lat, sizeof(lat), "-");
		if (x.latency_us >= 0)
			snprintf(lat, sizeof(lat), "%.1f", x.latency_us);
		printf("%-12s %-10s %10.1f %8.3f %7llu %7llu %9s %14llu\033[K\n",
		       rows[i].name, rows[i].cur.state, x.fps, x.gbps,
		       (unsigned long long)x.drops, (unsigned long long)x.errors,
		       lat, (unsigned long long)rows[i].cur.frames);
	}
	return n + 2;
}

static void now_text(char *buf, size_t len, bool tty)
{
	time_t t = time(NULL);
	struct tm tm;

	strftime(buf, len, tty ? "%H:%M:%S" : "%Y-%m-%dT%H:%M:%S",
		 localtime_r(&t, &tm));
}

int fpgactl_watch(fpgad_client *c, const struct fpgactl_opts *o)
{
	bool tty = isatty(STDOUT_FILENO) && !o->json;
	struct fpgad_status *status = NULL;
	struct watch_row *rows = NULL;
	uint64_t t_prev, t_cur, next;
	unsigned n = 0, drawn = 0;
	struct timespec ts;
	char when[32];
	int r;

	r = watch_rows(c, o, &rows, &n, &status);
	if (r)
		return r;
	r = sample(c, rows, n);
	t_prev = clock_now_ns();
	next = t_prev;
	for (uint64_t i = 0; r == 0 && (!o->count_given || i < o->count); i++) {
		for (unsigned k = 0; k < n; k++)
			rows[k].prev = rows[k].cur;
		next += WATCH_INTERVAL_NS;
		ts = clock_timespec(next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		r = sample(c, rows, n);
		if (r)
			break;
		t_cur = clock_now_ns();
		now_text(when, sizeof(when), tty);
		if (tty) {
			drawn = print_table(rows, n, (double)(t_cur - t_prev) / 1e9,
					    when, drawn);
		} else {
			for (unsigned k = 0; k < n; k++) {
				struct watch_rates x;

				rates(&rows[k], (double)(t_cur - t_prev) / 1e9, &x);
				if (o->json)
					print_json(&rows[k], &x, when);
				else
					print_line(&rows[k], &x, when);
			}
		}
		fflush(stdout);
		t_prev = t_cur;
	}
	free(rows);
	fpgad_status_free(status);
	return r;
}
