/* SPDX-License-Identifier: MIT */
/*
 * metrics.h - fpgad's counters for Prometheus: a snapshot of the daemon
 * and its channels and its text exposition (format 0.0.4), answered on
 * the local socket (MetricsRequest).  fpgad-exporter serves it over HTTP,
 * so fpgad parses no scraper's request.
 *
 * The snapshot is taken on the loop: each channel's counters are copied
 * under the channel lock (channel_get_stats), which the streaming thread
 * holds only for its bookkeeping; the transfer counters and latencies
 * under the transfer plane's lock (xfer_get_stats), which the transfer
 * thread lets go of whenever it waits; the rest is fixed once fpgad has
 * started.
 */
#ifndef FPGAD_METRICS_H
#define FPGAD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "channel/channel.h"
#include "channel/lease.h"
#include "config/config.h"
#include "device/source.h"
#include "topology/p2p.h"
#include "xfer/xfer.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct core;

/*
 * Leases shown per channel, at most: the lease series are bounded (a
 * lease's go when it ends) and a channel has few lessees.
 */
#define METRICS_LEASES_MAX 16

struct metrics_channel {
	const char *name;
	const char *direction;		/* "c2h", "h2c" */
	const char *memory;		/* "host", "cuda" */
	const char *mode;		/* "host", "gpudirect", "bounce" */
	struct channel_stats st;
	struct source_stats net;		/* st.network: endpoint and sender */
	unsigned n_leases;
	struct lease_view leases[METRICS_LEASES_MAX];
};

/* The process, as Prometheus' client libraries export it. */
struct metrics_process {
	double start_time_s;		/* since the epoch */
	double cpu_s;			/* user and system */
	uint64_t resident_bytes;
	unsigned open_fds;
	uint64_t max_fds;		/* the soft RLIMIT_NOFILE */
};

struct metrics_snapshot {
	const char *version;
	uint64_t uptime_ns;
	unsigned clients;		/* control connections */
	uint64_t pinned_bytes;		/* channel_pinned_bytes(), all channels */
	unsigned n_channels;
	struct metrics_channel channels[CONFIG_MAX_CHANNELS];
	struct p2p_card card;
	struct metrics_process process;
	struct xfer_stats xfer;
};

/* @d now; any thread, once daemon_start() has made the channels. */
void metrics_collect(struct core *d, struct metrics_snapshot *ret_snap);
/*
 * @snap in the text exposition format: a NUL-terminated malloc'd text and
 * its length (without the NUL).
 */
int metrics_format(const struct metrics_snapshot *snap, char **ret_text,
		   size_t *ret_len);

#endif
