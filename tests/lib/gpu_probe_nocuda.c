// SPDX-License-Identifier: MIT
/* gpu_probe_nocuda.c - a build without CUDA has no GPU (gpu_probe.h). */
#include <stdio.h>

#include "gpu_probe.h"

int test_gpu_probe(void)
{
	printf("no GPU: built without CUDA\n");
	return 77;
}
