// SPDX-License-Identifier: MIT
/*
 * test_net_rx.c - the UDP receive path that lands payloads in the slot
 * (net_rx.c), against the copying one on the same datagrams (rx_sim.h):
 * a clean stream lands every data packet in place; packets that miss the
 * guess (another sender's, another key's, a misplaced one, a payload or
 * frame length that changed, a datagram too long) are put back together
 * and copied, and the frames delivered are the copying path's, byte for
 * byte; nothing is ever aimed outside the slot the receiver holds.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../net/hsb_tx.h"
#include "../net/rx_sim.h"

#define SLOT_SIZE 8192u
#define FRAME 5000u
#define PAYLOAD 1024u
#define MAX_DGRAMS 1024
#define DGRAM_MAX 4200u

struct gen {
	struct hsb_tx tx;
	struct net_frame_cfg cfg;
	uint8_t (*pool)[DGRAM_MAX];
	struct rx_sim_dgram d[MAX_DGRAMS];
	unsigned n;
	unsigned frames;		/* sent */
	struct rx_sim sim;
};

static uint8_t pattern(uint32_t frame, uint64_t i)
{
	return (uint8_t)(frame * 31u + i * 7u + (i >> 8));
}

static int setup(void **state)
{
	struct gen *g = calloc(1, sizeof(*g));

	assert_non_null(g);
	g->pool = calloc(MAX_DGRAMS, DGRAM_MAX);
	assert_non_null(g->pool);
	g->cfg = (struct net_frame_cfg){
		.layout = { .base = 0x10000000000ull, .stride = 16384, .pages = 16 },
		.qpn = 0x123, .rkey = 0xbeef0001, .frame_size = SLOT_SIZE,
		.slot_size = SLOT_SIZE,
	};
	g->tx = (struct hsb_tx){ .qpn = g->cfg.qpn, .rkey = g->cfg.rkey,
				 .lay = g->cfg.layout, .payload = PAYLOAD, .psn = 77 };
	rx_sim_init(&g->sim, &g->cfg, PAYLOAD, FRAME);
	*state = g;
	return 0;
}

static int teardown(void **state)
{
	struct gen *g = *state;

	rx_sim_free(&g->sim);
	free(g->pool);
	free(g);
	return 0;
}

/* A datagram of @len bytes to come; its bytes to fill. */
static uint8_t *add(struct gen *g, size_t len, bool stranger)
{
	assert_true(g->n < MAX_DGRAMS && len <= DGRAM_MAX);
	g->d[g->n] = (struct rx_sim_dgram){ g->pool[g->n], len, stranger };
	return g->pool[g->n++];
}

/* The next frame, @len bytes in packets of @payload. */
static void frame(struct gen *g, uint64_t len, uint32_t payload)
{
	uint8_t data[SLOT_SIZE], pkt[ROCE_MAX_PACKET];
	uint32_t n;

	for (uint64_t i = 0; i < len; i++)
		data[i] = pattern(g->frames, i);
	g->tx.payload = payload;
	g->tx.page = g->frames % g->cfg.layout.pages;
	g->tx.frame_number = g->frames;
	n = hsb_tx_packets(&g->tx, len);
	for (uint32_t i = 0; i < n; i++) {
		size_t l = hsb_tx_packet(&g->tx, data, len, i, pkt);

		memcpy(add(g, l, false), pkt, l);
	}
	g->tx.psn = (g->tx.psn + n) & ROCE_PSN_MASK;
	g->frames++;
}

/* Run what was added, @avail datagrams per receive at most; both sides agree. */
static void run(struct gen *g, unsigned avail)
{
	if (!rx_sim_run(&g->sim, g->d, g->n, avail) || !rx_sim_same(&g->sim))
		fail_msg("%s", g->sim.why);
}

/* Every frame the aimed side delivered is the sender's, whole. */
static void delivered_as_sent(struct gen *g, unsigned want)
{
	struct rx_sim_side *a = &g->sim.aimed;

	assert_int_equal(a->n_done, want);
	for (unsigned i = 0; i < a->n_done; i++) {
		const uint8_t *p = a->ring + a->done[i].cookie * a->slot_size;

		for (uint64_t k = 0; k < a->done[i].length; k++)
			if (p[k] != pattern((uint32_t)a->done[i].seq, k))
				fail_msg("frame %u byte %llu", i, (unsigned long long)k);
	}
}

static void clean_stream_lands_in_place(void **state)
{
	struct gen *g = *state;
	const unsigned avail[] = { 64, 3, 1, 7 };

	for (unsigned r = 0; r < 4; r++) {
		teardown(state);
		setup(state);
		g = *state;
		for (int f = 0; f < 10; f++)
			frame(g, FRAME, PAYLOAD);
		run(g, avail[r]);
		delivered_as_sent(g, 10);
		/* Every data packet in place: only the immediates were copied. */
		assert_int_equal(g->sim.whole, 10);
		assert_int_equal(g->sim.in_place, 10 * 5);
	}
}

/* Packets into the batch that are not the sender's next: the frame still comes whole. */
static void hostile_packets_mid_frame(void **state)
{
	struct gen *g = *state;
	uint8_t *p;

	frame(g, FRAME, PAYLOAD);
	/* Frame 1: another key's packet where packet 3 goes, another sender's junk. */
	frame(g, FRAME, PAYLOAD);
	memmove(&g->d[6 + 3 + 2], &g->d[6 + 3], 3 * sizeof(g->d[0]));
	p = (uint8_t *)g->pool[g->n];
	memcpy(p, g->d[6 + 3 + 2].bytes, g->d[6 + 3 + 2].len);
	hsb_put(p + ROCE_BTH_SIZE + 8, 0xbad, 4);
	memset(p + NET_RX_HDR, 0x5a, PAYLOAD);
	g->d[6 + 3] = (struct rx_sim_dgram){ p, g->d[6 + 3 + 2].len, false };
	p = (uint8_t *)g->pool[g->n + 1];
	memset(p, 0xa5, 1100);
	g->d[6 + 4] = (struct rx_sim_dgram){ p, 1100, true };
	g->n += 2;
	for (int f = 0; f < 3; f++)
		frame(g, FRAME, PAYLOAD);
	run(g, 64);
	delivered_as_sent(g, 5);
	assert_int_equal(g->sim.aimed.nf.cnt.wrong_rkey, 1);
	assert_true(g->sim.whole > 5);
}

/* One of ours, in order but aimed at the wrong offset: that frame is torn, the rest whole. */
static void misplaced_packet_tears_its_frame(void **state)
{
	struct gen *g = *state;
	uint8_t *p;

	frame(g, FRAME, PAYLOAD);
	frame(g, FRAME, PAYLOAD);
	p = (uint8_t *)g->d[6 + 2].bytes;
	hsb_put(p + ROCE_BTH_SIZE, g->cfg.layout.base + g->cfg.layout.stride + 3 * PAYLOAD, 8);
	frame(g, FRAME, PAYLOAD);
	run(g, 64);
	assert_int_equal(g->sim.aimed.nf.cnt.incomplete_frames, 1);
	assert_int_equal(g->sim.aimed.n_done, 2);
}

/* The sender's payload size grows and shrinks: each miss copied, no byte lost. */
static void payload_size_changes(void **state)
{
	struct gen *g = *state;

	for (int f = 0; f < 3; f++)
		frame(g, FRAME, PAYLOAD);
	for (int f = 0; f < 4; f++)
		frame(g, FRAME, 2 * PAYLOAD);
	for (int f = 0; f < 3; f++)
		frame(g, FRAME, PAYLOAD / 2);
	run(g, 64);
	delivered_as_sent(g, 10);
	/* It learned each size: most packets still landed in place. */
	assert_true(g->sim.in_place > g->sim.whole);
}

static void frame_length_changes(void **state)
{
	struct gen *g = *state;
	const uint64_t len[] = { 5000, 3000, 3000, 6000, 128, 8192, 8192, 5000, 1 };

	for (unsigned f = 0; f < 9; f++)
		frame(g, len[f], PAYLOAD);
	run(g, 64);
	delivered_as_sent(g, 9);
}

/* A guess longer than a slot aims at the slot only. */
static void never_aims_past_the_slot(void **state)
{
	struct gen *g = *state;

	rx_sim_free(&g->sim);
	rx_sim_init(&g->sim, &g->cfg, PAYLOAD + 128, 4 * SLOT_SIZE);
	for (int f = 0; f < 4; f++)
		frame(g, SLOT_SIZE, PAYLOAD);
	run(g, 64);
	delivered_as_sent(g, 4);
}

/* A datagram too long for the buffer is cut, never half landed as good. */
static void long_datagram_cut(void **state)
{
	struct gen *g = *state;
	uint8_t *p;

	frame(g, FRAME, PAYLOAD);
	frame(g, FRAME, PAYLOAD);
	/* Packet 1 of frame 1 carries 4096 bytes, past the buffer. */
	p = (uint8_t *)g->d[6 + 1].bytes;
	memset(p + NET_RX_HDR, 0x33, 4096 + ROCE_ICRC_SIZE);
	hsb_put(p + ROCE_BTH_SIZE + 12, 4096, 4);
	g->d[6 + 1].len = NET_RX_HDR + 4096 + ROCE_ICRC_SIZE;
	frame(g, FRAME, PAYLOAD);
	run(g, 64);
	assert_int_equal(g->sim.aimed.n_done, 2);
}

/*
 * No slot armed when a frame starts, one armed while it goes on: that frame
 * is dropped (counted), never delivered with its start missing.
 */
static void slot_armed_mid_frame(void **state)
{
	struct gen *g = *state;
	unsigned took;

	frame(g, FRAME, PAYLOAD);
	frame(g, FRAME, PAYLOAD);
	g->sim.ref.armed = g->sim.aimed.armed = 0;
	assert_true(rx_sim_batch(&g->sim, g->d, g->n, 2, &took));
	g->sim.ref.armed = g->sim.aimed.armed = RX_SIM_SLOTS;
	if (!rx_sim_run(&g->sim, g->d + took, g->n - took, 64) || !rx_sim_same(&g->sim))
		fail_msg("%s", g->sim.why);
	assert_int_equal(g->sim.aimed.nf.cnt.no_slot_frames, 1);
	delivered_as_sent(g, 1);
}

/* Drops, duplicates, swaps, other senders' and keys' packets, junk, at random. */
static void random_faults_match_copying(void **state)
{
	for (unsigned seed = 1; seed <= 60; seed++) {
		struct gen *g;
		unsigned n;

		teardown(state);
		setup(state);
		g = *state;
		srand(seed);
		for (int f = 0; f < 30; f++)
			frame(g, 1 + (unsigned)rand() % SLOT_SIZE,
			      rand() % 4 ? PAYLOAD : 128u * (1 + (unsigned)rand() % 16));
		n = g->n;
		for (unsigned k = 0; k < n; k++) {
			int what = rand() % 40;
			struct rx_sim_dgram t;

			if (what == 0 && k + 1 < n) {		/* swapped */
				t = g->d[k];
				g->d[k] = g->d[k + 1];
				g->d[k + 1] = t;
			} else if (what == 1) {			/* lost */
				g->d[k].len = 0;
				g->d[k].stranger = true;
			} else if (what == 2) {			/* another sender's */
				g->d[k].stranger = true;
			} else if (what == 3 && k) {		/* a copy of one before */
				g->d[k] = g->d[k - 1 - (unsigned)rand() % (k < 4 ? k : 4)];
			} else if (what == 4) {			/* a byte changed */
				uint8_t *p = (uint8_t *)g->d[k].bytes;

				p[(unsigned)rand() % g->d[k].len] ^= (uint8_t)(1 + rand() % 255);
			}
		}
		run(g, 1 + (unsigned)rand() % 64);
	}
}

/*
 * A port shared by channels: each packet goes to the channel of its
 * destination QPN (the data packets and the immediate alike), one for no
 * channel's QPN and one too short to carry a BTH to none.
 */
static void demux_by_destination_qpn(void **state)
{
	struct gen *g = *state;
	const uint32_t qpns[3] = { 0x4d2, 0x123, 0xffffff };
	uint8_t data[FRAME], pkt[ROCE_MAX_PACKET];
	uint32_t n;

	memset(data, 0x5a, sizeof(data));
	for (unsigned c = 0; c < 3; c++) {
		g->tx.qpn = qpns[c];
		n = hsb_tx_packets(&g->tx, FRAME);
		assert_true(n > 1);
		for (uint32_t i = 0; i < n; i++) {
			size_t l = hsb_tx_packet(&g->tx, data, FRAME, i, pkt);

			assert_int_equal(net_rx_demux(pkt, l, qpns, 3), (int)c);
			/* Not one of the first two's. */
			assert_int_equal(net_rx_demux(pkt, l, qpns, 2), c < 2 ? (int)c : -1);
		}
	}
	g->tx.qpn = 0x4d3;
	n = (uint32_t)hsb_tx_packet(&g->tx, data, FRAME, 0, pkt);
	assert_int_equal(net_rx_demux(pkt, n, qpns, 3), -1);
	g->tx.qpn = 0x4d2;
	n = (uint32_t)hsb_tx_packet(&g->tx, data, FRAME, 0, pkt);
	assert_int_equal(net_rx_demux(pkt, ROCE_BTH_SIZE, qpns, 3), 0);
	assert_int_equal(net_rx_demux(pkt, ROCE_BTH_SIZE - 1, qpns, 3), -1);
	assert_int_equal(net_rx_demux(pkt, 0, qpns, 3), -1);
	assert_int_equal(net_rx_demux(pkt, n, qpns, 0), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(clean_stream_lands_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(hostile_packets_mid_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(misplaced_packet_tears_its_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(payload_size_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(frame_length_changes, setup, teardown),
		cmocka_unit_test_setup_teardown(never_aims_past_the_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(long_datagram_cut, setup, teardown),
		cmocka_unit_test_setup_teardown(slot_armed_mid_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(random_faults_match_copying, setup, teardown),
		cmocka_unit_test_setup_teardown(demux_by_destination_qpn, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
