// SPDX-License-Identifier: MIT
/*
 * test_xfer_ring.c - the transfer plane's ABI (fpgad_xfer.h) and its two
 * ends: fpgad's (daemon/xfer/xfer_server.c) and the client's
 * (client/xfer_queue.c) talking through one mapped queue; the checks a
 * client makes of a queue; the rules' names and messages.
 */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "fpgad_xfer.h"
#include "xfer/xfer_server.h"
#include "xfer_queue.h"
#include "xfer_ring.h"

static const struct xfer_server_rules rules = {
	.card_memory = 2ull << 30,
	.max_length = 1ull << 30,
	.part_size = 4u << 20,
	.host_align = 64,
	.gpu_align = 4096,
	.max_timeout_ms = 600000,
};

struct fixture {
	struct xfer_server *srv;
	void *mem;			/* the client's mapping */
	size_t len;
	int doorbell;
	struct xfer_queue *q;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	int memfd;

	assert_non_null(f);
	assert_int_equal(xfer_server_create(8, &rules, "test", &f->srv), 0);
	xfer_server_fds(f->srv, &memfd, &f->doorbell);
	f->len = xfer_server_size(f->srv);
	f->mem = mmap(NULL, f->len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	assert_true(f->mem != MAP_FAILED);
	assert_int_equal(xfer_queue_attach(f->mem, f->len, &f->q), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	xfer_queue_free(f->q);
	munmap(f->mem, f->len);
	xfer_server_free(f->srv);
	free(f);
	return 0;
}

static struct fpgad_xfer_sqe sqe(uint64_t user_data)
{
	struct fpgad_xfer_sqe s = {
		.user_data = user_data,
		.opcode = FPGAD_XFER_OP_READ,
		.buffer_id = 5,
		.card_addr = 4096,
		.length = 64,
	};

	return s;
}

static bool doorbell_rung(const struct fixture *f)
{
	struct pollfd p = { .fd = f->doorbell, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

static void test_layout_and_header(void **state)
{
	struct fixture *f = *state;
	const struct fpgad_xfer_header *h = f->mem;
	struct xfer_ring_layout l;

	assert_int_equal(h->magic, FPGAD_XFER_MAGIC);
	assert_int_equal(h->version_major, FPGAD_XFER_VERSION_MAJOR);
	assert_int_equal(h->sq_entries, 8);
	assert_int_equal(h->cq_entries, 16);
	assert_int_equal(h->sq_offset, 256);
	assert_int_equal(h->cq_offset, 256 + 8 * 64);
	assert_true(h->generation != 0);
	assert_true(h->card_memory == rules.card_memory);
	assert_int_equal(h->host_align, 64);
	assert_int_equal(h->gpu_align, 4096);
	assert_true(h->part_size == rules.part_size);
	assert_true(h->max_length == rules.max_length);
	assert_int_equal(h->max_timeout_ms, 600000);
	assert_int_equal(xfer_ring_layout(8, 16, &l), 0);
	assert_true(l.size == 256 + 24 * 64);
	assert_true(f->len >= l.size);
	/* Bounds: powers of two, completions at least as many. */
	assert_int_equal(xfer_ring_layout(4, 8, &l), -EINVAL);
	assert_int_equal(xfer_ring_layout(24, 32, &l), -EINVAL);
	assert_int_equal(xfer_ring_layout(16, 8, &l), -EINVAL);
	assert_int_equal(xfer_ring_layout(4096, 8192, &l), -EINVAL);
	assert_int_equal(xfer_ring_layout(2048, 4096, &l), 0);
	{
		struct xfer_server *none = NULL;

		assert_int_equal(xfer_server_create(6, &rules, "x", &none),
				 -EINVAL);
		assert_null(none);
	}
}

/* A client refuses a queue whose geometry does not hold together. */
static void test_validate(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_header *h;
	struct xfer_ring_layout l;
	unsigned char *copy = aligned_alloc(64, f->len + 64);
	const size_t off[] = {
		offsetof(struct fpgad_xfer_header, header_size),
		offsetof(struct fpgad_xfer_header, sqe_size),
		offsetof(struct fpgad_xfer_header, cqe_size),
		offsetof(struct fpgad_xfer_header, sq_entries),
		offsetof(struct fpgad_xfer_header, cq_entries),
		offsetof(struct fpgad_xfer_header, sq_offset),
		offsetof(struct fpgad_xfer_header, cq_offset),
	};
	const uint32_t bad[] = { 0, 1, 63, 100, 0x80000000u, 0xffffffffu, 300 };

	assert_non_null(copy);
	h = (struct fpgad_xfer_header *)copy;
	memcpy(copy, f->mem, f->len);
	assert_int_equal(xfer_ring_validate(copy, f->len, &l), 0);
	assert_int_equal(l.sq_entries, 8);
	assert_int_equal(xfer_ring_validate(copy, 100, &l), -EINVAL);
	assert_int_equal(xfer_ring_validate(copy + 8, f->len, &l), -EINVAL);
	assert_int_equal(xfer_ring_validate(NULL, f->len, &l), -EINVAL);
	for (unsigned i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		for (unsigned k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			memcpy(copy, f->mem, f->len);
			memcpy(copy + off[i], &bad[k], sizeof(bad[k]));
			if (xfer_ring_validate(copy, f->len, &l) == 0)
				fail_msg("field at %zu = %u accepted", off[i],
					 bad[k]);
		}
	}
	/* The queues must not overlap. */
	memcpy(copy, f->mem, f->len);
	h->cq_offset = h->sq_offset;
	assert_int_equal(xfer_ring_validate(copy, f->len, &l), -EINVAL);
	memcpy(copy, f->mem, f->len);
	h->generation = 0;
	assert_int_equal(xfer_ring_validate(copy, f->len, &l), -EINVAL);
	memcpy(copy, f->mem, f->len);
	h->version_major = 2;
	assert_int_equal(xfer_ring_validate(copy, f->len, &l), -EPROTONOSUPPORT);
	h->magic = 0;
	assert_int_equal(xfer_ring_validate(copy, f->len, &l), -EAGAIN);
	h->magic = 0x12345678;
	assert_int_equal(xfer_ring_validate(copy, f->len, &l), -EINVAL);
	free(copy);
}

/* Entries go over once each, completions come back, user_data intact. */
static void test_round_trip(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_sqe s, got;
	struct fpgad_xfer_cqe c[16];

	/* Born asking for the doorbell: fpgad's thread may be asleep. */
	assert_int_equal(xfer_queue_room(f->q), 8);
	assert_false(xfer_server_pending(f->srv));
	for (unsigned i = 0; i < 5; i++) {
		s = sqe(100 + i);
		xfer_queue_push(f->q, &s);
	}
	assert_int_equal(xfer_queue_room(f->q), 3);
	assert_false(xfer_server_pending(f->srv));	/* not published yet */
	assert_true(xfer_queue_publish(f->q));
	assert_false(xfer_queue_publish(f->q));		/* nothing new */
	for (unsigned i = 0; i < 5; i++) {
		assert_int_equal(xfer_server_take(f->srv, i, &got), 1);
		assert_true(got.user_data == 100 + i);
		assert_memory_equal(&got.card_addr, &s.card_addr, 8);
	}
	assert_int_equal(xfer_server_take(f->srv, 5, &got), 0);
	assert_int_equal(xfer_queue_room(f->q), 8);
	for (unsigned i = 0; i < 5; i++) {
		struct fpgad_xfer_cqe out = { .user_data = 104 - i,
					      .length = 64, .t_end_ns = 1 };

		xfer_server_complete(f->srv, &out);
	}
	xfer_server_wake(f->srv);
	assert_int_equal(xfer_queue_pop(f->q, c, 2), 2);
	assert_true(c[0].user_data == 104 && c[1].user_data == 103);
	assert_int_equal(xfer_queue_pop(f->q, c, 16), 3);
	assert_true(c[2].user_data == 100);
	assert_int_equal(xfer_queue_pop(f->q, c, 16), 0);
	assert_true(((struct fpgad_xfer_header *)f->mem)->taken == 5);
}

/* fpgad takes an entry only with room for its completion. */
static void test_completion_room(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_sqe s = sqe(1), got;
	struct fpgad_xfer_cqe c = { .user_data = 1 }, out[16];
	unsigned taken = 0;

	for (unsigned round = 0; round < 3; round++) {
		while (xfer_queue_room(f->q) > 0)
			xfer_queue_push(f->q, &s);
		xfer_queue_publish(f->q);
		while (xfer_server_take(f->srv, 0, &got) == 1) {
			xfer_server_complete(f->srv, &c);
			taken++;
		}
	}
	/* 16 completions unconsumed: no more taken. */
	assert_int_equal(taken, 16);
	assert_true(xfer_server_pending(f->srv));
	/* With entries outstanding, fewer. */
	assert_int_equal(xfer_queue_pop(f->q, out, 4), 4);
	assert_int_equal(xfer_server_take(f->srv, 4, &got), 0);
	assert_int_equal(xfer_server_take(f->srv, 3, &got), 1);
}

/* The doorbell rings only when fpgad asked for it, once armed. */
static void test_doorbell(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_sqe s = sqe(7), got;

	/* Born armed; the thread wakes and disarms. */
	assert_false(doorbell_rung(f));
	xfer_server_disarm(f->srv);
	xfer_queue_push(f->q, &s);
	assert_false(xfer_queue_publish(f->q));	/* fpgad is awake */
	assert_true(xfer_server_arm(f->srv));	/* work: no sleep */
	assert_int_equal(xfer_server_take(f->srv, 0, &got), 1);
	assert_false(xfer_server_arm(f->srv));	/* nothing: may sleep */
	xfer_queue_push(f->q, &s);
	assert_true(xfer_queue_publish(f->q));	/* ring it */
	assert_int_equal(write(f->doorbell, &(uint64_t){ 1 }, 8), 8);
	assert_true(doorbell_rung(f));
	/* The poller empties it; disarmed, the client rings no more. */
	assert_int_equal(read(f->doorbell, &(uint64_t){ 0 }, 8), 8);
	assert_false(doorbell_rung(f));
	xfer_server_disarm(f->srv);
	xfer_queue_push(f->q, &s);
	assert_false(xfer_queue_publish(f->q));
}

/* Positions the client wrote that make no sense are ignored, counted. */
static void test_nonsense_positions(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_header *h = f->mem;
	struct fpgad_xfer_sqe got;
	struct fpgad_xfer_cqe c = { .user_data = 3 };

	h->sq_tail = 9;		/* 9 ahead of 0, 8 entries */
	assert_int_equal(xfer_server_take(f->srv, 0, &got), 0);
	assert_int_equal(h->bad_positions, 1);
	assert_int_equal(xfer_server_take(f->srv, 0, &got), 0);
	assert_int_equal(h->bad_positions, 1);	/* counted once per value */
	h->sq_tail = 0xfffffff0u;
	assert_int_equal(xfer_server_take(f->srv, 0, &got), 0);
	assert_int_equal(h->bad_positions, 2);
	h->sq_tail = 8;
	for (unsigned i = 0; i < 8; i++) {
		assert_int_equal(xfer_server_take(f->srv, 0, &got), 1);
		xfer_server_complete(f->srv, &c);
	}
	assert_int_equal(h->sq_head, 8);
	/* cq_head past cq_tail, or behind what was accepted: ignored. */
	h->cq_head = 9;
	h->sq_tail = 9;
	assert_int_equal(xfer_server_take(f->srv, 0, &got), 1);
	assert_int_equal(h->bad_positions, 3);
	h->cq_head = 4;
	h->sq_tail = 10;
	assert_int_equal(xfer_server_take(f->srv, 0, &got), 1);
	assert_int_equal(h->bad_positions, 3);
	h->cq_head = 2;		/* backwards */
	h->sq_tail = 11;
	assert_int_equal(xfer_server_take(f->srv, 0, &got), 1);
	assert_int_equal(h->bad_positions, 4);
	/* fpgad's words scribbled on: rewritten from its own copies. */
	h->sq_head = 77;
	h->cq_tail = 77;
	h->sq_tail = 12;
	h->cq_head = 8;
	assert_int_equal(xfer_server_take(f->srv, 0, &got), 1);
	assert_int_equal(h->sq_head, 12);
	xfer_server_complete(f->srv, &c);
	assert_int_equal(h->cq_tail, 9);
	assert_int_equal(h->taken, 12);
}

/* The client's end refuses positions fpgad could not have written. */
static void test_client_checks_positions(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_header *h = f->mem;
	struct fpgad_xfer_cqe c[4];

	h->cq_tail = 1000;
	assert_int_equal(xfer_queue_pop(f->q, c, 4), -EPROTO);
	h->cq_tail = 0;
	h->sq_head = 5;		/* took what was never published */
	assert_int_equal(xfer_queue_room(f->q), -EPROTO);
}

/* The client sleeps until a completion or an event comes. */
static void test_wait_and_events(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_cqe c = { .user_data = 1 };

	assert_int_equal(xfer_queue_wait(f->q, 0, true), -ETIMEDOUT);
	assert_int_equal(xfer_queue_wait(f->q, 20, true), -ETIMEDOUT);
	assert_int_equal(xfer_queue_wait(f->q, 20, false), -ETIMEDOUT);
	xfer_server_complete(f->srv, &c);
	assert_int_equal(xfer_queue_wait(f->q, 1000, true), 0);
	assert_int_equal(xfer_queue_pop(f->q, &c, 1), 1);
	assert_int_equal(xfer_queue_events(f->q), 0);
	xfer_server_raise(f->srv, FPGAD_XFER_EVENT_CLOSED);
	assert_int_equal(xfer_queue_wait(f->q, 1000, false), 0);
	assert_int_equal(xfer_queue_events(f->q), FPGAD_XFER_EVENT_CLOSED);
}

/* Every rule has a name; every refusal a message with its numbers. */
static void test_describe(void **state)
{
	struct fpgad_xfer_sqe s = {
		.opcode = 9, .buffer_id = 3, .buf_offset = 61440,
		.card_addr = 0x7ffff000, .length = 8192, .timeout_ms = 700000,
	};
	struct fpgad_xfer_cqe c = { .status = -EINVAL };
	char buf[256];
	const struct {
		uint32_t rule;
		uint64_t limit;
		const char *want;
	} cases[] = {
		{ FPGAD_XFER_RULE_OPCODE, 0, "operation: 9 is neither read (1) nor write (2)" },
		{ FPGAD_XFER_RULE_RESERVED, 0, "reserved fields" },
		{ FPGAD_XFER_RULE_BUFFER, 0, "buffer: 3 is not a buffer registered on this connection" },
		{ FPGAD_XFER_RULE_ZERO_LENGTH, 0, "zero length" },
		{ FPGAD_XFER_RULE_MAX_LENGTH, 4096, "maximum length: 8192 bytes is more than the 4096" },
		{ FPGAD_XFER_RULE_CARD_ALIGN, 64, "card address alignment: card address 0x7ffff000 is not a multiple of 64" },
		{ FPGAD_XFER_RULE_BUF_ALIGN, 4096, "buffer offset alignment: buffer offset 61440 is not a multiple of 4096" },
		{ FPGAD_XFER_RULE_LEN_ALIGN, 3, "length alignment: length 8192 is not a multiple of 3" },
		{ FPGAD_XFER_RULE_CARD_RANGE, 1ull << 31, "card range: card address 0x7ffff000 + 8192 bytes ends past card memory (2147483648 bytes)" },
		{ FPGAD_XFER_RULE_BUF_RANGE, 65536, "buffer range: buffer offset 61440 + 8192 bytes ends past the buffer (65536 bytes)" },
		{ FPGAD_XFER_RULE_TIMEOUT, 600000, "timeout: 700000 ms is more than 600000 ms" },
		{ FPGAD_XFER_RULE_MODE, 0, "transfer mode" },
		{ FPGAD_XFER_RULE_ENGINE, 0, "engine: no engine of the card serves writes (h2c)" },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c.rule = cases[i].rule;
		c.limit = cases[i].limit;
		xfer_describe(&s, &c, buf, sizeof(buf));
		if (!strstr(buf, cases[i].want))
			fail_msg("rule %u: '%s'", c.rule, buf);
		assert_string_not_equal(xfer_rule_name(c.rule), "?");
	}
	assert_string_equal(xfer_rule_name(FPGAD_XFER_RULE_COUNT), "?");
	assert_string_equal(xfer_rule_name(UINT32_MAX), "?");
	/* A failure on the card names the address and what arrived. */
	c.rule = FPGAD_XFER_RULE_NONE;
	c.status = -EIO;
	c.fail_addr = 0x900000;
	c.length = 8u << 20;
	s.length = 24u << 20;
	xfer_describe(&s, &c, buf, sizeof(buf));
	assert_string_equal(buf, "card: Input/output error at card address "
			    "0x900000 (after 8388608 of 25165824 bytes)");
	c.status = 0;
	assert_string_equal(xfer_describe(&s, &c, buf, sizeof(buf)), "done");
	c.rule = 99;
	xfer_describe(&s, &c, buf, sizeof(buf));
	assert_non_null(strstr(buf, "rule 99"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_layout_and_header),
		T(test_validate),
		T(test_round_trip),
		T(test_completion_room),
		T(test_doorbell),
		T(test_nonsense_positions),
		T(test_client_checks_positions),
		T(test_wait_and_events),
		cmocka_unit_test(test_describe),
#undef T
	};

	return cmocka_run_group_tests_name("xfer_ring", tests, NULL, NULL);
}
