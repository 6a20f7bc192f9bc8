// SPDX-License-Identifier: MIT
/*
 * cmd_bench.c - fpgactl bench [CHANNEL...]: the figures a user compares
 * with a vendor's table.  Card memory: reads and then writes of 4 KiB to
 * 8 MiB (powers of two), -n of each size (default 64), one at a time,
 * each timed from the call to its result (GB/s, p50 and p99 latency),
 * through a host buffer and through GPU memory in gpudirect and in bounce
 * mode (each skipped, with the reason, where it cannot be had).  The writes put back the bytes the first read took
 * from the same addresses, so card memory keeps what it held.  Streaming:
 * each idle channel (or those named), -n frames at the channel's frame
 * size in its mode: c2h, GB/s and the latency from the end of a frame's
 * DMA to this process's wake-up; h2c, through fpgactl send's path (frames
 * in the sim format, verified by the simulated card), GB/s until the card
 * took the last and the latency from waiting for a free buffer to the
 * frame's submit, with what the card made of them.  A text histogram of latencies (log2 buckets)
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

static void print_row(const char *op, const struct bench_row *r)
{
	char sz[32];

	printf("%-8s %8s %8llu %9.3f %10.1f %10.1f\n", op,
	       fpgactl_size_text(r->size, sz, sizeof(sz)), (unsigned long long)r->n,
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
	printf("\nlatency of %s at %s (us):\n", what, fpgactl_size_text(r->size, sz, sizeof(sz)));
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

/* The card memory sweep of one mode: its reads, then as many writes. */
struct card_sweep {
	const char *mode;	/* "host", "gpudirect", "bounce" */
	uint64_t count;
	unsigned n_sizes;
	struct bench_row read[BENCH_SIZES], write[BENCH_SIZES];
	char skipped[256];	/* why there is no sweep */
	bool text;		/* each row printed once measured */
	struct fpgactl_progress bar;	/* bytes moved of the sweep's */
	uint64_t moved;
};

#define BENCH_HEAD "%-8s %8s %8s %9s %10s %10s\n"

/* A row once measured, at once (text), the progress line out of its way. */
static void row_done(bool text, struct fpgactl_progress *bar, const char *op,
		     const struct bench_row *r)
{
	if (!text)
		return;
	fpgactl_progress_clear(bar);
	print_row(op, r);
	fflush(stdout);
}

typedef int (*xfer_fn)(fpgad_buffer *buf, uint64_t buf_offset,
		       uint64_t card_addr, uint64_t length, int timeout_ms);

static int measure_xfers(fpgad_client *c, fpgad_buffer *b, xfer_fn fn,
			 struct bench_row *r, int timeout_ms, struct card_sweep *sw)
{
	const char *op = fn == fpgad_read ? "read" : "write";
	uint64_t t0 = clock_now_ns(), t;
	int ret;

	for (uint64_t i = 0; i < r->n; i++) {
		t = clock_now_ns();
		ret = fn(b, 0, 0, r->size, timeout_ms);
		if (ret < 0) {
			fpgactl_progress_end(&sw->bar);
			return fpgactl_fail(c, fn == fpgad_read ? "bench: read" : "bench: write", ret);
		}
		r->lat_ns[i] = clock_now_ns() - t;
		r->bytes += r->size;
		sw->moved += r->size;
		fpgactl_progress_show(&sw->bar, sw->moved);
	}
	r->span_ns = clock_now_ns() - t0;
	fpgactl_sort_ns(r->lat_ns, r->n);
	row_done(sw->text, &sw->bar, op, r);
	return 0;
}

/* Every size up to @max through @b; the card's bytes are put back. */
static int sweep(fpgad_client *c, const struct fpgactl_opts *o, fpgad_buffer *b,
		 uint64_t max, struct card_sweep *sw)
{
	uint64_t total = 0;
	int r;

	/* The card's bytes, which every write puts back where they were. */
	r = fpgad_read(b, 0, 0, max, o->timeout_ms);
	if (r < 0)
		return fpgactl_fail(c, "bench: read", r);
	for (uint64_t size = BENCH_MIN_SIZE; size <= max && sw->n_sizes < BENCH_SIZES;
	     size *= 2) {
		unsigned i = sw->n_sizes++;

		if (row_init(&sw->read[i], size, sw->count) ||
		    row_init(&sw->write[i], size, sw->count))
			return fpgactl_fail(NULL, "bench", -ENOMEM);
		sw->read[i].n = sw->write[i].n = sw->count;
		total += 2 * size * sw->count;
	}
	if (sw->text) {
		printf("card memory, %s (%s buffer), one transfer at a time\n", sw->mode,
		       strcmp(sw->mode, "host") ? "GPU" : "host");
		printf(BENCH_HEAD, "OP", "SIZE", "COUNT", "GB/S", "P50(us)", "P99(us)");
		fflush(stdout);
	}
	fpgactl_progress_start(&sw->bar, total, true, false);
	for (unsigned i = 0; i < sw->n_sizes; i++) {
		r = measure_xfers(c, b, fpgad_read, &sw->read[i], o->timeout_ms, sw);
		if (r)
			return r;
	}
	for (unsigned i = 0; i < sw->n_sizes; i++) {
		r = measure_xfers(c, b, fpgad_write, &sw->write[i], o->timeout_ms, sw);
		if (r)
			return r;
	}
	fpgactl_progress_end(&sw->bar);
	return 0;
}

/*
 * The transfer modes measured: a host buffer, and GPU memory (one
 * allocation) registered in gpudirect and then in bounce mode.
 */
static const struct {
	const char *name;
	enum fpgad_mode mode;
} bench_modes[] = {
	{ "host", FPGAD_MODE_HOST },
	{ "gpudirect", FPGAD_MODE_GPUDIRECT },
	{ "bounce", FPGAD_MODE_BOUNCE },
};
#define BENCH_MODES (sizeof(bench_modes) / sizeof(bench_modes[0]))

/* A buffer of @max bytes for @sw's mode; 1 with @sw->skipped set: no sweep. */
static int sweep_buffer(fpgad_client *c, enum fpgad_mode mode, uint64_t max,
			void **gpu, struct card_sweep *sw, fpgad_buffer **ret_buf)
{
	int r;

	if (mode == FPGAD_MODE_HOST) {
		r = fpgad_buffer_alloc_host(c, max, ret_buf);
		return r < 0 ? fpgactl_fail(c, "bench: host buffer", r) : 0;
	}
	if (!*gpu && gpumem_alloc(max, gpu, sw->skipped, sizeof(sw->skipped)) < 0)
		return 1;
	r = fpgad_buffer_register(c, *gpu, max, 0, ret_buf);
	if (r == 0) {
		r = fpgad_buffer_set_mode(*ret_buf, mode);
		if (r < 0)
			fpgad_buffer_unregister(*ret_buf);
	}
	if (r < 0) {
		snprintf(sw->skipped, sizeof(sw->skipped), "%s",
			 fpgad_errmsg(c)[0] ? fpgad_errmsg(c) : strerror(-r));
		return 1;
	}
	return 0;
}

/* After a sweep's rows (text): why it was skipped, or its histograms. */
static void print_sweep_end(const struct card_sweep *sw)
{
	char what[64];

	if (!sw->text)
		return;
	if (sw->skipped[0]) {
		printf("card memory, %s: skipped (%s)\n", sw->mode, sw->skipped);
	} else if (sw->n_sizes) {
		snprintf(what, sizeof(what), "read (%s)", sw->mode);
		print_histogram(what, &sw->read[sw->n_sizes - 1]);
		snprintf(what, sizeof(what), "write (%s)", sw->mode);
		print_histogram(what, &sw->write[sw->n_sizes - 1]);
		printf("\n");
	}
	fflush(stdout);
}

static int card_sweeps(fpgad_client *c, const struct fpgactl_opts *o,
		       struct card_sweep sw[BENCH_MODES])
{
	struct fpgad_xfer_rules rules;
	uint64_t max = BENCH_MAX_SIZE;
	char why[256] = "";
	void *gpu = NULL;
	int r = fpgad_xfer_rules(c, &rules);

	if (r < 0)
		snprintf(why, sizeof(why), "%s", fpgad_errmsg(c)[0] ? fpgad_errmsg(c) :
			 strerror(-r));
	else if ((max = MIN(max, MIN(rules.max_length, rules.card_memory))) < BENCH_MIN_SIZE)
		snprintf(why, sizeof(why), "card memory or its transfers are below 4 KiB");
	r = 0;
	for (unsigned m = 0; m < BENCH_MODES; m++) {
		fpgad_buffer *b = NULL;

		sw[m].mode = bench_modes[m].name;
		if (why[0]) {
			snprintf(sw[m].skipped, sizeof(sw[m].skipped), "%s", why);
			print_sweep_end(&sw[m]);
			continue;
		}
		r = sweep_buffer(c, bench_modes[m].mode, max, &gpu, &sw[m], &b);
		if (r == 1) {
			r = 0;
			print_sweep_end(&sw[m]);
			continue;
		}
		if (r == 0)
			r = sweep(c, o, b, max, &sw[m]);
		fpgad_buffer_unregister(b);
		if (r)
			break;
		print_sweep_end(&sw[m]);
	}
	gpumem_free(gpu);
	return r;
}

/* One channel's streaming run, or why it was skipped. */
struct stream_run {
	char channel[32];
	char mode[16];
	bool h2c;
	struct bench_row row;
	struct fpgactl_sent sent;	/* h2c: what the card made of them */
	char skipped[256];
};

/* Lease @name for a run; 0 with s->skipped set when another holds it. */
static int stream_open(fpgad_client *c, const char *name, uint64_t count,
		       struct stream_run *s, fpgad_channel **ret_ch)
{
	struct fpgad_channel_info info;
	int r;

	snprintf(s->channel, sizeof(s->channel), "%s", name);
	*ret_ch = NULL;
	r = fpgad_channel_open(c, name, 0, ret_ch);
	if (r == -EBUSY) {
		snprintf(s->skipped, sizeof(s->skipped), "leased: %s", fpgad_errmsg(c));
		return 0;
	}
	if (r < 0)
		return fpgactl_fail(c, name, r);
	fpgad_channel_get_info(*ret_ch, &info);
	snprintf(s->mode, sizeof(s->mode), "%s", info.mode);
	if (row_init(&s->row, info.frame_size, count)) {
		fpgad_channel_close(*ret_ch);
		*ret_ch = NULL;
		return fpgactl_fail(NULL, "bench", -ENOMEM);
	}
	return 0;
}

/* @count frames to the card through the send path, each timed. */
static int stream_send(fpgad_client *c, const struct fpgactl_opts *o,
		       const char *name, uint64_t count, struct stream_run *s)
{
	fpgad_channel *ch;
	int r;

	s->h2c = true;
	r = stream_open(c, name, count, s, &ch);
	if (r || !ch)
		return r;
	s->sent.lat_ns = s->row.lat_ns;
	r = fpgactl_send_frames(c, ch, o, count, &s->sent);
	s->sent.lat_ns = NULL;
	fpgad_channel_close(ch);
	if (r)
		return r;
	s->row.n = count;
	s->row.bytes = count * s->row.size;
	s->row.span_ns = (uint64_t)(s->sent.secs * 1e9);
	fpgactl_sort_ns(s->row.lat_ns, s->row.n);
	return 0;
}

static int stream_frames(fpgad_client *c, const struct fpgactl_opts *o,
			 const char *name, uint64_t count, struct stream_run *s)
{
	struct fpgactl_progress bar;
	struct fpgad_frame f;
	fpgad_channel *ch;
	uint64_t woke, t0 = 0;
	int r;

	r = stream_open(c, name, count, s, &ch);
	if (r || !ch)
		return r;
	fpgactl_progress_start(&bar, count, false, false);
	/* The first frame waited in the ring: it starts the clock. */
	for (uint64_t i = 0; i <= count; i++) {
		r = fpgad_frame_wait(ch, &f, o->timeout_ms);
		woke = clock_now_ns();
		if (r < 0) {
			fpgactl_progress_end(&bar);
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
		fpgactl_progress_show(&bar, s->row.n);
	}
	s->row.span_ns = clock_now_ns() - t0;
	fpgactl_sort_ns(s->row.lat_ns, s->row.n);
	r = 0;
out:
	fpgad_channel_close(ch);
	return r;
}

/* A streaming run once done (text): its row, or why it was skipped. */
static void stream_done(const struct stream_run *s, bool *head)
{
	if (s->skipped[0]) {
		printf("%s: skipped (%s)\n", s->channel, s->skipped);
	} else {
		if (!*head)
			printf(BENCH_HEAD, "CHANNEL", "FRAME", "FRAMES", "GB/S",
			       "P50(us)", "P99(us)");
		*head = true;
		print_row(s->channel, &s->row);
		if (s->h2c)
			printf("%s: the card verified %llu, rejected %llu, lost %llu\n",
			       s->channel, (unsigned long long)s->sent.good,
			       (unsigned long long)s->sent.bad,
			       (unsigned long long)s->sent.lost);
	}
	fflush(stdout);
}

/* The streaming section's title (text), once, before its first run. */
static const char *const stream_titles[] = {
	"streaming (c2h), DMA end to wake-up",
	"streaming (h2c), as fpgactl send: a free buffer to the frame's submit, the card verifying each",
};
static const char *const stream_dirs[] = { "c2h", "h2c" };

/*
 * The channels of @st to stream with, those named, else every idle one:
 * the c2h ones, then the h2c ones (a section only where there is one).
 */
static int stream_sweep(fpgad_client *c, const struct fpgactl_opts *o,
			const struct fpgad_status *st, uint64_t count,
			struct stream_run **ret_runs, unsigned *ret_n)
{
	struct stream_run *runs;
	unsigned n = 0;
	int r = 0;

	runs = calloc(st->n_channels + 1, sizeof(*runs));
	if (!runs)
		return fpgactl_fail(NULL, "bench", -ENOMEM);
	for (unsigned d = 0; d < 2 && r == 0; d++) {
		bool head = false, titled = false;

		for (uint32_t i = 0; i < st->n_channels && r == 0; i++) {
			const struct fpgad_channel_summary *ch = &st->channels[i];
			bool named = !o->n_channels;

			for (unsigned k = 0; k < o->n_channels; k++)
				named |= !strcmp(o->channels[k], ch->name);
			if (!named || strcmp(ch->direction, stream_dirs[d]))
				continue;
			if (!o->json && !titled)
				printf("\n%s\n", stream_titles[d]);
			titled = true;
			runs[n].h2c = d == 1;
			if (ch->leases) {
				snprintf(runs[n].channel, sizeof(runs[n].channel), "%s", ch->name);
				snprintf(runs[n].skipped, sizeof(runs[n].skipped),
					 "leased by %u process%s", ch->leases,
					 ch->leases == 1 ? "" : "es");
			} else {
				r = d ? stream_send(c, o, ch->name, count, &runs[n]) :
					stream_frames(c, o, ch->name, count, &runs[n]);
			}
			if (r == 0 && !o->json)
				stream_done(&runs[n], &head);
			n++;
		}
		/* c2h is what bench streams by default: say when there is none. */
		if (r == 0 && !o->json && !d && !titled && !o->n_channels)
			printf("\n%s\nno c2h channel\n", stream_titles[0]);
	}
	*ret_runs = runs;
	*ret_n = n;
	return r;
}

static json_t *sweep_json(const struct card_sweep *sw)
{
	json_t *rd, *wr;

	if (sw->skipped[0])
		return json_pack("{s:s, s:s}", "mode", sw->mode, "skipped", sw->skipped);
	rd = json_array();
	wr = json_array();
	for (unsigned i = 0; i < sw->n_sizes; i++) {
		json_array_append_new(rd, row_json(&sw->read[i]));
		json_array_append_new(wr, row_json(&sw->write[i]));
	}
	return json_pack("{s:s, s:o, s:o}", "mode", sw->mode, "read", rd, "write", wr);
}

static void print_json(const struct fpgactl_opts *o, const struct fpgad_status *st,
		       const struct card_sweep *sw, const struct stream_run *runs,
		       unsigned n_runs)
{
	json_t *card = json_array(), *streams = json_array();
	char link[32];

	for (unsigned m = 0; m < BENCH_MODES; m++)
		json_array_append_new(card, sweep_json(&sw[m]));
	for (unsigned i = 0; i < n_runs; i++) {
		const struct stream_run *s = &runs[i];
		json_t *run;

		if (s->skipped[0]) {
			run = json_pack("{s:s, s:s}", "channel", s->channel,
					"skipped", s->skipped);
		} else {
			run = json_pack("{s:s, s:s, s:s}", "channel", s->channel,
					"direction", s->h2c ? "h2c" : "c2h", "mode", s->mode);
			json_object_update_new(run, row_json(&s->row));
			if (s->h2c)
				json_object_update_new(run, json_pack("{s:I, s:I, s:I}",
					"card_good", (json_int_t)s->sent.good,
					"card_bad", (json_int_t)s->sent.bad,
					"lost", (json_int_t)s->sent.lost));
		}
		json_array_append_new(streams, run);
	}
	fpgactl_link_name(st->card.link_gen, st->card.link_width, link, sizeof(link));
	if (st->card.simulates[0] && !st->card.link_gen)
		snprintf(link, sizeof(link), "unlimited");	/* the sim's model */
	fpgactl_print_json(json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:s, s:o, s:o}",
				     "url", o->url, "version", st->version,
				     "pid", (json_int_t)st->pid,
				     "card", st->card.simulates[0] ? "simulated" :
				     st->card.pci_address, "link", link,
				     "mode", st->mode, "mode_reason", st->mode_reason,
				     "card_memory", card, "streaming", streams));
}

static void print_histograms(const struct stream_run *runs, unsigned n_runs)
{
	for (unsigned i = 0; i < n_runs; i++) {
		char what[64];

		if (runs[i].skipped[0])
			continue;
		snprintf(what, sizeof(what), "%s (%s)", runs[i].channel, runs[i].mode);
		print_histogram(what, &runs[i].row);
	}
}

/* What bench runs on: fpgad, the card and its link, the transfer mode. */
static void print_head(const struct fpgactl_opts *o, const struct fpgad_status *st)
{
	const struct fpgad_card *card = &st->card;
	char link[32];

	fpgactl_link_name(card->link_gen, card->link_width, link, sizeof(link));
	printf("bench: fpgad %s (pid %u) at %s\n", st->version, st->pid, o->url);
	if (card->simulates[0])
		printf("card:  simulated: %s\n", card->simulates);
	else
		printf("card:  %s %04x:%04x, link %s\n", card->pci_address,
		       card->vendor_id, card->device_id, link);
	printf("mode:  %s%s%s%s\n\n", st->mode, st->mode_reason[0] ? " (" : "",
	       st->mode_reason, st->mode_reason[0] ? ")" : "");
	fflush(stdout);
}

/*
 * Every channel named on the command line is one of fpgad's.  Said before
 * anything runs; 0, or the exit status.
 */
static int check_named(const struct fpgactl_opts *o, const struct fpgad_status *st)
{
	char names[512] = "";
	int r = 0;

	for (uint32_t i = 0; i < st->n_channels; i++)
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", st->channels[i].name);
	for (unsigned k = 0; k < o->n_channels && r == 0; k++) {
		const struct fpgad_channel_summary *ch = NULL;

		for (uint32_t i = 0; i < st->n_channels; i++)
			if (!strcmp(st->channels[i].name, o->channels[k]))
				ch = &st->channels[i];
		if (!ch) {
			fprintf(stderr, "fpgactl: bench: no channel '%s' (fpgad has %s)\n",
				o->channels[k], names[0] ? names : "none");
			r = 1;
		}
	}
	return r;
}

int fpgactl_bench(fpgad_client *c, const struct fpgactl_opts *o)
{
	uint64_t count = o->count_given ? o->count : BENCH_COUNT;
	struct card_sweep sw[BENCH_MODES];
	struct stream_run *runs = NULL;
	struct fpgad_status *st;
	unsigned n_runs = 0;
	int r;

	for (unsigned m = 0; m < BENCH_MODES; m++)
		sw[m] = (struct card_sweep){ .count = count, .text = !o->json };
	r = fpgad_status_get(c, &st);
	if (r < 0)
		return fpgactl_fail(c, "bench: status", r);
	r = check_named(o, st);
	if (r) {
		fpgad_status_free(st);
		return r;
	}
	if (!o->json)
		print_head(o, st);
	r = card_sweeps(c, o, sw);
	if (!r)
		r = stream_sweep(c, o, st, count, &runs, &n_runs);
	if (!r) {
		if (o->json)
			print_json(o, st, sw, runs, n_runs);
		else
			print_histograms(runs, n_runs);
		/* As for fpgactl send: a frame the card rejected or lost fails. */
		for (unsigned i = 0; i < n_runs; i++)
			if (runs[i].sent.bad || runs[i].sent.lost)
				r = 1;
	}
	fpgad_status_free(st);
	for (unsigned m = 0; m < BENCH_MODES; m++) {
		for (unsigned i = 0; i < sw[m].n_sizes; i++) {
			row_free(&sw[m].read[i]);
			row_free(&sw[m].write[i]);
		}
	}
	for (unsigned i = 0; i < n_runs; i++)
		row_free(&runs[i].row);
	free(runs);
	return r;
}
