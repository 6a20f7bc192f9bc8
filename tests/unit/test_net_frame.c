// SPDX-License-Identifier: MIT
/*
 * test_net_frame.c - a network sender's packets: decoding (roce_wire.c)
 * and frames from them (net_frame.c), with every fault a sender or the
 * network makes: lost, duplicated, reordered and misplaced packets, a lost
 * immediate, wrong QPN or R_Key, frames too long or stale, no slot armed.
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../net/hsb_tx.h"
#include "device/net/net_frame.h"
#include "device/net/roce_wire.h"

#define SLOTS 4
#define SLOT_SIZE 8192u
#define FRAME 5000u
#define PAYLOAD 1024u

struct fix {
	unsigned char ring[SLOTS][SLOT_SIZE];
	unsigned armed;			/* slots take() may still hand out */
	unsigned next;			/* the next slot take() hands out */
	unsigned n_done;
	struct net_frame_done done[16];
	struct net_frame nf;
	struct hsb_tx tx;
	unsigned char frame[FRAME];
	uint8_t pkt[16][ROCE_MAX_PACKET];
	size_t len[16];
	unsigned n_pkt;
};

static int take(void *user, struct net_slot *ret)
{
	struct fix *f = user;

	if (!f->armed)
		return -EAGAIN;
	f->armed--;
	ret->base = f->ring[f->next % SLOTS];
	ret->cookie = f->next % SLOTS;
	f->next++;
	return 0;
}

static void done(void *user, const struct net_frame_done *d)
{
	struct fix *f = user;

	assert_true(f->n_done < 16);
	f->done[f->n_done++] = *d;
}

static const struct net_frame_ops ops = { .take = take, .done = done };

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct net_frame_cfg cfg = {
		.layout = { .base = 0x10000000000ull, .stride = SLOT_SIZE, .pages = SLOTS },
		.qpn = 0x123, .rkey = 0xbeef0001, .frame_size = FRAME, .slot_size = SLOT_SIZE,
	};

	assert_non_null(f);
	net_frame_init(&f->nf, &cfg, &ops, f);
	f->armed = SLOTS;
	f->tx = (struct hsb_tx){ .qpn = cfg.qpn, .rkey = cfg.rkey, .lay = cfg.layout,
				 .payload = PAYLOAD, .psn = 100 };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	free(*state);
	return 0;
}

static void fill(struct fix *f, uint32_t n)
{
	for (unsigned i = 0; i < FRAME; i++)
		f->frame[i] = (unsigned char)(i * 7 + n);
}

/* The packets of the sender's next frame, its bytes derived from @n. */
static void make_frame(struct fix *f, uint32_t n)
{
	fill(f, n);
	f->tx.frame_number = n;
	f->n_pkt = hsb_tx_packets(&f->tx, FRAME);
	assert_int_equal(f->n_pkt, 6);
	for (unsigned i = 0; i < f->n_pkt; i++)
		f->len[i] = hsb_tx_packet(&f->tx, f->frame, FRAME, i, f->pkt[i]);
	f->tx.psn += f->n_pkt;
	f->tx.page = (f->tx.page + 1) % SLOTS;
}

static void feed(struct fix *f, unsigned i)
{
	net_frame_packet(&f->nf, f->pkt[i], f->len[i], 1000 + i);
}

static void feed_all(struct fix *f)
{
	for (unsigned i = 0; i < f->n_pkt; i++)
		feed(f, i);
}

/* The last frame handed on is frame @n, whole, in its slot. */
static void assert_delivered(struct fix *f, uint32_t n)
{
	const struct net_frame_done *d = &f->done[f->n_done - 1];

	assert_true(f->n_done > 0);
	assert_int_equal(d->seq, n);
	assert_int_equal(d->length, FRAME);
	assert_true(d->t_end_ns >= d->t_start_ns);
	fill(f, n);	/* the bytes again, for comparison */
	assert_memory_equal(f->ring[d->cookie], f->frame, FRAME);
}

static void test_parse(void **state)
{
	struct fix *f = *state;
	struct roce_pkt p;

	make_frame(f, 3);
	assert_int_equal(roce_parse(f->pkt[0], f->len[0], &p), 0);
	assert_int_equal(p.opcode, ROCE_OP_UC_WRITE_ONLY);
	assert_int_equal(p.dest_qp, 0x123);
	assert_int_equal(p.psn, 100);
	assert_int_equal(p.rkey, 0xbeef0001);
	assert_int_equal(p.dma_len, PAYLOAD);
	assert_true(p.va == 0x10000000000ull);
	assert_memory_equal(p.payload, f->frame, PAYLOAD);

	assert_int_equal(roce_parse(f->pkt[5], f->len[5], &p), 0);
	assert_int_equal(p.opcode, ROCE_OP_UC_WRITE_ONLY_IMM);
	assert_int_equal(p.dma_len, ROCE_META_SIZE);
	assert_int_equal(roce_imm_psn(p.imm), 105);
	assert_int_equal(roce_imm_page(p.imm), 0);
	assert_true(p.va == 0x10000000000ull + 5120);
}

static void test_parse_refuses(void **state)
{
	struct fix *f = *state;
	struct roce_pkt p;
	uint8_t b[ROCE_MAX_PACKET];

	make_frame(f, 0);
	for (size_t n = 0; n < ROCE_MIN_PACKET; n++)
		assert_int_equal(roce_parse(f->pkt[0], n, &p), -EBADMSG);
	/* One byte more or less than the DMA length says. */
	assert_int_equal(roce_parse(f->pkt[0], f->len[0] - 1, &p), -EBADMSG);
	assert_int_equal(roce_parse(f->pkt[0], f->len[0] + 1, &p), -EBADMSG);
	memcpy(b, f->pkt[0], f->len[0]);
	b[0] = 0x04;		/* RC SEND Only */
	assert_int_equal(roce_parse(b, f->len[0], &p), -EPROTONOSUPPORT);
	b[0] = ROCE_OP_UC_WRITE_ONLY;
	b[1] = 0x01;		/* transport version 1 */
	assert_int_equal(roce_parse(b, f->len[0], &p), -EPROTONOSUPPORT);
	b[1] = 0;
	hsb_put(b + ROCE_BTH_SIZE + 12, 0xffffffffu, 4);
	assert_int_equal(roce_parse(b, f->len[0], &p), -EBADMSG);
	/* A WRITE with Immediate too short for its immediate. */
	memcpy(b, f->pkt[5], f->len[5]);
	assert_int_equal(roce_parse(b, ROCE_MIN_PACKET + 3, &p), -EBADMSG);
	assert_int_equal(roce_parse(NULL, 100, &p), -EBADMSG);
}

/* The metadata's times: seconds and nanoseconds into ns, or 0 for no time. */
static void test_meta_times(void **state)
{
	static const struct {
		uint64_t s;
		uint32_t ns;
		uint64_t want;
	} cases[] = {
		{ 0, 0, 0 },
		{ 0, 1, 1 },
		{ 1733200000, 123456789, 1733200000123456789ull },
		{ 5, 999999999, 5999999999ull },
		{ 5, 1000000000, 0 },		/* no nanosecond count */
		{ 5, UINT32_MAX, 0 },
		{ 18446744073ull, 709551615, UINT64_MAX },	/* the last ns */
		{ 18446744073ull, 709551616, 0 },		/* past 2^64 ns */
		{ 18446744074ull, 0, 0 },
		{ UINT64_MAX, 0, 0 },
	};
	struct fix *f = *state;
	struct roce_meta m = { 0 };
	struct roce_pkt p;
	uint64_t start, end;

	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m.start_s = cases[i].s;
		m.start_ns = cases[i].ns;
		m.meta_s = cases[i].s;
		m.meta_ns = cases[i].ns;
		roce_meta_times(&m, &start, &end);
		if (start != cases[i].want || end != cases[i].want)
			fail_msg("case %u: %" PRIu64 " %" PRIu64 ", want %" PRIu64,
				 i, start, end, cases[i].want);
	}
	/* As the sender puts them on the wire: [12] s, [20] ns, [36] s, [44] ns. */
	f->tx.t_start_ns = 1733200000123456789ull;
	f->tx.t_end_ns = 1733200001000000001ull;
	make_frame(f, 0);
	assert_int_equal(roce_parse(f->pkt[5], f->len[5], &p), 0);
	roce_meta_parse(p.payload, &m);
	assert_int_equal(m.start_s, 1733200000);
	assert_int_equal(m.start_ns, 123456789);
	assert_int_equal(m.meta_s, 1733200001);
	assert_int_equal(m.meta_ns, 1);
	roce_meta_times(&m, &start, &end);
	assert_int_equal(start, f->tx.t_start_ns);
	assert_int_equal(end, f->tx.t_end_ns);
}

static void test_place(void **state)
{
	struct sender_layout l = { .base = 0x1000, .stride = 0x100, .pages = 4 };
	uint64_t off;
	uint32_t page;

	(void)state;
	assert_int_equal(roce_place(&l, 0x1000, 0x100, &page, &off), 0);
	assert_int_equal(page, 0);
	assert_int_equal(off, 0);
	assert_int_equal(roce_place(&l, 0x1310, 0xf0, &page, &off), 0);
	assert_int_equal(page, 3);
	assert_int_equal(off, 0x10);
	assert_int_equal(roce_place(&l, 0xfff, 1, &page, &off), -ERANGE);
	assert_int_equal(roce_place(&l, 0x1400, 1, &page, &off), -ERANGE);
	assert_int_equal(roce_place(&l, 0x10f0, 0x11, &page, &off), -ERANGE);
	assert_int_equal(roce_place(&l, UINT64_MAX, UINT64_MAX, &page, &off), -ERANGE);
	assert_int_equal(roce_place(&l, 0x1000, UINT64_MAX, &page, &off), -ERANGE);
	l.stride = 0;
	assert_int_equal(roce_place(&l, 0x1000, 1, &page, &off), -ERANGE);
}

static void test_psn_and_payload(void **state)
{
	(void)state;
	assert_int_equal(roce_psn_diff(5, 5), 0);
	assert_int_equal(roce_psn_diff(7, 5), 2);
	assert_int_equal(roce_psn_diff(3, 5), -2);
	assert_int_equal(roce_psn_diff(1, 0xffffff), 2);
	assert_int_equal(roce_psn_diff(0xfffffe, 0), -2);
	assert_int_equal(roce_payload_size(1500), 1408);
	assert_int_equal(roce_payload_size(9000), 8832);
	assert_int_equal(roce_payload_size(74), 0);
	assert_int_equal(roce_payload_size(200), 0);
}

static void test_frames_in_order(void **state)
{
	struct fix *f = *state;

	for (uint32_t n = 0; n < 6; n++) {
		make_frame(f, n);
		feed_all(f);
		assert_int_equal(f->n_done, n + 1);
		assert_delivered(f, n);
		f->armed++;	/* the stream re-arms the slot */
	}
	assert_int_equal(f->nf.cnt.frames, 6);
	assert_int_equal(f->nf.cnt.packets, 36);
	assert_int_equal(f->nf.cnt.bytes, 6 * FRAME);
	assert_int_equal(f->nf.cnt.lost_packets + f->nf.cnt.incomplete_frames +
			 f->nf.cnt.late_packets + f->nf.cnt.bad_packets, 0);
}

/* Frame 1 goes wrong as @fault says; frames 0 and 2 are whole. */
static void around(struct fix *f, void (*fault)(struct fix *f))
{
	make_frame(f, 0);
	feed_all(f);
	make_frame(f, 1);
	fault(f);
	make_frame(f, 2);
	feed_all(f);
}

static void lose_one(struct fix *f)
{
	for (unsigned i = 0; i < f->n_pkt; i++)
		if (i != 2)
			feed(f, i);
}

static void test_lost_packet(void **state)
{
	struct fix *f = *state;

	around(f, lose_one);
	assert_int_equal(f->n_done, 2);
	assert_int_equal(f->done[0].seq, 0);
	assert_delivered(f, 2);
	assert_int_equal(f->nf.cnt.lost_packets, 1);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	/* The torn frame's slot took frame 2: two slots used, not three. */
	assert_int_equal(f->next, 2);
}

static void lose_first(struct fix *f)
{
	for (unsigned i = 1; i < f->n_pkt; i++)
		feed(f, i);
}

static void test_lost_first_packet(void **state)
{
	struct fix *f = *state;

	around(f, lose_first);
	assert_int_equal(f->n_done, 2);
	assert_delivered(f, 2);
	assert_int_equal(f->nf.cnt.lost_packets, 1);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
}

static void duplicate(struct fix *f)
{
	for (unsigned i = 0; i < f->n_pkt; i++) {
		feed(f, i);
		if (i == 1 || i == 4)
			feed(f, i);
	}
}

static void test_duplicated_packets(void **state)
{
	struct fix *f = *state;

	around(f, duplicate);
	assert_int_equal(f->n_done, 3);
	assert_int_equal(f->done[1].seq, 1);
	assert_delivered(f, 2);
	assert_int_equal(f->nf.cnt.late_packets, 2);
	assert_int_equal(f->nf.cnt.incomplete_frames, 0);
}

static void reorder(struct fix *f)
{
	feed(f, 0);
	feed(f, 2);
	feed(f, 1);
	for (unsigned i = 3; i < f->n_pkt; i++)
		feed(f, i);
}

static void test_reordered_packets(void **state)
{
	struct fix *f = *state;

	around(f, reorder);
	assert_int_equal(f->n_done, 2);
	assert_delivered(f, 2);
	assert_int_equal(f->nf.cnt.late_packets, 1);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
}

static void lose_immediate(struct fix *f)
{
	for (unsigned i = 0; i + 1 < f->n_pkt; i++)
		feed(f, i);
}

static void test_lost_immediate(void **state)
{
	struct fix *f = *state;

	/* Frames 1 and 2 merge into one; it must not pass for frame 2. */
	around(f, lose_immediate);
	assert_int_equal(f->n_done, 1);
	assert_int_equal(f->nf.cnt.lost_packets, 1);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	make_frame(f, 3);
	feed_all(f);
	assert_int_equal(f->n_done, 2);
	assert_delivered(f, 3);
}

static void wrong_keys(struct fix *f)
{
	uint8_t b[ROCE_MAX_PACKET];

	for (unsigned i = 0; i < f->n_pkt; i++) {
		memcpy(b, f->pkt[i], f->len[i]);
		hsb_put(b + ROCE_BTH_SIZE + 8, 0xbeef0000, 4);	/* stale rkey */
		net_frame_packet(&f->nf, b, f->len[i], 0);
		memcpy(b, f->pkt[i], f->len[i]);
		hsb_put(b + 5, 0x124, 3);			/* another QP */
		net_frame_packet(&f->nf, b, f->len[i], 0);
		feed(f, i);
	}
}

static void test_wrong_rkey_and_qpn(void **state)
{
	struct fix *f = *state;

	around(f, wrong_keys);
	assert_int_equal(f->n_done, 3);
	assert_int_equal(f->nf.cnt.wrong_rkey, 6);
	assert_int_equal(f->nf.cnt.wrong_qp, 6);
	assert_int_equal(f->nf.cnt.incomplete_frames, 0);
	assert_delivered(f, 2);
}

static void test_only_wrong_rkey(void **state)
{
	struct fix *f = *state;

	/* A stale sender writes nothing at all. */
	f->tx.rkey = 0xbeef0000;
	make_frame(f, 0);
	feed_all(f);
	assert_int_equal(f->n_done, 0);
	assert_int_equal(f->next, 0);
	assert_int_equal(f->nf.cnt.wrong_rkey, 6);
	for (unsigned s = 0; s < SLOTS; s++)
		for (unsigned i = 0; i < SLOT_SIZE; i++)
			assert_int_equal(f->ring[s][i], 0);
}

static void test_no_slot(void **state)
{
	struct fix *f = *state;

	f->armed = 0;
	make_frame(f, 0);
	feed_all(f);
	assert_int_equal(f->n_done, 0);
	assert_int_equal(f->nf.cnt.no_slot_frames, 1);
	assert_int_equal(f->nf.cnt.bytes, 0);
	f->armed = 1;
	make_frame(f, 1);
	feed_all(f);
	assert_int_equal(f->n_done, 1);
	assert_delivered(f, 1);
}

static void misplace(struct fix *f)
{
	uint8_t b[ROCE_MAX_PACKET];

	for (unsigned i = 0; i < f->n_pkt; i++) {
		memcpy(b, f->pkt[i], f->len[i]);
		if (i == 3)	/* past the last page */
			hsb_put(b + ROCE_BTH_SIZE, 0x10000000000ull + SLOTS * SLOT_SIZE, 8);
		net_frame_packet(&f->nf, b, f->len[i], 0);
	}
}

static void test_out_of_ring(void **state)
{
	struct fix *f = *state;

	around(f, misplace);
	assert_int_equal(f->n_done, 2);
	assert_int_equal(f->nf.cnt.bad_packets, 1);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	assert_delivered(f, 2);
}

static void long_frame(struct fix *f)
{
	uint8_t b[ROCE_MAX_PACKET];

	/* The metadata claims more bytes than a frame may have. */
	for (unsigned i = 0; i < f->n_pkt; i++) {
		memcpy(b, f->pkt[i], f->len[i]);
		if (i == f->n_pkt - 1)
			hsb_put(b + ROCE_BTH_SIZE + ROCE_RETH_SIZE + ROCE_IMM_SIZE + 24,
				FRAME + 1, 8);
		net_frame_packet(&f->nf, b, f->len[i], 0);
	}
}

static void test_frame_too_long(void **state)
{
	struct fix *f = *state;

	around(f, long_frame);
	assert_int_equal(f->n_done, 2);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	assert_delivered(f, 2);
}

static void bad_immediate(struct fix *f)
{
	uint8_t b[ROCE_MAX_PACKET];

	for (unsigned i = 0; i < f->n_pkt; i++) {
		memcpy(b, f->pkt[i], f->len[i]);
		if (i == f->n_pkt - 1)	/* another page */
			b[ROCE_BTH_SIZE + ROCE_RETH_SIZE + 3] ^= 1;
		net_frame_packet(&f->nf, b, f->len[i], 0);
	}
}

static void test_bad_immediate(void **state)
{
	struct fix *f = *state;

	around(f, bad_immediate);
	assert_int_equal(f->n_done, 2);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
}

static void skip_psn(struct fix *f)
{
	uint8_t b[ROCE_MAX_PACKET];

	/* No byte missing, but a PSN skipped: a packet was lost. */
	for (unsigned i = 0; i < f->n_pkt; i++) {
		memcpy(b, f->pkt[i], f->len[i]);
		if (i >= 3) {
			uint32_t psn = (f->tx.psn - f->n_pkt + i + 1) & ROCE_PSN_MASK;

			hsb_put(b + 9, psn, 3);
			if (i == f->n_pkt - 1)
				hsb_put(b + ROCE_BTH_SIZE + ROCE_RETH_SIZE,
					(psn & 0xfffffu) << 12 | 1, 4);
		}
		net_frame_packet(&f->nf, b, f->len[i], 0);
	}
	f->tx.psn++;
}

static void test_psn_gap_alone(void **state)
{
	struct fix *f = *state;

	around(f, skip_psn);
	assert_int_equal(f->nf.cnt.lost_packets, 1);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	assert_int_equal(f->n_done, 2);
	assert_delivered(f, 2);
}

static void overlap(struct fix *f)
{
	uint8_t b[ROCE_MAX_PACKET];

	/* Every PSN in order, but packet 2 rewrites packet 1's bytes. */
	for (unsigned i = 0; i < f->n_pkt; i++) {
		memcpy(b, f->pkt[i], f->len[i]);
		if (i == 2)
			memcpy(b + ROCE_BTH_SIZE, f->pkt[1] + ROCE_BTH_SIZE, 8);
		net_frame_packet(&f->nf, b, f->len[i], 0);
	}
}

static void test_overlapping_write(void **state)
{
	struct fix *f = *state;

	around(f, overlap);
	assert_int_equal(f->nf.cnt.lost_packets, 0);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	assert_int_equal(f->n_done, 2);
	assert_delivered(f, 2);
}

static void test_stale_frame_number(void **state)
{
	struct fix *f = *state;

	make_frame(f, 10);
	feed_all(f);
	make_frame(f, 9);	/* a replay of an older frame */
	feed_all(f);
	assert_int_equal(f->n_done, 1);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	/* 16-bit frame numbers wrap into a 64-bit sequence. */
	f->armed = 3;
	make_frame(f, 30000);
	feed_all(f);
	make_frame(f, 60000);
	feed_all(f);
	make_frame(f, 0x10005);
	feed_all(f);
	assert_int_equal(f->n_done, 4);
	assert_int_equal(f->done[3].seq, 5 + 0x10000);
}

/* Frames 0..@n - 1 fed whole from the sender's state now, re-armed each. */
static unsigned feed_frames(struct fix *f, uint32_t first, unsigned n, uint32_t psn_mask)
{
	unsigned before = f->n_done;

	for (unsigned i = 0; i < n; i++) {
		make_frame(f, first + i);
		f->tx.psn &= psn_mask;	/* a sender counting fewer PSN bits */
		feed_all(f);
		f->armed++;
		f->n_done = f->n_done > 12 ? 12 : f->n_done;
	}
	return f->n_done - before;
}

/*
 * A sender whose PSN counts 20 bits (HSB's emulator) wraps from 2^20 - 1
 * to 0: fpgad follows it (one resync, counted), losing at most the frame
 * across the wrap, and every frame after it is delivered.  A sender that
 * counts all 24 bits wraps with no resync at all.
 */
static void test_psn_wraps(void **state)
{
	struct fix *f = *state;

	f->tx.psn = 0xfffff - 8;	/* frames of 6 packets: the 2nd wraps */
	feed_frames(f, 0, 6, 0xfffff);
	assert_int_equal(f->nf.cnt.psn_resyncs, 1);
	assert_true(f->nf.cnt.frames >= 5);
	assert_int_equal(f->nf.cnt.late_packets, 0);
	assert_delivered(f, 5);

	/* A new ring (the receiver starts over), then a 24-bit sender. */
	net_frame_restart(&f->nf, f->nf.cfg.rkey);
	f->tx.psn = ROCE_PSN_MASK - 8;
	f->nf.cnt = (struct source_counters){ 0 };
	feed_frames(f, 6, 6, ROCE_PSN_MASK);
	assert_int_equal(f->nf.cnt.psn_resyncs, 0);
	assert_int_equal(f->nf.cnt.frames, 6);
	assert_delivered(f, 11);
}

/*
 * A sender restarted mid-lease (PSN and frame numbers from 0 again), and
 * one whose PSN jumps back by 100: followed, the sequence handed on still
 * grows, nothing after the restart is lost.
 */
static void test_sender_restarts(void **state)
{
	struct fix *f = *state;
	uint64_t seq;

	f->tx.psn = 5000;
	feed_frames(f, 40, 3, ROCE_PSN_MASK);
	assert_int_equal(f->nf.cnt.frames, 3);
	seq = f->done[f->n_done - 1].seq;
	f->tx.psn = 0;		/* restarted */
	feed_frames(f, 0, 3, ROCE_PSN_MASK);
	assert_int_equal(f->nf.cnt.psn_resyncs, 1);
	assert_int_equal(f->nf.cnt.frames, 6);
	assert_true(f->done[f->n_done - 1].seq > seq);
	f->tx.psn -= 100;	/* a jump back */
	feed_frames(f, 3, 3, ROCE_PSN_MASK);
	assert_int_equal(f->nf.cnt.psn_resyncs, 2);
	assert_int_equal(f->nf.cnt.frames, 9);
	/* A duplicate (a few packets behind) is still only late. */
	feed(f, 3);
	assert_int_equal(f->nf.cnt.late_packets, 1);
	assert_int_equal(f->nf.cnt.psn_resyncs, 2);
}

/*
 * A torn frame numbered 100 ahead does not move the frame numbers on:
 * the clean frames after it are delivered, not refused as stale.
 */
static void test_torn_frame_numbered_ahead(void **state)
{
	struct fix *f = *state;

	make_frame(f, 0);
	feed_all(f);
	make_frame(f, 101);
	lose_one(f);		/* torn */
	f->armed++;
	assert_int_equal(feed_frames(f, 1, 5, ROCE_PSN_MASK), 5);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	assert_delivered(f, 5);
}

/*
 * The sender's frame start and end times reach the frame handed on
 * exactly; a sender that sends none (zeros) gives 0, and so does one
 * whose nanoseconds are no nanoseconds.
 */
static void test_sender_times(void **state)
{
	struct fix *f = *state;

	f->tx.t_start_ns = 1733200000123456789ull;
	f->tx.t_end_ns = 1733200000133456789ull;
	make_frame(f, 0);
	feed_all(f);
	assert_delivered(f, 0);
	assert_int_equal(f->done[0].t_sender_start_ns, 1733200000123456789ull);
	assert_int_equal(f->done[0].t_sender_end_ns, 1733200000133456789ull);
	f->armed++;
	f->tx.t_start_ns = f->tx.t_end_ns = 0;
	make_frame(f, 1);
	feed_all(f);
	assert_delivered(f, 1);
	assert_int_equal(f->done[1].t_sender_start_ns, 0);
	assert_int_equal(f->done[1].t_sender_end_ns, 0);
	f->armed++;
	make_frame(f, 2);
	hsb_put(f->pkt[5] + ROCE_BTH_SIZE + ROCE_RETH_SIZE + ROCE_IMM_SIZE + 20,
		1000000000u, 4);
	feed_all(f);
	assert_delivered(f, 2);
	assert_int_equal(f->done[2].t_sender_start_ns, 0);
}

/*
 * A frame of no bytes (metadata saying 0 bytes written) is no frame, as
 * on the RoCE path: counted incomplete, never handed on, and the slot
 * armed for it takes the next frame.
 */
static void test_zero_byte_frame(void **state)
{
	struct fix *f = *state;
	uint8_t pkt[ROCE_MAX_PACKET];
	size_t len;

	f->armed = 1;
	f->tx.frame_number = 0;
	assert_int_equal(hsb_tx_packets(&f->tx, 0), 1);
	len = hsb_tx_packet(&f->tx, f->frame, 0, 0, pkt);
	f->tx.psn++;
	f->tx.page = (f->tx.page + 1) % SLOTS;
	net_frame_packet(&f->nf, pkt, len, 1000);
	assert_int_equal(f->n_done, 0);
	assert_int_equal(f->nf.cnt.incomplete_frames, 1);
	assert_int_equal(f->nf.cnt.frames, 0);
	make_frame(f, 1);
	feed_all(f);
	assert_int_equal(f->n_done, 1);
	assert_delivered(f, 1);
	assert_int_equal(f->done[0].cookie, 0);	/* the slot armed before */
	assert_int_equal(f->nf.cnt.lost_packets + f->nf.cnt.late_packets, 0);
}

static void test_release(void **state)
{
	struct fix *f = *state;
	struct net_slot s;

	assert_false(net_frame_release(&f->nf, &s));
	make_frame(f, 0);
	feed(f, 0);
	assert_true(net_frame_release(&f->nf, &s));
	assert_int_equal(s.cookie, 0);
	/* The rest of that frame starts nothing and delivers nothing. */
	for (unsigned i = 1; i < f->n_pkt; i++)
		feed(f, i);
	assert_int_equal(f->n_done, 0);
	make_frame(f, 1);
	feed_all(f);
	assert_int_equal(f->n_done, 1);
	assert_delivered(f, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_parse, setup, teardown),
		cmocka_unit_test_setup_teardown(test_parse_refuses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_meta_times, setup, teardown),
		cmocka_unit_test(test_place),
		cmocka_unit_test(test_psn_and_payload),
		cmocka_unit_test_setup_teardown(test_frames_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_packet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_first_packet, setup, teardown),
		cmocka_unit_test_setup_teardown(test_duplicated_packets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reordered_packets, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lost_immediate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_rkey_and_qpn, setup, teardown),
		cmocka_unit_test_setup_teardown(test_only_wrong_rkey, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_slot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_of_ring, setup, teardown),
		cmocka_unit_test_setup_teardown(test_frame_too_long, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_immediate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_psn_gap_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overlapping_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_frame_number, setup, teardown),
		cmocka_unit_test_setup_teardown(test_psn_wraps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sender_restarts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_torn_frame_numbered_ahead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sender_times, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_byte_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_release, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
