// SPDX-License-Identifier: MIT
/*
 * roce_landing.c - a RoCE channel's landing ring in GPU memory or host
 * memory, and why (roce_landing.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/net/roce_landing.h"
#include "memory/copy.h"

/* The GPU landing ring: 0, or -errno with why the host's is used. */
static int try_gpu(struct roce_landing *l, const struct roce_landing_ops *ops,
		   void *user, const char *provider, uint64_t iova)
{
	char why[160] = "";
	uint32_t rkey;
	int r;

	if (!ops->reg_dmabuf) {
		snprintf(l->shown, sizeof(l->shown),
			 "host: this libibverbs has no ibv_reg_dmabuf_mr");
		return -EOPNOTSUPP;
	}
	r = ops->gpu_alloc(user, l->len, &l->mem, &l->fd, why, sizeof(why));
	if (r < 0) {
		snprintf(l->shown, sizeof(l->shown),
			 "host: no dma-buf of GPU memory: %s",
			 *why ? why : strerror(-r));
		return r;
	}
	r = ops->reg_dmabuf(user, l->fd, l->len, iova, &rkey);
	if (r < 0) {
		snprintf(l->shown, sizeof(l->shown),
			 "host: %s refused ibv_reg_dmabuf_mr: %s", provider,
			 strerror(-r));
		ops->gpu_free(user, l->mem, l->fd);
		l->mem = NULL;
		l->fd = -1;
		return r;
	}
	l->kind = ROCE_LANDING_GPU;
	snprintf(l->shown, sizeof(l->shown), "gpu (dma-buf MR)");
	return 0;
}

int roce_landing_open(struct roce_landing *l, const struct roce_landing_ops *ops,
		      void *user, bool gpu_ring, const char *provider, size_t len,
		      uint64_t iova)
{
	memset(l, 0, sizeof(*l));
	l->fd = -1;
	l->len = len;
	l->kind = ROCE_LANDING_HOST;
	snprintf(l->shown, sizeof(l->shown), "host (the ring is in host memory)");
	if (gpu_ring && try_gpu(l, ops, user, provider, iova) == 0)
		return 0;
	l->mem = aligned_alloc(4096, len);
	return l->mem ? 0 : -ENOMEM;
}

int roce_landing_reg(struct roce_landing *l, const struct roce_landing_ops *ops,
		     void *user, uint64_t iova, uint32_t *ret_rkey)
{
	if (l->kind == ROCE_LANDING_GPU)
		return ops->reg_dmabuf(user, l->fd, l->len, iova, ret_rkey);
	return ops->reg_host(user, l->mem, l->len, iova, ret_rkey);
}

void roce_landing_close(struct roce_landing *l, const struct roce_landing_ops *ops,
			void *user)
{
	if (l->kind == ROCE_LANDING_GPU)
		ops->gpu_free(user, l->mem, l->fd);
	else
		free(l->mem);
	l->mem = NULL;
	l->fd = -1;
}

/* --- GPU landing memory ------------------------------------------------------ */

int roce_landing_gpu_alloc(size_t len, const char *gpu, const char *name,
			   struct mem_region **ret_region, int *ret_fd,
			   char *why, size_t whylen)
{
	struct mem_region *m;
	int r;

	r = memory_cuda_ops.alloc(len, gpu, name, 0, &m);
	if (r < 0) {
		snprintf(why, whylen, "GPU %s: %s", gpu, strerror(-r));
		return r;
	}
	if (m->integrated) {
		memory_cuda_ops.free(m);
		snprintf(why, whylen, "an integrated GPU's ring is host memory");
		return -EOPNOTSUPP;
	}
	r = memory_cuda_ops.export_dmabuf(m, 0, len, ret_fd);
	if (r < 0) {
		memory_cuda_ops.free(m);
		snprintf(why, whylen, "cuMemGetHandleForAddressRange: %s",
			 strerror(-r));
		return r;
	}
	*ret_region = m;
	return 0;
}

int roce_landing_gpu_io_open(struct roce_landing_gpu *g, struct mem_region *m,
			     size_t staging)
{
	g->m = m;
	return copy_batch_open(m->gpu, staging, &g->batch);
}

void roce_landing_gpu_io_close(struct roce_landing_gpu *g)
{
	copy_batch_close(g->batch);
	g->batch = NULL;
}

static int gpu_get(void *user, void *dst, uint64_t off, uint64_t pitch,
		   size_t width, size_t n)
{
	struct roce_landing_gpu *g = user;

	return copy_batch_get(g->batch, dst, (unsigned char *)g->m->dev + off,
			      pitch, width, n);
}

static int gpu_put(void *user, uint64_t off, uint64_t pitch, const void *src,
		   size_t width, size_t n)
{
	struct roce_landing_gpu *g = user;

	return copy_batch_put(g->batch, (unsigned char *)g->m->dev + off, pitch,
			      src, width, n);
}

/* Into a GPU slot (gpudirect) or a bounce slot: the address tells. */
static int gpu_copy_out(void *user, void *dst, uint64_t off, size_t len)
{
	struct roce_landing_gpu *g = user;

	return copy_batch_copy(g->batch, dst, (unsigned char *)g->m->dev + off, len);
}

static int gpu_wait(void *user)
{
	struct roce_landing_gpu *g = user;

	return copy_batch_wait(g->batch);
}

const struct roce_landing_io roce_landing_gpu_io = {
	.get = gpu_get,
	.put = gpu_put,
	.copy_out = gpu_copy_out,
	.wait = gpu_wait,
};
