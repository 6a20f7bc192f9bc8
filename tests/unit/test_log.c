// SPDX-License-Identifier: MIT
/* test_log.c - the log line format and the rate limiter's token bucket. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "clock.h"
#include "log.h"

static char path[64];
static int saved_stderr = -1;

/* Send stderr to a file for the length of a test. */
static int capture(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/fpgad-test-log.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fd, 2);
	close(fd);
	return 0;
}

static int release(void **state)
{
	(void)state;
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	unlink(path);
	return 0;
}

/* The lines written so far, and how many contain @what. */
static unsigned lines_with(const char *what, unsigned *ret_total)
{
	char line[1100];
	unsigned n = 0, total = 0;
	FILE *f;

	fflush(stderr);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		total++;
		n += strstr(line, what) != NULL;
	}
	fclose(f);
	if (ret_total)
		*ret_total = total;
	return n;
}

static void test_priority_prefix(void **state)
{
	unsigned total;

	(void)state;
	log_level = LOG_INFO;
	log_msg(LOG_NOTICE, "hello %d", 7);
	log_debug("not shown");
	assert_int_equal(lines_with("<5>hello 7", &total), 1);
	assert_int_equal(total, 1);
}

static void test_limited_burst_then_suppressed(void **state)
{
	struct log_limit ll;
	unsigned total;

	(void)state;
	log_level = LOG_INFO;
	log_limit_init(&ll, "bad requests");
	for (int i = 0; i < 20000; i++)
		log_limited(&ll, LOG_NOTICE, "junk %d", i);
	/* A burst goes through; the rest is counted, not written. */
	assert_int_equal(lines_with("junk", &total), LOG_LIMIT_BURST);
	assert_int_equal(total, LOG_LIMIT_BURST);
	assert_int_equal(ll.suppressed, 20000 - LOG_LIMIT_BURST);

	/* One interval later one more line, after the count of the rest. */
	ll.last_ns -= LOG_LIMIT_INTERVAL_MS * CLOCK_NS_PER_MS;
	log_limited(&ll, LOG_NOTICE, "junk again");
	assert_int_equal(lines_with("<5>bad requests: 19990 similar messages suppressed", NULL), 1);
	assert_int_equal(lines_with("<5>junk again", &total), 1);
	assert_int_equal(total, LOG_LIMIT_BURST + 2);
	assert_int_equal(ll.suppressed, 0);
	/* Spent again at once. */
	log_limited(&ll, LOG_NOTICE, "junk held");
	assert_int_equal(lines_with("junk held", NULL), 0);
	log_limit_destroy(&ll);
}

/* A quiet kind fills up again, to the burst and no more. */
static void test_limited_refills_to_burst(void **state)
{
	struct log_limit ll = LOG_LIMIT_INIT("quiet");
	unsigned total;

	(void)state;
	log_level = LOG_INFO;
	for (int i = 0; i < LOG_LIMIT_BURST; i++)
		log_limited(&ll, LOG_WARNING, "first %d", i);
	ll.last_ns -= 1000ull * LOG_LIMIT_INTERVAL_MS * CLOCK_NS_PER_MS;
	for (int i = 0; i < 3 * LOG_LIMIT_BURST; i++)
		log_limited(&ll, LOG_WARNING, "second %d", i);
	assert_int_equal(lines_with("second", &total), LOG_LIMIT_BURST);
	assert_int_equal(total, 2 * LOG_LIMIT_BURST);
	/* Below the log level nothing is counted either. */
	log_level = LOG_WARNING;
	log_limited(&ll, LOG_NOTICE, "quiet notice");
	assert_int_equal(ll.suppressed, 2 * LOG_LIMIT_BURST);
	log_level = LOG_INFO;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_priority_prefix, capture, release),
		cmocka_unit_test_setup_teardown(test_limited_burst_then_suppressed,
						capture, release),
		cmocka_unit_test_setup_teardown(test_limited_refills_to_burst,
						capture, release),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
