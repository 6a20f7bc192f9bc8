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
 * device node is there (xdma), each GPU a channel names or needs answers,
 * and the rings fit in the host's memory.  Appends one "WHERE: what is
 * wrong" line per problem to @err (config_error_append()); returns how
 * many it found.
 */
unsigned preflight_check(const struct config *cfg, char *err, size_t len);

#endif
