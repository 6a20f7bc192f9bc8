// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpgad_xdma.c - engine for the Xilinx DMA/Bridge Subsystem for PCI Express
 * (XDMA, product guide PG195) in AXI memory-mapped mode.
 *
 * Register map of the DMA BAR (64 KiB):
 *   0x0000 + n*0x100  H2C channel n      0x1000 + n*0x100  C2H channel n
 *   0x2000            IRQ block          0x3000            config block
 *   0x4000 + n*0x100  H2C SGDMA n        0x5000 + n*0x100  C2H SGDMA n
 * The DMA BAR is found by the identifiers of the IRQ and config blocks; a
 * user (AXI-Lite) BAR may come before it.  Channels whose identifier says
 * AXI4-Stream are refused at probe: their descriptors mean something else.
 *
 * A transfer becomes descriptor lists (xdma_desc.c) in a coherent ring of
 * XDMA_RING_DESCS per channel; a transfer that needs more descriptors runs
 * as several lists in turn.  Completion is taken from the channel's MSI-X
 * (or MSI, or legacy INTx) interrupt, or with poll_mode=1 (read once per
 * list) from the poll-mode write-back of the completed descriptor count,
 * which PG195 ("Poll Mode") makes only with both Pollmode_wb_enable and
 * ie_descriptor_completed set.  Every error the engine can log is enabled
 * in both modes, so that it stops the engine and shows in the status
 * register; in poll mode the write-back then carries Sts_err (bit 31), and
 * the poll loop reads the status register on every round as well, for an
 * engine that cannot write back.
 *
 * After every list, and after a timeout or cancel, the Run bit is cleared
 * and the driver waits for Busy to drop, so no DMA of the transfer is
 * outstanding when run() returns.  An engine finishes the descriptor it is
 * on first; descriptors are at most XDMA_DESC_MAX_LEN (1 MiB), and the
 * wait allows for that at the link's rate.  An engine still Busy after it
 * (a hung AXI slave) or reading all ones (link down, surprise removal)
 * wedges its channel (fpgad_cdev.c), and RESET resets the function.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/interrupt.h>
#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/pci.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "fpgad_compat.h"
#include "fpgad_drv.h"
#include "xdma_desc.h"

#define XDMA_BAR_SPAN		0x10000

#define XDMA_H2C_CHAN(n)	(0x0000 + (n) * 0x100)
#define XDMA_C2H_CHAN(n)	(0x1000 + (n) * 0x100)
#define XDMA_IRQ_BLOCK		0x2000
#define XDMA_CONFIG_BLOCK	0x3000
#define XDMA_H2C_SGDMA(n)	(0x4000 + (n) * 0x100)
#define XDMA_C2H_SGDMA(n)	(0x5000 + (n) * 0x100)

#define XDMA_ID_SUBSYSTEM	0x1fc
#define XDMA_ID_TARGET_H2C	0x0
#define XDMA_ID_TARGET_C2H	0x1
#define XDMA_ID_TARGET_IRQ	0x2
#define XDMA_ID_TARGET_CONFIG	0x3
#define XDMA_ID_STREAM		BIT(15)	/* channel: AXI4-Stream interface */

/* Channel registers. */
#define XDMA_CH_ID		0x00
#define XDMA_CH_CONTROL		0x04
#define XDMA_CH_CONTROL_W1C	0x0c
#define XDMA_CH_STATUS		0x40
#define XDMA_CH_STATUS_RC	0x44	/* read clears */
#define XDMA_CH_COMPLETED	0x48
#define XDMA_CH_ALIGNMENTS	0x4c
#define XDMA_CH_POLL_WB_LO	0x88
#define XDMA_CH_POLL_WB_HI	0x8c
#define XDMA_CH_INT_MASK	0x90

/* Control bits; the interrupt enable mask uses the same positions. */
#define XDMA_CTRL_RUN		BIT(0)
#define XDMA_CTRL_IE_STOPPED	BIT(1)
#define XDMA_CTRL_IE_COMPLETED	BIT(2)
#define XDMA_CTRL_IE_ALIGN	BIT(3)
#define XDMA_CTRL_IE_MAGIC	BIT(4)
#define XDMA_CTRL_IE_LENGTH	BIT(5)
#define XDMA_CTRL_IE_READ_ERR	(0x1fU << 9)
#define XDMA_CTRL_IE_WRITE_ERR	(0x1fU << 14)
#define XDMA_CTRL_IE_DESC_ERR	(0x1fU << 19)
#define XDMA_CTRL_POLL_WB	BIT(26)
/* Log every error and stop the engine on it, in either mode. */
#define XDMA_CTRL_IE_ERRORS	(XDMA_CTRL_IE_ALIGN | XDMA_CTRL_IE_MAGIC | \
				 XDMA_CTRL_IE_LENGTH | XDMA_CTRL_IE_READ_ERR | \
				 XDMA_CTRL_IE_WRITE_ERR | XDMA_CTRL_IE_DESC_ERR)
#define XDMA_CTRL_IE_ALL	(XDMA_CTRL_IE_STOPPED | XDMA_CTRL_IE_COMPLETED | \
				 XDMA_CTRL_IE_ERRORS)

#define XDMA_STAT_BUSY		BIT(0)
#define XDMA_STAT_STOPPED	BIT(1)
#define XDMA_STAT_ERRORS	XDMA_CTRL_IE_ERRORS
#define XDMA_GONE		0xffffffffU	/* what a read of a dead link gives */

/* SGDMA registers. */
#define XDMA_SG_DESC_LO		0x80
#define XDMA_SG_DESC_HI		0x84
#define XDMA_SG_DESC_ADJ	0x88

/* IRQ block registers. */
#define XDMA_IRQ_USER_EN	0x04
#define XDMA_IRQ_CHAN_EN	0x10
#define XDMA_IRQ_CHAN_EN_W1S	0x14
#define XDMA_IRQ_CHAN_EN_W1C	0x18
#define XDMA_IRQ_CHAN_REQ	0x44
#define XDMA_IRQ_CHAN_VEC(n)	(0xa0 + (n) * 4)	/* 4 engines each */

/* Poll-mode write-back word. */
#define XDMA_WB_COUNT		0x00ffffffU
#define XDMA_WB_ERR		BIT(31)

#define XDMA_RING_DESCS		1024
#define XDMA_RING_BYTES		(XDMA_RING_DESCS * XDMA_DESC_SIZE)
#define XDMA_COHERENT_BYTES	(XDMA_RING_BYTES + PAGE_SIZE)	/* + write-back */
#define XDMA_MAX_TRANSFER	(1ULL << 32)
/*
 * Stopping waits for the descriptor under way: 20 times what the longest
 * one takes at the link's raw rate (card-side stalls, a slow link), and
 * never less than XDMA_STOP_MIN_MS.
 */
#define XDMA_STOP_MIN_MS	100
#define XDMA_STOP_FACTOR	20

struct xdma_chan {
	u32 regs;			/* channel register block */
	u32 sgdma;			/* SGDMA register block */
	u32 irq_bit;			/* bit in the IRQ block's engine masks */
	u32 align;			/* address alignment the engine wants */
	struct xdma_desc *ring;
	dma_addr_t ring_bus;
	u32 *wb;			/* poll-mode write-back word */
	dma_addr_t wb_bus;
};

struct xdma {
	void __iomem *bar;
	int bar_index;
	int nvec;
	bool intx;			/* legacy interrupt: all on one pin */
	u8 intx_vec;			/* that pin, 0 = INTA */
	unsigned int stop_ms;
	struct xdma_chan *xc;		/* parallel to fdev->chans */
	struct dentry *dbg;		/* fpgad_dma/<PCI address>/ */
};

/* What libxdma's engine_reg_dump shows, read without side effects. */
struct xdma_regs {
	u32 control, status, completed, int_mask;
	u32 desc_lo, desc_hi, adj;
	u32 irq_en, irq_req, wb;
};

static u32 xdma_rd(struct xdma *x, u32 reg)
{
	return ioread32(x->bar + reg);
}

static void xdma_wr(struct xdma *x, u32 reg, u32 val)
{
	iowrite32(val, x->bar + reg);
}

static bool xdma_id_is(u32 id, u32 target)
{
	return (id >> 20) == XDMA_ID_SUBSYSTEM && ((id >> 16) & 0xf) == target;
}

static const char *xdma_dir(const struct fpgad_chan *ch)
{
	return ch->dir == FPGAD_DMA_C2H ? "C2H" : "H2C";
}

static void xdma_regs_read(struct fpgad_chan *ch, struct xdma_regs *r)
{
	struct xdma *x = ch->fdev->engine_priv;
	struct xdma_chan *xc = ch->priv;

	r->control = xdma_rd(x, xc->regs + XDMA_CH_CONTROL);
	r->status = xdma_rd(x, xc->regs + XDMA_CH_STATUS);
	r->completed = xdma_rd(x, xc->regs + XDMA_CH_COMPLETED);
	r->int_mask = xdma_rd(x, xc->regs + XDMA_CH_INT_MASK);
	r->desc_lo = xdma_rd(x, xc->sgdma + XDMA_SG_DESC_LO);
	r->desc_hi = xdma_rd(x, xc->sgdma + XDMA_SG_DESC_HI);
	r->adj = xdma_rd(x, xc->sgdma + XDMA_SG_DESC_ADJ);
	r->irq_en = xdma_rd(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_EN);
	r->irq_req = xdma_rd(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_REQ);
	r->wb = le32_to_cpu(READ_ONCE(*(__le32 *)xc->wb));
}

#define XDMA_REGS_FMT "control %08x status %08x completed %u int_mask %08x descriptors %08x%08x adj %u irq_en %08x irq_req %08x poll_wb %08x"
#define XDMA_REGS_ARGS(r) (r)->control, (r)->status, (r)->completed, \
	(r)->int_mask, (r)->desc_hi, (r)->desc_lo, (r)->adj, (r)->irq_en, \
	(r)->irq_req, (r)->wb

/* A timeout: the engine's registers, in the log once, before it is stopped. */
static void xdma_timeout_dump(struct fpgad_chan *ch, u32 count)
{
	struct xdma_regs r;

	xdma_regs_read(ch, &r);
	dev_err(&ch->fdev->pdev->dev,
		"XDMA %s channel %u timed out, %u descriptors listed: " XDMA_REGS_FMT "\n",
		xdma_dir(ch), ch->hw_index, count, XDMA_REGS_ARGS(&r));
}

/* /sys/kernel/debug/fpgad_dma/<PCI address>/regs: every channel's. */
static int xdma_regs_show(struct seq_file *m, void *data)
{
	struct fpgad_dev *fdev = data;
	struct xdma_regs r;
	unsigned int k;

	for (k = 0; k < fdev->nchans; k++) {
		xdma_regs_read(&fdev->chans[k], &r);
		seq_printf(m, "%s %u: " XDMA_REGS_FMT "\n",
			   xdma_dir(&fdev->chans[k]), fdev->chans[k].hw_index,
			   XDMA_REGS_ARGS(&r));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(xdma_regs);

/*
 * Clear Run and wait for Busy to drop; then no DMA of the list is pending.
 * -EBUSY: still Busy after stop_ms; -ENODEV: the registers read all ones.
 */
static int xdma_stop(struct fpgad_chan *ch)
{
	struct xdma *x = ch->fdev->engine_priv;
	struct xdma_chan *xc = ch->priv;
	unsigned long deadline = jiffies + msecs_to_jiffies(x->stop_ms);
	u32 status;

	xdma_wr(x, xc->regs + XDMA_CH_CONTROL_W1C,
		XDMA_CTRL_RUN | XDMA_CTRL_POLL_WB);
	for (;;) {
		status = xdma_rd(x, xc->regs + XDMA_CH_STATUS);
		if (status == XDMA_GONE) {
			dev_err(&ch->fdev->pdev->dev,
				"XDMA %s channel %u reads all ones: the card is gone or its link is down\n",
				xdma_dir(ch), ch->hw_index);
			return -ENODEV;
		}
		if (!(status & XDMA_STAT_BUSY))
			break;
		if (time_after(jiffies, deadline)) {
			dev_err(&ch->fdev->pdev->dev,
				"XDMA %s channel %u still busy %u ms after Run was cleared: the engine did not stop (a hung AXI slave?)\n",
				xdma_dir(ch), ch->hw_index, x->stop_ms);
			return -EBUSY;
		}
		usleep_range(50, 100);
	}
	xdma_wr(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_EN_W1C, BIT(xc->irq_bit));
	xdma_rd(x, xc->regs + XDMA_CH_STATUS_RC);
	atomic_set(&ch->irq_done, 0);
	return 0;
}

/* Wait for the list of @count descriptors; the engine keeps running. */
static int xdma_wait(struct fpgad_chan *ch, u32 count, unsigned long deadline,
		     bool poll)
{
	struct xdma *x = ch->fdev->engine_priv;
	struct xdma_chan *xc = ch->priv;
	u32 status, wb;
	int ret;

	if (!poll) {
		for (;;) {
			ret = fpgad_chan_wait(ch, deadline);
			status = xdma_rd(x, xc->regs + XDMA_CH_STATUS);
			if (status == XDMA_GONE)
				return -ENODEV;
			if (!(status & XDMA_STAT_BUSY) ||
			    (status & (XDMA_STAT_STOPPED | XDMA_STAT_ERRORS)))
				return ret == -ECANCELED ? ret : 0;
			if (ret)
				return ret;
			/* Not ours to finish yet: listen again. */
			xdma_wr(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_EN_W1S,
				BIT(xc->irq_bit));
		}
	}

	/*
	 * The write-back counts every completed descriptor (PG195, "Poll
	 * Mode") and has Sts_err set once an error stopped the engine; the
	 * status register is read on every round as well, for an engine whose
	 * write-back does not arrive.
	 */
	for (;;) {
		wb = le32_to_cpu(READ_ONCE(*(__le32 *)xc->wb));
		if ((wb & XDMA_WB_ERR) || (wb & XDMA_WB_COUNT) >= count)
			return 0;
		status = xdma_rd(x, xc->regs + XDMA_CH_STATUS);
		if (status == XDMA_GONE)
			return -ENODEV;
		if (status & XDMA_STAT_ERRORS)
			return 0;
		if (fpgad_chan_aborted(ch))
			return -ECANCELED;
		if (time_after(jiffies, deadline))
			return -ETIMEDOUT;
		usleep_range(10, 50);
	}
}

/* Run one descriptor list, then stop the engine; 0 or -errno. */
static int xdma_run_list(struct fpgad_chan *ch, struct xdma_desc_list *l,
			 u32 adj, unsigned long deadline)
{
	struct xdma *x = ch->fdev->engine_priv;
	struct xdma_chan *xc = ch->priv;
	bool poll = READ_ONCE(fpgad_poll_mode);	/* one mode per list */
	u32 control = XDMA_CTRL_RUN | XDMA_CTRL_IE_ERRORS, status, done, wb = 0;
	int ret, stopped;

	xdma_wr(x, xc->sgdma + XDMA_SG_DESC_LO, lower_32_bits(xc->ring_bus));
	xdma_wr(x, xc->sgdma + XDMA_SG_DESC_HI, upper_32_bits(xc->ring_bus));
	xdma_wr(x, xc->sgdma + XDMA_SG_DESC_ADJ, adj);
	xdma_rd(x, xc->regs + XDMA_CH_STATUS_RC);
	atomic_set(&ch->irq_done, 0);

	if (poll) {
		WRITE_ONCE(*xc->wb, 0);
		xdma_wr(x, xc->regs + XDMA_CH_POLL_WB_LO, lower_32_bits(xc->wb_bus));
		xdma_wr(x, xc->regs + XDMA_CH_POLL_WB_HI, upper_32_bits(xc->wb_bus));
		/* Both bits, or no write-back (PG195, "Poll Mode"). */
		control |= XDMA_CTRL_POLL_WB | XDMA_CTRL_IE_COMPLETED;
	} else {
		control |= XDMA_CTRL_IE_STOPPED | XDMA_CTRL_IE_COMPLETED;
		xdma_wr(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_EN_W1S,
			BIT(xc->irq_bit));
	}
	/* writel orders the descriptor stores before the Run bit. */
	xdma_wr(x, xc->regs + XDMA_CH_CONTROL, control);

	ret = xdma_wait(ch, l->count, deadline, poll);
	if (ret == -ETIMEDOUT)
		xdma_timeout_dump(ch, l->count);
	status = xdma_rd(x, xc->regs + XDMA_CH_STATUS);
	done = xdma_rd(x, xc->regs + XDMA_CH_COMPLETED);
	if (poll)
		wb = le32_to_cpu(READ_ONCE(*(__le32 *)xc->wb));
	stopped = xdma_stop(ch);
	if (stopped) {
		fpgad_chan_wedge(ch);
		return stopped == -ENODEV ? -ENODEV : ret ? ret : -EIO;
	}
	if (ret)
		return ret;
	if ((status & XDMA_STAT_ERRORS) || (wb & XDMA_WB_ERR)) {
		dev_err(&ch->fdev->pdev->dev,
			"XDMA %s channel %u error: status %08x, %u of %u descriptors\n",
			xdma_dir(ch), ch->hw_index, status, done, l->count);
		return -EIO;
	}
	if (done != l->count) {
		dev_err(&ch->fdev->pdev->dev,
			"XDMA %s channel %u stopped after %u of %u descriptors\n",
			xdma_dir(ch), ch->hw_index, done, l->count);
		return -EIO;
	}
	return 0;
}

static int xdma_run(struct fpgad_chan *ch, struct fpgad_xfer *xf)
{
	struct xdma_chan *xc = ch->priv;
	unsigned long deadline = jiffies + msecs_to_jiffies(xf->timeout_ms);
	u64 card = xf->card_addr, seg_len = 0, took;
	struct fpgad_seg_iter it;
	struct xdma_desc_list l;
	dma_addr_t seg = 0;
	int ret;

	fpgad_seg_init(&it, xf->pin, xf->offset, xf->length);
	for (;;) {
		xdma_desc_begin(&l, xc->ring, xc->ring_bus, XDMA_RING_DESCS,
				card, ch->dir == FPGAD_DMA_C2H);
		for (;;) {
			if (!seg_len && !fpgad_seg_next(&it, &seg, &seg_len))
				break;
			took = xdma_desc_add(&l, seg, seg_len);
			seg += took;
			seg_len -= took;
			if (seg_len)
				break;	/* ring full */
		}
		if (!l.count)
			break;
		ret = xdma_run_list(ch, &l, xdma_desc_finish(&l), deadline);
		if (ret)
			return ret;
		card = l.card_addr;
	}
	return card - xf->card_addr == xf->length ? 0 : -EIO;
}

static int xdma_reset(struct fpgad_chan *ch)
{
	struct xdma *x = ch->fdev->engine_priv;
	struct xdma_chan *xc = ch->priv;
	int ret;

	ret = xdma_stop(ch);
	if (ret) {
		fpgad_chan_wedge(ch);
		return ret;
	}
	xdma_wr(x, xc->regs + XDMA_CH_INT_MASK, XDMA_CTRL_IE_ALL);
	return 0;
}

static irqreturn_t xdma_irq(int irq, void *data)
{
	struct fpgad_dev *fdev = data;
	struct xdma *x = fdev->engine_priv;
	unsigned long req;
	unsigned int bit;
	u32 raw;

	raw = xdma_rd(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_REQ);
	if (raw == XDMA_GONE)
		return IRQ_NONE;	/* gone: whatever rang, it was not us */
	req = raw & GENMASK(fdev->nchans - 1, 0);
	if (!req)
		return IRQ_NONE;
	/*
	 * Mask the engines that asked; run() reads and clears their status.
	 * The read-back makes the mask land before we return, or a level
	 * interrupt would fire again at once.
	 */
	xdma_wr(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_EN_W1C, (u32)req);
	xdma_rd(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_EN);
	/* Per card, unlike /proc/interrupts' count of a shared line. */
	atomic64_inc(&fdev->ctr.interrupts);
	for_each_set_bit(bit, &req, fdev->nchans)
		fpgad_chan_irq(&fdev->chans[bit]);
	return IRQ_HANDLED;
}

/* Find the BAR whose IRQ and config blocks carry XDMA identifiers. */
static int xdma_find_bar(struct fpgad_dev *fdev, struct xdma *x)
{
	struct pci_dev *pdev = fdev->pdev;
	int i;

	for (i = 0; i < PCI_STD_NUM_BARS; i++) {
		void __iomem *bar;

		if (!(pci_resource_flags(pdev, i) & IORESOURCE_MEM) ||
		    pci_resource_len(pdev, i) < XDMA_BAR_SPAN)
			continue;
		bar = pci_iomap(pdev, i, XDMA_BAR_SPAN);
		if (!bar)
			continue;
		if (xdma_id_is(ioread32(bar + XDMA_IRQ_BLOCK), XDMA_ID_TARGET_IRQ) &&
		    xdma_id_is(ioread32(bar + XDMA_CONFIG_BLOCK),
			       XDMA_ID_TARGET_CONFIG)) {
			x->bar = bar;
			x->bar_index = i;
			return 0;
		}
		pci_iounmap(pdev, bar);
	}
	dev_err(&pdev->dev, "no BAR with XDMA registers\n");
	return -ENODEV;
}

/* Channels of @target present, in order; *ret_stream if one is AXI4-Stream. */
static u32 xdma_count_channels(struct xdma *x, u32 target, bool *ret_stream)
{
	u32 n;

	for (n = 0; n < FPGAD_MAX_CHANNELS; n++) {
		u32 base = target == XDMA_ID_TARGET_H2C ? XDMA_H2C_CHAN(n) :
			   XDMA_C2H_CHAN(n);
		u32 id = xdma_rd(x, base + XDMA_CH_ID);

		if (!xdma_id_is(id, target) || ((id >> 8) & 0xf) != n)
			break;
		if (id & XDMA_ID_STREAM)
			*ret_stream = true;
	}
	return n;
}

static void xdma_free_rings(struct fpgad_dev *fdev, struct xdma *x)
{
	unsigned int i;

	for (i = 0; i < fdev->nchans && x->xc; i++) {
		if (x->xc[i].ring)
			dma_free_coherent(&fdev->pdev->dev, XDMA_COHERENT_BYTES,
					  x->xc[i].ring, x->xc[i].ring_bus);
	}
	kfree(x->xc);
	x->xc = NULL;
}

/*
 * Engine k of the IRQ block raises vector k, or vector 0 when too few; with
 * a legacy interrupt every engine raises the function's own pin.
 */
static void xdma_program_vectors(struct fpgad_dev *fdev, struct xdma *x)
{
	u32 reg[2] = { 0, 0 };
	unsigned int k;

	for (k = 0; k < fdev->nchans; k++) {
		u32 vec = x->intx ? x->intx_vec :
			  x->nvec >= (int)fdev->nchans ? k : 0;

		reg[k / 4] |= (vec & 0x1f) << ((k % 4) * 8);
	}
	xdma_wr(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_VEC(0), reg[0]);
	xdma_wr(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_VEC(1), reg[1]);
}

/* Engines stopped, their interrupts masked off in the IRQ block, vectors. */
static int xdma_hw_init(struct fpgad_dev *fdev)
{
	struct xdma *x = fdev->engine_priv;
	unsigned int k;

	for (k = 0; k < fdev->nchans; k++) {
		struct xdma_chan *xc = &x->xc[k];

		xdma_wr(x, xc->regs + XDMA_CH_CONTROL, 0);
		xdma_wr(x, xc->regs + XDMA_CH_INT_MASK, XDMA_CTRL_IE_ALL);
		xdma_rd(x, xc->regs + XDMA_CH_STATUS_RC);
	}
	xdma_wr(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_EN_W1C,
		(u32)GENMASK(fdev->nchans - 1, 0));
	/* User (AXI) interrupts are the card design's: none for us. */
	xdma_wr(x, XDMA_IRQ_BLOCK + XDMA_IRQ_USER_EN, 0);
	xdma_program_vectors(fdev, x);
	/* Read back: all of it has landed, and the card is there. */
	if (xdma_rd(x, XDMA_IRQ_BLOCK + XDMA_IRQ_CHAN_EN) == XDMA_GONE)
		return -ENODEV;
	return 0;
}

static int xdma_reinit(struct fpgad_dev *fdev)
{
	return xdma_hw_init(fdev);
}

/* MSI-X, MSI or legacy INTx, and a handler on every vector. */
static int xdma_setup_irqs(struct fpgad_dev *fdev, struct xdma *x)
{
	struct pci_dev *pdev = fdev->pdev;
	u8 pin = 0;
	int ret, v;

	ret = pci_alloc_irq_vectors(pdev, 1, fdev->nchans,
				    PCI_IRQ_MSIX | PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (ret < 0) {
		dev_err(&pdev->dev, "no interrupt vectors: %d\n", ret);
		return ret;
	}
	x->nvec = ret;
	x->intx = !pdev->msix_enabled && !pdev->msi_enabled;
	if (x->intx) {
		/* The engines must raise the pin the function has: pin - 1. */
		pci_read_config_byte(pdev, PCI_INTERRUPT_PIN, &pin);
		if (!pin || pin > 4) {
			dev_err(&pdev->dev, "no MSI-X, no MSI and no INTx pin\n");
			ret = -ENODEV;
			goto err_vectors;
		}
		x->intx_vec = pin - 1;
		pci_intx(pdev, 1);
	}
	for (v = 0; v < x->nvec; v++) {
		ret = request_irq(pci_irq_vector(pdev, v), xdma_irq,
				  IRQF_SHARED, "fpgad-xdma", fdev);
		if (ret) {
			dev_err(&pdev->dev, "cannot request vector %d: %d\n",
				v, ret);
			goto err_irqs;
		}
	}
	return 0;

err_irqs:
	while (--v >= 0)
		free_irq(pci_irq_vector(pdev, v), fdev);
err_vectors:
	pci_free_irq_vectors(pdev);
	return ret;
}

static void xdma_free_irqs(struct fpgad_dev *fdev, struct xdma *x)
{
	int v;

	for (v = 0; v < x->nvec; v++)
		free_irq(pci_irq_vector(fdev->pdev, v), fdev);
	pci_free_irq_vectors(fdev->pdev);
}

static int xdma_probe(struct fpgad_dev *fdev)
{
	struct pci_dev *pdev = fdev->pdev;
	bool stream = false;
	unsigned int i, k;
	struct xdma *x;
	int ret;

	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return -ENOMEM;
	fdev->engine_priv = x;
	x->stop_ms = max_t(u64, XDMA_STOP_MIN_MS,
			   div64_u64((u64)XDMA_STOP_FACTOR * XDMA_DESC_MAX_LEN,
				     fdev->link_bytes_per_ms));

	ret = xdma_find_bar(fdev, x);
	if (ret)
		goto err_free;

	fdev->n_h2c = xdma_count_channels(x, XDMA_ID_TARGET_H2C, &stream);
	fdev->n_c2h = xdma_count_channels(x, XDMA_ID_TARGET_C2H, &stream);
	if (!fdev->n_h2c && !fdev->n_c2h) {
		dev_err(&pdev->dev, "XDMA BAR %d has no DMA channels\n",
			x->bar_index);
		ret = -ENODEV;
		goto err_unmap;
	}
	if (stream) {
		dev_err(&pdev->dev,
			"XDMA channels are AXI4-Stream: fpgad_dma drives AXI memory-mapped channels only\n");
		ret = -EOPNOTSUPP;
		goto err_unmap;
	}
	ret = fpgad_chans_alloc(fdev, fdev->n_h2c + fdev->n_c2h);
	if (ret)
		goto err_unmap;
	x->xc = kcalloc(fdev->nchans, sizeof(*x->xc), GFP_KERNEL);
	if (!x->xc) {
		ret = -ENOMEM;
		goto err_unmap;
	}

	/* Engines in IRQ-block order: H2C channels, then C2H channels. */
	fdev->align = 1;
	for (k = 0; k < fdev->nchans; k++) {
		struct fpgad_chan *ch = &fdev->chans[k];
		struct xdma_chan *xc = &x->xc[k];
		bool c2h = k >= fdev->n_h2c;
		u32 n = c2h ? k - fdev->n_h2c : k;

		ch->dir = c2h ? FPGAD_DMA_C2H : FPGAD_DMA_H2C;
		ch->hw_index = n;
		ch->priv = xc;
		fdev->route[ch->dir][n] = ch;
		xc->regs = c2h ? XDMA_C2H_CHAN(n) : XDMA_H2C_CHAN(n);
		xc->sgdma = c2h ? XDMA_C2H_SGDMA(n) : XDMA_H2C_SGDMA(n);
		xc->irq_bit = k;
		xc->align = roundup_pow_of_two(max_t(u32, 1,
			(xdma_rd(x, xc->regs + XDMA_CH_ALIGNMENTS) >> 16) & 0xff));
		fdev->align = max(fdev->align, xc->align);
		xc->ring = dma_alloc_coherent(&pdev->dev, XDMA_COHERENT_BYTES,
					      &xc->ring_bus, GFP_KERNEL);
		if (!xc->ring) {
			ret = -ENOMEM;
			goto err_rings;
		}
		xc->wb = (u32 *)((u8 *)xc->ring + XDMA_RING_BYTES);
		xc->wb_bus = xc->ring_bus + XDMA_RING_BYTES;

		/* An engine a previous driver left running stops first. */
		ret = xdma_stop(ch);
		if (ret) {
			dev_err(&pdev->dev,
				"XDMA %s channel %u left running and will not stop: reset the card (its sysfs \"reset\" file) and bind again\n",
				xdma_dir(ch), n);
			ret = -EBUSY;
			goto err_rings;
		}
	}

	fdev->card_memory = fpgad_card_memory;
	fdev->max_transfer = XDMA_MAX_TRANSFER;

	ret = xdma_setup_irqs(fdev, x);
	if (ret)
		goto err_rings;
	ret = xdma_hw_init(fdev);
	if (ret) {
		dev_err(&pdev->dev, "XDMA registers read all ones\n");
		goto err_irqs;
	}

	x->dbg = debugfs_create_dir(pci_name(pdev), fpgad_debugfs);
	debugfs_create_file("regs", 0400, x->dbg, fdev, &xdma_regs_fops);
	dev_info(&pdev->dev, "XDMA on BAR %d, %d %s vector(s), %s completion, alignment %u\n",
		 x->bar_index, x->nvec,
		 x->intx ? "INTx" : pdev->msix_enabled ? "MSI-X" : "MSI",
		 fpgad_poll_mode ? "write-back polling" : "interrupt",
		 fdev->align);
	return 0;

err_irqs:
	xdma_free_irqs(fdev, x);
err_rings:
	for (i = 0; i < fdev->nchans; i++)
		fdev->route[fdev->chans[i].dir][fdev->chans[i].hw_index] = NULL;
	xdma_free_rings(fdev, x);
err_unmap:
	pci_iounmap(pdev, x->bar);
err_free:
	kfree(x);
	fdev->engine_priv = NULL;
	return ret;
}

static void xdma_remove(struct fpgad_dev *fdev)
{
	struct pci_dev *pdev = fdev->pdev;
	struct xdma *x = fdev->engine_priv;
	unsigned int k;

	debugfs_remove_recursive(x->dbg);
	/* No transfer runs any more; make sure no engine does either. */
	for (k = 0; k < fdev->nchans; k++) {
		xdma_stop(&fdev->chans[k]);
		xdma_wr(x, x->xc[k].regs + XDMA_CH_INT_MASK, 0);
	}
	xdma_free_irqs(fdev, x);
	xdma_free_rings(fdev, x);
	pci_iounmap(pdev, x->bar);
	kfree(x);
	fdev->engine_priv = NULL;
}

const struct fpgad_engine fpgad_engine_xdma = {
	.name = "xdma",
	.probe = xdma_probe,
	.remove = xdma_remove,
	.run = xdma_run,
	.reset = xdma_reset,
	.reinit = xdma_reinit,
};
