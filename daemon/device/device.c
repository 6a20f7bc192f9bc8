// SPDX-License-Identifier: MIT
/* device.c - the table of device backends, and pinning a ring on one. */
#include <stddef.h>
#include <unistd.h>

#include "device/device.h"
#include "memory/memory.h"

const struct device_ops *device_ops_for(enum backend_kind kind)
{
	switch (kind) {
	case BACKEND_SIM:
		return &device_sim_ops;
	case BACKEND_XDMA:
		return &device_xdma_ops;
	}
	return NULL;
}

int device_pin_region(const struct device_ops *ops, struct device_queue *q,
		      const struct memory_ops *mops, struct mem_region *mem,
		      uint64_t *ret_handle)
{
	/* An integrated GPU's ring is host memory: the card writes it there. */
	bool gpu = mem->kind == MEMORY_CUDA && !mem->integrated;
	struct dev_region reg = {
		.kind = gpu ? DEV_REGION_CUDA : DEV_REGION_HOST,
		.addr = gpu ? mem->dev : mem->host,
		.fd = -1,
		.length = mem->size,
		.gpu = mem->gpu,
	};
	int fd, r;

	/* A dma-buf of GPU memory is what a real card imports. */
	if (gpu &&
	    mops->export_dmabuf(mem, 0, mem->size, &fd) == 0) {
		struct dev_region buf = reg;

		buf.kind = DEV_REGION_DMABUF;
		buf.fd = fd;
		r = ops->pin(q, &buf, ret_handle);
		close(fd);
		if (r == 0)
			return 0;
	}
	/* The sim takes the address; so does a card for host memory. */
	return ops->pin(q, &reg, ret_handle);
}
