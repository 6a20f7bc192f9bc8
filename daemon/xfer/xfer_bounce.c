// SPDX-License-Identifier: MIT
/*
 * xfer_bounce.c - what bounce mode needs (xfer_impl.h): the staging, one
 * area of pinned host memory cut into parts and pinned in every engine,
 * and a GPU copy engine per GPU, each made the first time a buffer needs
 * it and kept until the service stops.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "xfer/xfer_impl.h"

int xfer_copy_engine(struct xfer *x, int gpu, struct copy_engine **ret_ce)
{
	struct copy_engine *ce;
	int r;

	for (unsigned i = 0; i < x->n_ce; i++) {
		if (copy_gpu(x->ce[i]) == gpu) {
			*ret_ce = x->ce[i];
			return 0;
		}
	}
	if (x->n_ce == XFER_MAX_GPUS)
		return -ENOSPC;
	r = copy_open(gpu, XFER_COPY_DEPTH, &ce);
	if (r)
		return r;
	x->ce[x->n_ce++] = ce;
	*ret_ce = ce;
	return 0;
}

int xfer_staging(struct xfer *x, char *err, size_t errlen)
{
	uint64_t size = (uint64_t)x->cfg.bounce_slots * x->rules.part_size;
	int r;

	if (x->staging)
		return 0;
	r = copy_host_alloc(size, &x->staging);
	if (r) {
		snprintf(err, errlen, "no pinned staging for bounce mode "
			 "(%" PRIu64 " bytes): %s", size, strerror(-r));
		x->staging = NULL;
		return r;
	}
	for (unsigned d = 0; d < 2; d++) {
		for (unsigned i = 0; i < x->n_eng[d]; i++) {
			struct dev_region reg = {
				.kind = DEV_REGION_HOST,
				.addr = x->staging,
				.fd = -1,
				.length = size,
			};

			r = x->ops->pin(x->eng[d][i].q, &reg,
					&x->eng[d][i].staging_pin);
			if (r) {
				snprintf(err, errlen, "the card cannot pin the "
					 "bounce staging: %s", strerror(-r));
				return r;
			}
		}
	}
	x->n_staging = x->cfg.bounce_slots;
	x->staging_free = x->n_staging == XFER_MAX_STAGING ? ~0ull :
			  (1ull << x->n_staging) - 1;
	return 0;
}

void xfer_staging_put(struct xfer *x, int slot)
{
	if (slot >= 0)
		x->staging_free |= 1ull << slot;
}

int xfer_staging_get(struct xfer *x)
{
	int slot;

	if (!x->staging_free)
		return -1;
	slot = __builtin_ctzll(x->staging_free);
	x->staging_free &= ~(1ull << slot);
	return slot;
}

unsigned char *xfer_staging_at(struct xfer *x, int slot)
{
	return (unsigned char *)x->staging +
	       (uint64_t)slot * x->rules.part_size;
}

void xfer_bounce_free(struct xfer *x)
{
	for (unsigned i = 0; i < x->n_ce; i++)
		copy_close(x->ce[i]);
	copy_host_free(x->staging);
}
