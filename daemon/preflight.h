/* SPDX-License-Identifier: MIT */
/*
 * preflight.h - what `fpgad --check-config` checks beyond the file: that
 * the host can run the configuration, without starting anything.
 */
#ifndef FPGAD_PREFLIGHT_H
#define FPGAD_PREFLIGHT_H

#include <stddef.h>

#include "config/config.h"

/*
 * Check @cfg against this host: the socket's group exists, the card's
 * device node is there and opens (xdma), the card has each channel's
 * engine, each GPU a channel names or needs answers, the rings fit in the
 * host's memory, and each network channel's address and RDMA device are
 * this host's (preflight_channel()).  Appends one "WHERE: what is
 * wrong" line per problem to @err (config_error_append()); returns how
 * many it found.
 */
unsigned preflight_check(const struct config *cfg, char *err, size_t len);

/*
 * What channel @i of @cfg needs of this host to open: a udp channel's
 * listen address is one of the host's; a roce channel's RDMA device is
 * there and has a RoCE v2 GID for listen.  fpgad makes the same check at
 * start, before it opens the channel, so that both say the same one line.
 * Appends it to @err; returns 1 when there is one, else 0.
 */
unsigned preflight_channel(const struct config *cfg, unsigned i, char *err,
			   size_t len);

struct device_info;
/*
 * Each card channel's engine is one of @info's (the card's, opened), as
 * start checks it: one line per channel that names another, appended to
 * @err; returns how many.
 */
unsigned preflight_engines(const struct config *cfg, const struct device_info *info,
			   char *err, size_t len);

/*
 * The line for [sim] numa_node = @node, whose CPUs cannot be used (@r, a
 * negative errno), as the checker and the start say it; appended to @err.
 */
void preflight_numa_error(const struct config *cfg, int node, int r, char *err,
			  size_t len);

#endif
