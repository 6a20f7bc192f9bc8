// SPDX-License-Identifier: MIT
/* gpu_cuda.c - GPU memory of fpgad's rings, through the CUDA runtime. */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client_internal.h"
#include "errmap.h"

int gpu_map(const void *ipc_handle, int gpu, const char *bus_id,
	    void **ret_ptr, char *why, size_t whylen)
{
	cudaIpcMemHandle_t h;
	cudaError_t e = cudaSuccess;
	void *ptr;

	if (bus_id && bus_id[0])
		e = cudaDeviceGetByPCIBusId(&gpu, bus_id);
	if (e != cudaSuccess) {
		snprintf(why, whylen, "GPU %s is not visible here: %s", bus_id,
			 cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	e = cudaSetDevice(gpu);
	if (e == cudaSuccess) {
		memcpy(&h, ipc_handle, sizeof(h));
		e = cudaIpcOpenMemHandle(&ptr, h, cudaIpcMemLazyEnablePeerAccess);
	}
	if (e != cudaSuccess) {
		snprintf(why, whylen, "cannot map it: %s", cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	*ret_ptr = ptr;
	return 0;
}

void gpu_unmap(void *ptr)
{
	cudaIpcCloseMemHandle(ptr);
}

int gpu_host_alloc(size_t len, void **ret_ptr)
{
	return errmap_cuda(cudaMallocHost(ret_ptr, len));
}

void gpu_host_free(void *ptr)
{
	if (ptr)
		cudaFreeHost(ptr);
}

int gpu_to_host(void *dst, const void *src_dev, size_t len)
{
	return errmap_cuda(cudaMemcpy(dst, src_dev, len, cudaMemcpyDeviceToHost));
}

int gpu_from_host(void *dst_dev, const void *src, size_t len)
{
	return errmap_cuda(cudaMemcpy(dst_dev, src, len, cudaMemcpyHostToDevice));
}
