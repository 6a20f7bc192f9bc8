// SPDX-License-Identifier: MIT
/*
 * gpu_xfer.c - card memory transfers with GPU buffers, against a running
 * fpgad on the simulated card (tests/gpu/xfer.sh starts it):
 *
 *   gpu_xfer URL
 *   gpu_xfer --probe
 *
 * The vendor's cases on GPU memory: register (pin) a cudaMalloc'ed buffer,
 * auto mode and its reason, write from GPU memory and read into it
 * byte-exact (checked through cudaMemcpy), in gpudirect and in bounce mode
 * switched on the same registration, a batch of 10 reads, 7 points over
 * card memory, the 4 KiB rules of GPU memory refused by name, a
 * misaligned pointer and host memory refused at registration, the host
 * view copied only when stale, unregister.  One "ok"/"not ok" line per
 * check, a JSON summary line last.
 *
 * Exit status: 0 all passed, 1 a check failed, 2 usage; --probe: 0 when
 * a GPU answers, 77 when none does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "fpgad.h"
#include "fpgad_xfer.h"
#include "gpu_probe.h"

#define LEN (4u << 20)
#define WAIT 10000

static int checks, failures;

static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	failures += !ok;
	printf("%s %d - ", ok ? "ok" : "not ok", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void fill(unsigned char *p, size_t n, unsigned seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 3;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (unsigned char)x;
	}
}

/* Card -> GPU buffer -> host, and host -> GPU buffer -> card -> host. */
static void round_trips(fpgad_client *c, fpgad_buffer *g, fpgad_buffer *h,
			unsigned char *dev, unsigned char *ref,
			unsigned char *got, const char *mode)
{
	int r;

	/* Host buffer -> card -> GPU buffer. */
	fill(fpgad_buffer_data(h), LEN, 1);
	r = fpgad_write(h, 0, 0x100000, LEN, WAIT);
	if (!r)
		r = fpgad_read(g, 0, 0x100000, LEN, WAIT);
	memset(got, 0, LEN);
	if (!r)
		r = cudaMemcpy(got, dev, LEN, cudaMemcpyDeviceToHost) ? -EIO : 0;
	check(!r && !memcmp(got, fpgad_buffer_data(h), LEN),
	      "%s: card -> GPU memory, %u bytes byte-exact (%s)", mode, LEN,
	      r ? fpgad_errmsg(c) : "");
	/* GPU buffer -> card -> host buffer. */
	fill(ref, LEN, 2);
	r = cudaMemcpy(dev, ref, LEN, cudaMemcpyHostToDevice) ? -EIO : 0;
	fpgad_buffer_wrote(g, FPGAD_WRITER_GPU);
	if (!r)
		r = fpgad_write(g, 0, 0x40000000, LEN, WAIT);
	memset(fpgad_buffer_data(h), 0, LEN);
	if (!r)
		r = fpgad_read(h, 0, 0x40000000, LEN, WAIT);
	check(!r && !memcmp(fpgad_buffer_data(h), ref, LEN),
	      "%s: GPU memory -> card, %u bytes byte-exact (%s)", mode, LEN,
	      r ? fpgad_errmsg(c) : "");
}

static int run(const char *url)
{
	struct fpgad_buffer_info info;
	struct fpgad_xfer x[10];
	unsigned char *dev = NULL, *ref, *got;
	fpgad_buffer *g = NULL, *h = NULL, *bad;
	fpgad_client *c;
	void *view;
	uint64_t copies;
	int r;

	ref = malloc(LEN);
	got = malloc(LEN);
	if (!ref || !got || cudaMalloc((void **)&dev, 2 * LEN) != cudaSuccess) {
		printf("not ok - no memory\n");
		return 1;
	}
	r = fpgad_connect(url, &c);
	if (r) {
		printf("not ok - connect %s: %s\n", url, strerror(-r));
		return 1;
	}
	r = fpgad_buffer_register(c, dev, 2 * LEN, 0, &g);
	check(!r, "register %u bytes of GPU memory (%s)", 2 * LEN,
	      r ? fpgad_errmsg(c) : "");
	if (r)
		goto out;
	fpgad_buffer_get_info(g, &info);
	check(info.memory == FPGAD_MEMORY_CUDA && info.mode != FPGAD_MODE_AUTO,
	      "auto mode: %s (%s)", info.mode == FPGAD_MODE_GPUDIRECT ?
	      "gpudirect" : info.mode == FPGAD_MODE_BOUNCE ? "bounce" : "?",
	      info.mode_reason);
	r = fpgad_buffer_alloc_host(c, LEN, &h);
	check(!r, "a host buffer beside it");
	if (r)
		goto out;

	r = fpgad_buffer_set_mode(g, FPGAD_MODE_GPUDIRECT);
	check(!r, "set mode gpudirect (%s)", r ? fpgad_errmsg(c) : "");
	if (!r)
		round_trips(c, g, h, dev, ref, got, "gpudirect");
	r = fpgad_buffer_set_mode(g, FPGAD_MODE_BOUNCE);
	fpgad_buffer_get_info(g, &info);
	check(!r && info.mode == FPGAD_MODE_BOUNCE,
	      "the same registration switched to bounce (%s)",
	      r ? fpgad_errmsg(c) : info.mode_reason);
	if (!r)
		round_trips(c, g, h, dev, ref, got, "bounce");
	check(fpgad_buffer_set_mode(g, FPGAD_MODE_HOST) == -EINVAL &&
	      strstr(fpgad_errmsg(c), "mode host needs host memory"),
	      "mode host refused for GPU memory: %s", fpgad_errmsg(c));
	fpgad_buffer_set_mode(g, FPGAD_MODE_GPUDIRECT);

	/* A batch of 10 reads into GPU memory. */
	fill(fpgad_buffer_data(h), LEN, 3);
	r = fpgad_write(h, 0, 0x10000000, 10 * 65536, WAIT);
	memset(x, 0, sizeof(x));
	for (unsigned i = 0; i < 10; i++) {
		x[i].op = FPGAD_XFER_READ;
		x[i].buf = g;
		x[i].buf_offset = (uint64_t)(9 - i) * 65536;
		x[i].card_addr = 0x10000000 + (uint64_t)i * 65536;
		x[i].length = 65536;
	}
	if (!r)
		r = fpgad_xfer_batch(c, x, 10, WAIT);
	if (!r)
		r = cudaMemcpy(got, dev, 10 * 65536, cudaMemcpyDeviceToHost) ?
		    -EIO : 0;
	for (unsigned i = 0; !r && i < 10; i++)
		if (memcmp(got + (9 - i) * 65536,
			   (char *)fpgad_buffer_data(h) + i * 65536, 65536))
			r = -EBADMSG;
	check(!r, "a batch of 10 reads into GPU memory, byte-exact (%s)",
	      r ? strerror(-r) : "");

	/* 7 points over card memory, first and last page. */
	{
		struct fpgad_xfer_rules rules;
		uint64_t at[7];

		fpgad_xfer_rules(c, &rules);
		for (unsigned i = 0; i < 7; i++)
			at[i] = (rules.card_memory - 4096) / 6 * i / 4096 * 4096;
		r = 0;
		for (unsigned i = 0; i < 7 && !r; i++) {
			fill(ref, 4096, 10 + i);
			r = cudaMemcpy(dev, ref, 4096, cudaMemcpyHostToDevice) ?
			    -EIO : 0;
			fpgad_buffer_wrote(g, FPGAD_WRITER_GPU);
			if (!r)
				r = fpgad_write(g, 0, at[i], 4096, WAIT);
		}
		for (unsigned i = 0; i < 7 && !r; i++) {
			fill(ref, 4096, 10 + i);
			r = fpgad_read(g, 4096, at[i], 4096, WAIT);
			if (!r)
				r = cudaMemcpy(got, dev + 4096, 4096,
					       cudaMemcpyDeviceToHost) ? -EIO : 0;
			if (!r && memcmp(got, ref, 4096))
				r = -EBADMSG;
		}
		check(!r, "7 points from 0 to 0x%llx through GPU memory (%s)",
		      (unsigned long long)at[6], r ? fpgad_errmsg(c) : "");
	}

	/* GPU memory's rules: 4 KiB. */
	r = fpgad_read(g, 0, 64, 4096, WAIT);
	check(r == -EINVAL && strstr(fpgad_errmsg(c), "card address 0x40 is not a "
				     "multiple of 4096"),
	      "card address 64 refused for GPU memory: %s", fpgad_errmsg(c));
	r = fpgad_read(g, 64, 0, 4096, WAIT);
	check(r == -EINVAL && strstr(fpgad_errmsg(c), "buffer offset alignment"),
	      "buffer offset 64 refused: %s", fpgad_errmsg(c));
	r = fpgad_read(g, 0, 0, 64, WAIT);
	check(r == -EINVAL && strstr(fpgad_errmsg(c), "length alignment"),
	      "length 64 refused: %s", fpgad_errmsg(c));
	r = fpgad_read(g, 2 * LEN - 4096, 0, 8192, WAIT);
	check(r == -EINVAL && strstr(fpgad_errmsg(c), "buffer range"),
	      "past the buffer refused: %s", fpgad_errmsg(c));
	r = fpgad_buffer_register(c, dev + 64, 4096, 0, &bad);
	check(r == -EINVAL && strstr(fpgad_errmsg(c), "4096-byte boundaries"),
	      "a GPU buffer at a misaligned address refused: %s",
	      fpgad_errmsg(c));
	r = fpgad_buffer_register(c, ref, 4096, 0, &bad);
	check(r == -EINVAL && strstr(fpgad_errmsg(c), "fpgad_buffer_alloc_host"),
	      "host memory refused at registration: %s", fpgad_errmsg(c));

	/* The host view: copied only when stale. */
	fill(fpgad_buffer_data(h), 8192, 20);
	r = fpgad_write(h, 0, 0x2000, 8192, WAIT);
	if (!r)
		r = fpgad_read(g, 0, 0x2000, 8192, WAIT);
	copies = fpgad_buffer_copies(g);
	if (!r)
		r = fpgad_buffer_host(g, &view);
	check(!r && fpgad_buffer_copies(g) == copies + 1 &&
	      !memcmp(view, fpgad_buffer_data(h), 8192) &&
	      fpgad_buffer_last_writer(g) == FPGAD_WRITER_CARD,
	      "host view after a read: one copy, the card's bytes");
	r = fpgad_buffer_host(g, &view);
	check(!r && fpgad_buffer_copies(g) == copies + 1,
	      "host view again: no copy");
	/* Written through the host view: the GPU is updated before a write. */
	if (!r) {
		memset(view, 0xab, 4096);
		fpgad_buffer_wrote(g, FPGAD_WRITER_HOST);
		r = fpgad_write(g, 0, 0x3000, 4096, WAIT);
	}
	if (!r)
		r = fpgad_read(h, 0, 0x3000, 4096, WAIT);
	memset(ref, 0xab, 4096);
	check(!r && fpgad_buffer_copies(g) == copies + 2 &&
	      !memcmp(fpgad_buffer_data(h), ref, 4096),
	      "host view written, then written to the card: one copy to the GPU");

	check(fpgad_buffer_unregister(g) == 0, "unregister (unpin)");
	g = NULL;
	{
		struct fpgad_status *s;

		r = fpgad_status_get(c, &s);
		check(!r && s->transfer_buffers == 1,
		      "status: the host buffer only (%u)", r ? 0 : s->transfer_buffers);
		fpgad_status_free(s);
	}
out:
	fpgad_buffer_unregister(g);
	fpgad_buffer_unregister(h);
	fpgad_disconnect(c);
	cudaFree(dev);
	free(ref);
	free(got);
	printf("{\"checks\":%d,\"failed\":%d}\n", checks, failures);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--probe"))
		return test_gpu_probe();
	if (argc != 2) {
		fprintf(stderr, "usage: gpu_xfer URL | --probe\n");
		return 2;
	}
	return run(argv[1]);
}
