/* SPDX-License-Identifier: MIT */
/*
 * kmod_xfer.h - the card memory transfer part of the guest test program
 * (kmod_xfer.c), called from kmod_test.c's main with its check() and its
 * vgem dma-buf maker.
 */
#ifndef FPGAD_KMOD_XFER_H
#define FPGAD_KMOD_XFER_H

#include <stddef.h>

void kmod_xfer_tests(void (*check)(int ok, const char *fmt, ...),
		     int (*vgem_dmabuf)(size_t size));

#endif
