// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * xdma_desc.c - XDMA descriptor list builder; see xdma_desc.h.
 */
#include "xdma_desc.h"

#ifdef __KERNEL__
#include <asm/byteorder.h>
#define xdma_le32(v)	((__force uint32_t)cpu_to_le32(v))
#else
#include <endian.h>
#define xdma_le32(v)	htole32(v)
#endif

void xdma_desc_begin(struct xdma_desc_list *l, struct xdma_desc *desc,
		     uint64_t bus, uint32_t max, uint64_t card_addr, bool c2h)
{
	l->desc = desc;
	l->bus = bus;
	l->max = max;
	l->count = 0;
	l->card_addr = card_addr;
	l->bytes = 0;
	l->c2h = c2h;
}

static void xdma_desc_set(struct xdma_desc *d, uint64_t src, uint64_t dst,
			  uint32_t len)
{
	d->control = xdma_le32(XDMA_DESC_MAGIC << 16);
	d->bytes = xdma_le32(len);
	d->src_lo = xdma_le32((uint32_t)src);
	d->src_hi = xdma_le32((uint32_t)(src >> 32));
	d->dst_lo = xdma_le32((uint32_t)dst);
	d->dst_hi = xdma_le32((uint32_t)(dst >> 32));
	d->next_lo = 0;
	d->next_hi = 0;
}

uint64_t xdma_desc_add(struct xdma_desc_list *l, uint64_t host_addr,
		       uint64_t len)
{
	uint64_t taken = 0;

	while (taken < len && l->count < l->max) {
		uint64_t left = len - taken;
		uint32_t n = left > XDMA_DESC_MAX_LEN ? XDMA_DESC_MAX_LEN :
			     (uint32_t)left;
		uint64_t host = host_addr + taken;

		if (l->c2h)
			xdma_desc_set(&l->desc[l->count], l->card_addr, host, n);
		else
			xdma_desc_set(&l->desc[l->count], host, l->card_addr, n);
		l->count++;
		l->card_addr += n;
		l->bytes += n;
		taken += n;
	}
	return taken;
}

uint32_t xdma_desc_adjacent(const struct xdma_desc_list *l, uint32_t i)
{
	uint64_t at = l->bus + (uint64_t)i * XDMA_DESC_SIZE;
	uint32_t pos = (uint32_t)(at / XDMA_DESC_SIZE % XDMA_DESC_ADJ_BLOCK);
	uint32_t in_block = XDMA_DESC_ADJ_BLOCK - 1 - pos;
	uint32_t in_list = l->count - 1 - i;

	return in_block < in_list ? in_block : in_list;
}

uint32_t xdma_desc_finish(struct xdma_desc_list *l)
{
	uint32_t i, last = l->count - 1;

	for (i = 0; i < last; i++) {
		uint64_t next = l->bus + (uint64_t)(i + 1) * XDMA_DESC_SIZE;
		uint32_t control = (XDMA_DESC_MAGIC << 16) |
				   (xdma_desc_adjacent(l, i + 1) <<
				    XDMA_DESC_ADJ_SHIFT);

		l->desc[i].control = xdma_le32(control);
		l->desc[i].next_lo = xdma_le32((uint32_t)next);
		l->desc[i].next_hi = xdma_le32((uint32_t)(next >> 32));
	}
	l->desc[last].control = xdma_le32((XDMA_DESC_MAGIC << 16) |
					  XDMA_DESC_STOP | XDMA_DESC_COMPLETED |
					  XDMA_DESC_EOP);
	l->desc[last].next_lo = 0;
	l->desc[last].next_hi = 0;
	return xdma_desc_adjacent(l, 0);
}
