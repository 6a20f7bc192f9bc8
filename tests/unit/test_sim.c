// SPDX-License-Identifier: MIT
/*
 * test_sim.c - the simulated card: queues, frames, the link model,
 * faults, reset, the H2C sink, kick; the GPU path where a GPU answers.
 *
 * No assertion depends on how fast this machine is: pacing is checked on
 * the completion timestamps the model computes (a transfer never ends
 * before its start plus its time on the link), never on wall time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "crc32c.h"
#include "device/device.h"
#include "device/sim/sim.h"
#include "fpgad_simframe.h"
#include "memory/copy.h"
#include "memory/memory.h"

#define SLOT (64u << 10)
#define FRAME 40000u
#define NSLOTS 16u
#define WAIT_MS 5000

static const struct device_ops *ops = &device_sim_ops;

struct fixture {
	struct config cfg;
	struct device *dev;
	struct device_queue *q;
	unsigned char *buf;		/* NSLOTS * SLOT, page aligned */
	uint64_t handle;
	unsigned char *pattern;
	uint64_t pattern_size;
	unsigned char *expect;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void channel(struct config_channel *ch, const char *name,
		    enum direction dir, unsigned engine)
{
	memset(ch, 0, sizeof(*ch));
	snprintf(ch->name, sizeof(ch->name), "%s", name);
	ch->direction = dir;
	ch->engine = engine;
	ch->slots = NSLOTS;
	ch->slot_size = SLOT;
	ch->frame_size = dir == DIR_C2H ? FRAME : 0;
	ch->queue_depth = 4;
	ch->memory = MEMORY_HOST;
	ch->mode = MODE_HOST;
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->cfg.sim.card_memory = 256u << 20;
	f->cfg.device.backend = BACKEND_SIM;
	f->cfg.device.dma_timeout_ms = 1000;
	f->cfg.n_channels = 1;
	channel(&f->cfg.channels[0], "c2h0", DIR_C2H, 0);
	f->buf = aligned_alloc(4096, NSLOTS * SLOT);
	assert_non_null(f->buf);
	memset(f->buf, 0, NSLOTS * SLOT);
	f->pattern_size = fpgad_simframe_pattern_size(SLOT);
	f->pattern = malloc(f->pattern_size);
	f->expect = malloc(SLOT);
	assert_non_null(f->pattern);
	assert_non_null(f->expect);
	fpgad_simframe_pattern_fill(f->pattern, f->pattern_size);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->q)
		ops->queue_close(f->q);
	ops->close(f->dev);
	free(f->buf);
	free(f->pattern);
	free(f->expect);
	free(f);
	return 0;
}

/* Open the device and the channel 0 queue with the buffer pinned. */
static void start(struct fixture *f)
{
	struct dev_region r = {
		.kind = DEV_REGION_HOST,
		.addr = f->buf,
		.fd = -1,
		.length = NSLOTS * SLOT,
	};

	/* The faults a test set in the environment are this open's only. */
	assert_int_equal(ops->open(&f->cfg, &f->dev, NULL, 0), 0);
	unsetenv(SIM_FAULTS_ENV);
	assert_int_equal(ops->queue_open(f->dev, &f->cfg.channels[0], &f->q),
			 0);
	assert_int_equal(ops->pin(f->q, &r, &f->handle), 0);
}

static int submit(struct fixture *f, unsigned slot, uint64_t len,
		  uint64_t cookie)
{
	struct dev_xfer x = {
		.handle = f->handle,
		.offset = (uint64_t)slot * SLOT,
		.length = len,
		.cookie = cookie,
	};

	return ops->submit(f->q, &x);
}

/* Collect exactly @n completions, failing after WAIT_MS without one. */
static void collect(struct device_queue *q, struct dev_completion *out,
		    unsigned n)
{
	unsigned got = 0;

	while (got < n) {
		int r = ops->wait(q, out + got, n - got, WAIT_MS);

		assert_true(r >= 0);
		if (r == 0)
			fail_msg("%u of %u completions after %d ms", got, n,
				 WAIT_MS);
		got += (unsigned)r;
	}
}

/*
 * The first @n bytes of frame @seq, @length bytes long, as the card sends
 * it: the header carries the CRC-32C of the whole payload.
 */
static void expect_frame(struct fixture *f, uint64_t n, uint64_t length,
			 uint64_t seq)
{
	struct fpgad_simframe_hdr h;

	assert_true(length <= SLOT);
	fpgad_simframe_fill(f->expect, length, seq, f->cfg.channels[0].engine,
			    NULL, 0);
	(void)n;
	if (length <= sizeof(h))
		return;		/* no payload, no CRC */
	memcpy(&h, f->expect, sizeof(h));
	fpgad_simframe_hdr_set_crc(&h, crc32c(f->expect + sizeof(h),
					      length - sizeof(h)));
	memcpy(f->expect, &h, sizeof(h));
	assert_int_equal(crc32c_frame_check(f->expect, length), 1);
}

/* The frame in @slot is frame @seq, byte for byte. */
static void verify(struct fixture *f, unsigned slot, uint64_t len,
		   uint64_t seq)
{
	uint64_t bad = 0;
	int r;

	r = fpgad_simframe_check(f->buf + (size_t)slot * SLOT, len, seq,
				 f->pattern, f->pattern_size, &bad);
	if (r)
		fail_msg("slot %u frame %llu: %s at byte %llu", slot,
			 (unsigned long long)seq, fpgad_simframe_strerror(r),
			 (unsigned long long)bad);
	expect_frame(f, len, len, seq);
	assert_memory_equal(f->buf + (size_t)slot * SLOT, f->expect, len);
}

static struct sim_queue_stats stats(struct device_queue *q)
{
	struct sim_queue_stats s;

	assert_int_equal(sim_queue_stats(q, &s), 0);
	return s;
}

/* ---- tests ------------------------------------------------------------- */

/*
 * CRC-32C's check value, and every length and alignment through the
 * instruction path (SSE4.2, ARMv8 CRC) against the table's bytewise step.
 */
static void test_crc32c_vectors(void **state)
{
	static const uint32_t poly = 0x82f63b78u;
	unsigned char buf[64 + 8];

	(void)state;
	assert_int_equal(crc32c("123456789", 9), 0xe3069283u);
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)(i * 37 + 11);
	for (unsigned off = 0; off < 8; off++) {
		for (unsigned n = 0; n + off <= sizeof(buf); n++) {
			uint32_t c = 0xffffffffu;

			for (unsigned i = 0; i < n; i++) {
				c ^= buf[off + i];
				for (int k = 0; k < 8; k++)
					c = c & 1 ? (c >> 1) ^ poly : c >> 1;
			}
			assert_int_equal(crc32c(buf + off, n), ~c);
		}
	}
}

static void test_open_info(void **state)
{
	struct fixture *f = *state;
	struct device_info info;
	struct device *d = (void *)0x1;

	f->cfg.sim.card_memory = 0;	/* default: 2 GiB of address space */
	f->cfg.sim.link.gen = 4;
	f->cfg.sim.link.width = 8;
	assert_int_equal(ops->open(&f->cfg, &f->dev, NULL, 0), 0);
	assert_int_equal(ops->info(f->dev, &info), 0);
	assert_string_equal(info.name, "sim");
	assert_true(info.card_memory == 2ull << 30);
	assert_int_equal(info.link_gen, 4);
	assert_int_equal(info.link_width, 8);
	assert_int_equal(info.align, 4096);
	assert_int_equal(info.max_inflight, 16);
	assert_true(info.c2h_channels >= 1 && info.h2c_channels >= 1);
	assert_string_equal(ops->name, "sim");

	f->cfg.sim.link.gen = 6;
	assert_int_equal(ops->open(&f->cfg, &d, NULL, 0), -EINVAL);
	f->cfg.sim.link.gen = 3;
	f->cfg.sim.link.width = 0;
	assert_int_equal(ops->open(&f->cfg, &d, NULL, 0), -EINVAL);
	f->cfg.sim.link.width = 17;
	assert_int_equal(ops->open(&f->cfg, &d, NULL, 0), -EINVAL);
	assert_ptr_equal(d, (void *)0x1);
}

static void test_c2h_frames_verify(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[NSLOTS];
	struct sim_queue_stats s;
	unsigned round, i;

	start(f);
	for (round = 0; round < 4; round++) {
		for (i = 0; i < NSLOTS; i++)
			assert_int_equal(submit(f, i, SLOT, 100 + i), 0);
		collect(f->q, c, NSLOTS);
		for (i = 0; i < NSLOTS; i++) {
			uint64_t seq = (uint64_t)round * NSLOTS + i;

			/* In order, one frame each, nothing lost. */
			assert_int_equal(c[i].status, 0);
			assert_true(c[i].cookie == 100 + i);
			assert_true(c[i].seq == seq);
			assert_int_equal(c[i].length, FRAME);
			assert_int_equal(c[i].flags, 0);
			assert_true(c[i].t_start_ns > 0);
			assert_true(c[i].t_end_ns >= c[i].t_start_ns);
			if (i)
				assert_true(c[i].t_start_ns >=
					    c[i - 1].t_start_ns);
			verify(f, i, FRAME, seq);
		}
	}
	s = stats(f->q);
	assert_true(s.submitted == 4 * NSLOTS);
	assert_true(s.completed == 4 * NSLOTS);
	assert_true(s.frames == 4 * NSLOTS);
	assert_true(s.bytes == 4ull * NSLOTS * FRAME);
	assert_true(s.overruns == 0);
	/* Nothing more comes. */
	assert_int_equal(ops->wait(f->q, c, NSLOTS, 0), 0);
}

static void test_unframed_and_truncated(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[2];

	/* frame_size 0: each transfer is one whole frame. */
	f->cfg.channels[0].frame_size = 0;
	start(f);
	assert_int_equal(submit(f, 0, 12288, 1), 0);
	assert_int_equal(submit(f, 1, 64, 2), 0);
	collect(f->q, c, 2);
	assert_int_equal(c[0].status, 0);
	assert_int_equal(c[0].length, 12288);
	verify(f, 0, 12288, 0);
	assert_int_equal(c[1].length, 64);
	verify(f, 1, 64, 1);
	assert_int_equal(submit(f, 0, 63, 3), -EINVAL);
	ops->queue_close(f->q);

	/* A buffer smaller than the frame gets its head, flagged. */
	f->cfg.channels[0].frame_size = FRAME;
	assert_int_equal(ops->queue_open(f->dev, &f->cfg.channels[0], &f->q),
			 0);
	{
		struct dev_region r = { .kind = DEV_REGION_HOST,
					.addr = f->buf, .fd = -1,
					.length = NSLOTS * SLOT };

		assert_int_equal(ops->pin(f->q, &r, &f->handle), 0);
	}
	assert_int_equal(submit(f, 0, 4096, 1), 0);
	assert_int_equal(submit(f, 1, SLOT, 2), 0);
	collect(f->q, c, 2);
	assert_int_equal(c[0].status, 0);
	assert_int_equal(c[0].length, 4096);
	assert_int_equal(c[0].flags, DEV_COMPLETION_TRUNCATED);
	expect_frame(f, 4096, FRAME, 0);
	assert_memory_equal(f->buf, f->expect, 4096);
	/* A cut-short frame has nothing to check its CRC against. */
	assert_int_equal(crc32c_frame_check(f->buf, 4096), 0);
	/* The source moved on: the next transfer gets the next frame. */
	assert_true(c[1].seq == 1);
	assert_int_equal(c[1].flags, 0);
	verify(f, 1, FRAME, 1);
}

static void test_queue_depth(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[NSLOTS];
	unsigned i;

	start(f);
	for (i = 0; i < 16; i++)
		assert_int_equal(submit(f, i, SLOT, i), 0);
	/* Completions not yet taken still count. */
	assert_int_equal(submit(f, 0, SLOT, 16), -EAGAIN);
	collect(f->q, c, 1);
	assert_true(c[0].cookie == 0);
	assert_int_equal(submit(f, 0, SLOT, 16), 0);
	assert_int_equal(submit(f, 0, SLOT, 17), -EAGAIN);
	collect(f->q, c, 16);
	for (i = 0; i < 16; i++)
		assert_true(c[i].cookie == i + 1);
}

static void test_bad_arguments(void **state)
{
	struct fixture *f = *state;
	struct config_channel ch = f->cfg.channels[0];
	struct device_queue *q2 = (void *)0x1;
	struct dev_region r = { .kind = DEV_REGION_HOST, .fd = -1 };
	struct dev_xfer x = { .length = 4096 };
	struct dev_completion c;
	uint64_t h = 77;

	start(f);
	/* One queue per engine and direction. */
	assert_int_equal(ops->queue_open(f->dev, &ch, &q2), -EBUSY);
	ch.engine = 16;
	assert_int_equal(ops->queue_open(f->dev, &ch, &q2), -EINVAL);
	ch.engine = 1;
	ch.frame_size = 10;
	assert_int_equal(ops->queue_open(f->dev, &ch, &q2), -EINVAL);
	assert_ptr_equal(q2, (void *)0x1);

	/* Pins. */
	r.addr = f->buf + 8;
	r.length = 4096;
	assert_int_equal(ops->pin(f->q, &r, &h), -EINVAL);
	r.addr = f->buf;
	r.length = 0;
	assert_int_equal(ops->pin(f->q, &r, &h), -EINVAL);
	r.length = 4096;
	r.kind = DEV_REGION_DMABUF;
	r.fd = 0;
	assert_int_equal(ops->pin(f->q, &r, &h), -EOPNOTSUPP);
#ifndef FPGAD_CUDA
	r.kind = DEV_REGION_CUDA;
	assert_int_equal(ops->pin(f->q, &r, &h), -EOPNOTSUPP);
#endif
	assert_true(h == 77);

	/* Transfers. */
	x.handle = f->handle + 1;
	assert_int_equal(ops->submit(f->q, &x), -EINVAL);
	x.handle = f->handle;
	x.offset = NSLOTS * SLOT;
	assert_int_equal(ops->submit(f->q, &x), -EINVAL);
	x.offset = 512;
	assert_int_equal(ops->submit(f->q, &x), -EINVAL);
	x.offset = (NSLOTS - 1) * SLOT;
	x.length = SLOT + 4096;
	assert_int_equal(ops->submit(f->q, &x), -EINVAL);
	x.length = 0;
	assert_int_equal(ops->submit(f->q, &x), -EINVAL);
	x.offset = UINT64_MAX - 4095;
	x.length = 8192;
	assert_int_equal(ops->submit(f->q, &x), -EINVAL);

	/* A pin with transfers outstanding stays. */
	assert_int_equal(submit(f, 0, SLOT, 1), 0);
	assert_int_equal(ops->unpin(f->q, f->handle), -EBUSY);
	collect(f->q, &c, 1);
	assert_int_equal(ops->unpin(f->q, f->handle), 0);
	assert_int_equal(ops->unpin(f->q, f->handle), -EINVAL);
	/* A stale handle stays stale after its slot is reused. */
	r.kind = DEV_REGION_HOST;
	r.fd = -1;
	assert_int_equal(ops->pin(f->q, &r, &h), 0);
	assert_true(h != f->handle);
	assert_int_equal(submit(f, 0, 4096, 1), -EINVAL);
	assert_int_equal(ops->wait(f->q, &c, 0, 0), 0);
}

static uint64_t link_ns(unsigned gen, unsigned width, uint64_t bytes)
{
	/* Per lane: GT/s times the encoding's efficiency, over 8 bits. */
	double gts = gen == 1 ? 2.5 : gen == 2 ? 5 : gen == 3 ? 8 :
		     gen == 4 ? 16 : 32;
	double eff = gen <= 2 ? 8.0 / 10 : 128.0 / 130;
	double bps = gts * 1e9 * eff / 8 * width;

	return (uint64_t)((double)bytes * 1e9 / bps);
}

static void test_link_model(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[NSLOTS];
	static const struct link_model links[] = {
		{ 1, 1 }, { 2, 4 }, { 3, 1 }, { 4, 16 }, { 5, 8 },
	};
	unsigned l, i;

	for (l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
		uint64_t dur = link_ns(links[l].gen, links[l].width, FRAME);

		f->cfg.sim.link = links[l];
		start(f);
		for (i = 0; i < 8; i++)
			assert_int_equal(submit(f, i, SLOT, i), 0);
		collect(f->q, c, 8);
		for (i = 0; i < 8; i++) {
			assert_int_equal(c[i].status, 0);
			/* Never faster than the link (1 ns of rounding). */
			assert_true(c[i].t_end_ns - c[i].t_start_ns + 1 >= dur);
			/* One direction carries one transfer at a time. */
			if (i)
				assert_true(c[i].t_start_ns + 1 >=
					    c[i - 1].t_start_ns + dur);
			verify(f, i, FRAME, i);
		}
		ops->queue_close(f->q);
		f->q = NULL;
		ops->close(f->dev);
		f->dev = NULL;
	}
}

static void test_link_shared(void **state)
{
	struct fixture *f = *state;
	struct config_channel ch1 = f->cfg.channels[0];
	struct dev_completion a[8], b[8];
	struct device_queue *q1;
	unsigned char *buf1;
	uint64_t h1, dur;
	unsigned i, j;

	/* Two C2H engines share one direction of one link. */
	f->cfg.sim.link.gen = 2;
	f->cfg.sim.link.width = 1;
	dur = link_ns(2, 1, FRAME);
	start(f);
	ch1.engine = 1;
	snprintf(ch1.name, sizeof(ch1.name), "c2h1");
	assert_int_equal(ops->queue_open(f->dev, &ch1, &q1), 0);
	buf1 = aligned_alloc(4096, 8 * SLOT);
	assert_non_null(buf1);
	{
		struct dev_region r = { .kind = DEV_REGION_HOST, .addr = buf1,
					.fd = -1, .length = 8 * SLOT };

		assert_int_equal(ops->pin(q1, &r, &h1), 0);
	}
	for (i = 0; i < 8; i++) {
		struct dev_xfer x = { .handle = h1, .offset = i * SLOT,
				      .length = SLOT, .cookie = i };

		assert_int_equal(submit(f, i, SLOT, i), 0);
		assert_int_equal(ops->submit(q1, &x), 0);
	}
	collect(f->q, a, 8);
	collect(q1, b, 8);
	for (i = 0; i < 8; i++) {
		assert_int_equal(b[i].status, 0);
		assert_int_equal(fpgad_simframe_check(buf1 + i * SLOT, FRAME,
						      i, NULL, 0, NULL), 0);
		for (j = 0; j < 8; j++) {
			uint64_t s1 = a[i].t_start_ns, s2 = b[j].t_start_ns;

			/* Link time slices never overlap. */
			assert_true(s1 + dur <= s2 + 1 || s2 + dur <= s1 + 1);
		}
	}
	ops->queue_close(q1);
	free(buf1);
}

static void test_frame_rate(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[8];
	const unsigned rate = 2000;
	unsigned i;

	f->cfg.channels[0].frame_rate = rate;
	start(f);
	for (i = 0; i < 8; i++)
		assert_int_equal(submit(f, i, SLOT, i), 0);
	collect(f->q, c, 8);
	assert_true(c[0].seq == 0);
	for (i = 0; i < 8; i++) {
		/* Frame N exists from t0 + N / rate; t0: frame 0's start. */
		assert_int_equal(c[i].status, 0);
		assert_true(c[i].t_start_ns - c[0].t_start_ns >=
			    c[i].seq * 1000000000ull / rate);
		if (i)
			assert_true(c[i].seq > c[i - 1].seq);
		verify(f, i, FRAME, c[i].seq);
	}
}

static void test_source_overrun(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[2];
	struct sim_queue_stats s;

	/* 20 kHz; nobody takes frames for 20 ms: the FIFO overflows. */
	f->cfg.channels[0].frame_rate = 20000;
	start(f);
	assert_int_equal(submit(f, 0, SLOT, 0), 0);
	collect(f->q, c, 1);
	assert_true(c[0].seq == 0);
	usleep(20000);
	assert_int_equal(submit(f, 1, SLOT, 1), 0);
	collect(f->q, c + 1, 1);
	assert_true(c[1].seq > 5);
	verify(f, 1, FRAME, c[1].seq);
	s = stats(f->q);
	assert_true(s.overruns == c[1].seq - 1);
}

static void test_frame_timeout(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[2];
	struct dev_xfer x = { .length = SLOT, .timeout_ms = 20 };

	/* 1 frame/s: the second transfer gets nothing within 20 ms. */
	f->cfg.channels[0].frame_rate = 1;
	start(f);
	x.handle = f->handle;
	assert_int_equal(ops->submit(f->q, &x), 0);
	x.offset = SLOT;
	x.cookie = 1;
	assert_int_equal(ops->submit(f->q, &x), 0);
	collect(f->q, c, 2);
	assert_int_equal(c[0].status, 0);
	assert_int_equal(c[1].status, -ETIMEDOUT);
	assert_true(c[1].t_end_ns - c[1].t_start_ns >= 20000000u);
	assert_true(stats(f->q).timeouts == 1);
}

/*
 * FPGAD_SIM_FAULTS: KIND=N pairs, any of the four kinds once each; every
 * other form is refused with a sentence, and open refuses it naming the
 * variable.
 */
static void test_faults_parse(void **state)
{
	static const char *const bad[][2] = {
		{ "errors=1", "'errors=1' is not a kind" },
		{ "seed=-3", "seed: '-3' is not a whole number" },
		{ "error", "'error' has no value" },
		{ "error=", "error: '' is not a whole number" },
		{ "error=-1", "error: '-1' is not a whole number" },
		{ "error=+1", "error: '+1' is not a whole number" },
		{ "error=1x", "error: '1x' is not a whole number" },
		{ "error=4294967296", "error: '4294967296' is not a whole number from 0 to 4294967295" },
		{ "error=1,error=2", "error is given twice" },
		{ "error=1,", "a trailing ','" },
		{ "error=1 ,hang=2", "error: '1 ' is not a whole number" },
		{ ",error=1", "'' is not a kind" },
		{ "Hang=1", "'Hang=1' is not a kind" },
	};
	struct fixture *f = *state;
	struct sim_faults sf = { 9, 9, 9, 9, 9 };
	struct device *d = (void *)0x1;
	char err[512];

	assert_int_equal(sim_faults_parse("timeout=53,error=41,corrupt=29,hang=97",
					  &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.timeout, 53);
	assert_int_equal(sf.error, 41);
	assert_int_equal(sf.corrupt, 29);
	assert_int_equal(sf.hang, 97);
	assert_int_equal(sf.seed, SIM_FAULTS_SEED);	/* the default */
	assert_int_equal(sim_faults_parse("seed=7", &sf, err, sizeof(err)), 0);
	assert_true(sf.seed == 7 && !sf.hang && !sf.error && !sf.timeout && !sf.corrupt);
	assert_int_equal(sim_faults_parse("hang=4294967295,error=0", &sf, err,
					  sizeof(err)), 0);
	assert_true(sf.hang == 4294967295u && !sf.error && !sf.timeout && !sf.corrupt);
	/* Unset or empty: no faults. */
	assert_int_equal(sim_faults_parse(NULL, &sf, err, sizeof(err)), 0);
	assert_true(!sf.hang && !sf.error && !sf.timeout && !sf.corrupt);
	assert_int_equal(sim_faults_parse("", &sf, err, sizeof(err)), 0);
	assert_int_equal(sf.seed, SIM_FAULTS_SEED);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sf.error = 77;
		if (sim_faults_parse(bad[i][0], &sf, err, sizeof(err)) != -EINVAL ||
		    !strstr(err, bad[i][1]))
			fail_msg("'%s': want -EINVAL and '%s', got '%s'", bad[i][0],
				 bad[i][1], err);
		assert_int_equal(sf.error, 77);	/* untouched */
	}

	setenv(SIM_FAULTS_ENV, "error=2,stall=3", 1);
	assert_int_equal(ops->open(&f->cfg, &d, err, sizeof(err)), -EINVAL);
	unsetenv(SIM_FAULTS_ENV);
	assert_ptr_equal(d, (void *)0x1);
	assert_string_equal(err, "environment FPGAD_SIM_FAULTS='error=2,stall=3': "
			    "'stall=3' is not a kind: want KIND=N[,KIND=N...] with N "
			    "a whole number and KIND timeout, error, corrupt or hang "
			    "(one fault in every N transfers, 0 = never) or seed "
			    "(which byte a corrupt fault flips)");
}

static void test_fault_error(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[6];
	static const uint64_t seqs[] = { 0, 1, 2, 3, 4, 5 };
	unsigned i;

	setenv(SIM_FAULTS_ENV, "error=3", 1);
	start(f);
	for (i = 0; i < 6; i++)
		assert_int_equal(submit(f, i, SLOT, i), 0);
	collect(f->q, c, 6);
	for (i = 0; i < 6; i++) {
		assert_true(c[i].cookie == i);
		assert_true(c[i].seq == seqs[i]);
		if (i % 3 == 2) {
			/* The frame it took is lost: a gap in seq. */
			assert_int_equal(c[i].status, -EIO);
			assert_int_equal(c[i].length, 0);
		} else {
			assert_int_equal(c[i].status, 0);
			verify(f, i, FRAME, c[i].seq);
		}
	}
	assert_true(stats(f->q).fault_error == 2);
}

static void test_fault_timeout(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[3];
	unsigned i;

	setenv(SIM_FAULTS_ENV, "timeout=2", 1);
	f->cfg.device.dma_timeout_ms = 30;
	start(f);
	for (i = 0; i < 3; i++)
		assert_int_equal(submit(f, i, SLOT, i), 0);
	collect(f->q, c, 3);
	assert_int_equal(c[0].status, 0);
	assert_int_equal(c[1].status, -ETIMEDOUT);
	assert_true(c[1].t_end_ns - c[1].t_start_ns >= 30000000u);
	assert_int_equal(c[2].status, 0);
	assert_true(c[2].t_start_ns >= c[1].t_end_ns);
	verify(f, 2, FRAME, c[2].seq);
	assert_true(stats(f->q).fault_timeout == 1);
	assert_true(stats(f->q).timeouts == 1);
}

static void test_fault_corrupt(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[4];
	unsigned i;

	setenv(SIM_FAULTS_ENV, "corrupt=2", 1);
	start(f);
	for (i = 0; i < 4; i++)
		assert_int_equal(submit(f, i, SLOT, i), 0);
	collect(f->q, c, 4);
	for (i = 0; i < 4; i++) {
		uint64_t bad = 0;
		int r;

		/* The card says all is well; the data says otherwise. */
		assert_int_equal(c[i].status, 0);
		r = fpgad_simframe_check(f->buf + i * SLOT, FRAME, c[i].seq,
					 f->pattern, f->pattern_size, &bad);
		/* The CRC the card computed before the flip catches it. */
		if (i % 2) {
			assert_int_equal(r, FPGAD_SIMFRAME_BAD_PAYLOAD);
			assert_true(bad >= 64 && bad < FRAME);
			assert_int_equal(crc32c_frame_check(f->buf + i * SLOT,
							    FRAME), -1);
		} else {
			assert_int_equal(r, 0);
			assert_int_equal(crc32c_frame_check(f->buf + i * SLOT,
							    FRAME), 1);
		}
	}
	assert_true(stats(f->q).fault_corrupt == 2);
}

static void test_fault_hang_reset(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[4];
	struct sim_queue_stats s;
	unsigned i;

	setenv(SIM_FAULTS_ENV, "hang=3", 1);
	start(f);
	for (i = 0; i < 4; i++)
		assert_int_equal(submit(f, i, SLOT, i), 0);
	collect(f->q, c, 2);
	assert_int_equal(c[0].status, 0);
	assert_int_equal(c[1].status, 0);
	/* The third never completes, and nothing behind it does. */
	assert_int_equal(ops->wait(f->q, c, 4, 50), 0);

	assert_int_equal(ops->reset(f->q), 0);
	collect(f->q, c, 2);
	assert_true(c[0].cookie == 2);
	assert_int_equal(c[0].status, -ECANCELED);
	assert_true(c[1].cookie == 3);
	assert_int_equal(c[1].status, -ECANCELED);
	s = stats(f->q);
	assert_true(s.fault_hang == 1);
	assert_true(s.canceled == 2);

	/* Usable again; the hung transfer's frame is gone. */
	assert_int_equal(submit(f, 0, SLOT, 10), 0);
	collect(f->q, c, 1);
	assert_int_equal(c[0].status, 0);
	assert_true(c[0].seq == 3);
	verify(f, 0, FRAME, 3);
}

static void test_reset_cancels_queued(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[NSLOTS];
	unsigned seen = 0, canceled = 0, i;

	/* Gen1 x1: 40 KB take 160 us each, so most are still queued. */
	f->cfg.sim.link.gen = 1;
	f->cfg.sim.link.width = 1;
	start(f);
	for (i = 0; i < NSLOTS; i++)
		assert_int_equal(submit(f, i, SLOT, i), 0);
	assert_int_equal(ops->reset(f->q), 0);
	/* Everything is accounted for, in order, at once. */
	assert_int_equal(ops->wait(f->q, c, NSLOTS, 0), NSLOTS);
	for (i = 0; i < NSLOTS; i++) {
		assert_true(c[i].cookie == i);
		seen |= 1u << i;
		if (c[i].status == -ECANCELED)
			canceled++;
		else
			assert_int_equal(c[i].status, 0);
		/* Once one is canceled, all after it are. */
		if (i && c[i - 1].status)
			assert_int_equal(c[i].status, -ECANCELED);
	}
	assert_int_equal(seen, 0xffff);
	assert_true(canceled > 0);
	assert_true(stats(f->q).canceled == canceled);

	/* A reset with nothing queued is fine; the queue works after. */
	assert_int_equal(ops->reset(f->q), 0);
	assert_int_equal(submit(f, 3, SLOT, 99), 0);
	collect(f->q, c, 1);
	assert_int_equal(c[0].status, 0);
	verify(f, 3, FRAME, c[0].seq);
}

static void test_h2c_sink(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[5];
	struct sim_queue_stats s;
	unsigned i;

	channel(&f->cfg.channels[0], "h2c0", DIR_H2C, 2);
	start(f);
	for (i = 0; i < 5; i++)
		fpgad_simframe_fill(f->buf + i * SLOT, 5000, 1000 + i, 9, NULL,
				    0);
	f->buf[2 * SLOT + 4000] ^= 0x10;		/* torn */
	((struct fpgad_simframe_hdr *)(f->buf + 3 * SLOT))->magic = 0;
	for (i = 0; i < 5; i++)
		assert_int_equal(submit(f, i, i == 4 ? 4999 : 5000, i), 0);
	collect(f->q, c, 5);
	for (i = 0; i < 5; i++) {
		assert_int_equal(c[i].status, 0);
		assert_int_equal(c[i].length, i == 4 ? 4999 : 5000);
	}
	assert_true(c[0].seq == 1000);
	assert_true(c[1].seq == 1001);
	s = stats(f->q);
	assert_true(s.frames == 5);
	assert_true(s.sink_good == 2);
	assert_true(s.sink_bad == 3);
	/* The last bad one: a frame cut one byte short. */
	assert_int_equal(s.sink_last_error, FPGAD_SIMFRAME_BAD_LENGTH);

	/* One torn frame alone: the offset is reported. */
	assert_int_equal(submit(f, 2, 5000, 5), 0);
	collect(f->q, c, 1);
	s = stats(f->q);
	assert_int_equal(s.sink_last_error, FPGAD_SIMFRAME_BAD_PAYLOAD);
	assert_true(s.sink_last_offset == 4000);
	assert_true(s.sink_bad == 4);

	/* Transfers longer than the sink's buffer are refused. */
	assert_int_equal(submit(f, 0, SLOT + 4096, 6), -EINVAL);
}

static void test_h2c_fault_corrupt(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c[4];
	struct sim_queue_stats s;
	unsigned i;

	setenv(SIM_FAULTS_ENV, "corrupt=4", 1);
	channel(&f->cfg.channels[0], "h2c0", DIR_H2C, 0);
	start(f);
	for (i = 0; i < 4; i++) {
		fpgad_simframe_fill(f->buf + i * SLOT, SLOT, i, 0, NULL, 0);
		assert_int_equal(submit(f, i, SLOT, i), 0);
	}
	collect(f->q, c, 4);
	s = stats(f->q);
	assert_true(s.sink_good == 3);
	assert_true(s.sink_bad == 1);
	assert_true(s.fault_corrupt == 1);
	/* The damage happened on the way: the source buffer is intact. */
	assert_int_equal(fpgad_simframe_check(f->buf + 3 * SLOT, SLOT, 3, NULL,
					      0, NULL), 0);
}

struct waiter {
	struct device_queue *q;
	int ret;
	uint64_t woke_ns;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	struct dev_completion c;

	w->ret = ops->wait(w->q, &c, 1, -1);
	w->woke_ns = now_ns();
	return NULL;
}

static void test_kick(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c;
	struct waiter w;
	pthread_t t;
	uint64_t t0;

	f->cfg.channels[0].frame_rate = 20;
	start(f);
	/* A kick before the wait makes the next wait return at once. */
	ops->kick(f->q);
	assert_int_equal(ops->wait(f->q, &c, 1, -1), 0);
	/* Consumed: a poll now finds nothing and no kick. */
	assert_int_equal(ops->wait(f->q, &c, 1, 0), 0);

	/* A kick from another thread ends a blocked wait(-1). */
	memset(&w, 0, sizeof(w));
	w.q = f->q;
	w.ret = -1;
	assert_int_equal(pthread_create(&t, NULL, waiter_main, &w), 0);
	usleep(20000);
	t0 = now_ns();
	ops->kick(f->q);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.ret, 0);
	assert_true(w.woke_ns >= t0);

	/*
	 * And a completion ends one too.  One thread at a time uses a queue:
	 * submit first; frame 1 comes 50 ms after frame 0.
	 */
	assert_int_equal(submit(f, 0, SLOT, 5), 0);
	collect(f->q, &c, 1);
	assert_int_equal(submit(f, 1, SLOT, 6), 0);
	w.ret = -1;
	assert_int_equal(pthread_create(&t, NULL, waiter_main, &w), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(w.ret, 1);
}

static void test_wait_timeout(void **state)
{
	struct fixture *f = *state;
	struct dev_completion c;
	uint64_t t0;

	start(f);
	t0 = now_ns();
	assert_int_equal(ops->wait(f->q, &c, 1, 30), 0);
	/* Timeouts are absolute deadlines: never early. */
	assert_true(now_ns() - t0 >= 30000000u);
}

static void test_close_busy(void **state)
{
	struct fixture *f = *state;
	struct config_channel h2c;
	struct device_queue *q2;
	unsigned i;

	/* Close with a hung transfer and queued ones: no wait, no leak. */
	setenv(SIM_FAULTS_ENV, "hang=1", 1);
	start(f);
	for (i = 0; i < 8; i++)
		assert_int_equal(submit(f, i, SLOT, i), 0);
	ops->queue_close(f->q);
	f->q = NULL;
	/* Device close takes queues still open with it. */
	channel(&h2c, "h2c0", DIR_H2C, 0);
	assert_int_equal(ops->queue_open(f->dev, &h2c, &q2), 0);
	/* Engines can be opened again after close. */
	assert_int_equal(ops->queue_open(f->dev, &f->cfg.channels[0], &f->q),
			 0);
	ops->queue_close(f->q);
	f->q = NULL;
	ops->close(f->dev);
	f->dev = NULL;
	ops->close(NULL);
	ops->queue_close(NULL);
}

/* A memory queue of @dir on @engine with f->buf pinned in it. */
static struct device_queue *mem_queue(struct fixture *f, enum direction dir,
				      unsigned engine, uint64_t *ret_h)
{
	struct dev_region r = {
		.kind = DEV_REGION_HOST,
		.addr = f->buf,
		.fd = -1,
		.length = NSLOTS * SLOT,
	};
	struct device_queue *q;

	assert_int_equal(ops->mem_queue_open(f->dev, dir, engine, 0, &q), 0);
	assert_int_equal(ops->pin(q, &r, ret_h), 0);
	return q;
}

/* One memory transfer, waited for: its completion status. */
static int mem_xfer(struct device_queue *q, uint64_t h, uint64_t off,
		    uint64_t card, uint64_t len)
{
	struct dev_xfer x = { .handle = h, .offset = off, .card_addr = card,
			      .length = len, .cookie = card };
	struct dev_completion c;
	int r = ops->submit(q, &x);

	if (r)
		return r;
	collect(q, &c, 1);
	assert_true(c.cookie == card);
	if (!c.status)
		assert_true(c.length == len);
	return c.status;
}

static void fill_bytes(unsigned char *p, uint64_t n, unsigned seed)
{
	for (uint64_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 131 + seed * 7 + (i >> 12));
}

/*
 * Card memory holds user data: what is written at an address is what a
 * later read there returns, across engines and while streams run (their
 * frames live elsewhere); a page never written reads as zeros.
 */
static void test_card_memory(void **state)
{
	struct fixture *f = *state;
	const uint64_t top = f->cfg.sim.card_memory;
	struct device_queue *wq, *rq;
	struct dev_completion c[4];
	uint64_t wh, rh;
	unsigned i;

	start(f);
	wq = mem_queue(f, DIR_H2C, 3, &wh);
	rq = mem_queue(f, DIR_C2H, 3, &rh);
	fill_bytes(f->buf, 2 * SLOT, 1);
	assert_int_equal(mem_xfer(wq, wh, 0, 0, SLOT), 0);
	assert_int_equal(mem_xfer(wq, wh, SLOT, top - SLOT, SLOT), 0);
	assert_int_equal(mem_xfer(wq, wh, 4096, 12345 * 64, 8192), 0);

	/* The stream queue runs frames meanwhile: card memory is untouched. */
	for (i = 0; i < 4; i++)
		assert_int_equal(submit(f, 4 + i, SLOT, i), 0);
	collect(f->q, c, 4);
	for (i = 0; i < 4; i++)
		verify(f, 4 + i, FRAME, c[i].seq);

	memset(f->buf + 8 * SLOT, 0xee, 4 * SLOT);
	assert_int_equal(mem_xfer(rq, rh, 8 * SLOT, 0, SLOT), 0);
	assert_memory_equal(f->buf + 8 * SLOT, f->buf, SLOT);
	assert_int_equal(mem_xfer(rq, rh, 9 * SLOT, top - SLOT, SLOT), 0);
	assert_memory_equal(f->buf + 9 * SLOT, f->buf + SLOT, SLOT);
	assert_int_equal(mem_xfer(rq, rh, 10 * SLOT, 12345 * 64, 8192), 0);
	assert_memory_equal(f->buf + 10 * SLOT, f->buf + 4096, 8192);
	/* Never written: zeros. */
	assert_int_equal(mem_xfer(rq, rh, 11 * SLOT, 64 << 20, SLOT), 0);
	for (i = 0; i < SLOT; i++)
		assert_int_equal(f->buf[11 * SLOT + i], 0);
	assert_true(stats(wq).bytes == 2 * SLOT + 8192);
	assert_true(stats(rq).frames == 0);
	ops->queue_close(wq);
	ops->queue_close(rq);
}

/* A memory queue refuses what is out of card memory, unaligned or long. */
static void test_mem_bad_arguments(void **state)
{
	struct fixture *f = *state;
	const uint64_t top = f->cfg.sim.card_memory;
	struct device_queue *q, *q2 = (void *)0x1;
	struct device_info info;
	uint64_t h;

	start(f);
	assert_int_equal(ops->info(f->dev, &info), 0);
	assert_true(info.max_transfer == SIM_XFER_MAX_LEN);
	assert_int_equal(info.xfer_align, SIM_XFER_ALIGN);
	/* An engine is a stream or a memory queue, not both. */
	assert_int_equal(ops->mem_queue_open(f->dev, DIR_C2H, 0, 0, &q2),
			 -EBUSY);
	assert_int_equal(ops->mem_queue_open(f->dev, DIR_C2H, SIM_ENGINES, 0,
					     &q2), -EINVAL);
	assert_ptr_equal(q2, (void *)0x1);
	q = mem_queue(f, DIR_C2H, 1, &h);
	assert_int_equal(mem_xfer(q, h, 0, top - 4096, 4096), 0);
	assert_int_equal(mem_xfer(q, h, 0, top - 4096, 8192), -EINVAL);
	assert_int_equal(mem_xfer(q, h, 0, top, 64), -EINVAL);
	assert_int_equal(mem_xfer(q, h, 0, UINT64_MAX - 63, 128), -EINVAL);
	assert_int_equal(mem_xfer(q, h, 0, 32, 64), -EINVAL);
	assert_int_equal(mem_xfer(q, h, 32, 0, 64), -EINVAL);
	assert_int_equal(mem_xfer(q, h, 0, 0, 100), -EINVAL);
	assert_int_equal(mem_xfer(q, h, 0, 0, 0), -EINVAL);
	assert_int_equal(mem_xfer(q, h, 0, 0, SIM_XFER_MAX_LEN + 64),
			 -EINVAL);
	assert_int_equal(mem_xfer(q, h, NSLOTS * SLOT - 64, 0, 128), -EINVAL);
	assert_int_equal(mem_xfer(q, h, 64, 64, 64), 0);
	ops->queue_close(q);
}

/* Faults hit memory transfers: an error fails one, corrupt flips a byte. */
static void test_mem_faults(void **state)
{
	struct fixture *f = *state;
	struct device_queue *wq, *rq;
	uint64_t wh, rh, diff = 0;

	setenv(SIM_FAULTS_ENV, "error=2,corrupt=3", 1);
	start(f);
	wq = mem_queue(f, DIR_H2C, 1, &wh);
	rq = mem_queue(f, DIR_C2H, 1, &rh);
	fill_bytes(f->buf, SLOT, 9);
	assert_int_equal(mem_xfer(wq, wh, 0, 0, SLOT), 0);	/* 1 */
	assert_int_equal(mem_xfer(wq, wh, 0, 0, SLOT), -EIO);	/* 2 */
	assert_int_equal(mem_xfer(rq, rh, SLOT, 0, SLOT), 0);	/* 1 */
	assert_memory_equal(f->buf + SLOT, f->buf, SLOT);
	assert_int_equal(mem_xfer(rq, rh, SLOT, 0, SLOT), -EIO);	/* 2 */
	assert_int_equal(mem_xfer(rq, rh, SLOT, 0, SLOT), 0);	/* 3 */
	for (uint64_t i = 0; i < SLOT; i++)
		diff += f->buf[SLOT + i] != f->buf[i];
	assert_true(diff == 1);
	assert_true(stats(rq).fault_corrupt == 1);
	assert_true(stats(wq).fault_error == 1);
	ops->queue_close(wq);
	ops->queue_close(rq);
}

/*
 * The completion descriptor wakes a poller only when a completion waits,
 * and only when the poller asked for it before sleeping: looks with
 * wait() alone (a spinning poller) never make the engine write it.
 */
static void test_completion_fd(void **state)
{
	struct fixture *f = *state;
	struct dev_xfer x = { .length = 4096, .cookie = 5 };
	struct dev_completion c;
	struct device_queue *q;
	struct pollfd p = { .events = POLLIN };
	uint64_t done;
	int fd;

	start(f);
	q = mem_queue(f, DIR_C2H, 2, &x.handle);
	fd = ops->completion_fd(q);
	assert_true(fd >= 0);
	assert_int_equal(ops->completion_fd(q), fd);
	p.fd = fd;
	/* Asked for, with nothing waiting: the next completion writes it. */
	assert_int_equal(ops->arm_completion(q), 0);
	assert_int_equal(poll(&p, 1, 0), 0);
	assert_int_equal(ops->submit(q, &x), 0);
	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
	/* Asked for with a completion waiting: look, do not sleep. */
	assert_int_equal(ops->arm_completion(q), 1);
	assert_int_equal(ops->wait(q, &c, 1, 0), 1);
	assert_true(c.cookie == 5 && c.status == 0);
	/*
	 * Taken: quiet again.  The engine writes the descriptor and then
	 * says so: a wait between the two leaves it readable, and the next
	 * wait takes that.
	 */
	for (unsigned i = 0; i < 1000; i++) {
		assert_int_equal(ops->wait(q, &c, 1, 0), 0);
		if (poll(&p, 1, 0) == 0)
			break;
		usleep(1000);
	}
	assert_int_equal(poll(&p, 1, 0), 0);
	/*
	 * Not asked for: looks alone leave it quiet through a completion.
	 * Once the engine counted the completion, the write it would make
	 * is a few instructions away: none comes.
	 */
	assert_int_equal(ops->wait(q, &c, 1, 0), 0);
	done = stats(q).completed;
	x.cookie = 7;
	assert_int_equal(ops->submit(q, &x), 0);
	for (unsigned i = 0; i < 1000 && stats(q).completed == done; i++)
		usleep(1000);
	assert_true(stats(q).completed == done + 1);
	assert_int_equal(poll(&p, 1, 100), 0);
	assert_int_equal(ops->wait(q, &c, 1, 0), 1);
	assert_true(c.cookie == 7 && c.status == 0);
	assert_int_equal(ops->arm_completion(q), 0);
	x.cookie = 6;
	assert_int_equal(ops->submit(q, &x), 0);
	assert_int_equal(poll(&p, 1, WAIT_MS), 1);
	assert_int_equal(ops->wait(q, &c, 1, WAIT_MS), 1);
	assert_true(c.cookie == 6);
	ops->queue_close(q);
}

static void test_cuda(void **state)
{
	struct fixture *f = *state;
	char why[256];
	int gpu, r;

	r = memory_cuda_probe(f->cfg.device.gpu, &gpu, why, sizeof(why));
	if (r) {
		print_message("skipped: the GPU path needs a GPU: %s\n", why);
		skip();
	}
#ifdef FPGAD_CUDA
	{
		struct dev_region reg = { .kind = DEV_REGION_CUDA, .fd = -1,
					  .gpu = gpu };
		struct dev_completion c[NSLOTS];
		struct copy_engine *ce;
		struct copy_done done;
		struct mem_region *m;
		unsigned char *host;
		unsigned round, i;

		setenv(SIM_FAULTS_ENV, "corrupt=7", 1);
		start(f);
		assert_int_equal(memory_cuda_ops.alloc(NSLOTS * SLOT, "",
						       "simtest", 0, &m), 0);
		assert_non_null(m->dev);
		assert_int_equal(m->size % MEMORY_CUDA_GRANULE, 0);
		/* dma-buf export depends on driver and kernel: report it. */
		{
			int fd = -1;

			r = memory_cuda_ops.export_dmabuf(m, 0,
							  MEMORY_CUDA_GRANULE,
							  &fd);
			print_message("dma-buf export of GPU memory: %s\n",
				      r ? strerror(-r) : "ok");
			if (!r) {
				assert_true(fd >= 0);
				close(fd);
			}
		}
		reg.addr = m->dev;
		reg.length = m->size;
		assert_int_equal(ops->unpin(f->q, f->handle), 0);
		assert_int_equal(ops->pin(f->q, &reg, &f->handle), 0);
		assert_int_equal(copy_open(gpu, 1, &ce), 0);
		assert_int_equal(copy_host_alloc(NSLOTS * SLOT, (void **)&host),
				 0);
		for (round = 0; round < 4; round++) {
			for (i = 0; i < NSLOTS; i++)
				assert_int_equal(submit(f, i, SLOT, i), 0);
			collect(f->q, c, NSLOTS);
			assert_int_equal(copy_submit(ce, host, m->dev,
						     NSLOTS * SLOT, COPY_D2H,
						     round), 0);
			assert_int_equal(copy_reap(ce, 1, &done), 1);
			assert_int_equal(done.status, 0);
			for (i = 0; i < NSLOTS; i++) {
				uint64_t n = round * NSLOTS + i + 1;

				assert_true(c[i].cookie == i);
				assert_int_equal(c[i].status, 0);
				assert_true(c[i].seq == n - 1);
				r = fpgad_simframe_check(host + i * SLOT,
							 FRAME, c[i].seq,
							 NULL, 0, NULL);
				assert_int_equal(r, n % 7 ? 0 :
						 FPGAD_SIMFRAME_BAD_PAYLOAD);
			}
		}
		/* Reset with GPU copies in flight. */
		for (i = 0; i < NSLOTS; i++)
			assert_int_equal(submit(f, i, SLOT, i), 0);
		assert_int_equal(ops->reset(f->q), 0);
		collect(f->q, c, NSLOTS);
		ops->queue_close(f->q);
		f->q = NULL;

		/* H2C: frames placed in GPU memory reach the sink intact. */
		{
			struct config_channel h2c;
			struct sim_queue_stats s;
			struct device_queue *q;
			uint64_t h;

			channel(&h2c, "h2c0", DIR_H2C, 0);
			assert_int_equal(ops->queue_open(f->dev, &h2c, &q), 0);
			for (i = 0; i < NSLOTS; i++)
				fpgad_simframe_fill(host + i * SLOT, SLOT,
						    500 + i, 0, NULL, 0);
			host[5 * SLOT + 100] ^= 1;
			assert_int_equal(copy_submit(ce, m->dev, host,
						     NSLOTS * SLOT, COPY_H2D,
						     9), 0);
			assert_int_equal(copy_reap(ce, 1, &done), 1);
			assert_int_equal(done.status, 0);
			assert_int_equal(ops->pin(q, &reg, &h), 0);
			for (i = 0; i < NSLOTS; i++) {
				struct dev_xfer x = { .handle = h,
						      .offset = i * SLOT,
						      .length = SLOT,
						      .cookie = i };

				assert_int_equal(ops->submit(q, &x), 0);
			}
			collect(q, c, NSLOTS);
			for (i = 0; i < NSLOTS; i++) {
				assert_int_equal(c[i].status, 0);
				assert_true(c[i].seq == 500 + i);
			}
			/* Slot 5, and what corrupt faults hit on the way. */
			assert_int_equal(sim_queue_stats(q, &s), 0);
			assert_true(s.fault_corrupt == NSLOTS / 7);
			assert_true(s.sink_bad == 1 + s.fault_corrupt);
			assert_true(s.sink_good == NSLOTS - s.sink_bad);
			assert_int_equal(s.sink_last_error,
					 FPGAD_SIMFRAME_BAD_PAYLOAD);
			ops->queue_close(q);
		}
		copy_host_free(host);
		copy_close(ce);
		memory_cuda_ops.free(m);
	}
#endif
}

/*
 * Memory queues and GPU memory: card memory -> GPU and GPU -> card are
 * real copies, across a page-locked chunk boundary, byte-exact.
 */
static void test_cuda_mem(void **state)
{
	struct fixture *f = *state;
	char why[256];
	int gpu, r;

	r = memory_cuda_probe(f->cfg.device.gpu, &gpu, why, sizeof(why));
	if (r) {
		print_message("skipped: the GPU path needs a GPU: %s\n", why);
		skip();
	}
#ifdef FPGAD_CUDA
	{
		const uint64_t at = SIM_CARD_CHUNK - 8192;	/* crosses a chunk */
		struct device_queue *hq, *gq, *gw;
		struct dev_region reg = { .kind = DEV_REGION_CUDA, .fd = -1,
					  .gpu = gpu };
		struct copy_engine *ce;
		struct copy_done done;
		struct mem_region *m;
		uint64_t hh, gh, gwh;

		start(f);
		hq = mem_queue(f, DIR_H2C, 1, &hh);
		assert_int_equal(memory_cuda_ops.alloc(NSLOTS * SLOT, "",
						       "simtest", 0, &m), 0);
		reg.addr = m->dev;
		reg.length = NSLOTS * SLOT;
		assert_int_equal(ops->mem_queue_open(f->dev, DIR_C2H, 1, 0,
						     &gq), 0);
		assert_int_equal(ops->mem_queue_open(f->dev, DIR_H2C, 2, 0,
						     &gw), 0);
		assert_int_equal(ops->pin(gq, &reg, &gh), 0);
		assert_int_equal(ops->pin(gw, &reg, &gwh), 0);
		assert_int_equal(copy_open(gpu, 1, &ce), 0);

		fill_bytes(f->buf, 2 * SLOT, 3);
		assert_int_equal(mem_xfer(hq, hh, 0, at, 2 * SLOT), 0);
		assert_int_equal(mem_xfer(gq, gh, 4 * SLOT, at, 2 * SLOT), 0);
		assert_int_equal(copy_submit(ce, f->buf + 8 * SLOT,
					     (char *)m->dev + 4 * SLOT,
					     2 * SLOT, COPY_D2H, 1), 0);
		assert_int_equal(copy_reap(ce, 1, &done), 1);
		assert_int_equal(done.status, 0);
		assert_memory_equal(f->buf + 8 * SLOT, f->buf, 2 * SLOT);

		/* GPU -> card at another address, read back to the host. */
		assert_int_equal(mem_xfer(gw, gwh, 4 * SLOT, 3 * SIM_CARD_CHUNK -
					  SLOT, 2 * SLOT), 0);
		assert_int_equal(ops->unpin(hq, hh), 0);
		ops->queue_close(hq);
		hq = mem_queue(f, DIR_C2H, 3, &hh);
		memset(f->buf + 12 * SLOT, 0, 2 * SLOT);
		assert_int_equal(mem_xfer(hq, hh, 12 * SLOT, 3 * SIM_CARD_CHUNK -
					  SLOT, 2 * SLOT), 0);
		assert_memory_equal(f->buf + 12 * SLOT, f->buf, 2 * SLOT);

		ops->queue_close(hq);
		ops->queue_close(gq);
		ops->queue_close(gw);
		copy_close(ce);
		memory_cuda_ops.free(m);
	}
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		cmocka_unit_test(test_crc32c_vectors),
		T(test_open_info),
		T(test_c2h_frames_verify),
		T(test_unframed_and_truncated),
		T(test_queue_depth),
		T(test_bad_arguments),
		T(test_link_model),
		T(test_link_shared),
		T(test_frame_rate),
		T(test_source_overrun),
		T(test_frame_timeout),
		T(test_faults_parse),
		T(test_fault_error),
		T(test_fault_timeout),
		T(test_fault_corrupt),
		T(test_fault_hang_reset),
		T(test_reset_cancels_queued),
		T(test_h2c_sink),
		T(test_h2c_fault_corrupt),
		T(test_kick),
		T(test_wait_timeout),
		T(test_close_busy),
		T(test_card_memory),
		T(test_mem_bad_arguments),
		T(test_mem_faults),
		T(test_completion_fd),
		T(test_cuda),
		T(test_cuda_mem),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
