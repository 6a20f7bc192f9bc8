// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpgad_pin.c - making memory reachable by the card.
 *
 * host:   pin_user_pages_fast(FOLL_WRITE | FOLL_LONGTERM), an sg table over
 *         the pages, dma_map_sgtable() for the card's PCI function.
 * dmabuf: dma_buf_get(), a dynamic attachment to the card's PCI function
 *         that allows peer-to-peer (GPU memory), dma_buf_pin() and
 *         dma_buf_map_attachment() under the reservation lock.  Released in
 *         the reverse order: unmap and unpin under the lock, detach, put.
 * nvp2p:  fpgad_nvp2p.c, only in builds with NVIDIA_SRC=; it builds on
 *         fpgad_pin_new() and fpgad_pin_revoke() here.
 *
 * A pin starts with one reference, the file's; a wedged channel takes
 * another for the pin its engine may still write (fpgad_cdev.c).  The last
 * fpgad_pin_put() unmaps and releases it.  When an exporter takes its
 * memory back (move_notify, the nv-p2p free callback), fpgad_pin_revoke()
 * stops the engine that uses it before the exporter goes on.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/lockdep.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "fpgad_compat.h"
#include "fpgad_drv.h"

/* One pin may cover at most this much (bounds the page array). */
#define FPGAD_PIN_MAX		(64ULL << 30)

void fpgad_pin_account(struct fpgad_pin *pin, int sign)
{
	atomic64_add(sign, &pin->fdev->ctr.pins);
	atomic64_add(sign * (s64)pin->length, &pin->fdev->ctr.pinned_bytes);
}

/* A pin with the file's reference; @release undoes what its kind set up. */
struct fpgad_pin *fpgad_pin_new(struct fpgad_dev *fdev,
				enum fpgad_pin_kind kind, u64 length,
				void (*release)(struct fpgad_pin *pin))
{
	struct fpgad_pin *pin = kzalloc(sizeof(*pin), GFP_KERNEL);

	if (!pin)
		return NULL;
	pin->fdev = fdev;
	refcount_set(&pin->ref, 1);
	pin->kind = kind;
	pin->length = length;
	pin->release = release;
	return pin;
}

/* --- host memory ----------------------------------------------------------- */

static void fpgad_unpin_host(struct fpgad_pin *pin)
{
	dma_unmap_sgtable(&pin->fdev->pdev->dev, &pin->host.table,
			  DMA_BIDIRECTIONAL, 0);
	sg_free_table(&pin->host.table);
	/* The card may have written any of them. */
	unpin_user_pages_dirty_lock(pin->host.pages, pin->host.npages, true);
	kvfree(pin->host.pages);
	account_locked_vm(pin->host.mm, pin->host.npages, false);
	mmdrop(pin->host.mm);
}

/* --- revoke ----------------------------------------------------------------------- */

static bool fpgad_chan_runs(struct fpgad_chan *ch, struct fpgad_pin *pin)
{
	bool runs;

	spin_lock(&ch->lock);
	runs = ch->cur && ch->cur->pin == pin;
	spin_unlock(&ch->lock);
	return runs;
}

/*
 * The exporter takes @pin's memory back: no new transfer may use it, and
 * when this returns no engine writes it any more.  A running transfer is
 * cancelled and its engine stopped; an engine that will not stop (or one
 * that a wedged channel left on this pin) has the card's bus mastering
 * switched off, the only way left to keep it out of memory that is about
 * to be reused.  Sleeps.
 */
void fpgad_pin_revoke(struct fpgad_pin *pin)
{
	struct fpgad_dev *fdev = pin->fdev;
	unsigned int i;
	bool stuck = false;

	WRITE_ONCE(pin->dead, true);
	for (i = 0; i < fdev->nchans; i++) {
		struct fpgad_chan *ch = &fdev->chans[i];

		spin_lock(&ch->lock);
		if (ch->cur && ch->cur->pin == pin) {
			ch->abort = true;
			wake_up_all(&ch->wq);
		}
		spin_unlock(&ch->lock);
		/* Waits for the work item that runs the engine under hw_lock. */
		might_lock(&ch->hw_lock);
		wait_event(ch->idle_wq, !fpgad_chan_runs(ch, pin));
		spin_lock(&ch->lock);
		stuck |= ch->held == pin;
		spin_unlock(&ch->lock);
	}
	if (stuck) {
		WRITE_ONCE(fdev->master_off, true);
		pci_clear_master(fdev->pdev);
		dev_err(&fdev->pdev->dev,
			"memory revoked under an engine that did not stop: bus mastering is off until RESET resets the function\n");
	}
}

/* Whether any segment is bounced or not coherent: one walk, at pin time. */
static bool fpgad_sgt_need_sync(struct device *dev, struct sg_table *sgt)
{
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i)
		if (dma_need_sync(dev, sg_dma_address(sg)))
			return true;
	return false;
}

int fpgad_pin_host(struct fpgad_dev *fdev, u64 addr, u64 length,
		   struct fpgad_pin **ret_pin)
{
	struct device *dma_dev = &fdev->pdev->dev;
	unsigned long first, npages, done = 0;
	struct fpgad_pin *pin;
	int ret;

	if (!length || length > FPGAD_PIN_MAX || addr + length < addr ||
	    addr + length > TASK_SIZE)
		return -EINVAL;
	first = addr >> PAGE_SHIFT;
	npages = ((addr + length - 1) >> PAGE_SHIFT) - first + 1;

	pin = fpgad_pin_new(fdev, FPGAD_PIN_HOST, length, fpgad_unpin_host);
	if (!pin)
		return -ENOMEM;
	/*
	 * Long-term pins are the caller's locked memory: charged to its
	 * RLIMIT_MEMLOCK (unless CAP_IPC_LOCK), as VFIO charges them.
	 */
	ret = account_locked_vm(current->mm, npages, true);
	if (ret)
		goto err_free;
	pin->host.mm = current->mm;
	mmgrab(pin->host.mm);
	pin->host.pages = kvmalloc_array(npages, sizeof(struct page *),
					 GFP_KERNEL);
	if (!pin->host.pages) {
		ret = -ENOMEM;
		goto err_charge;
	}

	while (done < npages) {
		int n = min_t(unsigned long, npages - done, INT_MAX >> PAGE_SHIFT);

		ret = pin_user_pages_fast((first + done) << PAGE_SHIFT, n,
					  FOLL_WRITE | FOLL_LONGTERM,
					  pin->host.pages + done);
		if (ret <= 0) {
			ret = ret ? ret : -EFAULT;
			goto err_unpin;
		}
		done += ret;
	}
	pin->host.npages = npages;

	ret = sg_alloc_table_from_pages(&pin->host.table, pin->host.pages,
					npages, offset_in_page(addr), length,
					GFP_KERNEL);
	if (ret)
		goto err_unpin;
	ret = dma_map_sgtable(dma_dev, &pin->host.table, DMA_BIDIRECTIONAL, 0);
	if (ret)
		goto err_table;
	pin->sgt = &pin->host.table;
	pin->base = 0;
	pin->phase = offset_in_page(addr);
	pin->need_sync = fpgad_sgt_need_sync(dma_dev, pin->sgt);
	fpgad_pin_account(pin, 1);
	*ret_pin = pin;
	return 0;

err_table:
	sg_free_table(&pin->host.table);
err_unpin:
	unpin_user_pages(pin->host.pages, done);
	kvfree(pin->host.pages);
err_charge:
	account_locked_vm(pin->host.mm, npages, false);
	mmdrop(pin->host.mm);
err_free:
	kfree(pin);
	return ret;
}

/* --- dma-buf ----------------------------------------------------------------- */

/*
 * The exporter wants to move the buffer.  The attachment is pinned, so a
 * well-behaved exporter never asks; if one does (memory revoked), the pin
 * turns dead, the engine that writes it is stopped before we return and
 * new transfers on it fail with -ENOLINK.
 */
static void fpgad_move_notify(struct dma_buf_attachment *attach)
{
	struct fpgad_pin *pin = attach->importer_priv;

	pr_warn("dma-buf %p revoked under a pin\n", attach->dmabuf);
	fpgad_pin_revoke(pin);
}

static const struct dma_buf_attach_ops fpgad_importer_ops = {
	.allow_peer2peer = true,
	.FPGAD_DMA_BUF_MOVE_NOTIFY = fpgad_move_notify,
};

static void fpgad_unpin_dmabuf(struct fpgad_pin *pin)
{
	struct dma_buf *buf = pin->dmabuf.buf;

	dma_resv_lock(buf->resv, NULL);
	dma_buf_unmap_attachment(pin->dmabuf.attach, pin->sgt,
				 DMA_BIDIRECTIONAL);
	dma_buf_unpin(pin->dmabuf.attach);
	dma_resv_unlock(buf->resv);
	dma_buf_detach(buf, pin->dmabuf.attach);
	dma_buf_put(buf);
}

int fpgad_pin_dmabuf(struct fpgad_dev *fdev, int fd, u64 offset, u64 length,
		     struct fpgad_pin **ret_pin)
{
	struct dma_buf_attachment *attach;
	struct fpgad_pin *pin;
	struct scatterlist *sg;
	struct sg_table *sgt;
	struct dma_buf *buf;
	u64 mapped = 0;
	unsigned int i;
	int ret;

	buf = dma_buf_get(fd);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	ret = -EINVAL;
	if (offset >= buf->size)
		goto err_put;
	if (!length)
		length = buf->size - offset;
	if (length > buf->size - offset)
		goto err_put;

	ret = -ENOMEM;
	pin = fpgad_pin_new(fdev, FPGAD_PIN_DMABUF, length,
			    fpgad_unpin_dmabuf);
	if (!pin)
		goto err_put;
	pin->base = offset;
	pin->phase = offset_in_page(offset);

	attach = dma_buf_dynamic_attach(buf, &fdev->pdev->dev,
					&fpgad_importer_ops, pin);
	if (IS_ERR(attach)) {
		ret = PTR_ERR(attach);
		dev_err(&fdev->pdev->dev, "dma-buf attach failed: %d\n", ret);
		goto err_free;
	}

	dma_resv_lock(buf->resv, NULL);
	ret = dma_buf_pin(attach);
	if (ret) {
		dma_resv_unlock(buf->resv);
		dev_err(&fdev->pdev->dev, "dma-buf pin failed: %d\n", ret);
		goto err_detach;
	}
	sgt = dma_buf_map_attachment(attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		dma_buf_unpin(attach);
		dma_resv_unlock(buf->resv);
		dev_err(&fdev->pdev->dev, "dma-buf map failed: %d\n", ret);
		goto err_detach;
	}
	dma_resv_unlock(buf->resv);

	for_each_sgtable_dma_sg(sgt, sg, i)
		mapped += sg_dma_len(sg);
	if (mapped < offset + length) {
		dev_err(&fdev->pdev->dev,
			"dma-buf maps %llu bytes, %llu needed\n",
			mapped, offset + length);
		ret = -EINVAL;
		goto err_unmap;
	}

	pin->sgt = sgt;
	pin->dmabuf.buf = buf;
	pin->dmabuf.attach = attach;
	fpgad_pin_account(pin, 1);
	*ret_pin = pin;
	return 0;

err_unmap:
	dma_resv_lock(buf->resv, NULL);
	dma_buf_unmap_attachment(attach, sgt, DMA_BIDIRECTIONAL);
	dma_buf_unpin(attach);
	dma_resv_unlock(buf->resv);
err_detach:
	dma_buf_detach(buf, attach);
err_free:
	kfree(pin);
err_put:
	dma_buf_put(buf);
	return ret;
}

/* --- common ------------------------------------------------------------------ */

void fpgad_pin_get(struct fpgad_pin *pin)
{
	refcount_inc(&pin->ref);
}

/* Drop a reference; the last one unmaps and releases the memory. */
void fpgad_pin_put(struct fpgad_pin *pin)
{
	if (!pin || !refcount_dec_and_test(&pin->ref))
		return;
	fpgad_pin_account(pin, -1);
	pin->release(pin);
	kfree(pin);
}

/*
 * Host pages may sit behind bounce buffers (swiotlb: SEV/TDX guests,
 * swiotlb=force, a DMA mask too small) or in a cache the card does not
 * snoop; exporters sync their own.  Only [offset, offset + length) is
 * synced, in the transfer's direction: syncing the whole pin both ways
 * would copy stale bounce data over what the CPU writes meanwhile to the
 * rest of it (the other slots of a ring).  Before the card reads, the
 * CPU's bytes go to the device; after it wrote, its bytes come back; the
 * other two calls copy nothing but hand ownership over (and keep dirty
 * cache lines from landing on the card's data where caches are not
 * coherent).  A pin that needs none (dma_need_sync at pin time: coherent,
 * not bounced, the usual case) is not walked at all.
 */
static void fpgad_pin_sync(struct fpgad_dev *fdev, struct fpgad_pin *pin,
			   u64 offset, u64 length, u32 dir, bool for_cpu)
{
	enum dma_data_direction d = dir == FPGAD_DMA_C2H ? DMA_FROM_DEVICE :
					       DMA_TO_DEVICE;
	struct device *dev = &fdev->pdev->dev;
	struct fpgad_seg_iter it;
	dma_addr_t addr;
	u64 len;

	if (!pin->need_sync)
		return;
	fpgad_seg_init(&it, pin, offset, length);
	while (fpgad_seg_next(&it, &addr, &len)) {
		if (for_cpu)
			dma_sync_single_for_cpu(dev, addr, len, d);
		else
			dma_sync_single_for_device(dev, addr, len, d);
	}
}

void fpgad_pin_sync_for_device(struct fpgad_dev *fdev, struct fpgad_pin *pin,
			       u64 offset, u64 length, u32 dir)
{
	fpgad_pin_sync(fdev, pin, offset, length, dir, false);
}

void fpgad_pin_sync_for_cpu(struct fpgad_dev *fdev, struct fpgad_pin *pin,
			    u64 offset, u64 length, u32 dir)
{
	fpgad_pin_sync(fdev, pin, offset, length, dir, true);
}

void fpgad_seg_init(struct fpgad_seg_iter *it, const struct fpgad_pin *pin,
		    u64 offset, u64 length)
{
	it->sg = pin->sgt->sgl;
	it->nents_left = pin->sgt->nents;
	it->skip = pin->base + offset;
	it->left = length;
}

/* The next DMA-contiguous piece; false when the range is exhausted. */
bool fpgad_seg_next(struct fpgad_seg_iter *it, dma_addr_t *ret_addr,
		    u64 *ret_len)
{
	while (it->left && it->nents_left) {
		struct scatterlist *sg = it->sg;
		u64 len = sg_dma_len(sg);

		it->sg = sg_next(sg);
		it->nents_left--;
		if (it->skip >= len) {
			it->skip -= len;
			continue;
		}
		*ret_addr = sg_dma_address(sg) + it->skip;
		len = min(len - it->skip, it->left);
		it->skip = 0;
		it->left -= len;
		*ret_len = len;
		return true;
	}
	return false;
}
