// SPDX-License-Identifier: MIT
/*
 * test_xdma_desc.c - the XDMA descriptor builder (kmod/xdma_desc.c) against
 * a register-level model of the PG195 scatter-gather engine.
 *
 * The model owns a host memory and a card memory.  It is started the way
 * the driver starts the hardware (SGDMA descriptor address and adjacent
 * registers, optional poll-mode write-back address) and then fetches
 * descriptors as the engine does: a descriptor plus its adjacent ones in
 * one read that must not cross 4 KiB, the last one's next address and
 * Nxt_adj for the following fetch, until a descriptor with Stop.  It moves
 * the bytes, counts completed descriptors and writes the count back.  A
 * second mode follows every descriptor's next pointer one at a time, so
 * the list is valid whichever way an engine walks it.
 */
#include <endian.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../kmod/xdma_desc.c"

#define HOST_SIZE	(1u << 21)
#define CARD_SIZE	(1u << 21)
#define PAGE		4096u

enum model_err {
	MODEL_OK = 0,
	MODEL_ERR_ALIGN = -1,	/* descriptor address not 32-byte aligned */
	MODEL_ERR_CROSS = -2,	/* a fetch crosses a 4 KiB boundary */
	MODEL_ERR_MAGIC = -3,	/* magic stopped */
	MODEL_ERR_LEN = -4,	/* length 0 or beyond 28 bits */
	MODEL_ERR_RANGE = -5,	/* address outside the modelled memories */
	MODEL_ERR_RUNAWAY = -6,	/* next address 0 without Stop */
	MODEL_ERR_IRQ = -7,	/* Stop without Completed */
};

struct model {
	uint8_t *host;		/* bus address 0.. */
	uint8_t *card;
	bool move_data;		/* false: check descriptors only */
	bool follow_each;	/* ignore Nxt_adj, one descriptor per fetch */
	/* registers */
	uint64_t desc_addr;	/* SGDMA descriptor address */
	uint32_t desc_adj;	/* SGDMA descriptor adjacent */
	bool poll_wb;		/* control: poll-mode write-back */
	uint64_t wb_addr;	/* poll-mode write-back address */
	uint32_t completed;	/* completed descriptor count */
	/* observations */
	uint32_t fetches;
	uint64_t moved;
	uint64_t card_next;	/* card address after the last descriptor */
	bool stopped;
};

static struct xdma_desc model_load(const struct model *m, uint64_t addr)
{
	struct xdma_desc d;

	memcpy(&d, m->host + addr, sizeof(d));
	d.control = le32toh(d.control);
	d.bytes = le32toh(d.bytes);
	d.src_lo = le32toh(d.src_lo);
	d.src_hi = le32toh(d.src_hi);
	d.dst_lo = le32toh(d.dst_lo);
	d.dst_hi = le32toh(d.dst_hi);
	d.next_lo = le32toh(d.next_lo);
	d.next_hi = le32toh(d.next_hi);
	return d;
}

static int model_move(struct model *m, const struct xdma_desc *d, bool c2h)
{
	uint64_t src = (uint64_t)d->src_hi << 32 | d->src_lo;
	uint64_t dst = (uint64_t)d->dst_hi << 32 | d->dst_lo;
	uint64_t card = c2h ? src : dst;

	if (d->bytes == 0 || (d->bytes & ~XDMA_DESC_LEN_MASK))
		return MODEL_ERR_LEN;
	m->moved += d->bytes;
	m->card_next = card + d->bytes;
	if (!m->move_data)
		return MODEL_OK;
	if (c2h) {
		if (src + d->bytes > CARD_SIZE || dst + d->bytes > HOST_SIZE)
			return MODEL_ERR_RANGE;
		memcpy(m->host + dst, m->card + src, d->bytes);
	} else {
		if (src + d->bytes > HOST_SIZE || dst + d->bytes > CARD_SIZE)
			return MODEL_ERR_RANGE;
		memcpy(m->card + dst, m->host + src, d->bytes);
	}
	return MODEL_OK;
}

/* Set Run: process the list the registers point at until Stop. */
static int model_run(struct model *m, bool c2h)
{
	uint64_t addr = m->desc_addr;
	uint32_t adj = m->follow_each ? 0 : m->desc_adj;

	m->completed = 0;	/* rising edge of Run */
	m->stopped = false;
	for (;;) {
		uint64_t end = addr + (uint64_t)(adj + 1) * XDMA_DESC_SIZE;
		struct xdma_desc d = { 0 };
		uint32_t k;
		int ret;

		if (addr % XDMA_DESC_SIZE)
			return MODEL_ERR_ALIGN;
		if (adj > XDMA_DESC_MAX_ADJ ||
		    addr / XDMA_DESC_FETCH_BLOCK != (end - 1) / XDMA_DESC_FETCH_BLOCK)
			return MODEL_ERR_CROSS;
		if (end > HOST_SIZE)
			return MODEL_ERR_RANGE;
		m->fetches++;

		for (k = 0; k <= adj; k++) {
			d = model_load(m, addr + (uint64_t)k * XDMA_DESC_SIZE);
			if ((d.control >> 16) != XDMA_DESC_MAGIC)
				return MODEL_ERR_MAGIC;
			ret = model_move(m, &d, c2h);
			if (ret)
				return ret;
			m->completed++;
			if (d.control & XDMA_DESC_STOP) {
				if (!(d.control & XDMA_DESC_COMPLETED))
					return MODEL_ERR_IRQ;
				m->stopped = true;
				if (m->poll_wb) {
					uint32_t wb = htole32(m->completed);

					memcpy(m->host + m->wb_addr, &wb, 4);
				}
				return MODEL_OK;
			}
		}
		addr = (uint64_t)d.next_hi << 32 | d.next_lo;
		adj = m->follow_each ? 0 :
		      (d.control >> XDMA_DESC_ADJ_SHIFT) & XDMA_DESC_ADJ_MASK;
		if (!addr)
			return MODEL_ERR_RUNAWAY;
	}
}

static struct model *model_new(void)
{
	struct model *m = calloc(1, sizeof(*m));

	assert_non_null(m);
	m->host = aligned_alloc(PAGE, HOST_SIZE);
	m->card = aligned_alloc(PAGE, CARD_SIZE);
	assert_non_null(m->host);
	assert_non_null(m->card);
	memset(m->host, 0, HOST_SIZE);
	memset(m->card, 0, CARD_SIZE);
	m->move_data = true;
	return m;
}

static void model_free(struct model *m)
{
	free(m->host);
	free(m->card);
	free(m);
}

static struct xdma_desc *ring_at(struct model *m, uint64_t bus)
{
	return (struct xdma_desc *)(void *)(m->host + bus);
}

/* Point the model's registers at a finished list. */
static void model_arm(struct model *m, const struct xdma_desc_list *l,
		      uint32_t adj)
{
	m->desc_addr = l->bus;
	m->desc_adj = adj;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31 + seed * 7 + (i >> 9));
}

static void test_single(void **state)
{
	struct model *m = model_new();
	struct xdma_desc_list l;
	struct xdma_desc d;
	uint32_t adj;

	(void)state;
	fill(m->host + 0x40000, 1000, 1);
	xdma_desc_begin(&l, ring_at(m, 0x1000), 0x1000, 16, 0x300, false);
	assert_int_equal(xdma_desc_add(&l, 0x40000, 1000), 1000);
	assert_int_equal(xdma_desc_add(&l, 0x50000, 0), 0);
	assert_int_equal(l.count, 1);
	adj = xdma_desc_finish(&l);
	assert_int_equal(adj, 0);

	d = model_load(m, 0x1000);
	assert_int_equal(d.control, XDMA_DESC_MAGIC << 16 | XDMA_DESC_STOP |
			 XDMA_DESC_COMPLETED | XDMA_DESC_EOP);
	assert_int_equal(d.bytes, 1000);
	assert_int_equal(d.src_lo, 0x40000);
	assert_int_equal(d.dst_lo, 0x300);
	assert_int_equal(d.next_lo | d.next_hi, 0);

	model_arm(m, &l, adj);
	assert_int_equal(model_run(m, false), MODEL_OK);
	assert_true(m->stopped);
	assert_int_equal(m->completed, 1);
	assert_memory_equal(m->card + 0x300, m->host + 0x40000, 1000);
	model_free(m);
}

/* 300 scattered pages, list starting 8 descriptors before a 4 KiB edge. */
static void test_chain_across_4k(void **state)
{
	const uint32_t n = 300;
	const uint64_t ring = 0x10f00;
	struct model *m = model_new();
	struct xdma_desc_list l;
	uint32_t i, adj;
	int mode;

	(void)state;
	fill(m->card + 0x1000, n * PAGE, 2);
	for (mode = 0; mode < 2; mode++) {
		memset(m->host + 0x80000, 0, (n + 1) * PAGE);
		xdma_desc_begin(&l, ring_at(m, ring), ring, 1024, 0x1000, true);
		/* pages in reverse order: no two neighbours are contiguous */
		for (i = 0; i < n; i++)
			assert_int_equal(xdma_desc_add(&l, 0x80000 + (uint64_t)(n - 1 - i) * PAGE,
						       PAGE), PAGE);
		assert_int_equal(l.count, n);
		adj = xdma_desc_finish(&l);
		assert_int_equal(adj, 7);	/* 8 descriptors left in the block */

		for (i = 0; i + 1 < n; i++) {
			struct xdma_desc d = model_load(m, ring + i * XDMA_DESC_SIZE);
			uint64_t next = (uint64_t)d.next_hi << 32 | d.next_lo;

			assert_int_equal(next, ring + (i + 1) * XDMA_DESC_SIZE);
			assert_int_equal((d.control >> 8) & 0x3f,
					 xdma_desc_adjacent(&l, i + 1));
			assert_int_equal(d.control & (XDMA_DESC_STOP | XDMA_DESC_COMPLETED |
						      XDMA_DESC_EOP), 0);
			assert_int_equal(d.control >> 16, XDMA_DESC_MAGIC);
		}

		m->follow_each = mode == 1;
		m->fetches = 0;
		model_arm(m, &l, adj);
		assert_int_equal(model_run(m, true), MODEL_OK);
		assert_int_equal(m->completed, n);
		if (!m->follow_each)
			assert_true(m->fetches < n / 10);
		for (i = 0; i < n; i++)
			assert_memory_equal(m->host + 0x80000 + (uint64_t)(n - 1 - i) * PAGE,
					    m->card + 0x1000 + (uint64_t)i * PAGE, PAGE);
	}
	model_free(m);
}

static void test_adjacent_counts(void **state)
{
	struct xdma_desc descs[200];
	struct xdma_desc_list l;
	uint32_t i;

	(void)state;
	xdma_desc_begin(&l, descs, 0x20000, 200, 0, false);
	for (i = 0; i < 200; i++)
		xdma_desc_add(&l, 0x100000 + (uint64_t)i * 2 * PAGE, 64);
	/* Blocks of 64 descriptors (2 KiB); the count goes down inside one. */
	assert_int_equal(xdma_desc_finish(&l), 63);
	assert_int_equal(xdma_desc_adjacent(&l, 10), 53);
	assert_int_equal(xdma_desc_adjacent(&l, 63), 0);	/* last in its block */
	assert_int_equal(xdma_desc_adjacent(&l, 64), 63);
	assert_int_equal(xdma_desc_adjacent(&l, 100), 27);
	assert_int_equal(xdma_desc_adjacent(&l, 127), 0);
	assert_int_equal(xdma_desc_adjacent(&l, 128), 63);
	assert_int_equal(xdma_desc_adjacent(&l, 150), 41);
	assert_int_equal(xdma_desc_adjacent(&l, 192), 7);	/* to the list's end */
	assert_int_equal(xdma_desc_adjacent(&l, 199), 0);
	for (i = 0; i < 200; i++) {
		uint64_t first = l.bus + (uint64_t)i * 32;
		uint32_t adj = xdma_desc_adjacent(&l, i);
		uint64_t end = first + (adj + 1) * 32;

		assert_true(adj <= XDMA_DESC_MAX_ADJ);
		assert_true(first / PAGE == (end - 1) / PAGE);
		assert_true(i + adj < 200);
		if (adj)
			assert_int_equal(xdma_desc_adjacent(&l, i + 1), adj - 1);
	}

	/* A list that starts inside a block counts down to that block's end. */
	xdma_desc_begin(&l, descs, 0x20000 + 40 * 32, 200, 0, false);
	for (i = 0; i < 100; i++)
		xdma_desc_add(&l, 0x100000 + (uint64_t)i * 2 * PAGE, 64);
	assert_int_equal(xdma_desc_finish(&l), 23);
	assert_int_equal(xdma_desc_adjacent(&l, 24), 63);
}

/*
 * Long ranges are split into descriptors of at most XDMA_DESC_MAX_LEN
 * (1 MiB, so that a stopped engine finishes its descriptor soon), far
 * below the 28-bit length field.
 */
static void test_length_cap(void **state)
{
	const uint64_t sizes[] = { (1u << 28) - 1, 1u << 28,
				   3ull * (1u << 28) + 5, XDMA_DESC_MAX_LEN,
				   XDMA_DESC_MAX_LEN + 1 };
	struct model *m = model_new();
	struct xdma_desc_list l;
	size_t s;

	(void)state;
	assert_true(XDMA_DESC_MAX_LEN <= (1u << 20));
	m->move_data = false;
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint64_t total = 0, card = 0x7000;
		uint32_t i, adj;

		xdma_desc_begin(&l, ring_at(m, 0x2000), 0x2000, 1024, card, false);
		assert_int_equal(xdma_desc_add(&l, 0x1000, sizes[s]), sizes[s]);
		assert_int_equal(l.count, (sizes[s] + XDMA_DESC_MAX_LEN - 1) /
				 XDMA_DESC_MAX_LEN);
		adj = xdma_desc_finish(&l);
		for (i = 0; i < l.count; i++) {
			struct xdma_desc d = model_load(m, 0x2000 + i * 32);
			uint64_t src = (uint64_t)d.src_hi << 32 | d.src_lo;
			uint64_t dst = (uint64_t)d.dst_hi << 32 | d.dst_lo;

			assert_true(d.bytes > 0 && d.bytes <= XDMA_DESC_MAX_LEN);
			if (i + 1 < l.count)
				assert_int_equal(d.bytes, XDMA_DESC_MAX_LEN);
			assert_int_equal(src, 0x1000 + total);
			assert_int_equal(dst, card + total);
			total += d.bytes;
		}
		assert_int_equal(total, sizes[s]);
		model_arm(m, &l, adj);
		assert_int_equal(model_run(m, false), MODEL_OK);
		assert_int_equal(m->moved, sizes[s]);
		assert_int_equal(m->card_next, card + sizes[s]);
		m->moved = 0;
	}
	model_free(m);
}

/* A transfer larger than the list runs as several lists, seamlessly. */
static void test_list_full(void **state)
{
	struct model *m = model_new();
	struct xdma_desc_list l;
	uint64_t host[10], done = 0, card = 0x100;
	uint32_t i = 0, runs = 0;

	(void)state;
	for (i = 0; i < 10; i++) {
		host[i] = 0x100000 + (uint64_t)(9 - i) * 3 * PAGE;
		fill(m->host + host[i], PAGE, 10 + i);
	}
	i = 0;
	while (i < 10) {
		xdma_desc_begin(&l, ring_at(m, 0x3000), 0x3000, 4, card, false);
		while (i < 10) {
			uint64_t took = xdma_desc_add(&l, host[i] + done, PAGE - done);

			done += took;
			if (done < PAGE)
				break;
			done = 0;
			i++;
		}
		assert_true(l.count <= 4);
		model_arm(m, &l, xdma_desc_finish(&l));
		assert_int_equal(model_run(m, false), MODEL_OK);
		assert_int_equal(m->completed, l.count);
		card = l.card_addr;
		runs++;
	}
	assert_int_equal(runs, 3);
	for (i = 0; i < 10; i++)
		assert_memory_equal(m->card + 0x100 + (uint64_t)i * PAGE,
				    m->host + host[i], PAGE);
	model_free(m);
}

/* Poll mode: the engine writes the completed count where it was told. */
static void test_poll_writeback(void **state)
{
	struct model *m = model_new();
	struct xdma_desc_list l;
	uint32_t wb, i;

	(void)state;
	xdma_desc_begin(&l, ring_at(m, 0x4000), 0x4000, 64, 0, true);
	for (i = 0; i < 37; i++)
		xdma_desc_add(&l, 0x60000 + (uint64_t)i * 2 * PAGE, 100 + i);
	model_arm(m, &l, xdma_desc_finish(&l));
	m->poll_wb = true;
	m->wb_addr = 0x5000;
	memset(m->host + 0x5000, 0, 32);
	assert_int_equal(model_run(m, true), MODEL_OK);
	memcpy(&wb, m->host + 0x5000, 4);
	assert_int_equal(le32toh(wb) & 0x00ffffff, 37);
	assert_int_equal(le32toh(wb) & 0x80000000u, 0);
	assert_int_equal(m->completed, 37);
	model_free(m);
}

/* The model is strict: broken lists are caught (a test of the test). */
static void test_model_rejects_bad_lists(void **state)
{
	struct model *m = model_new();
	struct xdma_desc_list l;
	struct xdma_desc *d;
	uint32_t adj;

	(void)state;
	/* adjacent count that would cross a 4 KiB edge */
	xdma_desc_begin(&l, ring_at(m, 0x6fc0), 0x6fc0, 8, 0, false);
	xdma_desc_add(&l, 0x60000, 8 * 512);
	xdma_desc_add(&l, 0x70000, 4 * 512);
	assert_int_equal(l.count, 2);	/* the two before the 4 KiB edge */
	adj = xdma_desc_finish(&l);
	assert_int_equal(adj, 1);
	model_arm(m, &l, adj);
	assert_int_equal(model_run(m, false), MODEL_OK);
	model_arm(m, &l, adj + 1);
	assert_int_equal(model_run(m, false), MODEL_ERR_CROSS);

	/* bad magic */
	d = ring_at(m, 0x6fc0);
	d[1].control = htole32(le32toh(d[1].control) & 0xffff);
	model_arm(m, &l, adj);
	assert_int_equal(model_run(m, false), MODEL_ERR_MAGIC);

	/* no Stop bit on the last descriptor */
	xdma_desc_begin(&l, ring_at(m, 0x8000), 0x8000, 8, 0, false);
	xdma_desc_add(&l, 0x60000, 64);
	model_arm(m, &l, xdma_desc_finish(&l));
	d = ring_at(m, 0x8000);
	d[0].control = htole32(XDMA_DESC_MAGIC << 16);
	assert_int_equal(model_run(m, false), MODEL_ERR_RUNAWAY);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_single),
		cmocka_unit_test(test_chain_across_4k),
		cmocka_unit_test(test_adjacent_counts),
		cmocka_unit_test(test_length_cap),
		cmocka_unit_test(test_list_full),
		cmocka_unit_test(test_poll_writeback),
		cmocka_unit_test(test_model_rejects_bad_lists),
	};

	return cmocka_run_group_tests_name("xdma_desc", tests, NULL, NULL);
}
