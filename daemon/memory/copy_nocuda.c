// SPDX-License-Identifier: MIT
/*
 * copy_nocuda.c - the copy engine of a build without CUDA (copy.h): no
 * engine opens and no host memory is page-locked, so bounce mode and the
 * sim's GPU "DMA" are refused where they are set up, by name.
 */
#include <errno.h>

#include "memory/copy.h"

int copy_open(int gpu, unsigned depth, struct copy_engine **ret_ce)
{
	(void)gpu;
	(void)depth;
	(void)ret_ce;
	return -EOPNOTSUPP;
}

void copy_close(struct copy_engine *ce)
{
	(void)ce;
}

int copy_gpu(const struct copy_engine *ce)
{
	(void)ce;
	return -1;
}

int copy_submit(struct copy_engine *ce, void *dst, const void *src,
		size_t len, enum copy_kind kind, uint64_t cookie)
{
	(void)ce;
	(void)dst;
	(void)src;
	(void)len;
	(void)kind;
	(void)cookie;
	return -EOPNOTSUPP;
}

int copy_chain(struct copy_engine *ce, void *dst, const void *src, size_t len,
	       enum copy_kind kind)
{
	(void)ce;
	(void)dst;
	(void)src;
	(void)len;
	(void)kind;
	return -EOPNOTSUPP;
}

int copy_reap(struct copy_engine *ce, int block, struct copy_done *ret_done)
{
	(void)ce;
	(void)block;
	(void)ret_done;
	return 0;
}

unsigned copy_pending(const struct copy_engine *ce)
{
	(void)ce;
	return 0;
}

int copy_host_alloc(size_t len, void **ret_ptr)
{
	(void)len;
	(void)ret_ptr;
	return -EOPNOTSUPP;
}

void copy_host_free(void *ptr)
{
	(void)ptr;
}

int copy_host_register(void *ptr, size_t len)
{
	(void)ptr;
	(void)len;
	return -EOPNOTSUPP;
}

void copy_host_unregister(void *ptr)
{
	(void)ptr;
}

int copy_batch_open(int gpu, size_t staging, struct copy_batch **ret_b)
{
	(void)gpu, (void)staging, (void)ret_b;
	return -EOPNOTSUPP;
}

void copy_batch_close(struct copy_batch *b)
{
	(void)b;
}

int copy_batch_get(struct copy_batch *b, void *dst, const void *src,
		   size_t spitch, size_t width, size_t height)
{
	(void)b, (void)dst, (void)src, (void)spitch, (void)width, (void)height;
	return -EOPNOTSUPP;
}

int copy_batch_put(struct copy_batch *b, void *dst, size_t dpitch,
		   const void *src, size_t width, size_t height)
{
	(void)b, (void)dst, (void)dpitch, (void)src, (void)width, (void)height;
	return -EOPNOTSUPP;
}

int copy_batch_copy(struct copy_batch *b, void *dst, const void *src, size_t len)
{
	(void)b, (void)dst, (void)src, (void)len;
	return -EOPNOTSUPP;
}

int copy_batch_wait(struct copy_batch *b)
{
	(void)b;
	return -EOPNOTSUPP;
}
