// SPDX-License-Identifier: MIT
/*
 * test_roce_crc32.c - every CRC-32 implementation this CPU can run
 * (roce_crc32.c) against zlib's crc32(), the reference: random lengths,
 * alignments and starting values, every length around the folding's
 * block sizes, and chaining (a buffer in two calls).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include <cmocka.h>

#include "device/net/roce_crc32.h"

#define BUF (70000 + 64)

static unsigned char *random_bytes(unsigned seed)
{
	unsigned char *b = malloc(BUF);

	assert_non_null(b);
	srand(seed);
	for (size_t i = 0; i < BUF; i++)
		b[i] = (unsigned char)rand();
	return b;
}

/* @impl agrees with zlib on the @n bytes at @p after @init. */
static void agrees(const struct roce_crc32_impl *impl, uint32_t init,
		   const unsigned char *p, size_t n)
{
	uint32_t want = (uint32_t)crc32(init, p, (uInt)n);
	uint32_t got = impl->fn(init, p, n);

	if (got != want)
		fail_msg("%s: %zu bytes at +%zu from 0x%08x: 0x%08x, zlib 0x%08x",
			 impl->name, n, (size_t)((uintptr_t)p % 64), init, got, want);
}

static void each_impl_matches_zlib(void **state)
{
	unsigned char *b = random_bytes(30);
	unsigned tried = 0;

	(void)state;
	for (const struct roce_crc32_impl *i = roce_crc32_impls; i->name; i++) {
		if (!i->usable()) {
			printf("roce_crc32: %s: not on this CPU, skipped\n", i->name);
			continue;
		}
		tried++;
		/* Around each block size: 16, 64, and none. */
		for (size_t n = 0; n <= 300; n++)
			for (size_t a = 0; a < 16; a += 5)
				agrees(i, 0, b + a, n);
		for (int k = 0; k < 3000; k++) {
			size_t a = (size_t)rand() % 64;
			size_t n = (size_t)rand() % (k < 1500 ? 1024 : BUF - 64);

			agrees(i, (uint32_t)rand(), b + a, n);
		}
	}
	assert_true(tried >= 1);
	free(b);
}

static void chained_calls(void **state)
{
	unsigned char *b = random_bytes(31);

	(void)state;
	for (const struct roce_crc32_impl *i = roce_crc32_impls; i->name; i++) {
		if (!i->usable())
			continue;
		for (int k = 0; k < 500; k++) {
			size_t n = (size_t)rand() % 20000, cut = n ? (size_t)rand() % n : 0;
			uint32_t c = i->fn(0, b, cut);

			assert_int_equal(i->fn(c, b + cut, n - cut), (uint32_t)crc32(0, b, (uInt)n));
		}
	}
	free(b);
}

/* The one chosen is one of them, the fastest this CPU has (the first usable). */
static void dispatch_picks_first_usable(void **state)
{
	const struct roce_crc32_impl *i = roce_crc32_impls;
	unsigned char *b = random_bytes(32);

	(void)state;
	while (!i->usable())
		i++;
	assert_string_equal(roce_crc32_name(), i->name);
	assert_int_equal(roce_crc32(7, b, 9000), (uint32_t)crc32(7, b, 9000));
	printf("roce_crc32: this CPU uses %s\n", roce_crc32_name());
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(each_impl_matches_zlib),
		cmocka_unit_test(chained_calls),
		cmocka_unit_test(dispatch_picks_first_usable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
