// SPDX-License-Identifier: MIT
/* channel.c - a configured channel. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "channel.h"

struct channel {
	struct config_channel cfg;
	enum channel_state state;
	struct channel_stats stats;
};

const char *channel_state_name(enum channel_state st)
{
	static const char *const names[] = {
		"idle", "streaming", "recovering", "failed",
	};
	return names[st];
}

int channel_create(const struct config *cfg, const struct config_channel *cc,
		   const struct device_ops *ops, struct device *dev,
		   struct channel **ret_ch)
{
	struct channel *ch = calloc(1, sizeof(*ch));

	(void)cfg;
	(void)ops;
	(void)dev;
	if (!ch)
		return -ENOMEM;
	ch->cfg = *cc;
	ch->state = CHANNEL_IDLE;
	*ret_ch = ch;
	return 0;
}

void channel_destroy(struct channel *ch)
{
	free(ch);
}

const struct config_channel *channel_config(const struct channel *ch)
{
	return &ch->cfg;
}

void channel_get_stats(struct channel *ch, struct channel_stats *ret_stats)
{
	*ret_stats = ch->stats;
	ret_stats->state = ch->state;
	ret_stats->memory = ch->cfg.memory;
	ret_stats->mode = ch->cfg.mode;
}

bool channel_is_streaming(struct channel *ch)
{
	return ch->state == CHANNEL_STREAMING;
}

const char *channel_mode_reason(const struct channel *ch)
{
	(void)ch;
	return "";
}

bool channel_leased_by(const struct channel *ch, const struct session *s)
{
	(void)ch;
	(void)s;
	return false;
}

void channel_release_session(struct channel *ch, struct session *s)
{
	(void)ch;
	(void)s;
}
