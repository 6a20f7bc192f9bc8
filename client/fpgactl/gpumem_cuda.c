// SPDX-License-Identifier: MIT
/*
 * gpumem_cuda.c - GPU memory of fpgactl's own (bench registers it for
 * card memory transfers), through the CUDA runtime.
 */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>

#include "fpgactl.h"

int gpumem_alloc(uint64_t len, void **ret_ptr, char *why, size_t whylen)
{
	cudaError_t e;
	int n = 0;
	void *p;

	e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || !n) {
		snprintf(why, whylen, "no CUDA device here%s%s",
			 e != cudaSuccess ? ": " : "",
			 e != cudaSuccess ? cudaGetErrorString(e) : "");
		return -ENODEV;
	}
	e = cudaMalloc(&p, len);
	if (e != cudaSuccess) {
		snprintf(why, whylen, "cudaMalloc of %llu bytes: %s",
			 (unsigned long long)len, cudaGetErrorString(e));
		return -ENOMEM;
	}
	*ret_ptr = p;
	return 0;
}

void gpumem_free(void *ptr)
{
	if (ptr)
		cudaFree(ptr);
}
