// SPDX-License-Identifier: MIT
/* session.c - the table of control connections. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "session.h"

int session_add(struct session_table *t, const struct peer *p,
		struct session **ret_s)
{
	struct session *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->peer = *p;
	s->connected_ms = clock_realtime_ms();
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

void session_remove(struct session_table *t, struct session *s)
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

void session_table_clear(struct session_table *t)
{
	while (t->head)
		session_remove(t, t->head);
}

const struct cached_reply *session_cached(const struct session *s, uint64_t id)
{
	for (unsigned i = 0; i < SESSION_REPLY_CACHE; i++)
		if (s->cache[i].buf && s->cache[i].id == id)
			return &s->cache[i];
	return NULL;
}

int session_cache(struct session *s, uint64_t id, const void *buf, size_t len)
{
	struct cached_reply *c = &s->cache[s->cache_next];
	void *copy = malloc(len ? len : 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	free(c->buf);
	c->id = id;
	c->buf = copy;
	c->len = len;
	s->cache_next = (s->cache_next + 1) % SESSION_REPLY_CACHE;
	return 0;
}
