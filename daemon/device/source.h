/* SPDX-License-Identifier: MIT */
/*
 * source.h - where a channel's frames come from: the card, over the
 * device backend's stream queue (device.h), or a network sender (source
 * = udp or roce: device/net/).  The channel drives every source through
 * the same queue operations (pin a ring, submit = arm a slot, wait = take
 * complete frames, kick, reset); what only a source has is here: whether
 * a remote sender paces it, and its counters and endpoint, which the
 * channel hands on without reading them.  Neither the channel nor the
 * request code includes a backend's header.
 */
#ifndef FPGAD_SOURCE_H
#define FPGAD_SOURCE_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"

struct device;
struct device_ops;
struct device_queue;

/* Where a sender writes: @pages pages of @stride bytes from @base. */
struct sender_layout {
	uint64_t base;
	uint64_t stride;
	uint32_t pages;
};

/*
 * A network sender's counters (net_frame.h counts them: every packet
 * lands in exactly one outcome).
 */
struct source_counters {
	uint64_t packets;		/* datagrams from the sender */
	uint64_t bytes;			/* payload bytes written into slots */
	uint64_t frames;		/* complete frames handed on */
	uint64_t lost_packets;		/* PSNs skipped */
	uint64_t late_packets;		/* PSN behind: duplicated or reordered */
	uint64_t incomplete_frames;	/* torn: never handed on */
	uint64_t no_slot_frames;	/* no slot armed: dropped */
	uint64_t bad_packets;		/* undecodable or misplaced */
	uint64_t wrong_qp;		/* another destination QP */
	uint64_t wrong_rkey;		/* another (or a stale) R_Key */
	uint64_t wrong_sender;		/* from another address (device_net.c) */
	uint64_t kernel_drops;		/* the socket's overflow (device_net.c) */
	uint64_t bad_icrc;		/* iCRC wrong: not used (device_net.c) */
	uint64_t control_acks;		/* targets the sender acknowledged */
	uint64_t control_failures;	/* ... it did not, or refused */
	uint64_t overrun_frames;	/* roce: rewritten while copied */
	uint64_t psn_resyncs;		/* the sender started over: followed */
};

/* What a network channel shows: its endpoint, its sender's target, counters. */
struct source_stats {
	enum source_kind source;	/* udp or roce */
	char listen[64];		/* bound ADDRESS:PORT (the real port) */
	char interface[16];		/* the one holding that address, "any" */
	char sender[64];		/* the only sender accepted */
	char control[64];		/* where it is told its target, or "none" */
	unsigned mtu;
	uint32_t payload;		/* bytes per packet the sender sends */
	uint32_t qpn;
	uint32_t rkey;			/* of the current ring */
	struct sender_layout layout;
	struct source_counters cnt;
	/* source = roce (device_roce.c): where fpgad's QP is, whom it takes. */
	char rdma_device[48];		/* DEVICE:PORT */
	char gid[48];
	unsigned gid_index;
	uint32_t sender_qpn;
	char landing[224];		/* which landing ring the NIC writes, why */
};


struct source {
	const char *name;		/* "card", "udp", "roce" */
	const struct device_ops *ops;	/* its stream queue's */
	struct device *dev;		/* NULL: a network source needs none */
	/*
	 * Its queue completes when a remote sender sends, not when a card
	 * finishes: armed slots waiting long is not a hung engine.
	 */
	bool sender_paced;
	/* Optional: its endpoint, target and counters.  Any thread. */
	int (*stats)(struct device_queue *q, struct source_stats *ret_stats);
};

/* The network sources (device/net/). */
extern const struct source source_udp;
extern const struct source source_roce;

#endif
