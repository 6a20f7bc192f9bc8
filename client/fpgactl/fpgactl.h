/* SPDX-License-Identifier: MIT */
/*
 * fpgactl.h - what fpgactl's commands share: the options main.c parsed,
 * the entry point of each command (cmd_*.c) and the output helpers
 * (output.c).  main.c parses and dispatches; the command files call the
 * helpers and libfpgad, never back into main.c.
 */
#ifndef FPGACTL_H
#define FPGACTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpgad.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

/* The most --url options and channel arguments fpgactl takes. */
#define FPGACTL_MAX_URLS 64
#define FPGACTL_MAX_CHANNELS 32

struct fpgactl_opts {
	const char *url;
	const char *const *urls;	/* every --url, in order (status) */
	const char *const *labels;	/* a row's name for each, or NULL: the URL */
	unsigned n_urls;
	bool json;
	bool verify;
	bool newest;
	bool shared;
	bool reconnect;		/* ride through fpgad restarts (capture) */
	unsigned poll_us;
	uint64_t count;
	bool count_given;	/* -n was on the command line */
	int timeout_ms;
	unsigned interval_ms;	/* between samples (watch) */
	const char *channel;	/* first positional argument, if any */
	const char *const *args; /* the positional arguments after the command */
	unsigned n_args;
	const char *const *channels;	/* every positional argument (watch) */
	unsigned n_channels;
};

/* A command: its entry point returns the exit status (0, 1; 2: usage). */
typedef int (*fpgactl_run_fn)(fpgad_client *c, const struct fpgactl_opts *o);

/* output.c */
struct json_t;
/* Print @o indented (stable field order) and free it; NULL prints nothing. */
void fpgactl_print_json(struct json_t *o);
/* The same on one line (a stream of objects: watch). */
void fpgactl_print_json_line(struct json_t *o);
/*
 * A measured value (a rate, a latency, a time) as JSON: rounded to
 * FPGACTL_JSON_DIGITS significant digits; NAN (not measured) is null.
 */
#define FPGACTL_JSON_DIGITS 4
struct json_t *fpgactl_json_num(double v);
/* One line on stderr naming fpgad's reason; returns the exit code 1. */
int fpgactl_fail(fpgad_client *c, const char *what, int r);
/* Why fpgad_connect(@url) failed with @r, in words, into @buf. */
const char *fpgactl_connect_error(const char *url, int r, char *buf, size_t len);
/* "PCIe Gen3 x8", or "unknown" when either is 0; returns @buf. */
const char *fpgactl_link_name(unsigned gen, unsigned width, char *buf, size_t len);
/* Is @url the remote (read-only) listener of fpgad-exporter, not fpgad's own? */
bool fpgactl_remote(const char *url);
/*
 * When fpgad says channel @name FAILED: "channel NAME is FAILED (its last
 * error, its counters)" in @buf, with @todo ": " and FPGACTL_FAILED_TODO
 * after it; returns @buf, else NULL.
 */
#define FPGACTL_FAILED_TODO "read why in fpgad's log (journalctl -u fpgad), then fpgactl reset %s"
/* Whether error @r leaves fpgad there to ask (not gone, not restarted). */
bool fpgactl_asks(int r);
const char *fpgactl_failed(fpgad_client *c, const char *name, bool todo, char *buf,
			   size_t len);
/*
 * Lease channel @name (fpgad_channel_open @flags) if it runs @direction
 * ("c2h", "h2c"); else one line naming the command for it.  0, or the
 * exit code 1 after saying why.
 */
int fpgactl_lease(fpgad_client *c, const char *name, unsigned flags,
		  const char *direction, fpgad_channel **ret_ch,
		  struct fpgad_channel_info *ret_info);
/* Sort latencies (ns) for fpgactl_percentile_us(). */
void fpgactl_sort_ns(uint64_t *ns, uint64_t n);
/* The @p (0..1) percentile of @n sorted latencies in us; 0 when @n is 0. */
double fpgactl_percentile_us(const uint64_t *sorted_ns, uint64_t n, double p);
/* @size in the largest binary unit it is a whole number of: "8 MiB", "4097 B". */
const char *fpgactl_size_text(uint64_t size, char *buf, size_t len);
/* @ms as people read a duration: "42s", "5m07s", "3h12m", "2d04h". */
const char *fpgactl_duration_text(uint64_t ms, char *buf, size_t len);

/*
 * A progress line on stderr (a bar, the amount, the rate and the time
 * left) for a command that runs long, only when stderr is a terminal:
 * from the start with @at_once (known to be long), else once the work
 * has run a second.  The last update (@done reaches @total) ends the
 * line; fpgactl_progress_end() ends one left open (a failure), and
 * fpgactl_progress_clear() takes one off the screen for a line of output
 * (the next update draws it again).
 */
struct fpgactl_progress {
	bool tty;
	bool at_once;
	bool shown;		/* a line is open on stderr */
	bool bytes;		/* amounts in bytes, else in frames */
	uint64_t total;
	uint64_t t0_ns, t_drawn_ns;
};
void fpgactl_progress_start(struct fpgactl_progress *p, uint64_t total,
			    bool bytes, bool at_once);
void fpgactl_progress_show(struct fpgactl_progress *p, uint64_t done);
void fpgactl_progress_clear(struct fpgactl_progress *p);
void fpgactl_progress_end(struct fpgactl_progress *p);

/*
 * cmd_status.c: the daemon's records (status, channels, clients, version).
 * fpgactl_version(NULL, ...): fpgactl's version and build alone.
 */
int fpgactl_status(fpgad_client *c, const struct fpgactl_opts *o);
int fpgactl_channels(fpgad_client *c, const struct fpgactl_opts *o);
int fpgactl_clients(fpgad_client *c, const struct fpgactl_opts *o);
int fpgactl_version(fpgad_client *c, const struct fpgactl_opts *o);
/* The JSON object `status --json` prints for @s (a new reference). */
struct json_t *fpgactl_status_json(const struct fpgad_status *s);
/* cmd_hosts.c: status of every --url, one row each; 1 if any is unreachable. */
int fpgactl_status_hosts(const struct fpgactl_opts *o);
/* net_rows.c: network channels: their stats as JSON (a new reference), a
 * "net" object in each network channel of the JSON array @chans, and the
 * table of the network channels among @names (nothing when none). */
struct json_t *fpgactl_net_json(const struct fpgad_channel_stats *st);
void fpgactl_net_annotate(fpgad_client *c, struct json_t *chans);
void fpgactl_net_table(fpgad_client *c, const char *const *names, unsigned n);
/* cmd_stats.c: one channel's counters, and its reset. */
int fpgactl_stats(fpgad_client *c, const struct fpgactl_opts *o);
int fpgactl_reset(fpgad_client *c, const struct fpgactl_opts *o);
/* cmd_capture.c */
int fpgactl_capture(fpgad_client *c, const struct fpgactl_opts *o);
/* cmd_send.c */
int fpgactl_send(fpgad_client *c, const struct fpgactl_opts *o);
/* What the card made of frames sent to it. */
struct fpgactl_sent {
	uint64_t *lat_ns;	/* in: NULL, or one entry a frame: the wait for
				   a free buffer to its submit, ns */
	double secs;		/* from the first frame to the card's last */
	uint64_t good;		/* the sim's sink verified */
	uint64_t bad;		/* ... rejected */
	uint64_t lost;		/* errors and drops */
};
/*
 * Hand @n frames in the sim format to the card through the leased h2c
 * channel @ch and wait until it took them: 0, or the exit code 1 after
 * saying why.
 */
int fpgactl_send_frames(fpgad_client *c, fpgad_channel *ch,
			const struct fpgactl_opts *o, uint64_t n,
			struct fpgactl_sent *ret_sent);
/* cmd_validate.c: every check of the card and fpgad, PASS/FAIL/SKIP. */
int fpgactl_validate(fpgad_client *c, const struct fpgactl_opts *o);
/* cmd_topo.c */
int fpgactl_topo(fpgad_client *c, const struct fpgactl_opts *o);
int fpgactl_probe(fpgad_client *c, const struct fpgactl_opts *o);
/* cmd_xfer.c: card memory to a file and back. */
int fpgactl_read(fpgad_client *c, const struct fpgactl_opts *o);
int fpgactl_write(fpgad_client *c, const struct fpgactl_opts *o);
/*
 * cmd_all.c: --all: @run against every card's fpgad, or @run_hosts (not
 * NULL for status) once with every card's URL, one row per card.  While it
 * runs with --json, fpgactl_print_json() appends to fpgactl_json_sink
 * instead of printing.
 */
extern struct json_t *fpgactl_json_sink;
int fpgactl_all(fpgactl_run_fn run, int (*run_hosts)(const struct fpgactl_opts *o),
		const struct fpgactl_opts *o);
/* cmd_bench.c: card memory and streaming figures. */
int fpgactl_bench(fpgad_client *c, const struct fpgactl_opts *o);
/*
 * gpumem_cuda.c (gpumem_nocuda.c without CUDA): @len bytes of GPU memory
 * (cudaMalloc, the current device), or -errno with why in @why.
 */
int gpumem_alloc(uint64_t len, void **ret_ptr, char *why, size_t whylen);
/* Accepts NULL. */
void gpumem_free(void *ptr);
/* cmd_watch.c */
int fpgactl_watch(fpgad_client *c, const struct fpgactl_opts *o);

#endif
