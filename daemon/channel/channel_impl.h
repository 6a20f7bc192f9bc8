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

#include "channel/channel.h"
#include "channel/frame_producer.h"
#include "channel/lease.h"
#include "channel/slots.h"
#include "memory/copy.h"
#include "memory/memory.h"

#define CHANNEL_MAX_FAILURES 5	/* consecutive DMA failures before FAILED */

/*
 * h2c slots: FREE (fpgad's) -> OFFERED (published empty; the lessee's to
 * fill) -> QUEUED (filled, waiting for the card) -> DMA (the card reads
 * it) -> FREE.  One writer (exclusive lease) and no fan-out, so a state
 * per slot is all the bookkeeping there is.
 */
enum h2c_slot { H2C_FREE, H2C_OFFERED, H2C_QUEUED, H2C_DMA };
#define CHANNEL_BATCH 32

#define PACE_TIMERSLACK_NS 1000UL	/* the streaming thread's timer slack */

/* pace.c's record of how far apart the card's completions come. */
struct pace {
	_Atomic uint32_t nap;		/* futex: the thread sleeps on it */
	uint64_t interval_ns;		/* average DMA end to DMA end */
	uint64_t jitter_ns;		/* average distance from that average */
	uint64_t last_end_ns;		/* the latest DMA end seen */
	uint64_t late_ns;		/* how late timers wake it, on average */
	uint64_t async_since_ns;	/* stream-ordered releases awaited since
					   (0: none awaited, or slots came back) */
};

struct channel {
	struct config_channel cfg;
	unsigned dma_timeout_ms;
	struct source src;		/* where its frames come from */
	const struct device_ops *ops;	/* src.ops: its queue's */
	struct device *dev;		/* src.dev */
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
	bool flush_failed;		/* gpudirect, rule none: said once */

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
	bool seq_known;			/* next_seq holds since the stream started */
	uint64_t drops_seen;		/* ring drops at the last publish */
	struct channel_stats acc;	/* counters of rings already retired */
	struct channel_stats stats;	/* this channel's own counters */

	pthread_t thread;
	bool running;
	atomic_bool stop;
	struct pace pace;
};

/* channel.c */
uint64_t channel_ring_bytes(const struct channel *ch);
/*
 * A host-memory ring of its own for each new lessee (the card is idle);
 * nothing to do for GPU memory.
 */
int channel_renew_ring(struct channel *ch);
/* Fresh slots, all FREE; the old ones' counters go to ch->acc. */
int channel_renew_slots(struct channel *ch);

/* stream.c: the streaming thread and the slot bookkeeping it shares. */
int stream_start(struct channel *ch);
/* Stop the thread, cancel every transfer, take every slot back. */
void stream_stop(struct channel *ch);
/*
 * h2c, its writer gone: until what it handed over has reached the card
 * (or dma_timeout_ms passed, or the channel stopped streaming).
 */
void stream_flush(struct channel *ch);
/* A lessee handed @r back; ch->lock held. */
void stream_returned(struct channel *ch, struct lease *l,
		     const struct frame_returned *r);

/*
 * pace.c: wait for completions the way that wakes nobody in between
 * (hybrid polling) or few times (batching); at most @block_ms.  Returns
 * how many were written to @out.  Without ch->lock.
 */
int pace_wait(struct channel *ch, struct dev_completion *out, unsigned max,
	      int block_ms);
/* Learn from @n completions just taken. */
void pace_note(struct channel *ch, const struct dev_completion *c, int n);
/* The card was reset or restarted: what it did before says nothing. */
void pace_forget(struct channel *ch);
/* Sleep until @t (CLOCK_MONOTONIC ns) unless poked. */
void pace_nap(struct channel *ch, uint64_t t);
/* Wake the thread from a pace_wait() nap (stop). */
void pace_poke(struct channel *ch);
/*
 * A starved stream awaits stream-ordered releases, which wake nobody: when
 * to look again after @now.  Soon (PACE_ASYNC_POLL_NS) while they have been
 * awaited briefly, then later the longer nothing comes back (a sixteenth of
 * the wait so far, at most PACE_ASYNC_POLL_MAX_NS): a consumer that counts
 * releases it never stores costs fpgad little.  pace_async_progress() when
 * slots come back.
 */
#define PACE_ASYNC_POLL_NS 20000ull
#define PACE_ASYNC_POLL_MAX_NS 1000000ull
uint64_t pace_async_due(struct channel *ch, uint64_t now);
/*
 * Until when to spin for them before napping: the first PACE_ASYNC_SPIN_NS
 * they are awaited (a GPU usually stores a release within microseconds
 * of the work before it, and a nap costs a VM tens of microseconds), then
 * 0: no spin until slots came back.  Call after pace_async_due().
 */
#define PACE_ASYNC_SPIN_NS 30000ull
uint64_t pace_async_spin_until(const struct channel *ch, uint64_t now);
void pace_async_progress(struct channel *ch);

/*
 * policy.c: a FREE slot for the card (FREE -> DMA), or -EAGAIN when the
 * channel's policy says there is none to give; ch->lock held.
 */
int policy_take_slot(struct channel *ch);

#endif
