// SPDX-License-Identifier: MIT
/*
 * net_rows.c - network channels (source = udp or roce) in fpgactl's outputs: their
 * part of stats as JSON, and their rows in status and topo (where they
 * listen, whom from, what the sender was told, what became of its
 * packets), from each channel's stats.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "fpgactl.h"

json_t *fpgactl_net_json(const struct fpgad_channel_stats *st)
{
	const struct fpgad_net_stats *n = &st->net;
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:I, s:I, s:I, s:i, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:I, s:I}",
			 "source", n->source, "interface", n->interface,
			 "listen", n->listen, "sender", n->sender,
			 "mtu", (int)n->mtu, "payload", (int)n->payload,
			 "qpn", (int)n->qpn, "rkey", (json_int_t)n->rkey,
			 "va_base", (json_int_t)n->va_base,
			 "page_stride", (json_int_t)n->page_stride,
			 "pages", (int)n->pages,
			 "packets", (json_int_t)n->packets,
			 "payload_bytes", (json_int_t)n->payload_bytes,
			 "lost_packets", (json_int_t)n->lost_packets,
			 "late_packets", (json_int_t)n->late_packets,
			 "psn_resyncs", (json_int_t)n->psn_resyncs,
			 "incomplete_frames", (json_int_t)n->incomplete_frames,
			 "no_slot_frames", (json_int_t)n->no_slot_frames,
			 "bad_packets", (json_int_t)n->bad_packets,
			 "wrong_qp", (json_int_t)n->wrong_qp,
			 "wrong_rkey", (json_int_t)n->wrong_rkey,
			 "wrong_sender", (json_int_t)n->wrong_sender,
			 "kernel_drops", (json_int_t)n->kernel_drops,
			 "bad_icrc", (json_int_t)n->bad_icrc,
			 "control", n->control,
			 "control_acks", (json_int_t)n->control_acks,
			 "control_failures", (json_int_t)n->control_failures);

	if (!j || strcmp(n->source, "roce"))
		return j;
	json_object_set_new(j, "rdma_device", json_string(n->rdma_device));
	json_object_set_new(j, "gid", json_string(n->gid));
	json_object_set_new(j, "gid_index", json_integer(n->gid_index));
	json_object_set_new(j, "sender_qpn", json_integer(n->sender_qpn));
	json_object_set_new(j, "overrun_frames",
			    json_integer((json_int_t)n->overrun_frames));
	json_object_set_new(j, "landing", json_string(st->net_landing));
	return j;
}

/* The network part of channel @name (a new reference); NULL for a card's. */
static json_t *net_of(fpgad_client *c, const char *name)
{
	struct fpgad_channel_stats st;

	if (!name || fpgad_channel_stats(c, name, &st) < 0 || !st.network)
		return NULL;
	return fpgactl_net_json(&st);
}

void fpgactl_net_annotate(fpgad_client *c, json_t *chans)
{
	size_t i;
	json_t *ch, *net;

	json_array_foreach(chans, i, ch) {
		net = net_of(c, json_string_value(json_object_get(ch, "name")));
		if (net)
			json_object_set_new(ch, "net", net);
	}
}

void fpgactl_net_table(fpgad_client *c, const char *const *names, unsigned n)
{
	bool header = false;

	for (unsigned i = 0; i < n; i++) {
		struct fpgad_channel_stats st;
		const struct fpgad_net_stats *t = &st.net;

		if (fpgad_channel_stats(c, names[i], &st) < 0 || !st.network)
			continue;
		if (!header)
			printf("\n%-12s %-6s %-10s %-22s %5s %-8s %-22s %10s %14s %8s %10s\n",
			       "NETWORK", "SOURCE", "INTERFACE", "LOCAL", "MTU", "QPN",
			       "SENDER", "PACKETS", "BYTES", "LOST", "INCOMPLETE");
		header = true;
		printf("%-12s %-6s %-10s %-22s %5u 0x%-6x %-22s %10llu %14llu %8llu %10llu\n",
		       names[i], t->source, t->interface, t->listen, t->mtu, t->qpn,
		       t->sender, (unsigned long long)t->packets,
		       (unsigned long long)t->payload_bytes,
		       (unsigned long long)t->lost_packets,
		       (unsigned long long)t->incomplete_frames);
		if (st.net_landing[0])
			printf("%-12s landing: %s\n", "", st.net_landing);
	}
}
