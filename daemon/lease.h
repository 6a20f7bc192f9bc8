/* SPDX-License-Identifier: MIT */
/*
 * lease.h - one client's hold on one channel: its descriptor ring in
 * shared memory (the frame plane), the producer side of that ring, and
 * which ring slots the daemon knows the client holds.
 *
 * A lease is exclusive (the only reader of the channel) or shared-read
 * (fan-out: every shared reader sees every frame; a slot is recycled when
 * all of them let it go).  It is bound to a control connection: when the
 * connection closes, the process exited or died, and the lease ends.
 */
#ifndef FPGAD_LEASE_H
#define FPGAD_LEASE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "frame_producer.h"
#include "memory.h"
#include "session.h"

struct lease {
	struct lease *next;
	struct session *session;	/* owner; identity only */
	bool shared;
	bool closing;			/* being removed: do not wait on it */
	uid_t uid;
	pid_t pid;
	struct mem_region *desc;	/* the descriptor ring's shm */
	struct frame_producer *prod;
	uint64_t generation;
	uint8_t *held;			/* per slot: the client claimed it */
};

/*
 * Create the descriptor ring for @slots slots, name it after @channel and
 * let @s's peer map it.
 */
int lease_create(const char *channel, const struct frame_ring_geometry *geo,
		 struct session *s, bool shared, struct lease **ret_lease);
/* Raise @events for the client, unlink and unmap the ring; accepts NULL. */
void lease_destroy(struct lease *l, uint32_t events);

#endif
