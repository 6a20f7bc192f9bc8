/* SPDX-License-Identifier: MIT */
/*
 * net_frame.h - frames from a network sender's packets (roce_wire.h): the
 * state machine of one channel's receiver, with no sockets and no locks,
 * so that tests and the fuzzer drive it packet by packet.
 *
 * A frame is written into a slot the owner armed (take), whatever page the
 * sender aimed at: the sender has no backpressure, so fpgad, not the
 * sender, decides where each frame lands, and a slot a consumer holds is
 * never armed, so never written.  A frame is complete (done) when its
 * WRITE with Immediate arrives after every packet before it, in order,
 * with immediate and metadata that agree with what arrived.  Anything else
 * (a lost, reordered or misplaced packet, a lost immediate that merged two
 * frames, a frame longer than a slot) makes the frame incomplete: it is
 * counted and never handed on, and its slot takes the next frame.  A
 * frame that starts while no slot is armed is dropped and counted.
 */
#ifndef FPGAD_NET_FRAME_H
#define FPGAD_NET_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#include "device/net/roce_wire.h"
#include "device/source.h"

/* A slot armed for the sender's next frame. */
struct net_slot {
	unsigned char *base;
	uint64_t cookie;
};

struct net_frame_done {
	uint64_t cookie;
	uint64_t length;
	uint64_t seq;			/* the sender's frame number, unwrapped */
	uint64_t t_start_ns, t_end_ns;	/* first packet, immediate */
	/* The metadata's frame start and metadata time (roce_meta_time_ns). */
	uint64_t t_sender_start_ns, t_sender_end_ns;
};

struct net_frame_ops {
	/* The next armed slot, or -EAGAIN when there is none. */
	int (*take)(void *user, struct net_slot *ret_slot);
	/* A complete frame in @slot. */
	void (*done)(void *user, const struct net_frame_done *d);
};

struct net_frame_cfg {
	struct sender_layout layout;	/* what the sender was told */
	uint32_t qpn;
	uint32_t rkey;
	uint64_t frame_size;		/* the longest frame */
	uint64_t slot_size;		/* bytes a slot holds */
};

struct net_frame {
	struct net_frame_cfg cfg;
	const struct net_frame_ops *ops;
	void *user;
	struct source_counters cnt;

	bool synced;			/* a PSN was seen */
	uint32_t expect_psn;
	bool active;			/* a frame is being received */
	bool torn;			/* the current (or next) frame is */
	bool have_slot;
	struct net_slot slot;		/* where the current frame goes */
	uint32_t page;
	uint64_t got;			/* payload bytes of the current frame */
	uint64_t t_start_ns;
	struct roce_frame_numbers numbers;
	/* What the sender's stream says of its next frames (net_rx.h). */
	uint64_t seen_payload;		/* a frame's first packet's bytes */
	uint64_t seen_length;		/* the last good frame's */
};

void net_frame_init(struct net_frame *nf, const struct net_frame_cfg *cfg,
		    const struct net_frame_ops *ops, void *user);

/* One UDP payload from the sender, received at @now_ns. */
void net_frame_packet(struct net_frame *nf, const void *buf, size_t len,
		      uint64_t now_ns);

/*
 * The same of a packet received in pieces (roce_parse_split()): when
 * @payload is where the packet's bytes belong in the slot, they are not
 * copied again.
 */
void net_frame_packet_split(struct net_frame *nf, const void *hdr,
			    size_t hdr_len, size_t len, const void *payload,
			    uint64_t now_ns);

/*
 * Where the payload of the sender's next packet in order goes: the slot
 * the receiver holds (taking one when it holds none) and the offset in
 * it.  False when no slot is armed, or the frame under way started with
 * none.
 */
bool net_frame_next(struct net_frame *nf, struct net_slot *ret_slot,
		    uint64_t *ret_offset);

/*
 * A new ring with key @rkey: the sender is told anew and starts over (its
 * PSNs and frame numbers); packets with the old key are refused from now.
 */
void net_frame_restart(struct net_frame *nf, uint32_t rkey);

/*
 * Give back the slot the receiver holds (a reset): true and *ret_slot
 * when it held one.  The frame under way is forgotten.
 */
bool net_frame_release(struct net_frame *nf, struct net_slot *ret_slot);

#endif
