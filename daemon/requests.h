/* SPDX-License-Identifier: MIT */
/*
 * requests.h - the control request path: find the session, decode
 * (protocol.c), authorize against the listener's allowlist, answer a
 * resent mutating request from the reply cache, dispatch, reply.
 */
#ifndef FPGAD_REQUESTS_H
#define FPGAD_REQUESTS_H

#include <stddef.h>

#include "control/control.h"

struct core;

/* Answer one request: exactly one control_reply() for @ctx. */
void requests_handle(struct core *d, struct control_ctx *ctx,
		     const struct peer *p, const void *buf, size_t len);

#endif
