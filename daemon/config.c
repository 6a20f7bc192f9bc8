// SPDX-License-Identifier: MIT
/*
 * config.c - fpgad.conf: INI (libinih) into struct config.
 *
 * The file is read through ini_parse_stream() with a reader that counts
 * lines, so every error names file:line.  Values are checked where they are
 * parsed; cross-key rules (slot_size >= frame_size, ...) are checked per
 * channel at the end and reported at the line of the channel's section.
 */
#include <errno.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "config.h"
#include "memory.h"
#include "names.h"
#include "size.h"

#define MAX_SLOTS 4096u
#define MAX_SLOT_SIZE (1ull << 31)

struct parse_state {
	struct config *cfg;
	FILE *file;
	unsigned line;
	unsigned section_line;		/* line of the last [section] header */
	bool file_channels;		/* a [channel] section was seen */
	unsigned err_line;
	unsigned channel_line[CONFIG_MAX_CHANNELS];
	char err[256];
};

static const struct config_channel default_channel = {
	.name = "c2h0",
	.direction = DIR_C2H,
	.engine = 0,
	.slots = 8,
	.slot_size = 1u << 20,
	.frame_size = 1u << 20,
	.frame_rate = 0,
	.queue_depth = 4,
	.memory = MEMORY_AUTO,
	.mode = MODE_AUTO,
	.policy = POLICY_DROP_OLDEST,
};

void config_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->daemon.log_level = LOG_INFO;
	snprintf(cfg->daemon.runtime_dir, sizeof(cfg->daemon.runtime_dir),
		 "/run/fpgad");
	snprintf(cfg->control.group, sizeof(cfg->control.group), "fpga");
	cfg->control.socket_mode = 0660;
	cfg->control.max_message = 64 * 1024;
	cfg->control.max_clients = 64;
	cfg->control.max_leases = 16;
	cfg->control.max_pinned = 4ull << 30;
	cfg->device.backend = BACKEND_SIM;
	snprintf(cfg->device.path, sizeof(cfg->device.path), "/dev/fpgad0");
	snprintf(cfg->device.gpu, sizeof(cfg->device.gpu), "0");
	cfg->device.dma_timeout_ms = 1000;
	cfg->sim.card_memory = 2ull << 30;
	cfg->sim.seed = 1;
	cfg->transfer.engines = 1;
	cfg->transfer.queue_entries = 256;
	cfg->transfer.max_length = 1ull << 30;
	cfg->transfer.max_buffers = 64;
	cfg->transfer.max_registered = 4ull << 30;
	cfg->transfer.bounce_slots = 8;
	cfg->n_channels = 1;
	cfg->channels[0] = default_channel;
}

static int fail(struct parse_state *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parse_state *ps, const char *fmt, ...)
{
	va_list ap;

	if (ps->err[0])
		return 0;
	ps->err_line = ps->line;
	va_start(ap, fmt);
	vsnprintf(ps->err, sizeof(ps->err), fmt, ap);
	va_end(ap);
	return 0;
}

static int parse_uint(const char *s, unsigned min, unsigned max, unsigned *ret)
{
	unsigned long v;
	char *end;

	errno = 0;
	if (*s == '-' || *s == '\0')
		return -EINVAL;
	v = strtoul(s, &end, 0);
	if (errno || *end != '\0')
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*ret = (unsigned)v;
	return 0;
}

static int parse_enum(const char *s, const char *const *names, unsigned n,
		      int *ret)
{
	for (unsigned i = 0; i < n; i++) {
		if (names[i] && strcasecmp(s, names[i]) == 0) {
			*ret = (int)i;
			return 0;
		}
	}
	return -EINVAL;
}

static const char *const backend_names[] = { "sim", "xdma" };
static const char *const direction_names[] = { "c2h", "h2c" };
static const char *const memory_names[] = { "auto", "cuda", "host" };
static const char *const mode_names[] = { "auto", "gpudirect", "bounce", "host" };
static const char *const policy_names[] = { "block", "drop-oldest" };
static const char *const integrity_names[] = { "none", "crc32c" };
static const char *const level_names[] = {
	[LOG_ERR] = "err", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
	[LOG_INFO] = "info", [LOG_DEBUG] = "debug",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

const char *backend_kind_name(enum backend_kind k) { return backend_names[k]; }
const char *direction_name(enum direction d) { return direction_names[d]; }
const char *memory_kind_name(enum memory_kind k) { return memory_names[k]; }
const char *transfer_mode_name(enum transfer_mode m) { return mode_names[m]; }
const char *ring_policy_name(enum ring_policy p) { return policy_names[p]; }
const char *integrity_name(enum integrity i) { return integrity_names[i]; }

static int parse_link(const char *s, struct link_model *ret)
{
	unsigned gen, width;
	char tail;

	if (strcasecmp(s, "unlimited") == 0) {
		ret->gen = ret->width = 0;
		return 0;
	}
	if (sscanf(s, "gen%ux%u%c", &gen, &width, &tail) != 2)
		return -EINVAL;
	if (gen < 1 || gen > 5)
		return -ERANGE;
	if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16)
		return -ERANGE;
	ret->gen = gen;
	ret->width = width;
	return 0;
}

static int copy_string(char *dst, size_t len, const char *s)
{
	if (strlen(s) >= len)
		return -ENAMETOOLONG;
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

/* Key tables: one entry per key, with the parser to apply. */
enum key_type { K_UINT, K_SIZE, K_STRING, K_ENUM, K_MODE, K_LINK, K_LEVEL,
	K_POW2 };

struct key {
	const char *name;
	enum key_type type;
	size_t offset;
	size_t len;			/* strings: buffer size */
	unsigned min, max;		/* uints */
	const char *const *names;	/* enums */
	unsigned n_names;
};

#define KU(s, f, lo, hi) { #f, K_UINT, offsetof(s, f), 0, lo, hi, NULL, 0 }
#define KZ(s, f) { #f, K_SIZE, offsetof(s, f), 0, 0, 0, NULL, 0 }
#define KS(s, f) { #f, K_STRING, offsetof(s, f), sizeof(((s *)0)->f), 0, 0, NULL, 0 }
#define KE(s, f, tbl) { #f, K_ENUM, offsetof(s, f), 0, 0, 0, tbl, N(tbl) }

static const struct key daemon_keys[] = {
	{ "log_level", K_LEVEL, offsetof(struct config_daemon, log_level), 0, 0, 0, NULL, 0 },
	KS(struct config_daemon, runtime_dir),
};

static const struct key control_keys[] = {
	KS(struct config_control, group),
	{ "socket_mode", K_MODE, offsetof(struct config_control, socket_mode), 0, 0, 0777, NULL, 0 },
	KS(struct config_control, remote),
	KS(struct config_control, tls_cert_key),
	{ "max_message", K_SIZE, offsetof(struct config_control, max_message), 0, 1024, 0, NULL, 0 },
	KU(struct config_control, max_clients, 1, 4096),
	KU(struct config_control, max_leases, 1, 1024),
	KZ(struct config_control, max_pinned),
};

static const struct key device_keys[] = {
	KE(struct config_device, backend, backend_names),
	KS(struct config_device, path),
	KS(struct config_device, gpu),
	KU(struct config_device, dma_timeout_ms, 1, 600000),
};

static const struct key sim_keys[] = {
	KZ(struct config_sim, card_memory),
	{ "link", K_LINK, offsetof(struct config_sim, link), 0, 0, 0, NULL, 0 },
	KU(struct config_sim, seed, 0, ~0u),
	KU(struct config_sim, fault_timeout, 0, ~0u),
	KU(struct config_sim, fault_error, 0, ~0u),
	KU(struct config_sim, fault_corrupt, 0, ~0u),
	KU(struct config_sim, fault_hang, 0, ~0u),
};

static const struct key transfer_keys[] = {
	KU(struct config_transfer, engines, 0, 8),
	{ "queue_entries", K_POW2, offsetof(struct config_transfer, queue_entries), 0, 8, 2048, NULL, 0 },
	{ "max_length", K_SIZE, offsetof(struct config_transfer, max_length), 0, 1, 0, NULL, 0 },
	KU(struct config_transfer, max_buffers, 1, 65536),
	KZ(struct config_transfer, max_registered),
	KU(struct config_transfer, bounce_slots, 1, 64),
	KU(struct config_transfer, poll_us, 0, 1000000),
};

static const struct key channel_keys[] = {
	KE(struct config_channel, direction, direction_names),
	KU(struct config_channel, engine, 0, 63),
	KU(struct config_channel, slots, 2, MAX_SLOTS),
	KZ(struct config_channel, slot_size),
	KZ(struct config_channel, frame_size),
	KU(struct config_channel, frame_rate, 0, 10000000),
	KU(struct config_channel, queue_depth, 1, 64),
	KU(struct config_channel, poll_us, 0, 1000000),
	KE(struct config_channel, memory, memory_names),
	KE(struct config_channel, mode, mode_names),
	KE(struct config_channel, policy, policy_names),
	KE(struct config_channel, integrity, integrity_names),
	KS(struct config_channel, gpu),
};

static int apply_key(struct parse_state *ps, const char *section,
		     const struct key *keys, size_t n_keys, void *base,
		     const char *name, const char *value)
{
	const struct key *k = NULL;
	char *field;
	uint64_t size;
	int r, e;

	for (size_t i = 0; i < n_keys; i++)
		if (strcmp(keys[i].name, name) == 0)
			k = &keys[i];
	if (!k)
		return fail(ps, "unknown key '%s' in [%s]", name, section);
	field = (char *)base + k->offset;

	switch (k->type) {
	case K_UINT:
		r = parse_uint(value, k->min, k->max, (unsigned *)field);
		if (r < 0)
			return fail(ps, "%s: '%s' is not a whole number from %u to %u",
				    name, value, k->min, k->max);
		return 1;
	case K_SIZE:
		r = size_parse(value, &size);
		if (r < 0 || size < k->min)
			return fail(ps, "%s: '%s' is not a size (a number with optional K, M or G)%s",
				    name, value, r < 0 ? "" : ", or too small");
		*(uint64_t *)field = size;
		return 1;
	case K_STRING:
		if (copy_string(field, k->len, value) < 0)
			return fail(ps, "%s: value longer than %zu characters",
				    name, k->len - 1);
		return 1;
	case K_ENUM:
		r = parse_enum(value, k->names, k->n_names, &e);
		if (r < 0) {
			char list[128] = "";

			for (unsigned i = 0; i < k->n_names; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list),
					 "%s%s", i ? ", " : "", k->names[i]);
			return fail(ps, "%s: '%s' is not one of %s", name, value, list);
		}
		*(int *)field = e;
		return 1;
	case K_POW2:
		r = parse_uint(value, k->min, k->max, (unsigned *)field);
		if (r < 0 || (*(unsigned *)field & (*(unsigned *)field - 1)))
			return fail(ps, "%s: '%s' is not a power of two from %u to %u",
				    name, value, k->min, k->max);
		return 1;
	case K_MODE:
		r = parse_uint(value, 0, 0777, (unsigned *)field);
		if (r < 0 || value[0] != '0')
			return fail(ps, "%s: '%s' is not an octal mode such as 0660",
				    name, value);
		return 1;
	case K_LINK:
		if (parse_link(value, (struct link_model *)field) < 0)
			return fail(ps, "%s: '%s' is not 'unlimited' or genGxW (G 1-5, W 1, 2, 4, 8 or 16)",
				    name, value);
		return 1;
	case K_LEVEL:
		r = parse_enum(value, level_names, N(level_names), &e);
		if (r < 0)
			return fail(ps, "%s: '%s' is not one of err, warning, notice, info, debug",
				    name, value);
		*(int *)field = e;
		return 1;
	}
	return fail(ps, "internal: key type");
}

static struct config_channel *channel_section(struct parse_state *ps,
					      const char *name)
{
	struct config *cfg = ps->cfg;

	if (!ps->file_channels) {
		/* The file describes its channels: drop the built-in one. */
		ps->file_channels = true;
		cfg->n_channels = 0;
	}
	for (unsigned i = 0; i < cfg->n_channels; i++)
		if (strcmp(cfg->channels[i].name, name) == 0)
			return &cfg->channels[i];
	if (!name_valid(name)) {
		fail(ps, "[channel %s]: a channel name is 1-%d letters, digits, '_' or '-'",
		     name, CONFIG_NAME_MAX - 1);
		return NULL;
	}
	if (cfg->n_channels == CONFIG_MAX_CHANNELS) {
		fail(ps, "[channel %s]: more than %d channels", name,
		     CONFIG_MAX_CHANNELS);
		return NULL;
	}
	ps->channel_line[cfg->n_channels] = ps->section_line;
	cfg->channels[cfg->n_channels] = default_channel;
	snprintf(cfg->channels[cfg->n_channels].name, CONFIG_NAME_MAX, "%s", name);
	return &cfg->channels[cfg->n_channels++];
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parse_state *ps = user;
	struct config *cfg = ps->cfg;

	if (ps->err[0])
		return 0;
	if (strcmp(section, "daemon") == 0)
		return apply_key(ps, section, daemon_keys, N(daemon_keys),
				 &cfg->daemon, name, value);
	if (strcmp(section, "control") == 0)
		return apply_key(ps, section, control_keys, N(control_keys),
				 &cfg->control, name, value);
	if (strcmp(section, "device") == 0)
		return apply_key(ps, section, device_keys, N(device_keys),
				 &cfg->device, name, value);
	if (strcmp(section, "sim") == 0)
		return apply_key(ps, section, sim_keys, N(sim_keys), &cfg->sim,
				 name, value);
	if (strcmp(section, "transfer") == 0)
		return apply_key(ps, section, transfer_keys, N(transfer_keys),
				 &cfg->transfer, name, value);
	if (strncmp(section, "channel ", 8) == 0) {
		struct config_channel *ch = channel_section(ps, section + 8);

		if (!ch)
			return 0;
		return apply_key(ps, section, channel_keys, N(channel_keys), ch,
				 name, value);
	}
	return fail(ps, "unknown section [%s] (expected daemon, control, device, sim, transfer or 'channel NAME')",
		    section);
}

static char *reader(char *buf, int size, void *stream)
{
	struct parse_state *ps = stream;
	char *r = fgets(buf, size, ps->file);

	if (r) {
		const char *p = buf + strspn(buf, " \t");
		char name[64];

		ps->line++;
		if (*p == '[')
			ps->section_line = ps->line;
		/* A channel section with no keys still declares a channel. */
		if (sscanf(p, "[channel %63[^]]]", name) == 1)
			channel_section(ps, name);
	}
	return r;
}

static int check_channel(const struct config_channel *ch, char *err, size_t len)
{
	if (ch->slot_size == 0 || ch->slot_size % MEMORY_SLOT_ALIGN)
		return snprintf(err, len, "[channel %s] slot_size %llu is not a positive multiple of %u",
				ch->name, (unsigned long long)ch->slot_size,
				MEMORY_SLOT_ALIGN), -EINVAL;
	if (ch->slot_size > MAX_SLOT_SIZE)
		return snprintf(err, len, "[channel %s] slot_size above %llu",
				ch->name, MAX_SLOT_SIZE), -EINVAL;
	if (ch->frame_size < 64 || ch->frame_size > ch->slot_size)
		return snprintf(err, len, "[channel %s] frame_size %llu must be from 64 bytes to slot_size (%llu)",
				ch->name, (unsigned long long)ch->frame_size,
				(unsigned long long)ch->slot_size), -EINVAL;
	if (ch->memory == MEMORY_HOST && (ch->mode == MODE_GPUDIRECT ||
					  ch->mode == MODE_BOUNCE))
		return snprintf(err, len, "[channel %s] mode %s needs GPU memory, but memory = host",
				ch->name, mode_names[ch->mode]), -EINVAL;
	if (ch->memory == MEMORY_CUDA && ch->mode == MODE_HOST)
		return snprintf(err, len, "[channel %s] mode host needs host memory, but memory = cuda",
				ch->name), -EINVAL;
	return 0;
}

int config_load(const char *path, struct config *ret_cfg, char *err,
		size_t errlen)
{
	struct parse_state ps = { 0 };
	struct config *cfg;
	char msg[320];
	int r;

	cfg = malloc(sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	config_defaults(cfg);
	ps.cfg = cfg;
	ps.file = fopen(path, "re");
	if (!ps.file) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto out;
	}
	r = ini_parse_stream(reader, &ps, handler, &ps);
	fclose(ps.file);
	if (r != 0 || ps.err[0]) {
		if (r < 0)
			snprintf(err, errlen, "%s: cannot read", path);
		else
			snprintf(err, errlen, "%s:%u: %s", path,
				 ps.err[0] ? ps.err_line : (unsigned)r,
				 ps.err[0] ? ps.err : "syntax error (expected [section] or key = value)");
		r = -EINVAL;
		goto out;
	}
	for (unsigned i = 0; i < cfg->n_channels; i++) {
		r = check_channel(&cfg->channels[i], msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "%s:%u: %s", path,
				 ps.file_channels ? ps.channel_line[i] : 0, msg);
			goto out;
		}
		for (unsigned j = 0; j < i; j++) {
			if (cfg->channels[j].direction == cfg->channels[i].direction &&
			    cfg->channels[j].engine == cfg->channels[i].engine) {
				snprintf(err, errlen, "%s:%u: [channel %s] engine %u already used by channel %s",
					 path, ps.channel_line[i], cfg->channels[i].name,
					 cfg->channels[i].engine, cfg->channels[j].name);
				r = -EINVAL;
				goto out;
			}
		}
	}
	if (strncmp(cfg->control.remote, "tls+tcp://", 10) == 0 &&
	    !cfg->control.tls_cert_key[0]) {
		snprintf(err, errlen, "%s: remote = %s needs tls_cert_key (a PEM file with the certificate and its key)",
			 path, cfg->control.remote);
		r = -EINVAL;
		goto out;
	}
	if (cfg->daemon.runtime_dir[0] != '/') {
		snprintf(err, errlen, "%s: runtime_dir must be an absolute path", path);
		r = -EINVAL;
		goto out;
	}
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	*ret_cfg = *cfg;
	r = 0;
out:
	free(cfg);
	return r;
}

const struct config_channel *config_channel_find(const struct config *cfg,
						 const char *name)
{
	for (unsigned i = 0; i < cfg->n_channels; i++)
		if (strcmp(cfg->channels[i].name, name) == 0)
			return &cfg->channels[i];
	return NULL;
}
