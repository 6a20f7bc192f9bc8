/* SPDX-License-Identifier: MIT */
/* fpgactl.h - what fpgactl's commands share. */
#ifndef FPGACTL_H
#define FPGACTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpgad.h"

/* The most --url options and channel arguments fpgactl takes. */
#define FPGACTL_MAX_URLS 64
#define FPGACTL_MAX_CHANNELS 32

struct fpgactl_opts {
	const char *url;
	const char *const *urls;	/* every --url, in order (status) */
	const char *const *labels;	/* a row's name for each, or NULL: the URL */
	unsigned n_urls;
	bool json;
	bool verify;
	bool newest;
	bool shared;
	bool reconnect;		/* ride through fpgad restarts (capture) */
	unsigned poll_us;
	uint64_t count;
	bool count_given;	/* -n was on the command line */
	int timeout_ms;
	const char *channel;	/* first positional argument, if any */
	const char *const *args; /* the positional arguments after the command */
	unsigned n_args;
	const char *const *channels;	/* every positional argument (watch) */
	unsigned n_channels;
};

struct fpgactl_cmd {
	const char *name;
	const char *args;	/* positional arguments, for usage */
	const char *help;
	int (*run)(fpgad_client *c, const struct fpgactl_opts *o);
};

struct json_t;

/* Print @o indented (stable field order) and free it; NULL prints nothing. */
void fpgactl_print_json(struct json_t *o);
/* One line on stderr naming fpgad's reason; returns the exit code 1. */
int fpgactl_fail(fpgad_client *c, const char *what, int r);
/* Why fpgad_connect(@url) failed with @r, in words, into @buf. */
const char *fpgactl_connect_error(const char *url, int r, char *buf, size_t len);
/* The JSON object `status --json` prints for @s (a new reference). */
struct json_t *fpgactl_status_json(const struct fpgad_status *s);

/* capture.c */
int fpgactl_capture(fpgad_client *c, const struct fpgactl_opts *o);
/* send.c */
int fpgactl_send(fpgad_client *c, const struct fpgactl_opts *o);
/* topo.c */
int fpgactl_topo(fpgad_client *c, const struct fpgactl_opts *o);
int fpgactl_probe(fpgad_client *c, const struct fpgactl_opts *o);
/* xfer.c: card memory to a file and back. */
int fpgactl_read(fpgad_client *c, const struct fpgactl_opts *o);
int fpgactl_write(fpgad_client *c, const struct fpgactl_opts *o);
/* watch.c */
int fpgactl_watch(fpgad_client *c, const struct fpgactl_opts *o);
/* hosts.c: status of every --url, one row each; 1 if any is unreachable. */
int fpgactl_status_hosts(const struct fpgactl_opts *o);
/*
 * cards.c: --all: @cmd against every card's fpgad (@status_run: the status
 * command, one row per card).  While it runs with --json,
 * fpgactl_print_json() appends to fpgactl_json_sink instead of printing.
 */
extern struct json_t *fpgactl_json_sink;
int fpgactl_all(const struct fpgactl_cmd *cmd, const struct fpgactl_opts *o,
		int (*status_run)(fpgad_client *, const struct fpgactl_opts *));

#endif
