// SPDX-License-Identifier: MIT
/*
 * test_accept_guard.c - fpgad-exporter's accept guard: the guarded
 * listener's connections are counted where they are accepted, the one
 * over the limit is closed at once, and every other socket passes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "config/config.h"
#include "accept_guard.h"
#include "log.h"

static int tcp_listener(struct sockaddr_in *ret_sa)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 8), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	*ret_sa = sa;
	return fd;
}

static int tcp_connect(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (const struct sockaddr *)sa, sizeof(*sa)), 0);
	return fd;
}

/*
 * A capped listener: connections beyond its limit are closed at once,
 * one that closed frees its place (also when its descriptor number is
 * reused at once), and other listeners are not counted.
 */
static void test_cap(void **state)
{
	const struct accept_limits two = { .max = 2 }, three = { .max = 3 };
	struct sockaddr_in sa, sa2;
	int l, l2, c[6], a[6], x, y;
	char b;

	(void)state;
	log_level = LOG_ERR;	/* the refusal is a warning */
	l = tcp_listener(&sa);
	l2 = tcp_listener(&sa2);
	accept_guard((struct sockaddr *)&sa, sizeof(sa), &two, "test");
	c[0] = tcp_connect(&sa);
	c[1] = tcp_connect(&sa);
	c[2] = tcp_connect(&sa);
	a[0] = accept(l, NULL, NULL);
	a[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	assert_true(a[0] >= 0 && a[1] >= 0);
	errno = 0;
	assert_int_equal(accept(l, NULL, NULL), -1);
	assert_int_equal(errno, ECONNABORTED);
	assert_true(read(c[2], &b, 1) <= 0);

	/* Another listener is not counted. */
	x = tcp_connect(&sa2);
	y = accept(l2, NULL, NULL);
	assert_true(y >= 0);

	/* A closed connection frees its place; its number comes back. */
	c[3] = tcp_connect(&sa);
	close(a[0]);
	a[2] = accept(l, NULL, NULL);
	assert_int_equal(a[2], a[0]);
	c[4] = tcp_connect(&sa);
	assert_int_equal(accept(l, NULL, NULL), -1);

	/* A higher limit applies to the next connection. */
	accept_guard((struct sockaddr *)&sa, sizeof(sa), &three, "test");
	/* A new limit: counting starts again from there. */
	c[5] = tcp_connect(&sa);
	a[3] = accept(l, NULL, NULL);
	assert_true(a[3] >= 0);

	/* Lifted: no count at all. */
	accept_guard(NULL, 0, NULL, NULL);
	close(c[4]);
	c[4] = tcp_connect(&sa);
	a[4] = accept(l, NULL, NULL);
	assert_true(a[4] >= 0);

	for (unsigned i = 0; i < 6; i++)
		close(c[i]);
	close(a[1]);
	close(a[2]);
	close(a[3]);
	close(a[4]);
	close(x);
	close(y);
	close(l);
	close(l2);
	log_level = LOG_INFO;
}

/* Local (AF_UNIX) connections are never counted or refused. */
static void test_guard_unix_passes(void **state)
{
	const struct accept_limits one = { .max = 1 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct sockaddr_in one_addr = { .sin_family = AF_INET };
	int l, c, a;

	(void)state;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/fpgad-test-guard.%d", getpid());
	unlink(sa.sun_path);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 8), 0);
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	accept_guard((struct sockaddr *)&one_addr, sizeof(one_addr), &one, "test");
	a = accept(l, NULL, NULL);
	assert_true(a >= 0);
	accept_guard(NULL, 0, NULL, NULL);
	close(a);
	close(c);
	close(l);
	unlink(sa.sun_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cap),
		cmocka_unit_test(test_guard_unix_passes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
