// SPDX-License-Identifier: MIT
/* memory.c - the table of memory backends. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memory/memory.h"

enum rdma_order memory_rdma_order(int attribute)
{
	const char *t = getenv("FPGAD_TEST_RDMA_ORDER");

	if (t && t[0])
		return !strcmp(t, "none") ? RDMA_ORDER_NONE :
		       !strcmp(t, "owner") ? RDMA_ORDER_OWNER :
		       !strcmp(t, "all") ? RDMA_ORDER_ALL : RDMA_ORDER_UNKNOWN;
	switch (attribute) {
	case 0:
		return RDMA_ORDER_NONE;
	case 100:
		return RDMA_ORDER_OWNER;
	case 200:
		return RDMA_ORDER_ALL;
	}
	return RDMA_ORDER_UNKNOWN;
}

const char *memory_rdma_order_rule(enum rdma_order o)
{
	switch (o) {
	case RDMA_ORDER_NONE:
		return "the GPU does not order the card's writes: flushed before they are handed over";
	case RDMA_ORDER_OWNER:
		return "the GPU orders the card's writes for itself";
	case RDMA_ORDER_ALL:
		return "every GPU sees the card's writes in order";
	case RDMA_ORDER_UNKNOWN:
		break;
	}
	return "the GPU's ordering of the card's writes is unknown";
}

bool memory_gpu_integrated(int attribute)
{
	const char *t = getenv("FPGAD_TEST_GPU_INTEGRATED");

	if (t && t[0])
		return !strcmp(t, "1");
	return attribute == 1;
}

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
