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
/* "PCIe Gen3 x8", or "unknown" when either is 0; returns @buf. */
const char *fpgactl_link_name(unsigned gen, unsigned width, char *buf, size_t len);
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

#endif
