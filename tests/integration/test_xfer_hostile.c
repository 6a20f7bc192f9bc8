// SPDX-License-Identifier: MIT
/*
 * test_xfer_hostile.c - a client that does not play by the transfer
 * plane's rules: it speaks the control and handoff protocols by hand, maps
 * its transfer queue and writes whatever it likes into it (garbage
 * entries, another connection's buffer ids, everything out of range,
 * positions that make no sense, fpgad's own words, a flood), and hands
 * over memory fpgad must not take.  fpgad must not crash, stall or mix
 * anything up, nor let it reach another client's buffers; the well-behaved
 * client beside it is served all along.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_internal.h"
#include "fpgad.h"
#include "fpgad_xfer.h"
#include "harness.h"
#include "xfer_ring.h"

#define CARD (2ull << 30)
#define WAIT 10000

/* A hostile client: its own connection and its queue, mapped by hand. */
struct raw {
	fpgad_client *c;
	void *mem;
	size_t len;
	struct fpgad_xfer_header *h;
	struct xfer_ring_layout l;	/* as fpgad laid it out */
	int doorbell;
	int link;
	uint32_t tail;
	uint32_t head;
};

static void raw_open(struct raw *q, const char *url)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenXferQueueRequest body = FPGAD__OPEN_XFER_QUEUE_REQUEST__INIT;
	Fpgad__Response *resp;
	int fds[2];

	memset(q, 0, sizeof(*q));
	assert_int_equal(fpgad_connect(url, &q->c), 0);
	req.body_case = FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE;
	req.open_xfer_queue = &body;
	assert_int_equal(conn_transact(q->c, &req, &resp), 0);
	assert_int_equal(handoff_exchange(q->c, resp->open_xfer_queue->handoff_path,
					  &resp->open_xfer_queue->handoff_token,
					  NULL, 0, fds, 2, &q->link), 0);
	q->len = resp->open_xfer_queue->queue_size;
	fpgad__response__free_unpacked(resp, NULL);
	assert_int_equal(handoff_map(fds[0], q->len, PROT_READ | PROT_WRITE,
				     &q->mem), 0);
	/* Sealed: the queue cannot be cut short under fpgad. */
	assert_int_equal(ftruncate(fds[0], 4096), -1);
	assert_int_equal(errno, EPERM);
	close(fds[0]);
	q->doorbell = fds[1];
	q->h = q->mem;
	assert_int_equal(xfer_ring_validate(q->mem, q->len, &q->l), 0);
}

static void raw_close(struct raw *q)
{
	munmap(q->mem, q->len);
	close(q->doorbell);
	close(q->link);
	fpgad_disconnect(q->c);
}

/* RegisterBuffer by hand: -errno or 0, the id, fpgad's message in @msg. */
static int raw_register(struct raw *q, int fd, uint64_t len, bool send_fd,
			uint64_t *ret_id)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__RegisterBufferRequest body = FPGAD__REGISTER_BUFFER_REQUEST__INIT;
	Fpgad__Response *resp;
	int r;

	body.memory = "host";
	body.length = len;
	req.body_case = FPGAD__REQUEST__BODY_REGISTER_BUFFER;
	req.register_buffer = &body;
	r = conn_transact(q->c, &req, &resp);
	if (r)
		return r;
	*ret_id = resp->register_buffer->buffer_id;
	r = handoff_exchange(q->c, resp->register_buffer->handoff_path,
			     &resp->register_buffer->handoff_token, &fd,
			     send_fd ? 1 : 0, NULL, 0, NULL);
	fpgad__response__free_unpacked(resp, NULL);
	return r;
}

/* A memfd of @len bytes with @seals, mapped at *@ret_map if asked. */
static int memfd(uint64_t len, unsigned seals, void **ret_map)
{
	int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)len), 0);
	assert_int_equal(posix_fallocate(fd, 0, (off_t)len), 0);
	if (ret_map) {
		*ret_map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
				fd, 0);
		assert_true(*ret_map != MAP_FAILED);
	}
	if (seals)
		assert_int_equal(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

/* Write @n entries and publish them as a client would, bell and all. */
static void raw_submit(struct raw *q, const struct fpgad_xfer_sqe *s,
		       unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		memcpy(xfer_ring_sqe(q->mem, &q->l, q->tail++), &s[i],
		       sizeof(*s));
	__atomic_store_n(&q->h->sq_tail, q->tail, __ATOMIC_RELEASE);
	eventfd_write(q->doorbell, 1);
}

/* Take @n completions, waiting up to WAIT ms for them. */
static void raw_reap(struct raw *q, struct fpgad_xfer_cqe *out, unsigned n)
{
	uint64_t end = harness_now_ms() + WAIT;
	unsigned got = 0;

	while (got < n) {
		uint32_t tail = __atomic_load_n(&q->h->cq_tail, __ATOMIC_ACQUIRE);

		while (q->head != tail && got < n)
			memcpy(&out[got++], xfer_ring_cqe(q->mem, &q->l, q->head++),
			       sizeof(*out));
		__atomic_store_n(&q->h->cq_head, q->head, __ATOMIC_RELEASE);
		if (got < n && harness_now_ms() > end)
			fail_msg("%u of %u completions", got, n);
		if (got < n)
			usleep(200);
	}
}

static struct fpgad_xfer_cqe raw_one(struct raw *q,
				     const struct fpgad_xfer_sqe *s)
{
	struct fpgad_xfer_cqe c;

	raw_submit(q, s, 1);
	raw_reap(q, &c, 1);
	assert_true(c.user_data == s->user_data);
	return c;
}

struct fixture {
	struct fpgad_proc p;
	fpgad_client *good;		/* the well-behaved client */
	fpgad_buffer *gw, *gr;
	struct raw bad;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	harness_start_ok(&f->p, "[transfer]\nqueue_entries = 64\n[exporter]\n"
			 "args = --metrics http://127.0.0.1:0/metrics\n", NULL);
	assert_int_equal(fpgad_connect(f->p.url, &f->good), 0);
	assert_int_equal(fpgad_buffer_alloc_host(f->good, 65536, &f->gw), 0);
	assert_int_equal(fpgad_buffer_alloc_host(f->good, 65536, &f->gr), 0);
	raw_open(&f->bad, f->p.url);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	raw_close(&f->bad);
	fpgad_disconnect(f->good);
	harness_stop_ok(&f->p);
	free(f);
	return 0;
}

/* The good client is served, byte-exact, at @addr. */
static void good_round_trip(struct fixture *f, uint64_t addr, unsigned seed)
{
	unsigned char *w = fpgad_buffer_data(f->gw);

	for (unsigned i = 0; i < 65536; i++)
		w[i] = (unsigned char)(i * 7 + seed);
	memset(fpgad_buffer_data(f->gr), 0, 65536);
	assert_int_equal(fpgad_write(f->gw, 0, addr, 65536, WAIT), 0);
	assert_int_equal(fpgad_read(f->gr, 0, addr, 65536, WAIT), 0);
	assert_memory_equal(fpgad_buffer_data(f->gr), w, 65536);
}

/*
 * /metrics counts refusals by rule: each rule's sample, under the name
 * fpgad_xfer_strerror() gives it, is how many of @rules (@n) are it.
 */
static void check_refused_metrics(struct fixture *f, const uint32_t *rules,
				  unsigned n)
{
	static char out[256 * 1024];
	char *m = harness_scrape(harness_metrics_port(&f->p), out, sizeof(out));
	char series[128];

	for (uint32_t r = FPGAD_XFER_RULE_NONE + 1; r < FPGAD_XFER_RULE_COUNT; r++) {
		unsigned want = 0;
		double got;

		for (unsigned i = 0; i < n; i++)
			want += rules[i] == r;
		snprintf(series, sizeof(series),
			 "fpgad_transfer_refused_total{rule=\"%s\"}", xfer_rule_name(r));
		got = harness_sample(m, series);
		if (got != want)
			fail_msg("%s %.0f, want %u", series, got, want);
	}
}

/*
 * Entries with every field wrong: each refused by its rule, and counted
 * under it in /metrics; nothing moved.
 */
static void test_out_of_range(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_cqe c;
	uint64_t id;
	void *map;
	int fd = memfd(65536, F_SEAL_SHRINK, &map);
	const struct {
		struct fpgad_xfer_sqe s;
		uint32_t rule;
		int status;
	} cases[] = {
		{ { .opcode = 0, .length = 64 }, FPGAD_XFER_RULE_OPCODE, -EINVAL },
		{ { .opcode = 3, .length = 64 }, FPGAD_XFER_RULE_OPCODE, -EINVAL },
		{ { .opcode = UINT32_MAX, .length = 64 }, FPGAD_XFER_RULE_OPCODE, -EINVAL },
		{ { .opcode = 1, .flags = 0x80, .length = 64 }, FPGAD_XFER_RULE_RESERVED, -EINVAL },
		{ { .opcode = 1, .reserved0 = 1, .length = 64 }, FPGAD_XFER_RULE_RESERVED, -EINVAL },
		{ { .opcode = 2, .reserved1 = 1, .length = 64 }, FPGAD_XFER_RULE_RESERVED, -EINVAL },
		{ { .opcode = 1, .buffer_id = 0, .length = 64 }, FPGAD_XFER_RULE_BUFFER, -ENOENT },
		{ { .opcode = 1, .buffer_id = UINT64_MAX, .length = 64 }, FPGAD_XFER_RULE_BUFFER, -ENOENT },
		{ { .opcode = 1, .length = 0 }, FPGAD_XFER_RULE_ZERO_LENGTH, -EINVAL },
		{ { .opcode = 1, .length = UINT64_MAX }, FPGAD_XFER_RULE_MAX_LENGTH, -EINVAL },
		{ { .opcode = 1, .length = 64, .timeout_ms = UINT32_MAX }, FPGAD_XFER_RULE_TIMEOUT, -EINVAL },
		{ { .opcode = 1, .card_addr = 1, .length = 64 }, FPGAD_XFER_RULE_CARD_ALIGN, -EINVAL },
		{ { .opcode = 1, .buf_offset = 63, .length = 64 }, FPGAD_XFER_RULE_BUF_ALIGN, -EINVAL },
		{ { .opcode = 1, .length = 65 }, FPGAD_XFER_RULE_LEN_ALIGN, -EINVAL },
		{ { .opcode = 1, .card_addr = UINT64_MAX - 63, .length = 128 }, FPGAD_XFER_RULE_CARD_RANGE, -EINVAL },
		{ { .opcode = 2, .card_addr = CARD, .length = 64 }, FPGAD_XFER_RULE_CARD_RANGE, -EINVAL },
		{ { .opcode = 1, .buf_offset = UINT64_MAX - 63, .length = 128 }, FPGAD_XFER_RULE_BUF_RANGE, -EINVAL },
		{ { .opcode = 2, .buf_offset = 65536, .length = 64 }, FPGAD_XFER_RULE_BUF_RANGE, -EINVAL },
	};
	uint32_t rules[sizeof(cases) / sizeof(cases[0])];

	assert_int_equal(raw_register(&f->bad, fd, 65536, true, &id), 0);
	memset(map, 0x5a, 65536);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fpgad_xfer_sqe s = cases[i].s;

		s.user_data = 1000 + i;
		if (cases[i].rule != FPGAD_XFER_RULE_BUFFER)
			s.buffer_id = id;
		c = raw_one(&f->bad, &s);
		if (c.rule != cases[i].rule || c.status != cases[i].status)
			fail_msg("case %u: rule %u status %d, want %u %d", i,
				 c.rule, c.status, cases[i].rule, cases[i].status);
		assert_true(c.length == 0);
		assert_int_equal(c.mode, 0);
		rules[i] = c.rule;
	}
	check_refused_metrics(f, rules, sizeof(rules) / sizeof(rules[0]));
	/* Nothing was written into the buffer. */
	for (unsigned i = 0; i < 65536; i++)
		assert_int_equal(((unsigned char *)map)[i], 0x5a);
	assert_true(f->bad.h->refused == sizeof(cases) / sizeof(cases[0]));
	good_round_trip(f, 0, 1);
	munmap(map, 65536);
	close(fd);
}

/* Random bytes as entries, many at once: each completes, refused. */
static void test_garbage(void **state)
{
	struct fixture *f = *state;
	struct fpgad_xfer_sqe s[64];
	struct fpgad_xfer_cqe c[64];
	unsigned seen[64] = { 0 };
	uint64_t x = 88172645463325252ull;

	for (unsigned round = 0; round < 20; round++) {
		for (unsigned i = 0; i < 64; i++) {
			uint64_t *w = (uint64_t *)&s[i];

			for (unsigned k = 0; k < 8; k++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				w[k] = x;
			}
			s[i].user_data = i;
		}
		raw_submit(&f->bad, s, 64);
		raw_reap(&f->bad, c, 64);
		for (unsigned i = 0; i < 64; i++) {
			assert_true(c[i].user_data < 64);
			seen[c[i].user_data] = round + 1;
			assert_int_not_equal(c[i].rule, FPGAD_XFER_RULE_NONE);
			assert_true(c[i].status < 0);
		}
		for (unsigned i = 0; i < 64; i++)
			assert_int_equal(seen[i], round + 1);
	}
	good_round_trip(f, 4096, 2);
}

/*
 * Another connection's buffer ids, and one's own buffer once
 * unregistered, name nothing: the other client's memory is not touched.
 */
static void test_foreign_ids(void **state)
{
	struct fixture *f = *state;
	struct fpgad_buffer_info info;
	struct fpgad_xfer_cqe c;
	struct fpgad_xfer_sqe s = { .opcode = FPGAD_XFER_OP_READ, .length = 4096 };
	unsigned char *gw = fpgad_buffer_data(f->gw);
	uint64_t id;
	void *map;
	int fd = memfd(8192, F_SEAL_SHRINK, &map);

	memset(gw, 0x77, 65536);
	fpgad_buffer_get_info(f->gw, &info);
	for (uint64_t guess = info.id - 2; guess <= info.id + 2; guess++) {
		s.buffer_id = guess;
		s.user_data = guess;
		c = raw_one(&f->bad, &s);
		assert_int_equal(c.rule, FPGAD_XFER_RULE_BUFFER);
		assert_int_equal(c.status, -ENOENT);
	}
	/* Every id of the same index and another generation, too. */
	s.buffer_id = info.id + (1ull << 32);
	c = raw_one(&f->bad, &s);
	assert_int_equal(c.rule, FPGAD_XFER_RULE_BUFFER);
	for (unsigned i = 0; i < 65536; i++)
		assert_int_equal(gw[i], 0x77);

	assert_int_equal(raw_register(&f->bad, fd, 8192, true, &id), 0);
	s.buffer_id = id;
	c = raw_one(&f->bad, &s);
	assert_int_equal(c.status, 0);
	{
		Fpgad__Request req = FPGAD__REQUEST__INIT;
		Fpgad__UnregisterBufferRequest body =
			FPGAD__UNREGISTER_BUFFER_REQUEST__INIT;
		Fpgad__Response *resp;

		body.buffer_id = id;
		req.body_case = FPGAD__REQUEST__BODY_UNREGISTER_BUFFER;
		req.unregister_buffer = &body;
		assert_int_equal(conn_transact(f->bad.c, &req, &resp), 0);
		fpgad__response__free_unpacked(resp, NULL);
		/* Nor can it unregister the good client's. */
		body.buffer_id = info.id;
		assert_int_equal(conn_transact(f->bad.c, &req, &resp), -ENOENT);
		assert_non_null(strstr(fpgad_errmsg(f->bad.c),
				       "no buffer"));
	}
	c = raw_one(&f->bad, &s);
	assert_int_equal(c.rule, FPGAD_XFER_RULE_BUFFER);
	good_round_trip(f, 8192, 3);
	munmap(map, 8192);
	close(fd);
}

/*
 * Positions that make no sense are ignored, counted, and forgotten once
 * they make sense again; fpgad's own words, scribbled on, do not matter:
 * it keeps its own.
 */
static void test_positions(void **state)
{
	struct fixture *f = *state;
	struct raw *q = &f->bad;
	struct fpgad_xfer_sqe s = { .opcode = 1, .length = 64, .user_data = 9 };
	struct fpgad_xfer_cqe c;
	uint32_t head;

	/* A tail miles ahead: nothing taken. */
	__atomic_store_n(&q->h->sq_tail, q->tail + 100000, __ATOMIC_RELEASE);
	eventfd_write(q->doorbell, 1);
	usleep(50000);
	good_round_trip(f, 12288, 4);
	head = __atomic_load_n(&q->h->sq_head, __ATOMIC_ACQUIRE);
	assert_true(head == q->tail);
	assert_true(q->h->bad_positions >= 1);
	/* A head that runs backwards or past the tail: ignored too. */
	__atomic_store_n(&q->h->cq_head, q->head + 5000, __ATOMIC_RELEASE);
	/* fpgad's own words and the geometry, overwritten. */
	q->h->sq_offset = 0xfffff000;
	q->h->cq_offset = 0;
	q->h->sq_entries = 1u << 31;
	q->h->cqe_size = 1;
	q->h->sq_head = 12345;
	q->h->cq_tail = 999;
	q->h->magic = 0;
	q->h->cq_futex = 7;
	/* Sense again: served, where fpgad laid the queue out. */
	__atomic_store_n(&q->h->cq_head, q->head, __ATOMIC_RELEASE);
	s.buffer_id = 0;
	raw_submit(q, &s, 1);
	/* cq_tail was scribbled on: take the completion where fpgad put it. */
	usleep(50000);
	memcpy(&c, xfer_ring_cqe(q->mem, &q->l, q->head), sizeof(c));
	assert_true(c.user_data == 9);
	assert_int_equal(c.rule, FPGAD_XFER_RULE_BUFFER);
	assert_true(q->h->cq_tail == q->head + 1);
	q->head++;
	__atomic_store_n(&q->h->cq_head, q->head, __ATOMIC_RELEASE);
	good_round_trip(f, 16384, 5);
}

/*
 * A flood: the hostile client fills its queue with the longest transfers
 * there are and never reaps, and rings its doorbell nonstop; the good
 * client is served all the while, and everything goes when the flood's
 * connection does.
 */
static void test_flood(void **state)
{
	struct fixture *f = *state;
	struct raw *q = &f->bad;
	struct fpgad_xfer_sqe s[64];
	struct fpgad_status *st;
	uint64_t id;
	void *map;
	int fd = memfd(64u << 20, F_SEAL_SHRINK, &map);

	assert_int_equal(raw_register(q, fd, 64u << 20, true, &id), 0);
	for (unsigned i = 0; i < 64; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].opcode = i % 2 ? FPGAD_XFER_OP_READ : FPGAD_XFER_OP_WRITE;
		s[i].buffer_id = id;
		s[i].length = 64u << 20;
		s[i].card_addr = (uint64_t)(i % 4) << 26;
		s[i].user_data = i;
	}
	raw_submit(q, s, 64);
	for (unsigned i = 0; i < 20; i++) {
		for (unsigned k = 0; k < 1000; k++)
			eventfd_write(q->doorbell, 1);
		/* More than the queue holds: fpgad takes what it may. */
		raw_submit(q, s, 8);
		good_round_trip(f, 1ull << 30, 10 + i);	/* not the flood's */
	}
	st = NULL;
	assert_int_equal(fpgad_status_get(f->good, &st), 0);
	assert_int_equal(st->transfer_buffers, 3);
	fpgad_status_free(st);
	/* The flood's connection goes: its buffer with it. */
	raw_close(q);
	munmap(map, 64u << 20);
	close(fd);
	for (uint64_t end = harness_now_ms() + WAIT;; usleep(20000)) {
		assert_int_equal(fpgad_status_get(f->good, &st), 0);
		if (st->transfer_buffers == 2 && st->transfer_queues == 1)
			break;
		fpgad_status_free(st);
		if (harness_now_ms() > end)
			fail_msg("the flood's buffer is still registered");
	}
	fpgad_status_free(st);
	good_round_trip(f, 2u << 20, 40);
	raw_open(q, f->p.url);	/* for teardown */
}

/* Memory fpgad must not take, refused by name; nothing stays registered. */
static void test_bad_memory(void **state)
{
	struct fixture *f = *state;
	struct fpgad_status *st;
	char path[] = "/tmp/fpgad-hostile.XXXXXX";
	uint64_t id;
	int fd, pipefd[2];

	fd = memfd(8192, 0, NULL);
	assert_int_equal(raw_register(&f->bad, fd, 8192, true, &id), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(f->bad.c),
			       "not sealed against shrinking"));
	close(fd);
	fd = memfd(8192, F_SEAL_SHRINK | F_SEAL_WRITE, NULL);
	assert_int_equal(raw_register(&f->bad, fd, 8192, true, &id), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(f->bad.c), "sealed against writing"));
	close(fd);
	fd = memfd(4096, F_SEAL_SHRINK, NULL);
	assert_int_equal(raw_register(&f->bad, fd, 8192, true, &id), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(f->bad.c), "the memfd holds 4096 bytes"));
	close(fd);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 8192), 0);
	assert_int_equal(raw_register(&f->bad, fd, 8192, true, &id), -EINVAL);
	/* On tmpfs a plain file answers F_GET_SEALS too: never with SHRINK. */
	assert_non_null(strstr(fpgad_errmsg(f->bad.c), "memfd"));
	close(fd);
	unlink(path);
	assert_int_equal(pipe(pipefd), 0);
	assert_int_equal(raw_register(&f->bad, pipefd[0], 8192, true, &id),
			 -EINVAL);
	close(pipefd[0]);
	close(pipefd[1]);
	/* No descriptor with the token. */
	assert_int_equal(raw_register(&f->bad, -1, 8192, false, &id), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(f->bad.c), "no memfd came"));
	assert_int_equal(fpgad_status_get(f->good, &st), 0);
	assert_int_equal(st->transfer_buffers, 2);
	fpgad_status_free(st);
	good_round_trip(f, 20480, 6);
}

/* A control request of the transfer plane, by hand: -errno and fpgad's words. */
static int request(fpgad_client *c, Fpgad__Request *req)
{
	Fpgad__Response *resp;
	int r = conn_transact(c, req, &resp);

	if (r == 0)
		fpgad__response__free_unpacked(resp, NULL);
	return r;
}

static int reg(fpgad_client *c, const char *memory, uint64_t len,
	       const char *mode, size_t handle_len, const char *bus)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__RegisterBufferRequest body = FPGAD__REGISTER_BUFFER_REQUEST__INIT;
	uint8_t handle[64] = { 1, 2, 3 };

	body.memory = (char *)memory;
	body.length = len;
	body.mode = (char *)mode;
	body.ipc_handle.data = handle;
	body.ipc_handle.len = handle_len;
	body.gpu_bus_id = (char *)bus;
	req.body_case = FPGAD__REQUEST__BODY_REGISTER_BUFFER;
	req.register_buffer = &body;
	return request(c, &req);
}

static int set_mode(fpgad_client *c, uint64_t id, const char *mode)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__SetBufferModeRequest body = FPGAD__SET_BUFFER_MODE_REQUEST__INIT;

	body.buffer_id = id;
	body.mode = (char *)mode;
	req.body_case = FPGAD__REQUEST__BODY_SET_BUFFER_MODE;
	req.set_buffer_mode = &body;
	return request(c, &req);
}

#define SAYS(c, what) \
	do { \
		if (!strstr(fpgad_errmsg(c), what)) \
			fail_msg("'%s' does not say '%s'", fpgad_errmsg(c), what); \
	} while (0)

/* Every field of the transfer plane's requests, wrong: refused by name. */
static void test_bad_requests(void **state)
{
	struct fixture *f = *state;
	fpgad_client *c = f->bad.c;
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenXferQueueRequest open = FPGAD__OPEN_XFER_QUEUE_REQUEST__INIT;
	Fpgad__UnregisterBufferRequest unreg = FPGAD__UNREGISTER_BUFFER_REQUEST__INIT;
	struct fpgad_status *st;

	req.body_case = FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE;
	req.open_xfer_queue = &open;
	assert_int_equal(request(c, &req), -EINVAL);
	SAYS(c, "has its transfer queue already");

	assert_int_equal(reg(c, "gpu", 4096, "", 0, ""), -EINVAL);
	SAYS(c, "memory 'gpu' is not host or cuda");
	assert_int_equal(reg(c, "", 4096, "", 0, ""), -EINVAL);
	assert_int_equal(reg(c, "host", 4096, "fast", 0, ""), -EINVAL);
	SAYS(c, "mode 'fast' is not one of auto, gpudirect, bounce, host");
	assert_int_equal(reg(c, "host", 0, "", 0, ""), -EINVAL);
	SAYS(c, "a buffer of 0 bytes");
	assert_int_equal(reg(c, "host", UINT64_MAX, "", 0, ""), -ENOSPC);
	SAYS(c, "max_registered");
	assert_int_equal(reg(c, "host", 4096, "gpudirect", 0, ""), -EINVAL);
	SAYS(c, "mode gpudirect needs GPU memory");
	assert_int_equal(reg(c, "cuda", 4096, "", 0, "0000:00:00.0"), -EINVAL);
	SAYS(c, "needs a 64-byte IPC handle");
	assert_int_equal(reg(c, "cuda", 4096, "", 64, ""), -EINVAL);
	assert_int_equal(reg(c, "cuda", 4096, "host", 64, "0000:00:00.0"), -EINVAL);
	SAYS(c, "mode host needs host memory");
	assert_int_equal(reg(c, "cuda", 100, "", 64, "0000:00:00.0"), -EINVAL);
	SAYS(c, "4096-byte boundaries");
	/* A handle that names nothing (and, here, no CUDA): refused. */
	assert_true(reg(c, "cuda", 4096, "", 64, "0000:00:00.0") < 0);
	SAYS(c, "GPU memory: ");

	assert_int_equal(set_mode(c, 12345, "auto"), -ENOENT);
	SAYS(c, "no buffer 12345 on this connection");
	assert_int_equal(set_mode(c, 12345, "warp"), -EINVAL);
	SAYS(c, "mode 'warp' is not one of");
	unreg.buffer_id = 0;
	req.body_case = FPGAD__REQUEST__BODY_UNREGISTER_BUFFER;
	req.unregister_buffer = &unreg;
	assert_int_equal(request(c, &req), -ENOENT);
	SAYS(c, "no buffer 0 on this connection");

	/* None of it registered anything. */
	assert_int_equal(fpgad_status_get(f->good, &st), 0);
	assert_int_equal(st->transfer_buffers, 2);
	fpgad_status_free(st);
	good_round_trip(f, 24576, 7);
}

/*
 * The handoff socket: a token that names nothing, a buffer's memfd with an
 * extra descriptor beside it (fpgad keeps one, closes the other: no
 * descriptor of fpgad's left over), a queue's token twice.
 */
static void test_bad_handoffs(void **state)
{
	struct fixture *f = *state;
	fpgad_client *c = f->bad.c;
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__RegisterBufferRequest body = FPGAD__REGISTER_BUFFER_REQUEST__INIT;
	ProtobufCBinaryData junk = { .len = 16, .data = (uint8_t *)"0123456789abcdef" };
	char path[256], dir[128];
	Fpgad__Response *resp;
	unsigned n0, n1;
	int fds[2], r;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)f->p.pid);
	snprintf(path, sizeof(path), "%s/fpgad.handoff", f->p.dir);
	assert_int_equal(handoff_exchange(c, path, &junk, NULL, 0, NULL, 0, NULL),
			 -ENOENT);
	SAYS(c, "no lease holds that token");

	{
		char cmd[300], out[64];

		snprintf(cmd, sizeof(cmd), "ls %s | wc -l", dir);
		harness_run(cmd, out, sizeof(out));
		n0 = (unsigned)atoi(out);
		fds[0] = memfd(8192, F_SEAL_SHRINK, NULL);
		fds[1] = memfd(8192, F_SEAL_SHRINK, NULL);
		body.memory = "host";
		body.length = 8192;
		req.body_case = FPGAD__REQUEST__BODY_REGISTER_BUFFER;
		req.register_buffer = &body;
		assert_int_equal(conn_transact(c, &req, &resp), 0);
		r = handoff_exchange(c, resp->register_buffer->handoff_path,
				     &resp->register_buffer->handoff_token, fds,
				     2, NULL, 0, NULL);
		assert_int_equal(r, 0);
		/* The token was good once. */
		assert_int_equal(handoff_exchange(c,
				 resp->register_buffer->handoff_path,
				 &resp->register_buffer->handoff_token, fds, 1,
				 NULL, 0, NULL), -ENOENT);
		fpgad__response__free_unpacked(resp, NULL);
		close(fds[0]);
		close(fds[1]);
		usleep(50000);
		harness_run(cmd, out, sizeof(out));
		n1 = (unsigned)atoi(out);
		/* One more: the memfd fpgad keeps; not the extra one. */
		assert_int_equal(n1, n0 + 1);
	}
	good_round_trip(f, 28672, 8);
}

/*
 * Present @token in a child process: its handoff_exchange's result, as
 * the child's exit status (0, or the errno; 100 when fpgad's message
 * does not name the pid the token is for).
 */
static int claim_from_child(fpgad_client *c, const char *path,
			    const ProtobufCBinaryData *token, int send_fd)
{
	int status, fds[2], r;
	pid_t child = fork();
	char want[64];

	assert_true(child >= 0);
	if (child == 0) {
		r = handoff_exchange(c, path, token, send_fd >= 0 ? &send_fd : NULL,
				     send_fd >= 0 ? 1 : 0, send_fd >= 0 ? NULL : fds,
				     send_fd >= 0 ? 0 : 2, NULL);
		snprintf(want, sizeof(want), "is pid %d's, not pid %d's", (int)getppid(),
			 (int)getpid());
		_exit(r == 0 ? 0 : !strstr(fpgad_errmsg(c), want) ? 100 : -r);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * A transfer queue's or a buffer's handoff token is its requester's: the
 * same token from another process (of the same user) is refused, names
 * whose it is, and stays good for its own process.
 */
static void test_token_of_another_pid(void **state)
{
	struct fixture *f = *state;
	fpgad_client *c;
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenXferQueueRequest open = FPGAD__OPEN_XFER_QUEUE_REQUEST__INIT;
	Fpgad__RegisterBufferRequest body = FPGAD__REGISTER_BUFFER_REQUEST__INIT;
	Fpgad__Response *resp;
	int fds[2], link, mfd;

	assert_int_equal(fpgad_connect(f->p.url, &c), 0);
	req.body_case = FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE;
	req.open_xfer_queue = &open;
	assert_int_equal(conn_transact(c, &req, &resp), 0);
	assert_int_equal(claim_from_child(c, resp->open_xfer_queue->handoff_path,
					  &resp->open_xfer_queue->handoff_token, -1),
			 EACCES);
	assert_int_equal(handoff_exchange(c, resp->open_xfer_queue->handoff_path,
					  &resp->open_xfer_queue->handoff_token,
					  NULL, 0, fds, 2, &link), 0);
	fpgad__response__free_unpacked(resp, NULL);
	close(fds[0]);
	close(fds[1]);

	mfd = memfd(8192, F_SEAL_SHRINK, NULL);
	body.memory = "host";
	body.length = 8192;
	req.body_case = FPGAD__REQUEST__BODY_REGISTER_BUFFER;
	req.register_buffer = &body;
	assert_int_equal(conn_transact(c, &req, &resp), 0);
	assert_int_equal(claim_from_child(c, resp->register_buffer->handoff_path,
					  &resp->register_buffer->handoff_token, mfd),
			 EACCES);
	assert_int_equal(handoff_exchange(c, resp->register_buffer->handoff_path,
					  &resp->register_buffer->handoff_token,
					  &mfd, 1, NULL, 0, NULL), 0);
	fpgad__response__free_unpacked(resp, NULL);
	close(mfd);
	close(link);
	fpgad_disconnect(c);
	good_round_trip(f, 4096, 9);
}

/* The remote (read-only) listener refuses the transfer plane. */
static void test_remote_refused(void **state)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenXferQueueRequest open = FPGAD__OPEN_XFER_QUEUE_REQUEST__INIT;
	struct fpgad_proc p;
	char conf[128], url[64];
	fpgad_client *c;
	fpgad_buffer *b;

	(void)state;
	snprintf(conf, sizeof(conf), "[exporter]\nargs = --remote tcp://127.0.0.1:0\n");
	harness_start_ok(&p, conf, NULL);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", harness_remote_port(&p));
	assert_int_equal(fpgad_connect(url, &c), 0);
	req.body_case = FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE;
	req.open_xfer_queue = &open;
	assert_int_equal(request(c, &req), -EACCES);
	SAYS(c, "OpenXferQueue is not allowed on the remote (read-only) listener");
	assert_int_equal(reg(c, "host", 4096, "", 0, ""), -EACCES);
	SAYS(c, "RegisterBuffer is not allowed");
	assert_int_equal(fpgad_buffer_alloc_host(c, 4096, &b), -EACCES);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_out_of_range),
		T(test_garbage),
		T(test_foreign_ids),
		T(test_positions),
		T(test_flood),
		T(test_bad_memory),
		T(test_bad_requests),
		T(test_bad_handoffs),
		T(test_token_of_another_pid),
#undef T
		cmocka_unit_test(test_remote_refused),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("integration-xfer-hostile", tests,
					   NULL, NULL);
}
