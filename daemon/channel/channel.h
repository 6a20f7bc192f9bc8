/* SPDX-License-Identifier: MIT */
/*
 * channel.h - one configured DMA channel: its ring of slots, its leases
 * and, while leased, its streaming thread.
 */
#ifndef FPGAD_CHANNEL_H
#define FPGAD_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "config/config.h"
#include "control/session.h"
#include "device/device.h"
#include "device/source.h"
#include "service/histogram.h"

struct channel;

enum channel_state {
	CHANNEL_IDLE,
	CHANNEL_STREAMING,
	CHANNEL_RECOVERING,
	CHANNEL_FAILED,
};
#define CHANNEL_STATES (CHANNEL_FAILED + 1)

struct channel_stats {
	enum channel_state state;
	enum memory_kind memory;
	bool integrated;	/* cuda memory of an integrated GPU: host memory */
	enum transfer_mode mode;
	unsigned leases;
	uint64_t frames;
	uint64_t bytes;
	uint64_t drops;
	uint64_t stalls;
	uint64_t errors;
	uint64_t recoveries;
	uint64_t copies;
	struct histo dma;	/* card DMA time per completed transfer */
	struct histo latency;	/* c2h: DMA end to publication, per frame */
	uint64_t completions;	/* transfers that came back, any status */
	uint64_t queued_total;	/* sum of the transfers queued at each one */
	uint64_t card_good;	/* h2c on sim: frames the card's sink verified */
	uint64_t card_bad;	/* h2c on sim: frames it rejected */
	uint64_t integrity_errors; /* c2h frames whose CRC did not match */
	bool network;		/* a network source: net below is its sender's */
	struct source_counters net;
	char last_error[128];	/* the last DMA failure, or why it FAILED; "" none */
};

/*
 * Allocates and pins the ring, opens the engine, chooses memory and mode;
 * on failure writes why into @err (the caller logs it, with where the
 * channel is configured).
 */
int channel_create(const struct config *cfg, const struct config_channel *cc,
		   const struct source *src, struct channel **ret_ch, char *err,
		   size_t errlen);
/*
 * Frees the ring and the engine; accepts NULL.  Its leases end first
 * (lease_end_all), which also stops its stream.
 */
void channel_destroy(struct channel *ch);

const struct config_channel *channel_config(const struct channel *ch);
void channel_get_stats(struct channel *ch, struct channel_stats *ret_stats);
/* A network source's endpoint, target and counters; -ENODEV for a card's. */
int channel_source_stats(struct channel *ch, struct source_stats *ret_stats);
bool channel_is_streaming(struct channel *ch);
/* Why the channel uses the mode it uses ("no GPU: ..."), for Status. */
const char *channel_mode_reason(const struct channel *ch);
/* auto's measured choice explains the mode, when the channel runs in it. */
void channel_explain_mode(struct channel *ch, enum transfer_mode mode,
			  const char *reason);
/* CUDA ordinal of the GPU its ring is on, -1 in host memory. */
int channel_gpu(const struct channel *ch);
/* PCI bus id of the GPU its ring is on, "" in host memory. */
const char *channel_gpu_bus_id(const struct channel *ch);
/*
 * Bytes pinned for the card's DMA: the ring, and the staging beside it in
 * bounce mode (which a probe may switch).  Any thread.
 */
uint64_t channel_pinned_bytes(struct channel *ch);

/*
 * How a probe measures an idle channel's engine (p2p_reprobe): the mode to
 * run in and why, or a negative errno.
 */
typedef int (*channel_measure_fn)(void *user, struct device_queue *q,
				  enum transfer_mode *ret_mode, char *reason,
				  size_t reason_len);
/*
 * Measure a c2h channel in GPU memory with @measure on its own DMA engine
 * and run it in the mode measured.  The channel must be idle: -EBUSY
 * when leased, -EINVAL in host memory or for h2c, each with @err.
 * *@ret_switched says whether the mode changed.  The loop thread only.
 */
int channel_probe(struct channel *ch, channel_measure_fn measure, void *user,
		  bool *ret_switched, char *err, size_t errlen);

/*
 * Clear a FAILED channel: it streams again if leased, else it is idle.
 * -EALREADY (with @err saying the state) when it has not failed.
 */
int channel_reset(struct channel *ch, char *err, size_t errlen);
enum channel_state channel_state(struct channel *ch);

const char *channel_state_name(enum channel_state st);

#endif
