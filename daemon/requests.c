// SPDX-License-Identifier: MIT
/*
 * requests.c - the control request path (requests.h), in order: find the
 * session, check the size, decode (protocol.c), answer a resent mutating
 * request from the reply cache, dispatch to the handler of each request
 * type, reply.  Every peer is local (the socket's mode and group decide
 * who may connect); remote peers reach fpgad only through fpgad-exporter,
 * which relays the read-only requests alone.
 *
 * What a peer can send at will is logged through the daemon's token
 * buckets (log_limited), naming the peer by pid and uid.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel/channel.h"
#include "channel/lease.h"
#include "channel_counters.h"
#include "clock.h"
#include "protocol.h"
#include "core.h"
#include "fpgad.h"
#include "requests.h"
#include "log.h"
#include "metrics.h"
#include "topology/p2p.h"
#include "xfer_requests.h"

#define MSG_LEN 256

struct reply {
	Fpgad__Response resp;
	char message[MSG_LEN];
	union {
		Fpgad__Hello hello;
		Fpgad__StatusReply status;
		Fpgad__ListClientsReply list_clients;
		Fpgad__OpenChannelReply open_channel;
		Fpgad__CloseChannelReply close_channel;
		Fpgad__ChannelStatsReply channel_stats;
		Fpgad__ResetChannelReply reset_channel;
		Fpgad__ProbeReply probe;
		Fpgad__MetricsReply metrics;
	} body;
	struct lease_grant grant;
	struct p2p_answer *topology;
	struct xfer_reply xfer;
	char mode[32];
	struct p2p_card card;
	Fpgad__CardInventory card_msg;
	Fpgad__AerCounters aer_msg;
	struct source_stats net;
	Fpgad__NetStats net_msg;
	char last_error[128];		/* ChannelStats */
	/* Arrays the body points into, freed after packing. */
	void *arrays[4];
	char *metrics_text;
};

static void reply_error(struct reply *r, Fpgad__StatusCode code,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void reply_error(struct reply *r, Fpgad__StatusCode code,
			const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->message, sizeof(r->message), fmt, ap);
	va_end(ap);
	r->resp.code = code;
	r->resp.message = r->message;
	r->resp.body_case = FPGAD__RESPONSE__BODY__NOT_SET;
}

static bool is_mutating(Fpgad__Request__BodyCase b)
{
	return b == FPGAD__REQUEST__BODY_OPEN_CHANNEL ||
	       b == FPGAD__REQUEST__BODY_CLOSE_CHANNEL ||
	       b == FPGAD__REQUEST__BODY_RESET_CHANNEL ||
	       b == FPGAD__REQUEST__BODY_PROBE ||
	       b == FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE ||
	       b == FPGAD__REQUEST__BODY_REGISTER_BUFFER ||
	       b == FPGAD__REQUEST__BODY_UNREGISTER_BUFFER ||
	       b == FPGAD__REQUEST__BODY_SET_BUFFER_MODE;
}

static void do_hello(struct core *d, struct session *s, const Fpgad__Hello *in,
		     struct reply *r)
{
	Fpgad__Hello *h = &r->body.hello;

	(void)d;
	if (in->version < FPGAD_PROTOCOL_MIN_VERSION ||
	    in->min_version > FPGAD_PROTOCOL_VERSION) {
		reply_error(r, FPGAD__STATUS_CODE__STATUS_VERSION,
			    "protocol versions do not overlap: client speaks %u (accepts %u and up), fpgad speaks %u (accepts %u and up)",
			    in->version, in->min_version, FPGAD_PROTOCOL_VERSION,
			    FPGAD_PROTOCOL_MIN_VERSION);
		return;
	}
	if (s)
		s->hello_version = in->version;
	fpgad__hello__init(h);
	h->version = FPGAD_PROTOCOL_VERSION;
	h->min_version = FPGAD_PROTOCOL_MIN_VERSION;
	h->software = "fpgad " FPGAD_VERSION;
	r->resp.body_case = FPGAD__RESPONSE__BODY_HELLO;
	r->resp.hello = h;
}

static void fill_summary(struct channel *ch, Fpgad__ChannelSummary *s)
{
	const struct config_channel *cc = channel_config(ch);
	struct channel_stats st;

	channel_get_stats(ch, &st);
	fpgad__channel_summary__init(s);
	s->name = (char *)cc->name;
	s->direction = (char *)direction_name(cc->direction);
	s->state = (char *)channel_state_name(st.state);
	s->memory = (char *)memory_kind_name(st.memory);
	s->integrated = st.integrated;
	s->mode = (char *)transfer_mode_name(st.mode);
	s->slots = cc->slots;
	s->slot_size = cc->slot_size;
	s->frame_size = cc->frame_size;
	s->frames = st.frames;
	s->drops = st.drops;
	s->leases = st.leases;
	s->source = (char *)source_kind_name(cc->source);
}

/* The card's inventory, read now (its link may have retrained, its AER counts grown). */
static void fill_card(struct core *d, struct reply *r)
{
	Fpgad__CardInventory *m = &r->card_msg;
	const struct topo_inventory *inv = &r->card.inv;

	p2p_card(d->p2p, &r->card);
	fpgad__card_inventory__init(m);
	m->pci_address = (char *)inv->addr;
	m->vendor_id = inv->vendor;
	m->device_id = inv->device;
	m->subsystem_vendor_id = inv->subsystem_vendor;
	m->subsystem_device_id = inv->subsystem_device;
	m->link_gen = inv->link_gen;
	m->link_width = inv->link_width;
	m->max_link_gen = inv->max_link_gen;
	m->max_link_width = inv->max_link_width;
	m->numa_node = inv->numa_node;
	m->driver = (char *)inv->driver;
	m->module_version = (char *)inv->module_version;
	m->simulates = r->card.simulates;
	if (inv->aer) {
		fpgad__aer_counters__init(&r->aer_msg);
		r->aer_msg.correctable = inv->aer_correctable;
		r->aer_msg.nonfatal = inv->aer_nonfatal;
		r->aer_msg.fatal = inv->aer_fatal;
		m->aer = &r->aer_msg;
	}
}

static void do_status(struct core *d, struct reply *r)
{
	Fpgad__StatusReply *s = &r->body.status;
	Fpgad__ChannelSummary *sums, **ptrs;
	unsigned n = d->n_channels;

	fpgad__status_reply__init(s);
	sums = calloc(n ? n : 1, sizeof(*sums));
	ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	r->arrays[0] = sums;
	r->arrays[1] = ptrs;
	if (!sums || !ptrs) {
		reply_error(r, FPGAD__STATUS_CODE__STATUS_INTERNAL, "out of memory");
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		fill_summary(d->channels[i], &sums[i]);
		ptrs[i] = &sums[i];
	}
	s->version = FPGAD_VERSION;
	s->uptime_ms = (clock_now_ns() - d->start_ns) / 1000000;
	s->backend = d->dev_name;
	/* One channel's mode stands for all when they agree. */
	snprintf(r->mode, sizeof(r->mode), "%s", n ? sums[0].mode : "none");
	for (unsigned i = 1; i < n; i++)
		if (strcmp(sums[i].mode, sums[0].mode))
			snprintf(r->mode, sizeof(r->mode), "mixed");
	s->mode = r->mode;
	s->mode_reason = n ? (char *)channel_mode_reason(d->channels[0]) : "";
	s->clients = d->sessions.count;
	s->n_channels = n;
	s->channels = ptrs;
	s->pid = (uint32_t)getpid();
	s->gpu_sharing = (char *)d->gpu_sharing;
	s->gpu_sharing_note = (char *)d->gpu_sharing_note;
	s->numa = d->numa_placed;
	s->gpu_choice = d->gpu_choice;
	xfer_requests_status(d, s, &r->xfer);
	fill_card(d, r);
	s->card = &r->card_msg;
	r->resp.body_case = FPGAD__RESPONSE__BODY_STATUS;
	r->resp.status = s;
}

static void do_list_clients(struct core *d, struct reply *r)
{
	Fpgad__ListClientsReply *l = &r->body.list_clients;
	unsigned n = d->sessions.count, i = 0, n_leases = 0;
	Fpgad__ClientInfo *infos, **ptrs;
	char **names;

	for (struct session *s = d->sessions.head; s; s = s->next)
		for (unsigned c = 0; c < d->n_channels; c++)
			n_leases += lease_find(d->channels[c], s) != NULL;
	infos = calloc(n ? n : 1, sizeof(*infos));
	ptrs = calloc(n ? n : 1, sizeof(*ptrs));
	names = calloc(n_leases ? n_leases : 1, sizeof(*names));
	r->arrays[0] = infos;
	r->arrays[1] = ptrs;
	r->arrays[2] = names;
	if (!infos || !ptrs || !names) {
		reply_error(r, FPGAD__STATUS_CODE__STATUS_INTERNAL, "out of memory");
		return;
	}
	fpgad__list_clients_reply__init(l);
	for (struct session *s = d->sessions.head; s; s = s->next, i++) {
		Fpgad__ClientInfo *ci = &infos[i];

		fpgad__client_info__init(ci);
		ci->pid = (uint32_t)s->peer.pid;
		ci->uid = (uint32_t)s->peer.uid;
		ci->gid = (uint32_t)s->peer.gid;
		ci->connected_ms = s->connected_ms;
		ci->process = s->who.process;
		ci->container_id = s->who.container;
		ci->pod_uid = s->who.pod;
		ci->pinned = s->pinned;
		xfer_requests_client(d, s, ci);
		ci->leases = names;
		for (unsigned c = 0; c < d->n_channels; c++)
			if (lease_find(d->channels[c], s) != NULL)
				names[ci->n_leases++] =
					(char *)channel_config(d->channels[c])->name;
		names += ci->n_leases;
		ptrs[i] = ci;
	}
	l->n_clients = n;
	l->clients = ptrs;
	r->resp.body_case = FPGAD__RESPONSE__BODY_LIST_CLIENTS;
	r->resp.list_clients = l;
}

static struct channel *find_channel(struct core *d, const char *name,
				    struct reply *r)
{
	char names[CONFIG_MAX_CHANNELS * CONFIG_NAME_MAX] = "";
	size_t n = 0;

	for (unsigned i = 0; i < d->n_channels; i++)
		if (strcmp(channel_config(d->channels[i])->name, name) == 0)
			return d->channels[i];
	/* Say which there are: the fix is usually one of them. */
	for (unsigned i = 0; i < d->n_channels && n < sizeof(names); i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, " %s",
				      channel_config(d->channels[i])->name);
	reply_error(r, FPGAD__STATUS_CODE__STATUS_NOT_FOUND,
		    "no channel named '%s'; channels:%s", name,
		    d->n_channels ? names : " none");
	return NULL;
}

static void do_open_channel(struct core *d, struct session *s,
			    const Fpgad__OpenChannelRequest *in, struct reply *r)
{
	Fpgad__OpenChannelReply *o = &r->body.open_channel;
	struct channel *ch = find_channel(d, in->name, r);
	const struct config_channel *cc;
	struct lease_grant *g = &r->grant;
	char err[MSG_LEN];
	int e;

	if (!ch)
		return;
	e = lease_open(ch, s, in->shared, &d->cfg.control, g, err, sizeof(err));
	if (e < 0) {
		char who[PEER_NAME_MAX];

		reply_error(r, protocol_status_code(e), "%s", err);
		log_limited(&d->log_refused, LOG_NOTICE, "control: OpenChannel %s for %s: %s",
			    in->name, peer_name(&s->peer, who, sizeof(who)), r->message);
		return;
	}
	cc = channel_config(ch);
	fpgad__open_channel_reply__init(o);
	o->name = (char *)cc->name;
	o->direction = (char *)direction_name(cc->direction);
	o->memory = (char *)memory_kind_name(g->memory);
	o->mode = (char *)transfer_mode_name(g->mode);
	o->slots = cc->slots;
	o->slot_size = cc->slot_size;
	o->frame_size = cc->frame_size;
	o->ring_size = g->ring_size;
	if (g->memory == MEMORY_CUDA)
		o->gpu_export = (char *)gpu_export_name(g->gpu_export);
	if (g->memory == MEMORY_CUDA && g->gpu_export == GPU_EXPORT_IPC) {
		o->ipc_handle.data = g->ipc_handle;
		o->ipc_handle.len = sizeof(g->ipc_handle);
	}
	o->gpu = g->gpu;
	o->gpu_bus_id = g->gpu_bus_id;
	o->generation = (uint32_t)g->lease_id;
	o->handoff_token.data = g->token;
	o->handoff_token.len = sizeof(g->token);
	o->handoff_path = d->handoff_path;
	o->lease_id = g->lease_id;
	o->desc_size = g->desc_size;
	r->resp.body_case = FPGAD__RESPONSE__BODY_OPEN_CHANNEL;
	r->resp.open_channel = o;
}

static void do_close_channel(struct core *d, struct session *s,
			     const Fpgad__CloseChannelRequest *in,
			     struct reply *r)
{
	struct channel *ch = find_channel(d, in->name, r);

	if (!ch)
		return;
	if (lease_close(ch, s, in->lease_id) < 0) {
		if (in->lease_id)
			reply_error(r, FPGAD__STATUS_CODE__STATUS_NOT_FOUND,
				    "lease %016llx of channel %s is not open on this connection",
				    (unsigned long long)in->lease_id, in->name);
		else
			reply_error(r, FPGAD__STATUS_CODE__STATUS_NOT_FOUND,
				    "channel %s is not open on this connection",
				    in->name);
		return;
	}
	fpgad__close_channel_reply__init(&r->body.close_channel);
	r->resp.body_case = FPGAD__RESPONSE__BODY_CLOSE_CHANNEL;
	r->resp.close_channel = &r->body.close_channel;
}

/* A network channel's part of ChannelStats, pointing into @ns. */
static Fpgad__NetStats *net_stats_message(const struct source_stats *ns,
					  Fpgad__NetStats *o)
{
	const struct source_counters *c = &ns->cnt;

	fpgad__net_stats__init(o);
	o->source = (char *)source_kind_name(ns->source);
	o->listen = (char *)ns->listen;
	o->sender = (char *)ns->sender;
	o->mtu = ns->mtu;
	o->payload = ns->payload;
	o->qpn = ns->qpn;
	o->rkey = ns->rkey;
	o->va_base = ns->layout.base;
	o->page_stride = ns->layout.stride;
	o->pages = ns->layout.pages;
	o->packets = c->packets;
	o->payload_bytes = c->bytes;
	o->lost_packets = c->lost_packets;
	o->late_packets = c->late_packets;
	o->incomplete_frames = c->incomplete_frames;
	o->no_slot_frames = c->no_slot_frames;
	o->bad_packets = c->bad_packets;
	o->wrong_qp = c->wrong_qp;
	o->wrong_rkey = c->wrong_rkey;
	o->wrong_sender = c->wrong_sender;
	o->kernel_drops = c->kernel_drops;
	o->bad_icrc = c->bad_icrc;
	o->control = (char *)ns->control;
	o->interface = (char *)ns->interface;
	o->control_acks = c->control_acks;
	o->control_failures = c->control_failures;
	o->overrun_frames = c->overrun_frames;
	o->psn_resyncs = c->psn_resyncs;
	o->rdma_device = (char *)ns->rdma_device;
	o->gid = (char *)ns->gid;
	o->gid_index = ns->gid_index;
	o->sender_qpn = ns->sender_qpn;
	o->landing = (char *)ns->landing;
	return o;
}

static void do_channel_stats(struct core *d,
			     const Fpgad__ChannelStatsRequest *in,
			     struct reply *r)
{
	Fpgad__ChannelStatsReply *o = &r->body.channel_stats;
	struct channel *ch = find_channel(d, in->name, r);
	struct channel_stats st;

	if (!ch)
		return;
	channel_get_stats(ch, &st);
	fpgad__channel_stats_reply__init(o);
	o->name = (char *)channel_config(ch)->name;
	o->state = (char *)channel_state_name(st.state);
#define COPY_COUNTER(f, h) o->f = st.f;
	CHANNEL_COUNTERS(COPY_COUNTER)
#undef COPY_COUNTER
	o->dma_ns_total = st.dma.sum_ns;
	o->uptime_ms = (clock_now_ns() - d->start_ns) / 1000000;
	o->mode = (char *)transfer_mode_name(st.mode);
	o->queued_avg = st.completions ?
		(double)st.queued_total / (double)st.completions : 0;
	o->latency_ns_total = st.latency.sum_ns;
	o->latency_frames = st.latency.count;
	snprintf(r->last_error, sizeof(r->last_error), "%s", st.last_error);
	o->last_error = r->last_error;
	o->integrity = (char *)integrity_name(channel_config(ch)->integrity);
	if (channel_source_stats(ch, &r->net) == 0)
		o->net = net_stats_message(&r->net, &r->net_msg);
	r->resp.body_case = FPGAD__RESPONSE__BODY_CHANNEL_STATS;
	r->resp.channel_stats = o;
}

/*
 * Who may reset @ch: root, anyone while nobody leases it, and else only a
 * uid that leases it.  NULL when @s may, else a lessee to name.
 */
static const struct session *reset_denied_by(struct core *d,
					     const struct session *s,
					     struct channel *ch)
{
	const struct session *other = NULL;

	if (s->peer.creds && s->peer.uid == 0)
		return NULL;
	for (const struct session *o = d->sessions.head; o; o = o->next) {
		if (!lease_find(ch, o))
			continue;
		if (s->peer.creds && o->peer.uid == s->peer.uid)
			return NULL;
		other = o;
	}
	return other;
}

static void do_reset_channel(struct core *d, struct session *s,
			     const Fpgad__ResetChannelRequest *in,
			     struct reply *r)
{
	struct channel *ch = find_channel(d, in->name, r);
	const struct session *owner;
	char err[MSG_LEN];
	int e;

	if (!ch)
		return;
	owner = reset_denied_by(d, s, ch);
	if (owner) {
		char who[PEER_NAME_MAX];

		reply_error(r, FPGAD__STATUS_CODE__STATUS_DENIED,
			    "channel %s is leased by uid %u (pid %d): only that uid or root may reset it",
			    in->name, (unsigned)owner->peer.uid, (int)owner->peer.pid);
		log_limited(&d->log_denied, LOG_NOTICE, "control: %s: ResetChannel: %s",
			    peer_name(&s->peer, who, sizeof(who)), r->message);
		return;
	}
	e = channel_reset(ch, err, sizeof(err));
	if (e < 0) {
		reply_error(r, protocol_status_code(e), "%s", err);
		return;
	}
	log_notice("channel %s: reset by pid %d uid %u", in->name,
		   (int)s->peer.pid, (unsigned)s->peer.uid);
	fpgad__reset_channel_reply__init(&r->body.reset_channel);
	r->body.reset_channel.state = (char *)channel_state_name(channel_state(ch));
	r->resp.body_case = FPGAD__RESPONSE__BODY_RESET_CHANNEL;
	r->resp.reset_channel = &r->body.reset_channel;
}

/* p2p_reprobe() as channel_probe() measures. */
struct probe_call {
	struct core *d;
	const struct config_channel *cc;	/* as configured: mode = auto */
	const struct probe_rates *rates;
};

static int measure(void *user, struct device_queue *q, enum transfer_mode *ret_mode,
		   char *reason, size_t reason_len)
{
	struct probe_call *pc = user;
	const struct probe_choice *choice;
	int r;

	r = p2p_reprobe(pc->d->p2p, &pc->d->cfg, pc->cc, q, &choice, &pc->rates);
	if (r < 0)
		return r;
	*ret_mode = choice->mode;
	snprintf(reason, reason_len, "%s", choice->reason);
	return 0;
}

static void do_probe(struct core *d, struct session *s,
		     const Fpgad__ProbeRequest *in, struct reply *r)
{
	struct channel *ch = find_channel(d, in->name, r);
	/* Its configuration, not the channel's: auto may have run it bounce. */
	struct probe_call pc = { .d = d, .cc = config_channel_find(&d->cfg, in->name) };
	Fpgad__ProbeReply *o = &r->body.probe;
	struct channel_stats st;
	bool switched = false;
	char err[MSG_LEN];
	int e;

	if (!ch)
		return;
	if (pc.cc->mode != MODE_AUTO || d->cfg.device.auto_choice == AUTO_FIRST) {
		reply_error(r, FPGAD__STATUS_CODE__STATUS_BAD_REQUEST,
			    "channel %s: %s: there is nothing for a probe to choose",
			    in->name, pc.cc->mode != MODE_AUTO ?
			    "its mode is set in the configuration" :
			    "[device] auto_choice = first");
		return;
	}
	e = channel_probe(ch, measure, &pc, &switched, err, sizeof(err));
	if (e < 0) {
		reply_error(r, protocol_status_code(e), "%s", err);
		return;
	}
	channel_get_stats(ch, &st);
	log_notice("channel %s: probed for pid %d uid %u: %s%s", in->name,
		   (int)s->peer.pid, (unsigned)s->peer.uid,
		   channel_mode_reason(ch), switched ? " (switched)" : "");
	fpgad__probe_reply__init(o);
	o->mode = (char *)transfer_mode_name(st.mode);
	o->mode_reason = (char *)channel_mode_reason(ch);
	o->gpudirect_bps = pc.rates ? pc.rates->gpudirect : 0;
	o->bounce_bps = pc.rates ? pc.rates->bounce : 0;
	o->switched = switched;
	r->resp.body_case = FPGAD__RESPONSE__BODY_PROBE;
	r->resp.probe = o;
}

static void do_topology(struct core *d, struct reply *r)
{
	struct p2p_channel_view views[CONFIG_MAX_CHANNELS];
	struct channel_stats st;

	for (unsigned i = 0; i < d->n_channels; i++) {
		channel_get_stats(d->channels[i], &st);
		views[i].name = channel_config(d->channels[i])->name;
		views[i].gpu = channel_gpu_bus_id(d->channels[i]);
		views[i].mode = transfer_mode_name(st.mode);
		views[i].mode_reason = channel_mode_reason(d->channels[i]);
		views[i].integrated = st.integrated;
	}
	if (p2p_topology(d->p2p, views, d->n_channels, &r->topology) < 0) {
		reply_error(r, FPGAD__STATUS_CODE__STATUS_INTERNAL, "out of memory");
		return;
	}
	r->resp.body_case = FPGAD__RESPONSE__BODY_TOPOLOGY;
	r->resp.topology = p2p_answer_reply(r->topology);
}

static void do_metrics(struct core *d, struct reply *r)
{
	struct metrics_snapshot *snap = malloc(sizeof(*snap));
	size_t len;

	if (!snap) {
		reply_error(r, FPGAD__STATUS_CODE__STATUS_INTERNAL, "out of memory");
		return;
	}
	metrics_collect(d, snap);
	if (metrics_format(snap, &r->metrics_text, &len) < 0) {
		free(snap);
		reply_error(r, FPGAD__STATUS_CODE__STATUS_INTERNAL, "out of memory");
		return;
	}
	free(snap);
	fpgad__metrics_reply__init(&r->body.metrics);
	r->body.metrics.text = r->metrics_text;
	r->resp.body_case = FPGAD__RESPONSE__BODY_METRICS;
	r->resp.metrics = &r->body.metrics;
}

static void dispatch(struct core *d, struct session *s,
		     const Fpgad__Request *req, struct reply *r)
{
	switch (req->body_case) {
	case FPGAD__REQUEST__BODY_OPEN_CHANNEL:
		do_open_channel(d, s, req->open_channel, r);
		break;
	case FPGAD__REQUEST__BODY_CLOSE_CHANNEL:
		do_close_channel(d, s, req->close_channel, r);
		break;
	case FPGAD__REQUEST__BODY_CHANNEL_STATS:
		do_channel_stats(d, req->channel_stats, r);
		break;
	case FPGAD__REQUEST__BODY_RESET_CHANNEL:
		do_reset_channel(d, s, req->reset_channel, r);
		break;
	case FPGAD__REQUEST__BODY_HELLO:
		do_hello(d, s, req->hello, r);
		break;
	case FPGAD__REQUEST__BODY_STATUS:
		do_status(d, r);
		break;
	case FPGAD__REQUEST__BODY_LIST_CLIENTS:
		do_list_clients(d, r);
		break;
	case FPGAD__REQUEST__BODY_TOPOLOGY:
		do_topology(d, r);
		break;
	case FPGAD__REQUEST__BODY_PROBE:
		do_probe(d, s, req->probe, r);
		break;
	case FPGAD__REQUEST__BODY_METRICS:
		do_metrics(d, r);
		break;
	case FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE:
		xfer_requests_open_queue(d, s, req->open_xfer_queue, &r->resp, &r->xfer);
		break;
	case FPGAD__REQUEST__BODY_REGISTER_BUFFER:
		xfer_requests_register(d, s, req->register_buffer, &r->resp, &r->xfer);
		break;
	case FPGAD__REQUEST__BODY_UNREGISTER_BUFFER:
		xfer_requests_unregister(d, s, req->unregister_buffer, &r->resp, &r->xfer);
		break;
	case FPGAD__REQUEST__BODY_SET_BUFFER_MODE:
		xfer_requests_set_mode(d, s, req->set_buffer_mode, &r->resp, &r->xfer);
		break;
	default:
		reply_error(r, FPGAD__STATUS_CODE__STATUS_UNKNOWN_REQUEST,
			    "%s is not served by this fpgad",
			    protocol_request_name(req->body_case));
		break;
	}
}

static void send_reply(struct control_ctx *ctx, struct session *s,
		       const Fpgad__Request *req, const void *req_buf,
		       size_t req_len, struct reply *r)
{
	void *buf = NULL;
	size_t len = 0;

	if (protocol_encode(&r->resp, &buf, &len) < 0) {
		/* No memory for the reply: say so in one that fits the stack. */
		Fpgad__Response oom = FPGAD__RESPONSE__INIT;
		uint8_t small[64];

		oom.id = r->resp.id;
		oom.code = FPGAD__STATUS_CODE__STATUS_INTERNAL;
		oom.message = "out of memory";
		len = fpgad__response__pack(&oom, small);
		control_reply(ctx, small, len);
	} else {
		if (s && req && is_mutating(req->body_case))
			session_cache(s, req->id, req_buf, req_len, buf, len);
		control_reply(ctx, buf, len);
	}
	free(buf);
	for (unsigned i = 0; i < sizeof(r->arrays) / sizeof(r->arrays[0]); i++)
		free(r->arrays[i]);
	free(r->metrics_text);
	p2p_answer_free(r->topology);
}

void requests_handle(struct core *d, struct control_ctx *ctx,
		     const struct peer *p, const void *buf, size_t len)
{
	struct reply r = { .resp = FPGAD__RESPONSE__INIT };
	Fpgad__Request *req = NULL;
	const struct cached_reply *cached;
	char who[PEER_NAME_MAX];
	Fpgad__StatusCode code;
	struct session *s = NULL;

	r.resp.message = "";
	if (session_get(&d->sessions, p, &s) < 0) {
		reply_error(&r, FPGAD__STATUS_CODE__STATUS_INTERNAL, "out of memory");
		send_reply(ctx, NULL, NULL, buf, len, &r);
		return;
	}
	if (len > d->cfg.control.max_message) {
		r.resp.id = protocol_request_id(buf, len);
		reply_error(&r, FPGAD__STATUS_CODE__STATUS_LIMIT,
			    "request of %zu bytes is above max_message (%llu bytes)",
			    len, (unsigned long long)d->cfg.control.max_message);
		log_limited(&d->log_bad_request, LOG_NOTICE, "control: %s: %s",
			    peer_name(p, who, sizeof(who)), r.message);
		send_reply(ctx, s, NULL, buf, len, &r);
		return;
	}
	if (protocol_decode(buf, len, &req, &r.resp.id, &code, r.message,
			    sizeof(r.message)) < 0) {
		log_limited(&d->log_bad_request, LOG_NOTICE, "control: %s: %s",
			    peer_name(p, who, sizeof(who)), r.message);
		r.resp.code = code;
		r.resp.message = r.message;
		send_reply(ctx, s, NULL, buf, len, &r);
		return;
	}
	r.resp.id = req->id;
	if (!s) {
		/* The connection is gone; nobody will read this. */
		reply_error(&r, FPGAD__STATUS_CODE__STATUS_INTERNAL,
			    "connection closed");
	} else if (is_mutating(req->body_case) &&
		   (cached = session_cached(s, req->id, buf, len))) {
		/* A resend: answer as the first time, apply nothing. */
		control_reply(ctx, cached->buf, cached->len);
		protocol_free(req);
		return;
	} else {
		dispatch(d, s, req, &r);
	}
	send_reply(ctx, s, req, buf, len, &r);
	protocol_free(req);
}
