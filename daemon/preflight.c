// SPDX-License-Identifier: MIT
/*
 * preflight.c - the checks `fpgad --check-config` makes against the host
 * (preflight.h), each reported at the configuration line it is about.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>

#include "memory/memory.h"
#include "log.h"
#include "preflight.h"

/*
 * The socket's group: fpgad starts without it (the socket keeps fpgad's
 * group, so only root connects), so the checker warns, as fpgad does,
 * and counts no error: the built-in defaults pass on a fresh host.
 */
static unsigned check_group(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16], buf[4096];
	struct group gr, *res = NULL;
	int r;

	(void)err;
	(void)len;
	if (!cfg->control.group[0])
		return 0;
	r = getgrnam_r(cfg->control.group, &gr, buf, sizeof(buf), &res);
	if (r == 0 && res)
		return 0;
	log_warn("%s: warning: [control] group '%s' does not exist: the socket keeps fpgad's group and only root can connect (create it: groupadd --system %s)",
		 config_where(cfg, CONFIG_CONTROL, 0, "group", where, sizeof(where)),
		 cfg->control.group, cfg->control.group);
	return 0;
}

static unsigned check_device_node(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16];
	struct stat st;

	if (cfg->device.backend != BACKEND_XDMA)
		return 0;
	config_where(cfg, CONFIG_DEVICE, 0, "path", where, sizeof(where));
	if (stat(cfg->device.path, &st) < 0) {
		config_error_append(err, len, "%s: [device] path %s: %s (is fpgad_dma.ko loaded? modprobe fpgad_dma)",
				    where, cfg->device.path, strerror(errno));
		return 1;
	}
	if (!S_ISCHR(st.st_mode)) {
		config_error_append(err, len, "%s: [device] path %s is not a character device",
				    where, cfg->device.path);
		return 1;
	}
	return 0;
}

/* Whether @ch must have a GPU: it asks for one by memory or mode. */
static bool channel_needs_gpu(const struct config_channel *ch)
{
	return ch->memory == MEMORY_CUDA || ch->mode == MODE_GPUDIRECT ||
	       ch->mode == MODE_BOUNCE;
}

/*
 * Each GPU a channel needs answers; so does one the file names for a
 * channel of memory = auto, on a host with GPUs (without any, such a
 * channel runs on host memory).
 */
static unsigned check_gpus(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16], why[256];
	unsigned found = 0;
	int ordinal;
	bool any_gpu = memory_cuda_probe(NULL, &ordinal, NULL, 0) == 0;

	for (unsigned i = 0; i < cfg->n_channels; i++) {
		const struct config_channel *ch = &cfg->channels[i];
		const char *gpu = ch->gpu[0] ? ch->gpu : cfg->device.gpu;
		bool named = ch->gpu[0] || config_key_line(cfg, CONFIG_DEVICE, 0, "gpu");

		if (ch->memory == MEMORY_HOST ||
		    (!channel_needs_gpu(ch) && !(named && any_gpu)))
			continue;
		if (memory_cuda_probe(gpu, &ordinal, why, sizeof(why)) == 0)
			continue;
		if (ch->gpu[0])
			config_where(cfg, CONFIG_CHANNEL, i, "gpu", where, sizeof(where));
		else if (channel_needs_gpu(ch))
			config_where(cfg, CONFIG_CHANNEL, i,
				     ch->memory == MEMORY_CUDA ? "memory" : "mode",
				     where, sizeof(where));
		else
			config_where(cfg, CONFIG_DEVICE, 0, "gpu", where, sizeof(where));
		config_error_append(err, len, "%s: [channel %s] needs GPU %s: %s",
				    where, ch->name, gpu, why);
		found++;
	}
	return found;
}

/* The rings, all together, fit in the host's memory. */
static unsigned check_ring_memory(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16];
	unsigned long long total = 0, ram;
	struct sysinfo si;

	if (sysinfo(&si) < 0)
		return 0;
	ram = (unsigned long long)si.totalram * si.mem_unit;
	for (unsigned i = 0; i < cfg->n_channels; i++) {
		const struct config_channel *ch = &cfg->channels[i];
		unsigned long long ring = (unsigned long long)ch->slots * ch->slot_size;

		total += ring;
		if (total <= ram)
			continue;
		config_error_append(err, len, "%s: [channel %s] ring of %u slots of %llu bytes: the rings need %llu MiB, the host has %llu MiB of memory",
				    config_where(cfg, CONFIG_CHANNEL, i, "slots", where, sizeof(where)),
				    ch->name, ch->slots, (unsigned long long)ch->slot_size,
				    total >> 20, ram >> 20);
		return 1;
	}
	return 0;
}

unsigned preflight_check(const struct config *cfg, char *err, size_t len)
{
	return check_group(cfg, err, len) + check_device_node(cfg, err, len) +
	       check_gpus(cfg, err, len) + check_ring_memory(cfg, err, len);
}
