/* SPDX-License-Identifier: MIT */
/*
 * p2p.h - peer-to-peer between the card and the host's GPUs, as fpgad
 * sees it.
 *
 * At start, before the channels exist (their DMA engines are free), for
 * each c2h channel with mode = auto in GPU memory: the topology of the
 * card and the channel's GPU, a probe of card DMA in gpudirect and in
 * bounce (bounded by [device] probe_ms and 256 MiB), and auto's choice
 * with its reason (probe.c).  With auto_choice = first, or a mode forced,
 * no choice is made and the channel does what it always did.
 *
 * On request (Probe), the same for one idle channel, on its own queue.
 *
 * On request (Topology), the matrix of the card against every NVIDIA GPU
 * of the host and the GPUs the channels use, read afresh, with each
 * channel's mode, reason and measured rates.
 *
 * The tree is read from /sys and /proc/cpuinfo, or from
 * $FPGAD_TEST_SYSROOT/sys and $FPGAD_TEST_SYSROOT/proc/cpuinfo: a setting
 * for tests, logged at start and named in every Topology reply.
 */
#ifndef FPGAD_P2P_H
#define FPGAD_P2P_H

#include "config/config.h"
#include "device/device.h"
#include "fpgad.pb-c.h"
#include "topology/probe.h"

#define P2P_TEST_ROOT_ENV "FPGAD_TEST_SYSROOT"

struct p2p;

/* Topology, probes and choices for @cfg's channels on the open device. */
int p2p_survey(const struct config *cfg, const struct device_ops *ops,
	       struct device *dev, struct p2p **ret_p2p);
/* Accepts NULL. */
void p2p_free(struct p2p *p);

/* auto's choice for channel @name, NULL when none was made. */
const struct probe_choice *p2p_choice(const struct p2p *p, const char *name);

/*
 * Measure channel @cc again on its own queue @q, which must be idle, and
 * choose anew (the record fpgactl topo shows follows): 0 with the choice
 * and the rates (valid until the next probe), or a negative errno when no
 * choice could be made.
 */
int p2p_reprobe(struct p2p *p, const struct config *cfg,
		const struct config_channel *cc, struct device_queue *q,
		const struct probe_choice **ret_choice,
		const struct probe_rates **ret_rates);

/* The card fpgad drives, for Status and the metrics. */
struct p2p_card {
	struct topo_inventory inv;	/* from sysfs; addr "" for the sim */
	char simulates[160];		/* the sim: what it models; else "" */
	char warning[192];		/* the first sysfs file unreadable */
};

/* The card now (its link as negotiated this moment); any thread. */
void p2p_card(const struct p2p *p, struct p2p_card *ret_card);

/* A channel as it runs, for the Topology reply. */
struct p2p_channel_view {
	const char *name;
	const char *gpu;	/* PCI bus id of its GPU, "" in host memory */
	const char *mode;
	const char *mode_reason;
	bool integrated;	/* its ring: host memory of an integrated GPU */
};

/* A Topology reply and everything it points into. */
struct p2p_answer;

/* Build the reply; -ENOMEM only.  Free it with p2p_answer_free(). */
int p2p_topology(const struct p2p *p, const struct p2p_channel_view *chs,
		 unsigned n_chs, struct p2p_answer **ret_answer);
Fpgad__TopologyReply *p2p_answer_reply(struct p2p_answer *a);
/* Accepts NULL. */
void p2p_answer_free(struct p2p_answer *a);

#endif
