// SPDX-License-Identifier: MIT
/*
 * xfer_client - a client process of card memory transfers for the
 * integration tests (a test cannot fork itself: nng's threads would not
 * follow).
 *
 *   xfer_client URL die MIB
 *	register host buffers (MIB MiB in all), queue reads and writes that
 *	take a while, print "running" and die (SIGKILL) with them in flight
 *   xfer_client URL own BASE LEN ROUNDS SEED
 *	write a pattern of its own to [BASE, BASE + LEN) of card memory, read
 *	it back and compare, ROUNDS times, the pattern changing each round
 *
 * Exit status: 0 all good, 1 a mismatch, 2 an error (printed on stderr).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fpgad.h"

#define DIE_XFERS 64

static int fail(fpgad_client *c, const char *what, int r)
{
	fprintf(stderr, "xfer_client: %s: %s (%s)\n", what, strerror(-r),
		c ? fpgad_errmsg(c) : "");
	return 2;
}

static void fill(unsigned char *p, uint64_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;

	for (uint64_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

static int die(fpgad_client *c, uint64_t mib)
{
	static struct fpgad_xfer x[DIE_XFERS];
	fpgad_buffer *b[4];
	uint64_t each = (mib << 20) / 4;
	int r;

	for (unsigned i = 0; i < 4; i++) {
		r = fpgad_buffer_alloc_host(c, each, &b[i]);
		if (r)
			return fail(c, "alloc", r);
	}
	for (unsigned i = 0; i < DIE_XFERS; i++) {
		x[i].op = i % 2 ? FPGAD_XFER_READ : FPGAD_XFER_WRITE;
		x[i].buf = b[i % 4];
		x[i].length = each;
		x[i].card_addr = (uint64_t)(i % 4) * each;
	}
	r = fpgad_xfer_submit(c, x, DIE_XFERS);
	if (r < 0)
		return fail(c, "submit", r);
	printf("running %d\n", r);
	fflush(stdout);
	raise(SIGKILL);
	return 2;
}

static int own(fpgad_client *c, uint64_t base, uint64_t len, unsigned rounds,
	       uint64_t seed)
{
	fpgad_buffer *w, *rd;
	unsigned char *pw, *pr;
	int r;

	r = fpgad_buffer_alloc_host(c, len, &w);
	if (!r)
		r = fpgad_buffer_alloc_host(c, len, &rd);
	if (r)
		return fail(c, "alloc", r);
	pw = fpgad_buffer_data(w);
	pr = fpgad_buffer_data(rd);
	for (unsigned i = 0; i < rounds; i++) {
		fill(pw, len, seed * 1000 + i);
		memset(pr, 0, len);
		r = fpgad_write(w, 0, base, len, 10000);
		if (r)
			return fail(c, "write", r);
		r = fpgad_read(rd, 0, base, len, 10000);
		if (r)
			return fail(c, "read", r);
		if (memcmp(pw, pr, len)) {
			fprintf(stderr, "xfer_client: round %u: card memory at "
				"0x%llx is not what this client wrote\n", i,
				(unsigned long long)base);
			return 1;
		}
	}
	printf("ok %u rounds\n", rounds);
	return 0;
}

int main(int argc, char **argv)
{
	fpgad_client *c;
	int r;

	if (argc < 3)
		return 2;
	r = fpgad_connect(argv[1], &c);
	if (r)
		return fail(NULL, "connect", r);
	if (!strcmp(argv[2], "die") && argc == 4)
		r = die(c, strtoull(argv[3], NULL, 0));
	else if (!strcmp(argv[2], "own") && argc == 7)
		r = own(c, strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0),
			(unsigned)strtoul(argv[5], NULL, 0),
			strtoull(argv[6], NULL, 0));
	else
		r = 2;
	fpgad_disconnect(c);
	return r;
}
