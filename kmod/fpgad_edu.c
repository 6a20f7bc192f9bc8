// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpgad_edu.c - engine for QEMU's "edu" PCI device (1234:11e8).
 *
 * edu is a real bus master with interrupts, which is what the QEMU test
 * needs: one DMA engine that copies between host memory and a 4 KiB buffer
 * at device address 0x40000, started through BAR0 registers and finished
 * by a timer about 100 ms later, with interrupt 0x100 when asked for.  The
 * buffer is the "card memory"; both directions share the one engine, so
 * H2C channel 0 and C2H channel 0 are the same fpgad channel.
 *
 * edu cannot abort a command.  Stopping after a timeout therefore means
 * waiting until its RUN bit clears, after which no DMA is outstanding; a
 * command that never finishes wedges the channel.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/interrupt.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/jiffies.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "fpgad_compat.h"
#include "fpgad_drv.h"

#define EDU_REG_ID		0x00
#define EDU_REG_IRQ_STATUS	0x24
#define EDU_REG_IRQ_ACK		0x64
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_CNT		0x90
#define EDU_REG_DMA_CMD		0x98

#define EDU_CMD_RUN		0x1
#define EDU_CMD_TO_RAM		0x2
#define EDU_CMD_IRQ		0x4

#define EDU_IRQ_DMA		0x100

#define EDU_BUF_ADDR		0x40000
/*
 * The buffer is 4096 bytes, but QEMU before 8.2.1 rejects (and aborts on) a
 * transfer that ends at its last byte, so the usable window is one byte
 * shorter.
 */
#define EDU_WINDOW		4095

/* Longest wait for a started command to finish (its timer is ~100 ms). */
#define EDU_DRAIN_MS		2000

struct edu {
	void __iomem *bar;
	int irq;
};

static u64 edu_cmd(struct edu *edu)
{
	return readq(edu->bar + EDU_REG_DMA_CMD);
}

/* Wait until no command runs: what "stop" means for edu. */
static int edu_drain(struct fpgad_chan *ch, struct edu *edu)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(EDU_DRAIN_MS);

	while (edu_cmd(edu) & EDU_CMD_RUN) {
		if (time_after(jiffies, deadline)) {
			dev_err(&ch->fdev->pdev->dev,
				"edu DMA still running after %d ms\n",
				EDU_DRAIN_MS);
			return -EIO;
		}
		usleep_range(1000, 2000);
	}
	atomic_set(&ch->irq_done, 0);
	return 0;
}

static int edu_dma_one(struct fpgad_chan *ch, struct edu *edu, u32 dir,
		       dma_addr_t addr, u64 card, u64 len,
		       unsigned long deadline)
{
	u64 cmd = EDU_CMD_RUN | EDU_CMD_IRQ;
	int ret, drained;

	atomic_set(&ch->irq_done, 0);
	if (dir == FPGAD_DMA_H2C) {
		writeq(addr, edu->bar + EDU_REG_DMA_SRC);
		writeq(EDU_BUF_ADDR + card, edu->bar + EDU_REG_DMA_DST);
	} else {
		writeq(EDU_BUF_ADDR + card, edu->bar + EDU_REG_DMA_SRC);
		writeq(addr, edu->bar + EDU_REG_DMA_DST);
		cmd |= EDU_CMD_TO_RAM;
	}
	writeq(len, edu->bar + EDU_REG_DMA_CNT);
	writeq(cmd, edu->bar + EDU_REG_DMA_CMD);

	for (;;) {
		ret = fpgad_chan_wait(ch, deadline);
		/* The RUN bit, not the interrupt, says whether it is done. */
		if (!(edu_cmd(edu) & EDU_CMD_RUN))
			return ret == -ECANCELED ? ret : 0;
		if (ret)
			break;
	}

	drained = edu_drain(ch, edu);
	if (drained)
		fpgad_chan_wedge(ch);
	return drained ? drained : ret;
}

static int edu_run(struct fpgad_chan *ch, struct fpgad_xfer *x)
{
	struct edu *edu = ch->fdev->engine_priv;
	unsigned long deadline = jiffies + msecs_to_jiffies(x->timeout_ms);
	struct fpgad_seg_iter it;
	u64 card = x->card_addr, len;
	dma_addr_t addr;
	int ret;

	fpgad_seg_init(&it, x->pin, x->offset, x->length);
	while (fpgad_seg_next(&it, &addr, &len)) {
		ret = edu_dma_one(ch, edu, x->dir, addr, card, len, deadline);
		if (ret)
			return ret;
		card += len;
	}
	return it.left ? -EIO : 0;
}

static int edu_reset(struct fpgad_chan *ch)
{
	struct edu *edu = ch->fdev->engine_priv;
	int ret;

	ret = edu_drain(ch, edu);
	if (ret) {
		fpgad_chan_wedge(ch);
		return ret;
	}
	writel(readl(edu->bar + EDU_REG_IRQ_STATUS),
	       edu->bar + EDU_REG_IRQ_ACK);
	return 0;
}

/* After a function reset: nothing is programmed ahead of a command. */
static int edu_reinit(struct fpgad_dev *fdev)
{
	struct edu *edu = fdev->engine_priv;

	writel(readl(edu->bar + EDU_REG_IRQ_STATUS),
	       edu->bar + EDU_REG_IRQ_ACK);
	return 0;
}

static irqreturn_t edu_irq(int irq, void *data)
{
	struct fpgad_dev *fdev = data;
	struct edu *edu = fdev->engine_priv;
	u32 status;

	status = readl(edu->bar + EDU_REG_IRQ_STATUS);
	if (!status)
		return IRQ_NONE;
	writel(status, edu->bar + EDU_REG_IRQ_ACK);
	atomic64_inc(&fdev->ctr.interrupts);
	if (status & EDU_IRQ_DMA)
		fpgad_chan_irq(&fdev->chans[0]);
	return IRQ_HANDLED;
}

static int edu_probe(struct fpgad_dev *fdev)
{
	struct pci_dev *pdev = fdev->pdev;
	struct edu *edu;
	u32 id;
	int ret;

	edu = kzalloc(sizeof(*edu), GFP_KERNEL);
	if (!edu)
		return -ENOMEM;
	fdev->engine_priv = edu;

	edu->bar = pci_iomap(pdev, 0, 0);
	if (!edu->bar) {
		dev_err(&pdev->dev, "cannot map BAR0\n");
		ret = -ENOMEM;
		goto err_free;
	}
	id = readl(edu->bar + EDU_REG_ID);
	if ((id & 0xff) != 0xed) {
		dev_err(&pdev->dev, "not an edu device (id %08x)\n", id);
		ret = -ENODEV;
		goto err_unmap;
	}

	ret = fpgad_chans_alloc(fdev, 1);
	if (ret)
		goto err_unmap;
	fdev->chans[0].dir = FPGAD_DMA_H2C;
	fdev->route[FPGAD_DMA_H2C][0] = &fdev->chans[0];
	fdev->route[FPGAD_DMA_C2H][0] = &fdev->chans[0];
	fdev->n_h2c = 1;
	fdev->n_c2h = 1;
	fdev->card_memory = EDU_WINDOW;
	fdev->max_transfer = EDU_WINDOW;
	fdev->align = 1;

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (ret < 0) {
		dev_err(&pdev->dev, "no interrupt: %d\n", ret);
		goto err_unmap;
	}
	edu->irq = pci_irq_vector(pdev, 0);
	ret = request_irq(edu->irq, edu_irq, IRQF_SHARED, "fpgad-edu", fdev);
	if (ret) {
		dev_err(&pdev->dev, "cannot request irq %d: %d\n",
			edu->irq, ret);
		goto err_vectors;
	}
	return 0;

err_vectors:
	pci_free_irq_vectors(pdev);
err_unmap:
	pci_iounmap(pdev, edu->bar);
err_free:
	kfree(edu);
	fdev->engine_priv = NULL;
	return ret;
}

static void edu_remove(struct fpgad_dev *fdev)
{
	struct edu *edu = fdev->engine_priv;

	free_irq(edu->irq, fdev);
	pci_free_irq_vectors(fdev->pdev);
	pci_iounmap(fdev->pdev, edu->bar);
	kfree(edu);
	fdev->engine_priv = NULL;
}

const struct fpgad_engine fpgad_engine_edu = {
	.name = "edu",
	.probe = edu_probe,
	.remove = edu_remove,
	.run = edu_run,
	.reset = edu_reset,
	.reinit = edu_reinit,
};
