// SPDX-License-Identifier: MIT
/*
 * fuzz_net_rx.c - libFuzzer: the UDP receive path that lands payloads in
 * the slot (net_rx.c) against the copying one (tests/net/rx_sim.h), on
 * streams the input writes: the sender's frames (lengths and payload
 * sizes from the input) with packets swapped, lost, sent by another
 * address, changed, or packets of the input's own making with the right
 * keys (any offset, PSN, length), received a number at a time the input
 * says, the first of them with few slots armed or none.  Both paths must count the same and deliver the same frames byte
 * for byte, nothing may be aimed outside the slot the receiver holds, and
 * no delivered byte may change afterwards; ASan catches the rest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../net/hsb_tx.h"
#include "../net/rx_sim.h"

#define SLOT_SIZE 4096u
#define MAX_DGRAMS 256
#define DGRAM_MAX (RX_SIM_BUF + 64)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t pool[MAX_DGRAMS][DGRAM_MAX];
static struct rx_sim_dgram d[MAX_DGRAMS];
static struct rx_sim sim;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct net_frame_cfg cfg = {
		.layout = { .base = 0x10000000000ull, .stride = 8192, .pages = 8 },
		.qpn = 0x42, .rkey = 0x5eed, .frame_size = SLOT_SIZE, .slot_size = SLOT_SIZE,
	};
	struct hsb_tx tx = { .qpn = cfg.qpn, .rkey = cfg.rkey, .lay = cfg.layout,
			     .payload = 512, .psn = 0xfffff8 };
	static uint8_t frame[SLOT_SIZE];
	size_t at = 2;
	unsigned n = 0, frames = 0, split;

	if (size < 2)
		return 0;
	while (at < size && n < MAX_DGRAMS - 16) {
		uint8_t op = data[at++], a = at < size ? data[at++] : 0,
			b = at < size ? data[at++] : 0;

		switch (op % 6) {
		case 0:
		case 1: {			/* the sender's next frame */
			uint64_t len = 1 + ((unsigned)a << 4 | (b & 15)) % SLOT_SIZE;

			tx.payload = op & 8 ? 128u * (1 + (b >> 4)) : 512u;
			tx.page = frames % cfg.layout.pages;
			tx.frame_number = frames;
			memset(frame, (int)frames, sizeof(frame));
			for (uint32_t i = 0; i < hsb_tx_packets(&tx, len) && n < MAX_DGRAMS; i++) {
				d[n] = (struct rx_sim_dgram){ pool[n], 0, false };
				d[n].len = hsb_tx_packet(&tx, frame, len, i, pool[n]);
				n++;
			}
			tx.psn = (tx.psn + hsb_tx_packets(&tx, len)) & ROCE_PSN_MASK;
			frames++;
			break;
		}
		case 2:				/* two recent ones swapped */
			if (n > a % 8 + 1) {
				struct rx_sim_dgram t = d[n - 1];

				d[n - 1] = d[n - 2 - a % 8];
				d[n - 2 - a % 8] = t;
			}
			break;
		case 3:				/* a recent one lost or another sender's */
			if (n > a % 8)
				d[n - 1 - a % 8].stranger = true;
			break;
		case 4:				/* a byte of a recent one changed */
			if (n > a % 8 && d[n - 1 - a % 8].len) {
				struct rx_sim_dgram *t = &d[n - 1 - a % 8];

				memcpy(pool[n], t->bytes, t->len);
				pool[n][b % t->len] ^= (uint8_t)(op | 1);
				t->bytes = pool[n++];
			}
			break;
		case 5: {			/* one of the input's making, our keys */
			uint32_t len = 128u * (a % 40);
			uint64_t va = cfg.layout.base + (uint64_t)(b % 8) * cfg.layout.stride +
				      128u * (unsigned)(op >> 3);
			uint8_t *p = hsb_headers(pool[n], op & 0x40 ? ROCE_OP_UC_WRITE_ONLY_IMM :
						 ROCE_OP_UC_WRITE_ONLY, cfg.qpn,
						 tx.psn + (b >> 6) - 1, va, cfg.rkey, len,
						 (tx.psn & 0xfffffu) << 12 | (b % 8));

			if (len + 64 > DGRAM_MAX)
				break;
			memset(p, a, len + ROCE_ICRC_SIZE);
			d[n] = (struct rx_sim_dgram){ pool[n], (size_t)(p - pool[n]) + len +
						      ROCE_ICRC_SIZE, false };
			n++;
			break;
		}
		}
	}
	rx_sim_init(&sim, &cfg, 512, 1 + data[1] * 16u);
	/* The first datagrams with few slots armed (0 to 3), then more. */
	split = n ? data[1] % (n + 1) : 0;
	sim.ref.armed = sim.aimed.armed = data[0] >> 6;
	if (!rx_sim_run(&sim, d, split, 1 + data[0] % NET_RX_BATCH))
		goto differ;
	sim.ref.armed = sim.aimed.armed = RX_SIM_SLOTS;
	if (!rx_sim_run(&sim, d + split, n - split, 1 + data[0] % NET_RX_BATCH) ||
	    !rx_sim_same(&sim)) {
differ:
		fprintf(stderr, "fuzz_net_rx: %s\n", sim.why);
		abort();
	}
	rx_sim_free(&sim);
	return 0;
}
