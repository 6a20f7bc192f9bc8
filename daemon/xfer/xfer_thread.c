// SPDX-License-Identifier: MIT
/*
 * xfer_thread.c - the transfer thread (xfer.h, xfer_impl.h): the memory engines
 * and the thread that serves every connection's transfer queue.  A
 * transfer is taken from its queue, checked against every rule, split
 * into parts that run on the engines of its direction (through staging
 * and a GPU copy in bounce mode), and completed once, with the status of
 * its first failed part and that part's card address.  A connection's
 * end is here too: when it closes or the process dies, nothing more is
 * taken from its queue, what waits completes as canceled and its buffers
 * go.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "futex.h"
#include "log.h"
#include "spin.h"
#include "xfer/xfer_impl.h"

#define XFER_EVENTS 64
#define XFER_HANG_SLACK_MS 1000u
#define XFER_DEFAULT_PART (8ull << 20)

static const char *const dir_names[] = { "c2h", "h2c" };

/* --- parts ----------------------------------------------------------------- */

static uint32_t xfer_abi_mode(enum transfer_mode m)
{
	switch (m) {
	case MODE_GPUDIRECT: return FPGAD_XFER_MODE_GPUDIRECT;
	case MODE_BOUNCE: return FPGAD_XFER_MODE_BOUNCE;
	case MODE_HOST: return FPGAD_XFER_MODE_HOST;
	case MODE_AUTO: break;
	}
	return 0;
}

/* The longest part of @b's transfers: a multiple of its alignment. */
static uint64_t xfer_part_size(const struct xfer *x,
			       const struct xfer_buffer *b)
{
	uint64_t align = b->memory == MEMORY_CUDA ? x->rules.gpu_align :
			 x->rules.host_align;

	return x->rules.part_size / align * align;
}

/* A part is over (@status 0 or -errno): account, and finish its transfer. */
static void xfer_part_end(struct xfer *x, struct xfer_part *p, int status)
{
	struct xfer_req *r = p->r;
	uint64_t addr = r->sqe.card_addr + p->off;

	if (status) {
		if (!r->status || addr < r->fail_addr) {
			r->status = status;
			r->fail_addr = addr;
		}
		r->stopped = true;
	} else {
		x->n.bytes += p->len;
	}
	xfer_staging_put(x, p->slot);
	r->parts--;
	free(p);
	if (!r->parts && !r->on_ready)
		xfer_req_finish(x, r);
}

/* Hand @p to its engine (the engine's place is reserved already). */
static void xfer_part_submit(struct xfer *x, struct xfer_part *p)
{
	struct xfer_req *r = p->r;
	struct xfer_engine *e = p->e;
	struct dev_xfer dx = {
		.card_addr = r->c->card_base + r->sqe.card_addr + p->off,
		.length = p->len,
		.cookie = (uintptr_t)p,
		.timeout_ms = r->sqe.timeout_ms ? r->sqe.timeout_ms :
			      x->dma_timeout_ms,
	};
	int ret;

	if (p->slot >= 0) {
		dx.handle = e->staging_pin;
		dx.offset = (uint64_t)p->slot * x->rules.part_size;
	} else {
		dx.handle = r->b->pins[e->dir][e - x->eng[e->dir]];
		dx.offset = r->sqe.buf_offset + p->off;
	}
	p->stage = XFER_DMA;
	ret = x->ops->submit(e->q, &dx);
	if (ret) {
		log_err("transfer: %s engine %u: submit: %s",
			dir_names[e->dir], e->index, strerror(-ret));
		e->inflight--;
		xfer_part_end(x, p, ret);
		return;
	}
	if (!e->submitted++) {
		e->progress_ns = clock_now_ns();
		e->longest_ms = 0;
	}
	if (dx.timeout_ms > e->longest_ms)
		e->longest_ms = dx.timeout_ms;
}

/* Start a GPU copy of bounce part @p (@in: staging -> GPU, else back). */
static void xfer_part_copy(struct xfer *x, struct xfer_part *p, bool in)
{
	struct xfer_req *r = p->r;
	unsigned char *gpu = r->b->addr + r->sqe.buf_offset + p->off;
	unsigned char *stage = xfer_staging_at(x, p->slot);
	int ret;

	p->stage = in ? XFER_COPY_IN : XFER_COPY_OUT;
	ret = in ? copy_submit(p->ce, gpu, stage, p->len, COPY_H2D,
			       (uintptr_t)p) :
		   copy_submit(p->ce, stage, gpu, p->len, COPY_D2H,
			       (uintptr_t)p);
	if (ret) {
		log_err("transfer: bounce copy: %s", strerror(-ret));
		if (!in)
			p->e->inflight--;
		xfer_part_end(x, p, ret);
	}
}

/* The engine is done with @p. */
static void xfer_part_dma_done(struct xfer *x, struct xfer_part *p,
			       const struct dev_completion *dc)
{
	int status = dc->status;

	if (!status && dc->length != p->len)
		status = -EIO;
	p->e->submitted--;
	p->e->inflight--;
	p->e->progress_ns = clock_now_ns();
	if (!status && p->slot >= 0 && p->r->dir == DIR_C2H &&
	    !p->r->stopped) {
		xfer_part_copy(x, p, true);
		return;
	}
	xfer_part_end(x, p, status);
}

static bool xfer_reap_engines(struct xfer *x)
{
	struct dev_completion c[32];
	bool work = false;

	for (unsigned d = 0; d < 2; d++) {
		for (unsigned i = 0; i < x->n_eng[d]; i++) {
			struct xfer_engine *e = &x->eng[d][i];
			int n;

			do {
				n = x->ops->wait(e->q, c, 32, 0);
				for (int k = 0; k < n; k++)
					xfer_part_dma_done(x, (struct xfer_part *)
						(uintptr_t)c[k].cookie, &c[k]);
				work |= n > 0;
			} while (n == 32);
		}
	}
	return work;
}

static bool xfer_reap_copies(struct xfer *x)
{
	struct copy_done done;
	bool work = false;

	for (unsigned i = 0; i < x->n_ce; i++) {
		while (copy_reap(x->ce[i], 0, &done) == 1) {
			struct xfer_part *p = (struct xfer_part *)
					      (uintptr_t)done.cookie;

			work = true;
			if (p->stage == XFER_COPY_IN) {
				xfer_part_end(x, p, done.status);
			} else if (done.status || p->r->stopped) {
				p->e->inflight--;
				xfer_part_end(x, p, done.status ? done.status :
					      -ECANCELED);
			} else {
				xfer_part_submit(x, p);
			}
		}
	}
	return work;
}

static bool xfer_copies_pending(const struct xfer *x)
{
	for (unsigned i = 0; i < x->n_ce; i++)
		if (copy_pending(x->ce[i]))
			return true;
	return false;
}

/* --- transfers --------------------------------------------------------------- */

const char *xfer_error_kind_name(enum xfer_error_kind k)
{
	static const char *const names[XFER_ERROR_KINDS] = {
		[XFER_ERROR_IO] = "io",
		[XFER_ERROR_TIMEOUT] = "timeout",
		[XFER_ERROR_CANCELED] = "canceled",
		[XFER_ERROR_OTHER] = "other",
	};

	return (unsigned)k < XFER_ERROR_KINDS ? names[k] : "?";
}

/* The kind of a failed transfer's status (a negative errno). */
static enum xfer_error_kind xfer_error_kind(int status)
{
	switch (status) {
	case -EIO: return XFER_ERROR_IO;
	case -ETIMEDOUT: return XFER_ERROR_TIMEOUT;
	case -ECANCELED: return XFER_ERROR_CANCELED;
	default: return XFER_ERROR_OTHER;
	}
}

/* Post @cqe for one of @c's entries and forget the entry. */
static void xfer_complete(struct xfer *x, struct xfer_client *c,
			  const struct fpgad_xfer_cqe *cqe)
{
	c->outstanding--;
	if (!c->gone && c->srv) {
		xfer_server_complete(c->srv, cqe);
		c->wake = true;
	}
	xfer_client_maybe_free(x, c);
}

void xfer_req_finish(struct xfer *x, struct xfer_req *r)
{
	struct fpgad_xfer_cqe cqe;
	struct xfer_buffer *b = r->b;

	memset(&cqe, 0, sizeof(cqe));
	cqe.user_data = r->sqe.user_data;
	cqe.status = r->status;
	cqe.length = r->status ? r->fail_addr - r->sqe.card_addr :
		     r->sqe.length;
	cqe.fail_addr = r->status ? r->fail_addr : 0;
	cqe.t_start_ns = r->t_start_ns;
	cqe.t_end_ns = clock_now_ns();
	cqe.mode = xfer_abi_mode(r->mode);
	if (!r->status && r->dir == DIR_C2H)
		cqe.flags = FPGAD_XFER_CF_CARD_WROTE;
	/* The card wrote GPU memory whose GPU does not order that: flushed. */
	if (!r->status && r->dir == DIR_C2H && r->mode == MODE_GPUDIRECT && b->ipc &&
	    b->ipc->mem->rdma_order == RDMA_ORDER_NONE) {
		int e = memory_flush_rdma_writes(b->ipc->mem);

		if (e < 0) {
			cqe.status = e;
			log_err("transfer: cannot flush the card's writes to GPU %d: %s",
				b->ipc->mem->gpu, strerror(-e));
		}
	}
	x->n.transfers++;
	if (r->status)
		x->n.errors[xfer_error_kind(r->status)]++;
	histo_add(&x->n.latency[r->dir], cqe.t_end_ns - cqe.t_start_ns);
	b->inflight--;
	xfer_buffer_maybe_free(x, b);
	xfer_complete(x, r->c, &cqe);
	free(r);
}

/*
 * Check @s against every rule, in order: 0 with the buffer, or the rule
 * broken with its limit and the status to complete with.
 */
static uint32_t xfer_check(const struct xfer *x, struct xfer_client *c,
			   const struct fpgad_xfer_sqe *s,
			   struct xfer_buffer **ret_b, uint64_t *ret_limit,
			   int *ret_status)
{
	struct xfer_buffer *b;
	uint64_t align;

	*ret_status = -EINVAL;
	*ret_limit = 0;
	if (s->opcode != FPGAD_XFER_OP_READ && s->opcode != FPGAD_XFER_OP_WRITE)
		return FPGAD_XFER_RULE_OPCODE;
	if ((s->flags & ~FPGAD_XFER_F_ALL) || s->reserved0 || s->reserved1)
		return FPGAD_XFER_RULE_RESERVED;
	if (!x->n_eng[s->opcode == FPGAD_XFER_OP_READ ? DIR_C2H : DIR_H2C]) {
		*ret_status = -EOPNOTSUPP;
		return FPGAD_XFER_RULE_ENGINE;
	}
	b = xfer_buffer_find(c, s->buffer_id);
	if (!b) {
		*ret_status = -ENOENT;
		return FPGAD_XFER_RULE_BUFFER;
	}
	if (!s->length)
		return FPGAD_XFER_RULE_ZERO_LENGTH;
	*ret_limit = x->rules.max_length;
	if (s->length > x->rules.max_length)
		return FPGAD_XFER_RULE_MAX_LENGTH;
	*ret_limit = x->rules.max_timeout_ms;
	if (s->timeout_ms > x->rules.max_timeout_ms)
		return FPGAD_XFER_RULE_TIMEOUT;
	align = b->memory == MEMORY_CUDA ? x->rules.gpu_align :
		x->rules.host_align;
	*ret_limit = align;
	if (s->card_addr % align)
		return FPGAD_XFER_RULE_CARD_ALIGN;
	if (s->buf_offset % align)
		return FPGAD_XFER_RULE_BUF_ALIGN;
	if (s->length % align)
		return FPGAD_XFER_RULE_LEN_ALIGN;
	/* A card that does not say how much memory it has checks itself. */
	*ret_limit = x->rules.card_memory;
	if (x->rules.card_memory &&
	    (s->card_addr > x->rules.card_memory ||
	     s->length > x->rules.card_memory - s->card_addr))
		return FPGAD_XFER_RULE_CARD_RANGE;
	*ret_limit = b->length;
	if (s->buf_offset > b->length || s->length > b->length - s->buf_offset)
		return FPGAD_XFER_RULE_BUF_RANGE;
	*ret_limit = 0;
	*ret_status = 0;
	*ret_b = b;
	return FPGAD_XFER_RULE_NONE;
}

static void xfer_ready_add(struct xfer_client *c, struct xfer_req *r)
{
	r->next = NULL;
	r->on_ready = true;
	*c->ready_tail = r;
	c->ready_tail = &r->next;
}

static void xfer_ready_pop(struct xfer_client *c)
{
	struct xfer_req *r = c->ready;

	c->ready = r->next;
	if (!c->ready)
		c->ready_tail = &c->ready;
	r->on_ready = false;
}

/* An entry was taken: refuse it by rule, or queue it to run. */
static void xfer_accept(struct xfer *x, struct xfer_client *c,
			const struct fpgad_xfer_sqe *s)
{
	struct fpgad_xfer_cqe cqe;
	struct xfer_buffer *b = NULL;
	struct xfer_req *r;
	uint64_t limit;
	uint32_t rule;
	int status;

	rule = xfer_check(x, c, s, &b, &limit, &status);
	r = rule ? NULL : calloc(1, sizeof(*r));
	if (!r) {
		memset(&cqe, 0, sizeof(cqe));
		cqe.user_data = s->user_data;
		cqe.status = rule ? status : -ENOMEM;
		cqe.rule = rule;
		cqe.limit = limit;
		cqe.t_start_ns = cqe.t_end_ns = clock_now_ns();
		if (rule)
			x->n.refused[rule]++;
		else
			x->n.errors[XFER_ERROR_OTHER]++;
		x->n.transfers++;
		xfer_complete(x, c, &cqe);
		return;
	}
	r->c = c;
	r->b = b;
	r->sqe = *s;
	r->dir = s->opcode == FPGAD_XFER_OP_READ ? DIR_C2H : DIR_H2C;
	r->mode = b->mode;
	r->t_start_ns = clock_now_ns();
	b->inflight++;
	if ((s->flags & FPGAD_XFER_F_BARRIER) && c->outstanding > 1)
		c->barrier = r;
	else
		xfer_ready_add(c, r);
}

/* Take what @c's queue holds, within the pass's budget. */
static bool xfer_take_from(struct xfer *x, struct xfer_client *c)
{
	struct fpgad_xfer_sqe s;
	bool work = false;

	if (c->barrier) {
		if (c->outstanding > 1)
			return false;
		/* It starts now: every entry ahead of it completed. */
		c->barrier->t_start_ns = clock_now_ns();
		xfer_ready_add(c, c->barrier);
		c->barrier = NULL;
		work = true;
	}
	for (unsigned n = 0; n < XFER_TAKE_BUDGET && !c->barrier; n++) {
		if (!xfer_server_take(c->srv, c->outstanding, &s))
			break;
		c->outstanding++;
		work = true;
		xfer_accept(x, c, &s);
	}
	return work;
}

static bool xfer_take(struct xfer *x)
{
	struct xfer_client *c, *next;
	bool work = false;

	for (c = x->clients; c; c = next) {
		next = c->next;	/* refusals may free nothing, but be safe */
		if (!c->gone && c->srv)
			work |= xfer_take_from(x, c);
	}
	return work;
}

static struct xfer_engine *xfer_engine_pick(struct xfer *x,
					    enum direction dir)
{
	struct xfer_engine *best = NULL;

	for (unsigned i = 0; i < x->n_eng[dir]; i++) {
		struct xfer_engine *e = &x->eng[dir][i];

		if (e->inflight < e->max &&
		    (!best || e->inflight < best->inflight))
			best = e;
	}
	return best;
}

/*
 * Start the next part of @c's first ready transfer, or retire that
 * transfer: true when something changed.
 */
static bool xfer_step(struct xfer *x, struct xfer_client *c)
{
	struct xfer_req *r = c->ready;
	struct xfer_buffer *b = r->b;
	struct xfer_engine *e;
	struct xfer_part *p;
	uint64_t len;
	int slot = -1;

	if (!r->stopped && (b->dead || c->gone)) {
		r->stopped = true;
		if (!r->status) {
			r->status = -ECANCELED;
			r->fail_addr = r->sqe.card_addr + r->dispatched;
		}
	}
	if (r->stopped || r->dispatched == r->sqe.length) {
		xfer_ready_pop(c);
		if (!r->parts)
			xfer_req_finish(x, r);
		return true;
	}
	e = xfer_engine_pick(x, r->dir);
	if (!e)
		return false;
	if (r->mode == MODE_BOUNCE) {
		slot = xfer_staging_get(x);
		if (slot < 0)
			return false;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		xfer_staging_put(x, slot);
		r->stopped = true;
		r->status = -ENOMEM;
		r->fail_addr = r->sqe.card_addr + r->dispatched;
		return true;
	}
	len = xfer_part_size(x, b);
	if (len > r->sqe.length - r->dispatched)
		len = r->sqe.length - r->dispatched;
	p->r = r;
	p->e = e;
	p->off = r->dispatched;
	p->len = len;
	p->slot = slot;
	e->inflight++;
	r->dispatched += len;
	r->parts++;
	if (slot >= 0 && xfer_copy_engine(x, b->ipc->mem->gpu, &p->ce) < 0) {
		e->inflight--;
		xfer_part_end(x, p, -ENODEV);
	} else if (slot >= 0 && r->dir == DIR_H2C) {
		xfer_part_copy(x, p, false);
	} else {
		xfer_part_submit(x, p);
	}
	return true;
}

/* Start parts, one per connection in turn, while engines take them. */
static bool xfer_dispatch(struct xfer *x)
{
	bool work = false, progress;

	do {
		struct xfer_client *c = x->clients, *next;
		unsigned n = 0, start;

		progress = false;
		for (; c; c = c->next)
			n++;
		if (!n)
			break;
		start = x->rr++ % n;
		for (c = x->clients; start--; c = c->next)
			;
		/* A step may free its connection: keep the next one first. */
		for (unsigned i = 0; i < n; i++, c = next) {
			if (!c)
				c = x->clients;
			if (!c)
				break;
			next = c->next;
			if (c->ready && xfer_step(x, c))
				progress = true;
		}
		work |= progress;
	} while (progress);
	return work;
}

/* Engines that went quiet with parts on them are reset (a hung engine). */
static void xfer_hang_check(struct xfer *x, uint64_t now)
{
	for (unsigned d = 0; d < 2; d++) {
		for (unsigned i = 0; i < x->n_eng[d]; i++) {
			struct xfer_engine *e = &x->eng[d][i];
			uint64_t limit = (2ull * e->longest_ms +
					  XFER_HANG_SLACK_MS) *
					 CLOCK_NS_PER_MS;
			int r;

			if (!e->submitted || now - e->progress_ns < limit)
				continue;
			log_err("transfer: %s engine %u: no completion for %" PRIu64
				" ms with %u transfers on it: reset",
				dir_names[d], e->index,
				(uint64_t)((now - e->progress_ns) /
					   CLOCK_NS_PER_MS), e->submitted);
			r = x->ops->reset(e->q);
			if (r)
				log_err("transfer: %s engine %u: reset: %s",
					dir_names[d], e->index, strerror(-r));
			x->n.resets++;
			e->progress_ns = now;
		}
	}
}

/* Milliseconds the thread may sleep: until the next hang check. */
static int xfer_sleep_ms(const struct xfer *x, uint64_t now)
{
	uint64_t until = UINT64_MAX;

	for (unsigned d = 0; d < 2; d++) {
		for (unsigned i = 0; i < x->n_eng[d]; i++) {
			const struct xfer_engine *e = &x->eng[d][i];
			uint64_t t;

			if (!e->submitted)
				continue;
			if (e->cfd < 0)
				return 1;	/* no descriptor: poll it */
			t = e->progress_ns + (2ull * e->longest_ms +
					      XFER_HANG_SLACK_MS) *
			    CLOCK_NS_PER_MS;
			if (t < until)
				until = t;
		}
	}
	if (until == UINT64_MAX)
		return -1;
	return until <= now ? 0 : (int)((until - now) / CLOCK_NS_PER_MS + 1);
}

/* One pass over everything; true when anything happened. */
static bool xfer_pass(struct xfer *x)
{
	bool work;

	work = xfer_reap_engines(x);
	work |= xfer_reap_copies(x);
	work |= xfer_take(x);
	work |= xfer_dispatch(x);
	xfer_hang_check(x, clock_now_ns());
	for (struct xfer_client *c = x->clients; c; c = c->next) {
		if (c->wake && c->srv) {
			xfer_server_wake(c->srv);
			c->wake = false;
		}
	}
	return work;
}

/*
 * Before sleeping: every queue asks for its doorbell, every engine with
 * parts on it for its completion descriptor; true if one has work.
 */
static bool xfer_arm(struct xfer *x)
{
	for (struct xfer_client *c = x->clients; c; c = c->next) {
		if (c->gone || !c->srv)
			continue;
		if (xfer_server_arm(c->srv))
			return true;
	}
	if (!x->ops->arm_completion)
		return false;
	for (unsigned d = 0; d < 2; d++)
		for (unsigned i = 0; i < x->n_eng[d]; i++)
			if (x->eng[d][i].cfd >= 0 &&
			    x->ops->arm_completion(x->eng[d][i].q))
				return true;
	return false;
}

static void xfer_disarm(struct xfer *x)
{
	for (struct xfer_client *c = x->clients; c; c = c->next)
		if (c->srv)
			xfer_server_disarm(c->srv);
}

/* Empty the eventfds that rang (doorbells, the wake); not the device's. */
static void xfer_drain(const struct epoll_event *ev, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t v;

		if (ev[i].data.u64 >> 32 == XFER_EV_DRAIN &&
		    read((int)(uint32_t)ev[i].data.u64, &v, sizeof(v)) < 0)
			v = 0;
	}
}

/* Parts on the engines: the thread waits for completions, not for work. */
static bool xfer_busy(const struct xfer *x)
{
	for (unsigned d = 0; d < 2; d++)
		for (unsigned i = 0; i < x->n_eng[d]; i++)
			if (x->eng[d][i].submitted)
				return true;
	return false;
}

/*
 * The transfer thread.  Between passes that find nothing it spins, then
 * sleeps on its descriptors.  The spin: [transfer] poll_us when set, else
 * the adaptive spin (spin.h), one window while parts are on the engines
 * (their completions come soon) and one while there are none (the next
 * submission comes when the client is quick).
 */
static void *xfer_main(void *arg)
{
	struct epoll_event ev[XFER_EVENTS];
	struct xfer *x = arg;
	struct spin spin[2] = { { 0 }, { 0 } };
	uint64_t idle_since = clock_now_ns();
	uint64_t poll_ns = (uint64_t)x->cfg.poll_us * 1000u;

	pthread_mutex_lock(&x->lock);
	while (!atomic_load(&x->stop)) {
		struct spin *sp;
		uint64_t now;
		int timeout, n;

		if (xfer_pass(x)) {
			idle_since = clock_now_ns();
			continue;
		}
		sp = &spin[xfer_busy(x)];
		now = clock_now_ns();
		/* Copies have no descriptor: spin while they run. */
		if (xfer_copies_pending(x) || now - idle_since < poll_ns ||
		    (!poll_ns && now - idle_since < sp->window_ns)) {
			pthread_mutex_unlock(&x->lock);
			if (poll_ns)
				futex_spin();
			else
				spin_step();
			pthread_mutex_lock(&x->lock);
			continue;
		}
		if (xfer_arm(x)) {
			xfer_disarm(x);
			continue;
		}
		timeout = xfer_sleep_ms(x, now);
		pthread_mutex_unlock(&x->lock);
		n = epoll_wait(x->epfd, ev, XFER_EVENTS, timeout);
		if (n < 0 && errno != EINTR)
			log_err("transfer: epoll_wait: %s", strerror(errno));
		xfer_drain(ev, n);
		pthread_mutex_lock(&x->lock);
		xfer_disarm(x);
		now = clock_now_ns();
		if (!poll_ns)
			spin_learn(sp, now - idle_since);
		idle_since = now;
	}
	pthread_mutex_unlock(&x->lock);
	return NULL;
}

/* --- a connection's end ------------------------------------------------------ */

void xfer_client_end(struct xfer *x, struct xfer_client *c)
{
	struct xfer_req *r, *next;

	if (c->gone)
		return;
	c->gone = true;
	c->session = NULL;
	c->token.valid = false;
	if (c->srv)
		xfer_server_raise(c->srv, FPGAD_XFER_EVENT_CLOSED);
	/* What has not started is canceled; a transfer half started ends
	   when its running parts do (the thread retires it). */
	for (r = c->ready; r; r = next) {
		next = r->next;
		if (!r->stopped) {
			r->stopped = true;
			if (!r->status) {
				r->status = -ECANCELED;
				r->fail_addr = r->sqe.card_addr + r->dispatched;
			}
		}
	}
	while (c->ready && !c->ready->parts) {
		r = c->ready;
		c->ready = r->next;
		r->on_ready = false;
		if (!c->ready)
			c->ready_tail = &c->ready;
		xfer_req_finish(x, r);
	}
	if (c->barrier) {
		r = c->barrier;
		c->barrier = NULL;
		r->status = -ECANCELED;
		r->fail_addr = r->sqe.card_addr;
		xfer_req_finish(x, r);
	}
	for (unsigned i = 0; i < c->n_slots; i++)
		if (c->bufs[i])
			xfer_buffer_kill(x, c->bufs[i]);
	xfer_client_maybe_free(x, c);
}

void xfer_session_end(struct xfer *x, const void *session)
{
	struct xfer_client *c;

	if (!x)
		return;
	pthread_mutex_lock(&x->lock);
	c = xfer_client_find(x, session);
	if (c) {
		log_debug("transfer: connection of pid %d ended", (int)c->pid);
		xfer_client_end(x, c);
	}
	pthread_mutex_unlock(&x->lock);
	/* Canceled parts still on the card complete with the thread. */
	if (c && x->thread_started)
		xfer_poke(x);
}

/* --- start and stop ---------------------------------------------------------- */

static bool xfer_engine_taken(const struct config *cfg, enum direction dir,
			      unsigned engine)
{
	for (unsigned i = 0; i < cfg->n_channels; i++)
		if (cfg->channels[i].source == SOURCE_CARD &&
		    cfg->channels[i].direction == dir &&
		    cfg->channels[i].engine == engine)
			return true;
	return false;
}

/* The lowest-numbered engines no channel drives, as many as configured. */
static int xfer_open_engines(struct xfer *x, const struct config *cfg)
{
	for (unsigned d = 0; d < 2; d++) {
		unsigned have = d == DIR_C2H ? x->info.c2h_channels :
			       x->info.h2c_channels;
		unsigned want = cfg->transfer.engines;

		for (unsigned i = 0; i < have && x->n_eng[d] < want; i++) {
			struct xfer_engine *e = &x->eng[d][x->n_eng[d]];
			int r;

			if (xfer_engine_taken(cfg, d, i))
				continue;
			r = x->ops->mem_queue_open(x->dev, d, i,
						   cfg->transfer.poll_us, &e->q);
			if (r) {
				log_err("transfer: cannot open %s engine %u: %s",
					dir_names[d], i, strerror(-r));
				return r;
			}
			e->dir = d;
			e->index = i;
			e->max = x->info.max_inflight ? x->info.max_inflight : 1;
			e->cfd = x->ops->completion_fd ?
				 x->ops->completion_fd(e->q) : -1;
			if (e->cfd >= 0 && xfer_epoll_add(x, e->cfd, false) < 0)
				e->cfd = -1;
			x->n_eng[d]++;
		}
		if (x->n_eng[d] < want)
			log_warn("transfer: [transfer] engines = %u, but only %u "
				 "%s engines are free of channels", want,
				 x->n_eng[d], dir_names[d]);
	}
	return 0;
}

/*
 * [transfer] card_regions: card memory cut into that many regions of
 * equal size, each a queue's whole address space while it lasts, scrubbed
 * when the queue ends.
 */
static int xfer_regions(struct xfer *x, const struct config *cfg)
{
	unsigned n = cfg->transfer.card_regions;

	if (!n)
		return 0;
	if (!x->info.card_memory || !x->ops->scrub) {
		char where[PATH_MAX + 16];

		log_err("%s: [transfer] card_regions = %u needs a card that states "
			"its memory and can scrub it; the %s backend does not: "
			"set card_regions = 0",
			config_where(cfg, CONFIG_TRANSFER, 0, "card_regions", where, sizeof(where)),
			n, x->ops->name);
		return -EINVAL;
	}
	x->region_size = x->info.card_memory / n / x->rules.gpu_align *
			 x->rules.gpu_align;
	if (!x->region_size) {
		char where[PATH_MAX + 16];

		log_err("%s: [transfer] card_regions = %u: regions of the card's %" PRIu64
			" bytes of memory would be below %u bytes; set card_regions to %" PRIu64
			" or less",
			config_where(cfg, CONFIG_TRANSFER, 0, "card_regions", where, sizeof(where)),
			n, x->info.card_memory, x->rules.gpu_align,
			x->info.card_memory / x->rules.gpu_align);
		return -EINVAL;
	}
	x->region_used = calloc(n, sizeof(*x->region_used));
	if (!x->region_used)
		return -ENOMEM;
	x->rules.card_memory = x->region_size;
	log_info("transfer: card memory in %u regions of %" PRIu64 " bytes, "
		 "one per queue, scrubbed when it ends", n, x->region_size);
	return 0;
}

static void xfer_rules(struct xfer *x, const struct config *cfg)
{
	uint32_t align = x->info.xfer_align ? x->info.xfer_align : 1;
	uint64_t part = x->info.max_transfer ? x->info.max_transfer :
			XFER_DEFAULT_PART;

	x->rules.card_memory = x->info.card_memory;
	x->rules.max_length = cfg->transfer.max_length;
	x->rules.part_size = part / align * align;
	x->rules.host_align = align;
	x->rules.gpu_align = align > XFER_GPU_ALIGN ? align : XFER_GPU_ALIGN;
	x->rules.max_timeout_ms = XFER_MAX_TIMEOUT_MS;
}

int xfer_start(const struct config *cfg, const struct device_ops *ops,
	       struct device *dev, struct xfer **ret_x)
{
	struct xfer *x;
	int r;

	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->ops = ops;
	x->dev = dev;
	x->cfg = cfg->transfer;
	x->dma_timeout_ms = cfg->device.dma_timeout_ms;
	snprintf(x->gpu, sizeof(x->gpu), "%s", cfg->device.gpu);
	x->epfd = -1;
	x->wake_fd = -1;
	r = -pthread_mutex_init(&x->lock, NULL);
	if (r)
		goto fail;
	x->lock_init = true;
	r = ops->info(dev, &x->info);
	if (r)
		goto fail;
	xfer_rules(x, cfg);
	r = xfer_regions(x, cfg);
	if (r)
		goto said;	/* at the line of card_regions */
	x->epfd = epoll_create1(EPOLL_CLOEXEC);
	x->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (x->epfd < 0 || x->wake_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = xfer_epoll_add(x, x->wake_fd, true);
	if (r)
		goto fail;

	if (!cfg->transfer.engines) {
		snprintf(x->why_off, sizeof(x->why_off), "[transfer] engines = 0");
	} else if (!ops->mem_queue_open) {
		snprintf(x->why_off, sizeof(x->why_off),
			 "the %s backend has no memory engines", ops->name);
	} else {
		r = xfer_open_engines(x, cfg);
		if (r)
			goto fail;
		if (!x->n_eng[DIR_C2H] && !x->n_eng[DIR_H2C])
			snprintf(x->why_off, sizeof(x->why_off),
				 "every engine drives a channel");
	}
	x->on = !x->why_off[0];
	if (!x->on) {
		log_notice("transfer: card memory transfers are off: %s",
			   x->why_off);
		*ret_x = x;
		return 0;
	}
	r = -pthread_create(&x->thread, NULL, xfer_main, x);
	if (r)
		goto fail;
	x->thread_started = true;
	pthread_setname_np(x->thread, "fpgad-xfer");
	log_info("transfer: engines c2h %u, h2c %u; card memory %" PRIu64
		 " bytes; alignment %u (GPU %u), parts of %" PRIu64 " bytes",
		 x->n_eng[DIR_C2H], x->n_eng[DIR_H2C], x->rules.card_memory,
		 x->rules.host_align, x->rules.gpu_align, x->rules.part_size);
	*ret_x = x;
	return 0;
fail:
	log_err("transfer: cannot start: %s", strerror(-r));
said:
	xfer_stop(x);
	return r;
}

/*
 * At stop: every connection ends; the parts still on the card are
 * canceled, and their transfers retired, so that every buffer is let go.
 */
static void xfer_end_all(struct xfer *x)
{
	uint64_t deadline = clock_now_ns() + 5 * CLOCK_NS_PER_SEC;

	for (struct xfer_client *c = x->clients, *next; c; c = next) {
		next = c->next;
		if (c->srv)
			xfer_server_raise(c->srv, FPGAD_XFER_EVENT_DAEMON_GONE);
		xfer_client_end(x, c);
	}
	if (!x->clients)
		return;
	for (unsigned d = 0; d < 2; d++)
		for (unsigned i = 0; i < x->n_eng[d]; i++)
			x->ops->reset(x->eng[d][i].q);
	while (x->clients && clock_now_ns() < deadline) {
		if (!xfer_reap_engines(x) && !xfer_reap_copies(x) &&
		    !xfer_dispatch(x))
			futex_spin();
	}
	if (x->clients)
		log_err("transfer: transfers still on the card at stop");
}

void xfer_stop(struct xfer *x)
{
	if (!x)
		return;
	if (x->thread_started) {
		atomic_store(&x->stop, true);
		xfer_poke(x);
		pthread_join(x->thread, NULL);
	}
	if (x->lock_init) {
		pthread_mutex_lock(&x->lock);
		xfer_end_all(x);
		pthread_mutex_unlock(&x->lock);
	}
	for (unsigned d = 0; d < 2; d++)
		for (unsigned i = 0; i < x->n_eng[d]; i++)
			x->ops->queue_close(x->eng[d][i].q);
	xfer_bounce_free(x);
	if (x->epfd >= 0)
		close(x->epfd);
	if (x->wake_fd >= 0)
		close(x->wake_fd);
	if (x->lock_init)
		pthread_mutex_destroy(&x->lock);
	free(x->region_used);
	free(x);
}

void xfer_get_stats(struct xfer *x, struct xfer_stats *ret_stats)
{
	struct xfer_stats s;

	memset(&s, 0, sizeof(s));
	s.card_memory = x->info.card_memory;
	if (!x->on)
		snprintf(s.engines, sizeof(s.engines), "none (%s)", x->why_off);
	else
		snprintf(s.engines, sizeof(s.engines), "c2h %u, h2c %u",
			 x->n_eng[DIR_C2H], x->n_eng[DIR_H2C]);
	pthread_mutex_lock(&x->lock);
	for (struct xfer_client *c = x->clients; c; c = c->next) {
		s.queues += c->srv != NULL && !c->gone;
		s.buffers += c->n_buffers;
		s.registered += c->registered;
	}
	s.transfers = x->n.transfers;
	s.bytes = x->n.bytes;
	s.resets = x->n.resets;
	memcpy(s.errors_by, x->n.errors, sizeof(s.errors_by));
	memcpy(s.refused_by, x->n.refused, sizeof(s.refused_by));
	memcpy(s.latency, x->n.latency, sizeof(s.latency));
	pthread_mutex_unlock(&x->lock);
	for (unsigned k = 0; k < XFER_ERROR_KINDS; k++)
		s.errors += s.errors_by[k];
	for (unsigned rule = 0; rule < FPGAD_XFER_RULE_COUNT; rule++)
		s.refused += s.refused_by[rule];
	*ret_stats = s;
}
