/* SPDX-License-Identifier: MIT */
/*
 * net_slots.h - what a network source's queue keeps of its ring, the same
 * for every source (device_net.c, device_roce.c): the rings pinned (a new
 * one before the old goes), the slots armed for the sender's next frames,
 * the completions the streaming thread has yet to take.  No locks: the
 * queue holds its own around each call.
 */
#ifndef FPGAD_NET_SLOTS_H
#define FPGAD_NET_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "device/device.h"
#include "device/net/net_frame.h"

#define NET_MAX_INFLIGHT 64	/* slots armed, receiving or done at once */
#define NET_MAX_PINS 2		/* a new ring is pinned before the old goes */

struct net_pin {
	bool used;
	uint32_t gen;
	unsigned char *addr;
	uint64_t length;
};

struct net_slots {
	uint64_t slot_size;
	bool gpu;		/* GPU rings taken (by address): the queue
				   copies into them on the GPU */
	struct net_pin pins[NET_MAX_PINS];
	struct net_slot armed[NET_MAX_INFLIGHT];
	unsigned armed_head, armed_n;
	struct dev_completion cq[NET_MAX_INFLIGHT];
	unsigned cq_head, cq_n;
};

/*
 * A host ring, or with @s->gpu a GPU ring (else GPU rings go through
 * bounce, -EOPNOTSUPP): its handle; -ENOSPC, -EINVAL.
 */
int net_slots_pin(struct net_slots *s, const struct dev_region *r,
		  uint64_t *ret_handle);
int net_slots_unpin(struct net_slots *s, uint64_t handle);
/* Arm @x's slot; @held: slots the receiver holds beside (0 or 1). */
int net_slots_arm(struct net_slots *s, const struct dev_xfer *x, unsigned held);
/* The next armed slot, or -EAGAIN (net_frame_ops.take). */
int net_slots_take(struct net_slots *s, struct net_slot *ret_slot);
/* A complete frame (net_frame_ops.done). */
void net_slots_done(struct net_slots *s, const struct net_frame_done *d);
/* Up to @max completions into @out: how many. */
unsigned net_slots_pop(struct net_slots *s, struct dev_completion *out,
		       unsigned max);
/* A reset: @held (when not NULL) and every armed slot back, -ECANCELED. */
void net_slots_cancel(struct net_slots *s, const struct net_slot *held);

#endif
