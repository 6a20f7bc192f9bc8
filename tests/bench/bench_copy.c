// SPDX-License-Identifier: MIT
/*
 * bench_copy.c - the raw copy loops the streaming figures are ratios
 * against, one JSON line each:
 *
 *   bench_copy host SIZE SLOTS SECONDS
 *	memcpy of SIZE bytes from one source buffer into a ring of SLOTS
 *	destination buffers, in a loop (what the sim card does per frame
 *	into host memory, without fpgad)
 *   bench_copy gpu SIZE SLOTS INFLIGHT SECONDS
 *	cudaMemcpyAsync of SIZE bytes from pinned host memory into a ring
 *	of SLOTS device buffers, INFLIGHT copies queued on as many streams
 *   bench_copy probe
 *	exit 0 and print the GPU when the CUDA runtime sees one, else 77
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef FPGAD_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench_util.h"
#include "gpu_probe.h"

#define MAX_INFLIGHT 64

static void report(const char *path, uint64_t size, uint64_t n, uint64_t ns,
		   unsigned inflight)
{
	double s = (double)ns / 1e9;

	printf("{\"bench\":\"copy\",\"path\":\"%s\",\"frame_size\":%" PRIu64
	       ",\"frames\":%" PRIu64 ",\"seconds\":%.3f,\"fps\":%.1f,\"gbps\":%.3f,"
	       "\"inflight\":%u}\n", path, size, n, s, (double)n / s,
	       (double)(n * size) / s / 1e9, inflight);
}

static int copy_host(uint64_t size, unsigned slots, double secs)
{
	uint64_t t0, t1, end, n = 0;
	unsigned char *src, *dst;

	src = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
	dst = aligned_alloc(4096, (size + 4095) / 4096 * 4096 * slots);
	if (!src || !dst) {
		fprintf(stderr, "bench_copy: out of memory\n");
		free(src);
		free(dst);
		return 1;
	}
	memset(src, 0x5a, size);
	memset(dst, 0, (size + 4095) / 4096 * 4096 * slots);
	t0 = bench_now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	do {
		for (unsigned i = 0; i < 16; i++, n++)
			memcpy(dst + (n % slots) * ((size + 4095) / 4096 * 4096),
			       src, size);
		/* Keep the copies from being optimized away. */
		__asm__ volatile("" : : "r"(dst) : "memory");
		t1 = bench_now_ns();
	} while (t1 < end);
	report("host memcpy", size, n, t1 - t0, 1);
	free(src);
	free(dst);
	return 0;
}

#ifdef FPGAD_CUDA
static int cuda_fail(const char *what, cudaError_t e)
{
	fprintf(stderr, "bench_copy: %s: %s\n", what, cudaGetErrorString(e));
	return 1;
}

static int copy_gpu(uint64_t size, unsigned slots, unsigned inflight,
		    double secs)
{
	cudaStream_t st[MAX_INFLIGHT] = { 0 };
	cudaEvent_t ev[MAX_INFLIGHT] = { 0 };
	uint64_t t0, t1 = 0, end, n = 0, done = 0;
	unsigned char *src = NULL, *dst = NULL;
	cudaError_t e;
	unsigned i;
	int code = 1;

	e = cudaMallocHost((void **)&src, size);
	if (e != cudaSuccess)
		return cuda_fail("cudaMallocHost", e);
	e = cudaMalloc((void **)&dst, size * slots);
	if (e != cudaSuccess) {
		cuda_fail("cudaMalloc", e);
		goto out;
	}
	memset(src, 0x5a, size);
	for (i = 0; i < inflight; i++) {
		e = cudaStreamCreateWithFlags(&st[i], cudaStreamNonBlocking);
		if (e == cudaSuccess)
			e = cudaEventCreateWithFlags(&ev[i], cudaEventDisableTiming);
		if (e != cudaSuccess) {
			cuda_fail("cudaStreamCreate/cudaEventCreate", e);
			goto out;
		}
	}
	/* Warm up: one copy per stream. */
	for (i = 0; i < inflight; i++) {
		e = cudaMemcpyAsync(dst + (i % slots) * size, src, size,
				    cudaMemcpyHostToDevice, st[i]);
		if (e != cudaSuccess) {
			cuda_fail("cudaMemcpyAsync", e);
			goto out;
		}
	}
	e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		cuda_fail("cudaDeviceSynchronize", e);
		goto out;
	}
	t0 = bench_now_ns();
	end = t0 + (uint64_t)(secs * 1e9);
	for (;;) {
		unsigned k = (unsigned)(n % inflight);

		if (n >= inflight) {
			/* The copy queued on this stream before is done. */
			e = cudaEventSynchronize(ev[k]);
			if (e != cudaSuccess) {
				cuda_fail("cudaEventSynchronize", e);
				goto out;
			}
			done++;
			t1 = bench_now_ns();
			if (t1 >= end)
				break;
		}
		e = cudaMemcpyAsync(dst + (n % slots) * size, src, size,
				    cudaMemcpyHostToDevice, st[k]);
		if (e == cudaSuccess)
			e = cudaEventRecord(ev[k], st[k]);
		if (e != cudaSuccess) {
			cuda_fail("cudaMemcpyAsync", e);
			goto out;
		}
		n++;
	}
	report("gpu cudaMemcpyAsync pinned->device", size, done, t1 - t0, inflight);
	code = 0;
out:
	cudaDeviceSynchronize();
	for (i = 0; i < inflight; i++) {
		if (ev[i])
			cudaEventDestroy(ev[i]);
		if (st[i])
			cudaStreamDestroy(st[i]);
	}
	cudaFree(dst);
	cudaFreeHost(src);
	return code;
}

#else
static int copy_gpu(uint64_t size, unsigned slots, unsigned inflight,
		    double secs)
{
	(void)size;
	(void)slots;
	(void)inflight;
	(void)secs;
	fprintf(stderr, "bench_copy: built without CUDA\n");
	return 77;
}
#endif

int main(int argc, char **argv)
{
	uint64_t size;
	unsigned slots, inflight;

	if (argc == 2 && !strcmp(argv[1], "probe"))
		return test_gpu_probe();
	if (argc == 5 && !strcmp(argv[1], "host")) {
		size = bench_parse_size(argv[2]);
		slots = (unsigned)atoi(argv[3]);
		if (size && slots)
			return copy_host(size, slots, atof(argv[4]));
	}
	if (argc == 6 && !strcmp(argv[1], "gpu")) {
		size = bench_parse_size(argv[2]);
		slots = (unsigned)atoi(argv[3]);
		inflight = (unsigned)atoi(argv[4]);
		if (size && slots && inflight && inflight <= MAX_INFLIGHT)
			return copy_gpu(size, slots, inflight, atof(argv[5]));
	}
	fprintf(stderr, "usage: bench_copy host SIZE SLOTS SECONDS\n"
			"       bench_copy gpu SIZE SLOTS INFLIGHT SECONDS\n"
			"       bench_copy probe\n");
	return 2;
}
