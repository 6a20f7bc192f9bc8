// SPDX-License-Identifier: MIT
/*
 * cmd_bench.c - fpgactl bench [CHANNEL...]: the figures a user compares
 * with a vendor's table.  Card memory: reads and then writes of 4 KiB to
 * 8 MiB (powers of two), -n of each size (default 64), one at a time
 * through a host buffer, each timed from the call to its result: GB/s,
 * p50 and p99 latency.  The writes put back the bytes the first read took
 * from the same addresses, so card memory keeps what it held.  Streaming:
 * each idle c2h channel (or those named), -n frames at the channel's frame
 * size in its mode: GB/s and the latency from the end of a frame's DMA to
 * this process's wake-up.  A text histogram of latencies (log2 buckets)
 * for the largest size of each; --json gives every row with its histogram.
 * Only libfpgad's public API; leased channels are skipped, and said so.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fpgactl.h"

#define BENCH_MIN_SIZE (4ull << 10)
#define BENCH_MAX_SIZE (8ull << 20)
#define BENCH_COUNT 64		/* transfers per size, frames per channel */
#define BENCH_SIZES 12		/* 4 KiB .. 8 MiB */
#define BENCH_BUCKETS 24	/* < 1 us, 1-2 us, ... 2^22 us and above */
#define BENCH_BAR 40

/* One measured row: n operations of size bytes. */
struct bench_row {
	uint64_t size;
	uint64_t n;
	uint64_t *lat_ns;	/* sorted once measured */
	uint64_t bytes;
	uint64_t span_ns;	/* first start to last end */
};

static void row_free(struct bench_row *r)
{
	free(r->lat_ns);
	r->lat_ns = NULL;
}

static int row_init(struct bench_row *r, uint64_t size, uint64_t n)
{
	*r = (struct bench_row){ .size = size };
	r->lat_ns = calloc(n, sizeof(*r->lat_ns));
	return r->lat_ns ? 0 : -ENOMEM;
}

/* Bucket of a latency: 0 below 1 us, k for [2^(k-1), 2^k) us. */
static unsigned bucket(uint64_t ns)
{
	uint64_t us = ns / 1000;
	unsigned k = 0;

	while (us && k < BENCH_BUCKETS - 1) {
		us >>= 1;
		k++;
	}
	return k;
}

static void histogram(const struct bench_row *r, uint64_t counts[BENCH_BUCKETS])
{
	memset(counts, 0, BENCH_BUCKETS * sizeof(*counts));
	for (uint64_t i = 0; i < r->n; i++)
		counts[bucket(r->lat_ns[i])]++;
}

static double row_gbps(const struct bench_row *r)
{
	return r->span_ns ? (double)r->bytes / (double)r->span_ns : NAN;
}

static json_t *row_json(const struct bench_row *r)
{
	uint64_t counts[BENCH_BUCKETS];
	json_t *hist = json_array();

	histogram(r, counts);
	for (unsigned k = 0; k < BENCH_BUCKETS; k++)
		if (counts[k])
			json_array_append_new(hist, json_pack("{s:I, s:I}",
				"below_us", (json_int_t)(1ull << k),
				"count", (json_int_t)counts[k]));
	return json_pack("{s:I, s:I, s:o, s:{s:o, s:o}, s:o}",
			 "size", (json_int_t)r->size, "count", (json_int_t)r->n,
			 "gbps", fpgactl_json_num(row_gbps(r)), "latency_us",
			 "p50", fpgactl_json_num(r->n ? fpgactl_percentile_us(r->lat_ns, r->n, 0.5) : NAN),
			 "p99", fpgactl_json_num(r->n ? fpgactl_percentile_us(r->lat_ns, r->n, 0.99) : NAN),
			 "histogram", hist);
}

static const char *size_text(uint64_t size, char *buf, size_t len)
{
	if (size && size % (1ull << 20) == 0)
		snprintf(buf, len, "%llu MiB", (unsigned long long)(size >> 20));
	else if (size && size % 1024 == 0)
		snprintf(buf, len, "%llu KiB", (unsigned long long)(size >> 10));
	else
		snprintf(buf, len, "%llu B", (unsigned long long)size);
	return buf;
}

static void print_row(const char *op, const struct bench_row *r)
{
	char sz[32];

	printf("%-8s %8s %8llu %9.3f %10.1f %10.1f\n", op,
	       size_text(r->size, sz, sizeof(sz)), (unsigned long long)r->n,
	       r->span_ns ? row_gbps(r) : 0.0,
	       fpgactl_percentile_us(r->lat_ns, r->n, 0.5),
	       fpgactl_percentile_us(r->lat_ns, r->n, 0.99));
}

static void print_histogram(const char *what, const struct bench_row *r)
{
	uint64_t counts[BENCH_BUCKETS], most = 0;
	unsigned lo = BENCH_BUCKETS, hi = 0;
	char sz[32];

	histogram(r, counts);
	for (unsigned k = 0; k < BENCH_BUCKETS; k++) {
		if (!counts[k])
			continue;
		lo = k < lo ? k : lo;
		hi = k;
		most = counts[k] > most ? counts[k] : most;
	}
	if (!most)
		return;
	printf("\nlatency of %s at %s (us):\n", what, size_text(r->size, sz, sizeof(sz)));
	for (unsigned k = lo; k <= hi; k++) {
		int bars = (int)(counts[k] * BENCH_BAR / most);
		char range[48];

		if (!k)
			snprintf(range, sizeof(range), "< 1");
		else
			snprintf(range, sizeof(range), "%llu - %llu",
				 (unsigned long long)(1ull << (k - 1)),
				 (unsigned long long)(1ull << k));
		printf("  %15s |%.*s%*s %llu\n", range, bars,
		       "########################################", BENCH_BAR - bars, "",
		       (unsigned long long)counts[k]);
	}
}

/* The card memory sweep: rows[0..n_sizes) reads, then as many writes. */
struct card_sweep {
	uint64_t count;
	unsigned n_sizes;
	struct bench_row read[BENCH_SIZES], write[BENCH_SIZES];
	char skipped[256];	/* why there is no sweep */
};

typedef int (*xfer_fn)(fpgad_buffer *buf, uint64_t buf_offset,
		       uint64_t card_addr, uint64_t length, int timeout_ms);

static int measure_xfers(fpgad_client *c, fpgad_buffer *b, xfer_fn fn,
			 struct bench_row *r, int timeout_ms)
{
	uint64_t t0 = clock_now_ns(), t;
	int ret;

	for (uint64_t i = 0; i < r->n; i++) {
		t = clock_now_ns();
		ret = fn(b, 0, 0, r->size, timeout_ms);
		if (ret < 0)
			return fpgactl_fail(c, fn == fpgad_read ? "bench: read" : "bench: write", ret);
		r->lat_ns[i] = clock_now_ns() - t;
		r->bytes += r->size;
	}
	r->span_ns = clock_now_ns() - t0;
	fpgactl_sort_ns(r->lat_ns, r->n);
	return 0;
}

static int card_sweep(fpgad_client *c, const struct fpgactl_opts *o,
		      struct card_sweep *sw)
{
	struct fpgad_xfer_rules rules;
	uint64_t max = BENCH_MAX_SIZE;
	fpgad_buffer *b = NULL;
	int r;

	r = fpgad_xfer_rules(c, &rules);
	if (r < 0) {
		snprintf(sw->skipped, sizeof(sw->skipped), "%s",
			 fpgad_errmsg(c)[0] ? fpgad_errmsg(c) : strerror(-r));
		return 0;
	}
	max = rules.max_length < max ? rules.max_length : max;
	max = rules.card_memory < max ? rules.card_memory : max;
	if (max < BENCH_MIN_SIZE) {
		snprintf(sw->skipped, sizeof(sw->skipped),
			 "card memory or its transfers are below %llu bytes",
			 (unsigned long long)BENCH_MIN_SIZE);
		return 0;
	}
	r = fpgad_buffer_alloc_host(c, max, &b);
	if (r < 0)
		return fpgactl_fail(c, "bench: host buffer", r);
	/* The card's bytes, which every write puts back where they were. */
	r = fpgad_read(b, 0, 0, max, o->timeout_ms);
	if (r < 0) {
		r = fpgactl_fail(c, "bench: read", r);
		goto out;
	}
	for (uint64_t size = BENCH_MIN_SIZE; size <= max && sw->n_sizes < BENCH_SIZES;
	     size *= 2) {
		unsigned i = sw->n_sizes;

		if (row_init(&sw->read[i], size, sw->count) ||
		    row_init(&sw->write[i], size, sw->count)) {
			sw->n_sizes++;
			r = fpgactl_fail(NULL, "bench", -ENOMEM);
			goto out;
		}
		sw->n_sizes++;
		sw->read[i].n = sw->write[i].n = sw->count;
		r = measure_xfers(c, b, fpgad_read, &sw->read[i], o->timeout_ms);
		if (r)
			goto out;
	}
	for (unsigned i = 0; i < sw->n_sizes; i++) {
		r = measure_xfers(c, b, fpgad_write, &sw->write[i], o->timeout_ms);
		if (r)
			goto out;
	}
	r = 0;
out:
	fpgad_buffer_unregister(b);
	return r;
}

/* One channel's streaming run, or why it was skipped. */
struct stream_run {
	char channel[32];
	char mode[16];
	struct bench_row row;
	char skipped[256];
};

static int stream_frames(fpgad_client *c, const struct fpgactl_opts *o,
			 const char *name, uint64_t count, struct stream_run *s)
{
	struct fpgad_channel_info info;
	struct fpgad_frame f;
	fpgad_channel *ch;
	uint64_t woke, t0 = 0;
	int r;

	snprintf(s->channel, sizeof(s->channel), "%s", name);
	r = fpgad_channel_open(c, name, 0, &ch);
	if (r == -EBUSY) {
		snprintf(s->skipped, sizeof(s->skipped), "leased: %s", fpgad_errmsg(c));
		return 0;
	}
	if (r < 0)
		return fpgactl_fail(c, name, r);
	fpgad_channel_get_info(ch, &info);
	snprintf(s->mode, sizeof(s->mode), "%s", info.mode);
	if (row_init(&s->row, info.frame_size, count)) {
		r = fpgactl_fail(NULL, "bench", -ENOMEM);
		goto out;
	}
	/* The first frame waited in the ring: it starts the clock. */
	for (uint64_t i = 0; i <= count; i++) {
		r = fpgad_frame_wait(ch, &f, o->timeout_ms);
		woke = clock_now_ns();
		if (r < 0) {
			r = fpgactl_fail(c, name, r);
			goto out;
		}
		if (i == 0) {
			t0 = woke;
		} else {
			s->row.lat_ns[s->row.n++] = woke > f.t_dma_end_ns ?
						    woke - f.t_dma_end_ns : 0;
			s->row.bytes += f.length;
		}
		fpgad_frame_release(ch, &f);
	}
	s->row.span_ns = clock_now_ns() - t0;
	fpgactl_sort_ns(s->row.lat_ns, s->row.n);
	r = 0;
out:
	fpgad_channel_close(ch);
	return r;
}

/* The c2h channels to stream from: those named, else every idle one. */
static int stream_sweep(fpgad_client *c, const struct fpgactl_opts *o,
			uint64_t count, struct stream_run **ret_runs, unsigned *ret_n)
{
	struct fpgad_status *st;
	struct stream_run *runs;
	unsigned n = 0;
	int r = fpgad_status_get(c, &st);

	if (r < 0)
		return fpgactl_fail(c, "bench: status", r);
	runs = calloc(st->n_channels + 1, sizeof(*runs));
	if (!runs) {
		fpgad_status_free(st);
		return fpgactl_fail(NULL, "bench", -ENOMEM);
	}
	for (uint32_t i = 0; i < st->n_channels && r == 0; i++) {
		const struct fpgad_channel_summary *ch = &st->channels[i];
		bool named = !o->n_channels;

		for (unsigned k = 0; k < o->n_channels; k++)
			named |= !strcmp(o->channels[k], ch->name);
		if (!named || strcmp(ch->direction, "c2h"))
			continue;
		if (ch->lessees) {
			snprintf(runs[n].channel, sizeof(runs[n].channel), "%s", ch->name);
			snprintf(runs[n].skipped, sizeof(runs[n].skipped),
				 "leased by %u process%s", ch->lessees,
				 ch->lessees == 1 ? "" : "es");
			n++;
			continue;
		}
		r = stream_frames(c, o, ch->name, count, &runs[n++]);
	}
	fpgad_status_free(st);
	*ret_runs = runs;
	*ret_n = n;
	return r;
}

static void print_json(const struct card_sweep *sw, const struct stream_run *runs,
		       unsigned n_runs)
{
	json_t *card, *streams = json_array();

	if (sw->skipped[0]) {
		card = json_pack("{s:s}", "skipped", sw->skipped);
	} else {
		json_t *rd = json_array(), *wr = json_array();

		for (unsigned i = 0; i < sw->n_sizes; i++) {
			json_array_append_new(rd, row_json(&sw->read[i]));
			json_array_append_new(wr, row_json(&sw->write[i]));
		}
		card = json_pack("{s:s, s:o, s:o}", "mode", "host", "read", rd,
				 "write", wr);
	}
	for (unsigned i = 0; i < n_runs; i++) {
		const struct stream_run *s = &runs[i];
		json_t *o;

		if (s->skipped[0]) {
			o = json_pack("{s:s, s:s}", "channel", s->channel,
				      "skipped", s->skipped);
		} else {
			o = json_pack("{s:s, s:s}", "channel", s->channel, "mode", s->mode);
			json_object_update_new(o, row_json(&s->row));
		}
		json_array_append_new(streams, o);
	}
	fpgactl_print_json(json_pack("{s:o, s:o}", "card_memory", card,
				     "streaming", streams));
}

static void print_text(const struct card_sweep *sw, const struct stream_run *runs,
		       unsigned n_runs)
{
	const char *head = "%-8s %8s %8s %9s %10s %10s\n";

	if (sw->skipped[0]) {
		printf("card memory: skipped (%s)\n", sw->skipped);
	} else {
		printf("card memory through a host buffer (mode host), one transfer at a time\n");
		printf(head, "OP", "SIZE", "COUNT", "GB/S", "P50(us)", "P99(us)");
		for (unsigned i = 0; i < sw->n_sizes; i++)
			print_row("read", &sw->read[i]);
		for (unsigned i = 0; i < sw->n_sizes; i++)
			print_row("write", &sw->write[i]);
		if (sw->n_sizes) {
			print_histogram("read", &sw->read[sw->n_sizes - 1]);
			print_histogram("write", &sw->write[sw->n_sizes - 1]);
		}
	}
	printf("\nstreaming (c2h), DMA end to wake-up\n");
	if (!n_runs)
		printf("no c2h channel\n");
	for (unsigned i = 0; i < n_runs; i++) {
		if (runs[i].skipped[0])
			printf("%s: skipped (%s)\n", runs[i].channel, runs[i].skipped);
	}
	printf(head, "CHANNEL", "FRAME", "FRAMES", "GB/S", "P50(us)", "P99(us)");
	for (unsigned i = 0; i < n_runs; i++)
		if (!runs[i].skipped[0])
			print_row(runs[i].channel, &runs[i].row);
	for (unsigned i = 0; i < n_runs; i++) {
		char what[64];

		if (runs[i].skipped[0])
			continue;
		snprintf(what, sizeof(what), "%s (%s)", runs[i].channel, runs[i].mode);
		print_histogram(what, &runs[i].row);
	}
}

int fpgactl_bench(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct card_sweep sw = { .count = o->count_given ? o->count : BENCH_COUNT };
	struct stream_run *runs = NULL;
	unsigned n_runs = 0;
	int r;

	r = card_sweep(c, o, &sw);
	if (!r)
		r = stream_sweep(c, o, sw.count, &runs, &n_runs);
	if (!r) {
		if (o->json)
			print_json(&sw, runs, n_runs);
		else
			print_text(&sw, runs, n_runs);
	}
	for (unsigned i = 0; i < sw.n_sizes; i++) {
		row_free(&sw.read[i]);
		row_free(&sw.write[i]);
	}
	for (unsigned i = 0; i < n_runs; i++)
		row_free(&runs[i].row);
	free(runs);
	return r;
}
