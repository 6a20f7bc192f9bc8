// SPDX-License-Identifier: MIT
/*
 * pace.c - when a channel's streaming thread looks for the card's
 * completions (channel_impl.h).
 *
 * Blocking until the card posts a completion puts two wake-ups in series
 * between the end of a DMA and the consumer: the card (or the sim's engine)
 * wakes this thread, which publishes and wakes the consumer.  Instead the
 * thread learns how far apart completions come (an average of the card's
 * DMA end times), sleeps on a timer until just before the next one is due,
 * and spins briefly around that moment (hybrid polling, as the block
 * layer's): the card then wakes nobody, and the consumer's wake-up is the
 * only one left.  When completions come faster than PACE_BATCH_NS, waking
 * for each would cost more CPU than it saves time, so the thread wakes once
 * for several (never more than half the card's queue, which keeps the card
 * fed) and does not spin.  Spinning is kept under PACE_SPIN_SHARE of a core:
 * where the spin a card's jitter needs would cost more, the thread wakes
 * once, just after the due time, and lets the card wake it when that was
 * too early; so many channels at moderate rates cost little more per
 * frame than one.  Busy-polling (poll_us) stays opt-in.
 */
#include <errno.h>
#include <stdatomic.h>

#include "channel/channel_impl.h"
#include "clock.h"
#include "futex.h"

#define PACE_SPIN_NS 5000ull	/* spin at least this long either side of a due
				   time, plus twice the completions' jitter */
#define PACE_SPIN_MAX_NS 25000ull /* never spin longer than this */
#define PACE_BATCH_NS 50000ull	/* wake no more often than this, at high rates */
#define PACE_SPIN_SHARE 40	/* spin (both sides) at most 2/40 = 5% of the
				   time between completions */
#define PACE_HISTORY_NS 1000000000ull /* older completions say nothing */

void pace_note(struct channel *ch, const struct dev_completion *c, int n)
{
	struct pace *p = &ch->pace;

	for (int i = 0; i < n; i++) {
		uint64_t t = c[i].t_end_ns, dt;

		if (c[i].status || t <= p->last_end_ns)
			continue;
		dt = t - p->last_end_ns;
		if (p->last_end_ns && dt < PACE_HISTORY_NS) {
			uint64_t dev = dt > p->interval_ns ? dt - p->interval_ns :
							     p->interval_ns - dt;

			p->jitter_ns = p->interval_ns ?
				(7 * p->jitter_ns + dev) / 8 : 0;
			p->interval_ns = p->interval_ns ?
				(7 * p->interval_ns + dt) / 8 : dt;
		}
		p->last_end_ns = t;
	}
}

void pace_forget(struct channel *ch)
{
	ch->pace.interval_ns = 0;
	ch->pace.jitter_ns = 0;
	ch->pace.last_end_ns = 0;
}

void pace_poke(struct channel *ch)
{
	atomic_fetch_add(&ch->pace.nap, 1);
	futex_wake((uint32_t *)&ch->pace.nap, false);
}

uint64_t pace_async_due(struct channel *ch, uint64_t now)
{
	struct pace *p = &ch->pace;
	uint64_t step;

	if (!p->async_since_ns || p->async_since_ns > now)
		p->async_since_ns = now;
	step = (now - p->async_since_ns) / 16;
	if (step < PACE_ASYNC_POLL_NS)
		step = PACE_ASYNC_POLL_NS;
	if (step > PACE_ASYNC_POLL_MAX_NS)
		step = PACE_ASYNC_POLL_MAX_NS;
	return now + step;
}

uint64_t pace_async_spin_until(const struct channel *ch, uint64_t now)
{
	uint64_t end = ch->pace.async_since_ns + PACE_ASYNC_SPIN_NS;

	return ch->pace.async_since_ns && now < end ? end : 0;
}

void pace_async_progress(struct channel *ch)
{
	ch->pace.async_since_ns = 0;
}

void pace_nap(struct channel *ch, uint64_t t)
{
	uint32_t v = atomic_load(&ch->pace.nap);

	if (!atomic_load(&ch->stop))
		futex_wait((uint32_t *)&ch->pace.nap, v, t, false);
}

/*
 * Sleep until @t unless poked, waking early by as much as timers have been
 * late: on virtual machines a timer fires tens of microseconds late.
 */
static void nap(struct channel *ch, uint64_t t)
{
	struct pace *p = &ch->pace;
	uint32_t v = atomic_load(&p->nap);
	uint64_t at = t - (p->late_ns < t ? p->late_ns : 0), woke;

	if (atomic_load(&ch->stop) ||
	    futex_wait((uint32_t *)&p->nap, v, at, false) != -ETIMEDOUT)
		return;
	woke = clock_now_ns();
	p->late_ns = (7 * p->late_ns + (woke > at ? woke - at : 0)) / 8;
}

/* Busy-poll (cfg.poll_us): look for completions without sleeping. */
static int poll_until(struct channel *ch, struct dev_completion *out,
		      unsigned max, uint64_t until)
{
	int n;

	while ((n = ch->ops->wait(ch->q, out, max, 0)) == 0 &&
	       !atomic_load_explicit(&ch->stop, memory_order_relaxed) &&
	       clock_now_ns() < until)
		;
	return n > 0 ? n : 0;
}

int pace_wait(struct channel *ch, struct dev_completion *out, unsigned max,
	      int block_ms)
{
	const struct pace *p = &ch->pace;
	uint64_t now = clock_now_ns(), due, spin = 0;
	unsigned batch = 1, most = ch->cfg.queue_depth / 2;
	int n = 0;

	if (ch->cfg.poll_us) {
		n = poll_until(ch, out, max,
			       now + (uint64_t)ch->cfg.poll_us * 1000u);
		goto block;
	}
	if (ch->cfg.pacing == PACING_WAIT)
		goto block;
	/* Only a steady card can be predicted; else wait to be woken. */
	if (!p->interval_ns || !p->last_end_ns ||
	    p->jitter_ns > p->interval_ns / 4)
		goto block;
	if (p->interval_ns < PACE_BATCH_NS)
		batch = (unsigned)(PACE_BATCH_NS / p->interval_ns);
	if (batch > most)
		batch = most ? most : 1;
	due = p->last_end_ns + batch * p->interval_ns;
	/*
	 * Spin around the due time by as much as completions wander; where
	 * that is too long to be worth it, wait to be woken.
	 */
	if (batch == 1) {
		spin = PACE_SPIN_NS + 2 * p->jitter_ns;
		if (spin > PACE_SPIN_MAX_NS || spin > p->interval_ns / 4)
			goto block;
		if (spin > p->interval_ns / PACE_SPIN_SHARE) {
			/* Too dear at this rate: one look, as late as it is likely. */
			due += p->jitter_ns;
			spin = 0;
		}
	}
	if (due > now + spin &&
	    due - spin - now < (uint64_t)block_ms * CLOCK_NS_PER_MS)
		nap(ch, due - spin);
	n = ch->ops->wait(ch->q, out, max, 0);
	if (n == 0 && spin)
		n = poll_until(ch, out, max, (due > now ? due : now) + spin);
block:
	if (n <= 0)
		n = ch->ops->wait(ch->q, out, max, block_ms);
	return n;
}
