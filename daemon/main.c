// SPDX-License-Identifier: MIT
/*
 * main.c - fpgad: the privileged service that owns an FPGA DMA card and
 * streams its frames to unprivileged processes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "daemon.h"
#include "memory/fault_guard.h"
#include "preflight.h"
#include "log.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fpgad [OPTION]...\n"
		"Own an FPGA DMA card and stream its frames to client processes.\n"
		"\n"
		"  -c, --config FILE      read FILE (INI; see fpgad.conf); default: built-in\n"
		"                         defaults, one C2H channel c2h0 on the simulated card\n"
		"      --runtime-dir DIR  put the control and handoff sockets under DIR\n"
		"                         (default /run/fpgad)\n"
		"  -t, --check-config[=FILE]  check FILE (else -c's, else the built-in\n"
		"                         defaults) and this host without starting: report\n"
		"                         every error as FILE:LINE, exit 0 if none, else 1\n"
		"  -v, --verbose          log debug messages\n"
		"      --version          print the version and exit\n"
		"  -h, --help             print this help and exit\n");
}

/*
 * --check-config: every error of @path (NULL: the built-in defaults) and
 * of the host, one a line on stderr; the exit status.
 */
static int check_config(const char *path)
{
	const char *name = path ? path : "built-in defaults";
	struct config *cfg = calloc(1, sizeof(*cfg));
	char *err = calloc(1, CONFIG_ERR_LEN);
	unsigned n = 0;
	int code = 1;

	if (!cfg || !err) {
		fprintf(stderr, "fpgad: out of memory\n");
		goto out;
	}
	config_defaults(cfg);
	/* Its verdict and warnings; not what opening the card logs. */
	log_level = LOG_WARNING;
	if (path && config_load(path, cfg, err, CONFIG_ERR_LEN) < 0) {
		/* The host is checked against a file that parses. */
		fprintf(stderr, "%s\n", err);
		for (const char *p = err; p; p = strchr(p + 1, '\n'))
			n++;
	} else {
		n = preflight_check(cfg, err, CONFIG_ERR_LEN);
		if (n)
			fprintf(stderr, "%s\n", err);
	}
	if (n) {
		fprintf(stderr, "fpgad: %s: %u error%s\n", name, n, n == 1 ? "" : "s");
		goto out;
	}
	printf("fpgad: %s: configuration OK\n", name);
	code = 0;
out:
	free(err);
	free(cfg);
	return code;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "runtime-dir", required_argument, NULL, 'r' },
		{ "check-config", optional_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *config_path = NULL, *runtime_dir = NULL;
	struct daemon *d;
	struct config *cfg;
	char err[CONFIG_ERR_LEN];
	bool verbose = false, check = false;
	int c, r, code;

	while ((c = getopt_long(argc, argv, "c:t::vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config_path = optarg; break;
		case 't':
			check = true;
			if (optarg)
				config_path = optarg;
			break;
		case 'r': runtime_dir = optarg; break;
		case 'v': verbose = true; break;
		case 'V': printf("fpgad %s\n", FPGAD_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	/* fpgad --check-config FILE, as well as --check-config=FILE. */
	if (check && optind + 1 == argc)
		config_path = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "fpgad: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}

	if (check)
		return check_config(config_path);

	cfg = calloc(1, sizeof(*cfg));
	d = calloc(1, sizeof(*d));
	if (!cfg || !d) {
		fprintf(stderr, "fpgad: out of memory\n");
		free(cfg);
		free(d);
		return 1;
	}
	config_defaults(cfg);
	if (config_path) {
		r = config_load(config_path, cfg, err, sizeof(err));
		if (r < 0) {
			log_lines(LOG_ERR, "", err);
			code = 1;
			goto out;
		}
	}
	if (runtime_dir) {
		if (runtime_dir[0] != '/' ||
		    strlen(runtime_dir) >= sizeof(cfg->daemon.runtime_dir) - 16) {
			log_err("--runtime-dir: '%s' is not an absolute path of reasonable length",
				runtime_dir);
			code = 2;
			goto out;
		}
		snprintf(cfg->daemon.runtime_dir, sizeof(cfg->daemon.runtime_dir),
			 "%s", runtime_dir);
	}
	if (verbose)
		cfg->daemon.log_level = LOG_DEBUG;

	/* Whatever stopped the start was logged where it was found. */
	r = fault_guard_init();
	if (r == 0)
		r = daemon_start(d, cfg);
	if (r < 0) {
		code = 1;
		goto out;
	}
	code = daemon_run(d);
	daemon_stop(d);
	log_info("fpgad stopped");
out:
	free(cfg);
	free(d);
	return code;
}
