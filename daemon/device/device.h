/* SPDX-License-Identifier: MIT */
/*
 * device.h - the device backend interface.
 *
 * A backend is the card as fpgad sees it: a few DMA engines ("channels"),
 * each moving bytes between card memory and pinned buffers.  It mirrors the
 * kernel ABI in kmod/uapi/fpgad_dma.h so that the xdma backend is a thin
 * layer over /dev/fpgadN and the sim backend models the same contract:
 *
 *   device_open -> device_info -> queue_open (one per streaming channel;
 *   for xdma one open file, so pins and transfers die with it) ->
 *   queue_pin (a ring's memory, once) -> queue_submit (asynchronous, up to
 *   info.max_inflight per queue) -> queue_wait (completions, in any order
 *   the card finishes them; each carries the submitter's cookie) ->
 *   queue_reset after a timeout or error -> queue_close -> device_close.
 *
 * A stream queue (queue_open) serves a channel: its engine is the card's
 * source or sink of frames.  A memory queue (mem_queue_open) serves card
 * memory transfers: each transfer moves dev_xfer.length bytes between the
 * pin and card memory at dev_xfer.card_addr (card_addr, offset and length
 * multiples of info.xfer_align, length at most info.max_transfer).  An
 * engine is one or the other.
 *
 * All functions return 0 (or a count) or a negative errno.  A queue is used
 * by one thread at a time, except queue_kick, which any thread may call to
 * make a blocked queue_wait return early.
 */
#ifndef FPGAD_DEVICE_H
#define FPGAD_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

struct device;
struct device_queue;
struct fpgad_dma_p2p_path;

struct device_info {
	char name[64];			/* "sim", "xdma 10ee:9038 0000:01:00.0" */
	uint32_t c2h_channels;
	uint32_t h2c_channels;
	uint32_t link_gen;		/* 0 = not modelled / unknown */
	uint32_t link_width;
	uint64_t card_memory;		/* bytes of card address space */
	uint32_t align;			/* required alignment of buffers */
	uint32_t max_inflight;		/* transfers a queue may have queued */
	char pci_addr[16];		/* "0000:01:00.0"; "" without a PCI
					   path (sim) */
	uint64_t max_transfer;		/* memory queues: longest transfer */
	uint32_t xfer_align;		/* memory queues: card_addr, offset and
					   length are multiples of this */
};

/* What a pin refers to. */
enum dev_region_kind {
	DEV_REGION_HOST,	/* @addr is host memory (shared memory, pinned) */
	DEV_REGION_CUDA,	/* @addr is a CUDA device pointer */
	DEV_REGION_DMABUF,	/* @fd is a dma-buf exporting the memory */
};

struct dev_region {
	enum dev_region_kind kind;
	void *addr;
	int fd;
	uint64_t fd_offset;
	uint64_t length;
	int gpu;		/* CUDA device ordinal for DEV_REGION_CUDA/DMABUF */
};

struct dev_xfer {
	uint64_t handle;	/* from queue_pin */
	uint64_t offset;	/* into the pinned region */
	uint64_t card_addr;	/* card memory address (sim: source/sink) */
	uint64_t length;
	uint64_t cookie;	/* returned in the completion */
	uint32_t timeout_ms;	/* 0 = the device default */
};

/* Completion status values beyond 0 and -errno are not used. */
struct dev_completion {
	uint64_t cookie;
	int32_t status;		/* 0, -ETIMEDOUT, -EIO, -ECANCELED (reset) */
	uint32_t flags;		/* DEV_COMPLETION_* */
	uint64_t length;	/* bytes moved */
	uint64_t seq;		/* frame number from the card's source, C2H */
	uint64_t t_start_ns;	/* CLOCK_MONOTONIC, DMA start */
	uint64_t t_end_ns;	/* CLOCK_MONOTONIC, DMA end */
	/* The sender's clock (fpgad_frames.h), network sources; 0 = none. */
	uint64_t t_sender_start_ns, t_sender_end_ns;
};

#define DEV_COMPLETION_TRUNCATED 0x1u
/* Set by fpgad, not the card: the frame failed its integrity check. */
#define DEV_COMPLETION_CORRUPT 0x2u

struct device_ops {
	const char *name;
	/* On failure writes why into @err: the caller says it, once. */
	int (*open)(const struct config *cfg, struct device **ret_dev,
		    char *err, size_t errlen);
	void (*close)(struct device *dev);
	int (*info)(struct device *dev, struct device_info *ret_info);

	int (*queue_open)(struct device *dev, const struct config_channel *ch,
			  struct device_queue **ret_q);
	void (*queue_close)(struct device_queue *q);
	int (*pin)(struct device_queue *q, const struct dev_region *r,
		   uint64_t *ret_handle);
	int (*unpin)(struct device_queue *q, uint64_t handle);
	int (*submit)(struct device_queue *q, const struct dev_xfer *x);
	/*
	 * Wait up to @timeout_ms (-1 = forever, 0 = poll) for completions;
	 * returns how many were written to @out (0 on timeout or kick).
	 */
	int (*wait)(struct device_queue *q, struct dev_completion *out,
		    unsigned max, int timeout_ms);
	void (*kick)(struct device_queue *q);
	/* Stop the engine, cancel what is queued (-ECANCELED), make it usable. */
	int (*reset)(struct device_queue *q);
	/*
	 * Optional, NULL where the card cannot tell: for an h2c queue, how
	 * many frames the card checked and accepted or rejected.  Any thread.
	 */
	int (*sink_counts)(struct device_queue *q, uint64_t *ret_good,
			   uint64_t *ret_bad);
	/*
	 * Optional, NULL where the card has no PCI path (sim): the kernel's
	 * answer to FPGAD_DMA_IOC_P2P_PATH for the peer set in @path.
	 */
	int (*p2p_path)(struct device *dev, struct fpgad_dma_p2p_path *path);
	/*
	 * Optional, NULL where the card has no memory-mapped engines: a
	 * memory queue on engine @engine of @dir.  @poll_us: the engine may
	 * spin this long for work before it sleeps (0 = not at all).
	 */
	int (*mem_queue_open)(struct device *dev, enum direction dir,
			      unsigned engine, unsigned poll_us,
			      struct device_queue **ret_q);
	/*
	 * Optional: a descriptor that polls readable while a completion of
	 * @q may be waiting, for a thread that waits on several queues (and
	 * other descriptors) at once.  Poll it, never read it: wait() takes
	 * the completions.  Where arm_completion is NULL, a wait() that
	 * returns 0 leaves it set to wake the poller at the next completion (a
	 * wake-up may come with nothing to take; the next wait() clears it).
	 * Owned by the queue.
	 */
	int (*completion_fd)(struct device_queue *q);
	/*
	 * Optional, with completion_fd, where waking the poller costs the
	 * card (sim: a write per completion): ask for that wake-up, just
	 * before sleeping on the descriptor; 1 when a completion is waiting
	 * already (take it instead of sleeping), else 0.  Where it is set,
	 * wait() never asks for it, so a poller that looks with wait() while
	 * it spins costs the card nothing per completion.
	 */
	int (*arm_completion)(struct device_queue *q);
	/*
	 * Optional: make [@addr, @addr + @len) of card memory read back as
	 * zeros (a card region between two clients).  0 or -errno.
	 */
	int (*scrub)(struct device *dev, uint64_t addr, uint64_t len);
};

extern const struct device_ops device_sim_ops;
extern const struct device_ops device_xdma_ops;
/*
 * The stream queues of the network sources (source.h): they need no open
 * device (queue_open takes NULL).  source = roce: a UC QP writes a landing
 * ring (device/net/roce_rx.h).
 */
extern const struct device_ops device_net_ops;
extern const struct device_ops device_roce_ops;

struct mem_region;
struct memory_ops;

/*
 * Pin @mem (a ring from @mops) on @q: GPU memory as a dma-buf where the
 * memory backend exports one and the card imports it, else by address.
 */
int device_pin_region(const struct device_ops *ops, struct device_queue *q,
		      const struct memory_ops *mops, struct mem_region *mem,
		      uint64_t *ret_handle);

/* The ops for cfg->device.backend. */
const struct device_ops *device_ops_for(enum backend_kind kind);

#endif
