// SPDX-License-Identifier: MIT
/* crc32c.c - CRC-32C (see crc32c.h). */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "crc32c.h"
#include "fpgad_simframe.h"

#if defined(__aarch64__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#endif

#define CRC32C_POLY 0x82f63b78u	/* reflected Castagnoli polynomial */

static uint32_t table[8][256];
#if defined(__x86_64__) || defined(__aarch64__)
static bool have_insn;		/* SSE4.2's crc32, or ARMv8's crc32c */
#endif
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void crc32c_init(void)
{
	for (unsigned i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ CRC32C_POLY : c >> 1;
		table[0][i] = c;
	}
	for (unsigned i = 0; i < 256; i++)
		for (unsigned t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^
				      table[0][table[t - 1][i] & 0xff];
#if defined(__x86_64__)
	have_insn = __builtin_cpu_supports("sse4.2");
#elif defined(__aarch64__)
	have_insn = (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0;
#endif
}

/* Slicing by 8. */
static uint32_t crc_table(uint32_t c, const unsigned char *p, size_t n)
{
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= c;
		c = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
		    table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
		    table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
		    table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		n -= 8;
	}
	while (n--)
		c = (c >> 8) ^ table[0][(c ^ *p++) & 0xff];
	return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_sse42(uint32_t c, const unsigned char *p, size_t n)
{
	uint64_t c64 = c;

	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c64 = __builtin_ia32_crc32di(c64, w);
		p += 8;
		n -= 8;
	}
	c = (uint32_t)c64;
	while (n--)
		c = __builtin_ia32_crc32qi(c, *p++);
	return c;
}
#define crc_insn crc_sse42
#elif defined(__aarch64__)
/* ARMv8's CRC32C* instructions: optional before ARMv8.1, hence HWCAP_CRC32. */
__attribute__((target("+crc")))
static uint32_t crc_armv8(uint32_t c, const unsigned char *p, size_t n)
{
	while (n >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = __builtin_aarch64_crc32cx(c, w);
		p += 8;
		n -= 8;
	}
	while (n--)
		c = __builtin_aarch64_crc32cb(c, *p++);
	return c;
}
#define crc_insn crc_armv8
#endif

uint32_t crc32c_update(uint32_t reg, const void *buf, size_t len)
{
	pthread_once(&once, crc32c_init);
#if defined(__x86_64__) || defined(__aarch64__)
	if (have_insn)
		return crc_insn(reg, buf, len);
#endif
	return crc_table(reg, buf, len);
}

uint32_t crc32c(const void *buf, size_t len)
{
	return ~crc32c_update(0xffffffffu, buf, len);
}

uint32_t crc32c_apply(const uint32_t op[32], uint32_t v)
{
	uint32_t r = 0;

	for (unsigned i = 0; v; i++, v >>= 1)
		if (v & 1)
			r ^= op[i];
	return r;
}

/* @dst = @a after @b: both 32x32 bit matrices, one column per word. */
static void op_compose(uint32_t dst[32], const uint32_t a[32],
		       const uint32_t b[32])
{
	uint32_t t[32];

	for (unsigned i = 0; i < 32; i++)
		t[i] = crc32c_apply(a, b[i]);
	memcpy(dst, t, sizeof(t));
}

void crc32c_zeros_op(uint64_t len, uint32_t op[32])
{
	uint32_t sq[32];

	/* One zero bit: shift right, fold the polynomial in. */
	sq[0] = CRC32C_POLY;
	for (unsigned i = 1; i < 32; i++)
		sq[i] = 1u << (i - 1);
	/* ... squared three times: one zero byte. */
	for (unsigned k = 0; k < 3; k++)
		op_compose(sq, sq, sq);
	for (unsigned i = 0; i < 32; i++)
		op[i] = 1u << i;
	for (; len; len >>= 1) {
		if (len & 1)
			op_compose(op, sq, op);
		op_compose(sq, sq, sq);
	}
}

int crc32c_frame_check(const void *frame, uint64_t len)
{
	struct fpgad_simframe_hdr h;

	if (len < FPGAD_SIMFRAME_HDR_SIZE)
		return 0;
	memcpy(&h, frame, sizeof(h));
	if (h.magic != FPGAD_SIMFRAME_MAGIC ||
	    h.check != fpgad_simframe_hdr_check(&h) ||
	    !(h.flags & FPGAD_SIMFRAME_F_CRC) || h.length != len)
		return 0;
	return crc32c((const unsigned char *)frame + FPGAD_SIMFRAME_HDR_SIZE,
		      len - FPGAD_SIMFRAME_HDR_SIZE) == h.payload_crc ? 1 : -1;
}
