// SPDX-License-Identifier: MIT
/*
 * test_roce_rx.c - frames from RoCE completions (roce_rx.c) through a fake
 * verbs layer: a fake NIC applies an HSB sender's packets (hsb_tx.h) to the
 * landing ring as a UC QP would (each WRITE at its address, a completion
 * for each WRITE with Immediate) and hands the completions to roce_rx's
 * poll.  Every fault the receiver cannot see as a packet: a lost data
 * packet (canary), a lost immediate (PSN gap), an immediate before its
 * frame's last packet, a replayed frame, an immediate that disagrees with
 * its metadata, an overrun (the sender back at a page before or while it
 * is copied), no slot armed.
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
#include "device/net/roce_rx.h"

#define PAGES 4u
#define STRIDE 8192u
#define SLOTS 8u
#define SLOT_SIZE 8192u
#define FRAME 5000u
#define PAYLOAD 1024u
#define DATA_PKTS 5u		/* ceil(FRAME / PAYLOAD) */

enum fault { F_NONE, F_DROP, F_LOSE_IMM, F_HOLD_LAST };

struct fix {
	unsigned char landing[PAGES * STRIDE];
	unsigned char slots[SLOTS][SLOT_SIZE];
	struct roce_rx rx;
	struct hsb_tx tx;
	unsigned char frame[FRAME];
	uint8_t held[ROCE_MAX_PACKET];	/* a packet the network delays */
	size_t held_len;

	struct roce_wc q[64];		/* the NIC's completion queue */
	unsigned q_n;
	unsigned posted;		/* receive requests posted again */
	unsigned armed, next;		/* slots take() may hand out */
	unsigned n_done;
	struct net_frame_done done[32];
	/* Called at each poll: the sender acting while fpgad works. */
	void (*on_poll)(struct fix *f);
	unsigned polls;
	unsigned char *heap_slot;	/* test_short_last_chunk's */
	/* With a landing io (setup_io): its calls, and a call made to fail. */
	unsigned io_calls, io_fail_at;
	unsigned waits, wait_fail_at;	/* ... its waits, and one made to fail */
	bool dev_slots;			/* slots at addresses the CPU cannot reach */
	/* Its calls queued, done at the next wait (as a GPU's would be). */
	struct io_op {
		unsigned char *dst;
		const unsigned char *src;
		uint64_t dpitch, spitch;
		size_t width, n;
		unsigned char data[1024];	/* a put's source, taken at the call */
	} ops[8];
	unsigned n_ops;
};

/* Where a "GPU" slot seems to be: nothing the CPU may touch. */
#define DEV_SLOTS 0xd00000000000ull

/* --- the fake verbs layer -------------------------------------------------- */

static int fake_poll(void *user, struct roce_wc *wc, unsigned max)
{
	struct fix *f = user;
	unsigned n = f->q_n < max ? f->q_n : max;

	f->polls++;
	if (f->on_poll)
		f->on_poll(f);
	memcpy(wc, f->q, n * sizeof(*wc));
	memmove(f->q, f->q + n, (f->q_n - n) * sizeof(*wc));
	f->q_n -= n;
	return (int)n;
}

static int fake_post_recv(void *user, unsigned n)
{
	((struct fix *)user)->posted += n;
	return 0;
}

static int fake_take(void *user, struct net_slot *ret_slot)
{
	struct fix *f = user;

	if (!f->armed)
		return -EAGAIN;
	f->armed--;
	ret_slot->base = f->dev_slots ?
		(unsigned char *)(uintptr_t)(DEV_SLOTS + f->next % SLOTS * SLOT_SIZE) :
		f->slots[f->next % SLOTS];
	ret_slot->cookie = f->next++ % SLOTS;
	return 0;
}

static void fake_done(void *user, const struct net_frame_done *d)
{
	struct fix *f = user;

	assert_true(f->n_done < 32);
	f->done[f->n_done++] = *d;
}

static const struct roce_rx_ops fake_ops = {
	.poll = fake_poll,
	.post_recv = fake_post_recv,
	.take = fake_take,
	.done = fake_done,
};

/* The NIC: a UC WRITE lands at its address; WRITE with Immediate completes. */
static void nic_apply(struct fix *f, const uint8_t *pkt, size_t len)
{
	struct roce_pkt p;
	uint32_t page;
	uint64_t off;

	assert_int_equal(roce_parse(pkt, len, &p), 0);
	assert_int_equal(roce_place(&f->tx.lay, p.va, p.dma_len, &page, &off), 0);
	memcpy(f->landing + (uint64_t)page * STRIDE + off, p.payload, p.dma_len);
	if (p.opcode == ROCE_OP_UC_WRITE_ONLY_IMM) {
		assert_true(f->q_n < 64);
		f->q[f->q_n++] = (struct roce_wc){ .has_imm = true, .imm = p.imm };
	}
}

/* The sender: frame @seq into its next page, with @fault. */
static void send_frame(struct fix *f, uint32_t seq, enum fault fault)
{
	uint32_t n = hsb_tx_packets(&f->tx, FRAME);
	uint8_t pkt[ROCE_MAX_PACKET];

	for (unsigned i = 0; i < FRAME; i++)
		f->frame[i] = (unsigned char)(seq * 31 + i);
	f->tx.frame_number = seq;
	for (uint32_t i = 0; i < n; i++) {
		size_t len = hsb_tx_packet(&f->tx, f->frame, FRAME, i, pkt);

		if ((fault == F_DROP && i == 2) || (fault == F_LOSE_IMM && i == n - 1))
			continue;
		if (fault == F_HOLD_LAST && i == n - 2) {
			memcpy(f->held, pkt, len);
			f->held_len = len;
			continue;
		}
		nic_apply(f, pkt, len);
	}
	f->tx.psn = (f->tx.psn + n) & ROCE_PSN_MASK;
	f->tx.page = (f->tx.page + 1) % PAGES;
}

/*
 * A landing ring roce_rx cannot address (GPU memory): reached only
 * through these, which work on f->landing and count their calls.
 */
/* A call: false for the one made to fail; its range inside the ring. */
static bool io_call(struct fix *f, uint64_t off, uint64_t pitch, size_t width,
		    size_t n)
{
	assert_true(off + (n ? (n - 1) * pitch + width : 0) <= sizeof(f->landing));
	return ++f->io_calls != f->io_fail_at;
}

/* @n pieces of @width bytes, @spitch apart at @src, to @dpitch apart at @dst. */
static void strided(unsigned char *dst, uint64_t dpitch, const unsigned char *src,
		    uint64_t spitch, size_t width, size_t n)
{
	for (size_t i = 0; i < n; i++)
		memcpy(dst + i * dpitch, src + i * spitch, width);
}

static void io_queue(struct fix *f, unsigned char *dst, uint64_t dpitch,
		     const unsigned char *src, uint64_t spitch, size_t width,
		     size_t n)
{
	assert_true(f->n_ops < 8);
	f->ops[f->n_ops++] = (struct io_op){ .dst = dst, .src = src, .dpitch = dpitch,
					     .spitch = spitch, .width = width, .n = n };
}

static int io_get(void *user, void *dst, uint64_t off, uint64_t pitch,
		  size_t width, size_t n)
{
	struct fix *f = user;

	if (!io_call(f, off, pitch, width, n))
		return -EIO;
	io_queue(f, dst, width, f->landing + off, pitch, width, n);
	return 0;
}

static int io_put(void *user, uint64_t off, uint64_t pitch, const void *src,
		  size_t width, size_t n)
{
	struct fix *f = user;
	struct io_op *op;

	if (!io_call(f, off, pitch, width, n))
		return -EIO;
	assert_true(width * n <= sizeof(f->ops[0].data));
	io_queue(f, f->landing + off, pitch, NULL, width, width, n);
	op = &f->ops[f->n_ops - 1];
	memcpy(op->data, src, width * n);	/* reusable once this returns */
	op->src = op->data;
	return 0;
}

static int io_copy_out(void *user, void *dst, uint64_t off, size_t len)
{
	struct fix *f = user;
	uint64_t d = (uintptr_t)dst - DEV_SLOTS;

	/* A "GPU" slot is reached only here, as a device copy would. */
	if (f->dev_slots) {
		assert_true((uintptr_t)dst >= DEV_SLOTS && d + len <= sizeof(f->slots));
		dst = (unsigned char *)f->slots + d;
	}
	return io_get(user, dst, off, len, len, 1);
}

/* The queued calls done in order; a wait made to fail does none of them. */
static int io_wait(void *user)
{
	struct fix *f = user;
	unsigned n = f->n_ops;

	f->n_ops = 0;
	if (++f->waits == f->wait_fail_at)
		return -EIO;
	for (unsigned i = 0; i < n; i++)
		strided(f->ops[i].dst, f->ops[i].dpitch, f->ops[i].src,
			f->ops[i].spitch, f->ops[i].width, f->ops[i].n);
	return 0;
}

static const struct roce_landing_io fake_io = {
	.get = io_get,
	.put = io_put,
	.copy_out = io_copy_out,
	.wait = io_wait,
};

static int setup_with(void **state, bool io)
{
	struct fix *f = calloc(1, sizeof(*f));
	struct roce_rx_cfg cfg = {
		.layout = { .base = 0x10000000000ull, .stride = STRIDE, .pages = PAGES },
		.payload = PAYLOAD,
		.frame_size = FRAME,
		.slot_size = SLOT_SIZE,
		.io = io ? &fake_io : NULL,
		.io_user = f,
	};

	assert_non_null(f);
	/* With the io, no address of the ring: every access goes through it. */
	assert_int_equal(roce_rx_init(&f->rx, &cfg, io ? NULL : f->landing), 0);
	f->tx = (struct hsb_tx){ .qpn = 0x11, .rkey = 0x1234, .lay = cfg.layout,
				 .payload = PAYLOAD, .psn = 0xfffff0 };
	f->armed = SLOTS;
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, false);
}

static int setup_io(void **state)
{
	return setup_with(state, true);
}

static int teardown(void **state)
{
	struct fix *f = *state;

	roce_rx_free(&f->rx);
	free(f);
	return 0;
}

static int drain(struct fix *f)
{
	return roce_rx_drain(&f->rx, &fake_ops, f, 1000);
}

/* The last frame handed on is frame @seq, byte for byte. */
static void expect_delivered(struct fix *f, uint32_t seq)
{
	const struct net_frame_done *d = &f->done[f->n_done - 1];

	assert_true(f->n_done > 0);
	assert_int_equal(d->length, FRAME);
	assert_int_equal(d->seq, seq);
	for (unsigned i = 0; i < FRAME; i++)
		if (f->slots[d->cookie][i] != (unsigned char)(seq * 31 + i))
			fail_msg("frame %u: byte %u differs", seq, i);
}

/* --- cases -------------------------------------------------------------------- */

/* Whole frames, across the PSN wrap and the page ring: each copied, each slot once. */
static void test_good_frames(void **state)
{
	struct fix *f = *state;

	for (uint32_t s = 0; s < 6; s++) {
		send_frame(f, s, F_NONE);
		assert_int_equal(drain(f), 1);
		expect_delivered(f, s);
	}
	assert_int_equal(f->rx.cnt.frames, 6);
	assert_int_equal(f->rx.cnt.bytes, 6 * FRAME);
	assert_int_equal(f->rx.cnt.lost_packets + f->rx.cnt.incomplete_frames +
			 f->rx.cnt.overrun_frames + f->rx.cnt.bad_packets, 0);
	/* Each completion consumed a receive request: each is posted again. */
	assert_int_equal(f->posted, 6);
}

/* A data packet lost: its chunk still holds the canary; the next frame is good. */
static void test_lost_packet_canary(void **state)
{
	struct fix *f = *state;

	send_frame(f, 0, F_NONE);
	send_frame(f, 1, F_DROP);
	send_frame(f, 2, F_NONE);
	assert_int_equal(drain(f), 2);
	assert_int_equal(f->n_done, 2);
	assert_int_equal(f->done[0].seq, 0);
	expect_delivered(f, 2);
	assert_int_equal(f->rx.cnt.lost_packets, 1);
	assert_int_equal(f->rx.cnt.incomplete_frames, 1);
}

/*
 * A page comes back with new canaries: a packet lost in the page's next
 * frame is found, not hidden by the bytes of the frame before.
 */
static void test_canary_renewed(void **state)
{
	struct fix *f = *state;

	for (uint32_t s = 0; s < PAGES; s++) {
		send_frame(f, s, F_NONE);
		assert_int_equal(drain(f), 1);
	}
	send_frame(f, PAGES, F_DROP);	/* page 0 again */
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.lost_packets, 1);
	assert_int_equal(f->rx.cnt.incomplete_frames, 1);
	assert_int_equal(f->n_done, PAGES);
}

/* A lost immediate: the next frame's first PSN is a frame's packets ahead. */
static void test_lost_immediate(void **state)
{
	struct fix *f = *state;

	send_frame(f, 0, F_NONE);
	send_frame(f, 1, F_LOSE_IMM);
	send_frame(f, 2, F_NONE);
	assert_int_equal(drain(f), 2);
	/* Frame 2's own packets all came: it is whole and handed on. */
	expect_delivered(f, 2);
	assert_int_equal(f->rx.cnt.lost_packets, DATA_PKTS + 1);
	assert_int_equal(f->rx.cnt.incomplete_frames, 0);
}

/* The immediate overtakes the frame's last packet: that chunk is missing. */
static void test_immediate_first(void **state)
{
	struct fix *f = *state;

	send_frame(f, 0, F_HOLD_LAST);
	assert_int_equal(drain(f), 0);
	nic_apply(f, f->held, f->held_len);	/* too late */
	assert_int_equal(f->rx.cnt.lost_packets, 1);
	assert_int_equal(f->rx.cnt.incomplete_frames, 1);
	send_frame(f, 1, F_NONE);
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 1);
}

/* A frame sent again (its PSNs behind the last): never handed on twice. */
static void test_replayed_frame(void **state)
{
	struct fix *f = *state;
	struct hsb_tx first = f->tx;

	send_frame(f, 0, F_NONE);
	send_frame(f, 1, F_NONE);
	assert_int_equal(drain(f), 2);
	f->tx = first;
	send_frame(f, 0, F_NONE);
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.late_packets, 1);
	assert_int_equal(f->rx.cnt.incomplete_frames, 1);
	assert_int_equal(f->n_done, 2);
}

/*
 * A sender that starts over (its PSN far behind, its frame numbers from 0
 * again) or whose PSN counts 20 bits and wraps: followed, counted once a
 * time, and every frame after it delivered with a sequence that grows.
 */
static void test_sender_restarts(void **state)
{
	struct fix *f = *state;
	uint64_t seq;

	f->tx.psn = 5000;
	for (uint32_t s = 40; s < 43; s++)
		send_frame(f, s, F_NONE);
	assert_int_equal(drain(f), 3);
	seq = f->done[f->n_done - 1].seq;
	f->tx.psn = 0;		/* restarted: PSN and frame numbers */
	for (uint32_t s = 0; s < 3; s++)
		send_frame(f, s, F_NONE);
	assert_int_equal(drain(f), 3);
	assert_int_equal(f->rx.cnt.psn_resyncs, 1);
	assert_true(f->done[f->n_done - 1].seq > seq);
	/* A 20-bit PSN wrapping: behind by 2^20, followed. */
	f->tx.psn = 0xffffe;
	send_frame(f, 3, F_NONE);
	assert_int_equal(drain(f), 1);
	f->tx.psn &= 0xfffff;
	send_frame(f, 4, F_NONE);
	assert_int_equal(drain(f), 1);
	assert_int_equal(f->rx.cnt.psn_resyncs, 2);
	assert_int_equal(f->rx.cnt.incomplete_frames, 0);
}

/* An immediate whose PSN or page disagrees with the metadata in its page. */
static void test_immediate_mismatch(void **state)
{
	struct fix *f = *state;

	send_frame(f, 0, F_NONE);
	f->q[0].imm += 1u << 12;	/* a PSN the page's frame never had */
	assert_int_equal(drain(f), 0);
	send_frame(f, 1, F_NONE);
	f->q[0].imm = (f->q[0].imm & ~0xfffu) | 7;	/* past the ring */
	assert_int_equal(drain(f), 0);
	send_frame(f, 2, F_NONE);
	f->q[0].imm = (f->q[0].imm & ~0xfffu) | 3;	/* a page not written */
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.bad_packets, 3);
	assert_int_equal(f->n_done, 0);
	/* An error completion is counted and its request posted again. */
	f->q[f->q_n++] = (struct roce_wc){ .status = -EIO };
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.bad_packets, 4);
	assert_int_equal(f->posted, 4);
}

/* Completions pages - 1 frames ahead: the sender may be rewriting the page. */
static void test_overrun_ahead(void **state)
{
	struct fix *f = *state;

	for (uint32_t s = 0; s < PAGES; s++)
		send_frame(f, s, F_NONE);
	assert_int_equal(drain(f), PAGES - 1);
	assert_int_equal(f->rx.cnt.overrun_frames, 1);
	assert_int_equal(f->done[0].seq, 1);
	expect_delivered(f, PAGES - 1);
	/*
	 * Page 0 got no new canaries (they could have torn the frame the
	 * sender was writing): its next frame cannot be checked, and is
	 * counted, not delivered; the one after is checked again.
	 */
	send_frame(f, PAGES, F_DROP);
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.overrun_frames, 2);
	assert_int_equal(f->rx.cnt.lost_packets + f->rx.cnt.incomplete_frames, 0);
	for (uint32_t s = PAGES + 1; s < 2 * PAGES; s++) {
		send_frame(f, s, F_NONE);
		assert_int_equal(drain(f), 1);
	}
	send_frame(f, 2 * PAGES, F_DROP);	/* page 0: checked again */
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.lost_packets, 1);
	assert_int_equal(f->rx.cnt.incomplete_frames, 1);
}

/*
 * The sender a whole ring ahead: the first page holds a newer frame than
 * its immediate says.  An overrun, not a bad immediate nor lost packets.
 */
static void test_lapped_page(void **state)
{
	struct fix *f = *state;

	send_frame(f, 0, F_NONE);
	assert_int_equal(drain(f), 1);
	for (uint32_t s = 1; s <= PAGES + 1; s++)
		send_frame(f, s, F_NONE);
	drain(f);
	assert_int_equal(f->rx.cnt.bad_packets + f->rx.cnt.lost_packets +
			 f->rx.cnt.incomplete_frames + f->rx.cnt.late_packets, 0);
	assert_int_equal(f->rx.cnt.frames + f->rx.cnt.overrun_frames, PAGES + 2);
	assert_true(f->rx.cnt.overrun_frames >= 1);
	/* The count starts over: the next frames are whole and counted so. */
	for (uint32_t s = PAGES + 2; s < 3 * PAGES; s++) {
		send_frame(f, s, F_NONE);
		drain(f);
	}
	expect_delivered(f, 3 * PAGES - 1);
	assert_int_equal(f->rx.cnt.lost_packets + f->rx.cnt.incomplete_frames, 0);
}

/* The sender rewrites the page while it is copied: its metadata changed. */
static void rewrite_page0(struct fix *f)
{
	struct hsb_tx t = f->tx;

	if (f->polls != 2)
		return;
	/* Frame 9's metadata into page 0 (its data is not even needed). */
	t.page = 0;
	t.frame_number = 9;
	t.psn = 0x100;
	{
		uint8_t pkt[ROCE_MAX_PACKET];
		size_t len = hsb_tx_packet(&t, f->frame, FRAME,
					   hsb_tx_packets(&t, FRAME) - 1, pkt);
		uint32_t saved = f->q_n;

		nic_apply(f, pkt, len);
		f->q_n = saved;	/* its completion is not polled yet */
	}
}

/* ... or rewrites a chunk's first bytes, its immediate not yet there. */
static void rewrite_chunk2(struct fix *f)
{
	if (f->polls == 2)
		memset(f->landing + 2 * PAYLOAD, 0xee, 16);
}

static void test_overrun_chunk_during_copy(void **state)
{
	struct fix *f = *state;

	send_frame(f, 0, F_NONE);
	f->on_poll = rewrite_chunk2;
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.overrun_frames, 1);
	assert_int_equal(f->n_done, 0);
}

static void test_overrun_during_copy(void **state)
{
	struct fix *f = *state;

	send_frame(f, 0, F_NONE);
	f->on_poll = rewrite_page0;
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.overrun_frames, 1);
	assert_int_equal(f->n_done, 0);
	/* The slot it held takes the next frame. */
	f->on_poll = NULL;
	send_frame(f, 1, F_NONE);
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 1);
	assert_int_equal(f->done[0].cookie, 0);
}

/*
 * A frame whose last chunk is 3 bytes, into a slot of exactly its size:
 * nothing reads or writes past the slot (valgrind and ASan would say).
 */
static int heap_take(void *user, struct net_slot *ret_slot)
{
	ret_slot->base = ((struct fix *)user)->heap_slot;
	ret_slot->cookie = 0;
	return 0;
}

static void test_short_last_chunk(void **state)
{
	enum { SHORT = 2 * PAYLOAD + 3 };
	struct fix *f = *state;
	struct roce_rx_cfg cfg = {
		.layout = f->tx.lay, .payload = PAYLOAD, .frame_size = SHORT,
		.slot_size = SHORT,
	};
	struct roce_rx_ops ops = fake_ops;
	uint8_t pkt[ROCE_MAX_PACKET];
	unsigned char *slot = malloc(SHORT);
	struct roce_rx rx;

	assert_non_null(slot);
	ops.take = heap_take;
	roce_rx_free(&f->rx);
	assert_int_equal(roce_rx_init(&rx, &cfg, f->landing), 0);
	for (uint32_t i = 0; i < hsb_tx_packets(&f->tx, SHORT); i++)
		nic_apply(f, pkt, hsb_tx_packet(&f->tx, f->frame, SHORT, i, pkt));
	f->heap_slot = slot;
	assert_int_equal(roce_rx_drain(&rx, &ops, f, 1), 1);
	assert_memory_equal(slot, f->frame, SHORT);
	roce_rx_free(&rx);
	free(slot);
}

/*
 * The sender's frame start and end times reach the frame handed on
 * exactly, read from the landing page's metadata; none sent gives 0.
 */
static void test_sender_times(void **state)
{
	struct fix *f = *state;

	f->tx.t_start_ns = 1733200000123456789ull;
	f->tx.t_end_ns = 1733200000133456789ull;
	send_frame(f, 0, F_NONE);
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 0);
	assert_int_equal(f->done[0].t_sender_start_ns, 1733200000123456789ull);
	assert_int_equal(f->done[0].t_sender_end_ns, 1733200000133456789ull);
	f->tx.t_start_ns = f->tx.t_end_ns = 0;
	send_frame(f, 1, F_NONE);
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 1);
	assert_int_equal(f->done[1].t_sender_start_ns, 0);
	assert_int_equal(f->done[1].t_sender_end_ns, 0);
}

/*
 * A frame of no bytes (its metadata, where the receiver reads it, saying
 * 0 bytes written) is no frame, as on the UDP path: counted incomplete,
 * never handed on, and the slot armed for it takes the next frame.
 */
static void test_zero_byte_frame(void **state)
{
	struct fix *f = *state;
	uint64_t page_va = f->tx.lay.base + (uint64_t)f->tx.page * STRIDE;
	uint8_t pkt[ROCE_MAX_PACKET];
	size_t len;

	f->armed = 1;
	f->tx.frame_number = 0;
	len = hsb_tx_packet(&f->tx, f->frame, 0, 0, pkt);
	/* The metadata block at roundup(frame_size, 128), where HSB puts it. */
	hsb_put(pkt + ROCE_BTH_SIZE, page_va + roce_rx_meta_offset(FRAME), 8);
	nic_apply(f, pkt, len);
	f->tx.psn = (f->tx.psn + 1) & ROCE_PSN_MASK;
	f->tx.page = (f->tx.page + 1) % PAGES;
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.incomplete_frames, 1);
	assert_int_equal(f->rx.cnt.frames, 0);
	send_frame(f, 1, F_NONE);
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 1);
	assert_int_equal(f->done[0].cookie, 0);	/* the slot armed before */
}

/* No slot armed: the frame is dropped and counted; the next slot takes one. */
static void test_no_slot(void **state)
{
	struct fix *f = *state;

	f->armed = 0;
	send_frame(f, 0, F_NONE);
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.no_slot_frames, 1);
	f->armed = 1;
	send_frame(f, 1, F_NONE);
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 1);
}

/* A new ring: the sender starts over from any PSN and frame number. */
static void test_restart(void **state)
{
	struct fix *f = *state;

	send_frame(f, 10, F_NONE);
	assert_int_equal(drain(f), 1);
	roce_rx_restart(&f->rx);
	f->tx.psn = 5;
	f->tx.page = 0;
	send_frame(f, 0, F_NONE);
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 0);
	assert_int_equal(f->rx.cnt.late_packets + f->rx.cnt.lost_packets, 0);
}

/*
 * Through a landing io (a ring in GPU memory): frames verified and copied,
 * a lost packet still found by its canary, the pages re-armed through it.
 */
static void test_landing_io(void **state)
{
	struct fix *f = *state;

	assert_true(f->io_calls > 0);	/* the canaries went through it */
	for (uint32_t s = 0; s < 2 * PAGES; s++) {
		send_frame(f, s, s == 3 ? F_DROP : F_NONE);
		assert_int_equal(drain(f), s == 3 ? 0 : 1);
		if (s != 3)
			expect_delivered(f, s);
	}
	assert_int_equal(f->rx.cnt.frames, 2 * PAGES - 1);
	assert_int_equal(f->rx.cnt.lost_packets, 1);
	assert_int_equal(f->rx.cnt.incomplete_frames, 1);
}

/*
 * Each access of a frame's check and copy failing once: that frame is
 * never handed on, and the next one is.
 */
static void test_landing_io_fails(void **state)
{
	struct fix *f = *state;
	unsigned base, checks;

	/* A good frame: how many accesses it takes, the re-arm's two last. */
	base = f->io_calls;
	send_frame(f, 0, F_NONE);
	assert_int_equal(drain(f), 1);
	checks = f->io_calls - base - 2;
	assert_true(checks >= 3);	/* metadata, chunks, copy, recheck */
	for (unsigned k = 1; k <= checks; k++) {
		f->armed = SLOTS;
		f->io_fail_at = f->io_calls + k;
		send_frame(f, 2 * k - 1, F_NONE);
		assert_int_equal(drain(f), 0);
		f->io_fail_at = 0;
		send_frame(f, 2 * k, F_NONE);
		assert_int_equal(drain(f), 1);
		expect_delivered(f, 2 * k);
	}
	assert_int_equal(f->rx.cnt.frames, 1 + checks);
}

/*
 * Each of a frame's two waits (its checks; its copy and recheck) failing:
 * that frame is never handed on.  The first also fails the canaries the
 * frame before queued for its page: that page is stale, and its next
 * frame (with a lost packet the canaries would have shown) is counted as
 * overrun, never delivered.
 */
static void test_landing_io_wait_fails(void **state)
{
	struct fix *f = *state;
	unsigned base = f->waits;

	f->armed = SLOTS;
	send_frame(f, 0, F_NONE);			/* page 0 */
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 0);
	assert_int_equal(f->waits - base, 2);

	f->wait_fail_at = f->waits + 1;			/* page 1: its checks */
	send_frame(f, 1, F_NONE);
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.bad_packets, 1);
	send_frame(f, 2, F_NONE);			/* page 2 */
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 2);

	f->wait_fail_at = f->waits + 2;			/* page 3: its copy */
	send_frame(f, 3, F_NONE);
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.overrun_frames, 1);

	send_frame(f, 4, F_DROP);			/* page 0, stale */
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.overrun_frames, 2);
	send_frame(f, 5, F_NONE);			/* page 1, armed again */
	assert_int_equal(drain(f), 1);
	expect_delivered(f, 5);
	assert_int_equal(f->rx.cnt.frames, 3);
}

static void rewrite_page1_chunk2(struct fix *f)
{
	if (f->polls == 2)
		memset(f->landing + STRIDE + 2 * PAYLOAD, 0xee, 16);
}

/*
 * Slots in GPU memory (a GPU landing ring copies into them on the GPU):
 * frames checked and copied without the CPU touching a slot, a sender
 * rewriting a chunk during the copy still caught.
 */
static void test_landing_io_gpu_slots(void **state)
{
	struct fix *f = *state;

	f->dev_slots = true;
	for (uint32_t s = 0; s < PAGES + 1; s++) {
		send_frame(f, s, F_NONE);
		assert_int_equal(drain(f), 1);
		expect_delivered(f, s);
	}
	/* Into page 1: its chunk 2 rewritten at the poll after the copy. */
	send_frame(f, PAGES + 1, F_NONE);
	f->polls = 0;
	f->on_poll = rewrite_page1_chunk2;
	assert_int_equal(drain(f), 0);
	assert_int_equal(f->rx.cnt.overrun_frames, 1);
	assert_int_equal(f->rx.cnt.frames, PAGES + 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(t) cmocka_unit_test_setup_teardown(t, setup, teardown)
		T(test_good_frames),
		T(test_sender_times),
		T(test_zero_byte_frame),
		T(test_lost_packet_canary),
		T(test_canary_renewed),
		T(test_lost_immediate),
		T(test_immediate_first),
		T(test_replayed_frame),
		T(test_sender_restarts),
		T(test_immediate_mismatch),
		T(test_overrun_ahead),
		T(test_overrun_during_copy),
		T(test_overrun_chunk_during_copy),
		T(test_lapped_page),
		T(test_short_last_chunk),
		T(test_no_slot),
		T(test_restart),
#undef T
		cmocka_unit_test_setup_teardown(test_landing_io, setup_io, teardown),
		cmocka_unit_test_setup_teardown(test_landing_io_fails, setup_io, teardown),
		cmocka_unit_test_setup_teardown(test_landing_io_wait_fails, setup_io, teardown),
		cmocka_unit_test_setup_teardown(test_landing_io_gpu_slots, setup_io, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
