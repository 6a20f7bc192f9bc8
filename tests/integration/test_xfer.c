// SPDX-License-Identifier: MIT
/*
 * test_xfer.c - card memory transfers end to end: real fpgad processes on
 * the simulated card, clients registering host memory and reading and
 * writing card addresses through libfpgad.  First the vendor's functional
 * suite case by case (status, register, read, write, unregister,
 * byte-exact, a batch of 10 reads, 7 points over the whole card memory, 6
 * stress offsets, 6 boundaries), then what an unprivileged service owes
 * beyond it: limits, modes, a split transfer that fails in the middle, a
 * client dying with transfers in flight, two clients at once, reconnects.
 * The hostile queue cases are in test_xfer_hostile.c.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fpgad.h"
#include "fpgad_xfer.h"
#include "harness.h"

#define CARD (2ull << 30)	/* the sim's default card memory */
#define ALIGN 64u		/* the sim's transfer alignment */
#define WAIT 10000

struct fixture {
	struct fpgad_proc p;
	fpgad_client *c;
};

/* fpgad with @config and the sim's @faults (FPGAD_SIM_FAULTS, or NULL). */
static void start_faults(struct fixture *f, const char *config, const char *faults)
{
	char env[128];

	if (faults)
		snprintf(env, sizeof(env), "FPGAD_SIM_FAULTS=%s", faults);
	harness_start_ok(&f->p, config, faults ? env : NULL);
	assert_int_equal(fpgad_connect(f->p.url, &f->c), 0);
}

static void start(struct fixture *f, const char *config)
{
	start_faults(f, config, NULL);
}

static void stop(struct fixture *f)
{
	fpgad_disconnect(f->c);
	f->c = NULL;
	harness_stop_ok(&f->p);
}

static void fill(void *buf, uint64_t n, uint64_t seed)
{
	unsigned char *p = buf;
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 7;

	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

static fpgad_buffer *host_buffer(fpgad_client *c, uint64_t len)
{
	fpgad_buffer *b = NULL;
	int r = fpgad_buffer_alloc_host(c, len, &b);

	if (r)
		fail_msg("fpgad_buffer_alloc_host(%llu): %s (%s)",
			 (unsigned long long)len, strerror(-r), fpgad_errmsg(c));
	return b;
}

static struct fpgad_status *status(fpgad_client *c)
{
	struct fpgad_status *s;

	assert_int_equal(fpgad_status_get(c, &s), 0);
	return s;
}

/* Write @len bytes of pattern @seed at @addr, read them back, compare. */
static void round_trip(fpgad_buffer *w, fpgad_buffer *r, uint64_t addr,
		       uint64_t len, uint64_t seed)
{
	int e;

	fill(fpgad_buffer_data(w), len, seed);
	memset(fpgad_buffer_data(r), 0, len);
	e = fpgad_write(w, 0, addr, len, WAIT);
	if (e)
		fail_msg("write at 0x%llx: %s", (unsigned long long)addr,
			 strerror(-e));
	e = fpgad_read(r, 0, addr, len, WAIT);
	if (e)
		fail_msg("read at 0x%llx: %s", (unsigned long long)addr,
			 strerror(-e));
	assert_memory_equal(fpgad_buffer_data(r), fpgad_buffer_data(w), len);
}

/* --- the vendor's suite -------------------------------------------------- */

/* 1. status: card memory, the transfer engines, nothing registered. */
static void test_status(void **state)
{
	struct fpgad_status *s;
	struct fpgad_xfer_rules rules;
	struct fixture f;
	char cmd[512], out[8192];
	json_error_t jerr;
	json_t *j;

	(void)state;
	start(&f, NULL);
	s = status(f.c);
	assert_true(s->card_memory == CARD);
	assert_string_equal(s->transfer_engines, "c2h 1, h2c 1");
	assert_int_equal(s->transfer_buffers, 0);
	assert_int_equal(s->transfer_registered, 0);
	fpgad_status_free(s);
	assert_int_equal(fpgad_xfer_rules(f.c, &rules), 0);
	assert_true(rules.card_memory == CARD);
	assert_int_equal(rules.host_align, ALIGN);
	assert_int_equal(rules.gpu_align, 4096);
	assert_true(rules.part_size == 4u << 20);
	assert_true(rules.max_length == 1u << 30);
	snprintf(cmd, sizeof(cmd), "%s --url %s --json status",
		 harness_bin("fpgactl"), f.p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	j = json_loads(out, 0, &jerr);
	assert_non_null(j);
	assert_true(json_integer_value(json_object_get(j, "card_memory")) ==
		    (json_int_t)CARD);
	assert_string_equal(json_string_value(json_object_get(j,
				"transfer_engines")), "c2h 1, h2c 1");
	json_decref(j);
	snprintf(cmd, sizeof(cmd), "%s --url %s status", harness_bin("fpgactl"),
		 f.p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "card memory: 2048 MiB"));
	assert_non_null(strstr(out, "transfer engines: c2h 1, h2c 1"));
	stop(&f);
}

/* 2. register (pin): the buffer counts in status, in host mode. */
static void test_register(void **state)
{
	struct fpgad_buffer_info info;
	struct fpgad_client_list *l;
	struct fpgad_status *s;
	struct fixture f;
	fpgad_buffer *b;

	(void)state;
	start(&f, NULL);
	b = host_buffer(f.c, 1u << 20);
	assert_non_null(fpgad_buffer_data(b));
	fpgad_buffer_get_info(b, &info);
	assert_int_equal(info.memory, FPGAD_MEMORY_HOST);
	assert_int_equal(info.mode, FPGAD_MODE_HOST);
	assert_string_equal(info.mode_reason, "host memory");
	assert_true(info.length == 1u << 20);
	assert_true(info.id != 0);
	s = status(f.c);
	assert_int_equal(s->transfer_buffers, 1);
	assert_true(s->transfer_registered == 1u << 20);
	assert_int_equal(s->transfer_queues, 1);
	fpgad_status_free(s);
	assert_int_equal(fpgad_clients_get(f.c, &l), 0);
	assert_int_equal(l->n_clients, 1);
	assert_int_equal(l->clients[0].buffers, 1);
	assert_true(l->clients[0].registered == 1u << 20);
	fpgad_clients_free(l);
	/* Odd lengths round up to whole pages. */
	fpgad_buffer_get_info(host_buffer(f.c, 100), &info);
	assert_true(info.length == (uint64_t)sysconf(_SC_PAGESIZE));
	stop(&f);
}

/* 3. read: card memory never written reads as zeros. */
static void test_read(void **state)
{
	struct fixture f;
	fpgad_buffer *b;
	unsigned char *p;

	(void)state;
	start(&f, NULL);
	b = host_buffer(f.c, 65536);
	p = fpgad_buffer_data(b);
	memset(p, 0xa5, 65536);
	assert_int_equal(fpgad_read(b, 0, 1u << 20, 65536, WAIT), 0);
	for (unsigned i = 0; i < 65536; i++)
		assert_int_equal(p[i], 0);
	assert_string_equal(fpgad_errmsg(f.c), "");
	stop(&f);
}

/* 4. write: accepted, counted; what is written is what a read returns. */
static void test_write(void **state)
{
	struct fpgad_status *s;
	struct fixture f;
	fpgad_buffer *w, *r;

	(void)state;
	start(&f, NULL);
	w = host_buffer(f.c, 65536);
	r = host_buffer(f.c, 65536);
	fill(fpgad_buffer_data(w), 65536, 4);
	assert_int_equal(fpgad_write(w, 0, 0x100000, 65536, WAIT), 0);
	assert_int_equal(fpgad_read(r, 0, 0x100000, 65536, WAIT), 0);
	assert_memory_equal(fpgad_buffer_data(r), fpgad_buffer_data(w), 65536);
	s = status(f.c);
	assert_true(s->transfers == 2);
	assert_true(s->transfer_bytes == 2 * 65536);
	assert_true(s->transfer_errors == 0);
	fpgad_status_free(s);
	stop(&f);
}

/* 5. unregister (unpin): fpgad lets go, and the data stays on the card. */
static void test_unregister(void **state)
{
	struct fpgad_status *s;
	struct fixture f;
	fpgad_buffer *w, *r;

	(void)state;
	start(&f, NULL);
	w = host_buffer(f.c, 8192);
	fill(fpgad_buffer_data(w), 8192, 5);
	assert_int_equal(fpgad_write(w, 0, 0, 8192, WAIT), 0);
	r = host_buffer(f.c, 8192);
	assert_int_equal(fpgad_read(r, 0, 0, 8192, WAIT), 0);
	assert_memory_equal(fpgad_buffer_data(r), fpgad_buffer_data(w), 8192);
	assert_int_equal(fpgad_buffer_unregister(w), 0);
	assert_int_equal(fpgad_buffer_unregister(NULL), 0);
	s = status(f.c);
	assert_int_equal(s->transfer_buffers, 1);
	assert_true(s->transfer_registered == 8192);
	fpgad_status_free(s);
	{
		unsigned char expect[8192];

		fill(expect, sizeof(expect), 5);
		memset(fpgad_buffer_data(r), 0, 8192);
		assert_int_equal(fpgad_read(r, 0, 0, 8192, WAIT), 0);
		assert_memory_equal(fpgad_buffer_data(r), expect, 8192);
	}
	assert_int_equal(fpgad_buffer_unregister(r), 0);
	s = status(f.c);
	assert_int_equal(s->transfer_buffers, 0);
	assert_int_equal(s->transfer_registered, 0);
	fpgad_status_free(s);
	stop(&f);
}

/* 6. byte-exact: 12 MiB (three parts) there and back, bit for bit. */
static void test_byte_exact(void **state)
{
	const uint64_t len = 12u << 20;
	struct fixture f;
	fpgad_buffer *w, *r;

	(void)state;
	start(&f, NULL);
	w = host_buffer(f.c, len);
	r = host_buffer(f.c, len);
	round_trip(w, r, 0x40000000, len, 6);
	/* Pieces of the buffer at offsets, to other addresses. */
	memset(fpgad_buffer_data(r), 0, len);
	assert_int_equal(fpgad_write(w, 4096, 0x200000, 1u << 20, WAIT), 0);
	assert_int_equal(fpgad_read(r, 8192, 0x200000, 1u << 20, WAIT), 0);
	assert_memory_equal((char *)fpgad_buffer_data(r) + 8192,
			    (char *)fpgad_buffer_data(w) + 4096, 1u << 20);
	stop(&f);
}

/* 7. a batch of 10 reads: one call, one result each, byte-exact. */
static void test_batch_10_reads(void **state)
{
	const uint64_t len = 256u << 10;
	struct fpgad_xfer x[10];
	struct fixture f;
	fpgad_buffer *w, *r;

	(void)state;
	start(&f, NULL);
	w = host_buffer(f.c, 10 * len);
	r = host_buffer(f.c, 10 * len);
	fill(fpgad_buffer_data(w), 10 * len, 7);
	assert_int_equal(fpgad_write(w, 0, 0x10000000, 10 * len, WAIT), 0);
	memset(x, 0, sizeof(x));
	for (unsigned i = 0; i < 10; i++) {
		/* In reverse order, to other places of the buffer. */
		x[i].op = FPGAD_XFER_READ;
		x[i].buf = r;
		x[i].buf_offset = (9 - i) * len;
		x[i].card_addr = 0x10000000 + i * len;
		x[i].length = len;
	}
	assert_int_equal(fpgad_xfer_batch(f.c, x, 10, WAIT), 0);
	for (unsigned i = 0; i < 10; i++) {
		assert_int_equal(x[i].status, 0);
		assert_true(x[i].done == len);
		assert_int_equal(x[i].mode, FPGAD_MODE_HOST);
		assert_true(x[i].t_end_ns >= x[i].t_start_ns);
		assert_memory_equal((char *)fpgad_buffer_data(r) + (9 - i) * len,
				    (char *)fpgad_buffer_data(w) + i * len, len);
	}
	assert_int_equal(fpgad_xfer_pending(f.c), 0);
	stop(&f);
}

/* 8. 7 points over the whole card memory, first and last page included. */
static void test_7_points(void **state)
{
	static const uint64_t at[7] = {
		0, 0x10000000, 0x2aaab000, 0x40000000, 0x55555000, 0x7fff0000,
		CARD - 4096,
	};
	struct fixture f;
	fpgad_buffer *w, *r;

	(void)state;
	start(&f, NULL);
	w = host_buffer(f.c, 4096);
	r = host_buffer(f.c, 4096);
	for (unsigned i = 0; i < 7; i++)
		round_trip(w, r, at[i], 4096, 100 + i);
	/* Each point still holds its own bytes. */
	for (unsigned i = 0; i < 7; i++) {
		fill(fpgad_buffer_data(w), 4096, 100 + i);
		assert_int_equal(fpgad_read(r, 0, at[i], 4096, WAIT), 0);
		assert_memory_equal(fpgad_buffer_data(r), fpgad_buffer_data(w),
				    4096);
	}
	stop(&f);
}

/*
 * 9. 6 stress offsets, many transfers each, pipelined (the asynchronous
 * form): writes of varied lengths, then reads, every byte checked.
 */
static void test_6_stress_offsets(void **state)
{
	static const uint64_t at[6] = {
		0x0, 0x40, 0x1000, 0x123440, 0x3fffff00, CARD - (1u << 20),
	};
	enum { N = 48, MAXLEN = 16384 };
	static struct fpgad_xfer x[N];
	struct fixture f;
	fpgad_buffer *w, *r;
	unsigned char *pw, *pr;

	(void)state;
	start(&f, NULL);
	w = host_buffer(f.c, N * MAXLEN);
	r = host_buffer(f.c, N * MAXLEN);
	pw = fpgad_buffer_data(w);
	pr = fpgad_buffer_data(r);
	for (unsigned o = 0; o < 6; o++) {
		unsigned done = 0;

		fill(pw, N * MAXLEN, 200 + o);
		memset(pr, 0, N * MAXLEN);
		memset(x, 0, sizeof(x));
		for (unsigned i = 0; i < N; i++) {
			/* Back to back from the offset, lengths 64 to 16 KiB. */
			uint64_t len = (uint64_t)ALIGN * (1 + (i * 37) % 256);

			x[i].op = FPGAD_XFER_WRITE;
			x[i].buf = w;
			x[i].buf_offset = (uint64_t)i * MAXLEN;
			x[i].card_addr = at[o] + (uint64_t)i * MAXLEN;
			x[i].length = len;
		}
		assert_int_equal(fpgad_xfer_submit(f.c, x, N), N);
		while (done < N) {
			struct fpgad_xfer *out[N];
			int n = fpgad_xfer_reap(f.c, out, N, WAIT);

			assert_true(n > 0);
			for (int k = 0; k < n; k++)
				assert_int_equal(out[k]->status, 0);
			done += (unsigned)n;
		}
		for (unsigned i = 0; i < N; i++)
			x[i].op = FPGAD_XFER_READ, x[i].buf = r;
		assert_int_equal(fpgad_xfer_batch(f.c, x, N, WAIT), 0);
		for (unsigned i = 0; i < N; i++)
			assert_memory_equal(pr + (uint64_t)i * MAXLEN,
					    pw + (uint64_t)i * MAXLEN, x[i].length);
	}
	stop(&f);
}

/* One transfer that must be refused by @rule, with @what in the message. */
static void refused(fpgad_client *c, fpgad_buffer *b, unsigned op,
		    uint64_t off, uint64_t addr, uint64_t len, uint32_t rule,
		    const char *what)
{
	struct fpgad_xfer x = {
		.op = op, .buf = b, .buf_offset = off, .card_addr = addr,
		.length = len,
	};
	char msg[256];

	assert_int_equal(fpgad_xfer_batch(c, &x, 1, WAIT), -EINVAL);
	fpgad_xfer_strerror(&x, msg, sizeof(msg));
	if (x.rule != rule || !strstr(msg, what))
		fail_msg("rule %u (want %u): '%s' (want '%s')", x.rule, rule,
			 msg, what);
	assert_true(x.done == 0);
}

/*
 * 10. 6 boundaries: the last bytes of card memory are served; crossing
 * the end, zero length, an unaligned address, an unaligned length and a
 * buffer overrun are each refused with the rule named.
 */
static void test_6_boundaries(void **state)
{
	struct fpgad_status *s;
	struct fixture f;
	fpgad_buffer *b;

	(void)state;
	start(&f, NULL);
	b = host_buffer(f.c, 65536);
	/* The last byte: a transfer that ends exactly there. */
	fill(fpgad_buffer_data(b), ALIGN, 10);
	assert_int_equal(fpgad_write(b, 0, CARD - ALIGN, ALIGN, WAIT), 0);
	assert_int_equal(fpgad_read(b, ALIGN, CARD - ALIGN, ALIGN, WAIT), 0);
	assert_memory_equal((char *)fpgad_buffer_data(b) + ALIGN,
			    fpgad_buffer_data(b), ALIGN);
	assert_string_equal(fpgad_errmsg(f.c), "");

	refused(f.c, b, FPGAD_XFER_READ, 0, CARD - 4096, 8192,
		FPGAD_XFER_RULE_CARD_RANGE,
		"card range: card address 0x7ffff000 + 8192 bytes ends past "
		"card memory (2147483648 bytes)");
	refused(f.c, b, FPGAD_XFER_READ, 0, CARD, ALIGN, FPGAD_XFER_RULE_CARD_RANGE,
		"card range");
	refused(f.c, b, FPGAD_XFER_WRITE, 0, 0, 0, FPGAD_XFER_RULE_ZERO_LENGTH,
		"zero length");
	refused(f.c, b, FPGAD_XFER_READ, 0, 100, ALIGN, FPGAD_XFER_RULE_CARD_ALIGN,
		"card address alignment: card address 0x64 is not a multiple "
		"of 64");
	refused(f.c, b, FPGAD_XFER_READ, 0, 0, 100, FPGAD_XFER_RULE_LEN_ALIGN,
		"length alignment: length 100 is not a multiple of 64");
	refused(f.c, b, FPGAD_XFER_READ, 32, 0, ALIGN, FPGAD_XFER_RULE_BUF_ALIGN,
		"buffer offset alignment");
	refused(f.c, b, FPGAD_XFER_WRITE, 65536 - 4096, 0, 8192,
		FPGAD_XFER_RULE_BUF_RANGE,
		"buffer range: buffer offset 61440 + 8192 bytes ends past the "
		"buffer (65536 bytes)");
	/* The synchronous call says the same through fpgad_errmsg(). */
	assert_int_equal(fpgad_read(b, 0, 0, 100, WAIT), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(f.c), "length alignment"));
	s = status(f.c);
	assert_true(s->transfer_refused == 8);
	assert_true(s->transfer_errors == 0);
	fpgad_status_free(s);
	stop(&f);
}

/* --- beyond the vendor's suite --------------------------------------------- */

/* The longest transfer and the per-connection limits, refused by name. */
static void test_limits(void **state)
{
	fpgad_buffer *a, *b, *c2;
	struct fixture f;
	int r;

	(void)state;
	start(&f, "[transfer]\nmax_buffers = 2\nmax_registered = 1M\n"
		  "max_length = 64K\n");
	a = host_buffer(f.c, 256u << 10);
	r = fpgad_buffer_alloc_host(f.c, 1u << 20, &b);
	assert_int_equal(r, -ENOSPC);
	assert_non_null(strstr(fpgad_errmsg(f.c), "max_registered 1048576"));
	b = host_buffer(f.c, 4096);
	r = fpgad_buffer_alloc_host(f.c, 4096, &c2);
	assert_int_equal(r, -ENOSPC);
	assert_non_null(strstr(fpgad_errmsg(f.c), "max_buffers 2"));
	assert_int_equal(fpgad_read(a, 0, 0, 128u << 10, WAIT), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(f.c), "maximum length: 131072 "
			       "bytes is more than the 65536"));
	/* A freed place is usable again. */
	assert_int_equal(fpgad_buffer_unregister(b), 0);
	b = host_buffer(f.c, 4096);
	assert_int_equal(fpgad_read(b, 0, 0, 4096, WAIT), 0);
	stop(&f);
}

/*
 * A buffer of another connection, in a batch: -ENOENT and the buffer rule,
 * as fpgad answers an id it does not know, and the buffer is untouched.
 */
static void test_foreign_buffer(void **state)
{
	struct fpgad_xfer x;
	struct fixture f;
	fpgad_client *other;
	fpgad_buffer *b;
	char msg[200];

	(void)state;
	start(&f, NULL);
	assert_int_equal(fpgad_connect(f.p.url, &other), 0);
	b = host_buffer(f.c, 4096);
	memset(fpgad_buffer_data(b), 0x5a, 4096);
	memset(&x, 0, sizeof(x));
	x.op = FPGAD_XFER_READ;
	x.buf = b;
	x.length = 4096;
	assert_int_equal(fpgad_xfer_batch(other, &x, 1, WAIT), -ENOENT);
	assert_int_equal(x.status, -ENOENT);
	assert_int_equal(x.rule, FPGAD_XFER_RULE_BUFFER);
	assert_non_null(strstr(fpgad_xfer_strerror(&x, msg, sizeof(msg)),
			       "is not a buffer registered on this connection"));
	for (unsigned i = 0; i < 4096; i++)
		assert_int_equal(((unsigned char *)fpgad_buffer_data(b))[i], 0x5a);
	fpgad_disconnect(other);
	stop(&f);
}

/*
 * A BARRIER entry starts after every entry ahead of it completed, and its
 * t_start_ns says so: not before the latest t_end_ns of those.
 */
static void test_barrier_start_time(void **state)
{
	const uint64_t len = 1u << 20;
	struct fpgad_xfer x[9];
	struct fixture f;
	fpgad_buffer *b;
	uint64_t last_end = 0;

	(void)state;
	start(&f, NULL);
	b = host_buffer(f.c, 9 * len);
	memset(x, 0, sizeof(x));
	for (unsigned i = 0; i < 9; i++) {
		x[i].op = FPGAD_XFER_READ;
		x[i].buf = b;
		x[i].buf_offset = i * len;
		x[i].card_addr = i * len;
		x[i].length = len;
	}
	x[8].flags = FPGAD_XFER_BARRIER;
	assert_int_equal(fpgad_xfer_batch(f.c, x, 9, WAIT), 0);
	for (unsigned i = 0; i < 8; i++)
		if (x[i].t_end_ns > last_end)
			last_end = x[i].t_end_ns;
	if (x[8].t_start_ns < last_end)
		fail_msg("the barrier started %llu ns before the last entry ahead of it ended",
			 (unsigned long long)(last_end - x[8].t_start_ns));
	stop(&f);
}

/* Many buffers on several connections: the card pins them all. */
static void test_many_buffers(void **state)
{
	struct fpgad_status *s;
	struct fixture f;
	fpgad_client *other;
	fpgad_buffer *b = NULL;

	(void)state;
	start(&f, NULL);
	assert_int_equal(fpgad_connect(f.p.url, &other), 0);
	for (unsigned i = 0; i < 64; i++) {
		host_buffer(f.c, 4096);
		b = host_buffer(other, 4096);
	}
	s = status(f.c);
	assert_int_equal(s->transfer_buffers, 128);
	fpgad_status_free(s);
	assert_int_equal(fpgad_write(b, 0, 0, 4096, WAIT), 0);
	fpgad_disconnect(other);
	stop(&f);
}

/* Modes: what host memory can have, and what cannot be registered. */
static void test_modes(void **state)
{
	struct fpgad_buffer_info info;
	struct fixture f;
	fpgad_buffer *b, *x;
	char *heap;

	(void)state;
	start(&f, NULL);
	b = host_buffer(f.c, 4096);
	assert_int_equal(fpgad_buffer_set_mode(b, FPGAD_MODE_GPUDIRECT), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(f.c), "mode gpudirect needs GPU memory"));
	assert_int_equal(fpgad_buffer_set_mode(b, FPGAD_MODE_BOUNCE), -EINVAL);
	assert_int_equal(fpgad_buffer_set_mode(b, FPGAD_MODE_AUTO), 0);
	fpgad_buffer_get_info(b, &info);
	assert_int_equal(info.mode, FPGAD_MODE_HOST);
	assert_int_equal(fpgad_buffer_set_mode(b, FPGAD_MODE_HOST), 0);
	/* Host memory fpgad cannot reach: refused, saying what would do. */
	heap = aligned_alloc(4096, 8192);
	assert_int_equal(fpgad_buffer_register(f.c, heap, 8192, 0, &x), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(f.c), "fpgad_buffer_alloc_host"));
	assert_int_equal(fpgad_buffer_register(f.c, heap, 8192, 1, &x), -EINVAL);
	free(heap);
	/* Its own view: no copies, the last writer recorded. */
	assert_int_equal(fpgad_read(b, 0, 0, 4096, WAIT), 0);
	assert_int_equal(fpgad_buffer_last_writer(b), FPGAD_WRITER_CARD);
	{
		void *v;

		assert_int_equal(fpgad_buffer_host(b, &v), 0);
		assert_ptr_equal(v, fpgad_buffer_data(b));
	}
	assert_true(fpgad_buffer_copies(b) == 0);
	stop(&f);
}

/*
 * A split transfer whose third part fails fails as a whole, naming the
 * card address of that part; the parts after it are not started.
 */
static void test_split_failure(void **state)
{
	struct fpgad_xfer x = { .op = FPGAD_XFER_WRITE, .card_addr = 0x100000,
				.length = 24u << 20 };
	struct fpgad_status *s;
	struct fixture f;
	char msg[256];

	(void)state;
	/* One engine per direction: its third transfer fails. */
	start_faults(&f, "", "error=3");
	x.buf = host_buffer(f.c, 24u << 20);
	assert_int_equal(fpgad_xfer_batch(f.c, &x, 1, WAIT), -EIO);
	assert_true(x.fail_addr == 0x100000 + (8u << 20));
	assert_true(x.done == 8u << 20);
	assert_int_equal(x.rule, FPGAD_XFER_RULE_NONE);
	fpgad_xfer_strerror(&x, msg, sizeof(msg));
	assert_non_null(strstr(msg, "at card address 0x900000 (after 8388608 "
			       "of 25165824 bytes)"));
	assert_non_null(strstr(fpgad_errmsg(f.c), "0x900000"));
	s = status(f.c);
	assert_true(s->transfer_errors == 1);
	fpgad_status_free(s);
	/* The next transfer is served as if nothing happened. */
	assert_int_equal(fpgad_write(x.buf, 0, 0, 4096, WAIT), 0);
	stop(&f);
}

/*
 * An engine that hangs (never completes) is reset by fpgad's watchdog:
 * the transfer on it fails as canceled, naming its address, and the
 * engine serves the next one.
 */
static void test_hung_engine(void **state)
{
	struct fixture f;
	fpgad_buffer *b;
	int r;

	(void)state;
	start_faults(&f, "[device]\ndma_timeout_ms = 50\n", "hang=2");
	b = host_buffer(f.c, 4096);
	assert_int_equal(fpgad_write(b, 0, 0x3000, 4096, WAIT), 0);
	r = fpgad_write(b, 0, 0x4000, 4096, WAIT);
	assert_int_equal(r, -ECANCELED);
	assert_non_null(strstr(fpgad_errmsg(f.c), "at card address 0x4000"));
	assert_int_equal(fpgad_write(b, 0, 0x5000, 4096, WAIT), 0);
	assert_true(harness_log_contains(&f.p, "h2c engine 0: no completion for"));
	stop(&f);
}

/* Descriptors of @pid, and how many of them are memfds. */
static unsigned fd_count(pid_t pid, unsigned *ret_memfds)
{
	char path[PATH_MAX], link[PATH_MAX];
	unsigned n = 0, m = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	assert_non_null(d);
	while ((de = readdir(d))) {
		ssize_t k;

		if (de->d_name[0] == '.')
			continue;
		n++;
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", (int)pid,
			 de->d_name);
		k = readlink(path, link, sizeof(link) - 1);
		if (k > 0) {
			link[k] = '\0';
			m += strncmp(link, "/memfd:", 7) == 0;
		}
	}
	closedir(d);
	*ret_memfds = m;
	return n;
}

static int run_helper(const char *url, const char *args, char *out, size_t len)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s %s %s 2>&1", harness_bin("itests/xfer_client"),
		 url, args);
	return harness_run(cmd, out, len);
}

/*
 * A client dies (SIGKILL) with transfers in flight and buffers held:
 * fpgad finishes what runs, lets go of every buffer (status, its
 * descriptors and memfds back where they were), and the next client is
 * served as if nothing happened.
 */
static void test_client_dies(void **state)
{
	unsigned fds0, memfds0, fds, memfds;
	struct fpgad_status *s;
	struct fixture f;
	fpgad_buffer *w, *r;
	char out[1024];
	uint64_t end;

	(void)state;
	/* A slow link: the dead client's transfers take a while. */
	start(&f, "[sim]\nlink = gen1x4\n");
	s = status(f.c);
	fpgad_status_free(s);
	fds0 = fd_count(f.p.pid, &memfds0);
	/* The shell says 128 + SIGKILL. */
	assert_int_equal(run_helper(f.p.url, "die 64", out, sizeof(out)), 128 + SIGKILL);
	assert_non_null(strstr(out, "running 64"));
	for (end = harness_now_ms() + 10000;; usleep(20000)) {
		s = status(f.c);
		if (!s->transfer_buffers && !s->transfer_queues &&
		    !s->transfer_registered && s->clients == 1)
			break;
		fpgad_status_free(s);
		if (harness_now_ms() > end)
			fail_msg("the dead client's buffers are still registered");
	}
	assert_true(s->transfers > 0);
	fpgad_status_free(s);
	fds = fd_count(f.p.pid, &memfds);
	assert_int_equal(fds, fds0);
	assert_int_equal(memfds, memfds0);
	/* The next client is unaffected. */
	w = host_buffer(f.c, 1u << 20);
	r = host_buffer(f.c, 1u << 20);
	round_trip(w, r, 0, 1u << 20, 11);
	stop(&f);
}

/* Two clients write different card addresses at once, each reads back its own. */
static void test_two_clients(void **state)
{
	char cmd[2][512];
	struct fixture f;
	FILE *p[2];
	int rc[2];

	(void)state;
	start(&f, NULL);
	for (unsigned i = 0; i < 2; i++) {
		snprintf(cmd[i], sizeof(cmd[i]), "%s %s own %llu %u 200 %u 2>&1",
			 harness_bin("itests/xfer_client"), f.p.url,
			 (unsigned long long)(i ? 0x40000000 : 0x1000), 256u << 10,
			 i + 1);
		p[i] = popen(cmd[i], "r");
		assert_non_null(p[i]);
	}
	for (unsigned i = 0; i < 2; i++) {
		char out[512] = "";
		size_t n = fread(out, 1, sizeof(out) - 1, p[i]);

		out[n] = '\0';
		rc[i] = pclose(p[i]);
		if (!WIFEXITED(rc[i]) || WEXITSTATUS(rc[i]))
			fail_msg("client %u: %s", i, out);
		assert_non_null(strstr(out, "ok 200 rounds"));
	}
	stop(&f);
}

/* The asynchronous form: submit now, reap later, with a barrier. */
static void test_async(void **state)
{
	enum { N = 200 };
	static struct fpgad_xfer x[N + 1];
	struct fpgad_xfer *out[N + 1];
	struct fixture f;
	fpgad_buffer *b;
	unsigned queued = 0, reaped = 0;

	(void)state;
	start(&f, "[transfer]\nqueue_entries = 64\n");
	b = host_buffer(f.c, 4096);
	assert_int_equal(fpgad_xfer_reap(f.c, out, 1, 0), -ETIMEDOUT);
	for (unsigned i = 0; i < N; i++) {
		x[i].op = FPGAD_XFER_WRITE;
		x[i].buf = b;
		x[i].card_addr = (uint64_t)i * 4096;
		x[i].length = 4096;
		x[i].user = &x[i];
	}
	/* More than the queue holds: submit what fits, reap, go on. */
	while (reaped < N) {
		if (queued < N) {
			int n = fpgad_xfer_submit(f.c, x + queued, N - queued);

			assert_true(n > 0 || n == -EAGAIN);
			if (n > 0)
				queued += (unsigned)n;
		}
		int n = fpgad_xfer_reap(f.c, out, N, WAIT);

		assert_true(n > 0);
		for (int k = 0; k < n; k++) {
			assert_int_equal(out[k]->status, 0);
			assert_ptr_equal(out[k]->user, out[k]);
		}
		reaped += (unsigned)n;
	}
	assert_int_equal(fpgad_xfer_pending(f.c), 0);
	/* A barrier runs after what came before it: a read of the last write. */
	x[N].op = FPGAD_XFER_READ;
	x[N].flags = FPGAD_XFER_BARRIER;
	x[N].buf = b;
	x[N].card_addr = 0;
	x[N].length = 4096;
	assert_int_equal(fpgad_xfer_batch(f.c, &x[N], 1, WAIT), 0);
	stop(&f);
}

/*
 * fpgad restarts: without reconnect, transfers fail with -EPIPE; with it,
 * the queue and the buffers come back (-ESTALE once) and work.
 */
static void test_fpgad_restarts(void **state)
{
	struct fixture f;
	fpgad_buffer *b;
	int r;

	(void)state;
	start(&f, NULL);
	b = host_buffer(f.c, 4096);
	assert_int_equal(fpgad_write(b, 0, 0, 4096, WAIT), 0);
	assert_int_equal(harness_restart(&f.p, SIGKILL), 0);
	r = fpgad_read(b, 0, 0, 4096, WAIT);
	assert_int_equal(r, -EPIPE);
	assert_int_equal(fpgad_read(b, 0, 0, 4096, WAIT), -EPIPE);
	fpgad_disconnect(f.c);

	assert_int_equal(fpgad_connect(f.p.url, &f.c), 0);
	fpgad_set_reconnect(f.c, true);
	b = host_buffer(f.c, 4096);
	fill(fpgad_buffer_data(b), 4096, 12);
	assert_int_equal(fpgad_write(b, 0, 0, 4096, WAIT), 0);
	assert_int_equal(harness_restart(&f.p, SIGTERM), 0);
	r = fpgad_read(b, 0, 0, 4096, WAIT);
	assert_int_equal(r, -ESTALE);
	assert_non_null(strstr(fpgad_errmsg(f.c), "registered again"));
	/* A fresh card: the buffer works again. */
	assert_int_equal(fpgad_write(b, 0, 0x1000, 4096, WAIT), 0);
	assert_int_equal(fpgad_read(b, 0, 0x1000, 4096, WAIT), 0);
	stop(&f);
}

/* Every c2h engine drives a channel: reads are refused by name, writes run. */
static void test_no_free_engine(void **state)
{
	char conf[4096] = "";
	struct fpgad_status *s;
	struct fixture f;
	fpgad_buffer *b;

	(void)state;
	harness_conf_channels(conf, sizeof(conf), 16);
	start(&f, conf);
	s = status(f.c);
	assert_string_equal(s->transfer_engines, "c2h 0, h2c 1");
	fpgad_status_free(s);
	assert_true(harness_log_contains(&f.p, "only 0 c2h engines are free"));
	b = host_buffer(f.c, 4096);
	assert_int_equal(fpgad_write(b, 0, 0, 4096, WAIT), 0);
	assert_int_equal(fpgad_read(b, 0, 0, 4096, WAIT), -EOPNOTSUPP);
	assert_non_null(strstr(fpgad_errmsg(f.c), "no engine of the card serves "
			       "reads (c2h)"));
	stop(&f);
}

/* Transfers off: every request says why. */
static void test_transfers_off(void **state)
{
	struct fpgad_status *s;
	struct fixture f;
	fpgad_buffer *b;

	(void)state;
	start(&f, "[transfer]\nengines = 0\n");
	s = status(f.c);
	assert_string_equal(s->transfer_engines, "none ([transfer] engines = 0)");
	fpgad_status_free(s);
	assert_int_equal(fpgad_buffer_alloc_host(f.c, 4096, &b), -ENODEV);
	assert_non_null(strstr(fpgad_errmsg(f.c), "transfers are off: [transfer] engines = 0"));
	stop(&f);
}

/*
 * How many of fpgad's transfer threads (the transfer thread, the sim's
 * memory engines) are not asleep (state S) now; -1 when none is found.
 */
static int xfer_threads_awake(pid_t pid)
{
	char path[300], line[256];
	struct dirent *d;
	int found = 0, awake = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	assert_non_null(dir);
	while ((d = readdir(dir))) {
		char *end;
		FILE *fp;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid,
			 d->d_name);
		fp = fopen(path, "r");
		if (!fp)
			continue;
		if (!fgets(line, sizeof(line), fp))
			line[0] = '\0';
		fclose(fp);
		/* "TID (comm) S ...": comm may hold anything but ") ". */
		end = strrchr(line, ')');
		if (!end || !end[1] || (!strstr(line, "(fpgad-xfer)") &&
					!strstr(line, "(sim-mc2h") &&
					!strstr(line, "(sim-mh2c")))
			continue;
		found++;
		awake += end[2] != 'S';
	}
	closedir(dir);
	return found ? awake : -1;
}

/*
 * Back-to-back transfers make fpgad's threads spin for the next one
 * (spin.h); once the client stops, the spin ends and they sleep, and a
 * transfer then still wakes them.
 */
static void test_spin_ends_and_sleepers_wake(void **state)
{
	unsigned char want[4096];
	struct fixture f;
	fpgad_buffer *b;
	int awake = -1;

	(void)state;
	start(&f, NULL);
	b = host_buffer(f.c, 4096);
	for (unsigned i = 0; i < 500; i++) {
		assert_int_equal(fpgad_write(b, 0, 4096ull * (i % 8), 4096, WAIT), 0);
		assert_int_equal(fpgad_read(b, 0, 4096ull * (i % 8), 4096, WAIT), 0);
	}
	/* The spin is 50 us at most: idle, every one of them sleeps. */
	for (unsigned i = 0; i < 1000 && awake != 0; i++) {
		awake = xfer_threads_awake(f.p.pid);
		if (awake)
			usleep(10000);
	}
	assert_int_equal(awake, 0);
	fill(fpgad_buffer_data(b), 4096, 7);
	assert_int_equal(fpgad_write(b, 0, 0, 4096, WAIT), 0);
	memset(fpgad_buffer_data(b), 0, 4096);
	assert_int_equal(fpgad_read(b, 0, 0, 4096, WAIT), 0);
	fill(want, 4096, 7);
	assert_memory_equal(fpgad_buffer_data(b), want, 4096);
	stop(&f);
}

static int fpgactl(const struct fixture *f, const char *args, char *out,
		   size_t len)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s --url %s %s", harness_bin("fpgactl"),
		 f->p.url, args);
	return harness_run(cmd, out, len);
}

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");

	assert_non_null(fp);
	assert_int_equal(fwrite(buf, 1, len, fp), len);
	fclose(fp);
}

/*
 * fpgactl write and read: files and stdin/stdout, K/M suffixes, --json,
 * lengths that are not whole units, and refusals by name.
 */
static void test_fpgactl(void **state)
{
	enum { LEN = 300000 };
	static unsigned char in[LEN], back[LEN];
	char dir[] = "/tmp/fpgad-xfer.XXXXXX", args[512], out[65536];
	struct fixture f;
	json_error_t jerr;
	json_t *j;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	start(&f, NULL);
	fill(in, LEN, 13);
	snprintf(args, sizeof(args), "%s/in", dir);
	write_file(args, in, LEN);

	snprintf(args, sizeof(args), "--json write 1M %s/in", dir);
	assert_int_equal(fpgactl(&f, args, out, sizeof(out)), 0);
	j = json_loads(out, 0, &jerr);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "op")), "write");
	assert_int_equal(json_integer_value(json_object_get(j, "card_addr")),
			 1 << 20);
	assert_int_equal(json_integer_value(json_object_get(j, "length")), LEN);
	assert_true(json_is_real(json_object_get(j, "gbps")));
	json_decref(j);
	snprintf(args, sizeof(args), "read 0x100000 %d %s/out", LEN, dir);
	assert_int_equal(fpgactl(&f, args, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "read 300000 bytes at card address 0x100000"));
	snprintf(args, sizeof(args), "%s/out", dir);
	fp = fopen(args, "rb");
	assert_non_null(fp);
	assert_int_equal(fread(back, 1, LEN, fp), LEN);
	fclose(fp);
	assert_memory_equal(back, in, LEN);

	/* stdin and stdout; the data alone on stdout. */
	snprintf(args, sizeof(args), "write 2M - < %s/in", dir);
	assert_int_equal(fpgactl(&f, args, out, sizeof(out)), 0);
	snprintf(args, sizeof(args), "--json read 2M 1000 - 2>/dev/null");
	assert_int_equal(fpgactl(&f, args, out, sizeof(out)), 0);
	assert_memory_equal(out, in, 1000);

	/* A partial last unit keeps the card's bytes after the file's. */
	snprintf(args, sizeof(args), "%s/small", dir);
	write_file(args, in + 5000, 100);
	snprintf(args, sizeof(args), "write 1M %s/small", dir);
	assert_int_equal(fpgactl(&f, args, out, sizeof(out)), 0);
	snprintf(args, sizeof(args), "read 1M 128 - 2>/dev/null");
	assert_int_equal(fpgactl(&f, args, out, sizeof(out)), 0);
	assert_memory_equal(out, in + 5000, 100);
	assert_memory_equal(out + 100, in + 100, 28);

	/* Refusals: by name, exit 1; usage errors exit 2. */
	assert_int_equal(fpgactl(&f, "read 100 64 - 2>&1", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "card address alignment: card address 0x64 "
			       "is not a multiple of 64"));
	assert_int_equal(fpgactl(&f, "read 2G 64 - 2>&1", out, sizeof(out)), 1);
	assert_non_null(strstr(out, "card range"));
	assert_int_equal(fpgactl(&f, "read 1x 64 - 2>&1", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "ADDR: '1x' is not a number"));
	assert_int_equal(fpgactl(&f, "read 0 64 2>&1", out, sizeof(out)), 2);
	assert_non_null(strstr(out, "read needs ADDR LEN FILE"));
	assert_int_equal(fpgactl(&f, "write 0 /nonexistent/x 2>&1", out,
				 sizeof(out)), 1);
	assert_non_null(strstr(out, "/nonexistent/x: No such file"));

	/* On a terminal, above 64 MiB: a progress bar (script(1) makes one). */
	if (system("command -v script >/dev/null 2>&1") == 0) {
		snprintf(args, sizeof(args), "script -qfec '%s --url %s read 0 65M "
			 "/dev/null' /dev/null", harness_bin("fpgactl"), f.p.url);
		assert_int_equal(harness_run(args, out, sizeof(out)), 0);
		assert_non_null(strstr(out, "[########################################] 100%"));
		assert_non_null(strstr(out, "65.0 MiB"));
		/* Not on a pipe. */
		assert_int_equal(fpgactl(&f, "read 0 65M /dev/null 2>&1", out,
					 sizeof(out)), 0);
		assert_null(strstr(out, "100%"));
	} else {
		print_message("progress bar not checked: no script(1)\n");
	}
	stop(&f);
	snprintf(args, sizeof(args), "rm -rf %s", dir);
	assert_int_equal(system(args), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status),
		cmocka_unit_test(test_register),
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_unregister),
		cmocka_unit_test(test_byte_exact),
		cmocka_unit_test(test_batch_10_reads),
		cmocka_unit_test(test_7_points),
		cmocka_unit_test(test_6_stress_offsets),
		cmocka_unit_test(test_6_boundaries),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_many_buffers),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_split_failure),
		cmocka_unit_test(test_hung_engine),
		cmocka_unit_test(test_client_dies),
		cmocka_unit_test(test_two_clients),
		cmocka_unit_test(test_async),
		cmocka_unit_test(test_foreign_buffer),
		cmocka_unit_test(test_barrier_start_time),
		cmocka_unit_test(test_fpgad_restarts),
		cmocka_unit_test(test_transfers_off),
		cmocka_unit_test(test_spin_ends_and_sleepers_wake),
		cmocka_unit_test(test_no_free_engine),
		cmocka_unit_test(test_fpgactl),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("integration-xfer", tests, NULL, NULL);
}
