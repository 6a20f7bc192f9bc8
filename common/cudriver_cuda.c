// SPDX-License-Identifier: MIT
/* cudriver_cuda.c - CUDA driver entry points (cudriver.h). */
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "cudriver.h"
#include "errmap.h"

void *cudriver_entry(const char *symbol, unsigned version, char *why,
		     size_t whylen)
{
	enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSuccess;
	void *fn = NULL;
	cudaError_t e;

	e = cudaGetDriverEntryPointByVersion(symbol, &fn, version,
					     cudaEnableDefault, &q);
	if (e == cudaSuccess && q == cudaDriverEntryPointSuccess && fn)
		return fn;
	snprintf(why, whylen, "the CUDA driver has no %s (%s)", symbol,
		 e != cudaSuccess ? errmap_cuda_str(e) :
		 q == cudaDriverEntryPointVersionNotSufficent ?
		 "driver too old" : "symbol not found");
	return NULL;
}
