// SPDX-License-Identifier: MIT
/* memory.c - the table of memory backends. */
#include <errno.h>

#include "memory/memory.h"

const struct memory_ops *memory_ops_for(enum memory_kind kind)
{
	switch (kind) {
	case MEMORY_HOST:
		return &memory_host_ops;
	case MEMORY_CUDA:
		return &memory_cuda_ops;
	case MEMORY_AUTO:
		break;
	}
	return NULL;
}
