/* SPDX-License-Identifier: MIT */
/* fpgactl.h - what fpgactl's commands share. */
#ifndef FPGACTL_H
#define FPGACTL_H

#include <stdbool.h>
#include <stdint.h>

#include "fpgad.h"

struct fpgactl_opts {
	const char *url;
	bool json;
	bool verify;
	bool newest;
	bool shared;
	bool reconnect;		/* ride through fpgad restarts (capture) */
	unsigned poll_us;
	uint64_t count;
	int timeout_ms;
	const char *channel;	/* first positional argument, if any */
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

/* capture.c */
int fpgactl_capture(fpgad_client *c, const struct fpgactl_opts *o);
/* send.c */
int fpgactl_send(fpgad_client *c, const struct fpgactl_opts *o);
/* topo.c */
int fpgactl_topo(fpgad_client *c, const struct fpgactl_opts *o);

#endif
