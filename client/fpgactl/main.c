// SPDX-License-Identifier: MIT
/*
 * fpgactl - command-line client of fpgad.
 *
 * Every read command takes --json and then prints one JSON object with
 * stable field names.  Failures print one line on stderr and exit 1
 * (usage errors exit 2).
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fpgactl.h"

void fpgactl_print_json(json_t *o)
{
	char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);

	if (s) {
		puts(s);
		free(s);
	}
	json_decref(o);
}

int fpgactl_fail(fpgad_client *c, const char *what, int r)
{
	const char *msg = c ? fpgad_errmsg(c) : "";

	fprintf(stderr, "fpgactl: %s: %s\n", what, msg[0] ? msg : strerror(-r));
	return 1;
}

const char *fpgactl_connect_error(const char *url, int r, char *buf, size_t len)
{
	/* libfpgad's own words for this thread's last failed connect. */
	const char *why = fpgad_errmsg(NULL);
	size_t n = strlen(url);

	if (!strncmp(why, url, n) && !strncmp(why + n, ": ", 2))
		why += n + 2;
	if (why[0])
		snprintf(buf, len, "%s", why);
	else if (r == -EINVAL && !strncmp(url, "tls+", 4) && !getenv("FPGAD_TLS_CA"))
		snprintf(buf, len, "set FPGAD_TLS_CA to the CA file that signed fpgad's certificate");
	else if (r == -EUSERS)
		snprintf(buf, len, "fpgad is at its connection limit (%s)", strerror(-r));
	else
		snprintf(buf, len, "%s", strerror(-r));
	return buf;
}

static int cmd_version(fpgad_client *c, const struct fpgactl_opts *o)
{
	if (o->json) {
		fpgactl_print_json(json_pack("{s:s, s:s, s:i}", "client", fpgad_version(),
				     "server", fpgad_server_software(c),
				     "protocol", FPGAD_PROTOCOL_VERSION));
		return 0;
	}
	printf("fpgactl %s\n%s\n", fpgad_version(), fpgad_server_software(c));
	return 0;
}

/* One channel of Status as JSON (status, channels). */
static json_t *channel_json(const struct fpgad_channel_summary *ch)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "name", ch->name, "direction", ch->direction,
			 "state", ch->state, "memory", ch->memory,
			 "mode", ch->mode, "slots", (json_int_t)ch->slots,
			 "slot_size", (json_int_t)ch->slot_size,
			 "frame_size", (json_int_t)ch->frame_size,
			 "frames", (json_int_t)ch->frames,
			 "drops", (json_int_t)ch->drops,
			 "lessees", (json_int_t)ch->lessees);
}

/* Every channel of Status, as a JSON array. */
static json_t *channels_json(const struct fpgad_status *s)
{
	json_t *chans = json_array();

	for (uint32_t i = 0; i < s->n_channels; i++)
		json_array_append_new(chans, channel_json(&s->channels[i]));
	return chans;
}

/* An id or count as JSON: null where fpgad could not read it (0). */
static json_t *known_int(uint64_t v)
{
	return v ? json_integer((json_int_t)v) : json_null();
}

static json_t *known_str(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

/* The card of Status as JSON: identity, link, NUMA node, driver. */
static json_t *card_json(const struct fpgad_card *c)
{
	json_t *j = json_object();

	json_object_set_new(j, "pci_address", known_str(c->pci_address));
	json_object_set_new(j, "vendor_id", known_int(c->vendor_id));
	json_object_set_new(j, "device_id", known_int(c->device_id));
	json_object_set_new(j, "subsystem_vendor_id", known_int(c->subsystem_vendor_id));
	json_object_set_new(j, "subsystem_device_id", known_int(c->subsystem_device_id));
	json_object_set_new(j, "link_gen", known_int(c->link_gen));
	json_object_set_new(j, "link_width", known_int(c->link_width));
	json_object_set_new(j, "max_link_gen", known_int(c->max_link_gen));
	json_object_set_new(j, "max_link_width", known_int(c->max_link_width));
	json_object_set_new(j, "numa_node", c->numa_node >= 0 ?
			    json_integer(c->numa_node) : json_null());
	json_object_set_new(j, "driver", known_str(c->driver));
	json_object_set_new(j, "module_version", known_str(c->module_version));
	json_object_set_new(j, "simulates", known_str(c->simulates));
	return j;
}

/* "PCIe Gen3 x8", or "unknown". */
const char *fpgactl_link_name(unsigned gen, unsigned width, char *buf, size_t len)
{
	if (gen && width)
		snprintf(buf, len, "PCIe Gen%u x%u", gen, width);
	else
		snprintf(buf, len, "unknown");
	return buf;
}

/* The card lines of status: what it is, its link, where it sits. */
static void print_card(const struct fpgad_card *c)
{
	char now[32], max[32];

	if (c->simulates[0]) {
		printf("card:     simulated: %s\n", c->simulates);
		return;
	}
	printf("card:     %s %04x:%04x (subsystem %04x:%04x), NUMA node %d, driver %s%s%s\n",
	       c->pci_address[0] ? c->pci_address : "?", c->vendor_id, c->device_id,
	       c->subsystem_vendor_id, c->subsystem_device_id, c->numa_node,
	       c->driver[0] ? c->driver : "none", c->module_version[0] ? " " : "",
	       c->module_version);
	fpgactl_link_name(c->link_gen, c->link_width, now, sizeof(now));
	fpgactl_link_name(c->max_link_gen, c->max_link_width, max, sizeof(max));
	printf("link:     %s (capable of %s)%s\n", now, max,
	       c->link_gen < c->max_link_gen || c->link_width < c->max_link_width ?
	       ": below what card and slot can do" : "");
}

json_t *fpgactl_status_json(const struct fpgad_status *s)
{
	json_t *j = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:I, s:o, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "version", s->version,
			 "pid", (json_int_t)s->pid,
			 "uptime_ms", (json_int_t)s->uptime_ms,
			 "backend", s->backend, "mode", s->mode,
			 "mode_reason", s->mode_reason,
			 "gpu_sharing", s->gpu_sharing,
			 "gpu_sharing_note", s->gpu_sharing_note,
			 "clients", (json_int_t)s->clients,
			 "channels", channels_json(s),
			 "card_memory", (json_int_t)s->card_memory,
			 "transfer_engines", s->transfer_engines,
			 "transfer_queues", (json_int_t)s->transfer_queues,
			 "transfer_buffers", (json_int_t)s->transfer_buffers,
			 "transfer_registered", (json_int_t)s->transfer_registered,
			 "transfers", (json_int_t)s->transfers,
			 "transfer_bytes", (json_int_t)s->transfer_bytes,
			 "transfer_errors", (json_int_t)s->transfer_errors,
			 "transfer_refused", (json_int_t)s->transfer_refused);

	if (j)
		json_object_set_new(j, "card", card_json(&s->card));
	return j;
}

static int cmd_status(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_status *s;
	int r = fpgad_status_get(c, &s);

	if (r < 0)
		return fpgactl_fail(c, "status", r);
	if (o->json) {
		fpgactl_print_json(fpgactl_status_json(s));
		fpgad_status_free(s);
		return 0;
	}
	printf("fpgad %s (pid %u), up %.1f s\n", s->version, s->pid,
	       s->uptime_ms / 1000.0);
	printf("backend:  %s\n", s->backend);
	print_card(&s->card);
	printf("mode:     %s%s%s%s\n", s->mode, s->mode_reason[0] ? " (" : "",
	       s->mode_reason, s->mode_reason[0] ? ")" : "");
	if (s->gpu_sharing[0])
		printf("gpu:      %s%s%s%s\n", s->gpu_sharing,
		       s->gpu_sharing_note[0] ? " (" : "", s->gpu_sharing_note,
		       s->gpu_sharing_note[0] ? ")" : "");
	printf("clients:  %u\n", s->clients);
	printf("card memory: %llu MiB; transfer engines: %s\n",
	       (unsigned long long)(s->card_memory >> 20), s->transfer_engines);
	printf("transfers: %llu (%llu bytes, %llu failed, %llu refused); "
	       "%u buffers registered (%llu bytes) on %u connections\n\n",
	       (unsigned long long)s->transfers,
	       (unsigned long long)s->transfer_bytes,
	       (unsigned long long)s->transfer_errors,
	       (unsigned long long)s->transfer_refused, s->transfer_buffers,
	       (unsigned long long)s->transfer_registered, s->transfer_queues);
	printf("%-12s %-4s %-10s %-6s %-9s %5s %10s %12s %8s %7s\n", "CHANNEL",
	       "DIR", "STATE", "MEMORY", "MODE", "SLOTS", "FRAME", "FRAMES",
	       "DROPS", "LEASES");
	for (uint32_t i = 0; i < s->n_channels; i++) {
		const struct fpgad_channel_summary *ch = &s->channels[i];

		printf("%-12s %-4s %-10s %-6s %-9s %5u %10llu %12llu %8llu %7u\n",
		       ch->name, ch->direction, ch->state, ch->memory, ch->mode,
		       ch->slots, (unsigned long long)ch->frame_size,
		       (unsigned long long)ch->frames,
		       (unsigned long long)ch->drops, ch->lessees);
	}
	fpgad_status_free(s);
	return 0;
}

static int cmd_channels(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_status *s;
	int r = fpgad_status_get(c, &s);

	if (r < 0)
		return fpgactl_fail(c, "channels", r);
	if (o->json) {
		fpgactl_print_json(json_pack("{s:o}", "channels", channels_json(s)));
		fpgad_status_free(s);
		return 0;
	}
	printf("%-12s %-4s %-6s %-9s %-10s %6s %10s %5s %10s\n", "CHANNEL", "DIR",
	       "MEMORY", "MODE", "STATE", "LEASES", "FRAME", "SLOTS", "SLOT_SIZE");
	for (uint32_t i = 0; i < s->n_channels; i++) {
		const struct fpgad_channel_summary *ch = &s->channels[i];

		printf("%-12s %-4s %-6s %-9s %-10s %6u %10llu %5u %10llu\n", ch->name,
		       ch->direction, ch->memory, ch->mode, ch->state, ch->lessees,
		       (unsigned long long)ch->frame_size, ch->slots,
		       (unsigned long long)ch->slot_size);
	}
	fpgad_status_free(s);
	return 0;
}

static int cmd_clients(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_client_list *l;
	int r = fpgad_clients_get(c, &l);

	if (r < 0)
		return fpgactl_fail(c, "clients", r);
	if (o->json) {
		json_t *arr = json_array();

		for (uint32_t i = 0; i < l->n_clients; i++) {
			const struct fpgad_client_info *ci = &l->clients[i];
			json_t *leases = json_array();

			for (uint32_t k = 0; k < ci->n_leases; k++)
				json_array_append_new(leases, json_string(ci->leases[k]));
			json_array_append_new(arr, json_pack(
				"{s:I, s:I, s:I, s:I, s:b, s:o, s:I, s:I}",
				"pid", (json_int_t)ci->pid, "uid", (json_int_t)ci->uid,
				"gid", (json_int_t)ci->gid,
				"connected_ms", (json_int_t)ci->connected_ms,
				"remote", ci->remote, "leases", leases,
				"buffers", (json_int_t)ci->buffers,
				"registered", (json_int_t)ci->registered));
		}
		fpgactl_print_json(json_pack("{s:o}", "clients", arr));
		fpgad_clients_free(l);
		return 0;
	}
	printf("%-8s %-6s %-6s %-20s %-16s %s\n", "PID", "UID", "GID",
	       "CONNECTED", "BUFFERS", "LEASES");
	for (uint32_t i = 0; i < l->n_clients; i++) {
		const struct fpgad_client_info *ci = &l->clients[i];
		time_t t = (time_t)(ci->connected_ms / 1000);
		char when[32], leases[256] = "-", bufs[32];
		struct tm tm;

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
			 localtime_r(&t, &tm));
		for (uint32_t k = 0; k < ci->n_leases; k++)
			snprintf(leases + (k ? strlen(leases) : 0),
				 sizeof(leases) - (k ? strlen(leases) : 0),
				 "%s%s", k ? "," : "", ci->leases[k]);
		snprintf(bufs, sizeof(bufs), "%u (%llu MiB)", ci->buffers,
			 (unsigned long long)(ci->registered >> 20));
		printf("%-8u %-6u %-6u %-20s %-16s %s%s\n", ci->pid, ci->uid,
		       ci->gid, when, bufs, leases,
		       ci->remote ? " (remote)" : "");
	}
	fpgad_clients_free(l);
	return 0;
}

static int cmd_stats(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_channel_stats st;
	int r = fpgad_channel_stats(c, o->channel, &st);

	if (r < 0)
		return fpgactl_fail(c, o->channel, r);
	if (o->json) {
		fpgactl_print_json(json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I}",
				     "channel", o->channel, "state", st.state,
				     "mode", st.mode,
				     "frames", (json_int_t)st.frames,
				     "bytes", (json_int_t)st.bytes,
				     "drops", (json_int_t)st.drops,
				     "stalls", (json_int_t)st.stalls,
				     "errors", (json_int_t)st.errors,
				     "recoveries", (json_int_t)st.recoveries,
				     "copies", (json_int_t)st.copies,
				     "dma_ns_total", (json_int_t)st.dma_ns_total,
				     "card_good", (json_int_t)st.card_good,
				     "card_bad", (json_int_t)st.card_bad,
				     "integrity_errors", (json_int_t)st.integrity_errors,
				     "queued_avg", st.queued_avg,
				     "latency_ns_total", (json_int_t)st.latency_ns_total,
				     "latency_frames", (json_int_t)st.latency_frames));
		return 0;
	}
	printf("channel %s: %s, %s\n", o->channel, st.state, st.mode);
	printf("frames      %llu (%llu bytes)\n", (unsigned long long)st.frames,
	       (unsigned long long)st.bytes);
	printf("drops       %llu\nstalls      %llu\n", (unsigned long long)st.drops,
	       (unsigned long long)st.stalls);
	printf("errors      %llu, %llu recoveries\n", (unsigned long long)st.errors,
	       (unsigned long long)st.recoveries);
	printf("integrity   %llu frames failed their CRC (flagged)\n",
	       (unsigned long long)st.integrity_errors);
	printf("copies      %llu (bounce)\n", (unsigned long long)st.copies);
	printf("dma time    %.3f s in total\n", (double)st.dma_ns_total / 1e9);
	printf("card queue  %.2f transfers on average at each completion\n",
	       st.queued_avg);
	if (st.latency_frames)
		printf("latency     %.1f us on average from DMA end to publication\n",
		       (double)st.latency_ns_total / (double)st.latency_frames / 1e3);
	if (st.card_good || st.card_bad)
		printf("card sink   %llu verified, %llu rejected\n",
		       (unsigned long long)st.card_good,
		       (unsigned long long)st.card_bad);
	return 0;
}

static int cmd_reset(fpgad_client *c, const struct fpgactl_opts *o)
{
	int r = fpgad_channel_reset(c, o->channel);

	if (r < 0)
		return fpgactl_fail(c, o->channel, r);
	if (o->json)
		fpgactl_print_json(json_pack("{s:s, s:b}", "channel", o->channel,
					     "reset", 1));
	else
		printf("channel %s: reset\n", o->channel);
	return 0;
}

/* Positional arguments a command takes, as its usage shows them. */
#define ARGS_NONE ""
#define ARGS_CHANNEL "CHANNEL"
#define ARGS_CHANNELS "[CHANNEL...]"

static const struct fpgactl_cmd cmds[] = {
	{ "status", ARGS_NONE, "daemon, device and channel state (several --url: one row per host)",
	  cmd_status },
	{ "channels", ARGS_NONE, "one line per channel: direction, memory, mode, state, leases, sizes",
	  cmd_channels },
	{ "watch", ARGS_CHANNELS, "frames/s, GB/s, drops, errors, latency, every second",
	  fpgactl_watch },
	{ "clients", ARGS_NONE, "connected processes and their leases", cmd_clients },
	{ "version", ARGS_NONE, "client and daemon versions", cmd_version },
	{ "stats", ARGS_CHANNEL, "one channel's counters", cmd_stats },
	{ "reset", ARGS_CHANNEL, "clear a channel that failed", cmd_reset },
	{ "capture", ARGS_CHANNEL, "take -n frames, report rate, drops, latency",
	  fpgactl_capture },
	{ "send", ARGS_CHANNEL, "hand -n frames to the card (h2c)", fpgactl_send },
	{ "topo", ARGS_NONE, "card x GPU topology, peer-to-peer verdict, auto's choice",
	  fpgactl_topo },
	{ "probe", ARGS_CHANNEL, "measure an idle auto channel again and run it in the faster mode",
	  fpgactl_probe },
	{ "read", "ADDR LEN FILE", "card memory to FILE ('-': stdout)",
	  fpgactl_read },
	{ "write", "ADDR FILE", "FILE ('-': stdin) to card memory",
	  fpgactl_write },
};

/* How many positional arguments @cmd takes: the words of its args. */
static unsigned cmd_nargs(const struct fpgactl_cmd *cmd)
{
	unsigned n = 0;

	for (const char *p = cmd->args; *p; p++)
		n += (p == cmd->args || p[-1] == ' ') && *p != ' ';
	return n;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: fpgactl [OPTION]... COMMAND [ARG]...\n\n"
		   "  --url URL      fpgad's control socket (default $FPGAD_URL, else\n"
		   "                 %s); status takes several\n"
		   "  --json         print JSON (read commands)\n"
		   "  -n, --count N  frames to take or send (capture, send), intervals\n"
		   "                 to show (watch; default: until interrupted)\n"
		   "  --verify       check every frame's content (capture)\n"
		   "  --newest       skip to the newest ready frame (capture)\n"
		   "  --poll-us US   busy-poll US microseconds before sleeping (capture)\n"
		   "  --shared       a shared-read lease (capture)\n"
		   "  --reconnect    ride through a restart of fpgad (capture)\n"
		   "  --timeout MS   give up waiting for a frame after MS (capture,\n"
		   "                 send), for a transfer (read, write), for a host's\n"
		   "                 answer (status with several --url)\n"
		   "\nADDR and LEN take K, M and G suffixes (binary) and 0x hexadecimal.\n"
		   "\nCommands:\n", FPGAD_DEFAULT_URL);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char head[40];

		snprintf(head, sizeof(head), "%s %s", cmds[i].name, cmds[i].args);
		fprintf(f, "  %-24s %s\n", head, cmds[i].help);
	}
}

static int parse_number(const char *s, uint64_t max, uint64_t *ret)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || end == s || *s == '-' || v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Are @n_pos positional arguments (the command's included) right for @cmd? */
static bool arity_ok(const struct fpgactl_cmd *cmd, const char *const *pos,
		     unsigned n_pos)
{
	if (!strcmp(cmd->args, ARGS_CHANNELS))
		return true;
	if (n_pos - 1 == cmd_nargs(cmd))
		return true;
	if (n_pos - 1 < cmd_nargs(cmd))
		fprintf(stderr, "fpgactl: %s needs %s\n", cmd->name, cmd->args);
	else if (!cmd_nargs(cmd))
		fprintf(stderr, "fpgactl: %s takes no argument ('%s')\n", cmd->name, pos[1]);
	else
		fprintf(stderr, "fpgactl: unexpected argument '%s'\n", pos[1 + cmd_nargs(cmd)]);
	return false;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "json", no_argument, NULL, 'j' },
		{ "count", required_argument, NULL, 'n' },
		{ "verify", no_argument, NULL, 'V' },
		{ "newest", no_argument, NULL, 'N' },
		{ "poll-us", required_argument, NULL, 'P' },
		{ "shared", no_argument, NULL, 'S' },
		{ "reconnect", no_argument, NULL, 'R' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct fpgactl_opts o = { .count = 1000, .timeout_ms = 5000 };
	const struct fpgactl_cmd *cmd = NULL;
	const char *pos[1 + FPGACTL_MAX_CHANNELS], *urls[FPGACTL_MAX_URLS];
	unsigned n_pos = 0, n_urls = 0;
	fpgad_client *c = NULL;
	char why[256];
	uint64_t v;
	int ch, r;

	/* Options may stand before or after the command and its arguments. */
	while (optind < argc) {
		ch = getopt_long(argc, argv, "+n:h", opts, NULL);
		if (ch == -1) {
			if (n_pos == 1 + FPGACTL_MAX_CHANNELS) {
				fprintf(stderr, "fpgactl: unexpected argument '%s' (at most %d channels)\n",
					argv[optind], FPGACTL_MAX_CHANNELS);
				return 2;
			}
			pos[n_pos++] = argv[optind++];
			continue;
		}
		switch (ch) {
		case 'u':
			if (n_urls == FPGACTL_MAX_URLS) {
				fprintf(stderr, "fpgactl: at most %d --url\n", FPGACTL_MAX_URLS);
				return 2;
			}
			urls[n_urls++] = optarg;
			break;
		case 'j': o.json = true; break;
		case 'V': o.verify = true; break;
		case 'N': o.newest = true; break;
		case 'P':
			if (parse_number(optarg, 1000000, &v) < 0) {
				fprintf(stderr, "fpgactl: --poll-us: '%s' is not a number of microseconds up to 1000000\n", optarg);
				return 2;
			}
			o.poll_us = (unsigned)v;
			break;
		case 'S': o.shared = true; break;
		case 'R': o.reconnect = true; break;
		case 'n':
			if (parse_number(optarg, UINT64_MAX, &o.count) < 0 || !o.count) {
				fprintf(stderr, "fpgactl: -n: '%s' is not a positive number\n", optarg);
				return 2;
			}
			o.count_given = true;
			break;
		case 't':
			if (parse_number(optarg, 3600000, &v) < 0) {
				fprintf(stderr, "fpgactl: --timeout: '%s' is not a number of ms\n", optarg);
				return 2;
			}
			o.timeout_ms = (int)v;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!n_pos) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(pos[0], cmds[i].name) == 0)
			cmd = &cmds[i];
	if (!cmd) {
		fprintf(stderr, "fpgactl: unknown command '%s' (try --help)\n", pos[0]);
		return 2;
	}
	if (!arity_ok(cmd, pos, n_pos))
		return 2;
	o.channel = n_pos > 1 ? pos[1] : NULL;
	o.args = o.channels = pos + 1;
	o.n_args = o.n_channels = n_pos - 1;
	o.urls = urls;
	o.n_urls = n_urls;
	if (n_urls > 1) {
		if (cmd->run != cmd_status) {
			fprintf(stderr, "fpgactl: %s takes one --url; several are for status\n",
				cmd->name);
			return 2;
		}
		return fpgactl_status_hosts(&o);
	}
	o.url = n_urls ? urls[0] : fpgad_default_url();
	r = fpgad_connect(o.url, &c);
	if (r < 0) {
		fprintf(stderr, "fpgactl: cannot reach fpgad at %s: %s\n", o.url,
			fpgactl_connect_error(o.url, r, why, sizeof(why)));
		return 1;
	}
	r = cmd->run(c, &o);
	fpgad_disconnect(c);
	return r;
}
