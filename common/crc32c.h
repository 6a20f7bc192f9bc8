/* SPDX-License-Identifier: MIT */
/*
 * crc32c.h - CRC-32C (Castagnoli), the integrity check the sim card's
 * frames carry (fpgad_simframe.h): the SSE4.2 (x86-64) or ARMv8 CRC
 * (aarch64) instructions where the CPU has them, a table otherwise.  Same
 * results either way.
 */
#ifndef FPGAD_COMMON_CRC32C_H
#define FPGAD_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of @len bytes at @buf (init and final xor 0xffffffff). */
uint32_t crc32c(const void *buf, size_t len);
/* The CRC register @reg after @len more bytes (no init, no final xor). */
uint32_t crc32c_update(uint32_t reg, const void *buf, size_t len);

/*
 * CRC-32C is linear: what @len zero bytes do to a register is a 32x32 bit
 * matrix (@op, one column per word), found in O(log len).  With it the CRC
 * of any window of a long sequence follows from the registers at the
 * window's two ends, so the sim can give every frame its CRC without
 * reading the payload (sim_frames.c).
 */
void crc32c_zeros_op(uint64_t len, uint32_t op[32]);
uint32_t crc32c_apply(const uint32_t op[32], uint32_t v);

/*
 * Check a frame in the sim frame format: 1 when it carries a payload CRC
 * and the payload matches it, 0 when there is nothing to check (no CRC, or
 * @len is not the frame's whole length), -1 when the payload is not what
 * the card sent.
 */
int crc32c_frame_check(const void *frame, uint64_t len);

#endif
