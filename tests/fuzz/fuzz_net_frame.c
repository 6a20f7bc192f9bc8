// SPDX-License-Identifier: MIT
/*
 * fuzz_net_frame.c - libFuzzer: a network sender's datagrams (roce_wire.c)
 * through a channel's frame assembly (net_frame.c) into a small ring.  An
 * input whose first byte is even is a run of datagrams, each behind a
 * 2-byte length; an odd one is a list of edits (drop, repeat, swap, flip a
 * byte) to the packets of well-formed frames (tests/net/hsb_tx.h), so the
 * fuzzer reaches deep into frame assembly.  ASan catches any write outside
 * the ring; a handed-on frame must fit its slot.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../net/hsb_tx.h"
#include "device/net/net_frame.h"

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

#define FRAME 2900u
#define PKTS 12

/* Well-formed frames of the sender, edited as @ops (4 bytes each) say. */
static void edited_frames(struct net_frame *nf, const uint8_t *ops, size_t n_ops)
{
	static uint8_t pkt[PKTS][ROCE_MAX_PACKET], frame[FRAME];
	size_t len[PKTS];
	struct hsb_tx t = {
		.qpn = nf->cfg.qpn, .rkey = nf->cfg.rkey, .lay = nf->cfg.layout,
		.payload = 1024, .psn = 0xfffff0,
	};
	unsigned n = hsb_tx_packets(&t, FRAME), k = 0;

	memset(frame, 0x5a, sizeof(frame));
	for (unsigned f = 0; f < 4; f++, t.psn += n, t.page = (t.page + 1) % SLOTS) {
		t.frame_number = f;
		for (unsigned i = 0; i < n; i++)
			len[i] = hsb_tx_packet(&t, frame, FRAME, i, pkt[i]);
		for (unsigned i = 0; i < n; i++) {
			unsigned reps = 1;

			/* Every edit that names this packet applies to it. */
			for (size_t o = 0; o + 4 <= n_ops; o += 4) {
				const uint8_t *e = ops + o;

				if (e[0] % (4 * PKTS) != f * PKTS + i)
					continue;
				switch (e[1] & 3) {
				case 0:
					reps = 0;
					break;
				case 1:
					reps++;
					break;
				case 2:
					if (i + 1 < n) {
						uint8_t tmp[ROCE_MAX_PACKET];
						size_t l = len[i];

						memcpy(tmp, pkt[i], l);
						memcpy(pkt[i], pkt[i + 1], len[i + 1]);
						len[i] = len[i + 1];
						memcpy(pkt[i + 1], tmp, l);
						len[i + 1] = l;
					}
					break;
				default:
					if (len[i])
						pkt[i][e[2] % (len[i] < 64 ? len[i] : 64)] ^= e[3];
				}
			}
			while (reps--)
				net_frame_packet(nf, pkt[i], len[i], k++);
		}
	}
}

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
	if (size && data[0] & 2)
		cfg.layout.base = 0;
	net_frame_init(&nf, &cfg, &ops, NULL);
	if (size && data[0] & 1) {
		edited_frames(&nf, data + 1, size - 1);
		return 0;
	}
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
