// SPDX-License-Identifier: MIT
/*
 * fuzz_net_frame.c - libFuzzer: a network sender's datagrams (roce_wire.c)
 * through a channel's frame assembly (net_frame.c) into a small ring.  The
 * input is a run of datagrams, each behind a 2-byte length.  ASan catches
 * any write outside the ring; a handed-on frame must fit its slot.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net_frame.h"

#define SLOTS 4
#define SLOT_SIZE 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char ring[SLOTS][SLOT_SIZE];
static unsigned next_slot, armed;

static int take(void *user, struct net_slot *ret)
{
	(void)user;
	if (!armed)
		return -EAGAIN;
	armed--;
	ret->base = ring[next_slot % SLOTS];
	ret->cookie = next_slot++ % SLOTS;
	return 0;
}

static void done(void *user, const struct net_frame_done *d)
{
	(void)user;
	if (d->cookie >= SLOTS || d->length > 3000)
		abort();
	armed++;
}

static const struct net_frame_ops ops = { .take = take, .done = done };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct net_frame_cfg cfg = {
		/* A base near the top: address arithmetic must not wrap. */
		.layout = { .base = UINT64_MAX - 3 * 8192, .stride = 8192, .pages = SLOTS },
		.qpn = 0x10, .rkey = 0x1234, .frame_size = 3000, .slot_size = SLOT_SIZE,
	};
	struct net_frame nf;
	uint64_t t = 0;

	next_slot = 0;
	armed = 2;
	if (size && data[0] & 1)
		cfg.layout.base = 0;
	net_frame_init(&nf, &cfg, &ops, NULL);
	while (size >= 2) {
		size_t n = (size_t)data[0] << 8 | data[1];

		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		net_frame_packet(&nf, data, n, t++);
		data += n;
		size -= n;
	}
	return 0;
}
