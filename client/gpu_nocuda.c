// SPDX-License-Identifier: MIT
/* gpu_nocuda.c - what a libfpgad built without CUDA says about GPU memory. */
#include <errno.h>
#include <stdio.h>

#include "client_internal.h"

int gpu_map(const struct gpu_ring_ref *ref, struct gpu_mapping *ret,
	    char *why, size_t whylen)
{
	(void)ref;
	(void)ret;
	snprintf(why, whylen, "this libfpgad was built without CUDA");
	return -ENODEV;
}

void gpu_unmap(struct gpu_mapping *m)
{
	(void)m;
}

int gpu_host_alloc(size_t len, void **ret_ptr)
{
	(void)len;
	(void)ret_ptr;
	return -ENODEV;
}

void gpu_host_free(void *ptr)
{
	(void)ptr;
}

int gpu_to_host(void *dst, const void *src_dev, size_t len)
{
	(void)dst;
	(void)src_dev;
	(void)len;
	return -ENODEV;
}

int gpu_from_host(void *dst_dev, const void *src, size_t len)
{
	(void)dst_dev;
	(void)src;
	(void)len;
	return -ENODEV;
}

int gpu_register_host(void *ptr, size_t len, void **ret_dev)
{
	(void)ptr;
	(void)len;
	(void)ret_dev;
	return -ENODEV;
}

void gpu_unregister_host(void *ptr)
{
	(void)ptr;
}

int gpu_stream_write32(void *stream, void *dev_addr, uint32_t value)
{
	(void)stream;
	(void)dev_addr;
	(void)value;
	return -ENODEV;
}

int gpu_pointer(const void *ptr, int *ret_gpu, char *why, size_t whylen)
{
	(void)ptr;
	(void)ret_gpu;
	(void)why;
	(void)whylen;
	return 0;
}

int gpu_export(const void *ptr, int gpu, uint8_t *ret_handle,
	       uint64_t *ret_offset, char *bus_id, size_t idlen, char *why,
	       size_t whylen)
{
	(void)ptr;
	(void)gpu;
	(void)ret_handle;
	(void)ret_offset;
	(void)bus_id;
	(void)idlen;
	snprintf(why, whylen, "this libfpgad was built without CUDA");
	return -ENODEV;
}
