// SPDX-License-Identifier: MIT
/*
 * liveness.c - a client of fpgad's own ipc listener, on the loop
 * (liveness.h): connect and send the SP header of a REQ socket.  nng's
 * transport goes on accepting and answering the header for a stopped
 * listener; only the socket stops taking the connections in.  So the
 * probe is answered when its connection reached the socket
 * (liveness_added(), from control.c's ADD_PRE, which closes it), and
 * dead once LIVENESS_WAIT_MS passed without that.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "clock.h"
#include "control/liveness.h"

/* An SP header: "\0SP\0", the protocol (REQ v0, 0x30), two zero bytes. */
#define SP_HEADER_LEN 8
static const char sp_req_header[SP_HEADER_LEN] = { 0, 'S', 'P', 0, 0, 0x30, 0, 0 };

struct probe {
	uv_pipe_t pipe;
	uv_connect_t connect;
	uv_write_t write;
	char in[64];
	struct liveness *lv;	/* NULL once detached: its owner is gone */
	bool closing;
};

struct liveness {
	uv_timer_t timer;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	void (*dead)(void *user);
	void *user;
	struct probe *cur;	/* the probe's handle, while open */
	uint64_t since_ns;	/* when the unanswered probe began; 0: none */
	atomic_uint added;	/* probes that reached the socket */
	unsigned added_before;	/* ... when this one began */
};

void liveness_added(struct liveness *lv)
{
	atomic_fetch_add(&lv->added, 1);
}

static void probe_closed(uv_handle_t *h)
{
	struct probe *p = h->data;

	if (p->lv && p->lv->cur == p)
		p->lv->cur = NULL;
	free(p);
}

static void probe_close(struct probe *p)
{
	if (p->closing)
		return;
	p->closing = true;
	uv_close((uv_handle_t *)&p->pipe, probe_closed);
}

static void probe_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct probe *p = h->data;

	(void)hint;
	*buf = uv_buf_init(p->in, sizeof(p->in));
}

static void probe_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct probe *p = s->data;

	/* The header back, then the close that follows ADD_PRE. */
	(void)buf;
	if (n < 0)
		probe_close(p);
}

static void probe_written(uv_write_t *w, int status)
{
	struct probe *p = w->data;

	if (status < 0)
		probe_close(p);
}

static void probe_connected(uv_connect_t *c, int status)
{
	struct probe *p = c->data;
	uv_buf_t b = uv_buf_init((char *)sp_req_header, sizeof(sp_req_header));

	if (status < 0 || p->closing) {
		probe_close(p);
		return;
	}
	p->write.data = p;
	if (uv_write(&p->write, (uv_stream_t *)&p->pipe, &b, 1, probe_written) < 0 ||
	    uv_read_start((uv_stream_t *)&p->pipe, probe_alloc, probe_read) < 0)
		probe_close(p);
}

static void probe_start(struct liveness *lv)
{
	struct probe *p = calloc(1, sizeof(*p));

	/* Without memory (or a handle) now, this probe counts as unanswered. */
	lv->since_ns = clock_now_ns();
	lv->added_before = atomic_load(&lv->added);
	if (!p)
		return;
	if (uv_pipe_init(lv->timer.loop, &p->pipe, 0) < 0) {
		free(p);
		return;
	}
	p->lv = lv;
	p->pipe.data = p;
	p->connect.data = p;
	lv->cur = p;
	uv_pipe_connect(&p->connect, &p->pipe, lv->path, probe_connected);
}

static void timer_closed(uv_handle_t *h)
{
	free(h->data);
}

static void tick(uv_timer_t *t)
{
	struct liveness *lv = t->data;
	uint64_t now = clock_now_ns();

	bool answered;

	if (!lv->since_ns) {
		probe_start(lv);
		return;
	}
	answered = atomic_load(&lv->added) != lv->added_before;
	if (!answered && now - lv->since_ns < (uint64_t)LIVENESS_WAIT_MS * CLOCK_NS_PER_MS)
		return;
	lv->since_ns = 0;
	if (lv->cur) {
		lv->cur->lv = NULL;
		probe_close(lv->cur);
		lv->cur = NULL;
	}
	if (!answered)
		lv->dead(lv->user);
}

int liveness_start(uv_loop_t *loop, const char *path,
		   void (*dead)(void *user), void *user,
		   struct liveness **ret)
{
	struct liveness *lv;
	int r;

	lv = calloc(1, sizeof(*lv));
	if (!lv)
		return -ENOMEM;
	if ((size_t)snprintf(lv->path, sizeof(lv->path), "%s", path) >= sizeof(lv->path)) {
		free(lv);
		return -ENAMETOOLONG;
	}
	lv->dead = dead;
	lv->user = user;
	r = uv_timer_init(loop, &lv->timer);
	if (r < 0) {
		free(lv);
		return r;
	}
	lv->timer.data = lv;
	r = uv_timer_start(&lv->timer, tick, LIVENESS_EVERY_MS, LIVENESS_EVERY_MS);
	if (r < 0) {
		uv_close((uv_handle_t *)&lv->timer, timer_closed);
		return r;
	}
	*ret = lv;
	return 0;
}

void liveness_stop(struct liveness *lv)
{
	if (!lv)
		return;
	uv_timer_stop(&lv->timer);
	if (lv->cur) {
		lv->cur->lv = NULL;
		probe_close(lv->cur);
		lv->cur = NULL;
	}
	uv_close((uv_handle_t *)&lv->timer, timer_closed);
}
