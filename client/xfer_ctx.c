// SPDX-License-Identifier: MIT
/*
 * xfer_ctx.c - what a connection holds for card transfers (struct
 * xfer_ctx): its transfer queue, opened over OpenXferQueue and fetched
 * over the handoff socket; the slot of every entry in flight and the
 * transfers completed; losing all of it when fpgad goes away; and its
 * buffers' registrations (RegisterBuffer, UnregisterBuffer).
 *
 * Every entry the library submits has a slot here, named in its user_data
 * (index and generation): a completion whose user_data names no slot the
 * library filled is ignored.  A transfer a waiting call gave up on keeps
 * its slot, abandoned, until its completion comes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client_internal.h"
#include "xfer_queue.h"

static const char *const mode_names[] = {
	[FPGAD_MODE_AUTO] = "auto",
	[FPGAD_MODE_GPUDIRECT] = "gpudirect",
	[FPGAD_MODE_BOUNCE] = "bounce",
	[FPGAD_MODE_HOST] = "host",
};

enum fpgad_mode xfer_mode_of(const char *name)
{
	for (unsigned i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(name, mode_names[i]))
			return (enum fpgad_mode)i;
	return FPGAD_MODE_AUTO;
}

const char *xfer_mode_name(enum fpgad_mode mode)
{
	return mode_names[mode];
}

static void xfer_unmap(struct xfer_ctx *xf)
{
	xfer_queue_free(xf->q);
	if (xf->mem)
		munmap(xf->mem, xf->len);
	if (xf->doorbell >= 0)
		close(xf->doorbell);
	if (xf->link >= 0)
		close(xf->link);
	free(xf->slots);
	free(xf->free);
	xf->q = NULL;
	xf->mem = NULL;
	xf->doorbell = -1;
	xf->link = -1;
	xf->slots = NULL;
	xf->free = NULL;
	xf->n_slots = xf->n_free = 0;
}

/* The slot table: one per entry that can be outstanding at once. */
static int xfer_slots(struct xfer_ctx *xf)
{
	const struct xfer_ring_layout *l = xfer_queue_layout(xf->q);
	uint32_t n = l->sq_entries + l->cq_entries;

	xf->slots = calloc(n, sizeof(*xf->slots));
	xf->free = calloc(n, sizeof(*xf->free));
	if (!xf->slots || !xf->free)
		return -ENOMEM;
	xf->n_slots = n;
	for (uint32_t i = 0; i < n; i++) {
		xf->slots[i].gen = 1;
		xf->free[i] = n - 1 - i;
	}
	xf->n_free = n;
	return 0;
}

/* OpenXferQueue, the handoff, and a check of what came. */
int xfer_open(struct xfer_ctx *xf)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenXferQueueRequest body = FPGAD__OPEN_XFER_QUEUE_REQUEST__INIT;
	fpgad_client *c = xf->c;
	Fpgad__OpenXferQueueReply *o;
	Fpgad__Response *resp;
	uint32_t conn;
	int fds[2], r;

	req.body_case = FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE;
	req.open_xfer_queue = &body;
	r = conn_request(c, &req, FPGAD__RESPONSE__BODY_OPEN_XFER_QUEUE, &resp);
	if (r)
		return r;
	o = resp->open_xfer_queue;
	conn = c->reply_pipe;
	r = handoff_exchange(c, o->handoff_path, &o->handoff_token, NULL, 0,
			     fds, 2, &xf->link);
	if (r == 0) {
		xf->doorbell = fds[1];
		r = handoff_map(fds[0], o->queue_size, PROT_READ | PROT_WRITE,
				&xf->mem);
		close(fds[0]);
		if (r == 0)
			xf->len = o->queue_size;
	}
	fpgad__response__free_unpacked(resp, NULL);
	if (r == 0) {
		r = xfer_queue_attach(xf->mem, xf->len, &xf->q);
		if (r)
			conn_set_errmsg(c, "fpgad's transfer queue is not usable: %s",
					strerror(-r));
	}
	if (r == 0)
		r = xfer_slots(xf);
	if (r) {
		xfer_unmap(xf);
		return r;
	}
	xf->conn = conn;
	xf->lost = false;
	return 0;
}

/* Is the queue over: the connection lost, the queue closed, fpgad gone? */
bool xfer_gone(struct xfer_ctx *xf, bool look_at_link)
{
	struct pollfd p = { .fd = xf->link, .events = POLLIN };

	if (!reconnect_conn_alive(xf->c, xf->conn) ||
	    (xfer_queue_events(xf->q) & FPGAD_XFER_EVENT_CLOSED))
		return true;
	/* fpgad writes nothing after the handoff: readable means closed. */
	return look_at_link && poll(&p, 1, 0) > 0;
}

/* @x completes here, without fpgad, with @status (and @rule broken). */
void xfer_fail_local(struct xfer_ctx *xf, struct fpgad_xfer *x,
			    int status, uint32_t rule)
{
	x->status = status;
	x->rule = rule;
	x->done = 0;
	x->fail_addr = 0;
	x->limit = 0;
	x->t_start_ns = 0;
	x->t_end_ns = 0;
	x->mode = FPGAD_MODE_AUTO;
	xf->done[xf->n_done++] = x;
}

/* Every outstanding transfer completes with @status (the queue is over). */
static void xfer_fail_all(struct xfer_ctx *xf, int status)
{
	for (uint32_t i = 0; i < xf->n_slots; i++) {
		struct xfer_slot *s = &xf->slots[i];

		if (!s->used)
			continue;
		if (s->buf)
			s->buf->pending--;
		if (s->x)
			xfer_fail_local(xf, s->x, status, FPGAD_XFER_RULE_NONE);
		s->used = false;
		s->x = NULL;
		s->buf = NULL;
	}
}

void xfer_lose(struct xfer_ctx *xf)
{
	xfer_fail_all(xf, -EPIPE);
	xfer_unmap(xf);
	xf->lost = true;
}

int xfer_state(fpgad_client *c, struct xfer_ctx **ret_xf)
{
	struct xfer_ctx *xf = c->xf;

	if (!xf) {
		xf = calloc(1, sizeof(*xf));
		if (!xf)
			return -ENOMEM;
		xf->c = c;
		xf->doorbell = -1;
		xf->link = -1;
		xf->done = calloc(XFER_DONE_MAX, sizeof(*xf->done));
		if (!xf->done) {
			free(xf);
			return -ENOMEM;
		}
		c->xf = xf;
	}
	*ret_xf = xf;
	return 0;
}

void xfer_close(fpgad_client *c)
{
	struct xfer_ctx *xf = c->xf;

	if (!xf)
		return;
	xfer_unmap(xf);
	free(xf->done);
	free(xf);
	c->xf = NULL;
}

int xfer_ctx_unregister(fpgad_client *c, uint64_t id)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__UnregisterBufferRequest body =
		FPGAD__UNREGISTER_BUFFER_REQUEST__INIT;
	Fpgad__Response *resp;
	int r;

	body.buffer_id = id;
	req.body_case = FPGAD__REQUEST__BODY_UNREGISTER_BUFFER;
	req.unregister_buffer = &body;
	r = conn_request(c, &req, FPGAD__RESPONSE__BODY_UNREGISTER_BUFFER, &resp);
	if (r == 0)
		fpgad__response__free_unpacked(resp, NULL);
	return r;
}

int xfer_ctx_register(fpgad_client *c, fpgad_buffer *b)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__RegisterBufferRequest body = FPGAD__REGISTER_BUFFER_REQUEST__INIT;
	Fpgad__RegisterBufferReply *o;
	Fpgad__Response *resp;
	int r;

	body.memory = b->memory == FPGAD_MEMORY_CUDA ? "cuda" : "host";
	body.length = b->length;
	body.mode = (char *)mode_names[b->mode];
	if (b->memory == FPGAD_MEMORY_CUDA) {
		body.ipc_handle.data = b->ipc_handle;
		body.ipc_handle.len = sizeof(b->ipc_handle);
		body.ipc_offset = b->ipc_offset;
		body.gpu_bus_id = b->gpu_bus_id;
	}
	req.body_case = FPGAD__REQUEST__BODY_REGISTER_BUFFER;
	req.register_buffer = &body;
	r = conn_request(c, &req, FPGAD__RESPONSE__BODY_REGISTER_BUFFER, &resp);
	if (r)
		return r;
	o = resp->register_buffer;
	b->id = o->buffer_id;
	b->info.id = o->buffer_id;
	b->info.mode = xfer_mode_of(o->mode);
	snprintf(b->info.mode_reason, sizeof(b->info.mode_reason), "%s",
		 o->mode_reason);
	/* Host memory: fpgad takes the memfd itself, over the handoff. */
	if (b->memory == FPGAD_MEMORY_HOST)
		r = handoff_exchange(c, o->handoff_path, &o->handoff_token,
				     &b->memfd, 1, NULL, 0, NULL);
	fpgad__response__free_unpacked(resp, NULL);
	if (r) {
		char msg[sizeof(c->errmsg)];

		memcpy(msg, c->errmsg, sizeof(msg));
		xfer_ctx_unregister(c, b->id);
		memcpy(c->errmsg, msg, sizeof(msg));
	}
	return r;
}
