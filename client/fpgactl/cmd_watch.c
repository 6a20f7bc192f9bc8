// SPDX-License-Identifier: MIT
/*
 * cmd_watch.c - fpgactl watch [CHANNEL...]: every second (--interval MS),
 * each channel's frames/s, GB/s, drops and errors in that interval and the
 * mean latency from DMA end to publication, from the difference of two
 * ChannelStats.
 * On a terminal the table is redrawn in place under a header (fpgad's
 * version, uptime and clients), and q quits; otherwise each interval
 * prints one plain line per channel (or, with --json, one JSON object per
 * line), so that a pipe or a log gets something to parse.  -n COUNT stops
 * after COUNT intervals.
 *
 * When fpgad goes away, watch says so at once and exits 1: each request
 * waits a short while, and one not answered in time is followed by a
 * fresh connect, which a dead fpgad refuses at once.  An fpgad that is
 * only slow gets the same request again, up to --timeout in all.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fpgactl.h"

/* How long one request may take before watch asks whether fpgad is there. */
#define WATCH_ASK_MS 250

struct watch_row {
	const char *name;
	struct fpgad_channel_stats prev, cur;
};

struct watch {
	fpgad_client *c;
	const struct fpgactl_opts *o;
	struct watch_row *rows;
	unsigned n;
	struct fpgad_status *names;	/* where rows[].name point (no CHANNEL) */
	struct fpgad_status *status;	/* the header's, on a terminal */
	bool tty;			/* stdout: the table */
	bool keys;			/* stdin: a terminal, q quits */
	struct termios saved;		/* stdin's settings before */
	unsigned drawn;			/* lines of the table on screen */
	const char *failed;		/* what the last failed request asked */
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
static int watch_rows(struct watch *w)
{
	const struct fpgactl_opts *o = w->o;
	unsigned n = o->n_channels;
	int r;

	if (!n) {
		r = fpgad_status_get(w->c, &w->names);
		if (r < 0)
			return fpgactl_fail(w->c, "watch", r);
		n = w->names->n_channels;
		if (!n) {
			fprintf(stderr, "fpgactl: watch: fpgad has no channel\n");
			return 1;
		}
	}
	w->rows = calloc(n, sizeof(*w->rows));
	if (!w->rows)
		return fpgactl_fail(NULL, "watch", -ENOMEM);
	for (unsigned i = 0; i < n; i++)
		w->rows[i].name = w->names ? w->names->channels[i].name : o->channels[i];
	w->n = n;
	return 0;
}

/* One round of requests: the header's Status (terminal), each channel's stats. */
static int sample_once(struct watch *w)
{
	int r;

	if (w->tty) {
		fpgad_status_free(w->status);
		w->status = NULL;
		w->failed = "status";
		r = fpgad_status_get(w->c, &w->status);
		if (r < 0)
			return r;
	}
	for (unsigned i = 0; i < w->n; i++) {
		w->failed = w->rows[i].name;
		r = fpgad_channel_stats(w->c, w->rows[i].name, &w->rows[i].cur);
		if (r < 0)
			return r;
	}
	return 0;
}

/* Did the request fail on the way (no answer, connection lost)? */
static bool no_answer(int r)
{
	return r == -ETIMEDOUT || r == -ECONNRESET || r == -ECONNREFUSED ||
	       r == -ECONNABORTED || r == -EPIPE || r == -ECANCELED;
}

/* Is fpgad there?  A fresh connect tells: a dead one refuses it at once. */
static bool fpgad_there(const char *url, char *why, size_t len)
{
	fpgad_client *probe;
	int r = fpgad_connect(url, &probe);

	if (r == 0) {
		fpgad_disconnect(probe);
		return true;
	}
	fpgactl_connect_error(url, r, why, len);
	return r == -EUSERS;	/* there, only full */
}

/* Every request of one interval; 0, or the exit code after saying why. */
static int sample(struct watch *w)
{
	uint64_t give_up = clock_now_ns() + (uint64_t)w->o->timeout_ms * CLOCK_NS_PER_MS;
	char why[256];
	int r;

	for (;;) {
		r = sample_once(w);
		if (r == 0)
			return 0;
		if (!no_answer(r) || clock_now_ns() >= give_up)
			break;
		if (!fpgad_there(w->o->url, why, sizeof(why))) {
			fprintf(stderr, "fpgactl: watch: fpgad went away (%s: %s)\n",
				w->o->url, why);
			return 1;
		}
	}
	return fpgactl_fail(w->c, w->failed, r);
}

static void print_json(const struct watch_row *w, const struct watch_rates *x,
		       const char *when)
{
	json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:o, s:o, s:I, s:I, s:o}",
			      "time", when, "channel", w->name,
			      "state", w->cur.state, "frames", (json_int_t)w->cur.frames,
			      "fps", fpgactl_json_num(x->fps),
			      "gbps", fpgactl_json_num(x->gbps),
			      "drops", (json_int_t)x->drops,
			      "errors", (json_int_t)x->errors,
			      "publish_latency_us", fpgactl_json_num(x->latency_us < 0 ? NAN :
								     x->latency_us));

	fpgactl_print_json_line(o);
}

static void print_line(const struct watch_row *w, const struct watch_rates *x,
		       const char *when)
{
	char lat[32] = "-";

	if (x->latency_us >= 0)
		snprintf(lat, sizeof(lat), "%.1f", x->latency_us);
	printf("%s %s state=%s frames=%llu fps=%.1f gbps=%.3f drops=%llu errors=%llu publish_latency_us=%s\n",
	       when, w->name, w->cur.state, (unsigned long long)w->cur.frames,
	       x->fps, x->gbps, (unsigned long long)x->drops,
	       (unsigned long long)x->errors, lat);
}

/* The header and the table, over the ones drawn before, on a terminal. */
static void print_table(struct watch *w, double secs, const char *when)
{
	const struct fpgad_status *s = w->status;
	struct watch_rates x;
	char lat[32], up[32];

	if (w->drawn)
		printf("\033[%uA", w->drawn);
	printf("fpgad %s (pid %u), up %s, %u client%s\033[K\n", s->version, s->pid,
	       fpgactl_duration_text(s->uptime_ms, up, sizeof(up)), s->clients,
	       s->clients == 1 ? "" : "s");
	printf("%s, every %g s%s\033[K\n", when, w->o->interval_ms / 1e3,
	       w->keys ? "; q quits" : "");
	printf("%-12s %-10s %10s %8s %7s %7s %9s %14s\033[K\n", "CHANNEL", "STATE",
	       "FRAMES/S", "GB/S", "DROPS", "ERRORS", "LAT(us)", "FRAMES");
	for (unsigned i = 0; i < w->n; i++) {
		const struct watch_row *row = &w->rows[i];

		rates(row, secs, &x);
		snprintf(lat, sizeof(lat), "-");
		if (x.latency_us >= 0)
			snprintf(lat, sizeof(lat), "%.1f", x.latency_us);
		printf("%-12s %-10s %10.1f %8.3f %7llu %7llu %9s %14llu\033[K\n",
		       row->name, row->cur.state, x.fps, x.gbps,
		       (unsigned long long)x.drops, (unsigned long long)x.errors,
		       lat, (unsigned long long)row->cur.frames);
	}
	w->drawn = w->n + 3;
}

static void print_lines(const struct watch *w, double secs, const char *when)
{
	for (unsigned k = 0; k < w->n; k++) {
		struct watch_rates x;

		rates(&w->rows[k], secs, &x);
		if (w->o->json)
			print_json(&w->rows[k], &x, when);
		else
			print_line(&w->rows[k], &x, when);
	}
}

static void now_text(char *buf, size_t len, bool tty)
{
	time_t t = time(NULL);
	struct tm tm;

	strftime(buf, len, tty ? "%H:%M:%S" : "%Y-%m-%dT%H:%M:%S",
		 localtime_r(&t, &tm));
}

/* stdin's settings while keys are read; restored on a signal too. */
static struct termios saved_termios;

static void restore_and_die(int sig)
{
	tcsetattr(STDIN_FILENO, TCSANOW, &saved_termios);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* On a terminal: keys without Enter and without echo. */
static void keys_on(struct watch *w)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct termios t;

	if (!w->tty || !isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &w->saved))
		return;
	saved_termios = w->saved;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], restore_and_die);
	t = w->saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	w->keys = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
}

static void keys_off(struct watch *w)
{
	if (w->keys)
		tcsetattr(STDIN_FILENO, TCSANOW, &w->saved);
	w->keys = false;
}

/* Until @until (CLOCK_MONOTONIC ns); true when q was pressed. */
static bool wait_until(struct watch *w, uint64_t until)
{
	struct timespec ts = clock_timespec(until);
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	uint64_t now;
	char key[16];
	ssize_t got;

	while (!w->keys) {
		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != EINTR)
			return false;
	}
	while ((now = clock_now_ns()) < until) {
		int ms = (int)((until - now + CLOCK_NS_PER_MS - 1) / CLOCK_NS_PER_MS);

		if (poll(&pfd, 1, ms) <= 0)
			continue;
		got = read(STDIN_FILENO, key, sizeof(key));
		if (got <= 0) {
			keys_off(w);	/* stdin closed: the clock alone */
			return wait_until(w, until);
		}
		if (memchr(key, 'q', (size_t)got) || memchr(key, 'Q', (size_t)got))
			return true;
	}
	return false;
}

int fpgactl_watch(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct watch w = { .c = c, .o = o, .tty = isatty(STDOUT_FILENO) && !o->json };
	uint64_t t_prev, t_cur, next;
	char when[32];
	int r;

	r = watch_rows(&w);
	if (r)
		goto out;
	/* Short waits from here: sample() tells a slow fpgad from a gone one. */
	fpgad_set_timeout(c, WATCH_ASK_MS < o->timeout_ms ? WATCH_ASK_MS : o->timeout_ms);
	r = sample(&w);
	keys_on(&w);
	t_prev = clock_now_ns();
	next = t_prev;
	for (uint64_t i = 0; r == 0 && (!o->count_given || i < o->count); i++) {
		for (unsigned k = 0; k < w.n; k++)
			w.rows[k].prev = w.rows[k].cur;
		next += (uint64_t)o->interval_ms * CLOCK_NS_PER_MS;
		if (wait_until(&w, next))
			break;
		r = sample(&w);
		if (r)
			break;
		t_cur = clock_now_ns();
		now_text(when, sizeof(when), w.tty);
		if (w.tty)
			print_table(&w, (double)(t_cur - t_prev) / 1e9, when);
		else
			print_lines(&w, (double)(t_cur - t_prev) / 1e9, when);
		fflush(stdout);
		t_prev = t_cur;
	}
	keys_off(&w);
out:
	free(w.rows);
	fpgad_status_free(w.names);
	fpgad_status_free(w.status);
	return r;
}
