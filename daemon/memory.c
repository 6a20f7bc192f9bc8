// SPDX-License-Identifier: MIT
/* memory.c - the table of memory backends, and what builds without CUDA say. */
#include <errno.h>
#include <stdio.h>

#include "memory.h"

const struct memory_ops *memory_ops_for(enum memory_kind kind)
{
	switch (kind) {
	case MEMORY_HOST:
		return &memory_host_ops;
	case MEMORY_CUDA:
#ifdef FPGAD_CUDA
		return &memory_cuda_ops;
#else
		return NULL;
#endif
	case MEMORY_AUTO:
		break;
	}
	return NULL;
}

#ifndef FPGAD_CUDA
int memory_cuda_probe(const char *gpu, int *ret_ordinal, char *why,
		      size_t whylen)
{
	(void)gpu;
	(void)ret_ordinal;
	if (why && whylen)
		snprintf(why, whylen, "built without CUDA");
	return -ENODEV;
}
#endif
