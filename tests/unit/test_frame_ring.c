// SPDX-License-Identifier: MIT
/* test_frame_ring.c - the frame plane's descriptor ring (common/frame_ring.c). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel/frame_producer.h"
#include "frame_consumer.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

/*
 * Liveness bound for blocking waits in the threaded tests: far beyond any
 * real delay, so a return by timeout means a lost wake-up.
 */
#define WAIT_MS 60000

/* Frames for the streaming tests: FPGAD_TEST_FRAMES, else by environment. */
static unsigned long stream_frames(unsigned long full, unsigned long small)
{
	const char *e = getenv("FPGAD_TEST_FRAMES");

	if (e && *e)
		return strtoul(e, NULL, 10);
	return RUNNING_ON_VALGRIND ? small : full;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

struct region {
	void *mem;
	size_t len;
};

static struct region region_new(uint32_t desc_count)
{
	struct region r;

	r.len = frame_ring_size(desc_count);
	assert_true(r.len > 0);
	r.mem = aligned_alloc(64, (r.len + 63) & ~(size_t)63);
	assert_non_null(r.mem);
	memset(r.mem, 0xa5, r.len);
	return r;
}

static struct frame_producer *producer_new(struct region *r,
						uint32_t slots,
						uint32_t desc_count,
						uint64_t gen)
{
	struct frame_ring_geometry g = {
		.desc_count = desc_count,
		.slots = slots,
		.slot_size = 4096,
		.frame_size = 4000,
	};
	struct frame_producer *p = NULL;

	assert_int_equal(frame_producer_init(r->mem, r->len, &g, gen, &p),
			 0);
	assert_non_null(p);
	return p;
}

static struct frame_consumer *consumer_new(struct region *r)
{
	struct frame_consumer *c = NULL;

	assert_int_equal(frame_consumer_attach(r->mem, r->len, &c), 0);
	assert_non_null(c);
	return c;
}

static struct frame_ring_frame mkframe(uint32_t slot, uint64_t seq)
{
	return (struct frame_ring_frame){
		.seq = seq,
		.slot = slot,
		.flags = (uint32_t)(seq & FPGAD_FRAME_DROPPED_BEFORE),
		.length = 100 + seq % 3000,
		.t_dma_start_ns = seq * 10 + 1,
		.t_dma_end_ns = seq * 10 + 5,
		.t_publish_ns = seq * 10 + 7,
		.t_sender_start_ns = 1700000000000000000ull + seq * 1000,
		.t_sender_end_ns = 1700000000000000000ull + seq * 1000 + 999,
	};
}

static void publish(struct frame_producer *p, uint32_t slot, uint64_t seq)
{
	struct frame_ring_frame f = mkframe(slot, seq);

	assert_int_equal(frame_producer_publish(p, &f, NULL), 0);
}

static struct fpgad_frames_header *hdr_of(struct region *r)
{
	return r->mem;
}

/* Slots out with the consumer, as the producer sees them. */
static unsigned outstanding(const struct frame_producer *p, uint32_t slots)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < slots; i++)
		n += frame_producer_slot_out(p, i);
	return n;
}

static struct fpgad_frame_desc *desc_of(struct region *r, uint32_t i)
{
	return (struct fpgad_frame_desc *)((char *)r->mem +
					   sizeof(struct fpgad_frames_header)) + i;
}

/* --- layout and validation ------------------------------------------------ */

static void test_sizes(void **state)
{
	(void)state;
	assert_int_equal(frame_ring_size(1), 192 + 128);
	assert_int_equal(frame_ring_size(8), 192 + 8 * 128);
	assert_int_equal(frame_ring_size(0), 0);
	assert_int_equal(frame_ring_size(3), 0);
	assert_int_equal(frame_ring_size(FPGAD_FRAMES_MAX_DESCS * 2), 0);
	assert_int_equal(frame_ring_desc_count_for(1), 1);
	assert_int_equal(frame_ring_desc_count_for(5), 8);
	assert_int_equal(frame_ring_desc_count_for(64), 64);
	assert_int_equal(frame_ring_desc_count_for(FPGAD_FRAMES_MAX_DESCS + 1), 0);
}

static void test_init_attach(void **state)
{
	struct region r = region_new(8);
	struct frame_producer *p = producer_new(&r, 6, 0, 77);
	struct frame_consumer *c = consumer_new(&r);
	struct fpgad_frames_header *h = hdr_of(&r);
	struct frame_ring_geometry g;

	(void)state;
	assert_int_equal(h->magic, FPGAD_FRAMES_MAGIC);
	assert_int_equal(h->version_major, FPGAD_FRAMES_VERSION_MAJOR);
	assert_int_equal(h->version_minor, FPGAD_FRAMES_VERSION_MINOR);
	assert_int_equal(h->header_size, sizeof(*h));
	assert_int_equal(h->desc_size, sizeof(struct fpgad_frame_desc));
	assert_int_equal(h->desc_count, 8);
	assert_int_equal(h->generation, 77);
	for (uint32_t i = 0; i < 8; i++)
		assert_int_equal(desc_of(&r, i)->state,
				 FPGAD_DESC_WORD(0, FPGAD_DESC_EMPTY));
	frame_consumer_geometry(c, &g);
	assert_int_equal(g.desc_count, 8);
	assert_int_equal(g.slots, 6);
	assert_int_equal(g.slot_size, 4096);
	assert_int_equal(g.frame_size, 4000);
	assert_int_equal(frame_consumer_generation(c), 77);
	assert_int_equal(outstanding(p, 6), 0);
	assert_int_equal(hdr_of(&r)->head, 0);
	frame_consumer_free(c);
	frame_producer_free(p);
	frame_consumer_free(NULL);
	frame_producer_free(NULL);
	free(r.mem);
}

static void test_producer_init_rejects(void **state)
{
	struct region r = region_new(8);
	struct frame_producer *p = (struct frame_producer *)&r;
	const struct frame_ring_geometry good = {
		.desc_count = 8, .slots = 8, .slot_size = 4096,
		.frame_size = 4096,
	};
	struct {
		const char *what;
		struct frame_ring_geometry g;
		size_t len_less;
		size_t misalign;
		uint64_t gen;
	} bad[] = {
		{ "slots 0", { 8, 0, 4096, 100, 0 }, 0, 0, 1 },
		{ "slot size 0", { 8, 8, 0, 0, 0 }, 0, 0, 1 },
		{ "frame > slot", { 8, 8, 4096, 4097, 0 }, 0, 0, 1 },
		{ "descs not pow2", { 6, 4, 4096, 100, 0 }, 0, 0, 1 },
		{ "descs < slots", { 4, 8, 4096, 100, 0 }, 0, 0, 1 },
		{ "descs too many", { FPGAD_FRAMES_MAX_DESCS * 2, 8, 4096, 100, 0 },
		  0, 0, 1 },
		{ "slots too many", { 0, FPGAD_FRAMES_MAX_DESCS + 1, 4096, 100, 0 },
		  0, 0, 1 },
		{ "short", good, 1, 0, 1 },
		{ "misaligned", good, 64, 8, 1 },
		{ "generation 0", good, 0, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int ret = frame_producer_init((char *)r.mem + bad[i].misalign,
						   r.len - bad[i].len_less,
						   &bad[i].g, bad[i].gen, &p);
		if (ret != -EINVAL)
			fail_msg("%s: got %d", bad[i].what, ret);
		assert_ptr_equal(p, (struct frame_producer *)&r);
	}
	assert_int_equal(frame_producer_init(NULL, r.len, &good, 1, &p),
			 -EINVAL);
	free(r.mem);
}

enum corrupt {
	C_NONE, C_MAGIC, C_MAGIC_ZERO, C_MAJOR, C_MINOR, C_HDR_SMALL,
	C_HDR_UNALIGNED, C_HDR_HUGE, C_DESC_SMALL, C_DESC_UNALIGNED,
	C_DESC_HUGE, C_COUNT_ZERO, C_COUNT_NOT_POW2, C_COUNT_LT_SLOTS,
	C_COUNT_HUGE, C_SLOTS_ZERO, C_SLOT_SIZE_ZERO, C_FRAME_GT_SLOT,
	C_GEN_ZERO, C_LEN_SHORT, C_LEN_TINY, C_MISALIGNED,
};

static void test_validate_corrupt(void **state)
{
	static const struct {
		enum corrupt c;
		int ret;
	} cases[] = {
		{ C_NONE, 0 },
		{ C_MAGIC, -EINVAL },
		{ C_MAGIC_ZERO, -EAGAIN },
		{ C_MAJOR, -EPROTONOSUPPORT },
		{ C_MINOR, 0 },	/* newer minor: compatible */
		{ C_HDR_SMALL, -EINVAL },
		{ C_HDR_UNALIGNED, -EINVAL },
		{ C_HDR_HUGE, -EINVAL },
		{ C_DESC_SMALL, -EINVAL },
		{ C_DESC_UNALIGNED, -EINVAL },
		{ C_DESC_HUGE, -EINVAL },
		{ C_COUNT_ZERO, -EINVAL },
		{ C_COUNT_NOT_POW2, -EINVAL },
		{ C_COUNT_LT_SLOTS, -EINVAL },
		{ C_COUNT_HUGE, -EINVAL },
		{ C_SLOTS_ZERO, -EINVAL },
		{ C_SLOT_SIZE_ZERO, -EINVAL },
		{ C_FRAME_GT_SLOT, -EINVAL },
		{ C_GEN_ZERO, -EINVAL },
		{ C_LEN_SHORT, -EINVAL },
		{ C_LEN_TINY, -EINVAL },
		{ C_MISALIGNED, -EINVAL },
	};
	struct region r = region_new(8);
	size_t buflen = r.len + 64;
	unsigned char *buf = aligned_alloc(64, buflen);

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame_producer *p = producer_new(&r, 8, 8, 3);
		struct frame_consumer *c = NULL;
		struct fpgad_frames_header *h;
		const void *mem = buf;
		size_t len = r.len;
		int ret;

		memcpy(buf, r.mem, r.len);
		h = (struct fpgad_frames_header *)buf;
		switch (cases[i].c) {
		case C_NONE: break;
		case C_MAGIC: h->magic ^= 0x100; break;
		case C_MAGIC_ZERO: h->magic = 0; break;
		case C_MAJOR: h->version_major++; break;
		case C_MINOR: h->version_minor++; break;
		case C_HDR_SMALL: h->header_size = 128; break;
		case C_HDR_UNALIGNED: h->header_size = 200; break;
		case C_HDR_HUGE: h->header_size = 1u << 30; break;
		case C_DESC_SMALL: h->desc_size = 32; break;
		case C_DESC_UNALIGNED: h->desc_size = 68; break;
		case C_DESC_HUGE: h->desc_size = UINT32_MAX & ~7u; break;
		case C_COUNT_ZERO: h->desc_count = 0; break;
		case C_COUNT_NOT_POW2: h->desc_count = 7; break;
		case C_COUNT_LT_SLOTS: h->desc_count = 4; break;
		case C_COUNT_HUGE: h->desc_count = 1u << 31; break;
		case C_SLOTS_ZERO: h->slot_count = 0; break;
		case C_SLOT_SIZE_ZERO: h->slot_size = 0; break;
		case C_FRAME_GT_SLOT: h->frame_size = h->slot_size + 1; break;
		case C_GEN_ZERO: h->generation = 0; break;
		case C_LEN_SHORT: len--; break;
		case C_LEN_TINY: len = sizeof(*h) - 1; break;
		case C_MISALIGNED:
			memmove(buf + 4, buf, r.len);
			mem = buf + 4;
			break;
		}
		ret = frame_ring_validate(mem, len);
		if (ret != cases[i].ret)
			fail_msg("case %d: got %d want %d", cases[i].c, ret,
				 cases[i].ret);
		c = (struct frame_consumer *)&ret;
		ret = frame_consumer_attach((void *)mem, len, &c);
		assert_int_equal(ret, cases[i].ret);
		if (ret == 0)
			frame_consumer_free(c);
		else
			assert_ptr_equal(c, (struct frame_consumer *)&ret);
		frame_producer_free(p);
	}
	free(buf);
	free(r.mem);
}

/* --- frames -------------------------------------------------------------- */

static void test_publish_claim_release(void **state)
{
	struct region r = region_new(4);
	struct frame_producer *p = producer_new(&r, 4, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct frame_ring_frame in = mkframe(3, 12345), f = { 0 };
	struct frame_returned back[4];
	uint64_t pos = 99;

	(void)state;
	in.flags = FPGAD_FRAME_ERROR | FPGAD_FRAME_TRUNCATED;
	assert_int_equal(frame_producer_publish(p, &in, &pos), 0);
	assert_int_equal(pos, 0);
	assert_true(frame_producer_slot_out(p, 3));
	assert_int_equal(outstanding(p, 4), 1);
	assert_int_equal(hdr_of(&r)->head, 1);

	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(f.pos, 0);
	assert_int_equal(f.seq, 12345);
	assert_int_equal(f.slot, 3);
	assert_int_equal(f.flags, FPGAD_FRAME_ERROR | FPGAD_FRAME_TRUNCATED);
	assert_int_equal(f.length, in.length);
	assert_int_equal(f.t_dma_start_ns, in.t_dma_start_ns);
	assert_int_equal(f.t_dma_end_ns, in.t_dma_end_ns);
	assert_int_equal(f.t_publish_ns, in.t_publish_ns);
	assert_int_equal(f.t_sender_start_ns, in.t_sender_start_ns);
	assert_int_equal(f.t_sender_end_ns, in.t_sender_end_ns);
	assert_int_equal(hdr_of(&r)->cursor, 1);
	assert_int_equal(frame_consumer_claim(c, &f), -EAGAIN);

	/* Not released yet: nothing to reclaim, the slot stays out. */
	assert_int_equal(frame_producer_reclaim(p, back, 4), 0);
	assert_int_equal(frame_producer_publish(p, &in, NULL), -EBUSY);

	f.pos = 0;
	assert_int_equal(frame_consumer_release(c, &f), 0);
	assert_int_equal(frame_consumer_release(c, &f), -EINVAL);
	assert_int_equal(frame_producer_reclaim(p, back, 4), 1);
	assert_int_equal(back[0].slot, 3);
	assert_int_equal(back[0].how, FPGAD_DESC_RELEASED);
	assert_int_equal(back[0].pos, 0);
	assert_false(frame_producer_slot_out(p, 3));
	assert_int_equal(outstanding(p, 4), 0);
	assert_int_equal(frame_producer_reclaim(p, back, 4), 0);
	assert_int_equal(desc_of(&r, 0)->state,
			 FPGAD_DESC_WORD(0, FPGAD_DESC_EMPTY));

	/* The publish time is filled in when left 0. */
	in.t_publish_ns = 0;
	assert_int_equal(frame_producer_publish(p, &in, &pos), 0);
	assert_int_equal(pos, 1);
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_true(f.t_publish_ns != 0);
	/* Releasing what was never claimed, or a made-up position. */
	f.pos = 7;
	assert_int_equal(frame_consumer_release(c, &f), -EINVAL);
	assert_int_equal(frame_consumer_release(c, NULL), -EINVAL);

	/* Bad frames are refused. */
	in = mkframe(4, 1);
	assert_int_equal(frame_producer_publish(p, &in, NULL), -EINVAL);
	in = mkframe(0, 1);
	in.length = 4097;
	assert_int_equal(frame_producer_publish(p, &in, NULL), -EINVAL);
	assert_int_equal(frame_producer_publish(p, NULL, NULL), -EINVAL);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* h2c: empty slots go out, come back with the bytes the client wrote. */
/* --- older consumers and producers (minor 3 and before) ----------------- */

/* A descriptor as fpgad_frames.h declared it up to minor 3: 64 bytes. */
struct desc_minor3 {
	uint64_t state;
	uint64_t seq;
	uint32_t slot;
	uint32_t flags;
	uint64_t length;
	uint64_t t_dma_start_ns;
	uint64_t t_dma_end_ns;
	uint64_t t_publish_ns;
	uint64_t fill;
};
_Static_assert(sizeof(struct desc_minor3) == FPGAD_FRAMES_DESC_MIN_SIZE,
	       "minor 3's descriptor");

static struct desc_minor3 *desc3_of(struct region *r, uint32_t i)
{
	const struct fpgad_frames_header *h = hdr_of(r);

	return (struct desc_minor3 *)((char *)r->mem + h->header_size +
				      (size_t)i * h->desc_size);
}

/*
 * A consumer built against minor 3 reads a minor 4 ring as minor 3 says:
 * it accepts any minor of major 1 and a desc_size of at least its 64
 * bytes, finds position p's descriptor at p & (desc_count - 1) times
 * desc_size, and reads its fields at minor 3's offsets.  Every frame it
 * claims is the one published, and its releases reach the producer.
 */
static void test_old_consumer(void **state)
{
	struct region r = region_new(8);
	struct frame_producer *p = producer_new(&r, 8, 8, 5);
	const struct fpgad_frames_header *h = hdr_of(&r);
	struct frame_returned back[8];

	(void)state;
	assert_int_equal(h->version_major, 1);
	assert_true(h->version_minor > 3);
	assert_true(h->desc_size >= sizeof(struct desc_minor3));
	assert_int_equal(h->desc_size % 8, 0);
	assert_true(h->header_size + (size_t)h->desc_count * h->desc_size <= r.len);
	for (uint64_t round = 0; round < 3; round++) {
		for (uint32_t s = 0; s < 8; s++)
			publish(p, s, round * 8 + s);
		for (uint64_t pos = round * 8; pos < round * 8 + 8; pos++) {
			struct desc_minor3 *d = desc3_of(&r, (uint32_t)(pos & (h->desc_count - 1)));
			struct frame_ring_frame want = mkframe((uint32_t)(pos % 8), pos);
			uint64_t w = FPGAD_DESC_WORD(pos, FPGAD_DESC_READY);

			assert_true(atomic_compare_exchange_strong(
				(_Atomic uint64_t *)&d->state, &w,
				FPGAD_DESC_WORD(pos, FPGAD_DESC_HELD)));
			assert_int_equal(d->seq, want.seq);
			assert_int_equal(d->slot, want.slot);
			assert_int_equal(d->flags, want.flags);
			assert_int_equal(d->length, want.length);
			assert_int_equal(d->t_dma_start_ns, want.t_dma_start_ns);
			assert_int_equal(d->t_dma_end_ns, want.t_dma_end_ns);
			assert_int_equal(d->t_publish_ns, want.t_publish_ns);
			atomic_store((_Atomic uint64_t *)&d->state,
				     FPGAD_DESC_WORD(pos, FPGAD_DESC_RELEASED));
		}
		assert_int_equal(frame_producer_reclaim(p, back, 8), 8);
	}
	frame_producer_free(p);
	free(r.mem);
}

/*
 * This consumer on a ring of an older producer: minor 3 with 64-byte
 * descriptors (what follows a descriptor is the next one), minor 3 with
 * longer ones holding anything past 64 bytes, and minor 4 with 64-byte
 * ones.  Frames are read, and the sender's times, absent, are 0.
 */
static void test_old_producer(void **state)
{
	static const struct { uint16_t minor; uint32_t desc_size; } rings[] = {
		{ 3, 64 }, { 3, 128 }, { 4, 64 }, { 4, 72 },
	};

	(void)state;
	for (unsigned k = 0; k < sizeof(rings) / sizeof(rings[0]); k++) {
		struct region r = region_new(8);
		struct frame_producer *p = producer_new(&r, 8, 8, 9);
		struct fpgad_frames_header *h = hdr_of(&r);
		struct frame_consumer *c;
		struct frame_ring_frame f;

		/* The descriptors an older producer would have laid out. */
		h->version_minor = rings[k].minor;
		h->desc_size = rings[k].desc_size;
		memset((char *)r.mem + h->header_size, 0x5a,
		       r.len - h->header_size);
		for (uint32_t i = 0; i < 8; i++) {
			struct desc_minor3 *d = desc3_of(&r, i);
			struct frame_ring_frame in = mkframe(i, 40 + i);

			*d = (struct desc_minor3){
				.state = FPGAD_DESC_WORD(i, FPGAD_DESC_READY),
				.seq = in.seq, .slot = in.slot, .flags = in.flags,
				.length = in.length,
				.t_dma_start_ns = in.t_dma_start_ns,
				.t_dma_end_ns = in.t_dma_end_ns,
				.t_publish_ns = in.t_publish_ns,
			};
		}
		h->head = 8;
		c = consumer_new(&r);
		for (uint32_t i = 0; i < 8; i++) {
			struct frame_ring_frame want = mkframe(i, 40 + i);

			assert_int_equal(frame_consumer_claim(c, &f), 0);
			assert_int_equal(f.pos, i);
			assert_int_equal(f.seq, want.seq);
			assert_int_equal(f.slot, want.slot);
			assert_int_equal(f.length, want.length);
			assert_int_equal(f.t_publish_ns, want.t_publish_ns);
			assert_int_equal(f.t_sender_start_ns, 0);
			assert_int_equal(f.t_sender_end_ns, 0);
			assert_int_equal(frame_consumer_release(c, &f), 0);
			assert_int_equal(desc3_of(&r, i)->state,
					 FPGAD_DESC_WORD(i, FPGAD_DESC_RELEASED));
		}
		assert_int_equal(frame_consumer_claim(c, &f), -EAGAIN);
		frame_consumer_free(c);
		frame_producer_free(p);
		free(r.mem);
	}
}

static void test_h2c_fill(void **state)
{
	struct region r = region_new(4);
	struct frame_ring_geometry g = {
		.slots = 4, .slot_size = 4096, .frame_size = 4096,
		.direction = FPGAD_FRAMES_H2C,
	};
	struct frame_producer *p = NULL;
	struct frame_consumer *c;
	struct frame_returned back[4];
	struct frame_ring_frame f;
	struct frame_ring_geometry cg;

	(void)state;
	assert_int_equal(frame_producer_init(r.mem, r.len, &g, 5, &p), 0);
	c = consumer_new(&r);
	frame_consumer_geometry(c, &cg);
	assert_int_equal(cg.direction, FPGAD_FRAMES_H2C);
	publish(p, 0, 1);
	publish(p, 1, 2);
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(frame_consumer_submit(c, &f, 4097), -EINVAL);
	assert_int_equal(frame_consumer_submit(c, &f, 1000), 0);
	assert_int_equal(frame_consumer_submit(c, &f, 1000), -EINVAL);
	assert_int_equal(frame_producer_reclaim(p, back, 4), 1);
	assert_int_equal(back[0].slot, 0);
	assert_int_equal(back[0].fill, 1000);

	/* A client that scribbles an impossible fill gets nothing sent. */
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(frame_consumer_submit(c, &f, 10), 0);
	desc_of(&r, 1)->fill = 1ull << 40;
	assert_int_equal(frame_producer_reclaim(p, back, 4), 1);
	assert_int_equal(back[0].slot, 1);
	assert_int_equal(back[0].fill, 0);

	/* A fresh publish clears what the last user wrote. */
	publish(p, 0, 3);
	assert_int_equal(desc_of(&r, 2)->fill, 0);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* Many laps of a small ring, releases out of order within each batch. */
static void test_wrap_around(void **state)
{
	struct region r = region_new(4);
	struct frame_producer *p = producer_new(&r, 4, 4, 1);
	struct frame_consumer *c = consumer_new(&r);
	uint32_t free_slots[4] = { 0, 1, 2, 3 };
	unsigned n_free = 4;
	uint64_t seq = 0, want = 0, seed = 1;

	(void)state;
	for (int round = 0; round < 5000; round++) {
		unsigned batch = 1 + (unsigned)(rng_next(&seed) % n_free);
		struct frame_ring_frame got[4];
		struct frame_returned back[4];
		int n;

		for (unsigned i = 0; i < batch; i++)
			publish(p, free_slots[--n_free], seq++);
		for (unsigned i = 0; i < batch; i++) {
			assert_int_equal(frame_consumer_claim(c, &got[i]), 0);
			assert_int_equal(got[i].seq, want);
			want++;
		}
		assert_int_equal(frame_consumer_claim(c, &got[0]), -EAGAIN);
		/* Release backwards. */
		for (unsigned i = batch; i-- > 0;)
			assert_int_equal(frame_consumer_release(c, &got[i]), 0);
		n = frame_producer_reclaim(p, back, 4);
		assert_int_equal(n, (int)batch);
		for (int i = 0; i < n; i++)
			free_slots[n_free++] = back[i].slot;
	}
	assert_int_equal(n_free, 4);
	assert_true(hdr_of(&r)->head > 4 * 1000);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/*
 * Full: every descriptor is out.  The producer refuses to publish and
 * leaves every descriptor as it was; a descriptor released out of order is
 * reused and the consumer still sees frames in publish order.
 */
static void test_full(void **state)
{
	struct region r = region_new(4);
	struct frame_producer *p = producer_new(&r, 4, 4, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct frame_ring_frame f[4], g;
	struct frame_returned back[4];
	unsigned char snap[4 * sizeof(struct fpgad_frame_desc)];

	(void)state;
	for (uint32_t i = 0; i < 4; i++)
		publish(p, i, i);
	memcpy(snap, desc_of(&r, 0), sizeof(snap));
	for (uint32_t i = 0; i < 4; i++) {
		g = mkframe(i, 100);
		assert_int_equal(frame_producer_publish(p, &g, NULL), -EBUSY);
	}
	assert_memory_equal(snap, desc_of(&r, 0), sizeof(snap));

	/* Claim all; release only the second. */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(frame_consumer_claim(c, &f[i]), 0);
		assert_int_equal(f[i].seq, (uint64_t)i);
	}
	assert_int_equal(frame_consumer_release(c, &f[1]), 0);
	assert_int_equal(frame_producer_reclaim(p, back, 4), 1);
	assert_int_equal(back[0].slot, 1);

	/* Position 4 would go to descriptor 0, still held: it is skipped. */
	memcpy(snap, desc_of(&r, 0), sizeof(struct fpgad_frame_desc));
	publish(p, 1, 4);
	assert_memory_equal(snap, desc_of(&r, 0),
			    sizeof(struct fpgad_frame_desc));
	assert_int_equal(hdr_of(&r)->head, 6);
	assert_int_equal(desc_of(&r, 1)->state,
			 FPGAD_DESC_WORD(5, FPGAD_DESC_READY));
	assert_int_equal(frame_consumer_claim(c, &g), 0);
	assert_int_equal(g.seq, 4);
	assert_int_equal(g.pos, 5);
	assert_int_equal(frame_consumer_claim(c, &g), -EAGAIN);
	/* Still full for the slots that are out. */
	g = mkframe(0, 200);
	assert_int_equal(frame_producer_publish(p, &g, NULL), -EBUSY);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/*
 * A burst published with the wake-up held wakes a sleeping consumer once,
 * at frame_producer_wake(), not once per frame; a held wake-up with
 * nothing published wakes nobody.  The consumer is "asleep" here by its
 * flag alone: each wake bumps cons_futex, which is what is counted.
 */
static void test_burst_one_wake(void **state)
{
	struct region r = region_new(8);
	struct frame_producer *p = producer_new(&r, 8, 0, 1);
	struct fpgad_frames_header *h = hdr_of(&r);
	uint32_t futex0;

	(void)state;
	h->cons_waiting = 1;
	futex0 = h->cons_futex;
	publish(p, 0, 0);
	assert_int_equal(h->cons_futex, futex0 + 1);
	frame_producer_hold(p);
	publish(p, 1, 1);
	publish(p, 2, 2);
	publish(p, 3, 3);
	assert_int_equal(h->cons_futex, futex0 + 1);
	assert_int_equal(h->head, 4);
	frame_producer_wake(p);
	assert_int_equal(h->cons_futex, futex0 + 2);
	/* Held with nothing published: no wake-up. */
	frame_producer_hold(p);
	frame_producer_wake(p);
	assert_int_equal(h->cons_futex, futex0 + 2);
	/* And publishing wakes at once again. */
	publish(p, 4, 4);
	assert_int_equal(h->cons_futex, futex0 + 3);
	frame_producer_free(p);
	free(r.mem);
}

static void test_empty(void **state)
{
	struct region r = region_new(2);
	struct frame_producer *p = producer_new(&r, 2, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct frame_ring_frame f = { 0 };

	(void)state;
	assert_int_equal(frame_consumer_claim(c, &f), -EAGAIN);
	assert_int_equal(frame_consumer_claim_newest(c, &f), -EAGAIN);
	assert_int_equal(frame_consumer_wait(c, 0), -ETIMEDOUT);
	assert_int_equal(frame_consumer_wait(c, 5), -ETIMEDOUT);
	assert_int_equal(hdr_of(&r)->cons_waiting, 0);
	/* Nothing out: the producer has nothing to wait for. */
	assert_int_equal(frame_producer_wait(p, 5), 0);
	publish(p, 0, 0);
	assert_int_equal(frame_consumer_wait(c, 5), 0);
	assert_int_equal(frame_producer_wait(p, 0), -ETIMEDOUT);
	assert_int_equal(frame_producer_wait(p, 5), -ETIMEDOUT);
	assert_int_equal(hdr_of(&r)->prod_waiting, 0);
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(frame_consumer_wait(c, 0), -ETIMEDOUT);
	assert_int_equal(frame_consumer_release(c, &f), 0);
	assert_int_equal(frame_producer_wait(p, 0), 0);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

static void test_claim_newest(void **state)
{
	struct region r = region_new(8);
	struct frame_producer *p = producer_new(&r, 8, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct frame_ring_frame f, g;
	struct frame_returned back[8];

	(void)state;
	for (uint32_t i = 0; i < 5; i++)
		publish(p, i, 10 + i);
	assert_int_equal(frame_consumer_claim(c, &f), 0);	/* seq 10 */
	assert_int_equal(frame_consumer_claim_newest(c, &g), 3);
	assert_int_equal(g.seq, 14);
	assert_int_equal(g.slot, 4);
	/* The three skipped come back; the two claimed stay out. */
	assert_int_equal(frame_producer_reclaim(p, back, 8), 3);
	assert_int_equal(outstanding(p, 8), 2);
	assert_int_equal(frame_consumer_claim(c, &f), -EAGAIN);
	publish(p, 1, 15);
	assert_int_equal(frame_consumer_claim_newest(c, &f), 0);
	assert_int_equal(f.seq, 15);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

static void test_revoke(void **state)
{
	struct region r = region_new(4);
	struct frame_producer *p = producer_new(&r, 4, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct frame_ring_frame f;

	(void)state;
	publish(p, 0, 0);
	publish(p, 1, 1);
	publish(p, 2, 2);
	assert_int_equal(frame_producer_revoke(p, 0), 0);
	assert_false(frame_producer_slot_out(p, 0));
	assert_int_equal(frame_consumer_claim(c, &f), 0);	/* revoked one skipped */
	assert_int_equal(f.seq, 1);
	assert_int_equal(frame_producer_revoke(p, 1), -EBUSY);	/* held */
	assert_int_equal(frame_producer_revoke(p, 2), 0);
	assert_int_equal(frame_producer_revoke(p, 2), -ENOENT);
	assert_int_equal(frame_producer_revoke(p, 3), -ENOENT);
	assert_int_equal(frame_producer_revoke(p, 4), -ENOENT);
	assert_int_equal(frame_consumer_claim(c, &f), -EAGAIN);
	/* Released but not reclaimed yet: it is back, and says so. */
	f.pos = 1;
	assert_int_equal(frame_consumer_release(c, &f), 0);
	assert_int_equal(frame_producer_revoke(p, 1), -EALREADY);
	assert_int_equal(outstanding(p, 4), 0);

	/* The consumer skipped it with claim_newest: same answer. */
	publish(p, 0, 3);
	publish(p, 1, 4);
	assert_int_equal(frame_consumer_claim_newest(c, &f), 1);
	assert_int_equal(frame_producer_revoke(p, 0), -EALREADY);
	assert_int_equal(frame_producer_revoke(p, 1), -EBUSY);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* The consumer is gone: everything out comes back, claimed or not. */
static void test_reclaim_all(void **state)
{
	struct region r = region_new(4);
	struct frame_producer *p = producer_new(&r, 4, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct frame_ring_frame f, g;
	struct frame_returned back[4];
	unsigned how[5] = { 0 };
	int n;

	(void)state;
	for (uint32_t i = 0; i < 4; i++)
		publish(p, i, i);
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(frame_consumer_claim(c, &g), 0);
	assert_int_equal(frame_consumer_release(c, &g), 0);
	n = frame_producer_reclaim_all(p, back, 4);
	assert_int_equal(n, 4);
	for (int i = 0; i < n; i++)
		how[back[i].how]++;
	assert_int_equal(how[FPGAD_DESC_HELD], 1);
	assert_int_equal(how[FPGAD_DESC_RELEASED], 1);
	assert_int_equal(how[FPGAD_DESC_REVOKED], 2);
	assert_int_equal(outstanding(p, 4), 0);
	/* The revoked ones cannot be claimed any more. */
	assert_int_equal(frame_consumer_claim(c, &g), -EAGAIN);
	assert_int_equal(frame_producer_reclaim_all(p, back, 4), 0);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

static void test_events(void **state)
{
	struct region r = region_new(2);
	struct frame_producer *p = producer_new(&r, 2, 0, 1);
	struct frame_consumer *c = consumer_new(&r);

	(void)state;
	assert_int_equal(frame_consumer_wait(c, 0), -ETIMEDOUT);
	frame_producer_raise(p, FPGAD_EVENT_RESET);
	assert_int_equal(frame_consumer_wait(c, 0), 0);
	assert_int_equal(frame_consumer_wait(c, -1), 0);
	assert_int_equal(frame_consumer_events(c), FPGAD_EVENT_RESET);
	assert_int_equal(frame_consumer_wait(c, 0), -ETIMEDOUT);
	/* Each call reports what was raised since the last one. */
	assert_int_equal(frame_consumer_events(c), 0);
	frame_producer_raise(p, FPGAD_EVENT_FAILED);
	assert_int_equal(frame_consumer_wait(c, 1), 0);
	assert_int_equal(frame_consumer_events(c), FPGAD_EVENT_FAILED);
	/* An event raised again is reported again, and only then. */
	frame_producer_raise(p, FPGAD_EVENT_RESET);
	assert_int_equal(frame_consumer_wait(c, 1), 0);
	assert_int_equal(frame_consumer_events(c), FPGAD_EVENT_RESET);
	assert_int_equal(frame_consumer_events(c), 0);
	frame_producer_raise(p, FPGAD_EVENT_CLOSED | FPGAD_EVENT_DAEMON_GONE);
	assert_int_equal(frame_consumer_wait(c, 1), 0);
	assert_int_equal(frame_consumer_events(c),
			 FPGAD_EVENT_CLOSED | FPGAD_EVENT_DAEMON_GONE);
	assert_int_equal(hdr_of(&r)->event_count[0], 2);	/* RESET */
	assert_int_equal(hdr_of(&r)->event_count[3], 1);	/* FAILED */
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* The ring re-created under the consumer: it notices. */
static void test_generation(void **state)
{
	struct region r = region_new(2);
	struct frame_producer *p = producer_new(&r, 2, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct frame_ring_frame f;

	(void)state;
	publish(p, 0, 0);
	frame_producer_free(p);
	p = producer_new(&r, 2, 0, 2);
	assert_int_equal(frame_consumer_claim(c, &f), -ESTALE);
	assert_int_equal(frame_consumer_claim_newest(c, &f), -ESTALE);
	assert_int_equal(frame_consumer_wait(c, -1), -ESTALE);
	frame_consumer_free(c);
	c = consumer_new(&r);
	assert_int_equal(frame_consumer_generation(c), 2);
	assert_int_equal(frame_consumer_claim(c, &f), -EAGAIN);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* A producer that publishes nonsense: the consumer refuses it. */
static void test_bad_descriptor(void **state)
{
	struct region r = region_new(4);
	struct frame_producer *p = producer_new(&r, 4, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct frame_returned back[4];
	struct frame_ring_frame f;

	(void)state;
	publish(p, 2, 0);
	publish(p, 3, 1);
	publish(p, 1, 2);
	desc_of(&r, 0)->slot = 4;
	desc_of(&r, 1)->length = 4097;
	assert_int_equal(frame_consumer_claim(c, &f), -EPROTO);
	assert_int_equal(frame_consumer_claim(c, &f), -EPROTO);
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(f.seq, 2);
	/* Given back: the producer gets its own slots, not the scribbled. */
	assert_int_equal(frame_producer_reclaim(p, back, 4), 2);
	assert_true((back[0].slot == 2 && back[1].slot == 3) ||
		    (back[0].slot == 3 && back[1].slot == 2));
	/* A head far ahead of anything published. */
	hdr_of(&r)->head = UINT64_MAX / 2;
	assert_int_equal(frame_consumer_claim(c, &f), -EAGAIN);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* --- the consumer scribbles ------------------------------------------------ */

/*
 * A fuzzing consumer writes random values over the consumer's words and
 * random bytes anywhere in the region, while the producer publishes,
 * reclaims and revokes.  The producer must never hand back a slot that
 * was not out, never hand one back twice, never refuse a slot that is
 * back, and never write a descriptor that is still out.
 */
static void test_scribbling_consumer(void **state)
{
	enum { SLOTS = 8, ROUNDS = 50000 };
	struct region r = region_new(8);
	struct frame_producer *p = producer_new(&r, SLOTS, 8, 1);
	struct frame_consumer *c = consumer_new(&r);
	bool out[SLOTS] = { false };
	unsigned n_out = 0;
	uint64_t seed = 42;
	struct frame_returned back[SLOTS];

	(void)state;
	for (unsigned round = 0; round < ROUNDS; round++) {
		uint64_t x = rng_next(&seed);
		uint32_t s = (uint32_t)(x >> 32) % SLOTS;
		struct frame_ring_frame f = mkframe(s, round);
		uint32_t rs;
		int ret, n;

		switch (x % 8) {
		case 0:
		case 1:
			ret = frame_producer_publish(p, &f, NULL);
			if (out[s]) {
				assert_int_equal(ret, -EBUSY);
			} else {
				assert_int_equal(ret, 0);
				out[s] = true;
				n_out++;
			}
			break;
		case 2:
			n = frame_producer_reclaim(p, back, SLOTS);
			assert_true(n >= 0);
			for (int i = 0; i < n; i++) {
				assert_true(back[i].slot < SLOTS);
				assert_true(out[back[i].slot]);
				out[back[i].slot] = false;
				n_out--;
			}
			break;
		case 3:
			ret = frame_producer_revoke(p, s);
			if (!out[s]) {
				assert_int_equal(ret, -ENOENT);
			} else if (ret == 0 || ret == -EALREADY) {
				out[s] = false;
				n_out--;
			} else {
				assert_int_equal(ret, -EBUSY);
			}
			break;
		case 4:
			/* Take every unclaimed frame back at once. */
			for (rs = 0; rs < SLOTS; rs++) {
				ret = frame_producer_revoke(p, rs);
				if (!out[rs]) {
					assert_int_equal(ret, -ENOENT);
				} else if (ret == 0 || ret == -EALREADY) {
					out[rs] = false;
					n_out--;
				} else {
					assert_int_equal(ret, -EBUSY);
				}
			}
			break;
		case 5: {
			/* Random word over a descriptor state, often plausible. */
			struct fpgad_frame_desc *d = desc_of(&r, (x >> 8) & 7);
			uint64_t pos = hdr_of(&r)->head - ((x >> 12) & 15);

			if ((x >> 16) & 1)
				d->state = FPGAD_DESC_WORD(pos, (x >> 20) % 6);
			else
				d->state = rng_next(&seed);
			if ((x >> 17) & 1)
				d->slot = (uint32_t)rng_next(&seed);
			break;
		}
		case 6: {
			/* Random bytes anywhere, header included. */
			size_t off = (size_t)(rng_next(&seed) % r.len);

			((unsigned char *)r.mem)[off] = (unsigned char)x;
			break;
		}
		case 7:
			/* A consumer that also tries to follow the protocol. */
			if (frame_consumer_claim(c, &f) == 0 && (x >> 40) & 1)
				frame_consumer_release(c, &f);
			assert_int_equal(frame_producer_wait(p, 0) == 0 ||
					 n_out > 0, 1);
			break;
		}
		assert_int_equal(outstanding(p, SLOTS), n_out);
		for (uint32_t i = 0; i < SLOTS; i++)
			assert_int_equal(frame_producer_slot_out(p, i), out[i]);
	}
	/* In the end every slot out comes back exactly once. */
	{
		int n = frame_producer_reclaim_all(p, back, SLOTS);

		assert_int_equal(n, (int)n_out);
		for (int i = 0; i < n; i++) {
			assert_true(out[back[i].slot]);
			out[back[i].slot] = false;
		}
	}
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* And a producer that scribbles: the consumer never returns nonsense. */
static void test_scribbling_producer(void **state)
{
	enum { SLOTS = 4, ROUNDS = 50000 };
	struct region r = region_new(4);
	struct frame_producer *p = producer_new(&r, SLOTS, 4, 1);
	struct frame_consumer *c = consumer_new(&r);
	uint64_t seed = 7, head = 0, pos;

	(void)state;
	for (unsigned round = 0; round < ROUNDS; round++) {
		uint64_t x = rng_next(&seed);
		struct frame_ring_frame f;
		struct frame_returned back[SLOTS];
		int ret;

		switch (x % 5) {
		case 0:
			f = mkframe((uint32_t)(x >> 32) % SLOTS, round);
			if (frame_producer_publish(p, &f, &pos) == 0)
				head = pos + 1;
			frame_producer_reclaim(p, back, SLOTS);
			break;
		case 1:
			((unsigned char *)r.mem)[192 + rng_next(&seed) %
						 (r.len - 192)] =
				(unsigned char)(x >> 8);
			break;
		case 2:
			hdr_of(&r)->head = (x >> 8) & 1 ?
				rng_next(&seed) : head + (x >> 60);
			break;
		case 3:
			ret = (x >> 8) & 1 ? frame_consumer_claim(c, &f) :
					     frame_consumer_claim_newest(c, &f);
			if (ret >= 0) {
				assert_true(f.slot < SLOTS);
				assert_true(f.length <= 4096);
				frame_consumer_release(c, &f);
			} else {
				assert_true(ret == -EAGAIN || ret == -EPROTO);
			}
			break;
		case 4:
			ret = frame_consumer_wait(c, 0);
			assert_true(ret == 0 || ret == -ETIMEDOUT);
			frame_consumer_events(c);
			break;
		}
	}
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* --- threads ------------------------------------------------------------- */

/*
 * Claim against revoke: the consumer claims as fast as it can while the
 * producer publishes and immediately tries to revoke.  Every frame is
 * delivered exactly once or revoked exactly once, never both, never lost.
 */
struct race {
	struct region r;
	struct frame_producer *p;
	struct frame_consumer *c;
	unsigned long frames;
	unsigned char *delivered;
	unsigned char *revoked;
	unsigned long timeouts;		/* producer's */
	unsigned long c_timeouts;	/* consumer's */
};

static void *race_consumer(void *arg)
{
	struct race *t = arg;
	struct frame_ring_frame f;

	for (;;) {
		int ret = frame_consumer_claim(t->c, &f);

		if (ret == 0) {
			if (f.seq >= t->frames)
				return (void *)1;
			t->delivered[f.seq]++;
			if (frame_consumer_release(t->c, &f) != 0)
				return (void *)2;
			continue;
		}
		if (ret != -EAGAIN)
			return (void *)3;
		if (frame_consumer_events(t->c) & FPGAD_EVENT_CLOSED) {
			/* Everything was published before CLOSED: drain. */
			while ((ret = frame_consumer_claim(t->c, &f)) == 0) {
				t->delivered[f.seq]++;
				frame_consumer_release(t->c, &f);
			}
			return ret == -EAGAIN ? NULL : (void *)4;
		}
		if (frame_consumer_wait(t->c, WAIT_MS) == -ETIMEDOUT)
			t->c_timeouts++;
	}
}

/* What a GPU stream stores for a stream-ordered release. */
static void gpu_stores(const struct frame_async *a)
{
	atomic_store(FR_A32(a->state_low), a->released_low);
	atomic_store(FR_A32(a->done), a->count);
}

/*
 * A stream-ordered release wakes a sleeping producer when it is counted
 * (the GPU's stores later wake nobody), and the producer's wait counts one
 * on its way as something to look at.
 */
static void test_async_release_wakes(void **state)
{
	struct region r = region_new(2);
	struct frame_producer *p = producer_new(&r, 2, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct fpgad_frames_header *h = hdr_of(&r);
	struct frame_returned back[2];
	struct frame_ring_frame f;
	struct frame_async a;
	uint32_t futex;

	(void)state;
	publish(p, 0, 0);
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(frame_producer_wait(p, 0), -ETIMEDOUT);
	/* As if the producer slept on prod_futex now. */
	atomic_store(FR_A32(&h->prod_waiting), 1);
	futex = atomic_load(FR_A32(&h->prod_futex));
	assert_int_equal(frame_consumer_async_words(c, &f, &a), 0);
	assert_int_not_equal(atomic_load(FR_A32(&h->prod_futex)), futex);
	atomic_store(FR_A32(&h->prod_waiting), 0);
	/* Counted, not stored yet: a wait returns at once, nothing to take. */
	assert_true(frame_producer_async_pending(p));
	assert_int_equal(frame_producer_wait(p, 0), 0);
	assert_false(frame_producer_returned(p));
	assert_int_equal(frame_producer_reclaim(p, back, 2), 0);
	gpu_stores(&a);
	assert_false(frame_producer_async_pending(p));
	assert_true(frame_producer_returned(p));
	assert_int_equal(frame_producer_wait(p, 0), 0);
	assert_int_equal(frame_producer_reclaim(p, back, 2), 1);
	assert_int_equal(back[0].slot, 0);
	/* Counts caught up and a frame held: nothing to look at. */
	publish(p, 1, 1);
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(frame_producer_wait(p, 0), -ETIMEDOUT);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

struct sleeper {
	struct frame_producer *p;
	int ret;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;

	s->ret = frame_producer_wait(s->p, WAIT_MS);
	return NULL;
}

/*
 * The producer is asleep while the consumer claims its frames and queues
 * their releases on a stream: the first one counted wakes it (a timeout
 * here is the lost wake-up that held a starved stream for its whole sleep).
 */
static void test_async_release_wakes_sleeper(void **state)
{
	struct region r = region_new(4);
	struct frame_producer *p = producer_new(&r, 4, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	struct fpgad_frames_header *h = hdr_of(&r);
	struct sleeper s = { .p = p, .ret = 1 };
	struct frame_ring_frame f[4];
	struct frame_async a[4];
	pthread_t th;

	(void)state;
	for (uint32_t i = 0; i < 4; i++)
		publish(p, i, i);
	assert_int_equal(pthread_create(&th, NULL, sleeper_main, &s), 0);
	while (!atomic_load(FR_A32(&h->prod_waiting)))
		usleep(100);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(frame_consumer_claim(c, &f[i]), 0);
		assert_int_equal(frame_consumer_async_words(c, &f[i], &a[i]), 0);
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_int_equal(s.ret, 0);
	for (int i = 0; i < 4; i++)
		gpu_stores(&a[i]);
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

/* The producer remembers for a while that the consumer used them. */
static void test_async_recent(void **state)
{
	struct region r = region_new(2);
	struct frame_producer *p = producer_new(&r, 2, 0, 1);
	struct frame_consumer *c = consumer_new(&r);
	uint64_t t = 5 * FRAME_PRODUCER_ASYNC_RECENT_NS;
	struct frame_ring_frame f;
	struct frame_async a;

	(void)state;
	assert_false(frame_producer_async_recent(p, t));
	publish(p, 0, 0);
	assert_int_equal(frame_consumer_claim(c, &f), 0);
	assert_int_equal(frame_consumer_async_words(c, &f, &a), 0);
	assert_true(frame_producer_async_recent(p, t));
	gpu_stores(&a);
	assert_true(frame_producer_async_recent(p, t + FRAME_PRODUCER_ASYNC_RECENT_NS - 1));
	assert_false(frame_producer_async_recent(p, t + FRAME_PRODUCER_ASYNC_RECENT_NS));
	frame_consumer_free(c);
	frame_producer_free(p);
	free(r.mem);
}

static void test_revoke_claim_race(void **state)
{
	enum { SLOTS = 8 };
	struct race t = { 0 };
	uint64_t slot_seq[SLOTS];
	uint32_t free_slots[SLOTS];
	unsigned n_free = SLOTS;
	struct frame_returned back[SLOTS];
	pthread_t th;
	void *res;

	(void)state;
	t.frames = stream_frames(200000, 20000);
	t.r = region_new(SLOTS);
	t.p = producer_new(&t.r, SLOTS, 0, 1);
	t.c = consumer_new(&t.r);
	t.delivered = calloc(t.frames, 1);
	t.revoked = calloc(t.frames, 1);
	assert_non_null(t.delivered);
	assert_non_null(t.revoked);
	for (uint32_t i = 0; i < SLOTS; i++)
		free_slots[i] = i;
	assert_int_equal(pthread_create(&th, NULL, race_consumer, &t), 0);

	for (uint64_t seq = 0; seq < t.frames; seq++) {
		uint32_t s, rs;
		int n, ret;

		while (n_free == 0) {
			n = frame_producer_reclaim(t.p, back, SLOTS);
			for (int i = 0; i < n; i++)
				free_slots[n_free++] = back[i].slot;
			if (n_free == 0 &&
			    frame_producer_wait(t.p, WAIT_MS) == -ETIMEDOUT)
				t.timeouts++;
		}
		s = free_slots[--n_free];
		slot_seq[s] = seq;
		publish(t.p, s, seq);
		switch (seq % 3) {
		case 0:
			ret = frame_producer_revoke(t.p, s);
			if (ret == 0) {
				t.revoked[seq]++;
				free_slots[n_free++] = s;
			} else if (ret == -EALREADY) {
				free_slots[n_free++] = s;
			} else {
				assert_int_equal(ret, -EBUSY);
			}
			break;
		case 1: {
			/* The oldest frame still out, unless it was claimed. */
			uint64_t oldest = UINT64_MAX;

			for (uint32_t k = 0; k < SLOTS; k++) {
				if (frame_producer_slot_out(t.p, k) &&
				    slot_seq[k] < oldest) {
					oldest = slot_seq[k];
					rs = k;
				}
			}
			if (oldest == UINT64_MAX)
				break;
			ret = frame_producer_revoke(t.p, rs);
			if (ret == 0)
				t.revoked[oldest]++;
			if (ret == 0 || ret == -EALREADY)
				free_slots[n_free++] = rs;
			break;
		}
		default:
			break;
		}
	}
	frame_producer_raise(t.p, FPGAD_EVENT_CLOSED);
	assert_int_equal(pthread_join(th, &res), 0);
	assert_null(res);
	assert_int_equal(t.timeouts, 0);
	assert_int_equal(t.c_timeouts, 0);

	{
		unsigned long n_del = 0, n_rev = 0;

		for (unsigned long i = 0; i < t.frames; i++) {
			if (t.delivered[i] + t.revoked[i] != 1)
				fail_msg("frame %lu delivered %u revoked %u", i,
					 t.delivered[i], t.revoked[i]);
			n_del += t.delivered[i];
			n_rev += t.revoked[i];
		}
		assert_int_equal(n_del + n_rev, t.frames);
		print_message("      %lu frames: %lu delivered, %lu revoked\n",
			      t.frames, n_del, n_rev);
	}
	/* Every slot is back. */
	n_free += (unsigned)frame_producer_reclaim(t.p, back, SLOTS);
	assert_int_equal(n_free, SLOTS);
	free(t.delivered);
	free(t.revoked);
	frame_consumer_free(t.c);
	frame_producer_free(t.p);
	free(t.r.mem);
}

/*
 * A producer and a consumer streaming frames with futex wake-ups: the
 * consumer sleeps when it is ahead, the producer when every slot is held.
 * Slots carry the sequence number they were filled with; the consumer
 * checks it and that every seq arrives in order, and checks it again at
 * release, which catches a slot rewritten while held.
 */
struct stream {
	struct frame_producer *p;
	struct frame_consumer *c;
	_Atomic uint64_t *slot_data;	/* what the "card" wrote per slot */
	uint32_t slots;
	unsigned long frames;
	unsigned long timeouts;		/* producer's */
	unsigned long c_timeouts;	/* consumer's */
	uint64_t seed;
};

static int stream_consume(struct stream *t)
{
	struct frame_ring_frame held[4];
	unsigned n_held = 0;
	uint64_t want = 0;

	while (want < t->frames || n_held) {
		struct frame_ring_frame f;
		int ret = want < t->frames ? frame_consumer_claim(t->c, &f) :
					     -EAGAIN;

		if (ret == 0) {
			if (f.seq != want || f.slot >= t->slots ||
			    atomic_load_explicit(&t->slot_data[f.slot],
						 memory_order_relaxed) != f.seq ||
			    f.length != 100 + f.seq % 3000)
				return 10;
			want++;
			held[n_held++] = f;
		}
		/* Hold up to four, release one of them, not always the oldest. */
		if (n_held == 4 || (ret != 0 && n_held) ||
		    (n_held && (rng_next(&t->seed) & 1))) {
			unsigned i = (unsigned)(rng_next(&t->seed) % n_held);

			if (atomic_load_explicit(&t->slot_data[held[i].slot],
						 memory_order_relaxed) !=
			    held[i].seq)
				return 11;	/* overwritten while held */
			if (frame_consumer_release(t->c, &held[i]) != 0)
				return 12;
			held[i] = held[--n_held];
			continue;
		}
		if (ret == -EAGAIN) {
			ret = frame_consumer_wait(t->c, WAIT_MS);
			if (ret == -ETIMEDOUT)
				t->c_timeouts++;
			else if (ret != 0)
				return 13;
		} else if (ret != 0) {
			return 14;
		}
	}
	return 0;
}

static int stream_produce(struct stream *t)
{
	uint32_t free_slots[64];
	unsigned n_free = 0;
	struct frame_returned back[64];

	for (uint32_t i = 0; i < t->slots; i++)
		free_slots[n_free++] = i;
	for (uint64_t seq = 0; seq < t->frames; seq++) {
		struct frame_ring_frame f;
		uint32_t s;

		while (n_free == 0) {
			int n = frame_producer_reclaim(t->p, back, 64);

			if (n < 0)
				return 20;
			for (int i = 0; i < n; i++)
				free_slots[n_free++] = back[i].slot;
			if (n_free)
				break;
			if (frame_producer_wait(t->p, WAIT_MS) == -ETIMEDOUT)
				t->timeouts++;
		}
		s = free_slots[--n_free];
		atomic_store_explicit(&t->slot_data[s], seq,
				      memory_order_relaxed);
		f = mkframe(s, seq);
		if (frame_producer_publish(t->p, &f, NULL) != 0)
			return 21;
	}
	/* Wait until everything is back. */
	while (outstanding(t->p, t->slots)) {
		frame_producer_reclaim(t->p, back, 64);
		if (outstanding(t->p, t->slots) &&
		    frame_producer_wait(t->p, WAIT_MS) == -ETIMEDOUT)
			t->timeouts++;
	}
	return 0;
}

static void *stream_consumer_thread(void *arg)
{
	return (void *)(intptr_t)stream_consume(arg);
}

static void test_stream_threads(void **state)
{
	struct region r = region_new(8);
	_Atomic uint64_t data[8];
	struct stream t = {
		.slot_data = data,
		.slots = 8,
		.seed = 5,
	};
	pthread_t th;
	void *res;

	(void)state;
	t.frames = stream_frames(1000000, 50000);
	t.p = producer_new(&r, 8, 8, 1);
	t.c = consumer_new(&r);
	for (int i = 0; i < 8; i++)
		atomic_init(&data[i], UINT64_MAX);
	assert_int_equal(pthread_create(&th, NULL, stream_consumer_thread, &t),
			 0);
	assert_int_equal(stream_produce(&t), 0);
	assert_int_equal(pthread_join(th, &res), 0);
	assert_int_equal((intptr_t)res, 0);
	assert_int_equal(t.timeouts, 0);
	assert_int_equal(t.c_timeouts, 0);
	/* Positions skipped over held descriptors make head run ahead. */
	assert_true(hdr_of(&r)->head >= t.frames);
	print_message("      %lu frames in order\n", t.frames);
	frame_consumer_free(t.c);
	frame_producer_free(t.p);
	free(r.mem);
}

/* The same between two processes over a POSIX shared-memory object. */
static void test_stream_processes(void **state)
{
	enum { SLOTS = 16 };
	size_t ring_len = frame_ring_size(SLOTS);
	size_t len = ring_len + SLOTS * sizeof(uint64_t);
	char name[64];
	void *mem;
	int fd, status;
	pid_t pid;
	struct stream t = { .slots = SLOTS, .seed = 9 };

	(void)state;
	t.frames = stream_frames(200000, 20000);
	snprintf(name, sizeof(name), "/fpgad-test-frames-%ld", (long)getpid());
	fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
	assert_true(fd >= 0);
	shm_unlink(name);
	assert_int_equal(ftruncate(fd, (off_t)len), 0);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(mem != MAP_FAILED);
	close(fd);
	t.slot_data = (_Atomic uint64_t *)((char *)mem + ring_len);
	{
		struct region r = { .mem = mem, .len = ring_len };

		t.p = producer_new(&r, SLOTS, 0, 0x1234);
	}

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* The child maps nothing new: it validates what it shares. */
		int ret = frame_consumer_attach(mem, ring_len, &t.c);

		if (ret == 0)
			ret = stream_consume(&t);
		else
			ret = 30;
		if (ret == 0 && t.c_timeouts)
			ret = 31;
		frame_consumer_free(t.c);
		_exit(ret);
	}
	assert_int_equal(stream_produce(&t), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(t.timeouts, 0);
	print_message("      %lu frames across processes\n", t.frames);
	frame_producer_free(t.p);
	munmap(mem, len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_init_attach),
		cmocka_unit_test(test_producer_init_rejects),
		cmocka_unit_test(test_validate_corrupt),
		cmocka_unit_test(test_publish_claim_release),
		cmocka_unit_test(test_old_consumer),
		cmocka_unit_test(test_old_producer),
		cmocka_unit_test(test_burst_one_wake),
		cmocka_unit_test(test_h2c_fill),
		cmocka_unit_test(test_wrap_around),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_claim_newest),
		cmocka_unit_test(test_revoke),
		cmocka_unit_test(test_reclaim_all),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_generation),
		cmocka_unit_test(test_bad_descriptor),
		cmocka_unit_test(test_scribbling_consumer),
		cmocka_unit_test(test_scribbling_producer),
		cmocka_unit_test(test_async_release_wakes),
		cmocka_unit_test(test_async_release_wakes_sleeper),
		cmocka_unit_test(test_async_recent),
		cmocka_unit_test(test_revoke_claim_race),
		cmocka_unit_test(test_stream_threads),
		cmocka_unit_test(test_stream_processes),
	};

	return cmocka_run_group_tests_name("frame_ring", tests, NULL, NULL);
}
