// SPDX-License-Identifier: MIT
/*
 * output.c - what every fpgactl command prints the same way: JSON (field
 * order kept, measured numbers rounded to what they are worth, missing
 * values as null), the one line a failure gets, why a connect failed,
 * durations for people, the progress line of long commands on a
 * terminal, and the lease capture and send take (the right direction).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "fpgactl.h"

/* What a double prints as: enough for any value fpgactl_json_num() made. */
#define JSON_DIGITS 15

static void print_json_flags(json_t *o, size_t flags)
{
	char *s = json_dumps(o, flags | JSON_PRESERVE_ORDER |
			     JSON_REAL_PRECISION(JSON_DIGITS));

	if (s) {
		puts(s);
		free(s);
	}
	json_decref(o);
}

json_t *fpgactl_json_sink;

void fpgactl_print_json(json_t *o)
{
	if (fpgactl_json_sink && o) {
		json_array_append_new(fpgactl_json_sink, o);
		return;
	}
	print_json_flags(o, JSON_INDENT(2));
}

void fpgactl_print_json_line(json_t *o)
{
	print_json_flags(o, JSON_COMPACT);
}

json_t *fpgactl_json_num(double v)
{
	char text[32];

	if (!isfinite(v))
		return json_null();
	snprintf(text, sizeof(text), "%.*g", FPGACTL_JSON_DIGITS, v);
	return json_real(strtod(text, NULL));
}

int fpgactl_fail(fpgad_client *c, const char *what, int r)
{
	const char *msg = c ? fpgad_errmsg(c) : "";

	fprintf(stderr, "fpgactl: %s: %s\n", what, msg[0] ? msg : strerror(-r));
	return 1;
}

const char *fpgactl_connect_error(const char *url, int r, char *buf, size_t len)
{
	/* libfpgad's own words for this thread's last failed connect. */
	const char *why = fpgad_errmsg(NULL);
	size_t n = strlen(url);

	if (!strncmp(why, url, n) && !strncmp(why + n, ": ", 2))
		why += n + 2;
	if (why[0])
		snprintf(buf, len, "%s", why);
	else if (r == -EINVAL && !strncmp(url, "tls+", 4) && !getenv("FPGAD_TLS_CA"))
		snprintf(buf, len, "set FPGAD_TLS_CA to the CA file that signed fpgad's certificate");
	else if (r == -EUSERS)
		snprintf(buf, len, "fpgad is at its connection limit (%s)", strerror(-r));
	else
		snprintf(buf, len, "%s", strerror(-r));
	return buf;
}

const char *fpgactl_duration_text(uint64_t ms, char *buf, size_t len)
{
	uint64_t s = ms / 1000;

	if (s < 60)
		snprintf(buf, len, "%llus", (unsigned long long)s);
	else if (s < 3600)
		snprintf(buf, len, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(buf, len, "%llud%02lluh", (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
	return buf;
}

const char *fpgactl_size_text(uint64_t size, char *buf, size_t len)
{
	if (size && size % (1ull << 30) == 0)
		snprintf(buf, len, "%llu GiB", (unsigned long long)(size >> 30));
	else if (size && size % (1ull << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(size >> 20));
	else if (size && size % 1024 == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(size >> 10));
	else
		snprintf(buf, len, "%llu B", (unsigned long long)size);
	return buf;
}

/* The progress line appears after this long, and is redrawn this often. */
#define PROGRESS_AFTER_NS CLOCK_NS_PER_SEC
#define PROGRESS_EVERY_NS (CLOCK_NS_PER_SEC / 10)
#define PROGRESS_BAR 40

void fpgactl_progress_start(struct fpgactl_progress *p, uint64_t total,
			    bool bytes, bool at_once)
{
	*p = (struct fpgactl_progress){
		.tty = total && isatty(STDERR_FILENO),
		.at_once = at_once,
		.bytes = bytes,
		.total = total,
		.t0_ns = clock_now_ns(),
	};
}

/* @n bytes or frames in @buf: "12.5 MiB", "1500 frames". */
static const char *amount_text(const struct fpgactl_progress *p, uint64_t n,
			       char *buf, size_t len)
{
	if (p->bytes)
		snprintf(buf, len, "%.1f MiB", (double)n / (1 << 20));
	else
		snprintf(buf, len, "%llu frames", (unsigned long long)n);
	return buf;
}

void fpgactl_progress_show(struct fpgactl_progress *p, uint64_t done)
{
	uint64_t now = clock_now_ns(), el = now - p->t0_ns;
	char have[32], all[32], eta[32] = "?";
	bool last = done >= p->total;
	double rate;
	int bars;

	if (!p->tty || (!p->at_once && !p->shown && el < PROGRESS_AFTER_NS) ||
	    (p->shown && !last && now - p->t_drawn_ns < PROGRESS_EVERY_NS))
		return;
	if (last)
		done = p->total;
	rate = el ? (double)done / ((double)el / 1e9) : 0;
	if (done && rate > 0)
		fpgactl_duration_text((uint64_t)((double)(p->total - done) / rate * 1e3),
				      eta, sizeof(eta));
	bars = (int)(done * PROGRESS_BAR / p->total);
	fprintf(stderr, "\r[%.*s%*s] %3d%% %s of %s, %.*f %s/s, ETA %s\033[K%s",
		bars, "########################################", PROGRESS_BAR - bars, "",
		(int)(done * 100 / p->total), amount_text(p, done, have, sizeof(have)),
		amount_text(p, p->total, all, sizeof(all)), p->bytes ? 2 : 0,
		p->bytes ? rate / 1e9 : rate, p->bytes ? "GB" : "frames", eta,
		last ? "\n" : "");
	p->shown = !last;
	p->t_drawn_ns = now;
}

void fpgactl_progress_clear(struct fpgactl_progress *p)
{
	if (!p->shown)
		return;
	fputs("\r\033[K", stderr);
	p->shown = false;
	p->t_drawn_ns = 0;
}

void fpgactl_progress_end(struct fpgactl_progress *p)
{
	if (p->shown)
		fputc('\n', stderr);
	p->shown = false;
}

bool fpgactl_remote(const char *url)
{
	return strncmp(url, "ipc://", 6) != 0;
}

bool fpgactl_asks(int r)
{
	return r != -EPIPE && r != -ESTALE && r != -ECONNRESET && r != -ECONNREFUSED;
}

const char *fpgactl_failed(fpgad_client *c, const char *name, bool todo, char *buf,
			   size_t len)
{
	struct fpgad_channel_stats st;
	int n;

	if (fpgad_channel_stats(c, name, &st) < 0 || strcmp(st.state, "failed"))
		return NULL;
	n = snprintf(buf, len, "channel %s is FAILED (%s%s%llu DMA errors, %llu recoveries)",
		     name, st.last_error, st.last_error[0] ? "; " : "",
		     (unsigned long long)st.errors, (unsigned long long)st.recoveries);
	if (todo && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ": " FPGACTL_FAILED_TODO, name);
	return buf;
}

int fpgactl_lease(fpgad_client *c, const char *name, unsigned flags,
		  const char *direction, fpgad_channel **ret_ch,
		  struct fpgad_channel_info *ret_info)
{
	struct fpgad_channel_info info;
	fpgad_channel *ch;
	int r = fpgad_channel_open(c, name, flags, &ch);

	if (r < 0)
		return fpgactl_fail(c, name, r);
	fpgad_channel_get_info(ch, &info);
	if (strcmp(info.direction, direction)) {
		fprintf(stderr, "fpgactl: %s is a %s channel: use %s\n", name,
			info.direction, !strcmp(info.direction, "h2c") ? "send" : "capture");
		fpgad_channel_close(ch);
		return 1;
	}
	*ret_ch = ch;
	*ret_info = info;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void fpgactl_sort_ns(uint64_t *ns, uint64_t n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
}

double fpgactl_percentile_us(const uint64_t *sorted_ns, uint64_t n, double p)
{
	if (!n)
		return 0;
	return (double)sorted_ns[(uint64_t)(p * (double)(n - 1))] / 1000.0;
}
