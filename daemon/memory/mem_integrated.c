// SPDX-License-Identifier: MIT
/*
 * mem_integrated.c - rings of an integrated GPU (Jetson, IGX, DGX Spark).
 *
 * Such a GPU has no memory of its own to export (CUDA IPC does not exist
 * there) and reads host memory in place.  Its ring is host memory exactly
 * as mem_host.c makes it (a sealed memfd, allocated in full, handed to the
 * lessee over the handoff socket), mapped for the GPU through a mapper
 * (CUDA's cudaHostRegister in mem_cuda.c; a test's fake in the unit
 * tests): the card writes it, kernels read it, nothing is copied.
 */
#include <errno.h>

#include "memory/memory.h"

const char memory_integrated_rule[] =
	"integrated GPU: the card writes host memory the GPU reads in place";

int memory_integrated_alloc(size_t size, int gpu, const char *name_hint,
			    unsigned flags, const struct memory_host_mapper *m,
			    struct mem_region **ret_region)
{
	struct mem_region *r;
	int ret;

	ret = memory_host_ops.alloc(size, NULL, name_hint, flags, &r);
	if (ret)
		return ret;
	ret = m->map(r->host, r->size, gpu, &r->dev);
	if (ret) {
		r->dev = NULL;
		memory_host_ops.free(r);
		return ret;
	}
	r->kind = MEMORY_CUDA;
	r->gpu = gpu;
	r->integrated = true;
	r->gpu_export = GPU_EXPORT_HOST;
	r->mapper = m;
	*ret_region = r;
	return 0;
}

void memory_integrated_free(struct mem_region *r)
{
	if (!r)
		return;
	if (r->dev)
		r->mapper->unmap(r->host, r->gpu);
	memory_host_ops.free(r);
}
