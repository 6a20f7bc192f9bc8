// SPDX-License-Identifier: MIT
/*
 * probe.c - a bounded burst of card DMA, timed (probe_run), and auto's
 * choice between gpudirect and bounce (probe_choose); probe.h says how.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "topology/probe.h"

#define PROBE_BATCH 16			/* completions taken at once */
#define PROBE_DEFAULT_TIMEOUT_MS 5000	/* when the device's own is unknown */
#define PROBE_GRACE_MS 250		/* beyond the DMA timeout, then reset */
#define PROBE_DRAIN_MS 2000		/* for the completions of a reset */

enum probe_place { PLACE_FREE, PLACE_DMA, PLACE_STAGE };

struct probe_state {
	const struct device_ops *ops;
	struct device_queue *q;
	uint64_t handle;
	const struct probe_params *p;
	const struct probe_stage *stage;
	uint8_t *place;			/* enum probe_place, per place */
	unsigned dma;			/* transfers on the card */
	unsigned staged;		/* stages started, not finished */
	unsigned next;			/* where to look for a free place */
	uint64_t submitted;		/* bytes */
	uint64_t t0;
	uint64_t progress;		/* last time anything came back */
	int err;			/* the first failure */
	struct probe_result res;
};

static void probe_fail(struct probe_state *s, int err)
{
	if (!s->err)
		s->err = err;
}

static void probe_delivered(struct probe_state *s, uint64_t bytes)
{
	s->res.bytes += bytes;
	s->res.ns = clock_now_ns() - s->t0;
}

/* Submit while the card has room, bytes and time are left and a place is free. */
static void probe_submit(struct probe_state *s)
{
	const struct probe_params *p = s->p;
	uint64_t stop_at = s->t0 + (uint64_t)p->max_ms * CLOCK_NS_PER_MS;

	while (!s->err && s->dma < p->depth && clock_now_ns() < stop_at &&
	       (!s->submitted || s->submitted + p->length <= p->max_bytes)) {
		struct dev_xfer x;
		unsigned i, k;
		int r;

		for (k = 0; k < p->slots; k++)
			if (s->place[(s->next + k) % p->slots] == PLACE_FREE)
				break;
		if (k == p->slots)
			return;
		i = (s->next + k) % p->slots;
		memset(&x, 0, sizeof(x));
		x.handle = s->handle;
		x.offset = (uint64_t)i * p->stride;
		x.length = p->length;
		x.cookie = i;
		x.timeout_ms = p->timeout_ms;
		r = s->ops->submit(s->q, &x);
		if (r == -EAGAIN)
			return;
		if (r) {
			probe_fail(s, r);
			return;
		}
		s->place[i] = PLACE_DMA;
		s->dma++;
		s->submitted += p->length;
		s->res.transfers++;
		s->next = i + 1;
	}
}

/* Take finished stages; wait for one when @block. */
static void probe_finish_stages(struct probe_state *s, bool block)
{
	while (s->staged) {
		unsigned slot = 0;
		int r = s->stage->finish(s->stage->user, block, &slot);

		if (r == 0)
			return;
		block = false;
		s->staged--;
		s->progress = clock_now_ns();
		if (slot < s->p->slots && s->place[slot] == PLACE_STAGE)
			s->place[slot] = PLACE_FREE;
		else
			probe_fail(s, -EIO);
		if (r < 0)
			probe_fail(s, r);
		else if (!s->err)
			probe_delivered(s, s->p->length);
	}
}

static void probe_completed(struct probe_state *s, const struct dev_completion *c)
{
	uint64_t slot = c->cookie;
	int r;

	s->progress = clock_now_ns();
	if (slot >= s->p->slots || s->place[slot] != PLACE_DMA) {
		probe_fail(s, -EIO);
		return;
	}
	s->dma--;
	s->place[slot] = PLACE_FREE;
	if (c->status) {
		probe_fail(s, c->status);
		return;
	}
	if (s->err)
		return;
	if (!s->stage) {
		probe_delivered(s, c->length);
		return;
	}
	r = s->stage->start(s->stage->user, (unsigned)slot, c->length);
	if (r) {
		probe_fail(s, r);
		return;
	}
	s->place[slot] = PLACE_STAGE;
	s->staged++;
}

/* The card stopped answering: reset it and take what the reset cancels. */
static void probe_reset(struct probe_state *s)
{
	struct dev_completion c[PROBE_BATCH];
	uint64_t until = clock_now_ns() + PROBE_DRAIN_MS * CLOCK_NS_PER_MS;

	probe_fail(s, -ETIMEDOUT);
	s->ops->reset(s->q);
	while (s->dma && clock_now_ns() < until) {
		int n = s->ops->wait(s->q, c, PROBE_BATCH, 10);

		if (n < 0)
			break;
		for (int i = 0; i < n; i++)
			probe_completed(s, &c[i]);
	}
}

int probe_run(const struct device_ops *ops, struct device_queue *q,
	      uint64_t handle, const struct probe_params *p,
	      const struct probe_stage *stage, struct probe_result *ret_result)
{
	struct dev_completion c[PROBE_BATCH];
	struct probe_state s;
	uint64_t limit_ns;

	if (!ops || !q || !p || !p->length || p->stride < p->length ||
	    !p->slots || !p->depth || p->depth > p->slots || !p->max_bytes ||
	    !p->max_ms ||
	    (stage && (!stage->start || !stage->finish)))
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.ops = ops;
	s.q = q;
	s.handle = handle;
	s.p = p;
	s.stage = stage;
	s.place = calloc(p->slots, 1);
	if (!s.place)
		return -ENOMEM;
	limit_ns = (uint64_t)((p->timeout_ms ? p->timeout_ms :
			       PROBE_DEFAULT_TIMEOUT_MS) + PROBE_GRACE_MS) * CLOCK_NS_PER_MS;
	s.t0 = s.progress = clock_now_ns();

	for (;;) {
		int n;

		probe_submit(&s);
		if (!s.dma && !s.staged)
			break;
		if (s.staged)
			probe_finish_stages(&s, !s.dma);
		if (!s.dma)
			continue;
		n = ops->wait(q, c, PROBE_BATCH, s.staged ? 1 : 20);
		if (n < 0) {
			probe_fail(&s, n);
			probe_reset(&s);
			break;
		}
		for (int i = 0; i < n; i++)
			probe_completed(&s, &c[i]);
		if (!n && s.dma && clock_now_ns() - s.progress > limit_ns) {
			probe_reset(&s);
			break;
		}
	}
	/* Nothing may still write into the caller's memory. */
	if (s.staged)
		probe_finish_stages(&s, true);
	free(s.place);
	if (s.err)
		return s.err;
	if (!s.res.bytes || !s.res.ns)
		return -EIO;
	s.res.bytes_per_s = (double)s.res.bytes * (double)CLOCK_NS_PER_SEC / (double)s.res.ns;
	*ret_result = s.res;
	return 0;
}

/* --- auto's choice ---------------------------------------------------------- */

static double probe_gbs(double bytes_per_s)
{
	return bytes_per_s / 1e9;
}

/* What the topology advises when nothing was measured: gpudirect or not. */
static bool probe_topology_favours_gpudirect(const struct topo_pair *t)
{
	if (!t)
		return true;
	switch (t->verdict) {
	case TOPO_VERDICT_ACS_REDIRECT:
	case TOPO_VERDICT_IOMMU:
	case TOPO_VERDICT_VM:
	case TOPO_VERDICT_UNSUPPORTED:
	case TOPO_VERDICT_NO_GPU:
		return false;
	default:
		return true;
	}
}

/* ", 7.1 GB/s vs bounce 5.2", or what is known of each mode. */
static void probe_rates_text(const struct probe_rates *r, enum transfer_mode mode,
			     char *buf, size_t len)
{
	char gd[64], bo[64];

	if (r->gpudirect > 0 && r->bounce > 0) {
		snprintf(buf, len, ", %s%.1f GB/s vs bounce %.1f",
			 mode == MODE_GPUDIRECT ? "" : "gpudirect ",
			 probe_gbs(r->gpudirect), probe_gbs(r->bounce));
		return;
	}
	if (r->gpudirect_err)
		snprintf(gd, sizeof(gd), "gpudirect failed (%s)", strerror(-r->gpudirect_err));
	else if (r->gpudirect > 0)
		snprintf(gd, sizeof(gd), "gpudirect %.1f GB/s", probe_gbs(r->gpudirect));
	else
		snprintf(gd, sizeof(gd), "gpudirect not measured");
	if (r->bounce_err)
		snprintf(bo, sizeof(bo), "bounce failed (%s)", strerror(-r->bounce_err));
	else if (r->bounce > 0)
		snprintf(bo, sizeof(bo), "bounce %.1f GB/s", probe_gbs(r->bounce));
	else
		snprintf(bo, sizeof(bo), "bounce not measured");
	snprintf(buf, len, ", %s, %s", gd, bo);
}

int probe_choose(enum auto_choice how, const struct topo_pair *topo,
		 const struct probe_rates *rates, struct probe_choice *ret_choice)
{
	bool gd_ok = !rates->gpudirect_err, bo_ok = !rates->bounce_err;
	struct probe_choice c;
	char text[160];

	if (!gd_ok && !bo_ok)
		return -ENODEV;
	memset(&c, 0, sizeof(c));
	if (how == AUTO_FIRST)
		c.mode = gd_ok ? MODE_GPUDIRECT : MODE_BOUNCE;
	else if (!bo_ok)
		c.mode = MODE_GPUDIRECT;
	else if (!gd_ok || (topo && topo->verdict == TOPO_VERDICT_UNSUPPORTED))
		c.mode = MODE_BOUNCE;
	else if (rates->gpudirect > 0 && rates->bounce > 0)
		c.mode = rates->gpudirect >= rates->bounce ? MODE_GPUDIRECT : MODE_BOUNCE;
	else if (rates->gpudirect > 0 || rates->bounce > 0)
		/* One rate of two: the mode measured is the one known to work. */
		c.mode = rates->gpudirect > 0 ? MODE_GPUDIRECT : MODE_BOUNCE;
	else
		c.mode = probe_topology_favours_gpudirect(topo) ? MODE_GPUDIRECT :
								  MODE_BOUNCE;
	probe_rates_text(rates, c.mode, text, sizeof(text));
	snprintf(c.reason, sizeof(c.reason), "%s: %.150s%s", transfer_mode_name(c.mode),
		 how == AUTO_FIRST ? "the first mode that works (auto_choice = first)" :
		 topo ? topo->reason : "topology unknown", text);
	*ret_choice = c;
	return 0;
}
