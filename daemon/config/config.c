// SPDX-License-Identifier: MIT
/*
 * config.c - fpgad.conf: INI (libinih) into struct config.
 *
 * The file is read through ini_parse_stream() with a reader that counts
 * lines, so every error names file:line.  Values are checked where they are
 * parsed; cross-key rules (slot_size >= frame_size, ...) are checked per
 * channel at the end and reported at the line of the key they are about
 * (the channel's section line when the key is not in the file).  The line
 * of every key read is kept in cfg->lines for checks made after loading.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "config/config.h"
#include "names.h"
#include "size.h"

#define MAX_SLOTS 4096u
#define MAX_SLOT_SIZE (1ull << 31)

/* One error found in the file, at @line (0: about the whole file). */
struct config_error {
	unsigned line;
	char msg[512];
};

struct parse_state {
	struct config *cfg;
	FILE *file;
	unsigned line;
	bool file_channels;		/* a [channel] section was seen */
	bool channel_refused;		/* its [channel NAME] header was */
	bool value_refused;		/* the value being applied was */
	/* Keys whose value was refused, a bit per key of its table: a rule
	 * across keys does not judge the default left in its place. */
	uint32_t refused[CONFIG_SECTIONS];
	uint32_t channel_refused_keys[CONFIG_MAX_CHANNELS];
	unsigned n_errs;		/* found, kept or not */
	struct config_error errs[CONFIG_MAX_ERRORS];
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
	.mtu = 1500,
	.qpn = 0x100,
	.icrc = 1,
	.gro = 1,
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
	cfg->device.auto_choice = AUTO_MEASURE;
	cfg->device.probe_ms = 200;
	cfg->sim.card_memory = 2ull << 30;
	snprintf(cfg->sim.numa_node, sizeof(cfg->sim.numa_node), "none");
	cfg->transfer.engines = 1;
	cfg->transfer.queue_entries = 256;
	cfg->transfer.max_length = 1ull << 30;
	cfg->transfer.max_buffers = 64;
	cfg->transfer.max_registered = 4ull << 30;
	cfg->transfer.bounce_slots = 8;
	cfg->n_channels = 1;
	cfg->channels[0] = default_channel;
}

static void report_v(struct parse_state *ps, unsigned line, const char *fmt,
		     va_list ap)
{
	/*
	 * One cause a line: the first error found there.  A value refused
	 * leaves its default in place, which a later check would refuse
	 * again at the same line, saying something the file does not say.
	 */
	for (unsigned i = 0; line && i < ps->n_errs && i < CONFIG_MAX_ERRORS; i++)
		if (ps->errs[i].line == line)
			return;
	if (ps->n_errs < CONFIG_MAX_ERRORS) {
		ps->errs[ps->n_errs].line = line;
		vsnprintf(ps->errs[ps->n_errs].msg, sizeof(ps->errs[0].msg), fmt, ap);
	}
	ps->n_errs++;
}

/* Record an error at @line and go on: every error of a file is reported. */
static void report(struct parse_state *ps, unsigned line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void report(struct parse_state *ps, unsigned line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_v(ps, line, fmt, ap);
	va_end(ap);
}

/* An error at the line being parsed; the value for inih (go on). */
static int fail(struct parse_state *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int fail(struct parse_state *ps, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report_v(ps, ps->line, fmt, ap);
	va_end(ap);
	ps->value_refused = true;
	return 1;
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
static const char *const pacing_names[] = { "hybrid", "wait" };
static const char *const auto_choice_names[] = { "measure", "first" };
static const char *const source_names[] = { "card", "udp", "roce" };
static const char *const numa_names[] = { "auto", "off" };
static const char *const yes_no_names[] = { "no", "yes" };
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
const char *auto_choice_name(enum auto_choice c) { return auto_choice_names[c]; }
const char *source_kind_name(enum source_kind s) { return source_names[s]; }

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

/* A name this many edits from a known one is taken for a typo of it. */
#define SUGGEST_MAX_DISTANCE 2

/* Levenshtein distance of @a and @b, capped at SUGGEST_MAX_DISTANCE + 1. */
static unsigned edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64], diag, up;

	if (la >= N(row) || lb >= N(row) ||
	    (la > lb ? la - lb : lb - la) > SUGGEST_MAX_DISTANCE)
		return SUGGEST_MAX_DISTANCE + 1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned sub = diag + (tolower((unsigned char)a[i - 1]) !=
					       tolower((unsigned char)b[j - 1]));

			up = row[j];
			row[j] = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;
			if (sub < row[j])
				row[j] = sub;
			diag = up;
		}
	}
	return row[lb];
}

/* Keep @candidate in *@best_name when it is the nearest to @name so far. */
static void nearer(const char *name, const char *candidate,
		   const char **best_name, unsigned *best)
{
	unsigned d = edit_distance(name, candidate);

	if (d < *best) {
		*best = d;
		*best_name = candidate;
	}
}

#define EXPORTER_HOME "fpgad listens on its local sockets only; remote status and metrics are served by fpgad-exporter (/etc/default/fpgad-exporter, fpgad-exporter(8))"
#define SIM_FAULTS_HOME "fault injection is a test knob of the simulated card, not a setting (fpgad(8), ENVIRONMENT)"

/*
 * Keys that left fpgad.conf, each saying where it went: the network
 * listeners to fpgad-exporter, the sim's fault injection to the
 * environment of the tests; NULL: gone, the reason says why.
 */
static const struct {
	const char *section, *key, *now, *why;
} moved[] = {
	{ "control", "remote", "fpgad-exporter --remote URL", EXPORTER_HOME },
	{ "control", "tls_cert_key", "fpgad-exporter --tls-cert-key FILE", EXPORTER_HOME },
	{ "control", "max_remote_clients", "fpgad-exporter --remote-max-clients N", EXPORTER_HOME },
	{ "control", "max_remote_per_address", "fpgad-exporter --remote-max-per-address N", EXPORTER_HOME },
	{ "control", "remote_idle_timeout_ms", "fpgad-exporter --remote-idle-timeout-ms MS", EXPORTER_HOME },
	{ "sim", "fault_timeout", "the environment variable FPGAD_SIM_FAULTS=timeout=N", SIM_FAULTS_HOME },
	{ "sim", "fault_error", "the environment variable FPGAD_SIM_FAULTS=error=N", SIM_FAULTS_HOME },
	{ "sim", "fault_corrupt", "the environment variable FPGAD_SIM_FAULTS=corrupt=N", SIM_FAULTS_HOME },
	{ "sim", "fault_hang", "the environment variable FPGAD_SIM_FAULTS=hang=N", SIM_FAULTS_HOME },
	{ "sim", "seed", "the environment variable FPGAD_SIM_FAULTS=seed=N", SIM_FAULTS_HOME },
	{ "device", "probe_bytes", NULL, "the burst auto measures is bounded by [device] probe_ms, and by 256 MiB per mode; remove the line" },
};

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
	KE(struct config_device, auto_choice, auto_choice_names),
	KU(struct config_device, probe_ms, 0, 10000),
	KE(struct config_device, numa, numa_names),
};

static const struct key sim_keys[] = {
	KZ(struct config_sim, card_memory),
	{ "link", K_LINK, offsetof(struct config_sim, link), 0, 0, 0, NULL, 0 },
	KS(struct config_sim, numa_node),
};

static const struct key transfer_keys[] = {
	KU(struct config_transfer, engines, 0, 8),
	{ "queue_entries", K_POW2, offsetof(struct config_transfer, queue_entries), 0, 8, 2048, NULL, 0 },
	{ "max_length", K_SIZE, offsetof(struct config_transfer, max_length), 0, 1, 0, NULL, 0 },
	KU(struct config_transfer, max_buffers, 1, 65536),
	KZ(struct config_transfer, max_registered),
	KU(struct config_transfer, bounce_slots, 1, 64),
	KU(struct config_transfer, poll_us, 0, 1000000),
	KU(struct config_transfer, card_regions, 0, 1024),
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
	KE(struct config_channel, pacing, pacing_names),
	KS(struct config_channel, gpu),
	KE(struct config_channel, source, source_names),
	KS(struct config_channel, listen),
	KS(struct config_channel, sender),
	KU(struct config_channel, mtu, 256, 9216),
	KU(struct config_channel, qpn, 2, 0xffffff),
	KU(struct config_channel, rkey, 0, ~0u),
	KE(struct config_channel, icrc, yes_no_names),
	KE(struct config_channel, gro, yes_no_names),
	KS(struct config_channel, sender_control),
	KS(struct config_channel, rdma_device),
	KU(struct config_channel, sender_qpn, 1, 0xffffff),
};

static int apply_value(struct parse_state *ps, const struct key *k,
		       char *field, const char *name, const char *value);

static int apply_key(struct parse_state *ps, const char *section,
		     const struct key *keys, size_t n_keys, void *base,
		     unsigned *lines, uint32_t *refused, const char *name,
		     const char *value)
{
	const struct key *k = NULL;
	int r;

	for (size_t i = 0; i < n_keys; i++)
		if (strcmp(keys[i].name, name) == 0)
			k = &keys[i];
	for (size_t i = 0; !k && i < N(moved); i++)
		if (strcmp(moved[i].section, section) == 0 &&
		    strcmp(moved[i].key, name) == 0)
			return moved[i].now ?
			       fail(ps, "[%s] %s moved to %s: %s", section, name,
				    moved[i].now, moved[i].why) :
			       fail(ps, "[%s] %s is no longer a key: %s", section,
				    name, moved[i].why);
	if (!k) {
		const char *near = NULL;
		unsigned best = SUGGEST_MAX_DISTANCE + 1;

		for (size_t i = 0; i < n_keys; i++)
			nearer(name, keys[i].name, &near, &best);
		if (near)
			return fail(ps, "unknown key '%s' in [%s]; did you mean %s?",
				    name, section, near);
		return fail(ps, "unknown key '%s' in [%s]", name, section);
	}
	if (lines[k - keys])
		return fail(ps, "[%s] %s is set twice: first at line %u, again here",
			    section, name, lines[k - keys]);
	lines[k - keys] = ps->line;
	ps->value_refused = false;
	r = apply_value(ps, k, (char *)base + k->offset, name, value);
	if (ps->value_refused)
		*refused |= 1u << (k - keys);
	return r;
}

static int apply_value(struct parse_state *ps, const struct key *k,
		       char *field, const char *name, const char *value)
{
	uint64_t size;
	int r, e;

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

/* The channel named @name that the file declared, or NULL. */
static int channel_index(const struct config *cfg, const char *name)
{
	for (unsigned i = 0; i < cfg->n_channels; i++)
		if (strcmp(cfg->channels[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* A [channel NAME] header: a new channel, declared once. */
static void channel_declare(struct parse_state *ps, const char *name)
{
	struct config *cfg = ps->cfg;
	int i;

	if (!ps->file_channels) {
		/* The file describes its channels: drop the built-in one. */
		ps->file_channels = true;
		cfg->n_channels = 0;
	}
	i = channel_index(cfg, name);
	if (i >= 0) {
		fail(ps, "[channel %s] is declared twice: first at line %u, again here",
		     name, cfg->lines.channel[i]);
		ps->channel_refused = true;
		return;
	}
	if (!name_valid(name)) {
		fail(ps, "[channel %s]: a channel name is 1-%d letters, digits, '_' or '-'",
		     name, CONFIG_NAME_MAX - 1);
		ps->channel_refused = true;
		return;
	}
	if (cfg->n_channels == CONFIG_MAX_CHANNELS) {
		fail(ps, "[channel %s]: more than %d channels", name,
		     CONFIG_MAX_CHANNELS);
		ps->channel_refused = true;
		return;
	}
	cfg->lines.channel[cfg->n_channels] = ps->line;
	cfg->channels[cfg->n_channels] = default_channel;
	snprintf(cfg->channels[cfg->n_channels].name, CONFIG_NAME_MAX, "%.*s",
		 CONFIG_NAME_MAX - 1, name);
	cfg->n_channels++;
}

_Static_assert(N(daemon_keys) <= CONFIG_MAX_KEYS && N(control_keys) <= CONFIG_MAX_KEYS &&
	       N(device_keys) <= CONFIG_MAX_KEYS && N(sim_keys) <= CONFIG_MAX_KEYS &&
	       N(channel_keys) <= CONFIG_MAX_KEYS,
	       "cfg->lines has room for every key");

static const struct {
	const char *name;
	const struct key *keys;
	size_t n_keys;
	size_t offset;			/* of the section's struct in struct config */
} sections[CONFIG_SECTIONS] = {
	[CONFIG_DAEMON] = { "daemon", daemon_keys, N(daemon_keys), offsetof(struct config, daemon) },
	[CONFIG_CONTROL] = { "control", control_keys, N(control_keys), offsetof(struct config, control) },
	[CONFIG_DEVICE] = { "device", device_keys, N(device_keys), offsetof(struct config, device) },
	[CONFIG_SIM] = { "sim", sim_keys, N(sim_keys), offsetof(struct config, sim) },
	[CONFIG_TRANSFER] = { "transfer", transfer_keys, N(transfer_keys),
			      offsetof(struct config, transfer) },
};

/* The bytes a key's value takes in its section's struct. */
static size_t key_size(const struct key *k)
{
	switch (k->type) {
	case K_SIZE:
		return sizeof(uint64_t);
	case K_STRING:
		return k->len;
	case K_LINK:
		return sizeof(struct link_model);
	case K_ENUM:
	case K_LEVEL:
		return sizeof(int);
	case K_UINT:
	case K_POW2:
	case K_MODE:
		break;
	}
	return sizeof(unsigned);
}

static bool skipped(const char *const *skip, const char *section, const char *key)
{
	size_t n = strlen(section);

	for (; skip && *skip; skip++)
		if (!strncmp(*skip, section, n) && (*skip)[n] == '.' &&
		    !strcmp(*skip + n + 1, key))
			return true;
	return false;
}

/* Name each key of @keys whose value differs between @a and @b. */
static unsigned keys_changed(const struct key *keys, size_t n_keys, const char *section,
			     const void *a, const void *b, const char *const *skip,
			     char *buf, size_t len)
{
	unsigned n = 0;

	for (size_t i = 0; i < n_keys; i++) {
		const struct key *k = &keys[i];
		bool differs = k->type == K_STRING ?
			strcmp((const char *)a + k->offset, (const char *)b + k->offset) :
			memcmp((const char *)a + k->offset, (const char *)b + k->offset,
			       key_size(k));

		if (!differs || skipped(skip, section, k->name))
			continue;
		snprintf(buf + strlen(buf), len - strlen(buf), "%s[%s] %s",
			 buf[0] ? ", " : "", section, k->name);
		n++;
	}
	return n;
}

unsigned config_changes(const struct config *a, const struct config *b,
			const char *const *skip, char *buf, size_t len)
{
	char section[8 + NAME_MAX_CHANNEL];
	unsigned n = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < CONFIG_SECTIONS; i++)
		n += keys_changed(sections[i].keys, sections[i].n_keys, sections[i].name,
				  (const char *)a + sections[i].offset,
				  (const char *)b + sections[i].offset, skip, buf, len);
	for (unsigned i = 0; i < a->n_channels; i++) {
		const struct config_channel *other = config_channel_find(b, a->channels[i].name);

		snprintf(section, sizeof(section), "channel %s", a->channels[i].name);
		if (!other) {
			snprintf(buf + strlen(buf), len - strlen(buf), "%s[%s] removed",
				 buf[0] ? ", " : "", section);
			n++;
			continue;
		}
		n += keys_changed(channel_keys, N(channel_keys), section, &a->channels[i],
				  other, skip, buf, len);
	}
	for (unsigned i = 0; i < b->n_channels; i++)
		if (!config_channel_find(a, b->channels[i].name)) {
			snprintf(buf + strlen(buf), len - strlen(buf), "%s[channel %s] added",
				 buf[0] ? ", " : "", b->channels[i].name);
			n++;
		}
	return n;
}

/* A section fpgad does not know, at its header's line: the nearest known. */
static int unknown_section(struct parse_state *ps, const char *section)
{
	const char *near = NULL;
	unsigned best = SUGGEST_MAX_DISTANCE + 1;
	char word[16];

	for (unsigned i = 0; i < CONFIG_SECTIONS; i++)
		nearer(section, sections[i].name, &near, &best);
	/* "[chanel b]": the first word is a typo of channel. */
	snprintf(word, sizeof(word), "%.*s", (int)strcspn(section, " "), section);
	if (strchr(section, ' ') && edit_distance(word, "channel") <= SUGGEST_MAX_DISTANCE)
		near = "channel NAME";
	if (near)
		return fail(ps, "unknown section [%s]; did you mean [%s]?", section, near);
	return fail(ps, "unknown section [%s] (expected daemon, control, device, sim, transfer or 'channel NAME')",
		    section);
}

static int handler(void *user, const char *section, const char *name,
		   const char *value)
{
	struct parse_state *ps = user;
	struct config *cfg = ps->cfg;

	for (unsigned i = 0; i < CONFIG_SECTIONS; i++)
		if (strcmp(section, sections[i].name) == 0)
			return apply_key(ps, section, sections[i].keys,
					 sections[i].n_keys,
					 (char *)cfg + sections[i].offset,
					 cfg->lines.key[i], &ps->refused[i],
					 name, value);
	if (strncmp(section, "channel ", 8) == 0) {
		int i = channel_index(cfg, section + 8);

		/* The header was refused; that error is the one to report. */
		if (i < 0 || ps->channel_refused)
			return 1;
		return apply_key(ps, section, channel_keys, N(channel_keys),
				 &cfg->channels[i], cfg->lines.channel_key[i],
				 &ps->channel_refused_keys[i], name, value);
	}
	/* Its header said so (section_header()), once. */
	return 1;
}

/*
 * A section's header, seen before its keys (or with none): a channel
 * section declares its channel, a fixed one records its line, any other
 * is refused here, at the header's line.
 */
static void section_header(struct parse_state *ps, const char *name)
{
	ps->channel_refused = false;
	if (strncmp(name, "channel ", 8) == 0) {
		channel_declare(ps, name + 8);
		return;
	}
	for (unsigned i = 0; i < CONFIG_SECTIONS; i++) {
		if (strcmp(name, sections[i].name) == 0) {
			ps->cfg->lines.section[i] = ps->line;
			return;
		}
	}
	if (strcmp(name, "metrics") == 0) {
		fail(ps, "[metrics] moved to fpgad-exporter --metrics URL (and its --metrics-* options): %s",
		     EXPORTER_HOME);
		return;
	}
	unknown_section(ps, name);
}

/*
 * Whether @p (a line, leading blanks skipped) is what inih reads: blank, a
 * comment, a [section] or key = value.  inih reports only the first line
 * that is not; the reader notes each one so that all are reported.
 */
static bool line_is_ini(const char *p)
{
	if (*p == '\0' || *p == '\n' || *p == '\r' || *p == ';' || *p == '#')
		return true;
	if (*p == '[')
		return strchr(p, ']') != NULL;
	return strpbrk(p, "=:") != NULL && *p != '=' && *p != ':';
}

/*
 * An inline comment ends a value: ';' or '#' after a blank, as the
 * example config and the man page allow both ("mtu = 9000  # jumbo").
 * A line that is a comment is left whole.
 */
static void strip_inline_comment(char *buf)
{
	char *p = buf + strspn(buf, " \t");

	if (*p == ';' || *p == '#')
		return;
	for (; *p; p++) {
		if ((*p == ';' || *p == '#') && p > buf && (p[-1] == ' ' || p[-1] == '\t')) {
			p[0] = '\n';
			p[1] = '\0';
			return;
		}
	}
}

static char *reader(char *buf, int size, void *stream)
{
	struct parse_state *ps = stream;
	char *r = fgets(buf, size, ps->file);

	if (r) {
		const char *p = buf + strspn(buf, " \t");
		char name[64];

		ps->line++;
		strip_inline_comment(buf);
		if (!line_is_ini(p))
			report(ps, ps->line, "syntax error (expected [section] or key = value)");
		if (sscanf(p, "[%63[^]]]", name) == 1)
			section_header(ps, name);
	}
	return r;
}

static const struct key *find_key(const struct key *keys, size_t n,
				  const char *name)
{
	for (size_t i = 0; name && i < n; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* The line of @key in channel @i, 0 when the file does not set it. */
static unsigned channel_key_line(const struct config *cfg, unsigned i,
				 const char *key)
{
	const struct key *k = find_key(channel_keys, N(channel_keys), key);

	return k ? cfg->lines.channel_key[i][k - channel_keys] : 0;
}

/* Whether the file's value of @key in channel @i was refused. */
static bool channel_refused(const struct parse_state *ps, unsigned i,
			    const char *key)
{
	const struct key *k = find_key(channel_keys, N(channel_keys), key);

	return k && (ps->channel_refused_keys[i] >> (k - channel_keys) & 1);
}

/* The line of @key in channel @i, else of the channel's section. */
static unsigned channel_line(const struct config *cfg, unsigned i,
			     const char *key)
{
	unsigned line = channel_key_line(cfg, i, key);

	return line ? line : cfg->lines.channel[i];
}

int config_parse_endpoint(const char *s, bool need_port,
			  struct sockaddr_storage *ret_addr)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
	char host[INET6_ADDRSTRLEN];
	const char *end, *port = NULL;
	unsigned p = 0;
	size_t n;

	if (*s == '[') {
		end = strchr(s, ']');
		if (!end)
			return -EINVAL;
		n = (size_t)(end - s - 1);
		s++;
		if (end[1] == ':')
			port = end + 2;
		else if (end[1])
			return -EINVAL;
	} else {
		end = strchr(s, ':');
		n = end ? (size_t)(end - s) : strlen(s);
		if (end)
			port = end + 1;
	}
	if (n == 0 || n >= sizeof(host) || (need_port && !port) ||
	    (port && parse_uint(port, 0, 65535, &p) < 0))
		return -EINVAL;
	memcpy(host, s, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)p);
	} else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
	} else {
		return -EINVAL;
	}
	*ret_addr = ss;
	return 0;
}

unsigned config_endpoint_port(const struct sockaddr_storage *a)
{
	return ntohs(a->ss_family == AF_INET ? ((const struct sockaddr_in *)a)->sin_port :
					       ((const struct sockaddr_in6 *)a)->sin6_port);
}

bool config_endpoint_same(const struct sockaddr_storage *a,
			  const struct sockaddr_storage *b)
{
	return a->ss_family == b->ss_family &&
	       !memcmp(a, b, a->ss_family == AF_INET ? sizeof(struct sockaddr_in) :
						       sizeof(struct sockaddr_in6));
}

/* An ADDRESS, with no port or RoCE v2's (4791): true when @s is one. */
static bool roce_address(const char *s)
{
	struct sockaddr_storage a;
	unsigned port;

	if (config_parse_endpoint(s, false, &a) < 0)
		return false;
	port = config_endpoint_port(&a);
	return !port || port == CONFIG_ROCE_PORT;
}

/*
 * source = roce: the NIC numbers fpgad's QP and makes its R_Keys, the
 * sender's QP number is needed, the path MTU is one of InfiniBand's.
 */
static void check_roce_channel(struct parse_state *ps, unsigned i)
{
	struct config *cfg = ps->cfg;
	struct config_channel *ch = &cfg->channels[i];
	unsigned line;

	line = channel_key_line(cfg, i, "qpn");
	if (line)
		report(ps, line, "[channel %s] qpn: fpgad's QP number is the NIC's with source = roce (fpgactl stats shows it); remove qpn",
		       ch->name);
	line = channel_key_line(cfg, i, "rkey");
	if (line)
		report(ps, line, "[channel %s] rkey: the NIC makes a new R_Key for each ring with source = roce; remove rkey",
		       ch->name);
	if (!channel_key_line(cfg, i, "mtu"))
		ch->mtu = 4096;
	else if (!channel_refused(ps, i, "mtu") && ch->mtu != 256 && ch->mtu != 512 && ch->mtu != 1024 &&
		 ch->mtu != 2048 && ch->mtu != 4096)
		report(ps, channel_key_line(cfg, i, "mtu"),
		       "[channel %s] mtu: %u is not a RoCE path MTU (256, 512, 1024, 2048 or 4096)",
		       ch->name, ch->mtu);
	if (!roce_address(ch->listen))
		report(ps, channel_line(cfg, i, "listen"),
		       "[channel %s] listen: '%s' is not a local ADDRESS (numeric IPv4 or IPv6; RoCE v2 takes UDP port 4791, no other)",
		       ch->name, ch->listen);
	if (!roce_address(ch->sender))
		report(ps, channel_line(cfg, i, "sender"),
		       "[channel %s] sender: '%s' is not the sender's ADDRESS (numeric IPv4 or IPv6): the QP takes packets from it only",
		       ch->name, ch->sender);
	if (!ch->sender_qpn)
		report(ps, channel_line(cfg, i, "sender_qpn"),
		       "[channel %s] sender_qpn: the sender's QP number is needed with source = roce (1 to 0xffffff)",
		       ch->name);
}

/*
 * udp channels whose listen is the same ADDRESS:PORT (not port 0) share
 * one socket, told apart by the destination QPN of each packet: channel
 * @i's qpn must be another than those of the channels before it on its
 * port, and its gro the same (one socket).
 */
static void check_shared_port(struct parse_state *ps, unsigned i)
{
	const struct config *cfg = ps->cfg;
	const struct config_channel *ch = &cfg->channels[i];
	struct sockaddr_storage a, b;

	if (channel_refused(ps, i, "listen") || channel_refused(ps, i, "qpn") ||
	    config_parse_endpoint(ch->listen, true, &a) < 0 || !config_endpoint_port(&a))
		return;
	for (unsigned j = 0; j < i; j++) {
		const struct config_channel *o = &cfg->channels[j];

		if (o->source != SOURCE_UDP || channel_refused(ps, j, "source") ||
		    channel_refused(ps, j, "listen") || channel_refused(ps, j, "qpn") ||
		    config_parse_endpoint(o->listen, true, &b) < 0 ||
		    !config_endpoint_same(&a, &b))
			continue;
		if (o->qpn == ch->qpn) {
			report(ps, channel_line(cfg, i, "qpn"),
			       "[channel %s] qpn 0x%x: channel %s listens on %s with the same qpn; channels sharing a port are told apart by the destination QPN: give each its own qpn",
			       ch->name, ch->qpn, o->name, ch->listen);
			return;
		}
		if (o->gro != ch->gro) {
			report(ps, channel_line(cfg, i, "gro"),
			       "[channel %s] gro: channel %s listens on %s with gro = %s: channels sharing a port share one socket; set the same gro",
			       ch->name, o->name, ch->listen, o->gro ? "yes" : "no");
			return;
		}
	}
}

/* The rules of a network channel's keys, each at the line of its key. */
static void check_net_channel(struct parse_state *ps, unsigned i)
{
	static const char *const net_keys[] = { "listen", "sender", "mtu", "qpn", "rkey",
						"sender_control", "icrc", "gro",
						"rdma_device", "sender_qpn" };
	/* net_keys[6..7] are udp's alone, net_keys[8..] roce's. */
	enum { UDP_KEYS = 6, ROCE_KEYS = 8 };
	const struct config *cfg = ps->cfg;
	const struct config_channel *ch = &cfg->channels[i];
	struct sockaddr_storage a;
	unsigned line;

	/* A source refused says nothing of which keys belong. */
	if (channel_refused(ps, i, "source"))
		return;
	if (ch->source == SOURCE_CARD) {
		for (size_t k = 0; k < N(net_keys); k++) {
			line = channel_key_line(cfg, i, net_keys[k]);
			if (line)
				report(ps, line, "[channel %s] %s is for a network source (source = udp or roce)",
				       ch->name, net_keys[k]);
		}
		return;
	}
	if (ch->direction != DIR_C2H)
		report(ps, channel_line(cfg, i, "source"),
		       "[channel %s] a network source sends to the host: direction must be c2h",
		       ch->name);
	if (ch->sender_control[0] && strcmp(ch->sender_control, "none") &&
	    config_parse_endpoint(ch->sender_control, true, &a) < 0)
		report(ps, channel_line(cfg, i, "sender_control"),
		       "[channel %s] sender_control: '%s' is not ADDRESS:PORT (numeric) or none: fpgad tells the sender its target there",
		       ch->name, ch->sender_control);
	if (ch->source == SOURCE_ROCE) {
		for (size_t k = UDP_KEYS; k < ROCE_KEYS; k++) {
			line = channel_key_line(cfg, i, net_keys[k]);
			if (line)
				report(ps, line, "[channel %s] %s is for source = udp",
				       ch->name, net_keys[k]);
		}
		check_roce_channel(ps, i);
		return;
	}
	for (size_t k = ROCE_KEYS; k < N(net_keys); k++) {
		line = channel_key_line(cfg, i, net_keys[k]);
		if (line)
			report(ps, line, "[channel %s] %s is for source = roce",
			       ch->name, net_keys[k]);
	}
	if (config_parse_endpoint(ch->listen, true, &a) < 0)
		report(ps, channel_line(cfg, i, "listen"),
		       "[channel %s] listen: '%s' is not ADDRESS:PORT (a numeric IPv4 address or [IPv6 address]; port 0 = any free port)",
		       ch->name, ch->listen);
	if (config_parse_endpoint(ch->sender, false, &a) < 0)
		report(ps, channel_line(cfg, i, "sender"),
		       "[channel %s] sender: '%s' is not the sender's ADDRESS or ADDRESS:PORT (numeric): a network channel takes packets from its sender only",
		       ch->name, ch->sender);
	check_shared_port(ps, i);
}

#define GPU_FORMS "a GPU index (0, 1, ...), a PCI bus id (0000:41:00.0) or nearest"

/*
 * A GPU as memory_cuda_probe() and placement_gpu() take it: an index, a
 * PCI bus id ([DOMAIN:]BUS:DEVICE.FUNCTION, hex), or nearest.
 */
static bool gpu_valid(const char *s)
{
	unsigned colons = 0, dots = 0;
	size_t n = strlen(s);

	if (strcmp(s, "nearest") == 0)
		return true;
	if (n > 0 && n < 6 && strspn(s, "0123456789") == n)
		return true;
	if (n < 7 || strspn(s, "0123456789abcdefABCDEF:.") != n)
		return false;
	for (const char *p = s; *p; p++) {
		colons += *p == ':';
		dots += *p == '.';
	}
	return (colons == 1 || colons == 2) && dots == 1 &&
	       strrchr(s, '.') > strrchr(s, ':') && isxdigit((unsigned char)s[n - 1]);
}

/* [sim] numa_node: a node number, or none. */
static bool numa_node_valid(const char *s)
{
	size_t n = strlen(s);

	return strcmp(s, "none") == 0 ||
	       (n > 0 && n < 5 && strspn(s, "0123456789") == n);
}

/* The cross-key rules of channel @i, each at the line of its key. */
static void check_channel(struct parse_state *ps, unsigned i)
{
	struct config *cfg = ps->cfg;
	const struct config_channel *ch = &cfg->channels[i];
	unsigned line;

	/* frame_size is measured against a valid slot_size only. */
	if (channel_refused(ps, i, "slot_size") || channel_refused(ps, i, "frame_size"))
		;	/* refused at its own line */
	else if (ch->slot_size == 0 || ch->slot_size % MEMORY_SLOT_ALIGN)
		report(ps, channel_line(cfg, i, "slot_size"),
		       "[channel %s] slot_size %llu is not a positive multiple of %u",
		       ch->name, (unsigned long long)ch->slot_size, MEMORY_SLOT_ALIGN);
	else if (ch->slot_size > MAX_SLOT_SIZE)
		report(ps, channel_line(cfg, i, "slot_size"),
		       "[channel %s] slot_size above %llu", ch->name, MAX_SLOT_SIZE);
	else if (ch->frame_size < 64 || ch->frame_size > ch->slot_size) {
		line = channel_key_line(cfg, i, "frame_size");
		report(ps, line ? line : channel_line(cfg, i, "slot_size"),
		       "[channel %s] frame_size %llu must be from 64 bytes to slot_size (%llu)",
		       ch->name, (unsigned long long)ch->frame_size,
		       (unsigned long long)ch->slot_size);
	}
	if (ch->memory == MEMORY_HOST && (ch->mode == MODE_GPUDIRECT ||
					  ch->mode == MODE_BOUNCE))
		report(ps, channel_line(cfg, i, "mode"),
		       "[channel %s] mode %s needs GPU memory, but memory = host",
		       ch->name, mode_names[ch->mode]);
	if (ch->memory == MEMORY_CUDA && ch->mode == MODE_HOST)
		report(ps, channel_line(cfg, i, "mode"),
		       "[channel %s] mode host needs host memory, but memory = cuda",
		       ch->name);
	/*
	 * The card has at most every slot of the ring at once: the file's
	 * queue_depth above slots is refused, the default is cut to slots.
	 */
	line = channel_key_line(cfg, i, "queue_depth");
	if (!line && ch->queue_depth > ch->slots)
		cfg->channels[i].queue_depth = ch->slots;
	else if (line && !channel_refused(ps, i, "queue_depth") &&
		 !channel_refused(ps, i, "slots") && ch->queue_depth > ch->slots)
		report(ps, line,
		       "[channel %s] queue_depth %u is above slots (%u): at most every slot of the ring is on the card at once; set queue_depth to %u or less, or raise slots",
		       ch->name, ch->queue_depth, ch->slots, ch->slots);
	/* choose_mode(): bounce copies card to host to GPU, c2h only. */
	if (ch->direction == DIR_H2C && ch->mode == MODE_BOUNCE &&
	    !channel_refused(ps, i, "direction") && !channel_refused(ps, i, "mode"))
		report(ps, channel_line(cfg, i, "mode"),
		       "[channel %s] mode bounce serves c2h only: an h2c channel in GPU memory needs mode = gpudirect (or auto), or memory = host",
		       ch->name);
	if (ch->gpu[0] && !channel_refused(ps, i, "gpu") && !gpu_valid(ch->gpu))
		report(ps, channel_line(cfg, i, "gpu"),
		       "[channel %s] gpu: '%s' is not " GPU_FORMS "; or leave it empty for [device] gpu",
		       ch->name, ch->gpu);
	check_net_channel(ps, i);
	for (unsigned j = 0; j < i; j++) {
		/* A network channel takes no engine of the card. */
		if (ch->source != SOURCE_CARD ||
		    cfg->channels[j].source != SOURCE_CARD)
			continue;
		/* A refused engine, direction or source is not this one's. */
		if (channel_refused(ps, i, "engine") || channel_refused(ps, j, "engine") ||
		    channel_refused(ps, i, "direction") || channel_refused(ps, j, "direction") ||
		    channel_refused(ps, i, "source") || channel_refused(ps, j, "source"))
			continue;
		if (cfg->channels[j].direction == ch->direction &&
		    cfg->channels[j].engine == ch->engine) {
			report(ps, channel_line(cfg, i, "engine"),
			       "[channel %s] engine %u already used by channel %s",
			       ch->name, ch->engine, cfg->channels[j].name);
			break;
		}
	}
}

/* The line of @key in fixed section @sec, 0 when not in the file. */
static unsigned key_line(const struct config *cfg, enum config_section sec,
			 const char *key)
{
	const struct key *k = find_key(sections[sec].keys, sections[sec].n_keys, key);

	return k ? cfg->lines.key[sec][k - sections[sec].keys] : 0;
}

/* The bit of @key in ps->refused[@sec]. */
static uint32_t key_bit(enum config_section sec, const char *key)
{
	const struct key *k = find_key(sections[sec].keys, sections[sec].n_keys, key);

	return k ? 1u << (k - sections[sec].keys) : 0;
}

/* The rules across sections, each at the line of the key it is about. */
static void check_config(struct parse_state *ps)
{
	const struct config *cfg = ps->cfg;

	for (unsigned i = 0; i < cfg->n_channels; i++)
		check_channel(ps, i);
	if (!(ps->refused[CONFIG_DEVICE] & key_bit(CONFIG_DEVICE, "gpu")) &&
	    !gpu_valid(cfg->device.gpu))
		report(ps, key_line(cfg, CONFIG_DEVICE, "gpu"),
		       "[device] gpu: '%s' is not " GPU_FORMS " (nvidia-smi -L lists the GPUs)",
		       cfg->device.gpu);
	if (!(ps->refused[CONFIG_SIM] & key_bit(CONFIG_SIM, "numa_node")) &&
	    !numa_node_valid(cfg->sim.numa_node))
		report(ps, key_line(cfg, CONFIG_SIM, "numa_node"),
		       "[sim] numa_node: '%s' is not a node number or none (ls /sys/devices/system/node lists this host's)",
		       cfg->sim.numa_node);
	if (cfg->daemon.runtime_dir[0] != '/')
		report(ps, key_line(cfg, CONFIG_DAEMON, "runtime_dir"),
		       "runtime_dir must be an absolute path");
}

/*
 * Open @path for reading if it is a regular file: never a directory, a
 * FIFO (which would block the start) or a device.
 */
static FILE *open_regular(const char *path, char *err, size_t errlen, int *ret_err)
{
	struct stat st;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		*ret_err = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0) {
		*ret_err = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode)) {
		*ret_err = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		snprintf(err, errlen, "%s: is %s, not a configuration file",
			 path, S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		*ret_err = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

void config_error_append(char *err, size_t len, const char *fmt, ...)
{
	size_t used = strnlen(err, len);
	va_list ap;
	int n;

	if (used + 1 >= len)
		return;
	if (used)
		err[used++] = '\n';
	va_start(ap, fmt);
	n = vsnprintf(err + used, len - used, fmt, ap);
	va_end(ap);
	/* A line that does not fit is left out whole, not cut. */
	if (n < 0 || (size_t)n >= len - used)
		err[used ? used - 1 : 0] = '\0';
}

static int error_order(const void *a, const void *b)
{
	const struct config_error *x = a, *y = b;
	/* Line 0 (the whole file) last; else by line, then as found. */
	unsigned lx = x->line ? x->line : ~0u, ly = y->line ? y->line : ~0u;

	if (lx != ly)
		return lx < ly ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Every error found, in file order, one "FILE:LINE: what" a line. */
static void write_errors(struct parse_state *ps, const char *path, char *err,
			 size_t errlen)
{
	unsigned kept = ps->n_errs < CONFIG_MAX_ERRORS ? ps->n_errs : CONFIG_MAX_ERRORS;

	/* qsort is not stable: the address breaks ties in the order found. */
	qsort(ps->errs, kept, sizeof(ps->errs[0]), error_order);
	err[0] = '\0';
	for (unsigned i = 0; i < kept; i++) {
		if (ps->errs[i].line)
			config_error_append(err, errlen, "%s:%u: %s", path,
					    ps->errs[i].line, ps->errs[i].msg);
		else
			config_error_append(err, errlen, "%s: %s", path,
					    ps->errs[i].msg);
	}
	if (ps->n_errs > kept)
		config_error_append(err, errlen, "%s: %u more errors not shown",
				    path, ps->n_errs - kept);
}

int config_load(const char *path, struct config *ret_cfg, char *err,
		size_t errlen)
{
	struct parse_state *ps;
	struct config *cfg;
	int r;

	cfg = malloc(sizeof(*cfg));
	ps = calloc(1, sizeof(*ps));
	if (!cfg || !ps) {
		r = -ENOMEM;
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	config_defaults(cfg);
	ps->cfg = cfg;
	ps->file = open_regular(path, err, errlen, &r);
	if (!ps->file)
		goto out;
	r = ini_parse_stream(reader, ps, handler, ps);
	fclose(ps->file);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read", path);
		r = -EIO;
		goto out;
	}
	/* inih's first refused line, should reader() not have seen it. */
	if (r > 0 && !ps->n_errs)
		report(ps, (unsigned)r, "syntax error (expected [section] or key = value)");
	check_config(ps);
	if (ps->n_errs) {
		write_errors(ps, path, err, errlen);
		r = -EINVAL;
		goto out;
	}
	snprintf(cfg->path, sizeof(cfg->path), "%s", path);
	*ret_cfg = *cfg;
	r = 0;
out:
	free(ps);
	free(cfg);
	return r;
}

const struct config_channel *config_channel_find(const struct config *cfg,
						 const char *name)
{
	int i = channel_index(cfg, name);

	return i < 0 ? NULL : &cfg->channels[i];
}

unsigned config_key_line(const struct config *cfg, enum config_section section,
			 unsigned channel, const char *key)
{
	if (section == CONFIG_CHANNEL)
		return channel < cfg->n_channels ? channel_key_line(cfg, channel, key) : 0;
	return section < CONFIG_SECTIONS ? key_line(cfg, section, key) : 0;
}

const char *config_where(const struct config *cfg, enum config_section section,
			 unsigned channel, const char *key, char *buf, size_t len)
{
	unsigned line;

	if (!cfg->path[0]) {
		snprintf(buf, len, "built-in defaults");
		return buf;
	}
	if (section == CONFIG_CHANNEL)
		line = channel < cfg->n_channels ? channel_line(cfg, channel, key) : 0;
	else if (section < CONFIG_SECTIONS)
		line = key_line(cfg, section, key) ? key_line(cfg, section, key) :
						     cfg->lines.section[section];
	else
		line = 0;
	if (line)
		snprintf(buf, len, "%s:%u", cfg->path, line);
	else
		snprintf(buf, len, "%s", cfg->path);
	return buf;
}
