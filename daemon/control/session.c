// SPDX-License-Identifier: MIT
/* session.c - the table of control connections (session.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "control/identity.h"
#include "control/session.h"

static int session_add(struct session_table *t, const struct peer *p,
		       struct session **ret_s)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->peer = *p;
	s->connected_ms = clock_realtime_ms();
	if (p->creds)
		identity_read(p->pid, &s->who);
	s->next = t->head;
	t->head = s;
	t->count++;
	*ret_s = s;
	return 0;
}

struct session *session_find(struct session_table *t, uint32_t pipe_id)
{
	for (struct session *s = t->head; s; s = s->next)
		if (s->peer.pipe_id == pipe_id)
			return s;
	return NULL;
}

static void session_free(struct session *s)
{
	for (unsigned i = 0; i < SESSION_REPLY_CACHE; i++)
		free(s->cache[i].buf);
	free(s);
}

static void session_remove(struct session_table *t, struct session *s)
{
	for (struct session **pp = &t->head; *pp; pp = &(*pp)->next) {
		if (*pp == s) {
			*pp = s->next;
			t->count--;
			session_free(s);
			return;
		}
	}
}

static bool recently_removed(const struct session_table *t, uint32_t pipe_id)
{
	for (unsigned i = 0; i < SESSION_REMOVED_PIPES; i++)
		if (t->removed[i] == pipe_id)
			return true;
	return false;
}

int session_get(struct session_table *t, const struct peer *p,
		struct session **ret_s)
{
	struct session *s = session_find(t, p->pipe_id);
	int r;

	if (s || recently_removed(t, p->pipe_id)) {
		*ret_s = s;
		return 0;
	}
	r = session_add(t, p, &s);
	if (r < 0)
		return r;
	*ret_s = s;
	return 0;
}

void session_gone(struct session_table *t, uint32_t pipe_id)
{
	struct session *s = session_find(t, pipe_id);

	t->removed[t->removed_next] = pipe_id;
	t->removed_next = (t->removed_next + 1) % SESSION_REMOVED_PIPES;
	if (s)
		session_remove(t, s);
}

void session_table_clear(struct session_table *t)
{
	while (t->head)
		session_remove(t, t->head);
}

/* FNV-1a, 64 bits: tells a resend from another request with its id. */
static uint64_t request_hash(const void *req, size_t len)
{
	const uint8_t *p = req;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

const struct cached_reply *session_cached(const struct session *s, uint64_t id,
					  const void *req, size_t req_len)
{
	uint64_t h;

	if (id == 0)
		return NULL;
	h = request_hash(req, req_len);
	for (unsigned i = 0; i < SESSION_REPLY_CACHE; i++) {
		const struct cached_reply *c = &s->cache[i];

		if (c->buf && c->id == id && c->req_len == req_len && c->hash == h)
			return c;
	}
	return NULL;
}

int session_cache(struct session *s, uint64_t id, const void *req,
		  size_t req_len, const void *buf, size_t len)
{
	struct cached_reply *c = &s->cache[s->cache_next];
	void *copy;

	if (id == 0)
		return 0;
	copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	free(c->buf);
	c->id = id;
	c->hash = request_hash(req, req_len);
	c->req_len = req_len;
	c->buf = copy;
	c->len = len;
	s->cache_next = (s->cache_next + 1) % SESSION_REPLY_CACHE;
	return 0;
}
