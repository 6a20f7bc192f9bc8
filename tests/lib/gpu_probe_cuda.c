// SPDX-License-Identifier: MIT
/* gpu_probe_cuda.c - the CUDA runtime's devices (gpu_probe.h). */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "errmap.h"
#include "gpu_probe.h"

int test_gpu_probe(void)
{
	struct cudaDeviceProp prop;
	cudaError_t e;
	int n = 0;

	e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n <= 0) {
		printf("no GPU: %s\n", e != cudaSuccess ? errmap_cuda_str(e) :
		       "the CUDA runtime sees no device");
		return 77;
	}
	e = cudaGetDeviceProperties(&prop, 0);
	if (e == cudaSuccess)
		printf("%d CUDA device(s), device 0: %s (sm_%d%d)\n", n,
		       prop.name, prop.major, prop.minor);
	else
		printf("%d CUDA device(s), device 0: %s\n", n,
		       cudaGetErrorString(e));
	return 0;
}
