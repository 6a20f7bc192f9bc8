/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fpgad_drv.h - what the parts of fpgad_dma.ko share (internal; the ABI is
 * uapi/fpgad_dma.h).
 *
 * fpgad_main.c   PCI driver, the fpgad class, sysfs counters
 * fpgad_cdev.c   /dev/fpgadN: open files, ioctls, read()/poll() of
 *                completions, the per-channel transfer queues
 * fpgad_pin.c    host and dma-buf pins, revoking a pin; DMA segment walking
 * fpgad_nvp2p.c  nv-p2p pins (NVIDIA_SRC= builds)
 * fpgad_edu.c    engine for QEMU's edu device
 * fpgad_xdma.c   engine for the Xilinx XDMA scatter-gather IP
 * fpgad_p2p.c    the PCI path to a peer device and its ACS state
 *
 * Objects and their owners:
 *   struct fpgad_dev   one per bound PCI function; refcounted by its embedded
 *                      struct device; lives until the last open file is gone.
 *   struct fpgad_chan  one per hardware DMA engine; a queue of transfers run
 *                      one at a time by the channel's work item.
 *   struct fpgad_file  one per open file; owns its pins and transfers.
 *   struct fpgad_pin   memory the card may reach; owned by one file, and
 *                      refcounted: a wedged channel holds the pin its
 *                      engine may still write until the engine is known
 *                      to have stopped.
 *   struct fpgad_xfer  one SUBMIT, from the channel queue to the file's
 *                      completion list to read().
 *
 * Lock order: fdev->lock -> file->lock -> ch->hw_lock (several: in
 * channel index order) -> ch->lock, file->cq_lock (the last two are
 * leaves and never nested).  A dma-buf's reservation lock comes before
 * hw_lock (move_notify waits for the engine), so no pin is put while
 * hw_lock is held.  Calls go one way: cdev -> nvp2p -> pin, and cdev ->
 * pin; the engines call back into cdev's channel helpers only.
 */
#ifndef FPGAD_DRV_H
#define FPGAD_DRV_H

#include <linux/atomic.h>
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "uapi/fpgad_dma.h"

#define FPGAD_MAX_DEVICES	64
#define FPGAD_MAX_CHANNELS	4	/* per direction */

struct fpgad_dev;
struct fpgad_chan;
struct fpgad_xfer;

/* Module parameters (fpgad_main.c). */
extern unsigned int fpgad_timeout_ms;
extern unsigned int fpgad_max_inflight;
extern bool fpgad_poll_mode;
extern unsigned long long fpgad_card_memory;

enum fpgad_engine_kind {
	FPGAD_ENGINE_XDMA = 0,	/* driver_data 0: what new_id binds */
	FPGAD_ENGINE_EDU = 1,
};

/*
 * A DMA engine family.  probe() maps what it needs, calls
 * fpgad_chans_alloc() and fills the fdev fields marked "engine"; remove()
 * undoes probe() once no transfer runs.  run() moves one transfer while the
 * channel's hw_lock is held and returns 0 or a negative errno; when it
 * returns, the engine is stopped and no DMA of the transfer is outstanding,
 * or, when the engine could not be stopped, it has called
 * fpgad_chan_wedge().  reset() stops the channel's engine and makes it
 * usable again (0), or wedges the channel and fails.  reinit() programs
 * the engine again after the PCI function was reset.
 */
struct fpgad_engine {
	const char *name;
	int (*probe)(struct fpgad_dev *fdev);
	void (*remove)(struct fpgad_dev *fdev);
	int (*run)(struct fpgad_chan *ch, struct fpgad_xfer *x);
	int (*reset)(struct fpgad_chan *ch);
	int (*reinit)(struct fpgad_dev *fdev);
};

extern const struct fpgad_engine fpgad_engine_edu;
extern const struct fpgad_engine fpgad_engine_xdma;

struct fpgad_counters {
	atomic64_t pins;		/* live pins */
	atomic64_t pinned_bytes;	/* bytes they cover */
	atomic64_t files;		/* open files */
	atomic64_t inflight;		/* transfers queued or running */
	atomic64_t transfers;		/* transfers completed with status 0 */
	atomic64_t bytes_h2c;		/* bytes moved host to card */
	atomic64_t bytes_c2h;		/* bytes moved card to host */
	atomic64_t timeouts;
	atomic64_t errors;		/* -EIO and other engine failures */
	atomic64_t cancels;		/* -ECANCELED, -ENODEV */
	atomic64_t resets;
	atomic64_t wedged;		/* channels wedged now */
	atomic64_t interrupts;		/* the card's, that its handler took */
};

struct fpgad_chan {
	struct fpgad_dev *fdev;
	unsigned int index;		/* in fdev->chans */
	u32 dir;			/* FPGAD_DMA_H2C/C2H; edu: both */
	u32 hw_index;			/* engine number within dir */

	spinlock_t lock;		/* queue, cur, abort, wedged, held */
	struct list_head queue;		/* of fpgad_xfer, not yet started */
	struct fpgad_xfer *cur;		/* running, or NULL */
	bool abort;			/* cur is cancelled */
	bool wedged;			/* the engine did not stop */
	struct fpgad_pin *held;		/* wedged: the pin it may still write */
	struct work_struct work;	/* runs the queue */
	wait_queue_head_t idle_wq;	/* cur changed */

	struct mutex hw_lock;		/* engine registers: run() and reset() */
	wait_queue_head_t wq;		/* interrupt or abort */
	atomic_t irq_done;		/* set by the interrupt handler */

	void *priv;			/* engine's */
};

struct fpgad_dev {
	struct device dev;		/* fpgadN, class fpgad; owns this struct */
	struct cdev cdev;
	struct pci_dev *pdev;
	const struct fpgad_engine *engine;
	int minor;

	struct mutex lock;		/* files, dead */
	struct list_head files;
	bool dead;			/* removed from the bus */

	struct workqueue_struct *wq;
	struct fpgad_chan *chans;
	unsigned int nchans;
	/* (direction, index) -> channel */
	struct fpgad_chan *route[2][FPGAD_MAX_CHANNELS];

	/* engine: */
	u32 n_h2c, n_c2h;
	u64 card_memory;		/* 0 = unknown */
	u64 max_transfer;
	u32 align;
	void *engine_priv;

	u64 link_bytes_per_ms;		/* raw PCIe rate; Gen1 x1 if unknown */
	bool master_off;		/* a revoke switched bus mastering off */
	struct fpgad_counters ctr;
};

enum fpgad_pin_kind {
	FPGAD_PIN_HOST,
	FPGAD_PIN_DMABUF,
	FPGAD_PIN_NVP2P,
};

struct fpgad_pin {
	struct fpgad_dev *fdev;
	refcount_t ref;			/* the file's, a wedged channel's */
	enum fpgad_pin_kind kind;
	u64 length;			/* bytes usable through the pin */
	u64 base;			/* offset of byte 0 in sgt */
	u64 phase;			/* byte 0's DMA address modulo a page */
	struct sg_table *sgt;		/* DMA-mapped for fdev->pdev */
	atomic_t users;			/* transfers queued or running */
	bool dead;			/* revoked by the exporter */
	bool need_sync;			/* host: bounced or not coherent */
	void (*release)(struct fpgad_pin *pin);	/* the kind's undo */
	union {
		struct {
			struct page **pages;
			unsigned long npages;
			struct sg_table table;
			struct mm_struct *mm;	/* charged: locked_vm */
		} host;
		struct {
			struct dma_buf *buf;
			struct dma_buf_attachment *attach;
		} dmabuf;
		struct {
			void *priv;
		} nvp2p;
	};
};

struct fpgad_file {
	struct fpgad_dev *fdev;
	struct list_head node;		/* fdev->files */

	struct mutex lock;		/* pins, torn, submission */
	struct xarray pins;		/* handle -> fpgad_pin */
	bool versioned;			/* VERSION succeeded */
	bool torn;			/* pins and transfers released */

	spinlock_t cq_lock;		/* done, outstanding, running */
	struct list_head done;		/* completed fpgad_xfer, for read() */
	unsigned int outstanding;	/* submitted, record not read yet */
	unsigned int running;		/* queued or running on a channel */
	wait_queue_head_t wq;		/* done grew, running reached 0 */
};

struct fpgad_xfer {
	struct list_head node;		/* ch->queue, then file->done */
	struct fpgad_file *file;
	struct fpgad_chan *chan;
	struct fpgad_pin *pin;
	u64 offset;
	u64 card_addr;
	u64 length;
	u32 dir;
	u32 timeout_ms;
	int cancel;			/* status to complete with unrun, or 0 */
	struct fpgad_dma_completion rec;
};

/* fpgad_main.c */
u64 fpgad_link_rate(struct pci_dev *pdev);
extern struct dentry *fpgad_debugfs;	/* /sys/kernel/debug/fpgad_dma */

/* fpgad_p2p.c */
int fpgad_p2p_path(struct pci_dev *card, struct fpgad_dma_p2p_path *p,
		   bool raw_acs);

/* fpgad_cdev.c */
extern const struct file_operations fpgad_fops;
void fpgad_file_teardown(struct fpgad_file *file, int status);
int fpgad_chans_alloc(struct fpgad_dev *fdev, unsigned int n);
void fpgad_chan_irq(struct fpgad_chan *ch);
int fpgad_chan_wait(struct fpgad_chan *ch, unsigned long deadline);
bool fpgad_chan_aborted(struct fpgad_chan *ch);
void fpgad_chan_wedge(struct fpgad_chan *ch);
void fpgad_chans_release_held(struct fpgad_dev *fdev);

/* fpgad_pin.c */
int fpgad_pin_host(struct fpgad_dev *fdev, u64 addr, u64 length,
		   struct fpgad_pin **ret_pin);
int fpgad_pin_dmabuf(struct fpgad_dev *fdev, int fd, u64 offset, u64 length,
		     struct fpgad_pin **ret_pin);
struct fpgad_pin *fpgad_pin_new(struct fpgad_dev *fdev,
				enum fpgad_pin_kind kind, u64 length,
				void (*release)(struct fpgad_pin *pin));
void fpgad_pin_account(struct fpgad_pin *pin, int sign);
void fpgad_pin_revoke(struct fpgad_pin *pin);
void fpgad_pin_get(struct fpgad_pin *pin);
void fpgad_pin_put(struct fpgad_pin *pin);
void fpgad_pin_sync_for_device(struct fpgad_dev *fdev, struct fpgad_pin *pin,
			       u64 offset, u64 length, u32 dir);
void fpgad_pin_sync_for_cpu(struct fpgad_dev *fdev, struct fpgad_pin *pin,
			    u64 offset, u64 length, u32 dir);

/* Walks the DMA segments of [offset, offset + length) of a pin. */
struct fpgad_seg_iter {
	struct scatterlist *sg;
	unsigned int nents_left;
	u64 skip;
	u64 left;
};

void fpgad_seg_init(struct fpgad_seg_iter *it, const struct fpgad_pin *pin,
		    u64 offset, u64 length);
bool fpgad_seg_next(struct fpgad_seg_iter *it, dma_addr_t *ret_addr,
		    u64 *ret_len);

/* fpgad_nvp2p.c, built with NVIDIA_SRC= only */
#ifdef FPGAD_NVP2P
int fpgad_pin_nvp2p(struct fpgad_dev *fdev, u64 gpu_addr, u64 length,
		    struct fpgad_pin **ret_pin);
#else
static inline int fpgad_pin_nvp2p(struct fpgad_dev *fdev, u64 gpu_addr,
				  u64 length, struct fpgad_pin **ret_pin)
{
	return -EOPNOTSUPP;
}
#endif

#endif /* FPGAD_DRV_H */
