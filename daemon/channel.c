// SPDX-License-Identifier: MIT
/*
 * channel.c - a configured DMA channel: its ring memory (allocated and
 * pinned once, at start), its leases, and while leased its streaming
 * thread, the hot path: arm DMA into free slots, take completions,
 * publish frames into every lessee's descriptor ring, take back what the
 * lessees released, and recover from DMA errors.
 *
 * Locking: ch->lock protects the ring, the lease list, the state and the
 * counters.  The streaming thread holds it while it does bookkeeping and
 * drops it whenever it waits (for the card, for a copy, for a release);
 * the control path holds it only to add or remove a lease or read stats.
 * The device queue is the streaming thread's while it runs.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "lease.h"
#include "log.h"
#include "ring.h"
#ifdef FPGAD_CUDA
#include "copy.h"
#endif

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
#ifdef FPGAD_CUDA
	struct copy_engine *ce;		/* bounce: staging -> GPU slot */
	struct dev_completion *pending;	/* bounce: per slot, while copying */
#endif

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct ring *ring;		/* c2h: who owns each slot */
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
	uint64_t next_seq;		/* the seq that follows the last published */
	uint64_t drops_seen;		/* ring drops at the last publish */
	struct channel_stats acc;	/* counters of rings already retired */
	struct channel_stats stats;	/* this channel's own counters */

	pthread_t thread;
	bool running;
	atomic_bool stop;
};

const char *channel_state_name(enum channel_state st)
{
	static const char *const names[] = {
		"idle", "streaming", "recovering", "failed",
	};
	return names[st];
}

/* --- slot bookkeeping (ch->lock held) ----------------------------------- */

/* A lessee let go of @slot: released it if it held it, else skipped it. */
static void settle(struct channel *ch, struct lease *l, unsigned slot)
{
	if (l->held[slot]) {
		l->held[slot] = 0;
		ring_release(ch->ring, slot);
	} else {
		ring_skip(ch->ring, slot);
	}
}

/* h2c: a buffer came back, filled for the card or unused. */
static void h2c_returned(struct channel *ch, const struct frame_ring_returned *r)
{
	if (r->slot >= ch->cfg.slots || ch->h2c[r->slot] != H2C_OFFERED)
		return;
	if (r->how == FPGAD_DESC_RELEASED && r->fill) {
		ch->h2c[r->slot] = H2C_QUEUED;
		ch->h2c_fill[r->slot] = r->fill;
	} else {
		ch->h2c[r->slot] = H2C_FREE;
	}
}

/* A lessee handed @r back (released, skipped, revoked or still held). */
static void returned(struct channel *ch, struct lease *l,
		     const struct frame_ring_returned *r)
{
	if (ch->cfg.direction == DIR_H2C)
		h2c_returned(ch, r);
	else
		settle(ch, l, r->slot);
}

static void reclaim(struct channel *ch)
{
	struct frame_ring_returned out[CHANNEL_BATCH];
	int n;

	for (struct lease *l = ch->leases; l; l = l->next) {
		while ((n = frame_ring_reclaim(l->prod, out, CHANNEL_BATCH)) > 0) {
			for (int i = 0; i < n; i++)
				returned(ch, l, &out[i]);
			if (n < CHANNEL_BATCH)
				break;
		}
	}
}

/*
 * drop-oldest found the oldest READY slot still out with readers: take it
 * back from each reader that has not claimed it.  Afterwards the slot is
 * FREE (nobody had claimed it) or HELD (somebody had).
 */
static int revoke_oldest(struct channel *ch)
{
	int slot = ring_oldest_ready(ch->ring), r;

	if (slot < 0)
		return slot;
	for (struct lease *l = ch->leases; l; l = l->next) {
		if (!frame_ring_slot_out(l->prod, (uint32_t)slot))
			continue;
		r = frame_ring_revoke(l->prod, (uint32_t)slot);
		if (r == 0) {
			ring_revoke(ch->ring, (unsigned)slot);
		} else if (r == -EALREADY) {
			settle(ch, l, (unsigned)slot);
		} else if (r == -EBUSY) {
			if (!l->held[slot]) {
				l->held[slot] = 1;
				ring_hold(ch->ring, (unsigned)slot);
			}
		}
	}
	return 0;
}

static uint64_t slot_offset(const struct channel *ch, unsigned slot)
{
	return (uint64_t)slot * ch->cfg.slot_size;
}

/* Queue transfers into free slots, up to the channel's queue depth. */
static void arm(struct channel *ch)
{
	struct dev_xfer x = {
		.handle = ch->pin,
		.length = ch->cfg.frame_size,
		.timeout_ms = ch->dma_timeout_ms,
	};
	int slot, r;

	while (ch->state == CHANNEL_STREAMING &&
	       ch->inflight + ch->copying < ch->cfg.queue_depth) {
		slot = ring_arm(ch->ring);
		if (slot == -EBUSY) {
			/*
			 * Only readers' frames are left.  While the card still
			 * has work, keep the newest one for them: taking back
			 * the only ready frame to queue one more transfer would
			 * hand a slow reader nothing, ever.
			 */
			if (ch->inflight && ring_count(ch->ring, RING_SLOT_READY) <= 1)
				break;
			if (revoke_oldest(ch) < 0)
				break;
			continue;
		}
		if (slot < 0)
			break;
		x.offset = slot_offset(ch, (unsigned)slot);
		x.cookie = (uint64_t)slot;
		r = ch->ops->submit(ch->q, &x);
		if (r < 0) {
			ring_cancel(ch->ring, (unsigned)slot);
			if (r != -EAGAIN)
				log_err("channel %s: submit: %s", ch->cfg.name,
					strerror(-r));
			break;
		}
		ch->inflight++;
	}
}

/* h2c: send the filled buffers to the card, oldest offer first. */
static void h2c_submit(struct channel *ch)
{
	struct dev_xfer x = {
		.handle = ch->pin,
		.timeout_ms = ch->dma_timeout_ms,
	};
	int r;

	for (unsigned s = 0; s < ch->cfg.slots; s++) {
		if (ch->state != CHANNEL_STREAMING ||
		    ch->inflight >= ch->cfg.queue_depth)
			return;
		if (ch->h2c[s] != H2C_QUEUED)
			continue;
		x.offset = slot_offset(ch, s);
		x.length = ch->h2c_fill[s];
		x.cookie = s;
		r = ch->ops->submit(ch->q, &x);
		if (r == -EAGAIN)
			return;
		if (r < 0) {
			log_err("channel %s: submit: %s", ch->cfg.name, strerror(-r));
			ch->h2c[s] = H2C_FREE;
			ch->stats.errors++;
			continue;
		}
		ch->h2c[s] = H2C_DMA;
		ch->inflight++;
	}
}

/* h2c: offer every free buffer to the writer. */
static void h2c_offer(struct channel *ch)
{
	struct frame_ring_frame f = { 0 };
	struct lease *l = ch->leases;

	if (!l || ch->state != CHANNEL_STREAMING)
		return;
	for (unsigned s = 0; s < ch->cfg.slots; s++) {
		if (ch->h2c[s] != H2C_FREE)
			continue;
		f.slot = s;
		f.seq = ch->offer_seq;
		if (frame_ring_publish(l->prod, &f, NULL) < 0)
			return;
		ch->offer_seq++;
		ch->h2c[s] = H2C_OFFERED;
	}
}

static void publish(struct channel *ch, unsigned slot,
		    const struct dev_completion *c)
{
	struct frame_ring_frame f = {
		.seq = c->seq,
		.slot = slot,
		.length = c->length,
		.t_dma_start_ns = c->t_start_ns,
		.t_dma_end_ns = c->t_end_ns,
	};
	struct ring_stats rs;

	ring_get_stats(ch->ring, &rs);
	if (c->flags & DEV_COMPLETION_TRUNCATED)
		f.flags |= FPGAD_FRAME_TRUNCATED;
	if ((ch->stats.frames && c->seq != ch->next_seq) ||
	    rs.drops != ch->drops_seen)
		f.flags |= FPGAD_FRAME_DROPPED_BEFORE;
	ch->next_seq = c->seq + 1;
	ch->drops_seen = rs.drops;
	for (struct lease *l = ch->leases; l; l = l->next) {
		int r = frame_ring_publish(l->prod, &f, NULL);

		if (r == 0)
			ring_publish(ch->ring, slot);
		else
			log_warn("channel %s: cannot publish slot %u to pid %d: %s",
				 ch->cfg.name, slot, (int)l->pid, strerror(-r));
	}
}

/* Tell every lessee, e.g. FPGAD_EVENT_RESET. */
static void raise_all(struct channel *ch, uint32_t events)
{
	for (struct lease *l = ch->leases; l; l = l->next)
		frame_ring_raise(l->prod, events);
}

static void completed(struct channel *ch, unsigned slot,
		      const struct dev_completion *c);

/* Take every completion the queue has now, without waiting. */
static void drain(struct channel *ch, int timeout_ms)
{
	struct dev_completion comp[CHANNEL_BATCH];
	int n;

	while (ch->inflight &&
	       (n = ch->ops->wait(ch->q, comp, CHANNEL_BATCH, timeout_ms)) > 0)
		for (int i = 0; i < n; i++)
			completed(ch, (unsigned)comp[i].cookie, &comp[i]);
}

/*
 * A transfer failed: stop the engine and cancel what is queued; the slot
 * in flight was already recycled.  The stream re-arms once every queued
 * transfer has come back (see settle_recovery).
 */
static void recover(struct channel *ch, int status)
{
	int r;

	ch->stats.recoveries++;
	ch->failures++;
	ch->state = CHANNEL_RECOVERING;
	r = ch->ops->reset(ch->q);
	if (r < 0) {
		log_err("channel %s: reset: %s", ch->cfg.name, strerror(-r));
		ch->failures = CHANNEL_MAX_FAILURES;
	}
	raise_all(ch, FPGAD_EVENT_RESET);
	log_warn("channel %s: DMA failed (%s); resetting the engine",
		 ch->cfg.name, strerror(-status));
}

/* RECOVERING and nothing queued any more: stream again, or give up. */
static void settle_recovery(struct channel *ch)
{
	if (ch->state != CHANNEL_RECOVERING || ch->inflight || ch->copying)
		return;
	if (ch->failures >= CHANNEL_MAX_FAILURES) {
		ch->state = CHANNEL_FAILED;
		log_err("channel %s: %u DMA failures in a row; channel FAILED",
			ch->cfg.name, ch->failures);
		return;
	}
	ch->state = CHANNEL_STREAMING;
	log_notice("channel %s: engine reset, streaming again", ch->cfg.name);
}

static void completed(struct channel *ch, unsigned slot,
		      const struct dev_completion *c)
{
	if (slot >= ch->cfg.slots) {
		log_err("channel %s: completion for unknown slot %u", ch->cfg.name, slot);
		return;
	}
	/* How deep the card's queue was: a shallow one means a starved card. */
	ch->stats.completions++;
	ch->stats.queued_total += ch->inflight;
	ch->inflight--;
	if (ch->cfg.direction == DIR_H2C) {
		/* The card has read the buffer, or never will: it is free. */
		ch->h2c[slot] = H2C_FREE;
		if (c->status == 0) {
			ch->failures = 0;
			ch->stats.frames++;
			ch->stats.bytes += c->length;
			ch->stats.dma_ns_total += c->t_end_ns - c->t_start_ns;
		} else if (c->status == -ECANCELED) {
			ch->stats.drops++;
		} else {
			ch->stats.errors++;
			if (ch->state == CHANNEL_STREAMING)
				recover(ch, c->status);
		}
		return;
	}
	if (c->status == -ECANCELED) {
		ring_cancel(ch->ring, slot);
		return;
	}
	if (c->status < 0) {
		ring_complete(ch->ring, slot, false, 0);
		ch->stats.errors++;
		if (ch->state == CHANNEL_STREAMING)
			recover(ch, c->status);
		return;
	}
	ch->failures = 0;
	ch->stats.bytes += c->length;
	ch->stats.dma_ns_total += c->t_end_ns - c->t_start_ns;
#ifdef FPGAD_CUDA
	if (ch->mode == MODE_BOUNCE) {
		int r;

		/* The frame is in staging: copy it into the GPU slot. */
		r = copy_submit(ch->ce, (char *)ch->mem->dev + slot_offset(ch, slot),
				(char *)ch->staging + slot_offset(ch, slot),
				c->length, COPY_H2D, slot);
		if (r == 0) {
			ch->copying++;
			ch->stats.copies++;
			ch->pending[slot] = *c;
			return;
		}
		log_err("channel %s: bounce copy: %s", ch->cfg.name, strerror(-r));
		ring_complete(ch->ring, slot, false, 0);
		ch->stats.errors++;
		return;
	}
#endif
	ring_complete(ch->ring, slot, true, c->seq);
	ch->stats.frames++;
	publish(ch, slot, c);
}

#ifdef FPGAD_CUDA
/* A bounce copy finished: its frame is in the GPU slot now. */
static void copy_finished(struct channel *ch, const struct copy_done *done)
{
	unsigned slot = (unsigned)done->cookie;

	ch->copying--;
	if (done->status < 0) {
		log_err("channel %s: bounce copy failed: %s", ch->cfg.name,
			strerror(-done->status));
		ring_complete(ch->ring, slot, false, 0);
		ch->stats.errors++;
		return;
	}
	ring_complete(ch->ring, slot, true, ch->pending[slot].seq);
	ch->stats.frames++;
	publish(ch, slot, &ch->pending[slot]);
}

/* Take the bounce copies that have finished; with @block, wait for one. */
static void reap_copies(struct channel *ch, int block)
{
	struct copy_done done;

	while (ch->copying && copy_reap(ch->ce, block, &done) == 1) {
		copy_finished(ch, &done);
		block = 0;
	}
}
#endif

/* Nothing queued and no free slot: sleep until a lessee releases one. */
static void wait_release(struct channel *ch)
{
	struct lease *l = ch->leases;

	while (l && l->closing)
		l = l->next;
	if (!l) {
		/* Every lease is going away: the control path wants the lock. */
		pthread_mutex_unlock(&ch->lock);
		sched_yield();
		pthread_mutex_lock(&ch->lock);
		return;
	}
	ch->waiting_on = l;
	pthread_mutex_unlock(&ch->lock);
	frame_ring_producer_wait(l->prod, 10);
	pthread_mutex_lock(&ch->lock);
	ch->waiting_on = NULL;
	pthread_cond_broadcast(&ch->cond);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Busy-poll (cfg.poll_us): look for completions without sleeping. */
static int poll_completions(struct channel *ch, struct dev_completion *comp)
{
	uint64_t until;
	int n = 0;

	if (!ch->cfg.poll_us)
		return 0;
	until = now_us() + ch->cfg.poll_us;
	while (!atomic_load_explicit(&ch->stop, memory_order_relaxed) &&
	       (n = ch->ops->wait(ch->q, comp, CHANNEL_BATCH, 0)) == 0 &&
	       now_us() < until)
		;
	return n > 0 ? n : 0;
}

static void *stream_main(void *arg)
{
	struct channel *ch = arg;
	struct dev_completion comp[CHANNEL_BATCH];
	int n;

	pthread_mutex_lock(&ch->lock);
	while (!atomic_load(&ch->stop)) {
		reclaim(ch);
		settle_recovery(ch);
		if (ch->cfg.direction == DIR_H2C) {
			h2c_submit(ch);
			h2c_offer(ch);
		} else {
			arm(ch);
		}
#ifdef FPGAD_CUDA
		if (ch->copying) {
			struct copy_done done;
			int got;

			/*
			 * A bounce copy takes microseconds: wait for it first
			 * (without the lock; the engine is this thread's), the
			 * card's completions keep meanwhile.
			 */
			pthread_mutex_unlock(&ch->lock);
			got = copy_reap(ch->ce, 1, &done);
			pthread_mutex_lock(&ch->lock);
			if (got == 1)
				copy_finished(ch, &done);
			reap_copies(ch, 0);
			continue;
		}
#endif
		if (ch->inflight) {
			pthread_mutex_unlock(&ch->lock);
			n = poll_completions(ch, comp);
			if (n == 0)
				n = ch->ops->wait(ch->q, comp, CHANNEL_BATCH, 100);
			pthread_mutex_lock(&ch->lock);
			for (int i = 0; i < n; i++)
				completed(ch, (unsigned)comp[i].cookie, &comp[i]);
		} else if (ch->state == CHANNEL_STREAMING ||
			   ch->state == CHANNEL_RECOVERING) {
			wait_release(ch);
		} else {
			/* FAILED: nothing to do until the channel is reset. */
			pthread_mutex_unlock(&ch->lock);
			n = ch->ops->wait(ch->q, comp, CHANNEL_BATCH, 100);
			pthread_mutex_lock(&ch->lock);
			for (int i = 0; i < n; i++)
				completed(ch, (unsigned)comp[i].cookie, &comp[i]);
		}
	}
	pthread_mutex_unlock(&ch->lock);
	return NULL;
}

static int stream_start(struct channel *ch)
{
	int r;

	atomic_store(&ch->stop, false);
	ch->state = CHANNEL_STREAMING;
	ch->failures = 0;
	r = -pthread_create(&ch->thread, NULL, stream_main, ch);
	if (r < 0) {
		ch->state = CHANNEL_IDLE;
		log_err("channel %s: cannot start its thread: %s", ch->cfg.name,
			strerror(-r));
		return r;
	}
	ch->running = true;
	{
		char name[16];

		/* "ch-NAME": tools and benchmarks tell the threads apart. */
		snprintf(name, sizeof(name), "ch-%.12s", ch->cfg.name);
		pthread_setname_np(ch->thread, name);
	}
	log_info("channel %s: streaming (%s memory, %s)", ch->cfg.name,
		 memory_kind_name(ch->memory), transfer_mode_name(ch->mode));
	return 0;
}

/* Retire the ring's counters into ch->acc and start from all FREE. */
static int ring_renew(struct channel *ch)
{
	struct ring_stats rs;
	struct ring *fresh;
	int r;

	r = ring_create(ch->cfg.slots, ch->cfg.policy, &fresh);
	if (r < 0)
		return r;
	if (ch->ring) {
		ring_get_stats(ch->ring, &rs);
		ch->acc.drops += rs.drops;
		ch->acc.stalls += rs.stalls;
		ring_destroy(ch->ring);
	}
	ring_set_dma_target(fresh, ch->memory == MEMORY_CUDA ? RING_OWNER_GPU :
							       RING_OWNER_HOST);
	ch->ring = fresh;
	ch->drops_seen = 0;
	if (ch->h2c)
		memset(ch->h2c, H2C_FREE, ch->cfg.slots);
	return 0;
}

/* Stop the thread, cancel every transfer, take every slot back. */
static void stream_stop(struct channel *ch)
{
	if (!ch->running)
		return;
	atomic_store(&ch->stop, true);
	ch->ops->kick(ch->q);
	pthread_join(ch->thread, NULL);
	ch->running = false;
	pthread_mutex_lock(&ch->lock);
	if (ch->inflight) {
		ch->ops->reset(ch->q);
		drain(ch, (int)ch->dma_timeout_ms);
	}
#ifdef FPGAD_CUDA
	while (ch->copying)
		reap_copies(ch, 1);
#endif
	if (ch->inflight)
		log_err("channel %s: %u transfers did not come back after a reset",
			ch->cfg.name, ch->inflight);
	if (ring_renew(ch) < 0)
		log_err("channel %s: out of memory renewing the ring", ch->cfg.name);
	if (ch->state != CHANNEL_FAILED)
		ch->state = CHANNEL_IDLE;
	pthread_mutex_unlock(&ch->lock);
	log_info("channel %s: idle", ch->cfg.name);
}

/* --- set-up: memory, transfer mode, pinning ------------------------------ */

/* auto: GPU memory when a GPU answers, else host, saying why. */
static int choose_memory(struct channel *ch)
{
	char why[160];
	int ordinal, r;

	if (ch->cfg.memory == MEMORY_HOST) {
		ch->memory = MEMORY_HOST;
		snprintf(ch->reason, sizeof(ch->reason), "memory = host");
		return 0;
	}
	r = memory_cuda_probe(ch->cfg.gpu, &ordinal, why, sizeof(why));
	if (r == 0) {
		ch->memory = MEMORY_CUDA;
		return 0;
	}
	if (ch->cfg.memory == MEMORY_CUDA) {
		log_err("channel %s: memory = cuda, but %s", ch->cfg.name, why);
		return r;
	}
	ch->memory = MEMORY_HOST;
	snprintf(ch->reason, sizeof(ch->reason), "no GPU: %s", why);
	log_notice("channel %s: host memory (%s)", ch->cfg.name, ch->reason);
	return 0;
}

static int pin_host(struct channel *ch, void *addr)
{
	struct dev_region reg = {
		.kind = DEV_REGION_HOST,
		.addr = addr,
		.fd = -1,
		.length = ch->mem->size,
	};

	return ch->ops->pin(ch->q, &reg, &ch->pin);
}

/*
 * gpudirect: the card writes the GPU slots.  A dma-buf of the ring is what
 * a real card imports; the sim takes the device pointer.
 */
static int pin_gpu(struct channel *ch)
{
	struct dev_region reg = {
		.kind = DEV_REGION_CUDA,
		.addr = ch->mem->dev,
		.fd = -1,
		.length = ch->mem->size,
		.gpu = ch->mem->gpu,
	};
	int fd, r;

	r = ch->mops->export_dmabuf(ch->mem, 0, ch->mem->size, &fd);
	if (r == 0) {
		struct dev_region buf = reg;

		buf.kind = DEV_REGION_DMABUF;
		buf.fd = fd;
		r = ch->ops->pin(ch->q, &buf, &ch->pin);
		close(fd);
		if (r == 0)
			return 0;
	}
	return ch->ops->pin(ch->q, &reg, &ch->pin);
}

static int setup_bounce(struct channel *ch)
{
#ifdef FPGAD_CUDA
	int r;

	r = copy_host_alloc(ch->mem->size, &ch->staging);
	if (r < 0)
		return r;
	ch->pending = calloc(ch->cfg.slots, sizeof(*ch->pending));
	if (!ch->pending)
		return -ENOMEM;
	r = copy_open(ch->mem->gpu, ch->cfg.queue_depth, &ch->ce);
	if (r < 0)
		return r;
	return pin_host(ch, ch->staging);
#else
	(void)ch;
	return -EOPNOTSUPP;
#endif
}

static int choose_mode(struct channel *ch)
{
	int r;

	if (ch->memory == MEMORY_HOST) {
		ch->mode = MODE_HOST;
		return pin_host(ch, ch->mem->host);
	}
	if (ch->cfg.mode != MODE_BOUNCE) {
		r = pin_gpu(ch);
		if (r == 0) {
			ch->mode = MODE_GPUDIRECT;
			snprintf(ch->reason, sizeof(ch->reason),
				 "card DMA straight into GPU memory");
			return 0;
		}
		if (ch->cfg.mode == MODE_GPUDIRECT) {
			log_err("channel %s: mode = gpudirect, but the card cannot pin GPU memory: %s",
				ch->cfg.name, strerror(-r));
			return r;
		}
		snprintf(ch->reason, sizeof(ch->reason),
			 "gpudirect unavailable (%s): bounce through host memory",
			 strerror(-r));
		log_notice("channel %s: %s", ch->cfg.name, ch->reason);
	} else {
		snprintf(ch->reason, sizeof(ch->reason), "mode = bounce");
	}
	if (ch->cfg.direction == DIR_H2C) {
		log_err("channel %s: h2c in GPU memory needs gpudirect; bounce serves c2h only",
			ch->cfg.name);
		return -EOPNOTSUPP;
	}
	ch->mode = MODE_BOUNCE;
	r = setup_bounce(ch);
	if (r < 0)
		log_err("channel %s: bounce set-up: %s", ch->cfg.name, strerror(-r));
	return r;
}

int channel_create(const struct config *cfg, const struct config_channel *cc,
		   const struct device_ops *ops, struct device *dev,
		   struct channel **ret_ch)
{
	struct channel *ch;
	int r;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	if (cc->direction == DIR_H2C) {
		ch->h2c = calloc(cc->slots, 1);
		ch->h2c_fill = calloc(cc->slots, sizeof(*ch->h2c_fill));
		if (!ch->h2c || !ch->h2c_fill) {
			free(ch->h2c);
			free(ch->h2c_fill);
			free(ch);
			return -ENOMEM;
		}
	}
	ch->cfg = *cc;
	if (!ch->cfg.gpu[0])
		snprintf(ch->cfg.gpu, sizeof(ch->cfg.gpu), "%s", cfg->device.gpu);
	ch->dma_timeout_ms = cfg->device.dma_timeout_ms;
	ch->ops = ops;
	ch->dev = dev;
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->cond, NULL);

	r = choose_memory(ch);
	if (r < 0)
		goto fail;
	ch->mops = memory_ops_for(ch->memory);
	r = ch->mops->alloc((size_t)cc->slots * cc->slot_size, ch->cfg.gpu,
			    cc->name, &ch->mem);
	if (r < 0) {
		log_err("channel %s: cannot allocate %u x %llu bytes of %s memory: %s",
			cc->name, cc->slots, (unsigned long long)cc->slot_size,
			memory_kind_name(ch->memory), strerror(-r));
		goto fail;
	}
	r = ops->queue_open(dev, &ch->cfg, &ch->q);
	if (r < 0) {
		log_err("channel %s: cannot open DMA engine %u: %s", cc->name,
			cc->engine, strerror(-r));
		goto fail;
	}
	r = choose_mode(ch);
	if (r < 0)
		goto fail;
	r = ring_renew(ch);
	if (r < 0)
		goto fail;
	log_info("channel %s: %u slots of %llu bytes in %s memory, %s (%s)",
		 cc->name, cc->slots, (unsigned long long)cc->slot_size,
		 memory_kind_name(ch->memory), transfer_mode_name(ch->mode),
		 ch->reason);
	*ret_ch = ch;
	return 0;
fail:
	channel_destroy(ch);
	return r;
}

void channel_destroy(struct channel *ch)
{
	struct lease *l;

	if (!ch)
		return;
	stream_stop(ch);
	while ((l = ch->leases)) {
		ch->leases = l->next;
		lease_destroy(l, FPGAD_EVENT_DAEMON_GONE | FPGAD_EVENT_CLOSED);
	}
	if (ch->q) {
		if (ch->pin)
			ch->ops->unpin(ch->q, ch->pin);
		ch->ops->queue_close(ch->q);
	}
#ifdef FPGAD_CUDA
	copy_close(ch->ce);
	copy_host_free(ch->staging);
	free(ch->pending);
#endif
	if (ch->mem)
		ch->mops->free(ch->mem);
	ring_destroy(ch->ring);
	free(ch->h2c);
	free(ch->h2c_fill);
	pthread_cond_destroy(&ch->cond);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

/* --- leases (control path) ------------------------------------------------ */

static struct lease *lease_of(const struct channel *ch, const struct session *s)
{
	for (struct lease *l = ch->leases; l; l = l->next)
		if (l->session == s)
			return l;
	return NULL;
}

bool channel_leased_by(const struct channel *ch, const struct session *s)
{
	return lease_of(ch, s) != NULL;
}

static uint64_t ring_bytes(const struct channel *ch)
{
	return (uint64_t)ch->cfg.slots * ch->cfg.slot_size;
}

int channel_open(struct channel *ch, struct session *s, bool shared,
		 const struct config_control *limits,
		 struct channel_grant *ret_grant, char *err, size_t errlen)
{
	struct frame_ring_geometry geo = {
		.slots = ch->cfg.slots,
		.slot_size = ch->cfg.slot_size,
		.frame_size = ch->cfg.frame_size,
		.direction = ch->cfg.direction == DIR_H2C ? FPGAD_FRAMES_H2C :
							      FPGAD_FRAMES_C2H,
	};
	struct lease *l;
	int r;

	if (lease_of(ch, s)) {
		snprintf(err, errlen, "channel %s is already open on this connection",
			 ch->cfg.name);
		return -EALREADY;
	}
	if (shared && ch->cfg.direction == DIR_H2C) {
		snprintf(err, errlen, "channel %s is h2c: one writer, no shared lease",
			 ch->cfg.name);
		return -EINVAL;
	}
	if (ch->state == CHANNEL_FAILED) {
		snprintf(err, errlen, "channel %s has FAILED after repeated DMA errors",
			 ch->cfg.name);
		return -EIO;
	}
	if (ch->leases && (!shared || !ch->leases->shared)) {
		snprintf(err, errlen, "channel %s is busy: leased %s by pid %d (uid %u)",
			 ch->cfg.name, ch->leases->shared ? "shared" : "exclusively",
			 (int)ch->leases->pid, (unsigned)ch->leases->uid);
		return -EBUSY;
	}
	if (ch->leases && ch->leases->uid != s->peer.uid) {
		snprintf(err, errlen, "channel %s is busy: shared readers must share a uid (%u)",
			 ch->cfg.name, (unsigned)ch->leases->uid);
		return -EBUSY;
	}
	if (s->n_leases >= limits->max_leases) {
		snprintf(err, errlen, "lease limit reached (max_leases %u)",
			 limits->max_leases);
		return -ENOSPC;
	}
	if (s->pinned + ring_bytes(ch) > limits->max_pinned) {
		snprintf(err, errlen, "pinned-memory limit reached: %llu + %llu bytes > max_pinned %llu",
			 (unsigned long long)s->pinned,
			 (unsigned long long)ring_bytes(ch),
			 (unsigned long long)limits->max_pinned);
		return -ENOSPC;
	}
	r = lease_create(ch->cfg.name, &geo, s, shared, &l);
	if (r < 0) {
		snprintf(err, errlen, "cannot create the descriptor ring: %s", strerror(-r));
		return r;
	}
	if (!ch->leases && s->peer.creds) {
		r = ch->mops->grant(ch->mem, s->peer.uid);
		if (r < 0) {
			snprintf(err, errlen, "cannot give the ring to uid %u: %s",
				 (unsigned)s->peer.uid, strerror(-r));
			lease_destroy(l, 0);
			return r;
		}
	}

	pthread_mutex_lock(&ch->lock);
	l->next = ch->leases;
	ch->leases = l;
	ch->n_leases++;
	pthread_mutex_unlock(&ch->lock);
	s->n_leases++;
	s->pinned += ring_bytes(ch);

	if (!ch->running) {
		r = stream_start(ch);
		if (r < 0) {
			channel_close(ch, s);
			snprintf(err, errlen, "cannot start streaming: %s", strerror(-r));
			return r;
		}
	}

	memset(ret_grant, 0, sizeof(*ret_grant));
	ret_grant->memory = ch->memory;
	ret_grant->mode = ch->mode;
	ret_grant->ring_size = ch->mem->size;
	ret_grant->gpu = ch->memory == MEMORY_CUDA ? ch->mem->gpu : -1;
	snprintf(ret_grant->shm_name, sizeof(ret_grant->shm_name), "%s",
		 ch->memory == MEMORY_HOST ? ch->mem->shm_name : "");
	memcpy(ret_grant->ipc_handle, ch->mem->ipc_handle,
	       sizeof(ret_grant->ipc_handle));
	snprintf(ret_grant->desc_name, sizeof(ret_grant->desc_name), "%s",
		 l->desc->shm_name);
	ret_grant->generation = l->generation;
	log_info("channel %s: leased %s by pid %d (uid %u)", ch->cfg.name,
		 shared ? "shared" : "exclusively", (int)s->peer.pid,
		 (unsigned)s->peer.uid);
	return 0;
}

int channel_close(struct channel *ch, struct session *s)
{
	struct frame_ring_returned out[CHANNEL_BATCH];
	struct lease *l, **pp;
	int n;

	pthread_mutex_lock(&ch->lock);
	for (pp = &ch->leases; (l = *pp) && l->session != s; pp = &l->next)
		;
	if (!l) {
		pthread_mutex_unlock(&ch->lock);
		return -ENOENT;
	}
	/* The stream may be asleep on this lease's releases. */
	l->closing = true;
	while (ch->waiting_on == l)
		pthread_cond_wait(&ch->cond, &ch->lock);
	*pp = l->next;
	ch->n_leases--;
	/* Whatever the client had is the ring's again. */
	while ((n = frame_ring_reclaim_all(l->prod, out, CHANNEL_BATCH)) > 0)
		for (int i = 0; i < n; i++) {
			/* Unfinished h2c buffers of a departed writer are dropped. */
			out[i].fill = 0;
			returned(ch, l, &out[i]);
		}
	pthread_mutex_unlock(&ch->lock);

	s->n_leases--;
	s->pinned -= ring_bytes(ch);
	log_info("channel %s: lease of pid %d ended", ch->cfg.name, (int)l->pid);
	lease_destroy(l, FPGAD_EVENT_CLOSED);
	if (!ch->leases) {
		stream_stop(ch);
		ch->mops->grant(ch->mem, getuid());
	}
	return 0;
}

int channel_reset(struct channel *ch, char *err, size_t errlen)
{
	pthread_mutex_lock(&ch->lock);
	if (ch->state != CHANNEL_FAILED) {
		snprintf(err, errlen, "channel %s is %s, not failed: nothing to reset",
			 ch->cfg.name, channel_state_name(ch->state));
		pthread_mutex_unlock(&ch->lock);
		return -EALREADY;
	}
	/* The engine was stopped and reset when it failed; arm it again. */
	ch->failures = 0;
	ch->state = ch->running ? CHANNEL_STREAMING : CHANNEL_IDLE;
	pthread_mutex_unlock(&ch->lock);
	if (ch->running)
		ch->ops->kick(ch->q);
	log_notice("channel %s: reset, %s", ch->cfg.name,
		   ch->running ? "streaming again" : "idle");
	return 0;
}

enum channel_state channel_state(struct channel *ch)
{
	enum channel_state st;

	pthread_mutex_lock(&ch->lock);
	st = ch->state;
	pthread_mutex_unlock(&ch->lock);
	return st;
}

void channel_release_session(struct channel *ch, struct session *s)
{
	channel_close(ch, s);
}

const struct config_channel *channel_config(const struct channel *ch)
{
	return &ch->cfg;
}

void channel_get_stats(struct channel *ch, struct channel_stats *ret_stats)
{
	struct ring_stats rs;

	pthread_mutex_lock(&ch->lock);
	*ret_stats = ch->stats;
	ring_get_stats(ch->ring, &rs);
	ret_stats->drops = ch->acc.drops + rs.drops;
	ret_stats->stalls = ch->acc.stalls + rs.stalls;
	ret_stats->state = ch->state;
	ret_stats->memory = ch->memory;
	ret_stats->mode = ch->mode;
	ret_stats->lessees = ch->n_leases;
	pthread_mutex_unlock(&ch->lock);
	if (ch->ops == &device_sim_ops && ch->cfg.direction == DIR_H2C) {
		struct sim_queue_stats ss;

		if (sim_queue_stats(ch->q, &ss) == 0) {
			ret_stats->card_good = ss.sink_good;
			ret_stats->card_bad = ss.sink_bad;
		}
	}
}

bool channel_is_streaming(struct channel *ch)
{
	return ch->running;
}

const char *channel_mode_reason(const struct channel *ch)
{
	return ch->reason;
}
