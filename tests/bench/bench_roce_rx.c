// SPDX-License-Identifier: MIT
/*
 * bench_roce_rx.c - what keeping the slot promise costs on the RoCE path
 * (roce_rx.c): for each frame, fpgad's work at its WRITE with Immediate
 * (the checks, the canary scan, the copy from the landing page into the
 * armed slot, the page's new canaries) against a bare memcpy of the same
 * bytes from the same page, measured in the same run.  The sender's part
 * (writing the landing page, as the NIC would) is outside the timing; the
 * verbs calls are not measured (a fake poll hands the completion over).
 *
 *   bench_roce_rx [FRAME_SIZE ...]     (default 4K 64K 1M 8M)
 *
 * One line per size: ns per frame for each, GB/s, the ratio.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../net/hsb_tx.h"
#include "bench_util.h"
#include "device/net/net.h"
#include "device/net/roce_rx.h"

#define PAGES 8u
#define PAYLOAD 4096u

struct bench {
	struct roce_rx rx;
	struct roce_wc wc;
	unsigned pending;
	unsigned char *slot;
	uint64_t frames;
};

static int b_poll(void *user, struct roce_wc *wc, unsigned max)
{
	struct bench *b = user;

	if (!b->pending || !max)
		return 0;
	b->pending = 0;
	*wc = b->wc;
	return 1;
}

static int b_post(void *user, unsigned n) { (void)user; (void)n; return 0; }

static int b_take(void *user, struct net_slot *ret_slot)
{
	ret_slot->base = ((struct bench *)user)->slot;
	ret_slot->cookie = 0;
	return 0;
}

static void b_done(void *user, const struct net_frame_done *d)
{
	(void)d;
	((struct bench *)user)->frames++;
}

static const struct roce_rx_ops ops = { b_poll, b_post, b_take, b_done };

/* The sender: frame @seq's bytes and metadata into its page, a completion. */
static void land(struct bench *b, struct hsb_tx *t, const unsigned char *data,
		 uint64_t frame)
{
	unsigned char *page = b->rx.landing + (uint64_t)t->page * t->lay.stride;
	static uint8_t pkt[ROCE_MAX_PACKET];
	struct roce_pkt p;
	uint32_t page_no;
	uint64_t off;

	size_t len = hsb_tx_packet(t, data, frame, hsb_tx_packets(t, frame) - 1, pkt);

	memcpy(page, data, frame);
	if (roce_parse(pkt, len, &p) ||
	    roce_place(&t->lay, p.va, p.dma_len, &page_no, &off)) {
		fprintf(stderr, "bench_roce_rx: bad metadata packet\n");
		exit(1);
	}
	memcpy(b->rx.landing + (uint64_t)page_no * t->lay.stride + off, p.payload, p.dma_len);
	b->wc = (struct roce_wc){ .has_imm = true, .imm = p.imm };
	b->pending = 1;
	t->psn = (t->psn + hsb_tx_packets(t, frame)) & ROCE_PSN_MASK;
	t->page = (t->page + 1) % PAGES;
	t->frame_number++;
}

static int run(uint64_t frame)
{
	struct roce_rx_cfg cfg = { .payload = PAYLOAD, .frame_size = frame,
				   .slot_size = frame };
	struct bench b = { 0 };
	struct hsb_tx t = { .payload = PAYLOAD };
	uint64_t iters = (256ull << 20) / frame, rx_ns = 0, cp_ns = 0;
	unsigned char *landing, *data;

	if (iters < 64)
		iters = 64;
	if (iters > 20000)
		iters = 20000;
	net_layout(frame, PAGES, &cfg.layout);
	t.lay = cfg.layout;
	landing = aligned_alloc(4096, (size_t)PAGES * cfg.layout.stride);
	data = malloc(frame);
	b.slot = aligned_alloc(4096, (frame + 4095) / 4096 * 4096);
	if (!landing || !data || !b.slot || roce_rx_init(&b.rx, &cfg, landing) < 0)
		return 1;
	for (uint64_t i = 0; i < frame; i++)
		data[i] = (unsigned char)(i * 7);
	/* Frames in turn: fpgad's work, or the bare copy, each just landed. */
	for (uint64_t i = 0; i < 2 * (iters + 16); i++) {
		unsigned char *page = landing + (uint64_t)t.page * t.lay.stride;
		uint64_t t0, t1;

		land(&b, &t, data, frame);
		t0 = bench_now_ns();
		if (i & 1) {
			memcpy(b.slot, page, frame);
			b.pending = 0;
			b.rx.expect_psn = t.psn;	/* as if fpgad had seen it */
		} else {
			roce_rx_drain(&b.rx, &ops, &b, t0);
		}
		t1 = bench_now_ns();
		if (i >= 32)	/* warm */
			*(i & 1 ? &cp_ns : &rx_ns) += t1 - t0;
	}
	if (b.frames != iters + 16) {
		fprintf(stderr, "bench_roce_rx: %llu of %llu frames good\n",
			(unsigned long long)b.frames, (unsigned long long)(iters + 16));
		return 1;
	}
	printf("{\"bench\":\"roce_rx\",\"frame\":%llu,\"frames\":%llu,\"roce_ns\":%.0f,\"memcpy_ns\":%.0f,"
	       "\"roce_gbs\":%.2f,\"memcpy_gbs\":%.2f,\"ratio\":%.3f}\n",
	       (unsigned long long)frame, (unsigned long long)iters,
	       (double)rx_ns / iters, (double)cp_ns / iters,
	       (double)frame * iters / rx_ns, (double)frame * iters / cp_ns,
	       (double)cp_ns / rx_ns);
	roce_rx_free(&b.rx);
	free(landing);
	free(data);
	free(b.slot);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const def[] = { "4K", "64K", "1M", "8M" };
	int n = argc > 1 ? argc - 1 : 4;

	for (int i = 0; i < n; i++) {
		uint64_t f = bench_parse_size(argc > 1 ? argv[i + 1] : def[i]);

		if (f < 256 || run(f))
			return 1;
	}
	return 0;
}
