// SPDX-License-Identifier: MIT
/*
 * main.c - fpgad-exporter: fpgad's read-only face on the network.  An
 * unprivileged client of fpgad's local socket that serves the remote
 * Status listener (what `fpgactl --url tcp://HOST:PORT` reads) and the
 * Prometheus metrics, so the process that holds the card parses no
 * network peer's request.  It runs before, beside and after fpgad: while
 * fpgad is down, scrapes get fpgad_up 0 and remote requests a reply that
 * says so.
 *
 * One libuv loop thread runs the metrics listener, the signals, the
 * accept guard's sweep and the watchdog; the remote listener's workers
 * and libuv's thread pool make the round trips to fpgad (upstream.c).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "fpgad.h"
#include "http.h"
#include "log.h"
#include "notify.h"
#include "remote.h"
#include "size.h"
#include "upstream.h"

/* How often slow and idle remote connections are looked for. */
#define SWEEP_MS 250

struct options {
	const char *fpgad_url;
	int timeout_ms;
	struct remote_options remote;
	struct http_options metrics;
	bool check;
};

struct exporter {
	uv_loop_t loop;
	uv_signal_t sig_term, sig_int;
	uv_timer_t sweep, watchdog;
	struct upstream *up;
	struct remote *remote;
	struct http *http;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fpgad-exporter [OPTION]...\n"
		"Serve fpgad's status and metrics to the network, read-only.\n"
		"\n"
		"  -u, --fpgad URL            fpgad's local socket (default %s)\n"
		"      --timeout-ms MS        a round trip to fpgad, at most (default 2000)\n"
		"  -r, --remote URL           the Status listener: tcp://ADDRESS:PORT, or\n"
		"                             tls+tcp://ADDRESS:PORT with --tls-cert-key\n"
		"      --tls-cert-key FILE    PEM file with the certificate and its key\n"
		"      --remote-max-clients N      connections at once (default 16)\n"
		"      --remote-max-per-address N  ... from one address, 0 any (default 4)\n"
		"      --remote-idle-timeout-ms MS nothing answered so long: closed,\n"
		"                                  0 never (default 60000)\n"
		"      --max-message SIZE     a request's size, at most (default 64K)\n"
		"  -m, --metrics URL          the Prometheus listener:\n"
		"                             http://ADDRESS:PORT/PATH\n"
		"      --metrics-max-clients N      connections at once (default 8)\n"
		"      --metrics-max-per-address N  ... from one address, 0 any (default 2)\n"
		"      --metrics-idle-timeout-ms MS no request so long: closed, 0 never\n"
		"                                   (default 20000)\n"
		"      --request-timeout-ms MS  a request not whole and answered within\n"
		"                             MS of its start is dropped (default 2000)\n"
		"  -t, --check                check the options, start nothing: exit 0 if\n"
		"                             they are good, else 1 with every error\n"
		"  -v, --verbose              log debug messages\n"
		"      --version              print the version and exit\n"
		"  -h, --help                 print this help and exit\n"
		"\n"
		"Options may also come from the environment, one per word, in\n"
		"FPGAD_EXPORTER_OPTS (the unit reads /etc/default/fpgad-exporter).\n",
		fpgad_default_url());
}

enum {
	OPT_TIMEOUT = 256, OPT_TLS, OPT_RMAX, OPT_RPER, OPT_RIDLE, OPT_MAXMSG,
	OPT_MMAX, OPT_MPER, OPT_MIDLE, OPT_REQ, OPT_VERSION,
};

/* @arg as a whole number from @lo to @hi for option @name, else an error. */
static bool number(const char *name, const char *arg, unsigned lo,
		   unsigned hi, unsigned *ret, unsigned *errors)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "fpgad-exporter: --%s: '%s' is not a whole number from %u to %u\n",
			name, arg, lo, hi);
		(*errors)++;
		return false;
	}
	*ret = (unsigned)v;
	return true;
}

/* The rules across options; each error on a line of stderr. */
static unsigned check(const struct options *o)
{
	unsigned errors = 0;
	char err[512];

	if (strncmp(o->fpgad_url, "ipc://", 6) != 0) {
		fprintf(stderr, "fpgad-exporter: --fpgad '%s': fpgad's local socket is ipc://PATH\n",
			o->fpgad_url);
		errors++;
	}
	if (o->remote.url) {
		if (strncmp(o->remote.url, "tcp://", 6) != 0 &&
		    strncmp(o->remote.url, "tls+tcp://", 10) != 0) {
			fprintf(stderr, "fpgad-exporter: --remote '%s' is not tcp://ADDRESS:PORT or tls+tcp://ADDRESS:PORT\n",
				o->remote.url);
			errors++;
		} else {
			const char *colon = strrchr(o->remote.url, ':');
			const char *p = colon ? colon + 1 : "";

			if (colon < o->remote.url + 6 || !*p || strspn(p, "0123456789") != strlen(p)) {
				fprintf(stderr, "fpgad-exporter: --remote '%s' has no port (ADDRESS:PORT; port 0 picks a free one)\n",
					o->remote.url);
				errors++;
			}
		}
		if (strncmp(o->remote.url, "tls+tcp://", 10) == 0 && !o->remote.tls_cert_key) {
			fprintf(stderr, "fpgad-exporter: --remote %s needs --tls-cert-key (a PEM file with the certificate and its key)\n",
				o->remote.url);
			errors++;
		}
	}
	if (o->metrics.url && http_check_url(o->metrics.url, err, sizeof(err)) < 0) {
		fprintf(stderr, "fpgad-exporter: %s\n", err);
		errors++;
	}
	if (!o->remote.url && !o->metrics.url) {
		fprintf(stderr, "fpgad-exporter: nothing to serve: give --remote URL, --metrics URL or both\n");
		errors++;
	}
	return errors;
}

/* Options from FPGAD_EXPORTER_OPTS, then the command line's. */
static int parse(int argc, char **argv, struct options *o)
{
	static const struct option opts[] = {
		{ "fpgad", required_argument, NULL, 'u' },
		{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
		{ "remote", required_argument, NULL, 'r' },
		{ "tls-cert-key", required_argument, NULL, OPT_TLS },
		{ "remote-max-clients", required_argument, NULL, OPT_RMAX },
		{ "remote-max-per-address", required_argument, NULL, OPT_RPER },
		{ "remote-idle-timeout-ms", required_argument, NULL, OPT_RIDLE },
		{ "max-message", required_argument, NULL, OPT_MAXMSG },
		{ "metrics", required_argument, NULL, 'm' },
		{ "metrics-max-clients", required_argument, NULL, OPT_MMAX },
		{ "metrics-max-per-address", required_argument, NULL, OPT_MPER },
		{ "metrics-idle-timeout-ms", required_argument, NULL, OPT_MIDLE },
		{ "request-timeout-ms", required_argument, NULL, OPT_REQ },
		{ "check", no_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	unsigned errors = 0, v;
	uint64_t size;
	int c;

	while ((c = getopt_long(argc, argv, "u:r:m:tvh", opts, NULL)) != -1) {
		switch (c) {
		case 'u': o->fpgad_url = optarg; break;
		case OPT_TIMEOUT:
			if (number("timeout-ms", optarg, 1, 600000, &v, &errors))
				o->timeout_ms = (int)v;
			break;
		case 'r': o->remote.url = optarg[0] ? optarg : NULL; break;
		case OPT_TLS: o->remote.tls_cert_key = optarg; break;
		case OPT_RMAX:
			number("remote-max-clients", optarg, 1, ACCEPT_GUARD_MAX,
			       &o->remote.limits.max, &errors);
			break;
		case OPT_RPER:
			number("remote-max-per-address", optarg, 0, ACCEPT_GUARD_MAX,
			       &o->remote.limits.per_address, &errors);
			break;
		case OPT_RIDLE:
			number("remote-idle-timeout-ms", optarg, 0, 86400000,
			       &o->remote.limits.idle_ms, &errors);
			break;
		case OPT_MAXMSG:
			if (size_parse(optarg, &size) < 0 || size < 1024 || size > (64u << 20)) {
				fprintf(stderr, "fpgad-exporter: --max-message: '%s' is not a size from 1K to 64M\n",
					optarg);
				errors++;
			} else {
				o->remote.max_message = size;
			}
			break;
		case 'm': o->metrics.url = optarg[0] ? optarg : NULL; break;
		case OPT_MMAX:
			number("metrics-max-clients", optarg, 1, 1024,
			       &o->metrics.max_clients, &errors);
			break;
		case OPT_MPER:
			number("metrics-max-per-address", optarg, 0, 1024,
			       &o->metrics.max_per_address, &errors);
			break;
		case OPT_MIDLE:
			number("metrics-idle-timeout-ms", optarg, 0, 86400000,
			       &o->metrics.idle_ms, &errors);
			break;
		case OPT_REQ:
			if (number("request-timeout-ms", optarg, 1, 600000, &v, &errors))
				o->metrics.request_ms = o->remote.limits.request_ms = v;
			break;
		case 't': o->check = true; break;
		case 'v': log_level = LOG_DEBUG; break;
		case OPT_VERSION:
			printf("fpgad-exporter %s\n", FPGAD_VERSION);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "fpgad-exporter: unexpected argument '%s'\n", argv[optind]);
		errors++;
	}
	errors += check(o);
	return errors ? -EINVAL : 0;
}

/*
 * argv with FPGAD_EXPORTER_OPTS's words after argv[0], before the
 * command line's (which win); NULL without memory.
 */
static char **with_env(int argc, char **argv, int *ret_argc, char **ret_copy)
{
	const char *env = getenv("FPGAD_EXPORTER_OPTS");
	char *copy, *save = NULL, **out;
	int n = 0;

	copy = strdup(env ? env : "");
	out = calloc((size_t)argc + strlen(copy) / 2 + 2, sizeof(*out));
	if (!copy || !out) {
		free(copy);
		free(out);
		return NULL;
	}
	out[n++] = argv[0];
	for (char *w = strtok_r(copy, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
		out[n++] = w;
	for (int i = 1; i < argc; i++)
		out[n++] = argv[i];
	*ret_argc = n;
	*ret_copy = copy;
	return out;
}

static void on_signal(uv_signal_t *sig, int signum)
{
	struct exporter *e = sig->data;

	log_info("received %s, stopping", signum == SIGTERM ? "SIGTERM" : "SIGINT");
	notify_stopping();
	uv_stop(&e->loop);
}

static void on_sweep(uv_timer_t *t)
{
	(void)t;
	accept_guard_sweep();
}

static void on_watchdog(uv_timer_t *t)
{
	(void)t;
	notify_watchdog();
}

static void close_walk(uv_handle_t *h, void *arg)
{
	(void)arg;
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

static int run(const struct options *o)
{
	struct exporter e = { 0 };
	uint64_t wd;
	int r;

	signal(SIGPIPE, SIG_IGN);
	r = uv_loop_init(&e.loop);
	if (r < 0) {
		log_err("libuv: %s", uv_strerror(r));
		return 1;
	}
	r = upstream_new(o->fpgad_url, o->timeout_ms, &e.up);
	if (r < 0)
		goto out;
	if (o->remote.url) {
		r = remote_start(&o->remote, e.up, &e.remote);
		if (r < 0)
			goto out;
		log_info("remote status on %s", remote_url(e.remote));
	}
	if (o->metrics.url) {
		r = http_start(&e.loop, &o->metrics, e.up, &e.http);
		if (r < 0)
			goto out;
		log_info("metrics on %s", http_url(e.http));
	}
	uv_signal_init(&e.loop, &e.sig_term);
	uv_signal_init(&e.loop, &e.sig_int);
	e.sig_term.data = e.sig_int.data = &e;
	uv_signal_start(&e.sig_term, on_signal, SIGTERM);
	uv_signal_start(&e.sig_int, on_signal, SIGINT);
	uv_timer_init(&e.loop, &e.sweep);
	uv_timer_start(&e.sweep, on_sweep, SWEEP_MS, SWEEP_MS);
	uv_timer_init(&e.loop, &e.watchdog);
	wd = notify_watchdog_usec() / 2000;
	if (wd)
		uv_timer_start(&e.watchdog, on_watchdog, wd, wd);
	log_info("fpgad-exporter %s serving fpgad at %s", FPGAD_VERSION, o->fpgad_url);
	notify_ready();
	notify_status("serving fpgad at %s", o->fpgad_url);
	uv_run(&e.loop, UV_RUN_DEFAULT);
	r = 0;
out:
	remote_stop(e.remote);
	http_stop(e.http);
	uv_walk(&e.loop, close_walk, NULL);
	uv_run(&e.loop, UV_RUN_DEFAULT);
	uv_loop_close(&e.loop);
	upstream_free(e.up);
	return r < 0 ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct options o = {
		.fpgad_url = fpgad_default_url(),
		.timeout_ms = 2000,
		.remote = {
			.max_message = 64 * 1024,
			.limits = { .max = 16, .per_address = 4, .idle_ms = 60000,
				    .request_ms = 2000 },
		},
		.metrics = { .max_clients = 8, .max_per_address = 2,
			     .idle_ms = 20000, .request_ms = 2000 },
	};
	char **args, *copy;
	int n, code;

	args = with_env(argc, argv, &n, &copy);
	if (!args) {
		fprintf(stderr, "fpgad-exporter: out of memory\n");
		return 1;
	}
	if (parse(n, args, &o) < 0) {
		fprintf(stderr, "fpgad-exporter: see --help\n");
		code = 1;
	} else if (o.check) {
		printf("fpgad-exporter: options OK\n");
		code = 0;
	} else {
		code = run(&o);
	}
	free(args);
	free(copy);
	return code;
}
