// SPDX-License-Identifier: MIT
/*
 * xfer_requests.c - the control requests of card memory transfers
 * (xfer_requests.h): each checks its fields, asks the transfer plane
 * (xfer.h) and answers, or refuses by name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "protocol.h"
#include "core.h"
#include "memory/memory.h"
#include "log.h"
#include "xfer_requests.h"

static void xfer_requests_refuse(Fpgad__Response *resp, struct xfer_reply *out,
				 const struct session *s, const char *what,
				 int e)
{
	resp->code = protocol_status_code(e);
	resp->message = out->message;
	resp->body_case = FPGAD__RESPONSE__BODY__NOT_SET;
	log_notice("control: %s for pid %d: %s", what, (int)s->peer.pid,
		   out->message);
}

static struct xfer_who xfer_requests_who(const struct session *s)
{
	struct xfer_who w = {
		.session = s,
		.pid = s->peer.pid,
		.uid = s->peer.uid,
	};

	return w;
}

/* "auto" (or ""), "gpudirect", "bounce", "host"; -EINVAL otherwise. */
static int xfer_requests_mode(const char *name, enum transfer_mode *ret)
{
	static const enum transfer_mode modes[] = {
		MODE_AUTO, MODE_GPUDIRECT, MODE_BOUNCE, MODE_HOST,
	};

	if (!name[0]) {
		*ret = MODE_AUTO;
		return 0;
	}
	for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (!strcasecmp(name, transfer_mode_name(modes[i]))) {
			*ret = modes[i];
			return 0;
		}
	}
	return -EINVAL;
}

void xfer_requests_open_queue(struct core *d, struct session *s,
			      const Fpgad__OpenXferQueueRequest *in,
			      Fpgad__Response *resp, struct xfer_reply *out)
{
	struct xfer_who who = xfer_requests_who(s);
	Fpgad__OpenXferQueueReply *o = &out->body.open_queue;
	int e;

	(void)in;
	e = xfer_open_queue(d->xfer, &who, &out->queue, out->message,
			    sizeof(out->message));
	if (e) {
		xfer_requests_refuse(resp, out, s, "OpenXferQueue", e);
		return;
	}
	fpgad__open_xfer_queue_reply__init(o);
	o->handoff_token.data = out->queue.token;
	o->handoff_token.len = sizeof(out->queue.token);
	o->handoff_path = d->handoff_path;
	o->queue_size = out->queue.size;
	o->entries = out->queue.entries;
	resp->body_case = FPGAD__RESPONSE__BODY_OPEN_XFER_QUEUE;
	resp->open_xfer_queue = o;
}

void xfer_requests_register(struct core *d, struct session *s,
			    const Fpgad__RegisterBufferRequest *in,
			    Fpgad__Response *resp, struct xfer_reply *out)
{
	struct xfer_who who = xfer_requests_who(s);
	Fpgad__RegisterBufferReply *o = &out->body.reg;
	struct xfer_register_args a = {
		.length = in->length,
		.ipc_handle = in->ipc_handle.data,
		.ipc_offset = in->ipc_offset,
		.gpu_bus_id = in->gpu_bus_id,
	};
	int e = -EINVAL;

	if (!strcmp(in->memory, "host")) {
		a.memory = MEMORY_HOST;
	} else if (!strcmp(in->memory, "cuda")) {
		a.memory = MEMORY_CUDA;
	} else {
		snprintf(out->message, sizeof(out->message),
			 "RegisterBuffer: memory '%.32s' is not host or cuda",
			 in->memory);
		goto refuse;
	}
	if (xfer_requests_mode(in->mode, &a.mode)) {
		snprintf(out->message, sizeof(out->message),
			 "RegisterBuffer: mode '%.32s' is not one of auto, "
			 "gpudirect, bounce, host", in->mode);
		goto refuse;
	}
	if (a.memory == MEMORY_CUDA &&
	    (in->ipc_handle.len != MEMORY_IPC_HANDLE_SIZE ||
	     !in->gpu_bus_id[0] || strlen(in->gpu_bus_id) >= 32)) {
		snprintf(out->message, sizeof(out->message),
			 "RegisterBuffer: GPU memory needs a %d-byte IPC handle "
			 "and its GPU's PCI bus id", MEMORY_IPC_HANDLE_SIZE);
		goto refuse;
	}
	e = xfer_register(d->xfer, &who, &d->cfg.transfer, &a, &out->grant,
			  out->message, sizeof(out->message));
	if (e)
		goto refuse;
	fpgad__register_buffer_reply__init(o);
	o->buffer_id = out->grant.id;
	o->mode = (char *)transfer_mode_name(out->grant.mode);
	o->mode_reason = out->grant.reason;
	if (out->grant.host) {
		o->handoff_token.data = out->grant.token;
		o->handoff_token.len = sizeof(out->grant.token);
		o->handoff_path = d->handoff_path;
	}
	resp->body_case = FPGAD__RESPONSE__BODY_REGISTER_BUFFER;
	resp->register_buffer = o;
	return;
refuse:
	xfer_requests_refuse(resp, out, s, "RegisterBuffer", e);
}

void xfer_requests_unregister(struct core *d, struct session *s,
			      const Fpgad__UnregisterBufferRequest *in,
			      Fpgad__Response *resp, struct xfer_reply *out)
{
	int e = xfer_unregister(d->xfer, s, in->buffer_id, out->message,
				sizeof(out->message));

	if (e) {
		xfer_requests_refuse(resp, out, s, "UnregisterBuffer", e);
		return;
	}
	fpgad__unregister_buffer_reply__init(&out->body.unreg);
	resp->body_case = FPGAD__RESPONSE__BODY_UNREGISTER_BUFFER;
	resp->unregister_buffer = &out->body.unreg;
}

void xfer_requests_set_mode(struct core *d, struct session *s,
			    const Fpgad__SetBufferModeRequest *in,
			    Fpgad__Response *resp, struct xfer_reply *out)
{
	Fpgad__SetBufferModeReply *o = &out->body.mode;
	enum transfer_mode mode, now;
	int e = -EINVAL;

	if (xfer_requests_mode(in->mode, &mode)) {
		snprintf(out->message, sizeof(out->message),
			 "SetBufferMode: mode '%.32s' is not one of auto, "
			 "gpudirect, bounce, host", in->mode);
	} else {
		e = xfer_set_mode(d->xfer, s, in->buffer_id, mode, &now,
				  out->reason, sizeof(out->reason),
				  out->message, sizeof(out->message));
	}
	if (e) {
		xfer_requests_refuse(resp, out, s, "SetBufferMode", e);
		return;
	}
	fpgad__set_buffer_mode_reply__init(o);
	o->mode = (char *)transfer_mode_name(now);
	o->mode_reason = out->reason;
	resp->body_case = FPGAD__RESPONSE__BODY_SET_BUFFER_MODE;
	resp->set_buffer_mode = o;
}

void xfer_requests_status(struct core *d, Fpgad__StatusReply *st,
			  struct xfer_reply *out)
{
	struct xfer_stats *x = &out->stats;

	xfer_get_stats(d->xfer, x);
	st->card_memory = x->card_memory;
	st->transfer_engines = x->engines;
	st->transfer_queues = x->queues;
	st->transfer_buffers = x->buffers;
	st->transfer_registered = x->registered;
	st->transfers = x->transfers;
	st->transfer_bytes = x->bytes;
	st->transfer_errors = x->errors;
	st->transfer_refused = x->refused;
}

void xfer_requests_client(struct core *d, const struct session *s,
			  Fpgad__ClientInfo *ci)
{
	uint64_t bytes;
	unsigned n;

	xfer_session_stats(d->xfer, s, &n, &bytes);
	ci->buffers = n;
	ci->registered = bytes;
}
