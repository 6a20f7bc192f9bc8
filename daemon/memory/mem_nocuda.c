// SPDX-License-Identifier: MIT
/*
 * mem_nocuda.c - the cuda memory backend of a build without CUDA
 * (memory.h): no GPU answers the probe, so channels use host memory and
 * say why.
 */
#include <errno.h>
#include <stdio.h>

#include "memory/memory.h"

int memory_cuda_probe(const char *gpu, int *ret_ordinal, char *why,
		      size_t whylen)
{
	(void)gpu;
	(void)ret_ordinal;
	if (why && whylen)
		snprintf(why, whylen, "built without CUDA");
	return -ENODEV;
}

int memory_cuda_mps(int ordinal, bool *ret_mps)
{
	(void)ordinal;
	(void)ret_mps;
	return -ENODEV;
}

bool memory_cuda_integrated(int ordinal)
{
	(void)ordinal;
	return false;
}

static int memory_nocuda_alloc(size_t size, const char *gpu,
			       const char *name_hint, unsigned flags,
			       struct mem_region **ret_region)
{
	(void)flags;
	(void)size;
	(void)gpu;
	(void)name_hint;
	(void)ret_region;
	return -ENODEV;
}

static int memory_nocuda_import(const struct mem_import *imp,
				struct mem_region **ret_region, char *why,
				size_t whylen)
{
	(void)imp;
	(void)ret_region;
	snprintf(why, whylen, "this fpgad was built without CUDA");
	return -ENODEV;
}

int memory_flush_rdma_writes(const struct mem_region *r)
{
	(void)r;
	return -EOPNOTSUPP;
}

const struct memory_ops memory_cuda_ops = {
	.name = "cuda",
	.alloc = memory_nocuda_alloc,
	.import = memory_nocuda_import,
};
