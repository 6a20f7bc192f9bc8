/* SPDX-License-Identifier: MIT */
/*
 * roce_crc32.h - CRC-32 (the Ethernet polynomial, zlib's crc32()) at the
 * speed the iCRC needs: it runs over every byte the UDP path receives, so
 * it must cost no more than copying them.  x86-64 folds 256 bytes at a
 * time with AVX-512's VPCLMULQDQ, or 64 with PCLMULQDQ (Intel's "Fast CRC
 * Computation for Generic Polynomials Using PCLMULQDQ Instruction"),
 * aarch64 uses ARMv8's CRC32 instructions, each chosen at run time from
 * what the CPU has; zlib's crc32() otherwise (Debian 12's has neither: 5
 * GB/s against memcpy's 14 on one core of a recent x86-64, where the
 * folds run at 24 and 31).  Same results everywhere.
 */
#ifndef FPGAD_NET_ROCE_CRC32_H
#define FPGAD_NET_ROCE_CRC32_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* zlib's crc32(): @crc after @len more bytes at @buf (0 to start). */
uint32_t roce_crc32(uint32_t crc, const void *buf, size_t len);

/* Each implementation, for tests and benchmarks; the last one's name is NULL. */
struct roce_crc32_impl {
	const char *name;
	bool (*usable)(void);		/* this CPU has what it needs */
	uint32_t (*fn)(uint32_t crc, const void *buf, size_t len);
};
extern const struct roce_crc32_impl roce_crc32_impls[];

/* The implementation roce_crc32() uses on this CPU. */
const char *roce_crc32_name(void);

#endif
