// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpgad_cdev.c - /dev/fpgadN: open files, ioctls, completions, channels.
 *
 * A SUBMIT puts a transfer on its channel's queue and returns.  The
 * channel's work item takes transfers one at a time, runs them through the
 * engine with the channel's hw_lock held and moves each, completed, to its
 * file's done list, where read() picks it up.  Cancelling (RESET, close,
 * removal) takes queued transfers off the queue and flags a running one,
 * which the engine stops before it returns.
 *
 * A channel whose engine could not be stopped is wedged: it holds the pin
 * of the transfer it was running (the engine may still write it), runs
 * nothing more, and waits for RESET, which stops the engine or resets the
 * PCI function (fpgad_dev_reset) before it lets the pin go.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "fpgad_compat.h"
#include "fpgad_drv.h"

/* --- channels ------------------------------------------------------------ */

static void fpgad_xfer_complete(struct fpgad_xfer *x, int status)
{
	struct fpgad_file *file = x->file;
	struct fpgad_counters *ctr = &file->fdev->ctr;

	x->rec.status = status;
	x->rec.length = status ? 0 : x->length;
	x->rec.t_end_ns = ktime_get_ns();
	if (!x->rec.t_start_ns)
		x->rec.t_start_ns = x->rec.t_end_ns;

	switch (status) {
	case 0:
		atomic64_inc(&ctr->transfers);
		atomic64_add(x->length, x->dir == FPGAD_DMA_H2C ?
			     &ctr->bytes_h2c : &ctr->bytes_c2h);
		break;
	case -ETIMEDOUT:
		atomic64_inc(&ctr->timeouts);
		break;
	case -ECANCELED:
	case -ENODEV:
		atomic64_inc(&ctr->cancels);
		break;
	default:
		atomic64_inc(&ctr->errors);
		break;
	}
	atomic64_dec(&ctr->inflight);
	atomic_dec(&x->pin->users);
	fpgad_pin_put(x->pin);

	/*
	 * The wake-up happens under cq_lock: teardown frees the file once it
	 * has seen running == 0 under the same lock.
	 */
	spin_lock(&file->cq_lock);
	list_add_tail(&x->node, &file->done);
	file->running--;
	wake_up_all(&file->wq);
	spin_unlock(&file->cq_lock);
}

static void fpgad_chan_work(struct work_struct *work)
{
	struct fpgad_chan *ch = container_of(work, struct fpgad_chan, work);
	struct fpgad_dev *fdev = ch->fdev;
	struct fpgad_xfer *x;
	int status;

	for (;;) {
		spin_lock(&ch->lock);
		x = list_first_entry_or_null(&ch->queue, struct fpgad_xfer,
					     node);
		if (!x) {
			spin_unlock(&ch->lock);
			return;
		}
		list_del_init(&x->node);
		status = x->cancel;
		if (!status && ch->wedged) {
			status = -EIO;
			x->rec.flags |= FPGAD_DMA_COMPLETION_WEDGED;
		}
		ch->cur = status ? NULL : x;
		ch->abort = false;
		spin_unlock(&ch->lock);
		if (status) {
			fpgad_xfer_complete(x, status);
			continue;
		}

		mutex_lock(&ch->hw_lock);
		if (READ_ONCE(x->pin->dead)) {
			status = -ENOLINK;
		} else {
			fpgad_pin_sync_for_device(fdev, x->pin, x->offset,
						  x->length, x->dir);
			x->rec.t_start_ns = ktime_get_ns();
			status = fdev->engine->run(ch, x);
			fpgad_pin_sync_for_cpu(fdev, x->pin, x->offset,
					       x->length, x->dir);
		}
		mutex_unlock(&ch->hw_lock);

		spin_lock(&ch->lock);
		if (ch->wedged) {
			/* The engine may still write this pin: keep it. */
			x->rec.flags |= FPGAD_DMA_COMPLETION_WEDGED;
			if (!ch->held) {
				fpgad_pin_get(x->pin);
				ch->held = x->pin;
			}
		}
		ch->cur = NULL;
		spin_unlock(&ch->lock);
		wake_up_all(&ch->idle_wq);
		if (status == -ECANCELED && READ_ONCE(x->pin->dead))
			status = -ENOLINK;
		fpgad_xfer_complete(x, status);
	}
}

/*
 * The engine of @ch did not stop (the engine says why): nothing more runs
 * on the channel and the pin it ran on stays held until RESET.
 */
void fpgad_chan_wedge(struct fpgad_chan *ch)
{
	bool was;

	spin_lock(&ch->lock);
	was = ch->wedged;
	ch->wedged = true;
	spin_unlock(&ch->lock);
	if (was)
		return;
	atomic64_inc(&ch->fdev->ctr.wedged);
	dev_err(&ch->fdev->pdev->dev,
		"%s channel %u wedged: its pin stays held until RESET stops the engine or resets the function\n",
		ch->dir == FPGAD_DMA_C2H ? "C2H" : "H2C", ch->hw_index);
}

/*
 * The engine of @ch is known to be stopped (hw_lock held): the channel
 * takes transfers again and the pin it held is returned, for the caller to
 * put once hw_lock is released: the last put of a dma-buf pin takes the
 * reservation lock, which an exporter holds while its move_notify waits
 * for the engine, that is for hw_lock.
 */
static struct fpgad_pin *fpgad_chan_unwedge(struct fpgad_chan *ch)
{
	struct fpgad_pin *held;
	bool was;

	spin_lock(&ch->lock);
	was = ch->wedged;
	held = ch->held;
	ch->wedged = false;
	ch->held = NULL;
	spin_unlock(&ch->lock);
	if (was)
		atomic64_dec(&ch->fdev->ctr.wedged);
	return held;
}

/*
 * The card can no longer write anything (bus mastering off, or removed):
 * every pin a wedged channel held may go.  No hw_lock held.
 */
void fpgad_chans_release_held(struct fpgad_dev *fdev)
{
	unsigned int i;

	for (i = 0; i < fdev->nchans; i++)
		fpgad_pin_put(fpgad_chan_unwedge(&fdev->chans[i]));
}

/*
 * Reset the PCI function: every engine stops.  Takes every channel's
 * hw_lock (in index order), so that nothing runs meanwhile.
 */
static int fpgad_dev_reset(struct fpgad_dev *fdev)
{
	struct fpgad_pin *held[2 * FPGAD_MAX_CHANNELS] = { NULL };
	struct pci_dev *pdev = fdev->pdev;
	unsigned int i;
	int ret;

	for (i = 0; i < fdev->nchans; i++)
		mutex_lock_nested(&fdev->chans[i].hw_lock, i);
	ret = pci_try_reset_function(pdev);
	if (ret) {
		dev_err(&pdev->dev, "function reset failed: %d%s\n", ret,
			ret == -EAGAIN ? " (busy, try again)" : "");
		if (ret != -EAGAIN)
			ret = -EIO;
		goto out;
	}
	/*
	 * A revoke may have switched bus mastering off, and the reset
	 * restored that state: on again once the engines are set up.
	 */
	ret = fdev->engine->reinit(fdev);
	if (ret) {
		dev_err(&pdev->dev, "engine set-up after the reset failed: %d\n",
			ret);
		pci_clear_master(pdev);
		WRITE_ONCE(fdev->master_off, true);
		ret = -EIO;
		goto out;
	}
	pci_set_master(pdev);
	WRITE_ONCE(fdev->master_off, false);
	for (i = 0; i < fdev->nchans; i++)
		held[i] = fpgad_chan_unwedge(&fdev->chans[i]);
	dev_info(&pdev->dev, "function reset: every engine stopped\n");
out:
	for (i = fdev->nchans; i-- > 0;)
		mutex_unlock(&fdev->chans[i].hw_lock);
	for (i = 0; i < ARRAY_SIZE(held); i++)
		fpgad_pin_put(held[i]);
	return ret;
}

/*
 * Cancel the transfers of @file on @ch (all files if @file is NULL): queued
 * ones are marked and completed with @status by the work item, in order,
 * after the running one, which the engine stops if it is theirs.
 */
static void fpgad_chan_cancel(struct fpgad_chan *ch, struct fpgad_file *file,
			      int status)
{
	struct fpgad_xfer *x;

	spin_lock(&ch->lock);
	list_for_each_entry(x, &ch->queue, node) {
		if (!file || x->file == file)
			x->cancel = status;
	}
	if (ch->cur && (!file || ch->cur->file == file)) {
		ch->abort = true;
		wake_up_all(&ch->wq);
	}
	spin_unlock(&ch->lock);
}

int fpgad_chans_alloc(struct fpgad_dev *fdev, unsigned int n)
{
	unsigned int i;

	fdev->chans = kcalloc(n, sizeof(*fdev->chans), GFP_KERNEL);
	if (!fdev->chans)
		return -ENOMEM;
	fdev->nchans = n;
	for (i = 0; i < n; i++) {
		struct fpgad_chan *ch = &fdev->chans[i];

		ch->fdev = fdev;
		ch->index = i;
		spin_lock_init(&ch->lock);
		INIT_LIST_HEAD(&ch->queue);
		INIT_WORK(&ch->work, fpgad_chan_work);
		init_waitqueue_head(&ch->idle_wq);
		mutex_init(&ch->hw_lock);
		init_waitqueue_head(&ch->wq);
		atomic_set(&ch->irq_done, 0);
	}
	return 0;
}

/* Interrupt context: the engine signalled the channel. */
void fpgad_chan_irq(struct fpgad_chan *ch)
{
	atomic_set(&ch->irq_done, 1);
	wake_up(&ch->wq);
}

bool fpgad_chan_aborted(struct fpgad_chan *ch)
{
	return READ_ONCE(ch->abort);
}

/*
 * Wait for the channel's interrupt, an abort or @deadline (jiffies).
 * Returns 0 (interrupt, consumed), -ECANCELED or -ETIMEDOUT.
 */
int fpgad_chan_wait(struct fpgad_chan *ch, unsigned long deadline)
{
	long left = (long)(deadline - jiffies);

	if (left > 0)
		wait_event_timeout(ch->wq, atomic_read(&ch->irq_done) ||
				   fpgad_chan_aborted(ch), left);
	if (fpgad_chan_aborted(ch))
		return -ECANCELED;
	if (atomic_xchg(&ch->irq_done, 0))
		return 0;
	return -ETIMEDOUT;
}

static struct fpgad_chan *fpgad_route(struct fpgad_dev *fdev, u32 dir,
				      u32 channel)
{
	if (dir > FPGAD_DMA_C2H || channel >= FPGAD_MAX_CHANNELS)
		return NULL;
	return fdev->route[dir][channel];
}

/* --- files --------------------------------------------------------------- */

static bool fpgad_file_idle(struct fpgad_file *file)
{
	bool idle;

	spin_lock(&file->cq_lock);
	idle = file->running == 0;
	spin_unlock(&file->cq_lock);
	return idle;
}

/*
 * Cancel every transfer of @file (queued ones complete with @status), wait
 * until none runs, release every pin.  Idempotent; the file stays open.
 */
void fpgad_file_teardown(struct fpgad_file *file, int status)
{
	struct fpgad_dev *fdev = file->fdev;
	struct fpgad_pin *pin;
	unsigned long idx;
	unsigned int i;

	mutex_lock(&file->lock);
	if (file->torn)
		goto out;
	WRITE_ONCE(file->torn, true);

	for (i = 0; i < fdev->nchans; i++)
		fpgad_chan_cancel(&fdev->chans[i], file, status);
	wait_event(file->wq, fpgad_file_idle(file));

	xa_for_each(&file->pins, idx, pin) {
		xa_erase(&file->pins, idx);
		fpgad_pin_put(pin);
	}
	wake_up_all(&file->wq);
out:
	mutex_unlock(&file->lock);
}

static int fpgad_open(struct inode *inode, struct file *filp)
{
	struct fpgad_dev *fdev = container_of(inode->i_cdev, struct fpgad_dev,
					      cdev);
	struct fpgad_file *file;

	file = kzalloc(sizeof(*file), GFP_KERNEL);
	if (!file)
		return -ENOMEM;
	file->fdev = fdev;
	mutex_init(&file->lock);
	xa_init_flags(&file->pins, XA_FLAGS_ALLOC1);
	spin_lock_init(&file->cq_lock);
	INIT_LIST_HEAD(&file->done);
	init_waitqueue_head(&file->wq);

	mutex_lock(&fdev->lock);
	if (fdev->dead) {
		mutex_unlock(&fdev->lock);
		kfree(file);
		return -ENODEV;
	}
	get_device(&fdev->dev);
	list_add_tail(&file->node, &fdev->files);
	atomic64_inc(&fdev->ctr.files);
	mutex_unlock(&fdev->lock);

	filp->private_data = file;
	stream_open(inode, filp);
	return 0;
}

static int fpgad_release(struct inode *inode, struct file *filp)
{
	struct fpgad_file *file = filp->private_data;
	struct fpgad_dev *fdev = file->fdev;
	struct fpgad_xfer *x, *tmp;

	fpgad_file_teardown(file, -ECANCELED);

	mutex_lock(&fdev->lock);
	list_del(&file->node);
	atomic64_dec(&fdev->ctr.files);
	mutex_unlock(&fdev->lock);

	list_for_each_entry_safe(x, tmp, &file->done, node)
		kfree(x);
	xa_destroy(&file->pins);
	mutex_destroy(&file->lock);
	kfree(file);
	put_device(&fdev->dev);
	return 0;
}

/* --- ioctls -------------------------------------------------------------- */

/*
 * Every ioctl's argument, copied in by fpgad_ioctl() at the size the caller
 * was built with (_IOC_SIZE): a shorter, older structure is zero-extended,
 * a longer, newer one must be zero past what this driver knows
 * (copy_struct_from_user, E2BIG otherwise).  Out goes what the caller's
 * size holds.
 */
union fpgad_ioc_arg {
	struct fpgad_dma_version version;
	struct fpgad_dma_info info;
	struct fpgad_dma_pin_host host;
	struct fpgad_dma_pin_dmabuf dmabuf;
	struct fpgad_dma_pin_nvp2p nvp2p;
	struct fpgad_dma_unpin unpin;
	struct fpgad_dma_submit submit;
	struct fpgad_dma_reset reset;
	struct fpgad_dma_p2p_path p2p;
};

struct fpgad_ioc_call {
	void __user *arg;
	size_t usize;			/* the caller's structure */
	unsigned int nr;
};

static int fpgad_ioc_out(const struct fpgad_ioc_call *c, const void *k,
			 size_t ksize)
{
	return copy_to_user(c->arg, k, min(c->usize, ksize)) ? -EFAULT : 0;
}

/*
 * The caller speaks ABI @caller: the same major and a minor no newer than
 * the driver's (minors only add).  The reply names the version the file
 * speaks, the caller's when it is understood, so that an older fpgad that
 * compares for equality keeps working with a newer module.
 */
static bool fpgad_abi_understood(u32 caller)
{
	return FPGAD_DMA_ABI_MAJOR(caller) ==
	       FPGAD_DMA_ABI_MAJOR(FPGAD_DMA_ABI_VERSION) &&
	       FPGAD_DMA_ABI_MINOR(caller) <=
	       FPGAD_DMA_ABI_MINOR(FPGAD_DMA_ABI_VERSION);
}

static int fpgad_ioc_version(struct fpgad_file *file, union fpgad_ioc_arg *a,
			     const struct fpgad_ioc_call *c)
{
	struct fpgad_dma_version *v = &a->version;
	u32 caller = v->abi_version;
	bool ok = fpgad_abi_understood(caller);
	int ret;

	if (v->reserved)
		return -EINVAL;
	memset(v, 0, sizeof(*v));
	v->abi_version = ok ? caller : FPGAD_DMA_ABI_VERSION;
	v->driver_version = FPGAD_DMA_ABI_VERSION;
	v->features = FPGAD_DMA_FEAT_DMABUF | FPGAD_DMA_FEAT_POLL_WB;
#ifdef FPGAD_NVP2P
	v->features |= FPGAD_DMA_FEAT_NVP2P;
#endif
	ret = fpgad_ioc_out(c, v, sizeof(*v));
	if (ret)
		return ret;
	WRITE_ONCE(file->versioned, ok);
	return 0;
}

/*
 * The rate a default timeout assumes: a quarter of the link's raw rate,
 * room for a card that moves data slower than its link.
 */
static u64 fpgad_timeout_rate(struct fpgad_dev *fdev)
{
	return max_t(u64, 1, fdev->link_bytes_per_ms / 4);
}

/* The timeout of a SUBMIT that gives none: the base plus its length's. */
static u32 fpgad_default_timeout_ms(struct fpgad_dev *fdev, u64 length)
{
	u64 ms = READ_ONCE(fpgad_timeout_ms) +
		 div64_u64(length, fpgad_timeout_rate(fdev));

	return (u32)min_t(u64, ms, U32_MAX);
}

static int fpgad_ioc_info(struct fpgad_file *file, union fpgad_ioc_arg *a,
			  const struct fpgad_ioc_call *c)
{
	struct fpgad_dev *fdev = file->fdev;
	struct pci_dev *pdev = fdev->pdev;
	struct fpgad_dma_info in;
	u16 lnksta;

	if (READ_ONCE(fdev->dead))
		return -ENODEV;
	memset(&in, 0, sizeof(in));
	in.h2c_channels = fdev->n_h2c;
	in.c2h_channels = fdev->n_c2h;
	if (pci_is_pcie(pdev) &&
	    !pcie_capability_read_word(pdev, PCI_EXP_LNKSTA, &lnksta)) {
		in.link_gen = lnksta & PCI_EXP_LNKSTA_CLS;
		in.link_width = (lnksta & PCI_EXP_LNKSTA_NLW) >>
				PCI_EXP_LNKSTA_NLW_SHIFT;
	}
	in.card_memory = fdev->card_memory;
	in.align = fdev->align;
	in.max_inflight = fpgad_max_inflight;
	in.max_transfer = fdev->max_transfer;
	in.vendor = pdev->vendor;
	in.device = pdev->device;
	in.pci_domain = pci_domain_nr(pdev->bus);
	in.pci_bus = pdev->bus->number;
	in.pci_devfn = pdev->devfn;
	in.default_timeout_ms = READ_ONCE(fpgad_timeout_ms);
	in.timeout_bytes_per_ms = fpgad_timeout_rate(fdev);
	strscpy(in.engine, fdev->engine->name, sizeof(in.engine));
	return fpgad_ioc_out(c, &in, sizeof(in));
}

/* Give @pin a handle in @file and write it to @ret_handle. */
static int fpgad_pin_install(struct fpgad_file *file, struct fpgad_pin *pin,
			     u64 *ret_handle)
{
	u32 id;
	int ret;

	ret = xa_alloc(&file->pins, &id, pin, xa_limit_32b, GFP_KERNEL);
	if (ret)
		return ret;
	*ret_handle = id;
	return 0;
}

static int fpgad_ioc_pin(struct fpgad_file *file, union fpgad_ioc_arg *a,
			 const struct fpgad_ioc_call *c)
{
	struct fpgad_dev *fdev = file->fdev;
	union fpgad_ioc_arg *u = a;
	struct fpgad_pin *pin = NULL;
	u64 handle, *ret_handle;
	size_t ksize;
	int ret;

	mutex_lock(&file->lock);
	ret = -ENODEV;
	if (file->torn)
		goto out;

	switch (c->nr) {
	case _IOC_NR(FPGAD_DMA_IOC_PIN_HOST):
		ksize = sizeof(u->host);
		ret = -EINVAL;
		if (u->host.flags || u->host.reserved)
			goto out;
		ret = fpgad_pin_host(fdev, u->host.addr, u->host.length, &pin);
		ret_handle = &u->host.handle;
		break;
	case _IOC_NR(FPGAD_DMA_IOC_PIN_DMABUF):
		ksize = sizeof(u->dmabuf);
		ret = -EINVAL;
		if (u->dmabuf.flags)
			goto out;
		ret = fpgad_pin_dmabuf(fdev, u->dmabuf.fd, u->dmabuf.offset,
				       u->dmabuf.length, &pin);
		ret_handle = &u->dmabuf.handle;
		break;
	default:
		ksize = sizeof(u->nvp2p);
		ret = -EINVAL;
		if (u->nvp2p.flags || u->nvp2p.reserved)
			goto out;
		ret = fpgad_pin_nvp2p(fdev, u->nvp2p.gpu_addr, u->nvp2p.length,
				      &pin);
		ret_handle = &u->nvp2p.handle;
		break;
	}
	if (ret)
		goto out;

	ret = fpgad_pin_install(file, pin, &handle);
	if (ret)
		goto err_release;
	*ret_handle = handle;
	ret = fpgad_ioc_out(c, u, ksize);
	if (ret) {
		xa_erase(&file->pins, handle);
		goto err_release;
	}
	goto out;

err_release:
	fpgad_pin_put(pin);
out:
	mutex_unlock(&file->lock);
	return ret;
}

static int fpgad_ioc_unpin(struct fpgad_file *file, union fpgad_ioc_arg *a,
			   const struct fpgad_ioc_call *c)
{
	struct fpgad_dma_unpin u = a->unpin;
	struct fpgad_pin *pin;
	int ret;

	if (!u.handle || u.handle > U32_MAX)
		return -ENOENT;

	mutex_lock(&file->lock);
	ret = -ENODEV;
	if (file->torn)
		goto out;
	ret = -ENOENT;
	pin = xa_load(&file->pins, u.handle);
	if (!pin)
		goto out;
	ret = -EBUSY;
	if (atomic_read(&pin->users))
		goto out;
	xa_erase(&file->pins, u.handle);
	fpgad_pin_put(pin);
	ret = 0;
out:
	mutex_unlock(&file->lock);
	return ret;
}

/*
 * The engine's address alignment (INFO's align), on the card side and on
 * the host side; an unaligned address would stop the engine with an ALIGN
 * error mid-transfer.
 */
static bool fpgad_aligned(const struct fpgad_dev *fdev,
			  const struct fpgad_pin *pin,
			  const struct fpgad_dma_submit *s)
{
	u64 host = pin->phase + s->offset;

	return fdev->align <= 1 ||
	       (IS_ALIGNED(s->card_addr, fdev->align) &&
		IS_ALIGNED(host, fdev->align));
}

static int fpgad_ioc_submit(struct fpgad_file *file, union fpgad_ioc_arg *a,
			    const struct fpgad_ioc_call *c)
{
	struct fpgad_dev *fdev = file->fdev;
	struct fpgad_dma_submit s = a->submit;
	struct fpgad_chan *ch;
	struct fpgad_pin *pin;
	struct fpgad_xfer *x;
	bool full;
	int ret;

	if (s.flags)
		return -EINVAL;
	if (!s.length || s.length > fdev->max_transfer)
		return -EINVAL;
	if (fdev->card_memory && (s.card_addr >= fdev->card_memory ||
				  s.length > fdev->card_memory - s.card_addr))
		return -EINVAL;
	if (!s.handle || s.handle > U32_MAX)
		return -ENOENT;

	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return -ENOMEM;

	mutex_lock(&file->lock);
	ret = -ENODEV;
	if (file->torn)
		goto err;
	ret = -EINVAL;
	ch = fpgad_route(fdev, s.direction, s.channel);
	if (!ch)
		goto err;
	ret = -ENOENT;
	pin = xa_load(&file->pins, s.handle);
	if (!pin)
		goto err;
	ret = -EINVAL;
	if (s.offset > pin->length || s.length > pin->length - s.offset)
		goto err;
	ret = -EINVAL;
	if (!fpgad_aligned(fdev, pin, &s))
		goto err;
	ret = -ENOLINK;
	if (READ_ONCE(pin->dead))
		goto err;
	ret = -EIO;
	if (READ_ONCE(ch->wedged))
		goto err;

	spin_lock(&file->cq_lock);
	full = file->outstanding >= fpgad_max_inflight;
	if (!full) {
		file->outstanding++;
		file->running++;
	}
	spin_unlock(&file->cq_lock);
	ret = -EAGAIN;
	if (full)
		goto err;

	x->file = file;
	x->chan = ch;
	x->pin = pin;
	x->offset = s.offset;
	x->card_addr = s.card_addr;
	x->length = s.length;
	x->dir = s.direction;
	x->timeout_ms = s.timeout_ms ? s.timeout_ms :
			fpgad_default_timeout_ms(fdev, s.length);
	x->rec.cookie = s.cookie;
	x->rec.channel = s.channel;
	x->rec.direction = s.direction;
	atomic_inc(&pin->users);
	fpgad_pin_get(pin);
	atomic64_inc(&fdev->ctr.inflight);

	spin_lock(&ch->lock);
	list_add_tail(&x->node, &ch->queue);
	spin_unlock(&ch->lock);
	queue_work(fdev->wq, &ch->work);
	mutex_unlock(&file->lock);
	return 0;

err:
	mutex_unlock(&file->lock);
	kfree(x);
	return ret;
}

static int fpgad_ioc_reset(struct fpgad_file *file, union fpgad_ioc_arg *a,
			   const struct fpgad_ioc_call *c)
{
	struct fpgad_dev *fdev = file->fdev;
	struct fpgad_dma_reset r = a->reset;
	struct fpgad_pin *held = NULL;
	struct fpgad_chan *ch;
	int ret;

	mutex_lock(&file->lock);
	ret = -ENODEV;
	if (file->torn)
		goto out;
	ret = -EINVAL;
	ch = fpgad_route(fdev, r.direction, r.channel);
	if (!ch)
		goto out;

	fpgad_chan_cancel(ch, file, -ECANCELED);
	/* A running transfer of ours stops and releases hw_lock. */
	mutex_lock(&ch->hw_lock);
	ret = fdev->engine->reset(ch);
	if (!ret)
		held = fpgad_chan_unwedge(ch);
	mutex_unlock(&ch->hw_lock);
	fpgad_pin_put(held);
	/*
	 * The engine did not stop: only resetting the function is left; and
	 * only that turns bus mastering back on after a revoke.
	 */
	if ((ret && READ_ONCE(ch->wedged)) || READ_ONCE(fdev->master_off))
		ret = fpgad_dev_reset(fdev);
	atomic64_inc(&fdev->ctr.resets);
	if (ret)
		dev_err(&fdev->pdev->dev, "channel %u reset failed: %d\n",
			ch->index, ret);
out:
	mutex_unlock(&file->lock);
	return ret;
}

static int fpgad_ioc_p2p_path(struct fpgad_file *file, union fpgad_ioc_arg *a,
			      const struct fpgad_ioc_call *c)
{
	struct fpgad_dev *fdev = file->fdev;
	struct fpgad_dma_p2p_path *p = &a->p2p;
	int ret;

	if (p->reserved0 || p->reserved1)
		return -EINVAL;
	if (READ_ONCE(fdev->dead))
		return -ENODEV;
	ret = fpgad_p2p_path(fdev->pdev, p, capable(CAP_SYS_ADMIN));
	if (ret == -E2BIG) {
		/* Only the count needed goes back. */
		if (copy_to_user(c->arg + offsetof(struct fpgad_dma_p2p_path, n_hops),
				 &p->n_hops, sizeof(p->n_hops)))
			return -EFAULT;
		return ret;
	}
	if (ret)
		return ret;
	return fpgad_ioc_out(c, p, sizeof(*p));
}

struct fpgad_ioc_desc {
	size_t size;			/* this driver's structure */
	size_t min;			/* ABI 0.2's: shorter is refused */
	int (*fn)(struct fpgad_file *file, union fpgad_ioc_arg *a,
		  const struct fpgad_ioc_call *c);
};

#define FPGAD_IOC(cmd, s, f) \
	[_IOC_NR(cmd)] = { sizeof(struct s), sizeof(struct s), f }

static const struct fpgad_ioc_desc fpgad_iocs[] = {
	FPGAD_IOC(FPGAD_DMA_IOC_VERSION, fpgad_dma_version, fpgad_ioc_version),
	FPGAD_IOC(FPGAD_DMA_IOC_INFO, fpgad_dma_info, fpgad_ioc_info),
	FPGAD_IOC(FPGAD_DMA_IOC_PIN_HOST, fpgad_dma_pin_host, fpgad_ioc_pin),
	FPGAD_IOC(FPGAD_DMA_IOC_PIN_DMABUF, fpgad_dma_pin_dmabuf, fpgad_ioc_pin),
	FPGAD_IOC(FPGAD_DMA_IOC_PIN_NVP2P, fpgad_dma_pin_nvp2p, fpgad_ioc_pin),
	FPGAD_IOC(FPGAD_DMA_IOC_UNPIN, fpgad_dma_unpin, fpgad_ioc_unpin),
	FPGAD_IOC(FPGAD_DMA_IOC_SUBMIT, fpgad_dma_submit, fpgad_ioc_submit),
	FPGAD_IOC(FPGAD_DMA_IOC_RESET, fpgad_dma_reset, fpgad_ioc_reset),
	FPGAD_IOC(FPGAD_DMA_IOC_P2P_PATH, fpgad_dma_p2p_path, fpgad_ioc_p2p_path),
};

static long fpgad_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct fpgad_file *file = filp->private_data;
	struct fpgad_ioc_call c = {
		.arg = (void __user *)arg,
		.usize = _IOC_SIZE(cmd),
		.nr = _IOC_NR(cmd),
	};
	const struct fpgad_ioc_desc *d;
	union fpgad_ioc_arg a;
	int ret;

	if (_IOC_TYPE(cmd) != FPGAD_DMA_IOC_MAGIC ||
	    _IOC_DIR(cmd) != (_IOC_READ | _IOC_WRITE) ||
	    c.nr >= ARRAY_SIZE(fpgad_iocs) || !fpgad_iocs[c.nr].fn)
		return -ENOTTY;
	d = &fpgad_iocs[c.nr];
	if (c.usize < d->min)
		return -EINVAL;
	if (c.nr != _IOC_NR(FPGAD_DMA_IOC_VERSION) &&
	    !READ_ONCE(file->versioned))
		return -EPROTO;
	ret = copy_struct_from_user(&a, d->size, c.arg, c.usize);
	if (ret)
		return ret;
	return d->fn(file, &a, &c);
}

/* --- completions: read() and poll() ---------------------------------------- */

static bool fpgad_file_readable(struct fpgad_file *file)
{
	bool ready;

	spin_lock(&file->cq_lock);
	ready = !list_empty(&file->done);
	spin_unlock(&file->cq_lock);
	return ready || READ_ONCE(file->torn);
}

static ssize_t fpgad_read(struct file *filp, char __user *buf, size_t count,
			  loff_t *ppos)
{
	struct fpgad_file *file = filp->private_data;
	const size_t rec = sizeof(struct fpgad_dma_completion);
	struct fpgad_xfer *x;
	size_t done = 0;
	int ret;

	if (!READ_ONCE(file->versioned))
		return -EPROTO;
	if (count < rec)
		return -EINVAL;

	while (done + rec <= count) {
		spin_lock(&file->cq_lock);
		x = list_first_entry_or_null(&file->done, struct fpgad_xfer,
					     node);
		if (x) {
			list_del(&x->node);
			file->outstanding--;
		}
		spin_unlock(&file->cq_lock);

		if (!x) {
			if (done)
				break;
			if (READ_ONCE(file->torn))
				return -ENODEV;
			if (filp->f_flags & O_NONBLOCK)
				return -EAGAIN;
			ret = wait_event_interruptible(file->wq,
						       fpgad_file_readable(file));
			if (ret)
				return ret;
			continue;
		}

		if (copy_to_user(buf + done, &x->rec, rec)) {
			spin_lock(&file->cq_lock);
			list_add(&x->node, &file->done);
			file->outstanding++;
			spin_unlock(&file->cq_lock);
			return done ? (ssize_t)done : -EFAULT;
		}
		kfree(x);
		done += rec;
	}
	return done;
}

static __poll_t fpgad_poll(struct file *filp, poll_table *wait)
{
	struct fpgad_file *file = filp->private_data;
	__poll_t mask = 0;

	poll_wait(filp, &file->wq, wait);
	if (!READ_ONCE(file->versioned))
		return EPOLLERR;
	spin_lock(&file->cq_lock);
	if (!list_empty(&file->done))
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock(&file->cq_lock);
	if (READ_ONCE(file->torn))
		mask |= EPOLLHUP | EPOLLERR;
	return mask;
}

const struct file_operations fpgad_fops = {
	.owner = THIS_MODULE,
	.open = fpgad_open,
	.release = fpgad_release,
	.read = fpgad_read,
	.poll = fpgad_poll,
	.unlocked_ioctl = fpgad_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	/*
	 * No .llseek: stream_open() clears FMODE_LSEEK, and lseek() on such
	 * a file fails with ESPIPE whatever .llseek says (no_llseek, which
	 * 6.12 removed, was only ever spelling that out).
	 */
};
