// SPDX-License-Identifier: MIT
/*
 * xfer.c - card memory transfers (fpgad.h): read, write, batches and the
 * asynchronous form, over the connection's transfer queue (xfer_ctx.c),
 * opened the first time it is needed; telling a refusal or a failure in
 * words; noticing that fpgad went away (the session restored, session.c,
 * when asked to).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>

#include "client_internal.h"
#include "clock.h"
#include "xfer_queue.h"

/* How often a waiting call checks that fpgad is still there. */
#define XFER_LIVENESS_MS 50
#define XFER_POP 32

/* --- the queue, open and alive --------------------------------------------- */

static int came_back(struct xfer_ctx *xf)
{
	conn_set_errmsg(xf->c, "fpgad came back: the transfer queue and the "
			"buffers are registered again; transfers that were "
			"running are lost");
	return -ESTALE;
}

/*
 * The queue ended behind the library's back: what was outstanding
 * completes with -EPIPE.  With reconnect on, the session is restored,
 * the queue and every buffer with it (-ESTALE); else -EPIPE, from now on.
 */
static int xfer_lost(struct xfer_ctx *xf)
{
	fpgad_client *c = xf->c;
	int r;

	xfer_lose(xf);
	r = session_lost(c, &xf->restored, c->timeout_ms);
	if (r == -ESTALE)
		return came_back(xf);
	if (!c->reconnect)
		conn_set_errmsg(c, "fpgad went away: the transfer queue is gone");
	return r == -ETIMEDOUT || r == -ECONNREFUSED ? -EPIPE : r;
}

int xfer_ready(fpgad_client *c, struct xfer_ctx **ret_xf)
{
	struct xfer_ctx *xf;
	int r = xfer_state(c, &xf);

	if (r)
		return r;
	if (xf->lost && !c->reconnect) {
		conn_set_errmsg(c, "fpgad went away: the transfer queue is gone");
		return -EPIPE;
	}
	if (!xf->q && !xf->lost)
		r = xfer_open(xf);
	else if (xf->lost || xfer_gone(xf, false))
		r = xfer_lost(xf);
	else if (xf->restored) {
		/* Restored by a call on a channel. */
		xf->restored = false;
		r = came_back(xf);
	}
	if (r)
		return r;
	*ret_xf = xf;
	return 0;
}

/* --- submitting and completing --------------------------------------------- */

static enum fpgad_mode xfer_mode(uint32_t abi)
{
	switch (abi) {
	case FPGAD_XFER_MODE_GPUDIRECT: return FPGAD_MODE_GPUDIRECT;
	case FPGAD_XFER_MODE_BOUNCE: return FPGAD_MODE_BOUNCE;
	case FPGAD_XFER_MODE_HOST: return FPGAD_MODE_HOST;
	default: return FPGAD_MODE_AUTO;
	}
}

/* Take completions fpgad posted into xf->done. */
static int xfer_collect(struct xfer_ctx *xf)
{
	struct fpgad_xfer_cqe cqe[XFER_POP];
	int n, total = 0;

	do {
		n = xfer_queue_pop(xf->q, cqe, XFER_POP);
		if (n < 0) {
			conn_set_errmsg(xf->c, "fpgad's transfer queue is corrupt");
			return n;
		}
		for (int i = 0; i < n; i++) {
			uint32_t idx = (uint32_t)cqe[i].user_data;
			uint32_t gen = (uint32_t)(cqe[i].user_data >> 32);
			struct xfer_slot *s = idx < xf->n_slots ?
					      &xf->slots[idx] : NULL;
			struct fpgad_xfer *x;

			if (!s || !s->used || s->gen != gen)
				continue;
			x = s->x;
			if (s->buf) {
				s->buf->pending--;
				if (!cqe[i].status && (cqe[i].flags &
						       FPGAD_XFER_CF_CARD_WROTE))
					owner_wrote(&s->buf->owner,
						    FPGAD_WRITER_CARD);
			}
			s->used = false;
			s->x = NULL;
			s->buf = NULL;
			s->gen++;
			xf->free[xf->n_free++] = idx;
			if (!x)
				continue;	/* abandoned */
			x->status = cqe[i].status;
			x->rule = cqe[i].rule;
			x->done = cqe[i].length;
			x->fail_addr = cqe[i].fail_addr;
			x->limit = cqe[i].limit;
			x->t_start_ns = cqe[i].t_start_ns;
			x->t_end_ns = cqe[i].t_end_ns;
			x->mode = xfer_mode(cqe[i].mode);
			xf->done[xf->n_done++] = x;
			total++;
		}
	} while (n == XFER_POP);
	return total;
}

/* Before the card reads @b (or writes part of it): GPU memory made current. */
static int sync_device(fpgad_buffer *b)
{
	int r;

	if (owner_need(&b->owner, OWNER_DEVICE) != OWNER_TO_DEVICE)
		return 0;
	r = gpu_from_host(b->data, b->host, b->length);
	if (r)
		return r;
	owner_copied(&b->owner, OWNER_TO_DEVICE);
	b->copies++;
	return 0;
}

/*
 * Put @x in the queue (room and a slot are there): true; or complete it
 * here when the library cannot even submit it (false).
 */
static bool xfer_push(struct xfer_ctx *xf, struct fpgad_xfer *x)
{
	struct fpgad_xfer_sqe sqe;
	struct xfer_slot *s;
	uint32_t idx;
	int r;

	/* Not registered on this connection: as fpgad would answer it. */
	if (x->buf && x->buf->c != xf->c) {
		xfer_fail_local(xf, x, -ENOENT, FPGAD_XFER_RULE_BUFFER);
		return false;
	}
	/* The card reads or partly overwrites GPU memory: make it current. */
	if (x->buf) {
		r = sync_device(x->buf);
		if (r) {
			xfer_fail_local(xf, x, r, FPGAD_XFER_RULE_NONE);
			return false;
		}
	}
	idx = xf->free[--xf->n_free];
	s = &xf->slots[idx];
	s->used = true;
	s->x = x;
	s->buf = x->buf;
	if (x->buf)
		x->buf->pending++;
	memset(&sqe, 0, sizeof(sqe));
	sqe.user_data = (uint64_t)s->gen << 32 | idx;
	sqe.opcode = x->op == FPGAD_XFER_READ ? FPGAD_XFER_OP_READ :
		     x->op == FPGAD_XFER_WRITE ? FPGAD_XFER_OP_WRITE : x->op;
	sqe.flags = x->flags;
	sqe.buffer_id = x->buf ? x->buf->id : 0;
	sqe.buf_offset = x->buf_offset;
	sqe.card_addr = x->card_addr;
	sqe.length = x->length;
	x->status = -EINPROGRESS;
	xfer_queue_push(xf->q, &sqe);
	return true;
}

static void xfer_ring(struct xfer_ctx *xf)
{
	if (xfer_queue_publish(xf->q))
		eventfd_write(xf->doorbell, 1);
}

/*
 * Queue as many of @x[0..n) as fit, one wake-up of fpgad for all: how
 * many were taken care of (queued, or completed here), or -EPROTO.
 */
static int xfer_push_some(struct xfer_ctx *xf, struct fpgad_xfer *x,
			  unsigned n)
{
	int room = xfer_queue_room(xf->q);
	unsigned k = 0;

	if (room < 0) {
		conn_set_errmsg(xf->c, "fpgad's transfer queue is corrupt");
		return room;
	}
	while (k < n && room > 0 && xf->n_free &&
	       xf->n_done + (xf->n_slots - xf->n_free) < XFER_DONE_MAX) {
		if (xfer_push(xf, &x[k]))
			room--;
		k++;
	}
	xfer_ring(xf);
	return (int)k;
}

/*
 * Wait for completions, busy-polling until @spin_end first (the adaptive
 * spin of xfer_queue_wait when no busy-poll was asked for): 0 (look
 * again), -ETIMEDOUT, or -EPIPE/-ESTALE when the queue went away.
 */
static int xfer_await(struct xfer_ctx *xf, uint64_t deadline,
		      uint64_t spin_end)
{
	int left, r;

	if (clock_now_ns() < spin_end)
		return 0;
	left = clock_ms_left(deadline);
	if (left == 0)
		return -ETIMEDOUT;
	if (xfer_gone(xf, false))
		return xfer_lost(xf);
	if (left < 0 || left > XFER_LIVENESS_MS)
		left = XFER_LIVENESS_MS;
	r = xfer_queue_wait(xf->q, left, !xf->c->xfer_poll_us);
	/* A quiet while: is fpgad still there? (the link, a system call) */
	if (r == -ETIMEDOUT && xfer_gone(xf, true))
		return xfer_lost(xf);
	return r == -ETIMEDOUT || r == -EINTR ? 0 : r;
}

/* Hand back the completed elements of [lo, hi) from xf->done. */
static unsigned xfer_take_done(struct xfer_ctx *xf, const struct fpgad_xfer *lo,
			       const struct fpgad_xfer *hi)
{
	unsigned kept = 0, taken = 0;

	for (unsigned i = 0; i < xf->n_done; i++) {
		if (xf->done[i] >= lo && xf->done[i] < hi)
			taken++;
		else
			xf->done[kept++] = xf->done[i];
	}
	xf->n_done = kept;
	return taken;
}

/* A batch gave up on what did not complete: abandoned, -ETIMEDOUT. */
static void xfer_abandon(struct xfer_ctx *xf, struct fpgad_xfer *x, unsigned n)
{
	for (uint32_t i = 0; i < xf->n_slots; i++) {
		struct xfer_slot *s = &xf->slots[i];

		if (s->used && s->x >= x && s->x < x + n) {
			s->x->status = -ETIMEDOUT;
			s->x = NULL;
		}
	}
}

const char *fpgad_xfer_strerror(const struct fpgad_xfer *x, char *buf,
				size_t len)
{
	struct fpgad_xfer_sqe sqe;
	struct fpgad_xfer_cqe cqe;

	if (x->status == -EINPROGRESS) {
		snprintf(buf, len, "still running");
		return buf;
	}
	/* Completed here, not by fpgad, and no rule broken. */
	if (x->status && !x->t_end_ns && !x->rule) {
		snprintf(buf, len, "%s", x->status == -EPIPE ?
			 "fpgad went away before it completed" :
			 x->status == -ETIMEDOUT ?
			 "no result within the timeout (it may still run)" :
			 strerror(-x->status));
		return buf;
	}
	memset(&sqe, 0, sizeof(sqe));
	memset(&cqe, 0, sizeof(cqe));
	sqe.opcode = x->op;
	sqe.flags = x->flags;
	sqe.buffer_id = x->buf ? x->buf->id : 0;
	sqe.buf_offset = x->buf_offset;
	sqe.card_addr = x->card_addr;
	sqe.length = x->length;
	cqe.status = x->status;
	cqe.rule = x->rule;
	cqe.length = x->done;
	cqe.fail_addr = x->fail_addr;
	cqe.limit = x->limit;
	return xfer_describe(&sqe, &cqe, buf, len);
}

int fpgad_xfer_batch(fpgad_client *c, struct fpgad_xfer *x, unsigned n,
		     int timeout_ms)
{
	uint64_t deadline = clock_deadline_ns(timeout_ms);
	uint64_t spin_end = clock_now_ns() + (uint64_t)c->xfer_poll_us * 1000u;
	struct xfer_ctx *xf;
	unsigned sent = 0, got = 0;
	char msg[200];
	int r;

	if (!n)
		return 0;
	if (!x)
		return -EINVAL;
	r = xfer_ready(c, &xf);
	if (r)
		return r;
	for (unsigned i = 0; i < n; i++)
		x[i].status = -EINPROGRESS;
	while (got < n) {
		if (sent < n) {
			r = xfer_push_some(xf, x + sent, n - sent);
			if (r < 0)
				goto fail;
			sent += (unsigned)r;
		}
		r = xfer_collect(xf);
		if (r < 0)
			goto fail;
		got += xfer_take_done(xf, x, x + n);
		if (got == n || r > 0)
			continue;
		r = xfer_await(xf, deadline, spin_end);
		if (r < 0)
			goto fail;
	}
	for (unsigned i = 0; i < n; i++) {
		if (x[i].status) {
			conn_set_errmsg(c, "%s", fpgad_xfer_strerror(&x[i], msg,
								     sizeof(msg)));
			return x[i].status;
		}
	}
	c->errmsg[0] = '\0';
	return 0;
fail:
	/* Given up on (timeout), or failed with the queue (-EPIPE, -ESTALE). */
	if (xf->q)
		xfer_abandon(xf, x, n);
	xfer_take_done(xf, x, x + n);
	for (unsigned i = 0; i < n; i++)
		if (x[i].status == -EINPROGRESS)
			x[i].status = r;
	if (r == -ETIMEDOUT)
		conn_set_errmsg(c, "no result within %d ms", timeout_ms);
	return r;
}

int fpgad_xfer_submit(fpgad_client *c, struct fpgad_xfer *x, unsigned n)
{
	struct xfer_ctx *xf;
	int r;

	if (!n)
		return 0;
	if (!x)
		return -EINVAL;
	r = xfer_ready(c, &xf);
	if (r)
		return r;
	r = xfer_push_some(xf, x, n);
	return r == 0 ? -EAGAIN : r;
}

int fpgad_xfer_reap(fpgad_client *c, struct fpgad_xfer **ret, unsigned max,
		    int timeout_ms)
{
	uint64_t deadline = clock_deadline_ns(timeout_ms);
	uint64_t spin_end = clock_now_ns() + (uint64_t)c->xfer_poll_us * 1000u;
	struct xfer_ctx *xf = c->xf;
	unsigned n;
	int r;

	if (!max)
		return 0;
	if (!ret)
		return -EINVAL;
	for (;;) {
		if (xf && xf->q) {
			r = xfer_collect(xf);
			if (r < 0)
				return r;
		}
		if (xf && xf->n_done)
			break;
		/* Nothing outstanding: nothing will come. */
		if (!fpgad_xfer_pending(c) || timeout_ms == 0)
			return -ETIMEDOUT;
		r = xfer_await(xf, deadline, spin_end);
		if (r && !xf->n_done)
			return r;
	}
	n = xf->n_done < max ? xf->n_done : max;
	memcpy(ret, xf->done, n * sizeof(*ret));
	memmove(xf->done, xf->done + n, (xf->n_done - n) * sizeof(*xf->done));
	xf->n_done -= n;
	return (int)n;
}

unsigned fpgad_xfer_pending(const fpgad_client *c)
{
	const struct xfer_ctx *xf = c->xf;
	unsigned n;

	if (!xf)
		return 0;
	n = xf->n_done;
	for (uint32_t i = 0; i < xf->n_slots; i++)
		n += xf->slots[i].used && xf->slots[i].x;
	return n;
}

void fpgad_xfer_set_poll(fpgad_client *c, unsigned us)
{
	c->xfer_poll_us = us;
}

int fpgad_xfer_rules(fpgad_client *c, struct fpgad_xfer_rules *ret_rules)
{
	const struct fpgad_xfer_header *h;
	struct xfer_ctx *xf;
	int r = xfer_ready(c, &xf);

	if (r)
		return r;
	h = xfer_queue_header(xf->q);
	ret_rules->card_memory = h->card_memory;
	ret_rules->max_length = h->max_length;
	ret_rules->part_size = h->part_size;
	ret_rules->host_align = h->host_align;
	ret_rules->gpu_align = h->gpu_align;
	return 0;
}

static int xfer_one(fpgad_buffer *buf, unsigned op, uint64_t buf_offset,
		    uint64_t card_addr, uint64_t length, int timeout_ms)
{
	struct fpgad_xfer x = {
		.op = op,
		.buf = buf,
		.buf_offset = buf_offset,
		.card_addr = card_addr,
		.length = length,
	};

	if (!buf || !buf->c)
		return -EINVAL;
	return fpgad_xfer_batch(buf->c, &x, 1, timeout_ms);
}

int fpgad_read(fpgad_buffer *buf, uint64_t buf_offset, uint64_t card_addr,
	       uint64_t length, int timeout_ms)
{
	return xfer_one(buf, FPGAD_XFER_READ, buf_offset, card_addr, length,
			timeout_ms);
}

int fpgad_write(fpgad_buffer *buf, uint64_t buf_offset, uint64_t card_addr,
		uint64_t length, int timeout_ms)
{
	return xfer_one(buf, FPGAD_XFER_WRITE, buf_offset, card_addr, length,
			timeout_ms);
}
