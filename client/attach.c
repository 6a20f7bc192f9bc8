// SPDX-License-Identifier: MIT
/*
 * attach.c - a client attaches to a channel: OpenChannel leases it, the
 * ring and the descriptor ring it names are checked and mapped; closing
 * ends the lease.  Also the per-channel requests ChannelStats and
 * ResetChannel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include "channel_counters.h"
#include "client_internal.h"
#include "clock.h"
#include "frame_consumer.h"
#include "names.h"

#define ATTACH_MAX_FDS 2
/* The largest descriptor ring fpgad makes (FPGAD_FRAMES_MAX_DESCS of them). */
#define ATTACH_MAX_DESC (64u << 20)
/* Reconnecting: the pause between attempts. */
#define ATTACH_RETRY_MS 50

/* Let go of everything mapped or held for @ch's lease. */
static void unmap_lease(fpgad_channel *ch)
{
	if (ch->desc_dev)
		gpu_unregister_host(ch->desc);
	ch->desc_dev = NULL;
	frame_consumer_free(ch->cons);
	if (ch->desc)
		munmap(ch->desc, ch->desc_len);
	if (ch->base && ch->info.memory == FPGAD_MEMORY_HOST)
		munmap(ch->base, ch->ring_size);
	if (ch->base && ch->info.memory == FPGAD_MEMORY_CUDA)
		gpu_unmap(ch->base);
	if (ch->host)
		for (uint32_t i = 0; i < ch->info.slots; i++)
			gpu_host_free(ch->host[i]);
	free(ch->host);
	free(ch->host_pos);
	free(ch->held_pos);
	if (ch->link >= 0)
		close(ch->link);
	ch->cons = NULL;
	ch->desc = NULL;
	ch->base = NULL;
	ch->host = NULL;
	ch->host_pos = NULL;
	ch->held_pos = NULL;
	ch->link = -1;
}

static void unmap(fpgad_channel *ch)
{
	unmap_lease(ch);
	free(ch);
}

static int fail(fpgad_channel *ch, int r, const char *fmt, const char *what)
{
	snprintf(ch->c->errmsg, sizeof(ch->c->errmsg), fmt, what, strerror(-r));
	conn_log(ch->c, FPGAD_LOG_ERR, "%s", ch->c->errmsg);
	return r;
}

/* Fetch and map what the reply names, checking it against itself first. */
static int map_reply(fpgad_channel *ch, const Fpgad__OpenChannelReply *o)
{
	struct frame_ring_geometry geo;
	int fds[ATTACH_MAX_FDS];
	bool h2c = strcmp(o->direction, "h2c") == 0;
	unsigned want;
	char why[160];
	int r;

	snprintf(ch->info.name, sizeof(ch->info.name), "%s", o->name);
	if (!o->slots || !o->slot_size || o->slot_size % 4096 ||
	    o->frame_size > o->slot_size || o->slots > (1u << 16) ||
	    o->ring_size < (uint64_t)o->slots * o->slot_size ||
	    o->desc_size < sizeof(struct fpgad_frames_header) ||
	    o->desc_size > ATTACH_MAX_DESC)
		return fail(ch, -EBADMSG, "fpgad described a bad ring%s: %s", "");
	snprintf(ch->info.direction, sizeof(ch->info.direction), "%s", o->direction);
	snprintf(ch->info.mode, sizeof(ch->info.mode), "%s", o->mode);
	ch->info.slots = o->slots;
	ch->info.slot_size = o->slot_size;
	ch->info.frame_size = o->frame_size;
	ch->info.gpu = -1;
	ch->ring_size = o->ring_size;
	ch->lease_id = o->lease_id;
	ch->h2c = h2c;
	ch->seen_seq = false;
	ch->held_pos = malloc(o->slots * sizeof(*ch->held_pos));
	if (!ch->held_pos)
		return -ENOMEM;
	for (uint32_t i = 0; i < o->slots; i++)
		ch->held_pos[i] = FRAMES_NOT_HELD;

	ch->info.memory = strcmp(o->memory, "cuda") == 0 ? FPGAD_MEMORY_CUDA :
							   FPGAD_MEMORY_HOST;
	want = ch->info.memory == FPGAD_MEMORY_HOST ? 2 : 1;
	r = handoff_exchange(ch->c, o->handoff_path, &o->handoff_token, NULL, 0,
			     fds, want, &ch->link);
	if (r < 0)
		return r;
	r = handoff_map(fds[0], o->desc_size, PROT_READ | PROT_WRITE, &ch->desc);
	if (r == 0) {
		ch->desc_len = o->desc_size;
		if (want == 2)
			r = handoff_map(fds[1], o->ring_size,
					h2c ? PROT_READ | PROT_WRITE : PROT_READ,
					(void **)&ch->base);
	}
	/* The mappings keep the memory; the descriptors are not needed. */
	for (unsigned i = 0; i < want; i++)
		close(fds[i]);
	if (r < 0)
		return fail(ch, r, "cannot map the rings of %s: %s", o->name);

	if (ch->info.memory == FPGAD_MEMORY_CUDA) {
		ch->info.gpu = o->gpu;
		snprintf(ch->info.gpu_bus_id, sizeof(ch->info.gpu_bus_id), "%s",
			 o->gpu_bus_id);
		if (o->ipc_handle.len != 64)
			return fail(ch, -EBADMSG, "fpgad sent no IPC handle%s: %s", "");
		r = gpu_map(o->ipc_handle.data, o->gpu, o->gpu_bus_id,
			    (void **)&ch->base, why, sizeof(why));
		if (r < 0) {
			snprintf(ch->c->errmsg, sizeof(ch->c->errmsg),
				 "channel %s is in GPU memory: %s", o->name, why);
			return r;
		}
		ch->host = calloc(o->slots, sizeof(*ch->host));
		ch->host_pos = calloc(o->slots, sizeof(*ch->host_pos));
		if (!ch->host || !ch->host_pos)
			return -ENOMEM;
	}

	r = frame_consumer_attach(ch->desc, ch->desc_len, &ch->cons);
	if (r < 0)
		return fail(ch, r, "the descriptor ring of %s is not usable: %s", o->name);
	frame_consumer_geometry(ch->cons, &geo);
	if (geo.slots != o->slots || geo.slot_size != o->slot_size)
		return fail(ch, -EBADMSG, "the descriptor ring of %s disagrees with OpenChannel: %s",
			    o->name);
	return 0;
}

static int simple_request(fpgad_client *c, Fpgad__Request *req,
			  Fpgad__Response__BodyCase body, Fpgad__Response **ret)
{
	int r = conn_transact(c, req, ret);

	if (r < 0)
		return r;
	return conn_expect(c, *ret, body);
}

/* CloseChannel for @ch's lease: by name and lease id, never another's. */
static int close_lease(fpgad_channel *ch)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__CloseChannelRequest body = FPGAD__CLOSE_CHANNEL_REQUEST__INIT;
	Fpgad__Response *resp;
	int r;

	body.name = ch->info.name;
	body.lease_id = ch->lease_id;
	req.body_case = FPGAD__REQUEST__BODY_CLOSE_CHANNEL;
	req.close_channel = &body;
	r = simple_request(ch->c, &req, FPGAD__RESPONSE__BODY_CLOSE_CHANNEL, &resp);
	if (r == 0)
		fpgad__response__free_unpacked(resp, NULL);
	return r;
}

/* Lease channel @name for @ch and map what fpgad grants. */
static int attach_lease(fpgad_channel *ch, const char *name)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenChannelRequest body = FPGAD__OPEN_CHANNEL_REQUEST__INIT;
	fpgad_client *c = ch->c;
	Fpgad__Response *resp;
	int r;

	body.name = (char *)name;
	body.shared = ch->flags & FPGAD_OPEN_SHARED;
	req.body_case = FPGAD__REQUEST__BODY_OPEN_CHANNEL;
	req.open_channel = &body;
	r = simple_request(c, &req, FPGAD__RESPONSE__BODY_OPEN_CHANNEL, &resp);
	if (r < 0)
		return r;
	/* The lease lives as long as the connection that carried its grant. */
	ch->conn = c->reply_pipe;
	ch->events = 0;
	r = map_reply(ch, resp->open_channel);
	fpgad__response__free_unpacked(resp, NULL);
	if (r < 0) {
		char msg[sizeof(c->errmsg)];

		/* Keep the reason while the lease is given back. */
		memcpy(msg, c->errmsg, sizeof(msg));
		if (ch->lease_id)
			close_lease(ch);
		unmap_lease(ch);
		memcpy(c->errmsg, msg, sizeof(msg));
	}
	return r;
}

int fpgad_channel_open(fpgad_client *c, const char *name, unsigned flags,
		       fpgad_channel **ret_ch)
{
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
	r = attach_lease(ch, name);
	if (r < 0) {
		free(ch);
		return r;
	}
	ch->next = c->channels;
	c->channels = ch;
	*ret_ch = ch;
	return 0;
}

bool attach_lease_gone(fpgad_channel *ch)
{
	struct pollfd p = { .fd = ch->link, .events = POLLIN };

	if (ch->link < 0 || !reconnect_conn_alive(ch->c, ch->conn))
		return true;
	/* fpgad writes nothing after the handoff: readable means closed. */
	return poll(&p, 1, 0) > 0;
}

int attach_reopen(fpgad_channel *ch, int timeout_ms)
{
	uint64_t deadline = clock_deadline_ns(timeout_ms);
	fpgad_client *c = ch->c;
	char name[sizeof(ch->info.name)];
	int r;

	snprintf(name, sizeof(name), "%s", ch->info.name);
	unmap_lease(ch);
	ch->lease_id = 0;
	for (;;) {
		uint64_t now = clock_now_ns();
		int left = deadline ? (int)((deadline > now ? deadline - now : 0) /
					    CLOCK_NS_PER_MS) : ATTACH_RETRY_MS * 10;

		/* Short round trips: nng redials in the background meanwhile. */
		conn_set_timeouts(c, left < ATTACH_RETRY_MS * 10 ? left + 1 :
				     ATTACH_RETRY_MS * 10);
		/*
		 * Hello only on a new connection: an OpenChannel that timed
		 * out then goes again, alone, as it was, and fpgad answers it
		 * from its cache if it granted it.
		 */
		r = conn_hello(c);
		if (r == 0)
			r = attach_lease(ch, name);
		if (r == 0 || (r != -ETIMEDOUT && r != -ECONNREFUSED &&
			       r != -EPIPE && r != -ECONNRESET && r != -EAGAIN))
			break;
		reconnect_attempt_failed(c);
		if (deadline && clock_now_ns() + ATTACH_RETRY_MS *
		    CLOCK_NS_PER_MS >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		usleep(ATTACH_RETRY_MS * 1000);
	}
	conn_set_timeouts(c, c->timeout_ms);
	if (r == 0)
		conn_log(c, FPGAD_LOG_INFO, "channel %s: reopened after fpgad came back",
			 name);
	return r;
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
		r = close_lease(ch);
	unmap(ch);
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

void *fpgad_slot_data(const fpgad_channel *ch, uint32_t slot)
{
	if (!ch->base || slot >= ch->info.slots)
		return NULL;
	return ch->base + (uint64_t)slot * ch->info.slot_size;
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
	r = simple_request(c, &req, FPGAD__RESPONSE__BODY_CHANNEL_STATS, &resp);
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
	if (s->net)
		net_stats_from(s->net, ret_stats);
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
	r = simple_request(c, &req, FPGAD__RESPONSE__BODY_PROBE, &resp);
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
	r = simple_request(c, &req, FPGAD__RESPONSE__BODY_RESET_CHANNEL, &resp);
	if (r == 0)
		fpgad__response__free_unpacked(resp, NULL);
	return r;
}
