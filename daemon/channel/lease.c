// SPDX-License-Identifier: MIT
/*
 * lease.c - a client's lease on a channel, from grant to end (lease.h):
 * the checks and limits, the descriptor ring, the first lease starting
 * the stream and the last one stopping it, and the slots a lessee holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "channel/channel_impl.h"
#include "channel/lease.h"
#include "fpgad.h"
#include "clock.h"
#include "control/fdclose.h"
#include "log.h"

static void lease_destroy(struct lease *l, uint32_t events);

/* Random bytes: lease ids must not be guessable. */
static int random_bytes(void *buf, size_t len)
{
	ssize_t n = getrandom(buf, len, 0);

	return n == (ssize_t)len ? 0 : -EAGAIN;
}

static int lease_create(const char *channel, const struct frame_ring_geometry *geo,
			struct session *s, bool shared, struct lease **ret_lease)
{
	struct frame_ring_geometry g = *geo;
	struct lease *l;
	char hint[64];
	size_t size;
	int r;

	g.desc_count = frame_ring_desc_count_for(geo->slots);
	size = frame_ring_size(g.desc_count);
	if (!g.desc_count || !size)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->session = s;
	l->shared = shared;
	l->uid = s->peer.uid;
	l->pid = s->peer.pid;
	l->link_fd = -1;
	l->held = calloc(geo->slots, 1);
	if (!l->held) {
		r = -ENOMEM;
		goto fail;
	}
	r = random_bytes(&l->id, sizeof(l->id));
	if (r == 0)
		r = handoff_token_make(&l->token);
	if (r < 0)
		goto fail;
	l->id |= 1;	/* never 0: CloseChannel's "this connection's lease" */
	snprintf(hint, sizeof(hint), "fpgad-%s-desc", channel);
	r = memory_host_ops.alloc(size, NULL, hint, 0, &l->desc);
	if (r < 0)
		goto fail;
	r = frame_producer_init(l->desc->host, l->desc->size, &g,
				l->id, &l->prod);
	if (r < 0)
		goto fail;
	*ret_lease = l;
	return 0;
fail:
	lease_destroy(l, 0);
	return r;
}

static void lease_destroy(struct lease *l, uint32_t events)
{
	if (!l)
		return;
	if (l->prod && events)
		frame_producer_raise(l->prod, events);
	frame_producer_free(l->prod);
	if (l->desc)
		memory_host_ops.free(l->desc);
	/* The lessee sees its link hang up: the lease is over. */
	fdclose_untrusted(l->link_fd);
	free(l->held);
	free(l);
}

struct lease *lease_find(const struct channel *ch, const struct session *s)
{
	for (struct lease *l = ch->leases; l; l = l->next)
		if (l->session == s)
			return l;
	return NULL;
}

unsigned lease_views(const struct channel *ch, struct lease_view *out,
		     unsigned max)
{
	unsigned n = 0;

	for (struct lease *l = ch->leases; l && n < max; l = l->next, n++) {
		out[n] = (struct lease_view){
			.pid = l->pid,
			.uid = l->uid,
			.who = l->session->who,
			.frames = atomic_load_explicit(&l->frames, memory_order_relaxed),
			.returned = atomic_load_explicit(&l->returned, memory_order_relaxed),
			.dropped = atomic_load_explicit(&l->dropped, memory_order_relaxed),
		};
	}
	return n;
}

int lease_open(struct channel *ch, struct session *s, bool shared,
	       const struct config_control *limits,
	       struct lease_grant *ret_grant, char *err, size_t errlen)
{
	char who[160];
	struct frame_ring_geometry geo = {
		.slots = ch->cfg.slots,
		.slot_size = ch->cfg.slot_size,
		.frame_size = ch->cfg.frame_size,
		.direction = ch->cfg.direction == DIR_H2C ? FPGAD_FRAMES_H2C :
							      FPGAD_FRAMES_C2H,
	};
	struct lease *l;
	int r;

	if (lease_find(ch, s)) {
		snprintf(err, errlen, "channel %s is already open on this connection",
			 ch->cfg.name);
		return -EALREADY;
	}
	if (shared && ch->cfg.direction == DIR_H2C) {
		snprintf(err, errlen, "channel %s is h2c: one writer, no shared lease",
			 ch->cfg.name);
		return -EINVAL;
	}
	if (ch->state == CHANNEL_FAILED) {
		snprintf(err, errlen, "channel %s has FAILED after repeated DMA errors",
			 ch->cfg.name);
		return -EIO;
	}
	if (ch->memory == MEMORY_CUDA && ch->mem->gpu_export != GPU_EXPORT_IPC &&
	    s->hello_version < FPGAD_PROTOCOL_GPU_FD) {
		snprintf(err, errlen, "channel %s's GPU ring reaches its lessee as a file descriptor (export %s), which a client of protocol %u cannot map: build the consumer against libfpgad %s or later",
			 ch->cfg.name, gpu_export_name(ch->mem->gpu_export),
			 s->hello_version, FPGAD_VERSION);
		return -EPROTO;
	}
	if (ch->leases && (!shared || !ch->leases->shared)) {
		snprintf(err, errlen, "channel %s is busy: leased %s by pid %d (uid %u)",
			 ch->cfg.name, ch->leases->shared ? "shared" : "exclusively",
			 (int)ch->leases->pid, (unsigned)ch->leases->uid);
		return -EBUSY;
	}
	if (ch->leases && ch->leases->uid != s->peer.uid) {
		snprintf(err, errlen, "channel %s is busy: shared readers must share a uid (%u)",
			 ch->cfg.name, (unsigned)ch->leases->uid);
		return -EBUSY;
	}
	if (s->n_leases >= limits->max_leases) {
		snprintf(err, errlen, "lease limit reached (max_leases %u)",
			 limits->max_leases);
		return -ENOSPC;
	}
	if (s->pinned + channel_ring_bytes(ch) > limits->max_pinned) {
		snprintf(err, errlen, "pinned-memory limit reached: %llu + %llu bytes > max_pinned %llu",
			 (unsigned long long)s->pinned,
			 (unsigned long long)channel_ring_bytes(ch),
			 (unsigned long long)limits->max_pinned);
		return -ENOSPC;
	}
	r = lease_create(ch->cfg.name, &geo, s, shared, &l);
	if (r < 0) {
		snprintf(err, errlen, "cannot create the descriptor ring: %s", strerror(-r));
		return r;
	}
	/* A ring no earlier lessee has mapped: frames stay with their reader. */
	if (!ch->leases) {
		r = channel_renew_ring(ch);
		if (r < 0) {
			snprintf(err, errlen, "cannot make a fresh ring: %s", strerror(-r));
			lease_destroy(l, 0);
			return r;
		}
	}

	pthread_mutex_lock(&ch->lock);
	l->next = ch->leases;
	ch->leases = l;
	ch->n_leases++;
	pthread_mutex_unlock(&ch->lock);
	s->n_leases++;
	s->pinned += channel_ring_bytes(ch);

	if (!ch->running) {
		r = stream_start(ch);
		if (r < 0) {
			lease_close(ch, s, 0);
			snprintf(err, errlen, "cannot start streaming: %s", strerror(-r));
			return r;
		}
	}

	memset(ret_grant, 0, sizeof(*ret_grant));
	ret_grant->memory = ch->memory;
	ret_grant->mode = ch->mode;
	ret_grant->ring_size = ch->mem->size;
	ret_grant->gpu = ch->memory == MEMORY_CUDA ? ch->mem->gpu : -1;
	snprintf(ret_grant->gpu_bus_id, sizeof(ret_grant->gpu_bus_id), "%s",
		 ch->memory == MEMORY_CUDA ? ch->mem->gpu_bus_id : "");
	ret_grant->gpu_export = ch->mem->gpu_export;
	memcpy(ret_grant->ipc_handle, ch->mem->ipc_handle,
	       sizeof(ret_grant->ipc_handle));
	memcpy(ret_grant->token, l->token.bytes, sizeof(ret_grant->token));
	ret_grant->lease_id = l->id;
	ret_grant->desc_size = l->desc->size;
	log_info("channel %s: leased %s by pid %d (uid %u%s)", ch->cfg.name,
		 shared ? "shared" : "exclusively", (int)s->peer.pid,
		 (unsigned)s->peer.uid, identity_name(&s->who, who, sizeof(who)));
	return 0;
}

int lease_close(struct channel *ch, struct session *s, uint64_t id)
{
	struct frame_returned out[CHANNEL_BATCH];
	struct lease *l, **pp;
	int n;

	pthread_mutex_lock(&ch->lock);
	for (pp = &ch->leases; (l = *pp) && l->session != s; pp = &l->next)
		;
	if (!l || (id && l->id != id)) {
		pthread_mutex_unlock(&ch->lock);
		return -ENOENT;
	}
	/* The stream may be asleep on this lease's releases. */
	l->closing = true;
	while (ch->waiting_on == l)
		pthread_cond_wait(&ch->cond, &ch->lock);
	*pp = l->next;
	ch->n_leases--;
	/* Whatever the client had is the ring's again. */
	while ((n = frame_producer_reclaim_all(l->prod, out, CHANNEL_BATCH)) > 0)
		for (int i = 0; i < n; i++) {
			/*
			 * h2c: what the writer handed over still goes to the
			 * card; the buffers it still held are dropped.
			 */
			if (out[i].how != FPGAD_DESC_RELEASED)
				out[i].fill = 0;
			stream_returned(ch, l, &out[i]);
		}
	pthread_mutex_unlock(&ch->lock);
	if (!ch->leases && ch->cfg.direction == DIR_H2C)
		stream_flush(ch);

	s->n_leases--;
	s->pinned -= channel_ring_bytes(ch);
	log_info("channel %s: lease of pid %d ended", ch->cfg.name, (int)l->pid);
	lease_destroy(l, FPGAD_EVENT_CLOSED);
	if (!ch->leases)
		stream_stop(ch);
	return 0;
}

void lease_end_all(struct channel *ch)
{
	struct lease *l;

	stream_stop(ch);
	while ((l = ch->leases)) {
		ch->leases = l->next;
		ch->n_leases--;
		lease_destroy(l, FPGAD_EVENT_DAEMON_GONE | FPGAD_EVENT_CLOSED);
	}
}

int lease_claim(struct channel *ch, const uint8_t *token,
		const struct handoff_peer *peer, int *ret_fds,
		unsigned *ret_n_fds, struct lease **ret_lease, char *err,
		size_t errlen)
{
	char what[64];

	snprintf(what, sizeof(what), "channel %s: the lease", ch->cfg.name);
	for (struct lease *l = ch->leases; l; l = l->next) {
		int r = handoff_token_claim(&l->token, token, peer, l->pid, l->uid,
					    what, err, errlen);

		if (r == -ENOENT)
			continue;
		if (r)
			return r;
		ret_fds[0] = l->desc->fd;
		*ret_n_fds = 1;
		if (ch->memory == MEMORY_HOST ||
		    ch->mem->gpu_export != GPU_EXPORT_IPC)
			ret_fds[(*ret_n_fds)++] = ch->mem->fd;
		*ret_lease = l;
		return 0;
	}
	return -ENOENT;
}

void lease_link(struct lease *l, int fd)
{
	int old = l->link_fd;

	l->link_fd = fd;
	fdclose_untrusted(old);
}

static int claimer_claim(void *user, const uint8_t *token,
			 const struct handoff_peer *peer, int *ret_fds,
			 unsigned *ret_n_fds, void **ret_target, char *err,
			 size_t errlen)
{
	struct lease *l;
	int r = lease_claim(user, token, peer, ret_fds, ret_n_fds, &l, err, errlen);

	if (r == 0)
		*ret_target = l;
	return r;
}

static void claimer_link(void *user, void *target, int fd)
{
	(void)user;
	lease_link(target, fd);
}

void lease_claimer(struct channel *ch, struct handoff_claimer *ret)
{
	*ret = (struct handoff_claimer){
		.user = ch,
		.claim = claimer_claim,
		.link = claimer_link,
	};
}
