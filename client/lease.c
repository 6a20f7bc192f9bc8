// SPDX-License-Identifier: MIT
/*
 * lease.c - a channel's lease on the connection: OpenChannel, and the ring
 * and the descriptor ring it names checked and mapped; CloseChannel; is
 * the lease gone; and, after fpgad came back, the same channel leased
 * again while the old ring stays mapped until the caller is told
 * (-ESTALE).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client_internal.h"
#include "clock.h"
#include "frame_consumer.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

#define LEASE_MAX_FDS 2
/* The largest descriptor ring fpgad makes (FPGAD_FRAMES_MAX_DESCS of them). */
#define LEASE_MAX_DESC (64u << 20)

/* @ch holds nothing of a lease (what it held is someone else's now). */
static void forget(fpgad_channel *ch)
{
	ch->cons = NULL;
	ch->desc = NULL;
	ch->desc_dev = NULL;
	ch->base = NULL;
	memset(&ch->gpu, 0, sizeof(ch->gpu));
	ch->host = NULL;
	ch->host_pos = NULL;
	ch->held_pos = NULL;
	ch->link = -1;
}

/* Let go of everything mapped or held for @ch's lease (not an old one). */
static void unmap(fpgad_channel *ch)
{
	if (ch->desc_dev)
		gpu_unregister_host(ch->desc);
	frame_consumer_free(ch->cons);
	if (ch->desc)
		munmap(ch->desc, ch->desc_len);
	if (ch->base && ch->info.memory == FPGAD_MEMORY_HOST)
		munmap(ch->base, ch->ring_size);
	if (ch->base && ch->info.memory == FPGAD_MEMORY_CUDA)
		gpu_unmap(&ch->gpu);
	if (ch->host)
		for (uint32_t i = 0; i < ch->info.slots; i++)
			gpu_host_free(ch->host[i]);
	free(ch->host);
	free(ch->host_pos);
	free(ch->held_pos);
	if (ch->link >= 0)
		close(ch->link);
	forget(ch);
}

void lease_drop_old(fpgad_channel *ch)
{
	ch->restored = false;
	if (ch->old) {
		unmap(ch->old);
		free(ch->old);
		ch->old = NULL;
	}
}

void lease_unmap(fpgad_channel *ch)
{
	unmap(ch);
	lease_drop_old(ch);
}

static int fail(fpgad_channel *ch, int r, const char *fmt, const char *what)
{
	snprintf(ch->c->errmsg, sizeof(ch->c->errmsg), fmt, what, strerror(-r));
	conn_log(ch->c, FPGAD_LOG_ERR, "%s", ch->c->errmsg);
	return r;
}

/*
 * Map a ring in GPU memory: its VMM descriptor @fd, its IPC handle, or an
 * integrated GPU's memfd @fd.  A c2h ring fpgad sealed against writing is
 * mapped and registered read-only; fpgad leaves it writable where the GPU
 * cannot register read-only memory.
 */
static int map_gpu(fpgad_channel *ch, const Fpgad__OpenChannelReply *o,
		   struct gpu_ring_ref *ref, int fd)
{
	char why[160];
	int r;

	ch->info.gpu = o->gpu;
	snprintf(ch->info.gpu_bus_id, sizeof(ch->info.gpu_bus_id), "%s",
		 o->gpu_bus_id);
	if (ref->export == GPU_EXPORT_IPC && o->ipc_handle.len != 64)
		return fail(ch, -EBADMSG, "fpgad sent no IPC handle%s: %s", "");
	ref->ipc_handle = o->ipc_handle.data;
	ref->fd = fd;
	ref->size = o->ring_size;
	if (ref->export == GPU_EXPORT_HOST) {
		int seals = fcntl(fd, F_GET_SEALS);

		ref->read_only = !ch->h2c && seals >= 0 && (seals & F_SEAL_FUTURE_WRITE);
		r = handoff_map(fd, o->ring_size,
				ref->read_only ? PROT_READ : PROT_READ | PROT_WRITE,
				&ref->host);
		if (r < 0)
			return fail(ch, r, "cannot map the ring of %s: %s", o->name);
	}
	ref->gpu = o->gpu;
	ref->bus_id = o->gpu_bus_id;
	r = gpu_map(ref, &ch->gpu, why, sizeof(why));
	if (r < 0 && ref->host)
		munmap(ref->host, o->ring_size);
	ch->setup.cuda_ns = ch->gpu.cuda_ns;
	ch->setup.map_ns = ch->gpu.map_ns;
	if (r < 0) {
		snprintf(ch->c->errmsg, sizeof(ch->c->errmsg),
			 "channel %s is in GPU memory (export %s): %s", o->name,
			 gpu_export_name(ref->export), why);
		return r;
	}
	ch->base = ch->gpu.ptr;
	return 0;
}

/*
 * Fetch and map what the reply names, checking it against itself first;
 * @t0: when OpenChannel was sent.
 */
static int map_reply(fpgad_channel *ch, const Fpgad__OpenChannelReply *o,
		     uint64_t t0)
{
	struct gpu_ring_ref ref = { .export = GPU_EXPORT_IPC };
	struct frame_ring_geometry geo;
	int fds[LEASE_MAX_FDS];
	bool h2c = strcmp(o->direction, "h2c") == 0;
	unsigned want;
	int r;

	snprintf(ch->info.name, sizeof(ch->info.name), "%s", o->name);
	if (!o->slots || !o->slot_size || o->slot_size % 4096 ||
	    o->frame_size > o->slot_size || o->slots > (1u << 16) ||
	    o->ring_size < (uint64_t)o->slots * o->slot_size ||
	    o->desc_size < sizeof(struct fpgad_frames_header) ||
	    o->desc_size > LEASE_MAX_DESC)
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
	if (ch->info.memory == FPGAD_MEMORY_CUDA &&
	    gpu_export_parse(o->gpu_export, &ref.export) < 0)
		return fail(ch, -EBADMSG, "fpgad named an unknown GPU export '%s': %s",
			    o->gpu_export);
	ch->info.integrated = ch->info.memory == FPGAD_MEMORY_CUDA &&
			      ref.export == GPU_EXPORT_HOST;
	/*
	 * The descriptor ring, then a host ring, a GPU ring exported as fd or
	 * an integrated GPU's.
	 */
	want = ch->info.memory == FPGAD_MEMORY_HOST || ref.export != GPU_EXPORT_IPC ?
	       2 : 1;
	r = handoff_exchange(ch->c, o->handoff_path, &o->handoff_token, NULL, 0,
			     fds, want, &ch->link);
	if (r < 0)
		return r;
	ch->setup.lease_ns = clock_now_ns() - t0;
	r = handoff_map(fds[0], o->desc_size, PROT_READ | PROT_WRITE, &ch->desc);
	if (r == 0) {
		ch->desc_len = o->desc_size;
		if (ch->info.memory == FPGAD_MEMORY_HOST)
			r = handoff_map(fds[1], o->ring_size,
					h2c ? PROT_READ | PROT_WRITE : PROT_READ,
					(void **)&ch->base);
	}
	if (r < 0)
		fail(ch, r, "cannot map the rings of %s: %s", o->name);
	if (r == 0 && ch->info.memory == FPGAD_MEMORY_CUDA) {
		snprintf(ch->setup.gpu_export, sizeof(ch->setup.gpu_export), "%s",
			 gpu_export_name(ref.export));
		r = map_gpu(ch, o, &ref, want == 2 ? fds[1] : -1);
	}
	/* The mappings keep the memory; the descriptors are not needed. */
	for (unsigned i = 0; i < want; i++)
		close(fds[i]);
	if (r < 0)
		return r;
	if (ch->info.memory == FPGAD_MEMORY_CUDA && !ch->info.integrated) {
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

/* CloseChannel for @ch's lease: by name and lease id, never another's. */
int lease_give_back(fpgad_channel *ch)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__CloseChannelRequest body = FPGAD__CLOSE_CHANNEL_REQUEST__INIT;
	Fpgad__Response *resp;
	int r;

	body.name = ch->info.name;
	body.lease_id = ch->lease_id;
	req.body_case = FPGAD__REQUEST__BODY_CLOSE_CHANNEL;
	req.close_channel = &body;
	r = conn_request(ch->c, &req, FPGAD__RESPONSE__BODY_CLOSE_CHANNEL, &resp);
	if (r == 0)
		fpgad__response__free_unpacked(resp, NULL);
	return r;
}

int lease_take(fpgad_channel *ch, const char *name)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenChannelRequest body = FPGAD__OPEN_CHANNEL_REQUEST__INIT;
	fpgad_client *c = ch->c;
	uint64_t t0 = clock_now_ns();
	Fpgad__Response *resp;
	int r;

	memset(&ch->setup, 0, sizeof(ch->setup));
	body.name = (char *)name;
	body.shared = ch->flags & FPGAD_OPEN_SHARED;
	req.body_case = FPGAD__REQUEST__BODY_OPEN_CHANNEL;
	req.open_channel = &body;
	r = conn_request(c, &req, FPGAD__RESPONSE__BODY_OPEN_CHANNEL, &resp);
	if (r < 0)
		return r;
	/* The lease lives as long as the connection that carried its grant. */
	ch->conn = c->reply_pipe;
	ch->events = 0;
	r = map_reply(ch, resp->open_channel, t0);
	fpgad__response__free_unpacked(resp, NULL);
	if (r < 0) {
		char msg[sizeof(c->errmsg)];

		/* Keep the reason while the lease is given back. */
		memcpy(msg, c->errmsg, sizeof(msg));
		if (ch->lease_id)
			lease_give_back(ch);
		unmap(ch);
		memcpy(c->errmsg, msg, sizeof(msg));
	}
	return r;
}

bool lease_gone(fpgad_channel *ch)
{
	struct pollfd p = { .fd = ch->link, .events = POLLIN };

	if (ch->link < 0 || !reconnect_conn_alive(ch->c, ch->conn))
		return true;
	/* fpgad writes nothing after the handoff: readable means closed. */
	return poll(&p, 1, 0) > 0;
}

int lease_renew(fpgad_channel *ch)
{
	char name[sizeof(ch->info.name)];
	int r;

	snprintf(name, sizeof(name), "%s", ch->info.name);
	/*
	 * The ring the caller knows stays mapped until it is told; a lease
	 * made since (and lost again before it was told) goes now.
	 */
	if (!ch->old && ch->cons && (ch->old = malloc(sizeof(*ch->old)))) {
		*ch->old = *ch;
		ch->old->old = NULL;
		forget(ch);
	} else {
		unmap(ch);
	}
	ch->lease_id = 0;
	ch->restored = false;
	r = lease_take(ch, name);
	if (r < 0)
		ch->lease_id = 0;
	else
		ch->restored = true;
	return r;
}
