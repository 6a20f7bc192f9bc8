/* SPDX-License-Identifier: MIT */
/*
 * lease.h - one client's hold on one channel, from the moment it is
 * granted to the moment it ends: its descriptor ring in shared memory
 * (the frame plane), the producer side of that ring, and which ring slots
 * the daemon knows the client holds.
 *
 * A lease is exclusive (the only reader of the channel) or shared-read
 * (fan-out: every shared reader sees every frame; a slot is recycled when
 * all of them let it go).  It is bound to a control connection.  It ends
 * in exactly three ways, all here: the client closes it (CloseChannel),
 * its connection goes away (the process exited or died: lease_close from
 * the disconnect handler), or the channel goes away (lease_end_all, when
 * fpgad stops).  Whatever the client held goes back to the ring.
 */
#ifndef FPGAD_LEASE_H
#define FPGAD_LEASE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "channel/frame_producer.h"
#include "config/config.h"
#include "control/handoff.h"
#include "control/session.h"
#include "memory/memory.h"

struct channel;
struct slots;

struct lease {
	struct lease *next;
	struct session *session;	/* owner; identity only */
	bool shared;
	bool closing;			/* being removed: do not wait on it */
	uid_t uid;
	pid_t pid;
	uint64_t id;			/* random, odd; the ring's generation too */
	struct handoff_token token;	/* for the handoff, once */
	int link_fd;			/* handoff connection, kept; -1 before */
	struct mem_region *desc;	/* the descriptor ring (a memfd) */
	struct frame_producer *prod;
	uint8_t *held;			/* per slot: the client claimed it
					   (slots_let_go, slots_held_by) */
	/* The streaming thread counts; any thread reads (lease metrics). */
	_Atomic uint64_t frames;	/* published to it */
	_Atomic uint64_t returned;	/* released (or taken back) by it */
	_Atomic uint64_t dropped;	/* taken back unclaimed (drop-oldest) */
};

/* A lease as the metrics show it: its lessee and what it was given. */
struct lease_view {
	pid_t pid;
	uid_t uid;
	struct identity who;
	uint64_t frames;		/* published to it */
	uint64_t returned;		/* released by it */
	uint64_t dropped;		/* taken back from it unclaimed */
};

/* What a lessee needs to map the ring and its descriptor ring. */
struct lease_grant {
	enum memory_kind memory;
	enum transfer_mode mode;
	uint64_t ring_size;
	int gpu;			/* cuda memory: device ordinal */
	char gpu_bus_id[32];		/* cuda memory: its PCI bus id */
	enum gpu_export gpu_export;	/* cuda memory: fd, ipc or host */
	uint8_t ipc_handle[64];		/* cuda memory, export ipc:
					   cudaIpcMemHandle_t */
	uint8_t token[HANDOFF_TOKEN_SIZE]; /* presented on the handoff socket */
	uint64_t lease_id;
	uint64_t desc_size;		/* bytes of the descriptor ring */
};

/*
 * Lease @ch to @s: exclusive, or shared-read when @shared and every other
 * lease is shared too.  Starts streaming with the first lease.  Errors:
 * -EBUSY (leased by another), -ENOSPC (a per-client limit), -EIO (FAILED),
 * -EALREADY (already leased by @s), -EINVAL (shared on h2c); @err says it
 * in words.
 */
int lease_open(struct channel *ch, struct session *s, bool shared,
	       const struct config_control *limits,
	       struct lease_grant *ret_grant, char *err, size_t errlen);
/*
 * End @s's lease on @ch: the client closed it or its connection went
 * away.  @id, when not 0, must name the lease (a handle of the client that
 * outlived its lease must not end a newer one).  -ENOENT when @s has no
 * such lease.  The last lease stops streaming.
 */
int lease_close(struct channel *ch, struct session *s, uint64_t id);
/* @ch's leases now, at most @max into @out: how many.  The loop only. */
unsigned lease_views(const struct channel *ch, struct lease_view *out,
		     unsigned max);
/* The channel is going away: end every lease, telling each client. */
void lease_end_all(struct channel *ch);
/* @s's lease on @ch, or NULL. */
struct lease *lease_find(const struct channel *ch, const struct session *s);

/*
 * The handoff: which lease of @ch holds @token?  It must be presented by
 * the lease's own process (@peer), and only once.  0 with the descriptors
 * to send (the descriptor ring, then the data ring's: a host ring's
 * memfd, a GPU ring's VMM descriptor where its export is fd, an
 * integrated GPU's memfd where it is host), -ENOENT
 * when no lease of @ch holds @token, -EACCES (@err says why).
 */
int lease_claim(struct channel *ch, const uint8_t *token,
		const struct handoff_peer *peer, int *ret_fds,
		unsigned *ret_n_fds, struct lease **ret_lease, char *err,
		size_t errlen);
/* The descriptors were delivered over @fd: keep it as the lease's link. */
void lease_link(struct lease *l, int fd);
/* @ch's leases as a holder of handoff tokens (lease_claim, lease_link). */
void lease_claimer(struct channel *ch, struct handoff_claimer *ret);

#endif
