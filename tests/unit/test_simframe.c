// SPDX-License-Identifier: MIT
/* test_simframe.c - the sim frame format: fill, check, every corruption. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fpgad_simframe.h"

#define MAX_FRAME (64u << 10)

struct fixture {
	unsigned char *pattern;
	uint64_t pattern_size;
	unsigned char *frame;
	unsigned char *other;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->pattern_size = fpgad_simframe_pattern_size(MAX_FRAME);
	f->pattern = malloc(f->pattern_size);
	f->frame = malloc(MAX_FRAME);
	f->other = malloc(MAX_FRAME);
	assert_non_null(f->pattern);
	assert_non_null(f->frame);
	assert_non_null(f->other);
	fpgad_simframe_pattern_fill(f->pattern, f->pattern_size);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free(f->pattern);
	free(f->frame);
	free(f->other);
	free(f);
	return 0;
}

static int check(struct fixture *f, const void *frame, uint64_t len,
		 uint64_t seq, uint64_t *bad)
{
	uint64_t bad_table = 0, bad_computed = 0;
	int r1, r2;

	/* With and without the pattern table the verdict is the same. */
	r1 = fpgad_simframe_check(frame, len, seq, f->pattern, f->pattern_size,
				  &bad_table);
	r2 = fpgad_simframe_check(frame, len, seq, NULL, 0, &bad_computed);
	assert_int_equal(r1, r2);
	if (r1)
		assert_int_equal(bad_table, bad_computed);
	if (bad)
		*bad = bad_table;
	return r1;
}

static void test_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct fpgad_simframe_hdr), 64);
	assert_int_equal(offsetof(struct fpgad_simframe_hdr, check), 56);
	assert_int_equal(fpgad_simframe_payload_offset(0), 0);
	assert_int_equal(fpgad_simframe_payload_offset(1), 8);
	assert_int_equal(fpgad_simframe_payload_offset(4093), 0);
	assert_int_equal(fpgad_simframe_payload_offset(4094), 8);
	/* splitmix64 reference values. */
	assert_true(fpgad_simframe_mix(0) == 0xe220a8397b1dcdafull);
	assert_true(fpgad_simframe_pattern_word(1) ==
		    fpgad_simframe_mix(1));
	assert_int_equal(fpgad_simframe_pattern_size(64), 4093 * 8);
	assert_int_equal(fpgad_simframe_pattern_size(65), 4093 * 8 + 8);
	assert_int_equal(fpgad_simframe_pattern_size(0), 4093 * 8);
}

static void test_round_trip(void **state)
{
	static const uint64_t sizes[] = { 64, 65, 71, 72, 4096, 4099,
					  MAX_FRAME };
	static const uint64_t seqs[] = { 0, 1, 4092, 4093, 123456789,
					 UINT64_MAX - 1 };
	struct fixture *f = *state;
	unsigned i, j;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < sizeof(seqs) / sizeof(seqs[0]); j++) {
			uint64_t len = sizes[i], seq = seqs[j];
			const struct fpgad_simframe_hdr *h =
				(const void *)f->frame;

			memset(f->frame, 0xee, MAX_FRAME);
			assert_int_equal(fpgad_simframe_fill(f->frame, len, seq,
							     7, f->pattern,
							     f->pattern_size),
					 0);
			if (len < MAX_FRAME)
				assert_int_equal(f->frame[len], 0xee);
			assert_int_equal(check(f, f->frame, len, seq, NULL), 0);
			assert_int_equal(check(f, f->frame, len,
					       FPGAD_SIMFRAME_ANY_SEQ, NULL),
					 0);
			assert_true(h->seq == seq);
			assert_true(h->length == len);
			assert_int_equal(h->source, 7);

			/* Filling without the table gives the same bytes. */
			assert_int_equal(fpgad_simframe_fill(f->other, len, seq,
							     7, NULL, 0), 0);
			assert_memory_equal(f->frame, f->other, len);
		}
	}
}

static void test_payload_words(void **state)
{
	struct fixture *f = *state;
	uint64_t w, i;

	/* What a GPU thread computes per word is what the frame holds. */
	fpgad_simframe_fill(f->frame, 4096, 5000, 0, f->pattern,
			    f->pattern_size);
	for (i = 0; i < (4096 - 64) / 8; i++) {
		memcpy(&w, f->frame + 64 + i * 8, 8);
		assert_true(w == fpgad_simframe_payload_word(5000, i));
	}
}

static void test_torn(void **state)
{
	struct fixture *f = *state;
	uint64_t bad = 0;

	/* The second half of the buffer still holds the previous frame. */
	fpgad_simframe_fill(f->other, 8192, 41, 0, f->pattern,
			    f->pattern_size);
	fpgad_simframe_fill(f->frame, 8192, 42, 0, f->pattern,
			    f->pattern_size);
	memcpy(f->frame + 4096, f->other + 4096, 4096);
	assert_int_equal(check(f, f->frame, 8192, 42, &bad),
			 FPGAD_SIMFRAME_BAD_PAYLOAD);
	assert_int_equal(bad, 4096);

	/* One byte flipped at the very end. */
	fpgad_simframe_fill(f->frame, 8191, 42, 0, f->pattern,
			    f->pattern_size);
	f->frame[8190] ^= 1;
	assert_int_equal(check(f, f->frame, 8191, 42, &bad),
			 FPGAD_SIMFRAME_BAD_PAYLOAD);
	assert_int_equal(bad, 8190);
}

static void test_stale(void **state)
{
	struct fixture *f = *state;
	uint64_t bad = 0;

	/* A new header over the old payload: the DMA wrote only the head. */
	fpgad_simframe_fill(f->frame, 4096, 100, 0, f->pattern,
			    f->pattern_size);
	fpgad_simframe_fill_part(f->frame, 64, 4096, 116, 0, f->pattern,
				 f->pattern_size);
	assert_int_equal(check(f, f->frame, 4096, 116, &bad),
			 FPGAD_SIMFRAME_BAD_PAYLOAD);
	assert_int_equal(bad, 64);
	/* Even a frame 4093 later differs: its header says otherwise. */
	fpgad_simframe_fill(f->frame, 4096, 100, 0, f->pattern,
			    f->pattern_size);
	fpgad_simframe_fill_part(f->frame, 64, 4096, 100 + 4093, 0, f->pattern,
				 f->pattern_size);
	assert_int_equal(check(f, f->frame, 4096, 100 + 4093, &bad), 0);
	assert_int_equal(check(f, f->frame, 4096, 100, &bad),
			 FPGAD_SIMFRAME_BAD_SEQ);
}

static void test_duplicate_seq(void **state)
{
	struct fixture *f = *state;
	uint64_t bad = 0;

	/* The same frame delivered twice: the second is not the one due. */
	fpgad_simframe_fill(f->frame, 1024, 9, 0, f->pattern, f->pattern_size);
	assert_int_equal(check(f, f->frame, 1024, 9, &bad), 0);
	assert_int_equal(check(f, f->frame, 1024, 10, &bad),
			 FPGAD_SIMFRAME_BAD_SEQ);
	assert_int_equal(bad, offsetof(struct fpgad_simframe_hdr, seq));
}

static void test_wrong_length(void **state)
{
	struct fixture *f = *state;
	uint64_t bad = 0;

	fpgad_simframe_fill(f->frame, 1024, 3, 0, f->pattern, f->pattern_size);
	assert_int_equal(check(f, f->frame, 1000, 3, &bad),
			 FPGAD_SIMFRAME_BAD_LENGTH);
	assert_int_equal(bad, offsetof(struct fpgad_simframe_hdr, length));
	assert_int_equal(check(f, f->frame, 2048, 3, &bad),
			 FPGAD_SIMFRAME_BAD_LENGTH);
	/* Shorter than a header at all. */
	assert_int_equal(check(f, f->frame, 63, 3, &bad),
			 FPGAD_SIMFRAME_BAD_HEADER);
	assert_int_equal(bad, 63);
	/* A frame cannot be shorter than its header. */
	assert_int_equal(fpgad_simframe_fill(f->frame, 63, 3, 0, NULL, 0),
			 FPGAD_SIMFRAME_BAD_LENGTH);
}

static void test_bad_header(void **state)
{
	struct fixture *f = *state;
	struct fpgad_simframe_hdr *h = (void *)f->frame;
	uint64_t bad = 0;

	fpgad_simframe_fill(f->frame, 256, 3, 0, f->pattern, f->pattern_size);
	h->magic ^= 1;
	assert_int_equal(check(f, f->frame, 256, 3, &bad),
			 FPGAD_SIMFRAME_BAD_HEADER);
	assert_int_equal(bad, offsetof(struct fpgad_simframe_hdr, magic));

	fpgad_simframe_fill(f->frame, 256, 3, 0, f->pattern, f->pattern_size);
	h->hdr_size = 32;
	assert_int_equal(check(f, f->frame, 256, 3, &bad),
			 FPGAD_SIMFRAME_BAD_HEADER);
	assert_int_equal(bad, offsetof(struct fpgad_simframe_hdr, hdr_size));

	/* Any other header bit: the checksum catches it. */
	fpgad_simframe_fill(f->frame, 256, 3, 0, f->pattern, f->pattern_size);
	h->seq ^= 1u << 20;
	assert_int_equal(check(f, f->frame, 256, FPGAD_SIMFRAME_ANY_SEQ, &bad),
			 FPGAD_SIMFRAME_BAD_HEADER);
	assert_int_equal(bad, offsetof(struct fpgad_simframe_hdr, check));

	fpgad_simframe_fill(f->frame, 256, 3, 0, f->pattern, f->pattern_size);
	f->frame[offsetof(struct fpgad_simframe_hdr, reserved) + 5] ^= 0x80;
	assert_int_equal(check(f, f->frame, 256, 3, &bad),
			 FPGAD_SIMFRAME_BAD_HEADER);

	/* All zeroes, as in a slot nothing was written to. */
	memset(f->frame, 0, 256);
	assert_int_equal(check(f, f->frame, 256, 0, &bad),
			 FPGAD_SIMFRAME_BAD_HEADER);
	/* The out parameter is optional. */
	assert_int_equal(fpgad_simframe_check(f->frame, 256, 0, NULL, 0, NULL),
			 FPGAD_SIMFRAME_BAD_HEADER);
}

static void test_truncated(void **state)
{
	struct fixture *f = *state;

	/* The head of a long frame is the long frame's head. */
	fpgad_simframe_fill(f->other, 8192, 77, 1, f->pattern,
			    f->pattern_size);
	memset(f->frame, 0, 8192);
	fpgad_simframe_fill_part(f->frame, 1000, 8192, 77, 1, f->pattern,
				 f->pattern_size);
	assert_memory_equal(f->frame, f->other, 1000);
	assert_int_equal(f->frame[1000], 0);
	fpgad_simframe_fill_part(f->frame, 10, 8192, 77, 1, NULL, 0);
	assert_memory_equal(f->frame, f->other, 10);
}

static void test_small_pattern(void **state)
{
	struct fixture *f = *state;

	/* A table too short for the frame falls back to computing words. */
	fpgad_simframe_fill(f->frame, MAX_FRAME, 4092, 0, f->pattern, 4096);
	assert_int_equal(check(f, f->frame, MAX_FRAME, 4092, NULL), 0);
	assert_int_equal(fpgad_simframe_check(f->frame, MAX_FRAME, 4092,
					      f->pattern, 4096, NULL), 0);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(fpgad_simframe_strerror(0), "ok");
	assert_string_equal(fpgad_simframe_strerror(FPGAD_SIMFRAME_BAD_PAYLOAD),
			    "payload mismatch");
	assert_string_equal(fpgad_simframe_strerror(-99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_payload_words),
		cmocka_unit_test(test_torn),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_duplicate_seq),
		cmocka_unit_test(test_wrong_length),
		cmocka_unit_test(test_bad_header),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_small_pattern),
		cmocka_unit_test(test_strerror),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
