// SPDX-License-Identifier: MIT
/* test_session.c - the connection table and the resend reply cache. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "control/session.h"

static void test_add_find_remove(void **state)
{
	struct session_table t = { 0 };
	struct peer p = { .pipe_id = 5, .uid = 1000, .pid = 77, .creds = true };
	struct session *a, *b;

	(void)state;
	assert_int_equal(session_get(&t, &p, &a), 0);
	p.pipe_id = 6;
	assert_int_equal(session_get(&t, &p, &b), 0);
	assert_int_equal(t.count, 2);
	assert_ptr_equal(session_find(&t, 5), a);
	assert_ptr_equal(session_find(&t, 6), b);
	assert_null(session_find(&t, 7));
	assert_int_equal(a->peer.uid, 1000);
	assert_true(a->connected_ms > 0);
	/* A second lookup finds the same session. */
	p.pipe_id = 5;
	assert_int_equal(session_get(&t, &p, &b), 0);
	assert_ptr_equal(b, a);
	session_gone(&t, 5);
	assert_int_equal(t.count, 1);
	assert_null(session_find(&t, 5));
	/* A late request of a connection that went away gets no session. */
	assert_int_equal(session_get(&t, &p, &a), 0);
	assert_null(a);
	assert_int_equal(t.count, 1);
	session_table_clear(&t);
	assert_int_equal(t.count, 0);
	assert_null(t.head);
}

static void test_reply_cache(void **state)
{
	struct session_table t = { 0 };
	struct peer p = { .pipe_id = 1 };
	const struct cached_reply *c;
	struct session *s;
	char buf[16], req[16];

	(void)state;
	assert_int_equal(session_get(&t, &p, &s), 0);
	assert_null(session_cached(s, 1, "req1", 4));
	assert_int_equal(session_cache(s, 1, "req1", 4, "one", 3), 0);
	c = session_cached(s, 1, "req1", 4);
	assert_non_null(c);
	assert_int_equal(c->len, 3);
	assert_memory_equal(c->buf, "one", 3);
	/* The cache keeps the newest SESSION_REPLY_CACHE replies. */
	for (unsigned i = 2; i < 2 + SESSION_REPLY_CACHE; i++) {
		snprintf(buf, sizeof(buf), "r%u", i);
		snprintf(req, sizeof(req), "req%u", i);
		assert_int_equal(session_cache(s, i, req, strlen(req), buf, strlen(buf)), 0);
	}
	assert_null(session_cached(s, 1, "req1", 4));
	snprintf(req, sizeof(req), "req%u", 1 + SESSION_REPLY_CACHE);
	c = session_cached(s, 1 + SESSION_REPLY_CACHE, req, strlen(req));
	assert_non_null(c);
	snprintf(buf, sizeof(buf), "r%u", 1 + SESSION_REPLY_CACHE);
	assert_memory_equal(c->buf, buf, strlen(buf));
	session_table_clear(&t);
}

/* A resend is the same id with the same bytes; nothing else is. */
static void test_resend_needs_same_bytes(void **state)
{
	struct session_table t = { 0 };
	struct peer p = { .pipe_id = 1 };
	struct session *s;

	(void)state;
	assert_int_equal(session_get(&t, &p, &s), 0);
	assert_int_equal(session_cache(s, 7, "open c2h0", 9, "granted c2h0", 12), 0);
	assert_non_null(session_cached(s, 7, "open c2h0", 9));
	/* The same id for another request: not a resend. */
	assert_null(session_cached(s, 7, "open h2c0", 9));
	assert_null(session_cached(s, 7, "open c2h0 ", 10));
	assert_null(session_cached(s, 7, "open c2h", 8));
	/* Another id with the same bytes: not a resend either. */
	assert_null(session_cached(s, 8, "open c2h0", 9));
	session_table_clear(&t);
}

/* Id 0 means "no id": never cached, never answered from the cache. */
static void test_id_zero_is_never_cached(void **state)
{
	struct session_table t = { 0 };
	struct peer p = { .pipe_id = 1 };
	struct session *s;

	(void)state;
	assert_int_equal(session_get(&t, &p, &s), 0);
	assert_int_equal(session_cache(s, 0, "open c2h0", 9, "granted", 7), 0);
	assert_null(session_cached(s, 0, "open c2h0", 9));
	for (unsigned i = 0; i < SESSION_REPLY_CACHE; i++)
		assert_null(s->cache[i].buf);
	session_table_clear(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_find_remove),
		cmocka_unit_test(test_reply_cache),
		cmocka_unit_test(test_resend_needs_same_bytes),
		cmocka_unit_test(test_id_zero_is_never_cached),
	};

	return cmocka_run_group_tests_name("session", tests, NULL, NULL);
}
