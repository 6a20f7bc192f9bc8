/* SPDX-License-Identifier: MIT */
/*
 * cudriver.h - CUDA driver API entry points, reached through the runtime
 * (cudaGetDriverEntryPointByVersion): fpgad and libfpgad never link
 * libcuda, so both load, run and say why there is no GPU on machines
 * without a driver.  CUDA builds only (cudriver_cuda.c).
 */
#ifndef FPGAD_COMMON_CUDRIVER_H
#define FPGAD_COMMON_CUDRIVER_H

#include <stddef.h>

/*
 * The driver's @symbol at API @version, or NULL with @why saying so
 * ("driver too old", "symbol not found", the runtime's error).
 */
void *cudriver_entry(const char *symbol, unsigned version, char *why,
		     size_t whylen);

#endif
