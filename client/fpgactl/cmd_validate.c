// SPDX-License-Identifier: MIT
/*
 * cmd_validate.c - fpgactl validate: the daemon, the card and every channel
 * checked end to end, as xbutil validate and dcgmi diag do: each check
 * PASS, FAIL or SKIP with its figure, and on FAIL what to do.  Channels
 * another process holds are skipped, never disturbed; card memory is
 * read before it is written and put back.  Exit status 0 when nothing
 * failed, else 1.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "fpgactl.h"

enum verdict { PASS, FAIL, SKIP };

static const char *const verdict_names[] = { "PASS", "FAIL", "SKIP" };

struct check {
	char name[48];
	enum verdict v;
	char figure[256];
	char advice[256];	/* what to do, on FAIL */
};

#define VALIDATE_MAX_CHECKS (16 + 2 * FPGACTL_MAX_CHANNELS)
/* Bytes moved at each end of card memory for the round trip. */
#define ROUND_TRIP_LEN (64u * 1024)
/* Each transfer of the bandwidth figure, at most, and how many. */
#define BW_LEN (8ull << 20)
#define BW_COUNT 16
/* What the remote listener (fpgad-exporter) cannot do: lease, transfer. */
#define REMOTE_SKIP "needs fpgad's local socket: the remote listener is read-only " \
	"(run validate on fpgad's host)"
/* Below this fraction of the link's rate, DMA is called too slow. */
#define BW_FAIL_RATIO 0.25

struct report {
	bool text;		/* each check printed as it is added */
	unsigned n;
	struct check c[VALIDATE_MAX_CHECKS];
};

static void print_check(const struct check *c)
{
	printf("%-4s  %-20s %s\n", verdict_names[c->v], c->name, c->figure);
	if (c->advice[0])
		printf("      %-20s -> %s\n", "", c->advice);
	fflush(stdout);
}

static void add(struct report *rep, const char *name, enum verdict v,
		const char *advice, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add(struct report *rep, const char *name, enum verdict v,
		const char *advice, const char *fmt, ...)
{
	struct check *c;
	va_list ap;

	if (rep->n == VALIDATE_MAX_CHECKS)
		return;
	c = &rep->c[rep->n++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->v = v;
	va_start(ap, fmt);
	vsnprintf(c->figure, sizeof(c->figure), fmt, ap);
	va_end(ap);
	snprintf(c->advice, sizeof(c->advice), "%s", v == FAIL && advice ? advice : "");
	if (rep->text)
		print_check(c);
}

/* fpgad's words for the last failure on @c, else errno's. */
static const char *why(fpgad_client *c, int r)
{
	return fpgad_errmsg(c)[0] ? fpgad_errmsg(c) : strerror(-r);
}

/* GB/s of one lane of PCIe generation @gen after line coding; 0 unknown. */
static double lane_gbps(unsigned gen)
{
	static const double gbps[] = { 0, 0.25, 0.5, 0.98462, 1.96923, 3.93846, 7.87692 };

	return gen < sizeof(gbps) / sizeof(gbps[0]) ? gbps[gen] : 0;
}

/* --- the card ---------------------------------------------------------------- */

/*
 * The card's PCIe AER totals since boot: uncorrectable errors (nonfatal
 * or fatal) fail; correctable ones the link recovered from are a figure.
 */
static void check_card_aer(struct report *rep, const struct fpgad_card *card)
{
	const char *addr = card->pci_address[0] ? card->pci_address : "ADDRESS";
	char advice[256];

	if (!card->aer) {
		add(rep, "card PCIe errors", SKIP, NULL, "not available (%s)",
		    card->simulates[0] ? "the simulated card has no AER counters" :
		    "no AER counters in the card's sysfs entry");
		return;
	}
	if (card->aer_fatal || card->aer_nonfatal) {
		snprintf(advice, sizeof(advice), "the card reported uncorrectable PCIe errors: read the AER lines of dmesg or journalctl -k (%s), lspci -vv -s %s (UESta); reseat the card, check its slot, riser and power",
			 addr, addr);
		add(rep, "card PCIe errors", FAIL, advice,
		    "%llu fatal, %llu nonfatal, %llu correctable AER errors since boot",
		    (unsigned long long)card->aer_fatal,
		    (unsigned long long)card->aer_nonfatal,
		    (unsigned long long)card->aer_correctable);
		return;
	}
	add(rep, "card PCIe errors", PASS, NULL,
	    "0 fatal, 0 nonfatal, %llu correctable AER errors since boot",
	    (unsigned long long)card->aer_correctable);
}

static void check_card(struct report *rep, const struct fpgad_card *card)
{
	char now[32], max[32], advice[256];

	if (card->simulates[0]) {
		add(rep, "card", PASS, NULL, "simulated: %s", card->simulates);
	} else if (!card->vendor_id) {
		snprintf(advice, sizeof(advice), "fpgad cannot read the card's sysfs entry: lspci -vv -s %s",
			 card->pci_address[0] ? card->pci_address : "ADDRESS");
		add(rep, "card", FAIL, advice, "%s: identity unreadable",
		    card->pci_address[0] ? card->pci_address : "no PCI address");
	} else {
		add(rep, "card", PASS, NULL, "%s %04x:%04x (subsystem %04x:%04x), NUMA node %d",
		    card->pci_address, card->vendor_id, card->device_id,
		    card->subsystem_vendor_id, card->subsystem_device_id, card->numa_node);
	}

	fpgactl_link_name(card->link_gen, card->link_width, now, sizeof(now));
	fpgactl_link_name(card->max_link_gen, card->max_link_width, max, sizeof(max));
	if (!card->link_gen || !card->max_link_gen) {
		add(rep, "pcie link", SKIP, NULL, "%s", card->simulates[0] ?
		    "the simulated link is unlimited ([sim] link)" : "sysfs gives no link speed");
	} else if (card->link_gen < card->max_link_gen ||
		   card->link_width < card->max_link_width) {
		snprintf(advice, sizeof(advice), "the link trained below what card and slot can do: reseat the card or use a slot with more lanes (lspci -vv -s %s: LnkSta against LnkCap)",
			 card->pci_address);
		add(rep, "pcie link", FAIL, advice, "%s negotiated, %s capable", now, max);
	} else {
		add(rep, "pcie link", PASS, NULL, "%s negotiated, as capable%s", now,
		    card->simulates[0] ? " (the link model)" : "");
	}

	check_card_aer(rep, card);

	if (card->simulates[0])
		add(rep, "kernel module", SKIP, NULL, "the simulated card has no kernel module");
	else if (!card->driver[0])
		add(rep, "kernel module", FAIL, "load it: modprobe fpgad_dma (then systemctl restart fpgad)",
		    "no driver bound to %s", card->pci_address);
	else
		add(rep, "kernel module", PASS, NULL, "driver %s%s%s; fpgad opened its device (ABI version checked at open)",
		    card->driver, card->module_version[0] ? ", module " : "",
		    card->module_version);
}

/* --- channels ------------------------------------------------------------------ */

/* The peer-to-peer verdict for the GPU at @addr, from Topology. */
static const char *p2p_verdict(const struct fpgad_topology *t, const char *addr)
{
	for (uint32_t i = 0; t && addr[0] && i < t->n_gpus; i++)
		if (!strcmp(t->gpus[i].gpu.address, addr))
			return t->gpus[i].verdict;
	return NULL;
}

static void check_mode(fpgad_client *c, struct report *rep,
		       const struct fpgad_channel_summary *ch, const struct fpgad_topology *t)
{
	const struct fpgad_topo_channel *tc = NULL;
	const char *verdict;
	char name[48], advice[160], failed[512];

	for (uint32_t i = 0; t && i < t->n_channels; i++)
		if (!strcmp(t->channels[i].name, ch->name))
			tc = &t->channels[i];
	verdict = tc ? p2p_verdict(t, tc->gpu) : NULL;
	snprintf(name, sizeof(name), "channel %s", ch->name);
	if (!strcmp(ch->state, "failed")) {
		snprintf(advice, sizeof(advice), FPGACTL_FAILED_TODO, ch->name);
		add(rep, name, FAIL, advice, "%s, %s", ch->direction,
		    fpgactl_failed(c, ch->name, false, failed, sizeof(failed)) ? failed :
		    "state failed");
		return;
	}
	add(rep, name, PASS, NULL, "%s, %s memory, mode %s; p2p: %s%s%s", ch->direction,
	    ch->memory, ch->mode,
	    verdict ? verdict : (strcmp(ch->memory, "cuda") ? "none (host memory)" :
				 t && t->simulated ? "simulated" : "unknown"),
	    tc && tc->mode_reason[0] ? "; why: " : "",
	    tc && tc->mode_reason[0] ? tc->mode_reason : "");
}

/*
 * Why channel @ch is not captured from or sent to, into @buf; NULL when it
 * is: idle, and fpgad's own socket (a lease needs it).
 */
static const char *untouched(const struct fpgactl_opts *o,
			     const struct fpgad_channel_summary *ch, char *buf, size_t len)
{
	if (fpgactl_remote(o->url))
		snprintf(buf, len, "%s", REMOTE_SKIP);
	else if (ch->leases)
		snprintf(buf, len, "leased by %u process%s, not disturbed", ch->leases,
			 ch->leases == 1 ? "" : "es");
	else if (!strcmp(ch->state, "failed"))
		snprintf(buf, len, "the channel is FAILED (channel %s above), not tried: fpgactl reset %s first",
			 ch->name, ch->name);
	else if (strcmp(ch->state, "idle"))
		snprintf(buf, len, "%s, not disturbed", ch->state);
	else
		return NULL;
	return buf;
}

/*
 * Lease channel @channel for check @name: 0, or 1 with the check recorded
 * (SKIP when another process took it meanwhile, else FAIL).
 */
static int lease(fpgad_client *c, const char *channel, const char *name,
		 struct report *rep, fpgad_channel **ret_ch)
{
	int r = fpgad_channel_open(c, channel, 0, ret_ch);

	if (r == -EBUSY)
		add(rep, name, SKIP, NULL, "leased by another process, not disturbed (%s)", why(c, r));
	else if (r < 0)
		add(rep, name, FAIL, "see fpgad's reason, and its log (journalctl -u fpgad)",
		    "cannot lease it: %s", why(c, r));
	return r < 0;
}

/* -n frames of an idle c2h channel, each verified. */
static void capture_verified(fpgad_client *c, const struct fpgactl_opts *o,
			    const struct fpgad_channel_summary *sum, struct report *rep)
{
	struct fpgad_channel_info info;
	uint64_t good = 0, bad = 0, bytes = 0, t0 = 0;
	struct fpgactl_progress bar;
	struct fpgad_frame f;
	fpgad_channel *ch;
	char name[48], failed[512], todo[160];
	int r = 0;

	snprintf(name, sizeof(name), "capture %s", sum->name);
	if (lease(c, sum->name, name, rep, &ch))
		return;
	fpgad_channel_get_info(ch, &info);
	fpgactl_progress_start(&bar, o->count, false, false);
	/* The first frame waited in the ring: it starts the clock. */
	for (uint64_t i = 0; i < o->count; i++) {
		fpgactl_progress_show(&bar, i);
		r = fpgad_frame_wait(ch, &f, o->timeout_ms);
		if (r < 0)
			break;
		if (i == 0)
			t0 = clock_now_ns();
		if (fpgad_frame_verify(ch, &f) == 0)
			good++;
		else
			bad++;
		bytes += i ? f.length : 0;
		fpgad_frame_release(ch, &f);
	}
	if (r == 0)
		fpgactl_progress_show(&bar, o->count);
	fpgactl_progress_end(&bar);
	snprintf(todo, sizeof(todo), FPGACTL_FAILED_TODO, sum->name);
	if (r < 0 && fpgactl_asks(r) && fpgactl_failed(c, sum->name, false, failed, sizeof(failed)))
		add(rep, name, FAIL, todo, "after %llu frames: %s",
		    (unsigned long long)(good + bad), failed);
	else if (r < 0)
		add(rep, name, FAIL, "no frames from the card: fpgactl stats CHANNEL, journalctl -u fpgad",
		    "after %llu frames: %s", (unsigned long long)(good + bad),
		    r == -ETIMEDOUT ? "no frame within the timeout" : why(c, r));
	else if (bad)
		add(rep, name, FAIL, "the data path corrupts frames: check the card, its link (lspci -vv: AER) and fpgad's log",
		    "%llu of %llu frames failed verification", (unsigned long long)bad,
		    (unsigned long long)(good + bad));
	else
		add(rep, name, PASS, NULL, "%llu frames of %llu bytes verified, %.3f GB/s (%s)",
		    (unsigned long long)good, (unsigned long long)info.frame_size,
		    (double)bytes / (double)(clock_now_ns() - t0 + 1), info.mode);
	fpgad_channel_close(ch);
}

/* -n frames to an idle h2c channel, each verified by the card. */
static void send_verified(fpgad_client *c, const struct fpgactl_opts *o,
			 const struct fpgad_channel_summary *sum, struct report *rep)
{
	struct fpgactl_sent sent = { 0 };
	fpgad_channel *ch;
	char name[48];
	int r;

	snprintf(name, sizeof(name), "send %s", sum->name);
	if (lease(c, sum->name, name, rep, &ch))
		return;
	r = fpgactl_send_frames(c, ch, o, o->count, &sent);
	if (r)
		add(rep, name, FAIL, "the card did not take the frames: fpgactl stats CHANNEL, journalctl -u fpgad",
		    "sending %llu frames failed (above)", (unsigned long long)o->count);
	else if (sent.bad || sent.lost || sent.good != o->count)
		add(rep, name, FAIL, "the card rejected or lost frames: check the card, its link (lspci -vv: AER) and fpgad's log",
		    "%llu sent: %llu verified by the card, %llu rejected, %llu lost",
		    (unsigned long long)o->count, (unsigned long long)sent.good,
		    (unsigned long long)sent.bad, (unsigned long long)sent.lost);
	else
		add(rep, name, PASS, NULL, "%llu frames verified by the card", (unsigned long long)sent.good);
	fpgad_channel_close(ch);
}

/* --- card memory --------------------------------------------------------------- */

/*
 * @len bytes at @addr: read (kept), a pattern written and read back, then
 * the bytes put back.  0, or why in @err.
 */
static int round_trip_at(fpgad_buffer *b, uint8_t *p, uint64_t addr, uint64_t len,
			 int timeout_ms, char *err, size_t errlen)
{
	int r;

	r = fpgad_read(b, 0, addr, len, timeout_ms);
	for (uint64_t i = 0; r == 0 && i < len; i++)
		p[len + i] = (uint8_t)(i * 131 + (addr >> 12) + 7);
	if (r == 0)
		r = fpgad_write(b, len, addr, len, timeout_ms);
	if (r == 0)
		r = fpgad_read(b, 2 * len, addr, len, timeout_ms);
	if (r < 0) {
		snprintf(err, errlen, "at 0x%llx: %s", (unsigned long long)addr, strerror(-r));
		return r;
	}
	if (memcmp(p + len, p + 2 * len, len)) {
		snprintf(err, errlen, "at 0x%llx: what was read back differs from what was written",
			 (unsigned long long)addr);
		r = -EIO;
	}
	/* Put the card's bytes back, whatever happened. */
	fpgad_write(b, 0, addr, len, timeout_ms);
	return r;
}

/* GB/s of @n transfers of @len at card address 0 by @fn. */
static int rate(fpgad_buffer *b, int (*fn)(fpgad_buffer *, uint64_t, uint64_t, uint64_t, int),
		uint64_t len, int timeout_ms, double *ret_gbps)
{
	uint64_t t0 = clock_now_ns();
	int r = 0;

	for (unsigned i = 0; i < BW_COUNT && r == 0; i++)
		r = fn(b, 0, 0, len, timeout_ms);
	if (r == 0)
		*ret_gbps = (double)len * BW_COUNT / (double)(clock_now_ns() - t0 + 1);
	return r;
}

static void check_bandwidth(struct report *rep, const char *name, int r, double gbps,
			    const struct fpgad_card *card)
{
	double link = lane_gbps(card->link_gen) * card->link_width;
	char lname[32];

	fpgactl_link_name(card->link_gen, card->link_width, lname, sizeof(lname));
	if (r < 0)
		add(rep, name, FAIL, "card memory transfers fail: journalctl -u fpgad",
		    "%s", strerror(-r));
	else if (link <= 0)
		add(rep, name, PASS, NULL, "%.2f GB/s (no link rate to compare)", gbps);
	else if (gbps < BW_FAIL_RATIO * link)
		add(rep, name, FAIL, "DMA runs far below the link: check LnkSta (lspci -vv), the IOMMU (iommu=pt) and that fpgad runs on the card's NUMA node",
		    "%.2f GB/s = %.1f%% of %s (%.2f GB/s)", gbps, 100 * gbps / link, lname, link);
	else
		add(rep, name, PASS, NULL, "%.2f GB/s = %.1f%% of %s (%.2f GB/s)", gbps,
		    100 * gbps / link, lname, link);
}

/* Round trips at both ends of card memory, and DMA rates per direction. */
static int check_card_memory(fpgad_client *c, const struct fpgactl_opts *o,
			     const struct fpgad_card *card, struct report *rep)
{
	struct fpgad_xfer_rules rules;
	uint64_t len = ROUND_TRIP_LEN, bw, hi;
	char err[256], err2[256];
	fpgad_buffer *b;
	double rd = 0, wr = 0;
	int r, r2;

	if (fpgactl_remote(o->url)) {
		add(rep, "card memory", SKIP, NULL, "%s", REMOTE_SKIP);
		add(rep, "dma read", SKIP, NULL, "%s", REMOTE_SKIP);
		add(rep, "dma write", SKIP, NULL, "%s", REMOTE_SKIP);
		return 0;
	}
	r = fpgad_xfer_rules(c, &rules);
	if (r < 0) {
		add(rep, "card memory", SKIP, NULL, "no card memory transfers: %s", why(c, r));
		add(rep, "dma read", SKIP, NULL, "no card memory transfers");
		add(rep, "dma write", SKIP, NULL, "no card memory transfers");
		return 0;
	}
	len = MIN(len, MIN(rules.max_length, rules.card_memory / 2));
	bw = MIN(BW_LEN, MIN(rules.max_length, rules.card_memory));
	r = fpgad_buffer_alloc_host(c, MAX(3 * len, bw), &b);
	if (r < 0)
		return fpgactl_fail(c, "validate: host buffer", r);
	hi = (rules.card_memory - len) & ~(uint64_t)4095;
	r = round_trip_at(b, fpgad_buffer_data(b), 0, len, o->timeout_ms, err, sizeof(err));
	r2 = round_trip_at(b, fpgad_buffer_data(b), hi, len, o->timeout_ms, err2, sizeof(err2));
	if (r < 0 || r2 < 0)
		add(rep, "card memory", FAIL, "card memory or its engines misbehave: journalctl -u fpgad; a real card: its DDR calibration",
		    "%s%s%s", r < 0 ? err : "", r < 0 && r2 < 0 ? "; " : "", r2 < 0 ? err2 : "");
	else
		add(rep, "card memory", PASS, NULL, "%llu KiB written and read back at 0x0 and 0x%llx",
		    (unsigned long long)(len >> 10), (unsigned long long)hi);

	/* Reads keep the card's bytes in the buffer; writes put them back. */
	r = rate(b, fpgad_read, bw, o->timeout_ms, &rd);
	check_bandwidth(rep, "dma read (c2h)", r, rd, card);
	r = r < 0 ? r : rate(b, fpgad_write, bw, o->timeout_ms, &wr);
	check_bandwidth(rep, "dma write (h2c)", r, wr, card);
	fpgad_buffer_unregister(b);
	return 0;
}

/* --- the report ---------------------------------------------------------------- */

static int print_report(const struct report *rep, bool json)
{
	unsigned n[3] = { 0 };

	for (unsigned i = 0; i < rep->n; i++)
		n[rep->c[i].v]++;
	if (json) {
		json_t *checks = json_array();

		for (unsigned i = 0; i < rep->n; i++) {
			const struct check *c = &rep->c[i];

			json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:o}",
				"name", c->name, "result", verdict_names[c->v],
				"figure", c->figure,
				"advice", c->advice[0] ? json_string(c->advice) : json_null()));
		}
		fpgactl_print_json(json_pack("{s:o, s:i, s:i, s:i}", "checks", checks,
					     "passed", n[PASS], "failed", n[FAIL],
					     "skipped", n[SKIP]));
	} else {
		printf("validate: %u passed, %u failed, %u skipped\n", n[PASS], n[FAIL], n[SKIP]);
	}
	return n[FAIL] ? 1 : 0;
}

int fpgactl_validate(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_topology *topo = NULL;
	struct fpgad_status *s;
	struct report *rep;
	struct fpgactl_opts opts = *o;
	uint64_t t0 = clock_now_ns();
	int r, code = 1;

	rep = calloc(1, sizeof(*rep));
	if (!rep)
		return fpgactl_fail(NULL, "validate", -ENOMEM);
	rep->text = !o->json;
	/* A few frames prove a path; -n asks for more. */
	if (!opts.count_given)
		opts.count = 16;
	r = fpgad_status_get(c, &s);
	if (r < 0) {
		add(rep, "daemon", FAIL, "is fpgad running? (systemctl status fpgad)",
		    "Status: %s", why(c, r));
		code = print_report(rep, o->json);
		free(rep);
		return code;
	}
	add(rep, "daemon", PASS, NULL, "fpgad %s (pid %u) answered in %.2f ms", s->version,
	    s->pid, (double)(clock_now_ns() - t0) / 1e6);
	check_card(rep, &s->card);
	if (fpgad_topology_get(c, &topo) < 0)
		topo = NULL;
	for (uint32_t i = 0; i < s->n_channels; i++)
		check_mode(c, rep, &s->channels[i], topo);
	for (uint32_t i = 0; i < s->n_channels; i++) {
		const struct fpgad_channel_summary *ch = &s->channels[i];
		char name[48], skip[192];

		snprintf(name, sizeof(name), "%s %s", strcmp(ch->direction, "h2c") ?
			 "capture" : "send", ch->name);
		if (untouched(o, ch, skip, sizeof(skip)))
			add(rep, name, SKIP, NULL, "%s", skip);
		else if (strcmp(ch->direction, "h2c"))
			capture_verified(c, &opts, ch, rep);
		else
			send_verified(c, &opts, ch, rep);
	}
	r = check_card_memory(c, &opts, &s->card, rep);
	if (r == 0)
		code = print_report(rep, o->json);
	fpgad_topology_free(topo);
	fpgad_status_free(s);
	free(rep);
	return code;
}
