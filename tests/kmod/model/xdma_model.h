/* SPDX-License-Identifier: MIT */
/*
 * xdma_model.h - a register-level model of the Xilinx XDMA IP (DMA/Bridge
 * Subsystem for PCI Express, product guide PG195) in AXI memory-mapped
 * mode, for the engine-model test of fpgad_xdma.c.
 *
 * What it models (xdma_model.c says how):
 *   - the DMA BAR: channel, IRQ block, config and SGDMA registers with
 *     their W1S/W1C/read-to-clear aliases and identifiers;
 *   - posted MMIO writes: a write lands when a later read flushes it or
 *     when the model gets to it, never at once, as on PCIe;
 *   - one engine thread per channel: a rising edge of Run starts it at the
 *     SGDMA descriptor address; it fetches a descriptor with its Nxt_adj
 *     neighbours in one read that must stay inside 4 KiB, checks the magic
 *     and the length, moves the bytes between host memory (through the
 *     DMA callback) and card memory, counts completed descriptors, writes
 *     the count back after each one when Pollmode_wb_enable and
 *     ie_descriptor_completed are both set (PG195, "Poll Mode"; with
 *     Sts_err, bit 31, when an error stops it), stops at a Stop
 *     descriptor, or after
 *     the descriptor it is on when Run is cleared;
 *   - status bits, error bits and interrupts only where the control
 *     register and the interrupt enable mask enable them: an error that is
 *     not enabled is not logged and does not stop the engine;
 *   - the IRQ block: pending, enable and request bits, vector numbers;
 *     MSI/MSI-X messages on a rising request, or a level INTx line that is
 *     asserted while a request is;
 *   - faults: AXI decode or slave errors on card reads (C2H) and writes
 *     (H2C) in a card address range, a hung AXI slave (the engine stays
 *     Busy until it is released), lost interrupt messages, a bad
 *     descriptor magic, link down (reads all ones, writes lost, no DMA),
 *     an engine left running by a previous driver;
 *   - function reset: every engine stops at once, registers to defaults.
 * Anything a driver must not do (start an engine that is Busy, rewrite its
 * descriptor registers while Busy, a fetch across 4 KiB, a list without
 * Stop) is counted as a violation with a message.
 */
#ifndef XDMA_MODEL_H
#define XDMA_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XM_MAX_CHANNELS		4	/* per direction */
#define XM_BAR_SIZE		0x10000

enum xm_irq_mode {
	XM_IRQ_NONE,
	XM_IRQ_MSIX,			/* a message per vector number */
	XM_IRQ_MSI,			/* a message per vector number */
	XM_IRQ_INTX,			/* level; vector number = INTA..INTD */
};

enum xm_fault_kind {
	XM_FAULT_DECODE = 1,		/* AXI DECERR */
	XM_FAULT_SLAVE,			/* AXI SLVERR */
	XM_FAULT_HANG,			/* the slave never answers */
};

struct xm_callbacks {
	void *ctx;
	/* Host memory through the bus: 0, or -errno when the access fails. */
	int (*dma)(void *ctx, uint64_t bus, void *buf, size_t len,
		   bool to_host);
	/* Send MSI/MSI-X vector @vec, or assert INTx line @vec once. */
	void (*irq)(void *ctx, enum xm_irq_mode mode, unsigned int vec);
};

struct xm_config {
	unsigned int n_h2c, n_c2h;
	bool stream;			/* identifiers say AXI4-Stream */
	uint32_t align[2];		/* alignments register, H2C and C2H */
	uint64_t card_size;		/* bytes of card memory */
	uint64_t bytes_per_ms;		/* engine rate; 0 = unlimited */
	bool left_running;		/* H2C 0 runs a list at start */
	uint32_t user_irq_en;		/* user interrupts a previous driver
					 * left enabled */
};

struct xm_stats {
	uint64_t violations;
	char last_violation[200];
	uint64_t starts;		/* Run rising edges */
	uint64_t fetches;
	uint64_t descriptors;		/* completed */
	uint64_t bytes;
	uint64_t irq_messages;		/* MSI/MSI-X sent */
	uint64_t irq_lost;		/* dropped on purpose */
	uint64_t intx_assertions;	/* INTx deliveries */
	uint64_t errors_logged;		/* engines stopped by an error */
	uint64_t errors_ignored;	/* errors not enabled: data lost */
	uint64_t writebacks;		/* poll-mode count write-backs */
	uint64_t writeback_errors;	/* ... of them with Sts_err */
	uint64_t leftover_writes;	/* the leftover engine's DMA writes
					 * (to an address nothing maps) */
};

struct xm;

struct xm *xm_new(const struct xm_config *cfg, const struct xm_callbacks *cb);
void xm_free(struct xm *m);

/* MMIO of the DMA BAR, as the host issues it. */
uint32_t xm_mmio_read(struct xm *m, uint32_t off);
void xm_mmio_write(struct xm *m, uint32_t off, uint32_t val);

void xm_set_irq_mode(struct xm *m, enum xm_irq_mode mode);
/* Function reset: engines stop at once, registers back to defaults. */
void xm_reset(struct xm *m);

uint8_t *xm_card(struct xm *m);
void xm_get_stats(struct xm *m, struct xm_stats *ret);
/* The engine's Busy, without MMIO (for the test's own waiting). */
bool xm_busy(struct xm *m, unsigned int dir, unsigned int ch);
/* Engines waiting on a hung slave now. */
unsigned int xm_hung(struct xm *m);

/* Faults.  @dir is 0 (H2C) or 1 (C2H). */
int xm_fault_add(struct xm *m, unsigned int dir, uint64_t card_lo,
		 uint64_t card_hi, enum xm_fault_kind kind);
void xm_fault_clear(struct xm *m);		/* releases hung engines */
void xm_lose_irqs(struct xm *m, unsigned int n);	/* drop the next n */
/* Descriptor @index (from 0, counted per started list) has a bad magic. */
void xm_bad_magic(struct xm *m, unsigned int dir, unsigned int ch,
		  unsigned int index);
/* Error bits of the status register (PG195, "Channel Status"). */
#define XM_ERR_ALIGN		(1u << 3)
#define XM_ERR_MAGIC		(1u << 4)
#define XM_ERR_LENGTH		(1u << 5)
#define XM_ERR_READ		(1u << 9)	/* the first of five */
#define XM_ERR_WRITE		(1u << 14)
#define XM_ERR_DESC		(1u << 19)

/*
 * The engine logs error @bits (status register positions: ALIGN, MAGIC,
 * LENGTH, READ_ERR, WRITE_ERR, DESC_ERR) at descriptor @index of the next
 * list it starts: before the descriptor moves data, or, with @after, once
 * it has been counted complete; after the last one the count is whole and
 * only the status register tells.
 */
void xm_error_at(struct xm *m, unsigned int dir, unsigned int ch,
		 uint32_t bits, unsigned int index, bool after);
/*
 * Whether an engine that an error stops writes its count back with
 * Sts_err (the default, what libxdma expects) or writes nothing back (a
 * write-back that does not arrive): the driver must see the error either
 * way, from the status register in the second case.
 */
void xm_err_writeback(struct xm *m, bool on);
void xm_link(struct xm *m, bool up);
/* Called in the writer's thread whenever a write that sets Run is issued. */
void xm_on_run(struct xm *m, void (*fn)(void *arg), void *arg);

#endif /* XDMA_MODEL_H */
