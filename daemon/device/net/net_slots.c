// SPDX-License-Identifier: MIT
/*
 * net_slots.c - a network source's pinned rings, armed slots and
 * completions (net_slots.h).
 */
#include <errno.h>

#include "device/net/net_slots.h"

int net_slots_pin(struct net_slots *s, const struct dev_region *r,
		  uint64_t *ret_handle)
{
	struct net_pin *p = NULL;

	/*
	 * The CPU writes the ring: host memory; GPU rings go through bounce,
	 * unless the queue copies on the GPU (its address: a dma-buf's too).
	 */
	if (r->kind != DEV_REGION_HOST && !s->gpu)
		return -EOPNOTSUPP;
	if (!r->addr || !r->length)
		return -EINVAL;
	for (unsigned i = 0; i < NET_MAX_PINS && !p; i++)
		if (!s->pins[i].used)
			p = &s->pins[i];
	if (!p)
		return -ENOSPC;
	p->used = true;
	p->gen++;
	p->addr = r->addr;
	p->length = r->length;
	*ret_handle = (uint64_t)p->gen << 32 | (uint64_t)(p - s->pins + 1);
	return 0;
}

static struct net_pin *pin_find(struct net_slots *s, uint64_t handle)
{
	uint64_t idx = (handle & 0xffffffffu) - 1;

	if (idx >= NET_MAX_PINS || !s->pins[idx].used ||
	    s->pins[idx].gen != (uint32_t)(handle >> 32))
		return NULL;
	return &s->pins[idx];
}

int net_slots_unpin(struct net_slots *s, uint64_t handle)
{
	struct net_pin *p = pin_find(s, handle);

	if (!p)
		return -EINVAL;
	p->used = false;
	return 0;
}

int net_slots_arm(struct net_slots *s, const struct dev_xfer *x, unsigned held)
{
	struct net_pin *p = pin_find(s, x->handle);

	if (!p || x->offset > p->length || s->slot_size > p->length - x->offset)
		return -EINVAL;
	if (s->armed_n + s->cq_n + held >= NET_MAX_INFLIGHT)
		return -EAGAIN;
	s->armed[(s->armed_head + s->armed_n) % NET_MAX_INFLIGHT] =
		(struct net_slot){ .base = p->addr + x->offset, .cookie = x->cookie };
	s->armed_n++;
	return 0;
}

int net_slots_take(struct net_slots *s, struct net_slot *ret_slot)
{
	if (!s->armed_n)
		return -EAGAIN;
	*ret_slot = s->armed[s->armed_head];
	s->armed_head = (s->armed_head + 1) % NET_MAX_INFLIGHT;
	s->armed_n--;
	return 0;
}

static void cq_push(struct net_slots *s, const struct dev_completion *c)
{
	s->cq[(s->cq_head + s->cq_n) % NET_MAX_INFLIGHT] = *c;
	s->cq_n++;
}

void net_slots_done(struct net_slots *s, const struct net_frame_done *d)
{
	struct dev_completion c = {
		.cookie = d->cookie,
		.length = d->length,
		.seq = d->seq,
		.t_start_ns = d->t_start_ns,
		.t_end_ns = d->t_end_ns,
		.t_sender_start_ns = d->t_sender_start_ns,
		.t_sender_end_ns = d->t_sender_end_ns,
	};

	cq_push(s, &c);
}

unsigned net_slots_pop(struct net_slots *s, struct dev_completion *out,
		       unsigned max)
{
	unsigned n = 0;

	while (s->cq_n && n < max) {
		out[n++] = s->cq[s->cq_head];
		s->cq_head = (s->cq_head + 1) % NET_MAX_INFLIGHT;
		s->cq_n--;
	}
	return n;
}

void net_slots_cancel(struct net_slots *s, const struct net_slot *held)
{
	struct dev_completion c = { .status = -ECANCELED };
	struct net_slot slot;

	if (held) {
		c.cookie = held->cookie;
		cq_push(s, &c);
	}
	while (net_slots_take(s, &slot) == 0) {
		c.cookie = slot.cookie;
		cq_push(s, &c);
	}
}
