/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * xdma_desc.h - descriptor lists of the Xilinx XDMA scatter-gather engine
 * (DMA/Bridge Subsystem for PCI Express, product guide PG195).
 *
 * Builds in the kernel and in user space (the unit test runs it against a
 * register-level model of the engine): fixed-width types only, no
 * allocation, no I/O.
 *
 * A descriptor is 32 bytes, little-endian, 32-byte aligned:
 *   control  [31:16] magic 0xAD4B, [13:8] Nxt_adj, [4] EOP, [1] Completed
 *            (interrupt / count when this one finishes), [0] Stop
 *   bytes    [27:0] length (at most 2^28 - 1)
 *   src, dst 64-bit addresses (H2C: host -> card; C2H: card -> host)
 *   next     64-bit bus address of the next descriptor
 *
 * The engine fetches a descriptor together with up to Nxt_adj (at most 63)
 * descriptors that follow it in memory, in one read that must not cross a
 * 4 KiB boundary; the SGDMA "descriptor adjacent" register gives that count
 * for the first descriptor, each descriptor's Nxt_adj the count for the
 * one its next address names.  The builder fills a contiguous array and
 * links every descriptor to the next one.  Adjacent counts follow PG195's
 * rule as Xilinx's driver applies it: memory is cut into blocks of 64
 * descriptors (2 KiB, so that no block crosses 4 KiB), and inside a block
 * the count goes down by one from descriptor to descriptor, to 0 at the
 * block's last one or the list's.  Any fetch the engine makes is then
 * valid.  The last descriptor has Stop, Completed and EOP set and a next
 * address of 0.
 *
 * A descriptor moves at most XDMA_DESC_MAX_LEN: an engine told to stop
 * finishes the descriptor it is on first, and that has to take a bounded
 * time (1 MiB is 4 ms at PCIe Gen1 x1).
 */
#ifndef FPGAD_XDMA_DESC_H
#define FPGAD_XDMA_DESC_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stdint.h>
#endif

#define XDMA_DESC_MAGIC		0xad4bu
#define XDMA_DESC_STOP		(1u << 0)
#define XDMA_DESC_COMPLETED	(1u << 1)
#define XDMA_DESC_EOP		(1u << 4)
#define XDMA_DESC_ADJ_SHIFT	8
#define XDMA_DESC_ADJ_MASK	0x3fu
#define XDMA_DESC_MAX_ADJ	63u
#define XDMA_DESC_ADJ_BLOCK	64u		/* descriptors per adjacent block */
#define XDMA_DESC_LEN_MASK	0x0fffffffu	/* the 28-bit length field */
/* Longest piece put in one descriptor. */
#define XDMA_DESC_MAX_LEN	0x00100000u
#define XDMA_DESC_SIZE		32u
#define XDMA_DESC_FETCH_BLOCK	4096u		/* fetches stay inside one */

struct xdma_desc {
	uint32_t control;
	uint32_t bytes;
	uint32_t src_lo;
	uint32_t src_hi;
	uint32_t dst_lo;
	uint32_t dst_hi;
	uint32_t next_lo;
	uint32_t next_hi;
};

struct xdma_desc_list {
	struct xdma_desc *desc;	/* array of @max, 32-byte aligned */
	uint64_t bus;		/* bus address of desc[0] */
	uint32_t max;
	uint32_t count;		/* descriptors filled */
	uint64_t card_addr;	/* card address of the next byte */
	uint64_t bytes;		/* bytes described so far */
	bool c2h;		/* card to host */
};

/* Start an empty list for a transfer at @card_addr. */
void xdma_desc_begin(struct xdma_desc_list *l, struct xdma_desc *desc,
		     uint64_t bus, uint32_t max, uint64_t card_addr, bool c2h);

/*
 * Append the host range [host_addr, host_addr + len), split at
 * XDMA_DESC_MAX_LEN; returns the bytes taken, less than @len when the list
 * is full.
 */
uint64_t xdma_desc_add(struct xdma_desc_list *l, uint64_t host_addr,
		       uint64_t len);

/*
 * Link the list, set adjacent counts and the last descriptor's flags;
 * returns the value for the SGDMA descriptor adjacent register.  The list
 * must not be empty.
 */
uint32_t xdma_desc_finish(struct xdma_desc_list *l);

/*
 * Extra descriptors the engine may fetch together with descriptor @i: the
 * ones after it in its block of XDMA_DESC_ADJ_BLOCK and in the list.
 */
uint32_t xdma_desc_adjacent(const struct xdma_desc_list *l, uint32_t i);

#endif /* FPGAD_XDMA_DESC_H */
