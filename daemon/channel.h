/* SPDX-License-Identifier: MIT */
/*
 * channel.h - one configured DMA channel: its ring of slots, its leases
 * and, while leased, its streaming thread.
 */
#ifndef FPGAD_CHANNEL_H
#define FPGAD_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "device.h"
#include "session.h"

struct channel;

enum channel_state {
	CHANNEL_IDLE,
	CHANNEL_STREAMING,
	CHANNEL_RECOVERING,
	CHANNEL_FAILED,
};

struct channel_stats {
	enum channel_state state;
	enum memory_kind memory;
	enum transfer_mode mode;
	unsigned lessees;
	uint64_t frames;
	uint64_t bytes;
	uint64_t drops;
	uint64_t stalls;
	uint64_t errors;
	uint64_t recoveries;
	uint64_t copies;
	uint64_t dma_ns_total;
};

int channel_create(const struct config *cfg, const struct config_channel *cc,
		   const struct device_ops *ops, struct device *dev,
		   struct channel **ret_ch);
/* Stops streaming, ends every lease, frees the ring; accepts NULL. */
void channel_destroy(struct channel *ch);

const struct config_channel *channel_config(const struct channel *ch);
void channel_get_stats(struct channel *ch, struct channel_stats *ret_stats);
bool channel_is_streaming(struct channel *ch);
/* Why the channel uses the mode it uses ("no GPU: ..."), for Status. */
const char *channel_mode_reason(const struct channel *ch);
bool channel_leased_by(const struct channel *ch, const struct session *s);

/* End @s's lease on @ch, if any (connection closed or process died). */
void channel_release_session(struct channel *ch, struct session *s);

const char *channel_state_name(enum channel_state st);

#endif
