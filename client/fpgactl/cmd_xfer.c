// SPDX-License-Identifier: MIT
/*
 * cmd_xfer.c - fpgactl read ADDR LEN FILE and fpgactl write ADDR FILE: card
 * memory to a file and a file to card memory, through a host buffer of
 * fpgactl's own, for bring-up.  FILE '-' is stdout or stdin.  A length
 * that is not a multiple of the card's alignment is served all the same:
 * the read takes whole units and prints what was asked, the write reads
 * the last unit back and keeps the card's bytes after the file's.  On a
 * terminal, a progress line with the time left (from the start above
 * 64 MiB, else once a transfer runs a second); --json prints one object
 * (on stderr when the data goes to stdout).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "fpgactl.h"
#include "size.h"

#define XFER_CHUNK (16ull << 20)
#define XFER_BAR_MIN (64ull << 20)

static int parse(const char *what, const char *s, uint64_t *ret)
{
	if (size_parse(s, ret) == 0)
		return 0;
	fprintf(stderr, "fpgactl: %s: '%s' is not a number (K, M, G and 0x "
		"allowed)\n", what, s);
	return -EINVAL;
}

static void report(const struct fpgactl_opts *o, const char *op,
		   uint64_t addr, uint64_t len, const char *file, uint64_t t0,
		   bool data_on_stdout)
{
	double secs = (double)(clock_now_ns() - t0) / 1e9;
	double gbps = secs > 0 ? (double)len / secs / 1e9 : 0;
	json_t *j;
	char *s;

	if (!o->json) {
		fprintf(data_on_stdout ? stderr : stdout,
			"%s %llu bytes at card address 0x%llx %s %s in %.3f s "
			"(%.2f GB/s)\n", op, (unsigned long long)len,
			(unsigned long long)addr, *op == 'r' ? "into" : "from",
			file, secs, gbps);
		return;
	}
	j = json_pack("{s:s, s:I, s:I, s:s, s:o, s:o}", "op", op, "card_addr",
		      (json_int_t)addr, "length", (json_int_t)len, "file", file,
		      "seconds", fpgactl_json_num(secs),
		      "gbps", fpgactl_json_num(secs > 0 ? gbps : NAN));
	if (!data_on_stdout) {
		fpgactl_print_json(j);
		return;
	}
	s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (s)
		fprintf(stderr, "%s\n", s);
	free(s);
	json_decref(j);
}

/* A host buffer for chunks of @len bytes (at most XFER_CHUNK). */
static int chunk_buffer(fpgad_client *c, uint64_t len, uint32_t align,
			fpgad_buffer **ret_buf, uint64_t *ret_chunk)
{
	uint64_t chunk = len < XFER_CHUNK ? len : XFER_CHUNK;
	int r;

	chunk = (chunk + align - 1) / align * align;
	if (!chunk)
		chunk = align;
	r = fpgad_buffer_alloc_host(c, chunk, ret_buf);
	if (r)
		return fpgactl_fail(c, "host buffer", r);
	*ret_chunk = chunk;
	return 0;
}

int fpgactl_read(fpgad_client *c, const struct fpgactl_opts *o)
{
	const char *file = o->args[2];
	bool to_stdout = !strcmp(file, "-");
	struct fpgad_xfer_rules rules;
	struct fpgactl_progress bar;
	uint64_t addr, len, chunk = 0, done = 0, t0;
	fpgad_buffer *b;
	FILE *out;
	int r;

	if (parse("ADDR", o->args[0], &addr) || parse("LEN", o->args[1], &len))
		return 2;
	if (!len) {
		fprintf(stderr, "fpgactl: read: LEN is 0: nothing to read (give the number of bytes)\n");
		return 2;
	}
	r = fpgad_xfer_rules(c, &rules);
	if (r)
		return fpgactl_fail(c, "transfers", r);
	/* What fpgad would refuse at the end, refused before the start. */
	if (addr > rules.card_memory || len > rules.card_memory - addr) {
		fprintf(stderr, "fpgactl: read: card range: card address 0x%llx "
			"+ %llu bytes ends past card memory (%llu bytes)\n",
			(unsigned long long)addr, (unsigned long long)len,
			(unsigned long long)rules.card_memory);
		return 1;
	}
	if (chunk_buffer(c, len, rules.host_align, &b, &chunk))
		return 1;
	out = to_stdout ? stdout : fopen(file, "wb");
	if (!out) {
		fprintf(stderr, "fpgactl: %s: %s\n", file, strerror(errno));
		fpgad_buffer_unregister(b);
		return 1;
	}
	t0 = clock_now_ns();
	fpgactl_progress_start(&bar, len, true, len > XFER_BAR_MIN);
	while (done < len) {
		uint64_t n = len - done < chunk ? len - done : chunk;
		uint64_t whole = (n + rules.host_align - 1) / rules.host_align *
				 rules.host_align;

		r = fpgad_read(b, 0, addr + done, whole, o->timeout_ms);
		if (r) {
			fpgactl_progress_end(&bar);
			r = fpgactl_fail(c, "read", r);
			goto out;
		}
		if (fwrite(fpgad_buffer_data(b), 1, n, out) != n) {
			fpgactl_progress_end(&bar);
			fprintf(stderr, "fpgactl: %s: %s\n", file, strerror(errno));
			r = 1;
			goto out;
		}
		done += n;
		fpgactl_progress_show(&bar, done);
	}
	if (fflush(out)) {
		fprintf(stderr, "fpgactl: %s: %s\n", file, strerror(errno));
		r = 1;
		goto out;
	}
	report(o, "read", addr, len, file, t0, to_stdout);
	r = 0;
out:
	if (!to_stdout)
		fclose(out);
	fpgad_buffer_unregister(b);
	return r;
}

/* Fill @buf with up to @len bytes of @in (short only at the end). */
static uint64_t read_full(FILE *in, unsigned char *buf, uint64_t len)
{
	uint64_t got = 0;
	size_t n;

	while (got < len && (n = fread(buf + got, 1, len - got, in)) > 0)
		got += n;
	return got;
}

/*
 * Write @n bytes of @b to @addr; a last unit the file fills only partly
 * keeps the card's bytes after the file's (read back first).
 */
static int write_chunk(fpgad_client *c, fpgad_buffer *b, uint64_t addr,
		       uint64_t n, uint32_t align, int timeout_ms,
		       struct fpgactl_progress *bar)
{
	unsigned char *p = fpgad_buffer_data(b), tail[4096];
	uint64_t whole = n / align * align, part = n - whole;
	int r;

	if (part) {
		if (align > sizeof(tail)) {
			fpgactl_progress_end(bar);
			fprintf(stderr, "fpgactl: write: the card's alignment %u "
				"is too coarse for a partial last unit\n", align);
			return 1;
		}
		memcpy(tail, p + whole, part);
		r = fpgad_read(b, whole, addr + whole, align, timeout_ms);
		if (r) {
			fpgactl_progress_end(bar);
			return fpgactl_fail(c, "read back", r);
		}
		memcpy(p + whole, tail, part);
		whole += align;
	}
	r = fpgad_write(b, 0, addr, whole, timeout_ms);
	if (r)
		fpgactl_progress_end(bar);
	return r ? fpgactl_fail(c, "write", r) : 0;
}

int fpgactl_write(fpgad_client *c, const struct fpgactl_opts *o)
{
	const char *file = o->args[1];
	bool from_stdin = !strcmp(file, "-");
	struct fpgad_xfer_rules rules;
	struct fpgactl_progress bar;
	uint64_t addr, chunk = 0, done = 0, total = 0, t0;
	fpgad_buffer *b;
	struct stat st;
	FILE *in;
	int r;

	if (parse("ADDR", o->args[0], &addr))
		return 2;
	in = from_stdin ? stdin : fopen(file, "rb");
	if (!in) {
		fprintf(stderr, "fpgactl: %s: %s\n", file, strerror(errno));
		return 1;
	}
	if (fstat(fileno(in), &st) == 0 && S_ISREG(st.st_mode))
		total = (uint64_t)st.st_size;
	r = fpgad_xfer_rules(c, &rules);
	if (r) {
		r = fpgactl_fail(c, "transfers", r);
		goto close;
	}
	if (chunk_buffer(c, total ? total : XFER_CHUNK, rules.host_align, &b,
			 &chunk)) {
		r = 1;
		goto close;
	}
	t0 = clock_now_ns();
	fpgactl_progress_start(&bar, total, true, total > XFER_BAR_MIN);
	for (;;) {
		uint64_t n = read_full(in, fpgad_buffer_data(b), chunk);

		if (ferror(in)) {
			fpgactl_progress_end(&bar);
			fprintf(stderr, "fpgactl: %s: %s\n", file, strerror(errno));
			r = 1;
			break;
		}
		if (!n) {
			report(o, "write", addr, done, file, t0, false);
			r = 0;
			break;
		}
		r = write_chunk(c, b, addr + done, n, rules.host_align,
				o->timeout_ms, &bar);
		if (r)
			break;
		done += n;
		if (total)
			fpgactl_progress_show(&bar, done);
		if (n < chunk && feof(in)) {
			report(o, "write", addr, done, file, t0, false);
			break;
		}
	}
	fpgad_buffer_unregister(b);
close:
	if (!from_stdin)
		fclose(in);
	return r;
}
