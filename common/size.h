/* SPDX-License-Identifier: MIT */
/*
 * size.h - sizes as people write them: "4096", "64K", "1M", "2G" (binary
 * multiples, an optional "i", "B" or "iB" after the letter), decimal or
 * 0x hexadecimal, for fpgad.conf and fpgactl's arguments.
 */
#ifndef FPGAD_COMMON_SIZE_H
#define FPGAD_COMMON_SIZE_H

#include <stdint.h>

/* 0 and the bytes @s says, -EINVAL (not a size) or -ERANGE (too big). */
int size_parse(const char *s, uint64_t *ret);

#endif
