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
