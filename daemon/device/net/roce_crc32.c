// SPDX-License-Identifier: MIT
/* roce_crc32.c - CRC-32, folded with carry-less multiplies (roce_crc32.h). */
#include <pthread.h>
#include <string.h>
#include <zlib.h>

#include "device/net/roce_crc32.h"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

static uint32_t crc_zlib(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	/* crc32_z() takes a size_t, but Debian 12's is the same under a uInt. */
	while (len) {
		uInt n = len > (1u << 30) ? 1u << 30 : (uInt)len;

		crc = (uint32_t)crc32(crc, p, n);
		p += n;
		len -= n;
	}
	return crc;
}

static bool always(void)
{
	return true;
}

#if defined(__x86_64__)
/*
 * The reflected polynomial's folding constants, bit-reflected x^(D+32) and
 * x^(D-32) mod P for a fold D bits ahead: K1, K2 64 bytes, K3, K4 16
 * bytes; x^64 for the last fold, and P with Barrett's mu.  Z* the same for
 * 256 bytes (four 512-bit registers), 48 and 32 bytes.
 */
#define K1 0x154442bd4ull
#define K2 0x1c6e41596ull
#define K3 0x1751997d0ull
#define K4 0x0ccaa009eull
#define K5 0x163cd6124ull
#define POLY 0x1db710641ull
#define MU 0x1f7011641ull
#define Z256_LO 0x11542778aull
#define Z256_HI 0x1322d1430ull
#define Z48_LO 0x03db1ecdcull
#define Z48_HI 0x174359406ull
#define Z32_LO 0x0f1da05aaull
#define Z32_HI 0x15a546366ull

#define FOLD_TARGET __attribute__((target("pclmul,sse4.1")))

FOLD_TARGET static uint32_t finish(__m128i x0, const unsigned char *p, size_t len);

FOLD_TARGET static inline __m128i fold16(__m128i x, __m128i k, __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/*
 * The CRC register (not inverted) after @len bytes, @len >= 64 and a
 * multiple of 16.
 */
FOLD_TARGET static uint32_t fold_pclmul(uint32_t reg, const unsigned char *p,
					size_t len)
{
	const __m128i k12 = _mm_set_epi64x((long long)K2, (long long)K1);
	const __m128i k34 = _mm_set_epi64x((long long)K4, (long long)K3);
	__m128i x0, x1, x2, x3;

	x0 = _mm_loadu_si128((const __m128i *)p);
	x1 = _mm_loadu_si128((const __m128i *)(p + 16));
	x2 = _mm_loadu_si128((const __m128i *)(p + 32));
	x3 = _mm_loadu_si128((const __m128i *)(p + 48));
	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)reg));
	p += 64;
	len -= 64;
	while (len >= 64) {
		x0 = fold16(x0, k12, _mm_loadu_si128((const __m128i *)p));
		x1 = fold16(x1, k12, _mm_loadu_si128((const __m128i *)(p + 16)));
		x2 = fold16(x2, k12, _mm_loadu_si128((const __m128i *)(p + 32)));
		x3 = fold16(x3, k12, _mm_loadu_si128((const __m128i *)(p + 48)));
		p += 64;
		len -= 64;
	}
	/* Four lanes into one, then the 16-byte blocks left. */
	x0 = fold16(x0, k34, x1);
	x0 = fold16(x0, k34, x2);
	x0 = fold16(x0, k34, x3);
	return finish(x0, p, len);
}

/* The 16-byte blocks after the folded @x0, then the register. */
FOLD_TARGET static uint32_t finish(__m128i x0, const unsigned char *p, size_t len)
{
	const __m128i k34 = _mm_set_epi64x((long long)K4, (long long)K3);
	const __m128i k5 = _mm_set_epi64x(0, (long long)K5);
	const __m128i pmu = _mm_set_epi64x((long long)MU, (long long)POLY);
	const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
	__m128i t;

	for (; len >= 16; p += 16, len -= 16)
		x0 = fold16(x0, k34, _mm_loadu_si128((const __m128i *)p));
	/* 128 bits to 64, then Barrett's reduction to 32. */
	t = _mm_clmulepi64_si128(x0, k34, 0x10);
	x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
	t = _mm_srli_si128(x0, 4);
	x0 = _mm_and_si128(x0, low32);
	x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k5, 0x00), t);
	t = _mm_and_si128(x0, low32);
	t = _mm_clmulepi64_si128(t, pmu, 0x10);
	t = _mm_and_si128(t, low32);
	t = _mm_clmulepi64_si128(t, pmu, 0x00);
	x0 = _mm_xor_si128(x0, t);
	return (uint32_t)_mm_extract_epi32(x0, 1);
}

/* @fold over the whole 16-byte blocks of @len bytes at @p, zlib the rest. */
static uint32_t blocks(uint32_t crc, const unsigned char *p, size_t len,
		       uint32_t (*fold)(uint32_t, const unsigned char *, size_t))
{
	size_t n = len & ~(size_t)15;

	crc = ~fold(~crc, p, n);
	p += n;
	len -= n;
	return len ? crc_zlib(crc, p, len) : crc;
}

static uint32_t crc_pclmul(uint32_t crc, const void *buf, size_t len)
{
	return len < 64 ? crc_zlib(crc, buf, len) : blocks(crc, buf, len, fold_pclmul);
}

static bool have_pclmul(void)
{
	return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
}

#define WIDE_TARGET __attribute__((target("avx512f,vpclmulqdq,pclmul,sse4.1")))

WIDE_TARGET static inline __m512i fold64(__m512i x, __m512i k, __m512i next)
{
	__m512i lo = _mm512_clmulepi64_epi128(x, k, 0x00);
	__m512i hi = _mm512_clmulepi64_epi128(x, k, 0x11);

	return _mm512_ternarylogic_epi64(lo, hi, next, 0x96);	/* a ^ b ^ c */
}

/* The same 256 bytes at a time, @len >= 256 and a multiple of 16. */
WIDE_TARGET static uint32_t fold_vpclmul(uint32_t reg, const unsigned char *p,
					 size_t len)
{
	const __m512i k256 = _mm512_broadcast_i32x4(
		_mm_set_epi64x((long long)Z256_HI, (long long)Z256_LO));
	const __m512i k64 = _mm512_broadcast_i32x4(
		_mm_set_epi64x((long long)K2, (long long)K1));
	const __m128i k48 = _mm_set_epi64x((long long)Z48_HI, (long long)Z48_LO);
	const __m128i k32 = _mm_set_epi64x((long long)Z32_HI, (long long)Z32_LO);
	const __m128i k16 = _mm_set_epi64x((long long)K4, (long long)K3);
	__m512i z0, z1, z2, z3;
	__m128i x;

	z0 = _mm512_loadu_si512(p);
	z1 = _mm512_loadu_si512(p + 64);
	z2 = _mm512_loadu_si512(p + 128);
	z3 = _mm512_loadu_si512(p + 192);
	z0 = _mm512_xor_si512(z0, _mm512_zextsi128_si512(_mm_cvtsi32_si128((int)reg)));
	p += 256;
	len -= 256;
	for (; len >= 256; p += 256, len -= 256) {
		z0 = fold64(z0, k256, _mm512_loadu_si512(p));
		z1 = fold64(z1, k256, _mm512_loadu_si512(p + 64));
		z2 = fold64(z2, k256, _mm512_loadu_si512(p + 128));
		z3 = fold64(z3, k256, _mm512_loadu_si512(p + 192));
	}
	/* Four registers into one, 64 bytes more at a time, its lanes into the last. */
	z0 = fold64(z0, k64, z1);
	z0 = fold64(z0, k64, z2);
	z0 = fold64(z0, k64, z3);
	for (; len >= 64; p += 64, len -= 64)
		z0 = fold64(z0, k64, _mm512_loadu_si512(p));
	x = _mm512_extracti32x4_epi32(z0, 3);
	x = fold16(_mm512_extracti32x4_epi32(z0, 0), k48, x);
	x = fold16(_mm512_extracti32x4_epi32(z0, 1), k32, x);
	x = fold16(_mm512_extracti32x4_epi32(z0, 2), k16, x);
	return finish(x, p, len);
}

static uint32_t crc_vpclmul(uint32_t crc, const void *buf, size_t len)
{
	return len < 256 ? crc_pclmul(crc, buf, len) : blocks(crc, buf, len, fold_vpclmul);
}

static bool have_vpclmul(void)
{
	return have_pclmul() && __builtin_cpu_supports("avx512f") &&
	       __builtin_cpu_supports("vpclmulqdq");
}
#endif

#if defined(__aarch64__)
/* ARMv8's CRC32X/CRC32B: optional before ARMv8.1, hence HWCAP_CRC32. */
__attribute__((target("+crc")))
static uint32_t crc_armv8(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t c = ~crc;

	uint64_t w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		c = __builtin_aarch64_crc32x(c, w);
	}
	for (; len; len--)
		c = __builtin_aarch64_crc32b(c, *p++);
	return ~c;
}

static bool have_armv8(void)
{
	return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
}
#endif

const struct roce_crc32_impl roce_crc32_impls[] = {
#if defined(__x86_64__)
	{ "vpclmulqdq-avx512", have_vpclmul, crc_vpclmul },
	{ "pclmulqdq", have_pclmul, crc_pclmul },
#elif defined(__aarch64__)
	{ "armv8-crc32", have_armv8, crc_armv8 },
#endif
	{ "zlib", always, crc_zlib },
	{ NULL, NULL, NULL },
};

static const struct roce_crc32_impl *chosen;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void choose(void)
{
	const struct roce_crc32_impl *i = roce_crc32_impls;

	while (!i->usable())
		i++;
	chosen = i;
}

uint32_t roce_crc32(uint32_t crc, const void *buf, size_t len)
{
	pthread_once(&once, choose);
	return chosen->fn(crc, buf, len);
}

const char *roce_crc32_name(void)
{
	pthread_once(&once, choose);
	return chosen->name;
}
