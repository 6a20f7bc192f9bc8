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
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpgactl.h"

struct fpgactl_cmd {
	const char *name;
	const char *args;	/* positional arguments, for usage */
	const char *help;
	fpgactl_run_fn run;
	/* With several --url: the command that asks each (status only). */
	int (*run_hosts)(const struct fpgactl_opts *o);
};

/* Positional arguments a command takes, as its usage shows them. */
#define ARGS_NONE ""
#define ARGS_CHANNEL "CHANNEL"
#define ARGS_CHANNELS "[CHANNEL...]"

static const struct fpgactl_cmd cmds[] = {
	{ .name = "status", .args = ARGS_NONE, .run = fpgactl_status,
	  .run_hosts = fpgactl_status_hosts,
	  .help = "daemon, device and channel state (several --url: one row per host)" },
	{ .name = "channels", .args = ARGS_NONE, .run = fpgactl_channels,
	  .help = "one line per channel: direction, memory, mode, state, leases, sizes" },
	{ .name = "watch", .args = ARGS_CHANNELS, .run = fpgactl_watch,
	  .help = "frames/s, GB/s, drops, errors, latency, every second (--interval)" },
	{ .name = "clients", .args = ARGS_NONE, .run = fpgactl_clients,
	  .help = "connected processes and their leases" },
	{ .name = "version", .args = ARGS_NONE, .run = fpgactl_version,
	  .help = "fpgactl's version and build, and fpgad's" },
	{ .name = "stats", .args = ARGS_CHANNEL, .run = fpgactl_stats,
	  .help = "one channel's counters" },
	{ .name = "reset", .args = ARGS_CHANNEL, .run = fpgactl_reset,
	  .help = "clear a channel that failed" },
	{ .name = "capture", .args = ARGS_CHANNEL, .run = fpgactl_capture,
	  .help = "take -n frames, report rate, drops, latency" },
	{ .name = "send", .args = ARGS_CHANNEL, .run = fpgactl_send,
	  .help = "hand -n frames to the card (h2c)" },
	{ .name = "topo", .args = ARGS_NONE, .run = fpgactl_topo,
	  .help = "card x GPU topology, peer-to-peer verdict, auto's choice" },
	{ .name = "probe", .args = ARGS_CHANNEL, .run = fpgactl_probe,
	  .help = "measure an idle auto channel again and run it in the faster mode" },
	{ .name = "bench", .args = ARGS_CHANNELS, .run = fpgactl_bench,
	  .help = "card memory read/write 4 KiB-8 MiB, c2h and h2c streaming: GB/s, p50/p99" },
	{ .name = "validate", .args = ARGS_NONE, .run = fpgactl_validate,
	  .help = "check fpgad, the card, its link and every idle channel: PASS/FAIL/SKIP" },
	{ .name = "read", .args = "ADDR LEN FILE", .run = fpgactl_read,
	  .help = "card memory to FILE ('-': stdout)" },
	{ .name = "write", .args = "ADDR FILE", .run = fpgactl_write,
	  .help = "FILE ('-': stdin) to card memory" },
	{ .name = "help", .args = "[COMMAND]", .run = NULL,
	  .help = "this help, or COMMAND's" },
};

/* How many positional arguments @cmd takes: the words of its args. */
static unsigned cmd_nargs(const struct fpgactl_cmd *cmd)
{
	unsigned n = 0;

	for (const char *p = cmd->args; *p; p++)
		n += (p == cmd->args || p[-1] == ' ') && *p != ' ';
	return n;
}

/*
 * The options, as usage shows them: @cmds the commands that take one
 * (space-separated), NULL every command; the general ones (--version)
 * none of them.
 */
static const struct {
	const char *flag;
	const char *help;
	const char *cmds;
} opt_help[] = {
	{ "--url URL", "fpgad's control socket (default $FPGAD_URL, else\n"
	  FPGAD_DEFAULT_URL "); status takes several", NULL },
	{ "--card NAME", "the fpgad of card NAME (fpgad@NAME.service; default\n"
	  "$FPGAD_CARD when $FPGAD_URL is unset)", NULL },
	{ "--all", "every card's fpgad on this host (status, topo, and\n"
	  "the other commands without arguments)",
	  "status channels clients version topo validate" },
	{ "--json", "print JSON (read commands)", NULL },
	{ "-n, --count N", "frames to take or send (capture, send), intervals\n"
	  "to show (watch; default: until interrupted),\n"
	  "transfers per size and frames (bench; default 64),\n"
	  "frames per channel (validate; default 16)", "capture send watch bench validate" },
	{ "--interval MS", "sample every MS (watch; default 1000)", "watch" },
	{ "--verify", "check every frame's content (capture)", "capture" },
	{ "--newest", "skip to the newest ready frame (capture)", "capture" },
	{ "--poll-us US", "busy-poll US microseconds before sleeping (capture)", "capture" },
	{ "--shared", "a shared-read lease (capture)", "capture" },
	{ "--reconnect", "ride through a restart of fpgad (capture)", "capture" },
	{ "--timeout MS", "give up waiting for a frame after MS (capture,\n"
	  "send, bench), for a transfer (read, write, bench),\n"
	  "for a host's answer (status with several --url),\n"
	  "for a slow fpgad (watch)", "status watch capture send bench validate read write" },
	{ "-h, --help", "print this help (after a command: its own) and exit", NULL },
	{ "--version", "print fpgactl's version and build and exit", "" },
};

/* Does option @i of opt_help apply to @cmd (NULL: fpgactl as a whole)? */
static bool opt_applies(size_t i, const char *cmd)
{
	const char *p = opt_help[i].cmds;
	size_t n = cmd ? strlen(cmd) : 0;

	if (!p || !cmd)
		return true;
	for (; (p = strstr(p, cmd)); p += n)
		if ((p == opt_help[i].cmds || p[-1] == ' ') && (!p[n] || p[n] == ' '))
			return true;
	return false;
}

/* The options that apply to @cmd (NULL: all), each help line indented. */
static void print_options(FILE *f, const char *cmd)
{
	for (size_t i = 0; i < sizeof(opt_help) / sizeof(opt_help[0]); i++) {
		const char *h = opt_help[i].help;

		if (!opt_applies(i, cmd))
			continue;
		fprintf(f, "  %-14s ", opt_help[i].flag);
		while (*h) {
			int len = (int)strcspn(h, "\n");

			fprintf(f, "%.*s\n", len, h);
			h += len;
			if (*h == '\n' && *++h)
				fprintf(f, "%17s", "");
		}
	}
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: fpgactl [OPTION]... COMMAND [ARG]...\n\n");
	print_options(f, NULL);
	fprintf(f, "\nADDR and LEN take K, M and G suffixes (binary) and 0x hexadecimal.\n"
		   "'fpgactl COMMAND --help' (or 'fpgactl help COMMAND'): what it takes.\n"
		   "\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char head[40];

		snprintf(head, sizeof(head), "%s %s", cmds[i].name, cmds[i].args);
		fprintf(f, "  %-24s %s\n", head, cmds[i].help);
	}
}

/* One command's usage: its arguments, what it does, its options. */
static void cmd_usage(const struct fpgactl_cmd *cmd)
{
	printf("Usage: fpgactl [OPTION]... %s%s%s\n%s\n\n", cmd->name,
	       cmd->args[0] ? " " : "", cmd->args, cmd->help);
	print_options(stdout, cmd->name);
	if (strstr(cmd->args, "ADDR"))
		printf("\nADDR and LEN take K, M and G suffixes (binary) and 0x hexadecimal.\n");
	printf("\nman fpgactl: every command and option in full.\n");
}

static const struct fpgactl_cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(name, cmds[i].name) == 0)
			return &cmds[i];
	return NULL;
}

/*
 * fpgactl help [COMMAND], or --help with the command words @pos (@n_pos):
 * the usage of it, or of fpgactl; 0, or 2 for an unknown command.
 */
static int help(const char *const *pos, unsigned n_pos)
{
	const struct fpgactl_cmd *cmd = NULL;
	const char *name = NULL;

	if (n_pos && !strcmp(pos[0], "help"))
		name = n_pos > 1 ? pos[1] : NULL;
	else if (n_pos)
		name = pos[0];
	if (name && !(cmd = find_cmd(name))) {
		fprintf(stderr, "fpgactl: unknown command '%s' (try 'fpgactl --help')\n", name);
		return 2;
	}
	if (cmd && strcmp(cmd->name, "help"))
		cmd_usage(cmd);
	else
		usage(stdout);
	return 0;
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

/*
 * One line for the option @arg getopt did not take (@ch: ':' it needs an
 * argument, '?' unknown or given one it does not take); the exit code 2.
 */
static int bad_option(const struct option *opts, int ch, const char *arg)
{
	char name[64];
	size_t n;

	if (arg[0] != '-' || arg[1] != '-')
		snprintf(name, sizeof(name), "-%c", optopt);
	else
		snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	n = strlen(name);
	if (ch == ':') {
		fprintf(stderr, "fpgactl: option '%s' needs an argument", name);
	} else {
		const char *what = "unknown option '%s'";

		for (const struct option *p = opts; p->name && arg[n] == '='; p++)
			if (!strcmp(p->name, name + 2))
				what = "option '%s' takes no argument";
		fprintf(stderr, "fpgactl: ");
		fprintf(stderr, what, name);
	}
	fprintf(stderr, " (try 'fpgactl --help')\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "url", required_argument, NULL, 'u' },
		{ "card", required_argument, NULL, 'C' },
		{ "all", no_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'j' },
		{ "count", required_argument, NULL, 'n' },
		{ "verify", no_argument, NULL, 'V' },
		{ "newest", no_argument, NULL, 'N' },
		{ "poll-us", required_argument, NULL, 'P' },
		{ "shared", no_argument, NULL, 'S' },
		{ "reconnect", no_argument, NULL, 'R' },
		{ "timeout", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },
		{ 0 },
	};
	struct fpgactl_opts o = { .count = 1000, .timeout_ms = 5000, .interval_ms = 1000 };
	const struct fpgactl_cmd *cmd = NULL;
	const char *pos[1 + FPGACTL_MAX_CHANNELS], *urls[FPGACTL_MAX_URLS];
	unsigned n_pos = 0, n_urls = 0;
	fpgad_client *c = NULL;
	const char *card = NULL;
	bool all = false, want_help = false;
	char why[256], card_url[PATH_MAX + 8];
	uint64_t v;
	int ch, r;

	/* Options may stand before or after the command and its arguments. */
	opterr = 0;
	while (optind < argc) {
		ch = getopt_long(argc, argv, "+:n:h", opts, NULL);
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
		case 'C': card = optarg; break;
		case 'A': all = true; break;
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
		case 'I':
			if (parse_number(optarg, 3600000, &v) < 0 || v < 10) {
				fprintf(stderr, "fpgactl: --interval: '%s' is not a number of ms from 10 to 3600000\n", optarg);
				return 2;
			}
			o.interval_ms = (unsigned)v;
			break;
		case 'h': want_help = true; break;
		case 'v': fpgactl_version(NULL, &o); return 0;
		default: return bad_option(opts, ch, argv[optind - 1]);
		}
	}
	if (want_help || (n_pos && !strcmp(pos[0], "help"))) {
		if (n_pos > 2 || (n_pos == 2 && strcmp(pos[0], "help"))) {
			fprintf(stderr, "fpgactl: unexpected argument '%s' (try 'fpgactl help COMMAND')\n",
				pos[n_pos - 1]);
			return 2;
		}
		return help(pos, n_pos);
	}
	if (!n_pos) {
		usage(stderr);
		return 2;
	}
	cmd = find_cmd(pos[0]);
	if (!cmd) {
		fprintf(stderr, "fpgactl: unknown command '%s' (try 'fpgactl --help')\n", pos[0]);
		return 2;
	}
	if (!arity_ok(cmd, pos, n_pos))
		return 2;
	o.channel = n_pos > 1 ? pos[1] : NULL;
	o.args = o.channels = pos + 1;
	o.n_args = o.n_channels = n_pos - 1;
	o.urls = urls;
	o.n_urls = n_urls;
	if ((card != NULL) + (n_urls > 0) + all > 1) {
		fprintf(stderr, "fpgactl: --url, --card and --all each name where fpgad is: give one\n");
		return 2;
	}
	if (all) {
		if (cmd->args[0]) {
			fprintf(stderr, "fpgactl: %s takes one card; --all is for commands without arguments\n",
				cmd->name);
			return 2;
		}
		return fpgactl_all(cmd->run, cmd->run_hosts, &o);
	}
	if (n_urls > 1) {
		if (!cmd->run_hosts) {
			fprintf(stderr, "fpgactl: %s takes one --url; several are for status\n",
				cmd->name);
			return 2;
		}
		return cmd->run_hosts(&o);
	}
	/* $FPGAD_CARD, as fpgad_connect(NULL) takes it: failures name the card. */
	if (!card && !n_urls && !(getenv("FPGAD_URL") && getenv("FPGAD_URL")[0]) &&
	    getenv("FPGAD_CARD") && getenv("FPGAD_CARD")[0])
		card = getenv("FPGAD_CARD");
	if (card) {
		o.url = fpgad_card_url(card, card_url, sizeof(card_url)) < 0 ? card : card_url;
		r = fpgad_connect_card(card, &c);
	} else {
		o.url = n_urls ? urls[0] : fpgad_default_url();
		r = fpgad_connect(n_urls ? urls[0] : NULL, &c);
	}
	/* version says what fpgactl is even when fpgad is not there. */
	if (r < 0 && cmd->run == fpgactl_version)
		fpgactl_version(NULL, &o);
	if (r < 0 && card) {
		fprintf(stderr, "fpgactl: %s\n", fpgactl_connect_error("", r, why, sizeof(why)));
		return 1;
	}
	if (r < 0) {
		fprintf(stderr, "fpgactl: cannot reach fpgad at %s: %s\n", o.url,
			fpgactl_connect_error(o.url, r, why, sizeof(why)));
		return 1;
	}
	r = cmd->run(c, &o);
	fpgad_disconnect(c);
	return r;
}
