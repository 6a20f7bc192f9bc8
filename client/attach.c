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
#include <sys/mman.h>
#include <unistd.h>

#include "client_internal.h"
#include "frame_consumer.h"

static int map_shm(const char *name, size_t len, int prot, void **ret_map)
{
	int fd = shm_open(name, (prot & PROT_WRITE) ? O_RDWR : O_RDONLY, 0);
	void *map;

	if (fd < 0)
		return -errno;
	map = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -errno;
	*ret_map = map;
	return 0;
}

static void unmap(fpgad_channel *ch)
{
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
	free(ch);
}

static int fail(fpgad_channel *ch, int r, const char *fmt, const char *what)
{
	snprintf(ch->c->errmsg, sizeof(ch->c->errmsg), fmt, what, strerror(-r));
	conn_log(ch->c, FPGAD_LOG_ERR, "%s", ch->c->errmsg);
	return r;
}

/* Map what the reply names, checking it against itself first. */
static int map_reply(fpgad_channel *ch, const Fpgad__OpenChannelReply *o)
{
	struct frame_ring_geometry geo;
	char why[160];
	int r;

	snprintf(ch->info.name, sizeof(ch->info.name), "%s", o->name);
	if (!o->slots || !o->slot_size || o->slot_size % 4096 ||
	    o->frame_size > o->slot_size || o->slots > (1u << 16) ||
	    o->ring_size < (uint64_t)o->slots * o->slot_size)
		return fail(ch, -EBADMSG, "fpgad described a bad ring%s: %s", "");
	snprintf(ch->info.direction, sizeof(ch->info.direction), "%s", o->direction);
	snprintf(ch->info.mode, sizeof(ch->info.mode), "%s", o->mode);
	ch->info.slots = o->slots;
	ch->info.slot_size = o->slot_size;
	ch->info.frame_size = o->frame_size;
	ch->info.gpu = -1;
	ch->ring_size = o->ring_size;
	ch->held_pos = malloc(o->slots * sizeof(*ch->held_pos));
	if (!ch->held_pos)
		return -ENOMEM;
	for (uint32_t i = 0; i < o->slots; i++)
		ch->held_pos[i] = FRAMES_NOT_HELD;

	if (strcmp(o->memory, "cuda") == 0) {
		ch->info.memory = FPGAD_MEMORY_CUDA;
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
	} else {
		ch->info.memory = FPGAD_MEMORY_HOST;
		/* c2h: read-only; h2c: the client writes what the card reads. */
		r = map_shm(o->shm_name, o->ring_size,
			    strcmp(o->direction, "h2c") == 0 ? PROT_READ | PROT_WRITE :
							       PROT_READ,
			    (void **)&ch->base);
		if (r < 0)
			return fail(ch, r, "cannot map the ring %s: %s", o->shm_name);
	}

	/* The descriptor ring's size is in its header: map that first. */
	r = map_shm(o->desc_name, 4096, PROT_READ | PROT_WRITE, &ch->desc);
	if (r < 0)
		return fail(ch, r, "cannot map the descriptor ring %s: %s", o->desc_name);
	ch->desc_len = 4096;
	{
		const struct fpgad_frames_header *h = ch->desc;
		size_t need = (size_t)h->header_size +
			      (size_t)h->desc_size * h->desc_count;

		if (need > 4096 && need <= (64u << 20)) {
			munmap(ch->desc, ch->desc_len);
			ch->desc = NULL;
			r = map_shm(o->desc_name, need, PROT_READ | PROT_WRITE, &ch->desc);
			if (r < 0)
				return fail(ch, r, "cannot map the descriptor ring %s: %s",
					    o->desc_name);
			ch->desc_len = need;
		}
	}
	r = frame_consumer_attach(ch->desc, ch->desc_len, &ch->cons);
	if (r < 0)
		return fail(ch, r, "the descriptor ring %s is not usable: %s", o->desc_name);
	frame_consumer_geometry(ch->cons, &geo);
	if (geo.slots != o->slots || geo.slot_size != o->slot_size)
		return fail(ch, -EBADMSG, "the descriptor ring %s disagrees with OpenChannel: %s",
			    o->desc_name);
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

int fpgad_channel_open(fpgad_client *c, const char *name, unsigned flags,
		       fpgad_channel **ret_ch)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenChannelRequest body = FPGAD__OPEN_CHANNEL_REQUEST__INIT;
	Fpgad__Response *resp;
	fpgad_channel *ch;
	int r;

	body.name = (char *)name;
	body.shared = flags & FPGAD_OPEN_SHARED;
	req.body_case = FPGAD__REQUEST__BODY_OPEN_CHANNEL;
	req.open_channel = &body;
	r = simple_request(c, &req, FPGAD__RESPONSE__BODY_OPEN_CHANNEL, &resp);
	if (r < 0)
		return r;
	ch = calloc(1, sizeof(*ch));
	if (!ch) {
		r = -ENOMEM;
	} else {
		ch->c = c;
		r = map_reply(ch, resp->open_channel);
	}
	fpgad__response__free_unpacked(resp, NULL);
	if (r < 0) {
		char msg[sizeof(c->errmsg)];

		/* Keep the reason while the lease is given back. */
		memcpy(msg, c->errmsg, sizeof(msg));
		if (ch) {
			ch->next = c->channels;
			c->channels = ch;
			fpgad_channel_close(ch);
		}
		memcpy(c->errmsg, msg, sizeof(msg));
		return r;
	}
	ch->next = c->channels;
	c->channels = ch;
	*ret_ch = ch;
	return 0;
}

int fpgad_channel_close(fpgad_channel *ch)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__CloseChannelRequest body = FPGAD__CLOSE_CHANNEL_REQUEST__INIT;
	Fpgad__Response *resp;
	fpgad_client *c;
	int r;

	if (!ch)
		return 0;
	c = ch->c;
	for (fpgad_channel **pp = &c->channels; *pp; pp = &(*pp)->next) {
		if (*pp == ch) {
			*pp = ch->next;
			break;
		}
	}
	body.name = ch->info.name;
	req.body_case = FPGAD__REQUEST__BODY_CLOSE_CHANNEL;
	req.close_channel = &body;
	r = simple_request(c, &req, FPGAD__RESPONSE__BODY_CLOSE_CHANNEL, &resp);
	if (r == 0)
		fpgad__response__free_unpacked(resp, NULL);
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
	if (slot >= ch->info.slots)
		return NULL;
	return ch->base + (uint64_t)slot * ch->info.slot_size;
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
	ret_stats->frames = s->frames;
	ret_stats->bytes = s->bytes;
	ret_stats->drops = s->drops;
	ret_stats->stalls = s->stalls;
	ret_stats->errors = s->errors;
	ret_stats->recoveries = s->recoveries;
	ret_stats->copies = s->copies;
	ret_stats->dma_ns_total = s->dma_ns_total;
	ret_stats->card_good = s->card_good;
	ret_stats->card_bad = s->card_bad;
	ret_stats->queued_avg = s->queued_avg;
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
