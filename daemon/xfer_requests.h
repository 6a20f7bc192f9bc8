/* SPDX-License-Identifier: MIT */
/*
 * xfer_requests.h - the control requests of card memory transfers
 * (OpenXferQueue, RegisterBuffer, UnregisterBuffer, SetBufferMode) and
 * their part of Status and ListClients, called from requests.c's dispatch
 * on the loop thread.  Each handler fills @resp: a body, or a status code
 * and a message naming what was wrong; @out holds what the reply points
 * into until it is packed.
 */
#ifndef FPGAD_XFER_REQUESTS_H
#define FPGAD_XFER_REQUESTS_H

#include "control/session.h"
#include "fpgad.pb-c.h"
#include "xfer/xfer.h"

struct core;

struct xfer_reply {
	char message[256];
	union {
		Fpgad__OpenXferQueueReply open_queue;
		Fpgad__RegisterBufferReply reg;
		Fpgad__UnregisterBufferReply unreg;
		Fpgad__SetBufferModeReply mode;
	} body;
	struct xfer_queue_grant queue;
	struct xfer_register_grant grant;
	struct xfer_stats stats;
	char reason[128];
};

void xfer_requests_open_queue(struct core *d, struct session *s,
			      const Fpgad__OpenXferQueueRequest *in,
			      Fpgad__Response *resp, struct xfer_reply *out);
void xfer_requests_register(struct core *d, struct session *s,
			    const Fpgad__RegisterBufferRequest *in,
			    Fpgad__Response *resp, struct xfer_reply *out);
void xfer_requests_unregister(struct core *d, struct session *s,
			      const Fpgad__UnregisterBufferRequest *in,
			      Fpgad__Response *resp, struct xfer_reply *out);
void xfer_requests_set_mode(struct core *d, struct session *s,
			    const Fpgad__SetBufferModeRequest *in,
			    Fpgad__Response *resp, struct xfer_reply *out);
/* Status: card memory, engines, buffers and transfer counters. */
void xfer_requests_status(struct core *d, Fpgad__StatusReply *st,
			  struct xfer_reply *out);
/* ListClients: what @s has registered. */
void xfer_requests_client(struct core *d, const struct session *s,
			  Fpgad__ClientInfo *ci);

#endif
