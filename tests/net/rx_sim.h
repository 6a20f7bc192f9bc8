/* SPDX-License-Identifier: MIT */
/*
 * rx_sim.h - the UDP receive path (net_rx.h) against the copying one, for
 * tests and the fuzzer: the same datagrams go to two frame states, one
 * through net_rx's aimed buffers (a kernel stand-in scatters each datagram
 * over the message's pieces as recvmmsg does, cutting what does not fit)
 * and one whole into net_frame_packet(); both must count the same and
 * deliver the same frames, byte for byte, and no byte of a frame the
 * aimed side delivered may change afterwards.  Each side's slots are
 * handed out once (a delivered slot stays the consumer's).  Header only.
 */
#ifndef FPGAD_TESTS_RX_SIM_H
#define FPGAD_TESTS_RX_SIM_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/net/net_frame.h"
#include "device/net/net_rx.h"

#define RX_SIM_SLOTS 48
#define RX_SIM_BUF 4096			/* each message's buffer: longer ones are cut */

struct rx_sim_side {
	struct net_frame nf;
	unsigned char *ring;
	uint64_t slot_size;
	unsigned next;			/* slots handed out */
	unsigned armed;			/* up to this many (RX_SIM_SLOTS) */
	unsigned n_done;
	struct net_frame_done done[RX_SIM_SLOTS];
	unsigned char *snap;		/* each delivered frame as delivered */
};

struct rx_sim_dgram {
	const uint8_t *bytes;
	size_t len;
	bool stranger;			/* from another address: never handed on */
};

struct rx_sim {
	struct rx_sim_side ref, aimed;
	struct net_rx rx;
	uint64_t in_place, whole;	/* messages each way */
	char why[160];
};

static inline int rx_sim_take(void *user, struct net_slot *ret)
{
	struct rx_sim_side *s = user;

	if (s->next >= s->armed)
		return -EAGAIN;
	ret->base = s->ring + (size_t)s->next * s->slot_size;
	ret->cookie = s->next++;
	return 0;
}

static inline void rx_sim_done(void *user, const struct net_frame_done *d)
{
	struct rx_sim_side *s = user;

	s->done[s->n_done++] = *d;
	memcpy(s->snap + d->cookie * s->slot_size,
	       s->ring + d->cookie * s->slot_size, d->length);
}

static const struct net_frame_ops rx_sim_ops = {
	.take = rx_sim_take,
	.done = rx_sim_done,
};

static inline void rx_sim_side_init(struct rx_sim_side *s, const struct net_frame_cfg *cfg)
{
	memset(s, 0, sizeof(*s));
	s->slot_size = cfg->slot_size;
	s->armed = RX_SIM_SLOTS;
	s->ring = calloc(RX_SIM_SLOTS, cfg->slot_size);
	s->snap = calloc(RX_SIM_SLOTS, cfg->slot_size);
	if (!s->ring || !s->snap)
		abort();
	/* What was there before: neither side may deliver it. */
	memset(s->ring, 0xee, RX_SIM_SLOTS * cfg->slot_size);
	net_frame_init(&s->nf, cfg, &rx_sim_ops, s);
}

/* @payload, @frame: net_rx's guesses before the stream shows its own. */
static inline void rx_sim_init(struct rx_sim *s, const struct net_frame_cfg *cfg,
			       uint32_t payload, uint64_t frame)
{
	memset(s, 0, sizeof(*s));
	rx_sim_side_init(&s->ref, cfg);
	rx_sim_side_init(&s->aimed, cfg);
	if (net_rx_init(&s->rx, RX_SIM_BUF, payload, frame) < 0)
		abort();
}

static inline void rx_sim_free(struct rx_sim *s)
{
	net_rx_free(&s->rx);
	free(s->ref.ring);
	free(s->ref.snap);
	free(s->aimed.ring);
	free(s->aimed.snap);
}

/* recvmmsg's part: @d scattered over message @i's pieces. */
static inline void rx_sim_scatter(struct net_rx *rx, unsigned i,
				  const struct rx_sim_dgram *d)
{
	struct msghdr *m = &rx->msgs[i].msg_hdr;
	size_t at = 0;

	for (size_t k = 0; k < m->msg_iovlen && at < d->len; k++) {
		size_t n = d->len - at < m->msg_iov[k].iov_len ?
			   d->len - at : m->msg_iov[k].iov_len;

		memcpy(m->msg_iov[k].iov_base, d->bytes + at, n);
		at += n;
	}
	rx->msgs[i].msg_len = (unsigned)at;
	m->msg_flags = at < d->len ? MSG_TRUNC : 0;
}

/*
 * One receive of up to @avail of the @n datagrams at @d: false (with
 * s->why) when the aimed side wrote outside the slot it holds.  *@ret_took:
 * how many it took.
 */
static inline bool rx_sim_batch(struct rx_sim *s, const struct rx_sim_dgram *d,
				unsigned n, unsigned avail, unsigned *ret_took)
{
	struct net_frame *nf = &s->aimed.nf;
	unsigned want = net_rx_plan(&s->rx, nf), k;

	k = want < avail ? want : avail;
	if (k > n)
		k = n;
	for (unsigned i = 0; i < want; i++) {
		const unsigned char *at = s->rx.at[i];

		if (at && (!nf->have_slot || at < nf->slot.base ||
			   at + s->rx.aimed[i] > nf->slot.base + nf->cfg.slot_size)) {
			snprintf(s->why, sizeof(s->why),
				 "message %u aimed outside the slot the receiver holds", i);
			return false;
		}
	}
	for (unsigned i = 0; i < k; i++)
		rx_sim_scatter(&s->rx, i, &d[i]);
	for (unsigned i = 0; i < k; i++) {
		struct iovec v[3];

		if (d[i].stranger)
			continue;
		/* Cut: counted by the device, handed on by neither. */
		if (!(s->rx.msgs[i].msg_hdr.msg_flags & MSG_TRUNC))
			net_frame_packet(&s->ref.nf, d[i].bytes, d[i].len, 0);
		else
			continue;
		if (net_rx_in_place(&s->rx, nf, i, v)) {
			s->in_place++;
			net_frame_packet_split(nf, v[0].iov_base, v[0].iov_len,
					       s->rx.msgs[i].msg_len, v[1].iov_base, 0);
		} else {
			s->whole++;
			net_frame_packet(nf, net_rx_whole(&s->rx, i, k),
					 s->rx.msgs[i].msg_len, 0);
		}
	}
	*ret_took = k;
	return true;
}

/* All @n datagrams, @avail at a time: false (s->why) at a difference. */
static inline bool rx_sim_run(struct rx_sim *s, const struct rx_sim_dgram *d,
			      unsigned n, unsigned avail)
{
	unsigned took;

	while (n) {
		if (!rx_sim_batch(s, d, n, avail, &took))
			return false;
		d += took;
		n -= took;
	}
	return true;
}

/* Both sides agree, and what the aimed side delivered is as delivered. */
static inline bool rx_sim_same(struct rx_sim *s)
{
	const struct rx_sim_side *r = &s->ref, *a = &s->aimed;

	if (memcmp(&r->nf.cnt, &a->nf.cnt, sizeof(r->nf.cnt))) {
		snprintf(s->why, sizeof(s->why), "counters differ: frames %llu/%llu, packets %llu/%llu, bytes %llu/%llu",
			 (unsigned long long)r->nf.cnt.frames, (unsigned long long)a->nf.cnt.frames,
			 (unsigned long long)r->nf.cnt.packets, (unsigned long long)a->nf.cnt.packets,
			 (unsigned long long)r->nf.cnt.bytes, (unsigned long long)a->nf.cnt.bytes);
		return false;
	}
	if (r->n_done != a->n_done) {
		snprintf(s->why, sizeof(s->why), "%u frames delivered, copying %u", a->n_done, r->n_done);
		return false;
	}
	for (unsigned i = 0; i < r->n_done; i++) {
		const struct net_frame_done *x = &r->done[i], *y = &a->done[i];
		size_t at = y->cookie * a->slot_size;

		if (x->cookie != y->cookie || x->length != y->length || x->seq != y->seq) {
			snprintf(s->why, sizeof(s->why), "frame %u: slot, length or number differ", i);
			return false;
		}
		if (memcmp(r->snap + at, a->snap + at, y->length)) {
			snprintf(s->why, sizeof(s->why), "frame %u: delivered bytes differ", i);
			return false;
		}
		if (memcmp(a->ring + at, a->snap + at, y->length)) {
			snprintf(s->why, sizeof(s->why), "frame %u: written after delivery", i);
			return false;
		}
	}
	return true;
}

#endif
