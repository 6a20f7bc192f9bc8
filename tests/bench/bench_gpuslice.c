// SPDX-License-Identifier: MIT
/*
 * bench_gpuslice - how two processes' CUDA contexts share the GPU, as the
 * simulated card's DMA (CUDA copies in fpgad's context) and a verifying
 * consumer's kernels do: the round trip of one verify kernel (launch to
 * the result on the host) on a frame in this process's GPU memory, alone
 * and while a child process keeps host-to-GPU copies running; and the
 * child's copy rate alone and while the kernels run.
 *
 *   bench_gpuslice [ROUNDS]
 *
 * Prints one JSON line.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "../gpu/gpu_verify.h"
#include "bench_util.h"
#include "fpgad_simframe.h"

#define FRAME (1u << 20)
#define COPY_BUFS 8

/* The child: host-to-device copies of FRAME bytes, 8 in flight, forever. */
static int copier(int ready_fd, volatile uint64_t *count)
{
	cudaStream_t s[COPY_BUFS];
	void *host, *dev[COPY_BUFS];
	char b = 'r';

	if (cudaMallocHost(&host, FRAME) != cudaSuccess)
		return 1;
	for (int i = 0; i < COPY_BUFS; i++)
		if (cudaMalloc(&dev[i], FRAME) != cudaSuccess ||
		    cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking) != cudaSuccess)
			return 1;
	if (write(ready_fd, &b, 1) != 1)
		return 1;
	for (uint64_t n = 0;; n++) {
		int i = (int)(n % COPY_BUFS);

		if (cudaStreamSynchronize(s[i]) != cudaSuccess ||
		    cudaMemcpyAsync(dev[i], host, FRAME, cudaMemcpyHostToDevice,
				    s[i]) != cudaSuccess)
			return 1;
		if (n >= COPY_BUFS)
			*count = n - COPY_BUFS + 1;	/* copies finished */
	}
}

static int rounds(struct gpu_verifier *v, const void *frame, unsigned n,
		  double *ret_p50, double *ret_p99)
{
	uint64_t *ns = calloc(n, sizeof(*ns));
	uint64_t res;
	int r = 0;

	if (!ns)
		return -ENOMEM;
	for (unsigned i = 0; i < n && r == 0; i++) {
		uint64_t t0 = bench_now_ns();

		r = gpu_verifier_submit(v, i, frame, FRAME, 7);
		if (r == 0)
			r = gpu_verifier_wait(v, i, &res);
		if (r == 0 && res != GPU_VERIFY_OK)
			r = -EBADMSG;
		ns[i] = bench_now_ns() - t0;
	}
	if (r == 0) {
		bench_sort(ns, n);
		*ret_p50 = bench_pct_us(ns, n, 0.50);
		*ret_p99 = bench_pct_us(ns, n, 0.99);
	}
	free(ns);
	return r;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 2000;
	double a50 = 0, a99 = 0, b50 = 0, b99 = 0, alone_gbps, beside_gbps;
	volatile uint64_t *count;
	uint64_t c0, c1, t0, t1;
	struct gpu_verifier *v = NULL;
	void *host = NULL, *frame = NULL, *pattern = NULL;
	uint64_t psize = fpgad_simframe_pattern_size(FRAME);
	int fds[2], r = 1;
	pid_t child = -1;
	char b;

	count = mmap(NULL, sizeof(*count), PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!n || count == MAP_FAILED || pipe(fds) < 0)
		return 2;
	/* The child starts its CUDA context before this process has one. */
	child = fork();
	if (child == 0) {
		close(fds[0]);
		_exit(copier(fds[1], count));
	}
	close(fds[1]);
	if (child < 0 || read(fds[0], &b, 1) != 1) {
		fprintf(stderr, "bench_gpuslice: the copying process did not start\n");
		goto out;
	}
	/* Pause it while the alone figures are taken. */
	kill(child, SIGSTOP);
	pattern = malloc(psize);
	if (!pattern || cudaMallocHost(&host, FRAME) != cudaSuccess ||
	    cudaMalloc(&frame, FRAME) != cudaSuccess) {
		fprintf(stderr, "bench_gpuslice: out of memory\n");
		goto out;
	}
	fpgad_simframe_pattern_fill(pattern, psize);
	fpgad_simframe_fill(host, FRAME, 7, 0, pattern, psize);
	if (cudaMemcpy(frame, host, FRAME, cudaMemcpyHostToDevice) != cudaSuccess ||
	    gpu_verifier_create(0, 1, &v) < 0) {
		fprintf(stderr, "bench_gpuslice: %s\n", gpu_verify_errmsg(NULL));
		goto out;
	}
	if (rounds(v, frame, n, &a50, &a99) < 0)
		goto out;
	kill(child, SIGCONT);
	usleep(100000);
	/* The copies alone for half a second... */
	c0 = *count;
	t0 = bench_now_ns();
	usleep(500000);
	c1 = *count;
	t1 = bench_now_ns();
	alone_gbps = (double)(c1 - c0) * FRAME / (double)(t1 - t0);
	/* ...and while this process runs verify kernels. */
	c0 = *count;
	t0 = bench_now_ns();
	if (rounds(v, frame, n, &b50, &b99) < 0)
		goto out;
	c1 = *count;
	t1 = bench_now_ns();
	beside_gbps = (double)(c1 - c0) * FRAME / (double)(t1 - t0);
	printf("{\"bench\":\"gpuslice\",\"rounds\":%u,\"alone_p50_us\":%.1f,"
	       "\"alone_p99_us\":%.1f,\"beside_copies_p50_us\":%.1f,"
	       "\"beside_copies_p99_us\":%.1f,\"copies_alone_gbps\":%.2f,"
	       "\"copies_beside_kernels_gbps\":%.2f}\n", n, a50, a99, b50, b99,
	       alone_gbps, beside_gbps);
	r = 0;
out:
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	gpu_verifier_destroy(v);
	if (frame)
		cudaFree(frame);
	if (host)
		cudaFreeHost(host);
	free(pattern);
	return r;
}
