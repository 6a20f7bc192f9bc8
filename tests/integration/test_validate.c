// SPDX-License-Identifier: MIT
/*
 * test_validate.c - fpgactl validate against the simulated card: every
 * check of a healthy card passes, a leased channel is skipped and left
 * alone, a card that corrupts frames fails with what to do, and the exit
 * status follows.
 */
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fpgad.h"
#include "harness.h"

#define SMALL(name, dir, engine) \
	"[channel " name "]\ndirection = " dir "\nengine = " engine "\nslots = 4\n" \
	"slot_size = 64K\nframe_size = 64K\nmemory = host\n"
#define THREE SMALL("c2h0", "c2h", "0") SMALL("c2h1", "c2h", "1") SMALL("h2c0", "h2c", "0")

/* fpgactl validate @args on @p (--json with @json): its exit status and output. */
static int validate_args(const struct fpgad_proc *p, bool json, const char *args,
			 char *out, size_t len)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s --url %s%s validate %s 2>&1", harness_bin("fpgactl"),
		 p->url, json ? " --json" : "", args);
	return harness_run(cmd, out, len);
}

static int validate(const struct fpgad_proc *p, bool json, char *out, size_t len)
{
	return validate_args(p, json, "", out, len);
}

/* The check named @name of validate's JSON, or a failure. */
static json_t *check(json_t *j, const char *name)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(j, "checks"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "name")), name))
			return c;
	fail_msg("no check '%s'", name);
	return NULL;
}

static const char *result(json_t *j, const char *name)
{
	return json_string_value(json_object_get(check(j, name), "result"));
}

/* A healthy sim: all pass but what a sim has not; a leased channel is skipped. */
static void test_healthy_card(void **state)
{
	static char out[65536];
	struct fpgad_frame f;
	struct fpgad_proc p;
	fpgad_channel *held;
	fpgad_client *c;
	json_error_t jerr;
	json_t *j;

	(void)state;
	harness_start_ok(&p, THREE, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "c2h1", 0, &held), 0);

	assert_int_equal(validate(&p, true, out, sizeof(out)), 0);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("not JSON (%s): %s", jerr.text, out);
	assert_string_equal(result(j, "daemon"), "PASS");
	assert_string_equal(result(j, "card"), "PASS");
	assert_string_equal(result(j, "pcie link"), "SKIP");
	assert_string_equal(result(j, "kernel module"), "SKIP");
	/* The sim has no AER counters: nothing to judge, not a PASS. */
	assert_string_equal(result(j, "card PCIe errors"), "SKIP");
	assert_string_equal(json_string_value(json_object_get(check(j, "card PCIe errors"), "figure")),
			    "not available (the simulated card has no AER counters)");
	assert_string_equal(result(j, "channel c2h0"), "PASS");
	assert_string_equal(result(j, "channel h2c0"), "PASS");
	assert_string_equal(result(j, "capture c2h0"), "PASS");
	assert_string_equal(result(j, "send h2c0"), "PASS");
	assert_string_equal(result(j, "capture c2h1"), "SKIP");
	assert_non_null(strstr(json_string_value(json_object_get(check(j, "capture c2h1"), "figure")),
			       "not disturbed"));
	assert_string_equal(result(j, "card memory"), "PASS");
	assert_string_equal(result(j, "dma read (c2h)"), "PASS");
	assert_string_equal(result(j, "dma write (h2c)"), "PASS");
	assert_true(json_is_null(json_object_get(check(j, "daemon"), "advice")));
	assert_int_equal(json_integer_value(json_object_get(j, "failed")), 0);
	assert_int_equal(json_integer_value(json_object_get(j, "skipped")), 4);
	json_decref(j);

	/* The leased channel was left alone: its lease still delivers. */
	assert_int_equal(fpgad_frame_wait(held, &f, 5000), 0);
	assert_int_equal(fpgad_frame_release(held, &f), 0);

	assert_int_equal(validate(&p, false, out, sizeof(out)), 0);
	if (!strstr(out, "PASS  capture c2h0 ") || !strstr(out, "SKIP  capture c2h1 ") ||
	    !strstr(out, "SKIP  card PCIe errors     not available (the simulated card has no AER counters)\n") ||
	    !strstr(out, "validate: 10 passed, 0 failed, 4 skipped\n"))
		fail_msg("validate printed:\n%s", out);
	fpgad_channel_close(held);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* A card that corrupts what it moves: the capture fails, saying what to do; exit 1. */
static void test_corrupting_card_fails(void **state)
{
	static char out[65536];
	struct fpgad_proc p;
	json_error_t jerr;
	json_t *j, *cap;

	(void)state;
	harness_start_ok(&p, SMALL("c2h0", "c2h", "0"), "FPGAD_SIM_FAULTS=corrupt=1");
	assert_int_equal(validate(&p, true, out, sizeof(out)), 1);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("not JSON (%s): %s", jerr.text, out);
	cap = check(j, "capture c2h0");
	assert_string_equal(json_string_value(json_object_get(cap, "result")), "FAIL");
	assert_non_null(strstr(json_string_value(json_object_get(cap, "figure")),
			       "failed verification"));
	assert_true(json_is_string(json_object_get(cap, "advice")));
	assert_true(json_integer_value(json_object_get(j, "failed")) >= 1);
	json_decref(j);

	assert_int_equal(validate(&p, false, out, sizeof(out)), 1);
	if (!strstr(out, "FAIL  capture c2h0 ") || !strstr(out, "-> the data path corrupts frames"))
		fail_msg("validate printed:\n%s", out);
	harness_stop_ok(&p);
}

/* -n N: N frames captured and N sent, not one more. */
static void test_count(void **state)
{
	static char out[65536];
	struct fpgad_proc p;
	json_error_t jerr;
	json_t *j;

	(void)state;
	harness_start_ok(&p, SMALL("c2h0", "c2h", "0") SMALL("h2c0", "h2c", "0"), NULL);
	assert_int_equal(validate_args(&p, true, "-n 5", out, sizeof(out)), 0);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("not JSON (%s): %s", jerr.text, out);
	assert_non_null(strstr(json_string_value(json_object_get(check(j, "capture c2h0"), "figure")),
			       "5 frames of 65536 bytes verified"));
	assert_string_equal(json_string_value(json_object_get(check(j, "send h2c0"), "figure")),
			    "5 frames verified by the card");
	json_decref(j);
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_healthy_card),
		cmocka_unit_test(test_corrupting_card_fails),
	};

	return cmocka_run_group_tests_name("validate", tests, NULL, NULL);
}
