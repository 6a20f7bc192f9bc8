// SPDX-License-Identifier: MIT
/* lease.c - a client's descriptor ring on one channel. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "clock.h"
#include "lease.h"
#include "log.h"

static uint64_t new_generation(void)
{
	uint64_t g = 0;

	if (getrandom(&g, sizeof(g), GRND_NONBLOCK) != sizeof(g))
		g = clock_now_ns();
	return g ? g : 1;
}

int lease_create(const char *channel, const struct frame_ring_geometry *geo,
		 struct session *s, bool shared, struct lease **ret_lease)
{
	struct frame_ring_geometry g = *geo;
	struct lease *l;
	char hint[64];
	size_t size;
	int r;

	g.desc_count = frame_ring_desc_count_for(geo->slots);
	size = frame_ring_size(g.desc_count);
	if (!g.desc_count || !size)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->session = s;
	l->shared = shared;
	l->uid = s->peer.uid;
	l->pid = s->peer.pid;
	l->generation = new_generation();
	l->held = calloc(geo->slots, 1);
	if (!l->held) {
		r = -ENOMEM;
		goto fail;
	}
	snprintf(hint, sizeof(hint), "%s.desc", channel);
	r = memory_host_ops.alloc(size, NULL, hint, &l->desc);
	if (r < 0)
		goto fail;
	if (s->peer.creds) {
		r = memory_host_ops.grant(l->desc, s->peer.uid);
		if (r < 0)
			goto fail;
	}
	r = frame_producer_init(l->desc->host, l->desc->size, &g,
				     l->generation, &l->prod);
	if (r < 0)
		goto fail;
	*ret_lease = l;
	return 0;
fail:
	log_err("lease: %s for pid %d: cannot set up the descriptor ring: %s",
		channel, (int)s->peer.pid, strerror(-r));
	lease_destroy(l, 0);
	return r;
}

void lease_destroy(struct lease *l, uint32_t events)
{
	if (!l)
		return;
	if (l->prod && events)
		frame_producer_raise(l->prod, events);
	frame_producer_free(l->prod);
	if (l->desc)
		memory_host_ops.free(l->desc);
	free(l->held);
	free(l);
}
