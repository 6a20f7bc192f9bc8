// SPDX-License-Identifier: MIT
/*
 * xfer_client.c - a connection's transfer state (xfer_impl.h): made by
 * its first request, its transfer queue and the handoff that delivers it,
 * and the state freed once the connection is gone (xfer_client_end, in
 * xfer_thread.c) and no transfer of it runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "control/fdclose.h"
#include "log.h"
#include "xfer/xfer_impl.h"

struct xfer_client *xfer_client_find(struct xfer *x, const void *session)
{
	if (!session)
		return NULL;
	for (struct xfer_client *c = x->clients; c; c = c->next)
		if (c->session == session)
			return c;
	return NULL;
}

struct xfer_client *xfer_client_get(struct xfer *x,
					   const struct xfer_who *who)
{
	struct xfer_client *c = xfer_client_find(x, who->session);

	if (c)
		return c;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->x = x;
	c->session = who->session;
	c->pid = who->pid;
	c->uid = who->uid;
	c->link_fd = -1;
	c->region = -1;
	c->ready_tail = &c->ready;
	c->next = x->clients;
	x->clients = c;
	return c;
}

/* A free card region for @c's queue (x->lock held): 0 or -EBUSY. */
static int xfer_region_take(struct xfer *x, struct xfer_client *c,
			    char *err, size_t errlen)
{
	unsigned n = x->cfg.card_regions;

	for (unsigned i = 0; i < n; i++) {
		if (x->region_used[i])
			continue;
		x->region_used[i] = true;
		c->region = (int)i;
		c->card_base = (uint64_t)i * x->region_size;
		return 0;
	}
	snprintf(err, errlen, "card memory: all %u regions are in use "
		 "([transfer] card_regions)", n);
	return -EBUSY;
}

/*
 * @c's region back, scrubbed first: the next queue must not read what
 * this one wrote.  No transfer of @c is on the card any more.
 */
static void xfer_region_put(struct xfer *x, struct xfer_client *c)
{
	int r;

	if (c->region < 0)
		return;
	r = x->ops->scrub(x->dev, c->card_base, x->region_size);
	if (r) {
		/* Kept out of use rather than handed on unscrubbed. */
		log_err("transfer: cannot scrub card region %d: %s; it stays "
			"out of use", c->region, strerror(-r));
		return;
	}
	x->region_used[c->region] = false;
}

void xfer_client_maybe_free(struct xfer *x, struct xfer_client *c)
{
	int memfd, doorbell;

	if (!c->gone || c->outstanding)
		return;
	for (struct xfer_client **pp = &x->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	if (c->srv) {
		xfer_server_fds(c->srv, &memfd, &doorbell);
		epoll_ctl(x->epfd, EPOLL_CTL_DEL, doorbell, NULL);
		xfer_server_free(c->srv);
	}
	xfer_region_put(x, c);
	/* The client sees its link hang up: the queue is over. */
	fdclose_untrusted(c->link_fd);
	free(c->bufs);
	free(c->gens);
	free(c);
}

void xfer_session_stats(struct xfer *x, const void *session,
			unsigned *ret_buffers, uint64_t *ret_bytes)
{
	struct xfer_client *c;

	*ret_buffers = 0;
	*ret_bytes = 0;
	if (!x)
		return;
	pthread_mutex_lock(&x->lock);
	c = xfer_client_find(x, session);
	if (c) {
		*ret_buffers = c->n_buffers;
		*ret_bytes = c->registered;
	}
	pthread_mutex_unlock(&x->lock);
}

int xfer_open_queue(struct xfer *x, const struct xfer_who *who,
		    struct xfer_queue_grant *ret_grant, char *err,
		    size_t errlen)
{
	struct xfer_client *c;
	char hint[48];
	int memfd, doorbell, r;

	if (!x->on) {
		snprintf(err, errlen, "card memory transfers are off: %s",
			 x->why_off);
		return -ENODEV;
	}
	pthread_mutex_lock(&x->lock);
	c = xfer_client_get(x, who);
	if (!c) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	if (c->srv) {
		r = -EALREADY;
		snprintf(err, errlen, "this connection has its transfer queue already");
		goto out;
	}
	if (x->region_used) {
		r = xfer_region_take(x, c, err, errlen);
		if (r)
			goto out;
	}
	snprintf(hint, sizeof(hint), "fpgad-xfer-%d", (int)who->pid);
	r = xfer_server_create(x->cfg.queue_entries, &x->rules, hint, &c->srv);
	if (!r)
		r = handoff_token_make(&c->token);
	if (!r) {
		xfer_server_fds(c->srv, &memfd, &doorbell);
		r = xfer_epoll_add(x, doorbell, true);
	}
	if (r) {
		snprintf(err, errlen, "cannot make the transfer queue: %s",
			 strerror(-r));
		xfer_server_free(c->srv);
		c->srv = NULL;
		xfer_region_put(x, c);
		c->region = -1;
		goto out;
	}
	memset(ret_grant, 0, sizeof(*ret_grant));
	memcpy(ret_grant->token, c->token.bytes, sizeof(ret_grant->token));
	ret_grant->size = xfer_server_size(c->srv);
	ret_grant->entries = x->cfg.queue_entries;
	log_info("transfer: queue of %u entries for pid %d (uid %u)",
		 x->cfg.queue_entries, (int)who->pid, (unsigned)who->uid);
out:
	pthread_mutex_unlock(&x->lock);
	return r;
}

int xfer_client_claim(struct xfer *x, const uint8_t *token,
		      const struct handoff_peer *peer, int *ret_fds,
		      unsigned *ret_n_fds, void **ret_target, char *err,
		      size_t errlen)
{
	int r;

	for (struct xfer_client *c = x->clients; c; c = c->next) {
		r = handoff_token_claim(&c->token, token, peer, c->pid, c->uid,
					"the transfer queue", err, errlen);
		if (r == -ENOENT)
			continue;
		if (r)
			return r;
		xfer_server_fds(c->srv, &ret_fds[0], &ret_fds[1]);
		*ret_n_fds = 2;
		*ret_target = c;
		return 0;
	}
	return -ENOENT;
}

bool xfer_link(struct xfer *x, void *target, int fd)
{
	bool ours = false;
	int old = -1;

	if (!x)
		return false;
	pthread_mutex_lock(&x->lock);
	if (target == x) {
		/* A buffer's handoff: nothing to keep. */
		old = fd;
		ours = true;
	}
	for (struct xfer_client *c = x->clients; c && !ours; c = c->next) {
		if (c != target)
			continue;
		old = c->link_fd;
		c->link_fd = fd;
		ours = true;
	}
	pthread_mutex_unlock(&x->lock);
	/* With nothing held. */
	fdclose_untrusted(old);
	return ours;
}
