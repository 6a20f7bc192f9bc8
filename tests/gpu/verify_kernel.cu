// SPDX-License-Identifier: MIT
/*
 * verify_kernel.cu - check sim frames in place in GPU memory (see
 * gpu_verify.h).  One kernel launch per frame: thread 0 checks the header,
 * every thread checks payload words in a grid-stride loop, and each
 * mismatch lowers the frame's result word with atomicMin, so the result is
 * the offset of the first bad byte.
 */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpgad_simframe.h"
#include "gpu_verify.h"

#define VERIFY_THREADS 256u
#define VERIFY_MAX_BLOCKS 1024u

struct gpu_verifier {
	int gpu;
	unsigned depth;
	cudaStream_t stream;
	unsigned long long *d_res;	/* depth words, device */
	unsigned long long *h_res;	/* depth words, mapped pinned host */
	unsigned long long *h_res_dev;	/* the same, as the GPU sees them */
	cudaEvent_t *ev;		/* depth events */
	unsigned n_ev;
	struct gpu_verify_tally *d_tally; /* verify_tally's counts, device */
	unsigned *d_blocks;		/* its blocks done with the frame */
	char err[192];
};

static __device__ void bad_at(unsigned long long *res, uint64_t off)
{
	atomicMin(res, (unsigned long long)off);
}

/* Offset in the word of the first byte where @a and @b differ (a != b). */
static __device__ uint64_t first_byte(uint64_t a, uint64_t b)
{
	return (uint64_t)(__ffsll((long long)(a ^ b)) - 1) / 8u;
}

/* Lower *@res to the offset of the first bad byte this thread finds. */
static __device__ void check_frame(const uint64_t *__restrict__ frame,
				   uint64_t length, uint64_t seq,
				   unsigned long long *res)
{
	const uint64_t *payload = frame + FPGAD_SIMFRAME_HDR_SIZE / 8u;
	uint64_t tid = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
	uint64_t bytes = length - FPGAD_SIMFRAME_HDR_SIZE;
	uint64_t words = bytes / 8u;
	uint64_t base = seq % FPGAD_SIMFRAME_OFFSET_WORDS;
	uint64_t i;

	if (tid == 0) {
		struct fpgad_simframe_hdr h;

		memcpy(&h, frame, sizeof(h));
		if (h.magic != FPGAD_SIMFRAME_MAGIC)
			bad_at(res, offsetof(struct fpgad_simframe_hdr, magic));
		else if (h.hdr_size != FPGAD_SIMFRAME_HDR_SIZE)
			bad_at(res, offsetof(struct fpgad_simframe_hdr, hdr_size));
		else if (h.check != fpgad_simframe_hdr_check(&h))
			bad_at(res, offsetof(struct fpgad_simframe_hdr, check));
		else if (h.length != length)
			bad_at(res, offsetof(struct fpgad_simframe_hdr, length));
		else if (h.seq != seq)
			bad_at(res, offsetof(struct fpgad_simframe_hdr, seq));

		if (bytes % 8u) {
			/* The tail: the first bytes of the next pattern word. */
			const unsigned char *p = (const unsigned char *)payload;
			uint64_t w = fpgad_simframe_pattern_word(base + words);
			const unsigned char *q = (const unsigned char *)&w;

			for (uint64_t k = 0; k < bytes % 8u; k++) {
				if (p[words * 8u + k] != q[k]) {
					bad_at(res, FPGAD_SIMFRAME_HDR_SIZE +
						    words * 8u + k);
					break;
				}
			}
		}
	}

	for (i = tid; i < words; i += stride) {
		uint64_t got = payload[i];
		uint64_t want = fpgad_simframe_pattern_word(base + i);

		if (got != want) {
			bad_at(res, FPGAD_SIMFRAME_HDR_SIZE + i * 8u +
				    first_byte(got, want));
			break;
		}
	}
}

static __global__ void verify_frame(const uint64_t *__restrict__ frame,
				    uint64_t length, uint64_t seq,
				    unsigned long long *res)
{
	check_frame(frame, length, seq, res);
}

/*
 * The check of one frame, counted on the GPU: the last block to finish
 * folds the frame's result into the tally and re-arms it.  Launches on one
 * stream run one after another, so one result word serves every frame.
 */
static __global__ void verify_tally(const uint64_t *__restrict__ frame,
				    uint64_t length, uint64_t seq,
				    unsigned long long *cur,
				    struct gpu_verify_tally *t,
				    unsigned *blocks_done)
{
	check_frame(frame, length, seq, cur);
	__syncthreads();
	if (threadIdx.x != 0)
		return;
	__threadfence();
	if (atomicAdd(blocks_done, 1u) != gridDim.x - 1)
		return;
	__threadfence();
	unsigned long long r = atomicExch(cur, ~0ull);

	t->checked++;
	if (r != ~0ull) {
		if (!t->bad) {
			t->first_bad_seq = seq;
			t->first_bad_offset = r;
		}
		t->bad++;
	}
	*blocks_done = 0;
}

/*
 * Hand a result to the host and re-arm its word for the next frame, with
 * a plain store into mapped host memory: the verifier never uses a copy
 * engine, which fpgad's copies into the ring keep busy (another process's
 * copies would wait for a time slice there).
 */
static __global__ void verify_publish(unsigned long long *d_res,
				      unsigned long long *h_res)
{
	*(volatile unsigned long long *)h_res = *d_res;
	*d_res = ~0ull;
}

/* What went wrong last when there was no verifier to say it in. */
static char last_err[192];

/* The one place CUDA errors become errno values here. */
static int fail(struct gpu_verifier *v, cudaError_t e, const char *what)
{
	snprintf(v ? v->err : last_err, sizeof(last_err), "%s: %s", what,
		 cudaGetErrorString(e));
	if (v)
		memcpy(last_err, v->err, sizeof(last_err));
	switch (e) {
	case cudaSuccess:
		return 0;
	case cudaErrorMemoryAllocation:
		return -ENOMEM;
	case cudaErrorInvalidValue:
		return -EINVAL;
	case cudaErrorNoDevice:
	case cudaErrorInsufficientDriver:
	case cudaErrorInvalidDevice:
		return -ENODEV;
	default:
		return -EIO;
	}
}

extern "C" void gpu_verifier_destroy(struct gpu_verifier *v)
{
	if (!v)
		return;
	if (v->stream)
		cudaStreamSynchronize(v->stream);
	for (unsigned i = 0; i < v->n_ev; i++)
		cudaEventDestroy(v->ev[i]);
	free(v->ev);
	if (v->d_tally)
		cudaFree(v->d_tally);
	if (v->d_blocks)
		cudaFree(v->d_blocks);
	if (v->h_res)
		cudaFreeHost(v->h_res);
	if (v->d_res)
		cudaFree(v->d_res);
	if (v->stream)
		cudaStreamDestroy(v->stream);
	free(v);
}

extern "C" int gpu_verifier_create(int gpu, unsigned depth,
				   struct gpu_verifier **ret_v)
{
	struct gpu_verifier *v;
	cudaError_t e;
	int r;

	if (!depth) {
		snprintf(last_err, sizeof(last_err), "depth 0");
		return -EINVAL;
	}
	v = (struct gpu_verifier *)calloc(1, sizeof(*v));
	if (!v) {
		snprintf(last_err, sizeof(last_err), "out of memory");
		return -ENOMEM;
	}
	v->gpu = gpu;
	v->depth = depth;
	v->ev = (cudaEvent_t *)calloc(depth, sizeof(*v->ev));
	if (!v->ev) {
		snprintf(last_err, sizeof(last_err), "out of memory");
		r = -ENOMEM;
		goto fail_free;
	}
	e = cudaSetDevice(gpu);
	if (e != cudaSuccess) {
		r = fail(v, e, "cudaSetDevice");
		goto fail_free;
	}
	e = cudaStreamCreateWithFlags(&v->stream, cudaStreamNonBlocking);
	if (e != cudaSuccess) {
		r = fail(v, e, "cudaStreamCreate");
		goto fail_free;
	}
	e = cudaMalloc((void **)&v->d_res, depth * sizeof(*v->d_res));
	if (e != cudaSuccess) {
		r = fail(v, e, "cudaMalloc");
		goto fail_free;
	}
	e = cudaMalloc((void **)&v->d_tally, sizeof(*v->d_tally));
	if (e == cudaSuccess)
		e = cudaMalloc((void **)&v->d_blocks, sizeof(*v->d_blocks));
	if (e != cudaSuccess) {
		r = fail(v, e, "cudaMalloc");
		goto fail_free;
	}
	e = cudaMemset(v->d_res, 0xff, depth * sizeof(*v->d_res));
	if (e == cudaSuccess)
		e = cudaMemset(v->d_tally, 0, sizeof(*v->d_tally));
	if (e == cudaSuccess)
		e = cudaMemset(v->d_blocks, 0, sizeof(*v->d_blocks));
	if (e == cudaSuccess)
		e = cudaDeviceSynchronize();
	if (e != cudaSuccess) {
		r = fail(v, e, "cudaMemset");
		goto fail_free;
	}
	e = cudaHostAlloc((void **)&v->h_res, depth * sizeof(*v->h_res),
			  cudaHostAllocMapped);
	if (e == cudaSuccess)
		e = cudaHostGetDevicePointer((void **)&v->h_res_dev, v->h_res, 0);
	if (e != cudaSuccess) {
		r = fail(v, e, "cudaHostAlloc (mapped)");
		goto fail_free;
	}
	for (; v->n_ev < depth; v->n_ev++) {
		e = cudaEventCreateWithFlags(&v->ev[v->n_ev],
					     cudaEventDisableTiming);
		if (e != cudaSuccess) {
			r = fail(v, e, "cudaEventCreate");
			goto fail_free;
		}
	}
	*ret_v = v;
	return 0;

fail_free:
	gpu_verifier_destroy(v);
	return r;
}

/* The launch shape for a frame of @length bytes at @frame; 0 or -EINVAL. */
static int shape(struct gpu_verifier *v, const void *frame, uint64_t length,
		 unsigned *ret_blocks)
{
	uint64_t words;
	unsigned blocks;

	if (length < FPGAD_SIMFRAME_HDR_SIZE ||
	    ((uintptr_t)frame & 7u)) {
		snprintf(v->err, sizeof(v->err),
			 "frame of %llu bytes at %p cannot be checked",
			 (unsigned long long)length, frame);
		return -EINVAL;
	}
	words = (length - FPGAD_SIMFRAME_HDR_SIZE) / 8u;
	blocks = (unsigned)((words + VERIFY_THREADS - 1) / VERIFY_THREADS);
	if (blocks < 1)
		blocks = 1;
	if (blocks > VERIFY_MAX_BLOCKS)
		blocks = VERIFY_MAX_BLOCKS;
	*ret_blocks = blocks;
	return 0;
}

extern "C" int gpu_verifier_submit(struct gpu_verifier *v, uint64_t n,
				   const void *frame, uint64_t length,
				   uint64_t seq)
{
	unsigned k = (unsigned)(n % v->depth), blocks;
	cudaError_t e;

	if (shape(v, frame, length, &blocks) < 0)
		return -EINVAL;
	verify_frame<<<blocks, VERIFY_THREADS, 0, v->stream>>>(
		(const uint64_t *)frame, length, seq, v->d_res + k);
	verify_publish<<<1, 1, 0, v->stream>>>(v->d_res + k, v->h_res_dev + k);
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return fail(v, e, "verify kernel launch");
	e = cudaEventRecord(v->ev[k], v->stream);
	if (e != cudaSuccess)
		return fail(v, e, "cudaEventRecord");
	return 0;
}

extern "C" int gpu_verifier_submit_tally(struct gpu_verifier *v,
					 const void *frame, uint64_t length,
					 uint64_t seq)
{
	unsigned blocks;
	cudaError_t e;

	if (shape(v, frame, length, &blocks) < 0)
		return -EINVAL;
	/* d_res[0] is the frame's result word; submit() is not mixed in. */
	verify_tally<<<blocks, VERIFY_THREADS, 0, v->stream>>>(
		(const uint64_t *)frame, length, seq, v->d_res, v->d_tally,
		v->d_blocks);
	e = cudaGetLastError();
	return e == cudaSuccess ? 0 : fail(v, e, "verify kernel launch");
}

extern "C" int gpu_verifier_tally(struct gpu_verifier *v,
				  struct gpu_verify_tally *ret_tally)
{
	cudaError_t e = cudaStreamSynchronize(v->stream);

	if (e == cudaSuccess)
		e = cudaMemcpy(ret_tally, v->d_tally, sizeof(*ret_tally),
			       cudaMemcpyDeviceToHost);
	return e == cudaSuccess ? 0 : fail(v, e, "verify kernels");
}

extern "C" int gpu_verifier_wait(struct gpu_verifier *v, uint64_t n,
				 uint64_t *ret_result)
{
	unsigned k = (unsigned)(n % v->depth);
	cudaError_t e;

	e = cudaEventSynchronize(v->ev[k]);
	if (e != cudaSuccess)
		return fail(v, e, "verify kernel");
	*ret_result = ((volatile unsigned long long *)v->h_res)[k];
	return 0;
}

extern "C" const char *gpu_verify_errmsg(const struct gpu_verifier *v)
{
	return v ? v->err : last_err;
}

extern "C" void *gpu_verifier_stream(const struct gpu_verifier *v)
{
	return v->stream;
}

/* Payload word i of frame @seq, and the header in the first block. */
static __global__ void fill_frame(uint64_t *dst, uint64_t length, uint64_t seq,
				  struct fpgad_simframe_hdr h)
{
	uint64_t words = (length - FPGAD_SIMFRAME_HDR_SIZE) / 8u;
	uint64_t *payload = dst + FPGAD_SIMFRAME_HDR_SIZE / 8u;

	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
	     i < words; i += (uint64_t)gridDim.x * blockDim.x)
		payload[i] = fpgad_simframe_payload_word(seq, i);
	if (blockIdx.x == 0 && threadIdx.x < FPGAD_SIMFRAME_HDR_SIZE / 8u)
		dst[threadIdx.x] = ((const uint64_t *)&h)[threadIdx.x];
}

extern "C" int gpu_fill_frame(void *stream, void *dst, uint64_t length,
			      uint64_t seq, uint32_t source)
{
	struct fpgad_simframe_hdr h;
	uint64_t words;
	unsigned blocks;

	if (length < FPGAD_SIMFRAME_HDR_SIZE || length % 8u ||
	    ((uintptr_t)dst & 7u))
		return -EINVAL;
	fpgad_simframe_hdr_init(&h, seq, length, source);
	words = (length - FPGAD_SIMFRAME_HDR_SIZE) / 8u;
	blocks = (unsigned)((words + VERIFY_THREADS - 1) / VERIFY_THREADS);
	if (blocks < 1)
		blocks = 1;
	if (blocks > VERIFY_MAX_BLOCKS)
		blocks = VERIFY_MAX_BLOCKS;
	fill_frame<<<blocks, VERIFY_THREADS, 0, (cudaStream_t)stream>>>(
		(uint64_t *)dst, length, seq, h);
	return fail(NULL, cudaGetLastError(), "fill kernel launch");
}

/* Both ways of checking one frame: submit and wait, and the tally. */
static int check_both(struct gpu_verifier *v, const void *frame,
		      uint64_t length, uint64_t seq, uint64_t want,
		      unsigned long long *tally_bad, char *why, size_t whylen)
{
	struct gpu_verify_tally t;
	uint64_t res = 0;
	int r;

	r = gpu_verifier_submit(v, 0, frame, length, seq);
	if (r == 0)
		r = gpu_verifier_wait(v, 0, &res);
	if (r == 0 && res != want) {
		snprintf(why, whylen, "frame %llu: the check says %llx, not %llx",
			 (unsigned long long)seq, (unsigned long long)res,
			 (unsigned long long)want);
		return -EIO;
	}
	if (r == 0)
		r = gpu_verifier_submit_tally(v, frame, length, seq);
	if (r == 0)
		r = gpu_verifier_tally(v, &t);
	if (r < 0) {
		snprintf(why, whylen, "%s", v->err);
		return r;
	}
	/* The tally keeps the first bad frame's offset: check it there. */
	if (t.bad != *tally_bad + (want != GPU_VERIFY_OK) ||
	    (want != GPU_VERIFY_OK && !*tally_bad &&
	     (t.first_bad_offset != want || t.first_bad_seq != seq))) {
		snprintf(why, whylen, "frame %llu: the tally counts %llu bad (the first %llu at %llu), not %llu",
			 (unsigned long long)seq, t.bad, t.first_bad_seq,
			 t.first_bad_offset, *tally_bad + (want != GPU_VERIFY_OK));
		return -EIO;
	}
	*tally_bad = t.bad;
	return 0;
}

extern "C" int gpu_verify_selftest(char *why, size_t whylen)
{
	const uint64_t length = 1u << 20, bad = 123457;
	unsigned long long tally_bad = 0;
	struct gpu_verifier *v = NULL;
	unsigned char *frame = NULL;
	cudaError_t e;
	int r;

	r = gpu_verifier_create(0, 1, &v);
	if (r < 0) {
		snprintf(why, whylen, "%s", last_err);
		return r;
	}
	e = cudaMalloc((void **)&frame, length);
	if (e != cudaSuccess) {
		r = fail(v, e, "cudaMalloc");
		snprintf(why, whylen, "%s", v->err);
		goto out;
	}
	/* A good frame; one byte of its payload changed; the wrong seq. */
	r = gpu_fill_frame(v->stream, frame, length, 7, 0);
	if (r == 0)
		r = check_both(v, frame, length, 7, GPU_VERIFY_OK, &tally_bad,
			       why, whylen);
	if (r == 0) {
		e = cudaMemsetAsync(frame + bad, 0x5a, 1, v->stream);
		r = e == cudaSuccess ? 0 : fail(v, e, "cudaMemset");
	}
	if (r == 0)
		r = check_both(v, frame, length, 7, bad, &tally_bad, why, whylen);
	if (r == 0)
		r = gpu_fill_frame(v->stream, frame, length, 7, 0);
	if (r == 0)
		r = check_both(v, frame, length, 8,
			       offsetof(struct fpgad_simframe_hdr, seq),
			       &tally_bad, why, whylen);
	if (r < 0 && !why[0])
		snprintf(why, whylen, "%s", v->err);
out:
	if (frame)
		cudaFree(frame);
	gpu_verifier_destroy(v);
	return r;
}
