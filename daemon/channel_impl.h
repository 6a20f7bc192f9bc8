/* SPDX-License-Identifier: MIT */
/*
 * channel_impl.h - what channel.c (set-up, leases, stats) and stream.c (the
 * streaming thread) share: struct channel.  Not for other files.
 *
 * Locking: ch->lock protects the ring, the lease list, the state and the
 * counters.  The streaming thread holds it while it does bookkeeping and
 * drops it whenever it waits (for the card, for a copy, for a release);
 * the control path holds it only to add or remove a lease or read stats.
 * The device queue is the streaming thread's while it runs.
 */
#ifndef FPGAD_CHANNEL_IMPL_H
#define FPGAD_CHANNEL_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "channel.h"
#include "copy.h"
#include "frame_producer.h"
#include "lease.h"
#include "memory.h"
#include "slots.h"

#define CHANNEL_MAX_FAILURES 5	/* consecutive DMA failures before FAILED */

/*
 * h2c slots: FREE (fpgad's) -> OFFERED (published empty; the lessee's to
 * fill) -> QUEUED (filled, waiting for the card) -> DMA (the card reads
 * it) -> FREE.  One writer (exclusive lease) and no fan-out, so a state
 * per slot is all the bookkeeping there is.
 */
enum h2c_slot { H2C_FREE, H2C_OFFERED, H2C_QUEUED, H2C_DMA };
#define CHANNEL_BATCH 32

struct channel {
	struct config_channel cfg;
	unsigned dma_timeout_ms;
	const struct device_ops *ops;
	struct device *dev;
	struct device_queue *q;

	enum memory_kind memory;
	enum transfer_mode mode;
	char reason[192];
	const struct memory_ops *mops;
	struct mem_region *mem;		/* the ring's slots */
	uint64_t pin;			/* device handle of what the card writes */
	void *staging;			/* bounce: pinned host, one slot each */
	struct copy_engine *ce;		/* bounce: staging -> GPU slot */
	struct dev_completion *pending;	/* bounce: per slot, while copying */

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct slots *slots;		/* c2h: who owns each slot */
	uint8_t *h2c;			/* h2c: enum h2c_slot per slot */
	uint64_t *h2c_fill;		/* h2c: bytes to send, per slot */
	uint64_t offer_seq;		/* h2c: buffers offered so far */
	struct lease *leases;
	unsigned n_leases;
	const struct lease *waiting_on;	/* the stream sleeps on its releases */
	enum channel_state state;
	unsigned inflight;		/* transfers queued on the card */
	unsigned copying;		/* bounce copies queued on the GPU */
	unsigned failures;		/* consecutive */
	uint64_t progress_ns;		/* last completion, or first submit */
	uint64_t next_seq;		/* the seq that follows the last published */
	uint64_t drops_seen;		/* ring drops at the last publish */
	struct channel_stats acc;	/* counters of rings already retired */
	struct channel_stats stats;	/* this channel's own counters */

	pthread_t thread;
	bool running;
	atomic_bool stop;
};

/* channel.c */
uint64_t channel_ring_bytes(const struct channel *ch);
/*
 * A host-memory ring of its own for each new lessee (the card is idle);
 * nothing to do for GPU memory.
 */
int channel_renew_ring(struct channel *ch);

/* stream.c: the streaming thread and the slot bookkeeping it shares. */
int stream_start(struct channel *ch);
/* Stop the thread, cancel every transfer, take every slot back. */
void stream_stop(struct channel *ch);
/* Fresh slots, all FREE; the old ones' counters go to ch->acc. */
int stream_slots_renew(struct channel *ch);
/* A lessee handed @r back; ch->lock held. */
void stream_returned(struct channel *ch, struct lease *l,
		     const struct frame_returned *r);

/*
 * policy.c: a FREE slot for the card (FREE -> DMA), or -EAGAIN when the
 * channel's policy says there is none to give; ch->lock held.
 */
int policy_take_slot(struct channel *ch);

#endif
