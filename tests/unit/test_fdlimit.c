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
#include "log.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
