// SPDX-License-Identifier: MIT
/*
 * cmd_stats.c - fpgactl stats CHANNEL and reset CHANNEL: one channel's
 * counters, and clearing a channel that failed.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "channel_counters.h"
#include "fpgactl.h"

/* Where the sender is told its target (sender_control), and how it went. */
/* What the sender must write to (@pages: "pages" or "landing pages"),
 * and where it is told so. */
static void target_print(const struct fpgad_net_stats *n, const char *pages)
{
	printf("target      QPN 0x%x, R_Key 0x%08x, %u %s of %llu bytes from 0x%llx\n",
	       n->qpn, n->rkey, n->pages, pages, (unsigned long long)n->page_stride,
	       (unsigned long long)n->va_base);
	printf("control     told at %s: %llu acknowledged, %llu not\n", n->control,
	       (unsigned long long)n->control_acks,
	       (unsigned long long)n->control_failures);
}

/* source = roce: the QP, its GID and the landing ring the sender writes. */
static void roce_print(const struct fpgad_channel_stats *st)
{
	const struct fpgad_net_stats *n = &st->net;

	printf("network     roce on %s GID %s (index %u), from %s QPN 0x%x, path MTU %u\n",
	       n->rdma_device, n->gid, n->gid_index, n->sender, n->sender_qpn, n->mtu);
	target_print(n, "landing pages");
	printf("landing     %s\n", st->net_landing);
	printf("frames      %llu immediates (%llu bytes copied), %llu packets lost, %llu late, %llu restarts followed\n",
	       (unsigned long long)n->packets, (unsigned long long)n->payload_bytes,
	       (unsigned long long)n->lost_packets, (unsigned long long)n->late_packets,
	       (unsigned long long)n->psn_resyncs);
	printf("incomplete  %llu frames (never delivered), %llu overrun by the sender, %llu with no free slot (dropped), %llu bad immediates\n",
	       (unsigned long long)n->incomplete_frames,
	       (unsigned long long)n->overrun_frames,
	       (unsigned long long)n->no_slot_frames,
	       (unsigned long long)n->bad_packets);
}

static void net_print(const struct fpgad_channel_stats *st)
{
	const struct fpgad_net_stats *n = &st->net;

	if (!strcmp(n->source, "roce")) {
		roce_print(st);
		return;
	}
	printf("network     udp on %s from %s, MTU %u (%u-byte packets)\n",
	       n->listen, n->sender, n->mtu, n->payload);
	target_print(n, "pages");
	printf("packets     %llu (%llu payload bytes), %llu lost, %llu late or duplicated, %llu restarts followed\n",
	       (unsigned long long)n->packets, (unsigned long long)n->payload_bytes,
	       (unsigned long long)n->lost_packets, (unsigned long long)n->late_packets,
	       (unsigned long long)n->psn_resyncs);
	printf("incomplete  %llu frames (never delivered), %llu with no free slot (dropped)\n",
	       (unsigned long long)n->incomplete_frames,
	       (unsigned long long)n->no_slot_frames);
	printf("refused     %llu bad, %llu bad iCRC, %llu wrong QPN, %llu wrong R_Key, %llu wrong sender; kernel dropped %llu\n",
	       (unsigned long long)n->bad_packets, (unsigned long long)n->bad_icrc,
	       (unsigned long long)n->wrong_qp,
	       (unsigned long long)n->wrong_rkey, (unsigned long long)n->wrong_sender,
	       (unsigned long long)n->kernel_drops);
}

int fpgactl_stats(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_channel_stats st;
	int r = fpgad_channel_stats(c, o->channel, &st);

	if (r < 0)
		return fpgactl_fail(c, o->channel, r);
	if (o->json) {
		json_t *j = json_pack("{s:s, s:s, s:s}", "channel", o->channel,
				      "state", st.state, "mode", st.mode);

#define COUNTER_JSON(f, h) \
		json_object_set_new(j, #f, json_integer((json_int_t)st.f));
		CHANNEL_COUNTERS(COUNTER_JSON)
#undef COUNTER_JSON
		json_object_set_new(j, "dma_ns_total", json_integer((json_int_t)st.dma_ns_total));
		json_object_set_new(j, "queued_avg", fpgactl_json_num(st.queued_avg));
		json_object_set_new(j, "latency_ns_total",
				    json_integer((json_int_t)st.latency_ns_total));
		json_object_set_new(j, "latency_frames",
				    json_integer((json_int_t)st.latency_frames));
		json_object_set_new(j, "integrity", st.integrity[0] ?
				    json_string(st.integrity) : json_null());
		json_object_set_new(j, "last_error", st.last_error[0] ?
				    json_string(st.last_error) : json_null());
		if (st.network)
			json_object_set_new(j, "net", fpgactl_net_json(&st));
		fpgactl_print_json(j);
		return 0;
	}
	printf("channel %s: %s, %s\n", o->channel, st.state, st.mode);
	printf("frames      %llu (%llu bytes)\n", (unsigned long long)st.frames,
	       (unsigned long long)st.bytes);
	printf("drops       %llu\nstalls      %llu\n", (unsigned long long)st.drops,
	       (unsigned long long)st.stalls);
	printf("errors      %llu, %llu recoveries\n", (unsigned long long)st.errors,
	       (unsigned long long)st.recoveries);
	if (st.last_error[0])
		printf("last error  %s\n", st.last_error);
	/* integrity = none checks nothing: no count to give. */
	if (!strcmp(st.integrity, "none"))
		printf("integrity   none\n");
	else
		printf("integrity   %llu frames failed their CRC (flagged)\n",
		       (unsigned long long)st.integrity_errors);
	printf("copies      %llu (bounce)\n", (unsigned long long)st.copies);
	printf("dma time    %.3f s in total\n", (double)st.dma_ns_total / 1e9);
	printf("card queue  %.2f transfers on average at each completion\n",
	       st.queued_avg);
	if (st.latency_frames)
		printf("latency     %.1f us on average from DMA end to publication\n",
		       (double)st.latency_ns_total / (double)st.latency_frames / 1e3);
	if (st.card_good || st.card_bad)
		printf("card sink   %llu verified, %llu rejected\n",
		       (unsigned long long)st.card_good,
		       (unsigned long long)st.card_bad);
	if (st.network)
		net_print(&st);
	return 0;
}

int fpgactl_reset(fpgad_client *c, const struct fpgactl_opts *o)
{
	int r = fpgad_channel_reset(c, o->channel);

	if (r < 0)
		return fpgactl_fail(c, o->channel, r);
	if (o->json)
		fpgactl_print_json(json_pack("{s:s, s:b}", "channel", o->channel,
					     "reset", 1));
	else
		printf("channel %s: reset\n", o->channel);
	return 0;
}

