// SPDX-License-Identifier: MIT
/*
 * stream.c - a channel's streaming thread, the hot path: arm DMA into free
 * slots, take the card's completions, publish frames into every lessee's
 * descriptor ring, take back what the lessees released, and recover from
 * DMA errors (c2h); offer empty buffers and hand filled ones to the card
 * (h2c).  See channel_impl.h for the locking.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "channel/channel_impl.h"
#include "clock.h"
#include "crc32c.h"
#include "futex.h"
#include "log.h"

/* The longest the thread waits for the card before it looks around. */
#define STREAM_WAIT_MS 100
/*
 * The longest a starved stream sleeps on a lessee's releases: they wake it,
 * so this only bounds what a lost wake-up could cost; 1 ms while the lessee
 * uses stream-ordered releases (a consumer of ABI minor 3 counts them but
 * need not wake the stream).
 */
#define STREAM_RELEASE_WAIT_MS 10
#define STREAM_ASYNC_WAIT_MS 1

/* --- slot bookkeeping (ch->lock held) ----------------------------------- */

/* h2c: a buffer came back, filled for the card or unused. */
static void h2c_returned(struct channel *ch, const struct frame_returned *r)
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
void stream_returned(struct channel *ch, struct lease *l,
		     const struct frame_returned *r)
{
	if (ch->cfg.direction == DIR_H2C)
		h2c_returned(ch, r);
	else
		slots_let_go(ch->slots, l->held, r->slot);
}

static void reclaim(struct channel *ch)
{
	struct frame_returned out[CHANNEL_BATCH];
	int n;

	for (struct lease *l = ch->leases; l; l = l->next) {
		while ((n = frame_producer_reclaim(l->prod, out, CHANNEL_BATCH)) > 0) {
			pace_async_progress(ch);
			atomic_fetch_add_explicit(&l->returned, (uint64_t)n,
						  memory_order_relaxed);
			for (int i = 0; i < n; i++)
				stream_returned(ch, l, &out[i]);
			if (n < CHANNEL_BATCH)
				break;
		}
	}
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
		slot = policy_take_slot(ch);
		if (slot < 0)
			break;
		x.offset = slot_offset(ch, (unsigned)slot);
		x.cookie = (uint64_t)slot;
		r = ch->ops->submit(ch->q, &x);
		if (r == 0 && !ch->inflight)
			ch->progress_ns = clock_now_ns();
		if (r < 0) {
			slots_cancel(ch->slots, (unsigned)slot);
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
		if (r == 0 && !ch->inflight)
			ch->progress_ns = clock_now_ns();
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
		if (frame_producer_publish(l->prod, &f, NULL) < 0)
			return;
		ch->offer_seq++;
		ch->h2c[s] = H2C_OFFERED;
	}
}

/*
 * integrity = crc32c: the frame in @slot of the host memory at @base is
 * checked against the CRC the card gave it; DEV_COMPLETION_CORRUPT if it
 * does not match.
 */
static uint32_t integrity(struct channel *ch, const void *base, unsigned slot,
			  uint64_t length)
{
	if (ch->cfg.integrity != INTEGRITY_CRC32C ||
	    crc32c_frame_check((const char *)base + slot_offset(ch, slot),
			       length) >= 0)
		return 0;
	ch->stats.integrity_errors++;
	return DEV_COMPLETION_CORRUPT;
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
		.t_sender_start_ns = c->t_sender_start_ns,
		.t_sender_end_ns = c->t_sender_end_ns,
		/* One time for every lessee, and the end of the latency. */
		.t_publish_ns = clock_now_ns(),
	};
	struct slots_stats rs;

	if (c->t_end_ns && f.t_publish_ns >= c->t_end_ns)
		histo_add(&ch->stats.latency, f.t_publish_ns - c->t_end_ns);
	slots_get_stats(ch->slots, &rs);
	if (c->flags & DEV_COMPLETION_TRUNCATED)
		f.flags |= FPGAD_FRAME_TRUNCATED;
	if (c->flags & DEV_COMPLETION_CORRUPT)
		f.flags |= FPGAD_FRAME_ERROR;
	if ((ch->seq_known && c->seq != ch->next_seq) ||
	    rs.drops != ch->drops_seen)
		f.flags |= FPGAD_FRAME_DROPPED_BEFORE;
	ch->next_seq = c->seq + 1;
	ch->seq_known = true;
	ch->drops_seen = rs.drops;
	for (struct lease *l = ch->leases; l; l = l->next) {
		int r = frame_producer_publish(l->prod, &f, NULL);

		if (r == 0) {
			slots_publish(ch->slots, slot);
			atomic_fetch_add_explicit(&l->frames, 1, memory_order_relaxed);
		}
		else
			log_warn("channel %s: cannot publish slot %u to pid %d: %s",
				 ch->cfg.name, slot, (int)l->pid, strerror(-r));
	}
}

/* Tell every lessee, e.g. FPGAD_EVENT_RESET. */
static void raise_all(struct channel *ch, uint32_t events)
{
	for (struct lease *l = ch->leases; l; l = l->next)
		frame_producer_raise(l->prod, events);
}

static void completed(struct channel *ch, unsigned slot,
		      const struct dev_completion *c);

/*
 * @n completions the card gave at once: published as one burst, each
 * lessee woken once for all of them (not once per frame while it has not
 * run yet).
 */
static void completed_all(struct channel *ch, const struct dev_completion *comp,
			  int n)
{
	struct lease *l;
	int r;

	/* The card's writes made visible to the GPU before any is published. */
	if (n > 0 && ch->mode == MODE_GPUDIRECT && ch->cfg.direction == DIR_C2H &&
	    ch->mem->rdma_order == RDMA_ORDER_NONE) {
		r = memory_flush_rdma_writes(ch->mem);
		if (r < 0 && !ch->flush_failed)
			log_err("channel %s: cannot flush the card's writes to GPU %d: %s; consumers may read stale bytes",
				ch->cfg.name, ch->mem->gpu, strerror(-r));
		ch->flush_failed = r < 0;
	}

	for (l = ch->leases; l && n > 1; l = l->next)
		frame_producer_hold(l->prod);
	for (int i = 0; i < n; i++)
		completed(ch, (unsigned)comp[i].cookie, &comp[i]);
	for (l = ch->leases; l && n > 1; l = l->next)
		frame_producer_wake(l->prod);
}

/* Take every completion the queue has now, without waiting. */
static void drain(struct channel *ch, int timeout_ms)
{
	struct dev_completion comp[CHANNEL_BATCH];
	int n;

	while (ch->inflight &&
	       (n = ch->ops->wait(ch->q, comp, CHANNEL_BATCH, timeout_ms)) > 0)
		completed_all(ch, comp, n);
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
	pace_forget(ch);
	ch->state = CHANNEL_RECOVERING;
	snprintf(ch->stats.last_error, sizeof(ch->stats.last_error), "DMA failed (%s)",
		 strerror(-status));
	r = ch->ops->reset(ch->q);
	if (r < 0) {
		log_err("channel %s: reset: %s", ch->cfg.name, strerror(-r));
		snprintf(ch->stats.last_error, sizeof(ch->stats.last_error),
			 "DMA failed (%s), and the engine's reset (%s)", strerror(-status),
			 strerror(-r));
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
		char last[sizeof(ch->stats.last_error)];

		ch->state = CHANNEL_FAILED;
		snprintf(last, sizeof(last), "%s", ch->stats.last_error);
		snprintf(ch->stats.last_error, sizeof(ch->stats.last_error),
			 "%u DMA failures in a row, the last: %.80s", ch->failures, last);
		raise_all(ch, FPGAD_EVENT_FAILED);
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
	struct dev_completion done;

	if (slot >= ch->cfg.slots) {
		log_err("channel %s: completion for unknown slot %u", ch->cfg.name, slot);
		return;
	}
	ch->progress_ns = clock_now_ns();
	/* How deep the card's queue was: a shallow one means a starved card. */
	ch->stats.completions++;
	ch->stats.queued_total += ch->inflight;
	ch->inflight--;
	if (ch->cfg.direction == DIR_H2C)
		ch->h2c[slot] = H2C_FREE;	/* the card read it, or never will */
	if (c->status == -ECANCELED) {
		if (ch->cfg.direction == DIR_H2C)
			ch->stats.drops++;	/* a writer's frame the card lost */
		else
			slots_cancel(ch->slots, slot);
		return;
	}
	if (c->status < 0) {
		if (ch->cfg.direction == DIR_C2H)
			slots_complete(ch->slots, slot, false, 0);
		ch->stats.errors++;
		if (ch->state == CHANNEL_STREAMING)
			recover(ch, c->status);
		return;
	}
	ch->failures = 0;
	ch->stats.bytes += c->length;
	histo_add(&ch->stats.dma, c->t_end_ns - c->t_start_ns);
	if (ch->cfg.direction == DIR_H2C) {
		ch->stats.frames++;
		return;
	}
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
			/* The copy reads staging; checking it meanwhile is free. */
			ch->pending[slot].flags |= integrity(ch, ch->staging, slot,
							     c->length);
			return;
		}
		log_err("channel %s: bounce copy: %s", ch->cfg.name, strerror(-r));
		slots_complete(ch->slots, slot, false, 0);
		ch->stats.errors++;
		return;
	}
	slots_complete(ch->slots, slot, true, c->seq);
	ch->stats.frames++;
	done = *c;
	if (ch->mode == MODE_HOST)
		done.flags |= integrity(ch, ch->mem->host, slot, c->length);
	publish(ch, slot, &done);
}

/* A bounce copy finished: its frame is in the GPU slot now. */
static void copy_finished(struct channel *ch, const struct copy_done *done)
{
	unsigned slot = (unsigned)done->cookie;

	ch->copying--;
	if (done->status < 0) {
		log_err("channel %s: bounce copy failed: %s", ch->cfg.name,
			strerror(-done->status));
		slots_complete(ch->slots, slot, false, 0);
		ch->stats.errors++;
		return;
	}
	slots_complete(ch->slots, slot, true, ch->pending[slot].seq);
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

/*
 * @l has stream-ordered releases on their way, which wake nobody: spin a
 * little for one to land, else nap until pace.c says to look again.  Like
 * a sleep on @l's releases, without the lock, @l marked as waited on.
 */
static void await_async(struct channel *ch, struct lease *l)
{
	uint64_t now = clock_now_ns(), due, spin;

	due = pace_async_due(ch, now);
	spin = pace_async_spin_until(ch, now);
	ch->waiting_on = l;
	pthread_mutex_unlock(&ch->lock);
	while (now < spin && !frame_producer_returned(l->prod) &&
	       !atomic_load_explicit(&ch->stop, memory_order_relaxed)) {
		futex_spin();
		now = clock_now_ns();
	}
	if (now >= spin)
		pace_nap(ch, due);
	pthread_mutex_lock(&ch->lock);
	ch->waiting_on = NULL;
	pthread_cond_broadcast(&ch->cond);
}

/* Nothing queued and no free slot: sleep until a lessee releases one. */
static void wait_release(struct channel *ch)
{
	struct lease *l = ch->leases;
	int wait_ms;

	/* Stream-ordered releases wake nobody: look again shortly. */
	for (struct lease *a = ch->leases; a; a = a->next) {
		if (!a->closing && frame_producer_async_pending(a->prod)) {
			await_async(ch, a);
			return;
		}
	}

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
	wait_ms = frame_producer_async_recent(l->prod, clock_now_ns()) ?
		  STREAM_ASYNC_WAIT_MS : STREAM_RELEASE_WAIT_MS;
	pthread_mutex_unlock(&ch->lock);
	frame_producer_wait(l->prod, wait_ms);
	pthread_mutex_lock(&ch->lock);
	ch->waiting_on = NULL;
	pthread_cond_broadcast(&ch->cond);
}

/*
 * The card owes transfers and has given nothing back for 1.5 DMA timeouts:
 * it would have completed or timed one out by now, so its engine hangs.
 * Reset it; if a reset does not bring them back either, the channel FAILS.
 * Returns how long to wait for completions before looking again (ms).
 */
static int hang_check(struct channel *ch)
{
	uint64_t limit = (uint64_t)ch->dma_timeout_ms * 3 / 2 * CLOCK_NS_PER_MS;
	uint64_t now = clock_now_ns(), idle = now - ch->progress_ns;

	if (!ch->inflight || ch->src.sender_paced ||
	    (ch->state != CHANNEL_STREAMING && ch->state != CHANNEL_RECOVERING))
		return STREAM_WAIT_MS;
	if (idle < limit) {
		uint64_t left = (limit - idle) / CLOCK_NS_PER_MS + 1;

		return left < STREAM_WAIT_MS ? (int)left : STREAM_WAIT_MS;
	}
	ch->progress_ns = now;
	ch->stats.errors++;
	if (ch->state == CHANNEL_STREAMING) {
		log_warn("channel %s: %u transfers queued and none back for %llu ms",
			 ch->cfg.name, ch->inflight,
			 (unsigned long long)(idle / CLOCK_NS_PER_MS));
		recover(ch, -ETIMEDOUT);
		snprintf(ch->stats.last_error, sizeof(ch->stats.last_error),
			 "%u transfers queued and none back for %llu ms", ch->inflight,
			 (unsigned long long)(idle / CLOCK_NS_PER_MS));
		return STREAM_WAIT_MS;
	}
	ch->failures = CHANNEL_MAX_FAILURES;
	ch->state = CHANNEL_FAILED;
	snprintf(ch->stats.last_error, sizeof(ch->stats.last_error),
		 "%u transfers did not come back after a reset", ch->inflight);
	raise_all(ch, FPGAD_EVENT_FAILED);
	log_err("channel %s: %u transfers did not come back after a reset; channel FAILED",
		ch->cfg.name, ch->inflight);
	return STREAM_WAIT_MS;
}

static void *stream_main(void *arg)
{
	struct channel *ch = arg;
	struct dev_completion comp[CHANNEL_BATCH];
	unsigned inflight;
	int n, wait_ms;

	/* pace.c's naps are short: wake up when asked, not 50 us later. */
	prctl(PR_SET_TIMERSLACK, PACE_TIMERSLACK_NS, 0UL, 0UL, 0UL);
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
		if (!ch->inflight && (ch->state == CHANNEL_STREAMING ||
				      ch->state == CHANNEL_RECOVERING)) {
			wait_release(ch);
			continue;
		}
		/* The card's completions; FAILED: nothing but a kick to wait for. */
		inflight = ch->inflight;
		wait_ms = hang_check(ch);
		pthread_mutex_unlock(&ch->lock);
		n = inflight ? pace_wait(ch, comp, CHANNEL_BATCH, wait_ms) :
			       ch->ops->wait(ch->q, comp, CHANNEL_BATCH, wait_ms);
		pthread_mutex_lock(&ch->lock);
		pace_note(ch, comp, n);
		completed_all(ch, comp, n);
	}
	pthread_mutex_unlock(&ch->lock);
	return NULL;
}

int stream_start(struct channel *ch)
{
	int r;

	atomic_store(&ch->stop, false);
	pace_forget(ch);
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

static bool h2c_queued(const struct channel *ch)
{
	for (unsigned s = 0; s < ch->cfg.slots; s++)
		if (ch->h2c[s] == H2C_QUEUED)
			return true;
	return false;
}

void stream_flush(struct channel *ch)
{
	uint64_t end = clock_now_ns() + (uint64_t)ch->dma_timeout_ms * CLOCK_NS_PER_MS;

	pthread_mutex_lock(&ch->lock);
	while (ch->running && ch->state == CHANNEL_STREAMING &&
	       (ch->inflight || h2c_queued(ch)) && clock_now_ns() < end) {
		pthread_mutex_unlock(&ch->lock);
		ch->ops->kick(ch->q);
		usleep(500);
		pthread_mutex_lock(&ch->lock);
	}
	pthread_mutex_unlock(&ch->lock);
}

void stream_stop(struct channel *ch)
{
	if (!ch->running)
		return;
	atomic_store(&ch->stop, true);
	ch->ops->kick(ch->q);
	pace_poke(ch);
	pthread_join(ch->thread, NULL);
	ch->running = false;
	pthread_mutex_lock(&ch->lock);
	if (ch->inflight) {
		ch->ops->reset(ch->q);
		drain(ch, (int)ch->dma_timeout_ms);
	}
	while (ch->copying)
		reap_copies(ch, 1);
	if (ch->inflight)
		log_err("channel %s: %u transfers did not come back after a reset",
			ch->cfg.name, ch->inflight);
	if (channel_renew_slots(ch) < 0)
		log_err("channel %s: out of memory renewing its slots", ch->cfg.name);
	if (ch->state != CHANNEL_FAILED)
		ch->state = CHANNEL_IDLE;
	pthread_mutex_unlock(&ch->lock);
	log_info("channel %s: idle", ch->cfg.name);
}
