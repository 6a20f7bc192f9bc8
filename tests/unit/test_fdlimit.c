// SPDX-License-Identifier: MIT
/*
 * test_fdlimit.c - the descriptor budget, RLIMIT_NOFILE raised to the hard
 * limit, and the accept guard that keeps tcp connections out of the
 * reserve (this test process runs fpgad's accept()).
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
#include "control/fdlimit.h"
#include "service/log.h"

static void test_plan(void **state)
{
	struct config cfg;
	struct fd_budget b;

	(void)state;
	config_defaults(&cfg);
	/* 64 + 64 clients x (1 + 2 x 1 lease) + 8 x 1 channel */
	fdlimit_plan(&cfg, 1024, &b);
	assert_int_equal(b.nofile, 1024);
	assert_int_equal(b.reserve, 264);
	assert_int_equal(b.ceiling, 760);
	assert_int_equal(b.remote_clients, 16);

	/* The remote limit is lowered to what the descriptors allow. */
	cfg.control.max_remote_clients = 4096;
	fdlimit_plan(&cfg, 1024, &b);
	assert_int_equal(b.remote_clients, 760);
	cfg.control.max_clients = 8;
	fdlimit_plan(&cfg, 256, &b);
	assert_int_equal(b.reserve, 64 + 8 * 3 + 8);
	assert_int_equal(b.ceiling, 256 - 96);
	assert_int_equal(b.remote_clients, 160);
	/* Leases one client can hold: min(max_leases, channels). */
	cfg.n_channels = 4;
	cfg.control.max_leases = 2;
	fdlimit_plan(&cfg, 256, &b);
	assert_int_equal(b.reserve, 64 + 8 * (1 + 2 * 2) + 8 * 4);
	/* No room at all: remote gets nothing, the reserve stays whole. */
	fdlimit_plan(&cfg, 100, &b);
	assert_int_equal(b.ceiling, 0);
	assert_int_equal(b.remote_clients, 0);

	/* The metrics listener's connections come out of the same room,
	 * twice: the accept guard keeps a duplicate of each. */
	config_defaults(&cfg);
	cfg.control.max_remote_clients = 4096;
	snprintf(cfg.metrics.listen, sizeof(cfg.metrics.listen), "http://0.0.0.0:9110/metrics");
	cfg.metrics.max_clients = 10;
	fdlimit_plan(&cfg, 1024, &b);
	assert_int_equal(b.reserve, 264);
	assert_int_equal(b.remote_clients, 760 - 2 * 10);
	fdlimit_plan(&cfg, 270, &b);
	assert_int_equal(b.remote_clients, 0);
}

static void test_raise(void **state)
{
	struct rlimit rl, was;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &was), 0);
	if (was.rlim_max < 128) {
		print_message("skipped: hard RLIMIT_NOFILE %llu is too low to lower\n",
			      (unsigned long long)was.rlim_max);
		skip();
	}
	rl = was;
	rl.rlim_cur = 64;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &rl), 0);
	log_level = LOG_WARNING;	/* "raised" is news at start only */
	assert_true(fdlimit_raise() > 64);
	log_level = LOG_INFO;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &rl), 0);
	assert_true(rl.rlim_cur > 64);
	assert_int_equal(rl.rlim_cur, rl.rlim_max == RLIM_INFINITY ? rl.rlim_cur : rl.rlim_max);
	setrlimit(RLIMIT_NOFILE, &was);
}

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

/* The number the next descriptor will get. */
static int next_fd(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	close(fd);
	return fd;
}

static void test_guard_tcp(void **state)
{
	struct sockaddr_in sa;
	int l, c, a;
	char b;

	(void)state;
	log_level = LOG_ERR;	/* the refusal is a warning */
	l = tcp_listener(&sa);
	c = tcp_connect(&sa);
	/* The next descriptor is at the ceiling: refused, closed at once. */
	fdlimit_guard((unsigned long)next_fd());
	errno = 0;
	assert_int_equal(accept(l, NULL, NULL), -1);
	assert_int_equal(errno, ECONNABORTED);
	assert_true(read(c, &b, 1) <= 0);
	close(c);

	/* One below the ceiling is fine. */
	c = tcp_connect(&sa);
	fdlimit_guard((unsigned long)next_fd() + 1);
	a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	assert_true(a >= 0);
	close(a);
	close(c);

	fdlimit_guard(ULONG_MAX);
	close(l);
	log_level = LOG_INFO;
}

/*
 * A capped listener: connections beyond its limit are closed at once,
 * one that closed frees its place (also when its descriptor number is
 * reused at once), and other listeners are not counted.
 */
static void test_cap(void **state)
{
	struct sockaddr_in sa, sa2;
	int l, l2, c[6], a[6], x, y;
	char b;

	(void)state;
	log_level = LOG_ERR;	/* the refusal is a warning */
	l = tcp_listener(&sa);
	l2 = tcp_listener(&sa2);
	fdlimit_cap((struct sockaddr *)&sa, sizeof(sa), 2, "test", "max_test");
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
	fdlimit_cap_set(3, 0, 0);
	c[5] = tcp_connect(&sa);
	a[3] = accept(l, NULL, NULL);
	assert_true(a[3] >= 0);

	/* Lifted: no count at all. */
	fdlimit_cap(NULL, 0, 0, NULL, NULL);
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

/* Local (AF_UNIX) connections are never refused: they use the reserve. */
static void test_guard_unix_passes(void **state)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int l, c, a;

	(void)state;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/tmp/fpgad-test-fdlimit.%d", getpid());
	unlink(sa.sun_path);
	l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(l, 8), 0);
	c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	fdlimit_guard(0);
	a = accept(l, NULL, NULL);
	assert_true(a >= 0);
	fdlimit_guard(ULONG_MAX);
	close(a);
	close(c);
	close(l);
	unlink(sa.sun_path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan),
		cmocka_unit_test(test_raise),
		cmocka_unit_test(test_guard_tcp),
		cmocka_unit_test(test_guard_unix_passes),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests_name("fdlimit", tests, NULL, NULL);
}
