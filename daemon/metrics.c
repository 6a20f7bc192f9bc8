// SPDX-License-Identifier: MIT
/*
 * metrics.c - the Prometheus exposition (metrics.h): what is exported and
 * under which names, and the text format.  fpgad-exporter serves it over
 * HTTP; fpgad hands it out on the local socket (a Metrics request).
 *
 * Names follow Prometheus' naming guide: the fpgad_ prefix, base units
 * (seconds, bytes), _total on counters, one HELP and one TYPE line per
 * family, then its samples, per channel labelled channel= and direction=.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "channel_counters.h"
#include "clock.h"
#include "core.h"
#include "errmap.h"
#include "metrics.h"
#include "log.h"
#include "xfer_ring.h"

/* A family of samples, one per channel, from a field of struct channel_stats. */
struct stats_family {
	const char *name;
	const char *help;
	size_t offset;
};

/* uint64_t fields: the channel counters that are families of their own. */
#define COUNTER_FAMILY(f, h) \
	{ "fpgad_channel_" #f "_total", h, offsetof(struct channel_stats, f) },
static const struct stats_family counters[] = {
	CHANNEL_COUNTERS(COUNTER_FAMILY)
};
#undef COUNTER_FAMILY

/* uint64_t fields of a network channel's (source = udp or roce) net counters. */
static const struct stats_family net_counters[] = {
	{ "fpgad_channel_net_packets_total",
	  "Network channels: datagrams from the sender.",
	  offsetof(struct channel_stats, net.packets) },
	{ "fpgad_channel_net_bytes_total",
	  "Network channels: payload bytes written into slots.",
	  offsetof(struct channel_stats, net.bytes) },
	{ "fpgad_channel_net_lost_packets_total",
	  "Network channels: packets lost (PSNs skipped); their frames were not delivered.",
	  offsetof(struct channel_stats, net.lost_packets) },
	{ "fpgad_channel_net_late_packets_total",
	  "Network channels: duplicated or reordered packets, ignored.",
	  offsetof(struct channel_stats, net.late_packets) },
	{ "fpgad_channel_net_incomplete_frames_total",
	  "Network channels: torn frames (a packet lost, late, misplaced or an immediate lost), never delivered.",
	  offsetof(struct channel_stats, net.incomplete_frames) },
	{ "fpgad_channel_net_no_slot_frames_total",
	  "Network channels: frames that started while no slot was free, dropped (a sender has no backpressure).",
	  offsetof(struct channel_stats, net.no_slot_frames) },
	{ "fpgad_channel_net_bad_packets_total",
	  "Network channels: datagrams that were not a UC RDMA WRITE into the ring.",
	  offsetof(struct channel_stats, net.bad_packets) },
	{ "fpgad_channel_net_wrong_qp_total",
	  "Network channels: packets to another QP number, ignored.",
	  offsetof(struct channel_stats, net.wrong_qp) },
	{ "fpgad_channel_net_wrong_rkey_total",
	  "Network channels: packets with another (a stale ring's) R_Key, ignored.",
	  offsetof(struct channel_stats, net.wrong_rkey) },
	{ "fpgad_channel_net_wrong_sender_total",
	  "Network channels: datagrams from an address other than the sender's, ignored.",
	  offsetof(struct channel_stats, net.wrong_sender) },
	{ "fpgad_channel_net_kernel_drops_total",
	  "Network channels: datagrams the kernel dropped, the socket's buffer full (SO_MEMINFO).",
	  offsetof(struct channel_stats, net.kernel_drops) },
	{ "fpgad_channel_net_bad_icrc_total",
	  "Network channels: packets whose RoCE iCRC did not match, not used.",
	  offsetof(struct channel_stats, net.bad_icrc) },
	{ "fpgad_channel_net_control_acks_total",
	  "Network channels: targets (a new ring's R_Key) the sender acknowledged.",
	  offsetof(struct channel_stats, net.control_acks) },
	{ "fpgad_channel_net_control_failures_total",
	  "Network channels: targets the sender did not acknowledge after the retries, or refused.",
	  offsetof(struct channel_stats, net.control_failures) },
	{ "fpgad_channel_net_psn_resyncs_total",
	  "Network channels: times the sender's PSN went back (a restart, a jump back, a narrower PSN wrapping) and fpgad followed it.",
	  offsetof(struct channel_stats, net.psn_resyncs) },
	{ "fpgad_channel_net_overrun_frames_total",
	  "Network channels (source = roce): frames the sender came back to while fpgad copied them out of the landing ring, never delivered.",
	  offsetof(struct channel_stats, net.overrun_frames) },
};

/* struct histo fields. */
static const struct stats_family histograms[] = {
	{ "fpgad_channel_dma_duration_seconds",
	  "Card DMA time of each transfer that completed, from the engine's start to its end.",
	  offsetof(struct channel_stats, dma) },
	{ "fpgad_channel_publish_latency_seconds",
	  "c2h: time from the end of a frame's card DMA to its publication to the lessees, measured by fpgad's streaming thread; includes the bounce copy and the CRC check.",
	  offsetof(struct channel_stats, latency) },
};

/* --- the text format ------------------------------------------------------------ */

static void family(FILE *f, const char *name, const char *type,
		   const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value: backslash, double quote and line feed escaped. */
static void label_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

/* A label: name="value" (escaped), after a comma unless @first. */
static void label(FILE *f, const char *name, const char *value, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	label_value(f, value);
	fputc('"', f);
}

/* Writes the labels of a sample (@arg: whose), without braces. */
typedef void labels_fn(FILE *f, const void *arg);

/* channel="...",direction="..." of a struct metrics_channel. */
static void channel_labels(FILE *f, const void *arg)
{
	const struct metrics_channel *mc = arg;

	label(f, "channel", mc->name, true);
	label(f, "direction", mc->direction, false);
}

/* NAME{channel="...",direction="..." — the caller closes the braces. */
static void channel_sample(FILE *f, const char *name,
			   const struct metrics_channel *mc)
{
	fprintf(f, "%s{", name);
	channel_labels(f, mc);
}

/*
 * The samples of histogram @h with @labels(@arg) on each: its buckets,
 * cumulative in the exposition with bounds in seconds, then _sum, _count.
 */
static void histo_samples(FILE *f, const char *name, const struct histo *h,
			  labels_fn *labels, const void *arg)
{
	uint64_t cum = 0;

	for (unsigned b = 0; b < HISTO_BOUNDS; b++) {
		cum += h->bucket[b];
		fprintf(f, "%s_bucket{", name);
		labels(f, arg);
		fprintf(f, ",le=\"%.10g\"} %llu\n",
			(double)histo_bound_ns(b) / 1e9, (unsigned long long)cum);
	}
	fprintf(f, "%s_bucket{", name);
	labels(f, arg);
	fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)h->count);
	fprintf(f, "%s_sum{", name);
	labels(f, arg);
	fprintf(f, "} %.9f\n", (double)h->sum_ns / 1e9);
	fprintf(f, "%s_count{", name);
	labels(f, arg);
	fprintf(f, "} %llu\n", (unsigned long long)h->count);
}

static void format_daemon(FILE *f, const struct metrics_snapshot *snap)
{
	family(f, "fpgad_build_info", "gauge",
	       "The version of fpgad that runs, as a label; always 1.");
	fputs("fpgad_build_info{version=\"", f);
	label_value(f, snap->version);
	fputs("\"} 1\n", f);
	family(f, "fpgad_uptime_seconds", "gauge", "Seconds since fpgad started.");
	fprintf(f, "fpgad_uptime_seconds %.3f\n", (double)snap->uptime_ns / 1e9);
	family(f, "fpgad_clients", "gauge",
	       "Control connections open, on the local socket and the remote listener.");
	fprintf(f, "fpgad_clients %u\n", snap->clients);
	family(f, "fpgad_pinned_bytes", "gauge",
	       "Bytes pinned for the card's DMA: every channel's ring, and its staging in bounce mode.");
	fprintf(f, "fpgad_pinned_bytes %llu\n", (unsigned long long)snap->pinned_bytes);
}

/* A PCI id as lspci writes it ("10ee"), "" when unknown. */
static void label_id(FILE *f, const char *name, unsigned id)
{
	char buf[8] = "";

	if (id)
		snprintf(buf, sizeof(buf), "%04x", id);
	label(f, name, buf, false);
}

static void label_link(FILE *f, const char *name, unsigned gen, unsigned width)
{
	char buf[32] = "";

	if (gen && width)
		snprintf(buf, sizeof(buf), "PCIe Gen%u x%u", gen, width);
	label(f, name, buf, false);
}

/*
 * The card's PCIe AER totals, as read for this scrape; the family only
 * where the card has them (not the simulated card).
 */
static void format_card_aer(FILE *f, const struct topo_inventory *inv)
{
	const struct { const char *severity; uint64_t n; } sev[] = {
		{ "correctable", inv->aer_correctable },
		{ "nonfatal", inv->aer_nonfatal },
		{ "fatal", inv->aer_fatal },
	};

	if (!inv->aer)
		return;
	family(f, "fpgad_card_aer_errors_total", "counter",
	       "PCIe AER errors the kernel counted on the card since boot, by severity: the totals of its sysfs aer_dev_correctable, aer_dev_nonfatal and aer_dev_fatal; only where the card has them.");
	for (size_t i = 0; i < sizeof(sev) / sizeof(sev[0]); i++) {
		fputs("fpgad_card_aer_errors_total{", f);
		label(f, "pci_address", inv->addr, true);
		label(f, "severity", sev[i].severity, false);
		fprintf(f, "} %llu\n", (unsigned long long)sev[i].n);
	}
}

static void format_card(FILE *f, const struct metrics_snapshot *snap)
{
	const struct topo_inventory *inv = &snap->card.inv;
	char numa[16] = "";

	if (inv->numa_node >= 0)
		snprintf(numa, sizeof(numa), "%d", inv->numa_node);
	family(f, "fpgad_card_info", "gauge",
	       "The card fpgad drives, as labels (empty where unknown): PCI address and ids, PCIe link now and at most, NUMA node, driver and module version, or what the simulated card models; always 1.");
	fputs("fpgad_card_info{", f);
	label(f, "pci_address", inv->addr, true);
	label_id(f, "vendor_id", inv->vendor);
	label_id(f, "device_id", inv->device);
	label_id(f, "subsystem_vendor_id", inv->subsystem_vendor);
	label_id(f, "subsystem_device_id", inv->subsystem_device);
	label_link(f, "link", inv->link_gen, inv->link_width);
	label_link(f, "max_link", inv->max_link_gen, inv->max_link_width);
	label(f, "numa_node", numa, false);
	label(f, "driver", inv->driver, false);
	label(f, "module_version", inv->module_version, false);
	label(f, "simulates", snap->card.simulates, false);
	fputs("} 1\n", f);
	format_card_aer(f, inv);
}

static void format_process(FILE *f, const struct metrics_snapshot *snap)
{
	const struct metrics_process *p = &snap->process;

	family(f, "process_start_time_seconds", "gauge",
	       "Start time of the process since unix epoch in seconds.");
	fprintf(f, "process_start_time_seconds %.3f\n", p->start_time_s);
	family(f, "process_cpu_seconds_total", "counter",
	       "Total user and system CPU time spent in seconds.");
	fprintf(f, "process_cpu_seconds_total %.3f\n", p->cpu_s);
	family(f, "process_resident_memory_bytes", "gauge",
	       "Resident memory size in bytes.");
	fprintf(f, "process_resident_memory_bytes %llu\n",
		(unsigned long long)p->resident_bytes);
	family(f, "process_open_fds", "gauge", "Number of open file descriptors.");
	fprintf(f, "process_open_fds %u\n", p->open_fds);
	family(f, "process_max_fds", "gauge", "Maximum number of open file descriptors.");
	fprintf(f, "process_max_fds %llu\n", (unsigned long long)p->max_fds);
}

static void op_label(FILE *f, const void *arg)
{
	label(f, "op", arg, true);
}

/* NAME{@lname="@lvalue"} @v */
static void labelled_sample(FILE *f, const char *name, const char *lname,
			    const char *lvalue, uint64_t v)
{
	fprintf(f, "%s{", name);
	label(f, lname, lvalue, true);
	fprintf(f, "} %llu\n", (unsigned long long)v);
}

/* Failed transfers by kind, refused ones by the rule they broke. */
static void format_xfer_failures(FILE *f, const struct xfer_stats *x)
{
	family(f, "fpgad_transfer_errors_total", "counter",
	       "Card memory transfers that failed, by kind: io (the card's DMA failed), timeout (the card's DMA timed out), canceled (an engine reset after a hang, the buffer unregistered or the connection gone), other (fpgad's side: no memory, a GPU copy that failed).");
	for (unsigned k = 0; k < XFER_ERROR_KINDS; k++)
		labelled_sample(f, "fpgad_transfer_errors_total", "kind",
				xfer_error_kind_name(k), x->errors_by[k]);
	family(f, "fpgad_transfer_refused_total", "counter",
	       "Card memory transfers refused, by the rule they broke (fpgad_xfer.h), named as libfpgad's message for it begins.");
	for (unsigned r = FPGAD_XFER_RULE_NONE + 1; r < FPGAD_XFER_RULE_COUNT; r++)
		labelled_sample(f, "fpgad_transfer_refused_total", "rule",
				xfer_rule_name(r), x->refused_by[r]);
}

/* The transfer plane (fpgad_xfer.h): card memory reads and writes. */
static void format_xfer(FILE *f, const struct metrics_snapshot *snap)
{
	static const struct {
		const char *name, *type, *help;
		size_t offset;
		bool wide;		/* uint64_t, else unsigned */
	} fams[] = {
		{ "fpgad_transfers_total", "counter",
		  "Card memory transfers completed, any status.",
		  offsetof(struct xfer_stats, transfers), true },
		{ "fpgad_transfer_bytes_total", "counter",
		  "Bytes card memory transfers moved.",
		  offsetof(struct xfer_stats, bytes), true },
		{ "fpgad_transfer_engine_resets_total", "counter",
		  "Memory engines reset after a hang.",
		  offsetof(struct xfer_stats, resets), true },
		{ "fpgad_transfer_queues", "gauge",
		  "Connections with a transfer queue.",
		  offsetof(struct xfer_stats, queues), false },
		{ "fpgad_transfer_buffers", "gauge",
		  "Buffers registered for transfers, all connections.",
		  offsetof(struct xfer_stats, buffers), false },
		{ "fpgad_transfer_registered_bytes", "gauge",
		  "Bytes of the buffers registered for transfers.",
		  offsetof(struct xfer_stats, registered), true },
	};

	for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		const char *at = (const char *)&snap->xfer + fams[i].offset;
		uint64_t v = 0;
		unsigned u;

		if (fams[i].wide) {
			memcpy(&v, at, sizeof(v));
		} else {
			memcpy(&u, at, sizeof(u));
			v = u;
		}
		family(f, fams[i].name, fams[i].type, fams[i].help);
		fprintf(f, "%s %llu\n", fams[i].name, (unsigned long long)v);
	}
	format_xfer_failures(f, &snap->xfer);
	family(f, "fpgad_transfer_latency_seconds", "histogram",
	       "Card memory transfers fpgad started (not refused), any status, by op (read: card to host, write: host to card): time from fpgad taking the entry from its queue (a barrier: its start) to its completion, as the completion's t_start_ns and t_end_ns say.");
	histo_samples(f, "fpgad_transfer_latency_seconds",
		      &snap->xfer.latency[DIR_C2H], op_label, "read");
	histo_samples(f, "fpgad_transfer_latency_seconds",
		      &snap->xfer.latency[DIR_H2C], op_label, "write");
}

static void format_states(FILE *f, const struct metrics_snapshot *snap)
{
	family(f, "fpgad_channel_mode", "gauge",
	       "The channel's memory and transfer mode, as labels; always 1.");
	for (unsigned i = 0; i < snap->n_channels; i++) {
		const struct metrics_channel *mc = &snap->channels[i];

		channel_sample(f, "fpgad_channel_mode", mc);
		label(f, "memory", mc->memory ? mc->memory : "", false);
		label(f, "mode", mc->mode ? mc->mode : "", false);
		fputs("} 1\n", f);
	}
	family(f, "fpgad_channel_state", "gauge",
	       "1 for the state the channel is in, 0 for the others.");
	for (unsigned i = 0; i < snap->n_channels; i++) {
		const struct metrics_channel *mc = &snap->channels[i];

		for (unsigned s = 0; s < CHANNEL_STATES; s++) {
			channel_sample(f, "fpgad_channel_state", mc);
			fprintf(f, ",state=\"%s\"} %d\n", channel_state_name(s),
				mc->st.state == s);
		}
	}
	family(f, "fpgad_channel_leases", "gauge",
	       "Leases held on the channel: processes that read (c2h) or write (h2c) it.");
	for (unsigned i = 0; i < snap->n_channels; i++) {
		channel_sample(f, "fpgad_channel_leases", &snap->channels[i]);
		fprintf(f, "} %u\n", snap->channels[i].st.leases);
	}
}

/* Network channels' endpoints and senders, as labels of one gauge. */
static void format_net_info(FILE *f, const struct metrics_snapshot *snap)
{
	family(f, "fpgad_channel_net_info", "gauge",
	       "Network channels: the source, the interface holding the local address, the local address and port, MTU, QPN and sender; always 1.");
	for (unsigned i = 0; i < snap->n_channels; i++) {
		const struct metrics_channel *mc = &snap->channels[i];
		char mtu[16], qpn[16];

		if (!mc->st.network)
			continue;
		snprintf(mtu, sizeof(mtu), "%u", mc->net.mtu);
		snprintf(qpn, sizeof(qpn), "0x%x", mc->net.qpn);
		channel_sample(f, "fpgad_channel_net_info", mc);
		label(f, "source", source_kind_name(SOURCE_UDP), false);
		label(f, "interface", mc->net.interface, false);
		label(f, "listen", mc->net.listen, false);
		label(f, "mtu", mtu, false);
		label(f, "qpn", qpn, false);
		label(f, "sender", mc->net.sender, false);
		fputs("} 1\n", f);
	}
}

/* @net_only: the network channels' samples only. */
static void format_counter(FILE *f, const struct metrics_snapshot *snap,
			   const struct stats_family *c, bool net_only)
{
	family(f, c->name, "counter", c->help);
	for (unsigned i = 0; i < snap->n_channels; i++) {
		const struct metrics_channel *mc = &snap->channels[i];
		uint64_t v;

		if (net_only && !mc->st.network)
			continue;

		memcpy(&v, (const char *)&mc->st + c->offset, sizeof(v));
		channel_sample(f, c->name, mc);
		fprintf(f, "} %llu\n", (unsigned long long)v);
	}
}

static void format_histogram(FILE *f, const struct metrics_snapshot *snap,
			     const struct stats_family *hg)
{
	family(f, hg->name, "histogram", hg->help);
	for (unsigned i = 0; i < snap->n_channels; i++) {
		const struct metrics_channel *mc = &snap->channels[i];

		histo_samples(f, hg->name, (const void *)((const char *)&mc->st + hg->offset),
			      channel_labels, mc);
	}
}

/* A lease's labels: its channel's, then who holds it. */
static void lease_sample(FILE *f, const char *name, const struct metrics_channel *mc,
			 const struct lease_view *lv)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)lv->pid);
	channel_sample(f, name, mc);
	label(f, "pid", pid, false);
	label(f, "process", lv->who.process, false);
	label(f, "container", lv->who.container, false);
	label(f, "pod", lv->who.pod, false);
	fputs("} ", f);
}

/*
 * Per lease: what it was given, how far behind the newest it is (given
 * and not yet released), what drop-oldest took back from it.
 */
static void format_leases(FILE *f, const struct metrics_snapshot *snap)
{
	static const struct {
		const char *name, *type, *help;
	} fam[] = {
		{ "fpgad_lease_frames_total", "counter",
		  "Frames published to a lease, by lessee (pid, process, container, pod)." },
		{ "fpgad_lease_lag_frames", "gauge",
		  "Frames a lease was given and has not released yet: how far its lessee is behind." },
		{ "fpgad_lease_dropped_frames_total", "counter",
		  "Frames taken back from a lease unclaimed (drop-oldest): what its lessee missed." },
	};

	unsigned n = 0;

	for (unsigned c = 0; c < snap->n_channels; c++)
		n += snap->channels[c].n_leases;
	if (!n)
		return;		/* no lease, no lease family */
	for (size_t k = 0; k < sizeof(fam) / sizeof(fam[0]); k++) {
		family(f, fam[k].name, fam[k].type, fam[k].help);
		for (unsigned c = 0; c < snap->n_channels; c++) {
			const struct metrics_channel *mc = &snap->channels[c];

			for (unsigned i = 0; i < mc->n_leases; i++) {
				const struct lease_view *lv = &mc->leases[i];
				uint64_t gone = lv->returned + lv->dropped;
				uint64_t v = k == 0 ? lv->frames :
					     k == 1 ? (lv->frames > gone ? lv->frames - gone : 0) :
						      lv->dropped;

				lease_sample(f, fam[k].name, mc, lv);
				fprintf(f, "%llu\n", (unsigned long long)v);
			}
		}
	}
}

int metrics_format(const struct metrics_snapshot *snap, char **ret_text,
		   size_t *ret_len)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return -errno;
	format_daemon(f, snap);
	format_card(f, snap);
	format_process(f, snap);
	format_states(f, snap);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++)
		if (counters[i].help)
			format_counter(f, snap, &counters[i], false);
	for (unsigned c = 0; c < snap->n_channels; c++) {
		if (!snap->channels[c].st.network)
			continue;
		format_net_info(f, snap);
		for (size_t i = 0; i < sizeof(net_counters) / sizeof(net_counters[0]); i++)
			format_counter(f, snap, &net_counters[i], true);
		break;
	}
	for (size_t i = 0; i < sizeof(histograms) / sizeof(histograms[0]); i++)
		format_histogram(f, snap, &histograms[i]);
	format_xfer(f, snap);
	format_leases(f, snap);
	if (ferror(f) | fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	*ret_text = text;
	*ret_len = len;
	return 0;
}

/* --- the snapshot ---------------------------------------------------------------- */

/* Descriptors open now: the entries of /proc/self/fd, less the one reading it. */
static unsigned count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0;

	if (!dir)
		return 0;
	while ((e = readdir(dir)))
		n += e->d_name[0] != '.';
	closedir(dir);
	return n ? n - 1 : 0;
}

static void collect_process(struct core *d, struct metrics_process *p)
{
	struct timespec now;
	struct rusage ru;
	struct rlimit rl;
	unsigned long long pages = 0, resident = 0;
	FILE *f;

	clock_gettime(CLOCK_REALTIME, &now);
	p->start_time_s = (double)now.tv_sec + now.tv_nsec / 1e9 -
			  (double)(clock_now_ns() - d->start_ns) / 1e9;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		p->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
			   ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	f = fopen("/proc/self/statm", "re");
	if (f) {
		if (fscanf(f, "%llu %llu", &pages, &resident) == 2)
			p->resident_bytes = resident * (uint64_t)sysconf(_SC_PAGESIZE);
		fclose(f);
	}
	p->open_fds = count_fds();
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		p->max_fds = rl.rlim_cur;
}

void metrics_collect(struct core *d, struct metrics_snapshot *ret_snap)
{
	struct metrics_snapshot *s = ret_snap;

	memset(s, 0, sizeof(*s));
	s->version = FPGAD_VERSION;
	s->uptime_ns = clock_now_ns() - d->start_ns;
	p2p_card(d->p2p, &s->card);
	collect_process(d, &s->process);
	xfer_get_stats(d->xfer, &s->xfer);
	s->clients = d->sessions.count;
	s->n_channels = d->n_channels;
	for (unsigned i = 0; i < d->n_channels; i++) {
		struct channel *ch = d->channels[i];
		const struct config_channel *cc = channel_config(ch);

		s->channels[i].name = cc->name;
		s->channels[i].direction = direction_name(cc->direction);
		channel_get_stats(ch, &s->channels[i].st);
		s->channels[i].memory = memory_kind_name(s->channels[i].st.memory);
		s->channels[i].mode = transfer_mode_name(s->channels[i].st.mode);
		if (s->channels[i].st.network)
			channel_source_stats(ch, &s->channels[i].net);
		s->pinned_bytes += channel_pinned_bytes(ch);
		s->channels[i].n_leases = lease_views(ch, s->channels[i].leases,
						      METRICS_LEASES_MAX);
	}
}
