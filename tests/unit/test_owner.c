// SPDX-License-Identifier: MIT
/*
 * test_owner.c - last-owner tracking of registered buffers (client/owner.c)
 * as a transition table: from each state, each writer and each view asked
 * for, which copy the library makes (or none) and the state after it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "client_internal.h"

enum ev { WROTE_CARD, WROTE_GPU, WROTE_HOST, NEED_HOST, NEED_DEVICE };

#define D OWNER_DEVICE
#define H OWNER_HOST

struct row {
	uint8_t valid;		/* before */
	enum ev ev;
	enum owner_copy copy;	/* the copy it takes (NEED_*) */
	uint8_t after;
};

/* A GPU buffer: two places, the device and the host view. */
static const struct row gpu[] = {
	/* The card wrote: only the device holds the bytes. */
	{ D | H, WROTE_CARD, OWNER_NO_COPY, D },
	{ H, WROTE_CARD, OWNER_NO_COPY, D },
	{ D, WROTE_CARD, OWNER_NO_COPY, D },
	/* A kernel wrote: the same. */
	{ D | H, WROTE_GPU, OWNER_NO_COPY, D },
	{ H, WROTE_GPU, OWNER_NO_COPY, D },
	/* The host view was written: only the host holds them. */
	{ D | H, WROTE_HOST, OWNER_NO_COPY, H },
	{ D, WROTE_HOST, OWNER_NO_COPY, H },
	/* A host view: copied only when stale. */
	{ D, NEED_HOST, OWNER_TO_HOST, D | H },
	{ D | H, NEED_HOST, OWNER_NO_COPY, D | H },
	{ H, NEED_HOST, OWNER_NO_COPY, H },
	/* The device before the card reads it: copied only when stale. */
	{ H, NEED_DEVICE, OWNER_TO_DEVICE, D | H },
	{ D | H, NEED_DEVICE, OWNER_NO_COPY, D | H },
	{ D, NEED_DEVICE, OWNER_NO_COPY, D },
};

static void run(const struct row *rows, size_t n, bool one_place)
{
	for (size_t i = 0; i < n; i++) {
		struct owner o;
		enum owner_copy copy = OWNER_NO_COPY;

		owner_init(&o, one_place);
		o.valid = rows[i].valid;
		switch (rows[i].ev) {
		case WROTE_CARD:
			owner_wrote(&o, FPGAD_WRITER_CARD);
			break;
		case WROTE_GPU:
			owner_wrote(&o, FPGAD_WRITER_GPU);
			break;
		case WROTE_HOST:
			owner_wrote(&o, FPGAD_WRITER_HOST);
			break;
		case NEED_HOST:
		case NEED_DEVICE:
			copy = owner_need(&o, rows[i].ev == NEED_HOST ?
					  OWNER_HOST : OWNER_DEVICE);
			owner_copied(&o, copy);
			break;
		}
		if (copy != rows[i].copy || o.valid != rows[i].after)
			fail_msg("row %zu: copy %d valid %#x, want %d %#x", i,
				 copy, o.valid, rows[i].copy, rows[i].after);
	}
}

static void test_gpu_buffer(void **state)
{
	(void)state;
	run(gpu, sizeof(gpu) / sizeof(gpu[0]), false);
}

/* Host memory is its own view: whoever writes, no copy, ever. */
static void test_host_buffer(void **state)
{
	static const struct row host[] = {
		{ D | H, WROTE_CARD, OWNER_NO_COPY, D | H },
		{ D | H, WROTE_GPU, OWNER_NO_COPY, D | H },
		{ D | H, WROTE_HOST, OWNER_NO_COPY, D | H },
		{ D | H, NEED_HOST, OWNER_NO_COPY, D | H },
		{ D | H, NEED_DEVICE, OWNER_NO_COPY, D | H },
	};

	(void)state;
	run(host, sizeof(host) / sizeof(host[0]), true);
}

/* The last writer is remembered; a fresh buffer has none and is current. */
static void test_writer(void **state)
{
	struct owner o;

	(void)state;
	owner_init(&o, false);
	assert_int_equal(o.writer, 0);
	assert_int_equal(owner_need(&o, OWNER_DEVICE), OWNER_NO_COPY);
	assert_int_equal(owner_need(&o, OWNER_HOST), OWNER_TO_HOST);
	owner_wrote(&o, FPGAD_WRITER_HOST);
	assert_int_equal(o.writer, FPGAD_WRITER_HOST);
	owner_wrote(&o, FPGAD_WRITER_CARD);
	assert_int_equal(o.writer, FPGAD_WRITER_CARD);
	/* Two reads of the view in a row: one copy. */
	assert_int_equal(owner_need(&o, OWNER_HOST), OWNER_TO_HOST);
	owner_copied(&o, OWNER_TO_HOST);
	assert_int_equal(owner_need(&o, OWNER_HOST), OWNER_NO_COPY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gpu_buffer),
		cmocka_unit_test(test_host_buffer),
		cmocka_unit_test(test_writer),
	};

	return cmocka_run_group_tests_name("owner", tests, NULL, NULL);
}
