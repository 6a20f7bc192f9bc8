// SPDX-License-Identifier: MIT
/*
 * fuzz_roce_rx.c - libFuzzer: what a RoCE sender controls (roce_rx.c):
 * the bytes of the landing pages and the immediates of its completions.
 * The input is a run of completions, each a 4-byte immediate followed by
 * a page number and up to 255 bytes written at an offset of that page
 * (the metadata block's place among them), polled in batches.  ASan
 * catches any access outside the landing ring or past the frame in a slot
 * of exactly frame_size bytes; a handed-on frame must fit it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "device/net/roce_rx.h"

#define PAGES 3u
#define PAYLOAD 256u
#define FRAME 1000u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct run {
	const uint8_t *p, *end;
	struct roce_rx *rx;
	unsigned char *slot;
};

/* The next completion of the input, its page written first. */
static int poll_one(struct run *r, struct roce_wc *wc)
{
	const struct sender_layout *lay = &r->rx->cfg.layout;
	uint32_t page;
	uint64_t off;
	size_t n;

	if (r->end - r->p < 8)
		return 0;
	wc->status = r->p[4] & 0x80 ? -EIO : 0;
	wc->has_imm = !(r->p[4] & 0x40);
	wc->imm = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 |
		  (uint32_t)r->p[2] << 8 | r->p[3];
	page = (r->p[4] & 0x3f) % PAGES;
	/* Offsets around the chunks and the metadata block. */
	off = ((uint64_t)r->p[5] << 8 | r->p[6]) % lay->stride;
	n = r->p[7];
	r->p += 8;
	if (n > (size_t)(r->end - r->p))
		n = (size_t)(r->end - r->p);
	if (n > lay->stride - off)
		n = (size_t)(lay->stride - off);
	memcpy(r->rx->landing + page * lay->stride + off, r->p, n);
	r->p += n;
	return 1;
}

static int fz_poll(void *user, struct roce_wc *wc, unsigned max)
{
	unsigned n = 0;

	while (n < max && n < 3 && poll_one(user, &wc[n]))
		n++;
	return (int)n;
}

static int fz_post(void *user, unsigned n) { (void)user; (void)n; return 0; }

static int fz_take(void *user, struct net_slot *ret)
{
	ret->base = ((struct run *)user)->slot;
	ret->cookie = 1;
	return 0;
}

static void fz_done(void *user, const struct net_frame_done *d)
{
	(void)user;
	if (d->cookie != 1 || !d->length || d->length > FRAME)
		abort();
}

static const struct roce_rx_ops ops = { fz_poll, fz_post, fz_take, fz_done };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct roce_rx_cfg cfg = { .payload = PAYLOAD, .frame_size = FRAME,
				   .slot_size = FRAME };
	struct roce_rx rx;
	struct run r = { .p = data, .end = data + size, .rx = &rx };
	unsigned char *landing;

	/* As net_layout(): room for the frame and its metadata, 4 KiB aligned. */
	cfg.layout = (struct sender_layout){ .base = 1ull << 40, .pages = PAGES,
					   .stride = (roce_rx_meta_offset(FRAME) +
						      ROCE_META_SIZE + 4095) / 4096 * 4096 };
	landing = malloc(PAGES * cfg.layout.stride);
	r.slot = malloc(FRAME);
	if (!landing || !r.slot || roce_rx_init(&rx, &cfg, landing) < 0)
		abort();
	while (r.p < r.end && roce_rx_drain(&rx, &ops, &r, 0) >= 0) {
		if (r.end - r.p < 8)
			break;
	}
	roce_rx_free(&rx);
	free(landing);
	free(r.slot);
	return 0;
}
