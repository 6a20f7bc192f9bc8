// SPDX-License-Identifier: MIT
/*
 * copy_cuda.c - the CUDA copy engine (copy.h): a few non-blocking streams
 * used in turn, one submission (with its chained pieces) per stream, a ring
 * of events, cookies handed back in submission order.  Several streams let
 * one copy start while the previous one drains, which a single stream
 * serializes with a gap between copies. 
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "clock.h"
#include "errmap.h"
#include "memory/copy.h"
#include "log.h"

#define COPY_MAX_DEPTH 256u
#define COPY_STREAMS 4u
/* A blocking reap polls this long before it sleeps: most copies are short. */
#define COPY_SPIN_NS 100000u

struct copy_engine {
	int gpu;
	unsigned depth;
	cudaStream_t streams[COPY_STREAMS];
	unsigned n_streams;		/* created so far */
	cudaEvent_t *events;		/* depth of them */
	unsigned n_events;		/* created so far */
	uint64_t *cookies;
	uint64_t head;			/* completions submitted */
	uint64_t tail;			/* completions reaped */
};

void copy_close(struct copy_engine *ce)
{
	unsigned i;

	if (!ce)
		return;
	cudaSetDevice(ce->gpu);
	for (i = 0; i < ce->n_streams; i++)
		cudaStreamSynchronize(ce->streams[i]);
	for (i = 0; i < ce->n_events; i++)
		cudaEventDestroy(ce->events[i]);
	for (i = 0; i < ce->n_streams; i++)
		cudaStreamDestroy(ce->streams[i]);
	free(ce->events);
	free(ce->cookies);
	free(ce);
}

int copy_open(int gpu, unsigned depth, struct copy_engine **ret_ce)
{
	struct copy_engine *ce;
	cudaError_t e;
	int r;

	if (gpu < 0 || !depth || depth > COPY_MAX_DEPTH)
		return -EINVAL;
	ce = calloc(1, sizeof(*ce));
	if (!ce)
		return -ENOMEM;
	ce->gpu = gpu;
	ce->depth = depth;
	ce->events = calloc(depth, sizeof(*ce->events));
	ce->cookies = calloc(depth, sizeof(*ce->cookies));
	if (!ce->events || !ce->cookies) {
		r = -ENOMEM;
		goto fail;
	}

	e = cudaSetDevice(gpu);
	while (e == cudaSuccess && ce->n_streams < COPY_STREAMS) {
		e = cudaStreamCreateWithFlags(&ce->streams[ce->n_streams],
					      cudaStreamNonBlocking);
		if (e == cudaSuccess)
			ce->n_streams++;
	}
	if (e != cudaSuccess) {
		log_err("copy: GPU %d: no stream: %s", gpu,
			cudaGetErrorString(e));
		r = errmap_cuda(e);
		goto fail;
	}
	/* Blocking-sync events: a reaper waiting on one sleeps, not spins. */
	for (; ce->n_events < depth; ce->n_events++) {
		e = cudaEventCreateWithFlags(&ce->events[ce->n_events],
					     cudaEventDisableTiming |
					     cudaEventBlockingSync);
		if (e != cudaSuccess) {
			log_err("copy: GPU %d: no event: %s", gpu,
				cudaGetErrorString(e));
			r = errmap_cuda(e);
			goto fail;
		}
	}
	*ret_ce = ce;
	return 0;

fail:
	copy_close(ce);
	return r;
}

int copy_gpu(const struct copy_engine *ce)
{
	return ce->gpu;
}

unsigned copy_pending(const struct copy_engine *ce)
{
	return ce ? (unsigned)(ce->head - ce->tail) : 0;
}

static enum cudaMemcpyKind copy_cuda_kind(enum copy_kind kind)
{
	switch (kind) {
	case COPY_H2D:
		return cudaMemcpyHostToDevice;
	case COPY_D2H:
		return cudaMemcpyDeviceToHost;
	case COPY_D2D:
		return cudaMemcpyDeviceToDevice;
	case COPY_ANY:
		break;
	}
	return cudaMemcpyDefault;
}

/* The stream of the next submission and of what is chained to it. */
static cudaStream_t copy_stream(const struct copy_engine *ce)
{
	return ce->streams[ce->head % ce->n_streams];
}

int copy_chain(struct copy_engine *ce, void *dst, const void *src, size_t len,
	       enum copy_kind kind)
{
	cudaError_t e;

	if (!len)
		return 0;
	if (!dst || !src)
		return -EINVAL;
	e = cudaSetDevice(ce->gpu);
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(dst, src, len, copy_cuda_kind(kind),
				    copy_stream(ce));
	return errmap_cuda(e);
}

int copy_submit(struct copy_engine *ce, void *dst, const void *src,
		size_t len, enum copy_kind kind, uint64_t cookie)
{
	unsigned slot;
	cudaError_t e;
	int r;

	if (ce->head - ce->tail >= ce->depth)
		return -EAGAIN;
	r = copy_chain(ce, dst, src, len, kind);
	if (r)
		return r;
	slot = (unsigned)(ce->head % ce->depth);
	e = cudaEventRecord(ce->events[slot], copy_stream(ce));
	if (e != cudaSuccess)
		return errmap_cuda(e);
	ce->cookies[slot] = cookie;
	ce->head++;
	return 0;
}

int copy_reap(struct copy_engine *ce, int block, struct copy_done *ret_done)
{
	unsigned slot;
	cudaError_t e;

	if (!copy_pending(ce))
		return 0;
	slot = (unsigned)(ce->tail % ce->depth);
	e = cudaSetDevice(ce->gpu);
	if (e == cudaSuccess)
		e = cudaEventQuery(ce->events[slot]);
	if (e == cudaErrorNotReady && block) {
		uint64_t until = clock_now_ns() + COPY_SPIN_NS;

		while ((e = cudaEventQuery(ce->events[slot])) ==
		       cudaErrorNotReady && clock_now_ns() < until)
			;
		if (e == cudaErrorNotReady)
			e = cudaEventSynchronize(ce->events[slot]);
	}
	if (e == cudaErrorNotReady)
		return 0;
	ret_done->cookie = ce->cookies[slot];
	ret_done->status = errmap_cuda(e);
	ce->tail++;
	return 1;
}

int copy_host_alloc(size_t len, void **ret_ptr)
{
	cudaError_t e;
	void *p = NULL;

	if (!len)
		return -EINVAL;
	e = cudaHostAlloc(&p, len, cudaHostAllocPortable);
	if (e != cudaSuccess) {
		log_err("copy: cannot allocate %zu bytes of pinned memory: %s",
			len, cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	*ret_ptr = p;
	return 0;
}

void copy_host_free(void *ptr)
{
	if (ptr)
		cudaFreeHost(ptr);
}

int copy_host_register(void *ptr, size_t len)
{
	cudaError_t e;

	if (!ptr || !len)
		return -EINVAL;
	e = cudaHostRegister(ptr, len, cudaHostRegisterPortable);
	if (e != cudaSuccess) {
		log_err("copy: cannot page-lock %zu bytes: %s", len,
			cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	return 0;
}

void copy_host_unregister(void *ptr)
{
	if (ptr)
		cudaHostUnregister(ptr);
}

/* --- copy batches ------------------------------------------------------------ */

struct copy_batch {
	int gpu;
	cudaStream_t stream;
	unsigned char *staging;		/* pinned */
	size_t staging_len, used;
	struct {
		void *dst;
		size_t off, len;
	} gets[COPY_BATCH_GETS];
	unsigned n_gets;
};

void copy_batch_close(struct copy_batch *b)
{
	if (!b)
		return;
	cudaSetDevice(b->gpu);
	if (b->stream) {
		cudaStreamSynchronize(b->stream);
		cudaStreamDestroy(b->stream);
	}
	if (b->staging)
		cudaFreeHost(b->staging);
	free(b);
}

int copy_batch_open(int gpu, size_t staging, struct copy_batch **ret_b)
{
	struct copy_batch *b;
	cudaError_t e;

	if (!staging)
		return -EINVAL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->gpu = gpu;
	b->staging_len = staging;
	e = cudaSetDevice(gpu);
	if (e == cudaSuccess)
		e = cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking);
	if (e == cudaSuccess)
		e = cudaHostAlloc((void **)&b->staging, staging, cudaHostAllocPortable);
	if (e != cudaSuccess) {
		log_err("copy: a copy batch on GPU %d: %s", gpu, cudaGetErrorString(e));
		copy_batch_close(b);
		return errmap_cuda(e);
	}
	*ret_b = b;
	return 0;
}

/* @len bytes of the staging memory, 64-byte aligned; NULL when used up. */
static unsigned char *staging_take(struct copy_batch *b, size_t len)
{
	size_t at = (b->used + 63) & ~(size_t)63;

	if (at > b->staging_len || len > b->staging_len - at)
		return NULL;
	b->used = at + len;
	return b->staging + at;
}

int copy_batch_get(struct copy_batch *b, void *dst, const void *src,
		   size_t spitch, size_t width, size_t height)
{
	unsigned char *st;
	cudaError_t e;

	if (!width || !height)
		return 0;
	if (b->n_gets == COPY_BATCH_GETS || !(st = staging_take(b, width * height)))
		return -ENOSPC;
	e = cudaSetDevice(b->gpu);
	if (e == cudaSuccess)
		e = cudaMemcpy2DAsync(st, width, src, spitch < width ? width : spitch,
				      width, height, cudaMemcpyDeviceToHost, b->stream);
	if (e != cudaSuccess)
		return errmap_cuda(e);
	b->gets[b->n_gets].dst = dst;
	b->gets[b->n_gets].off = (size_t)(st - b->staging);
	b->gets[b->n_gets].len = width * height;
	b->n_gets++;
	return 0;
}

int copy_batch_put(struct copy_batch *b, void *dst, size_t dpitch,
		   const void *src, size_t width, size_t height)
{
	unsigned char *st;
	cudaError_t e;

	if (!width || !height)
		return 0;
	if (!(st = staging_take(b, width * height)))
		return -ENOSPC;
	memcpy(st, src, width * height);
	e = cudaSetDevice(b->gpu);
	if (e == cudaSuccess)
		e = cudaMemcpy2DAsync(dst, dpitch < width ? width : dpitch, st, width,
				      width, height, cudaMemcpyHostToDevice, b->stream);
	return errmap_cuda(e);
}

int copy_batch_copy(struct copy_batch *b, void *dst, const void *src, size_t len)
{
	cudaError_t e = cudaSetDevice(b->gpu);

	if (e == cudaSuccess && len)
		e = cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, b->stream);
	return errmap_cuda(e);
}

int copy_batch_wait(struct copy_batch *b)
{
	cudaError_t e = cudaSetDevice(b->gpu);

	if (e == cudaSuccess)
		e = cudaStreamSynchronize(b->stream);
	for (unsigned i = 0; e == cudaSuccess && i < b->n_gets; i++)
		memcpy(b->gets[i].dst, b->staging + b->gets[i].off, b->gets[i].len);
	b->n_gets = 0;
	b->used = 0;
	return errmap_cuda(e);
}
