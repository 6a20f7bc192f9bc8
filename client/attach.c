// SPDX-License-Identifier: MIT
/*
 * attach.c - a client's calls on a channel: open it (its lease, lease.c),
 * close it, what it is; and the requests on a channel by name,
 * ChannelStats, Probe and ResetChannel.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel_counters.h"
#include "client_internal.h"
#include "clock.h"
#include "names.h"

int fpgad_channel_open(fpgad_client *c, const char *name, unsigned flags,
		       fpgad_channel **ret_ch)
{
	uint64_t deadline = clock_deadline_ns(c->timeout_ms);
	fpgad_channel *ch;
	int r;

	if (!name || !name_valid(name)) {
		conn_set_errmsg(c, "'%s' is not a channel name (1-%d letters, digits, '_' or '-')",
				name ? name : "(null)", NAME_MAX_CHANNEL - 1);
		return -EINVAL;
	}
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	ch->c = c;
	ch->link = -1;
	ch->flags = flags;
	r = lease_take(ch, name);
	/*
	 * Reconnecting, and fpgad went away between its reply and the
	 * handoff (or before it answered): once it is back, again.
	 */
	while (r < 0 && c->reconnect && session_not_back(r) &&
	       clock_ms_left(deadline) != 0) {
		bool restored = false;
		int e = session_lost(c, &restored, clock_ms_left(deadline));

		if (e != -EPIPE && e != -ESTALE)
			break;
		r = lease_take(ch, name);
	}
	if (r < 0) {
		free(ch);
		return r;
	}
	ch->next = c->channels;
	c->channels = ch;
	*ret_ch = ch;
	return 0;
}

int fpgad_channel_close(fpgad_channel *ch)
{
	fpgad_client *c;
	int r = 0;

	if (!ch)
		return 0;
	c = ch->c;
	for (fpgad_channel **pp = &c->channels; *pp; pp = &(*pp)->next) {
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	}
	/* A lease of a connection that is gone ended with it. */
	if (ch->lease_id && reconnect_conn_alive(c, ch->conn))
		r = lease_give_back(ch);
	lease_unmap(ch);
	free(ch);
	return r;
}

void attach_close_all(fpgad_client *c)
{
	while (c->channels)
		fpgad_channel_close(c->channels);
}

void fpgad_channel_get_info(const fpgad_channel *ch,
			    struct fpgad_channel_info *ret_info)
{
	*ret_info = ch->info;
}

void fpgad_channel_get_setup(const fpgad_channel *ch,
			     struct fpgad_channel_setup *ret_setup)
{
	*ret_setup = ch->setup;
}

static void net_stats_from(const Fpgad__NetStats *n,
			   struct fpgad_channel_stats *ret_stats)
{
	struct fpgad_net_stats *o = &ret_stats->net;

	ret_stats->network = true;
	snprintf(o->listen, sizeof(o->listen), "%s", n->listen);
	snprintf(o->source, sizeof(o->source), "%s", n->source ? n->source : "");
	snprintf(o->interface, sizeof(o->interface), "%s", n->interface ? n->interface : "");
	snprintf(o->sender, sizeof(o->sender), "%s", n->sender);
	o->mtu = n->mtu;
	o->payload = n->payload;
	o->qpn = n->qpn;
	o->rkey = n->rkey;
	o->va_base = n->va_base;
	o->page_stride = n->page_stride;
	o->pages = n->pages;
	o->packets = n->packets;
	o->payload_bytes = n->payload_bytes;
	o->lost_packets = n->lost_packets;
	o->late_packets = n->late_packets;
	o->incomplete_frames = n->incomplete_frames;
	o->no_slot_frames = n->no_slot_frames;
	o->bad_packets = n->bad_packets;
	o->wrong_qp = n->wrong_qp;
	o->wrong_rkey = n->wrong_rkey;
	o->wrong_sender = n->wrong_sender;
	o->kernel_drops = n->kernel_drops;
	o->bad_icrc = n->bad_icrc;
	snprintf(o->control, sizeof(o->control), "%s", n->control ? n->control : "");
	o->control_acks = n->control_acks;
	o->control_failures = n->control_failures;
	snprintf(o->rdma_device, sizeof(o->rdma_device), "%s", n->rdma_device);
	snprintf(o->gid, sizeof(o->gid), "%s", n->gid);
	o->gid_index = n->gid_index;
	o->sender_qpn = n->sender_qpn;
	o->overrun_frames = n->overrun_frames;
	o->psn_resyncs = n->psn_resyncs;
}

int fpgad_channel_stats(fpgad_client *c, const char *name,
			struct fpgad_channel_stats *ret_stats)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__ChannelStatsRequest body = FPGAD__CHANNEL_STATS_REQUEST__INIT;
	Fpgad__ChannelStatsReply *s;
	Fpgad__Response *resp;
	int r;

	body.name = (char *)name;
	req.body_case = FPGAD__REQUEST__BODY_CHANNEL_STATS;
	req.channel_stats = &body;
	r = conn_request(c, &req, FPGAD__RESPONSE__BODY_CHANNEL_STATS, &resp);
	if (r < 0)
		return r;
	s = resp->channel_stats;
	memset(ret_stats, 0, sizeof(*ret_stats));
	snprintf(ret_stats->state, sizeof(ret_stats->state), "%s", s->state);
	snprintf(ret_stats->mode, sizeof(ret_stats->mode), "%s", s->mode);
#define COPY_COUNTER(f, h) ret_stats->f = s->f;
	CHANNEL_COUNTERS(COPY_COUNTER)
#undef COPY_COUNTER
	ret_stats->dma_ns_total = s->dma_ns_total;
	ret_stats->queued_avg = s->queued_avg;
	ret_stats->latency_ns_total = s->latency_ns_total;
	ret_stats->latency_frames = s->latency_frames;
	snprintf(ret_stats->last_error, sizeof(ret_stats->last_error), "%s", s->last_error);
	snprintf(ret_stats->integrity, sizeof(ret_stats->integrity), "%s", s->integrity);
	if (s->net)
		net_stats_from(s->net, ret_stats);
	if (s->net && s->net->landing)
		snprintf(ret_stats->net_landing, sizeof(ret_stats->net_landing),
			 "%s", s->net->landing);
	fpgad__response__free_unpacked(resp, NULL);
	return 0;
}

int fpgad_channel_probe(fpgad_client *c, const char *name,
			struct fpgad_probe *ret_probe)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__ProbeRequest body = FPGAD__PROBE_REQUEST__INIT;
	const Fpgad__ProbeReply *o;
	Fpgad__Response *resp;
	int r;

	body.name = (char *)name;
	req.body_case = FPGAD__REQUEST__BODY_PROBE;
	req.probe = &body;
	r = conn_request(c, &req, FPGAD__RESPONSE__BODY_PROBE, &resp);
	if (r < 0)
		return r;
	o = resp->probe;
	memset(ret_probe, 0, sizeof(*ret_probe));
	COPY(ret_probe->mode, o->mode);
	COPY(ret_probe->mode_reason, o->mode_reason);
	ret_probe->gpudirect_bps = o->gpudirect_bps;
	ret_probe->bounce_bps = o->bounce_bps;
	ret_probe->switched = o->switched;
	fpgad__response__free_unpacked(resp, NULL);
	return 0;
}

int fpgad_channel_reset(fpgad_client *c, const char *name)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__ResetChannelRequest body = FPGAD__RESET_CHANNEL_REQUEST__INIT;
	Fpgad__Response *resp;
	int r;

	body.name = (char *)name;
	req.body_case = FPGAD__REQUEST__BODY_RESET_CHANNEL;
	req.reset_channel = &body;
	r = conn_request(c, &req, FPGAD__RESPONSE__BODY_RESET_CHANNEL, &resp);
	if (r == 0)
		fpgad__response__free_unpacked(resp, NULL);
	return r;
}
