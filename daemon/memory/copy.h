/* SPDX-License-Identifier: MIT */
/*
 * copy.h - a small CUDA copy engine and the CUDA helpers around it.
 *
 * One engine is one non-blocking CUDA stream on one GPU.  Copies run in
 * submission order; each copy_submit() records an event and its cookie,
 * copy_reap() hands those back in the same order once the GPU has
 * finished them.  copy_chain() queues a copy that completes together with
 * the next copy_submit() (a frame made of several pieces).  An engine is
 * used by one thread at a time; that thread need not be the one that
 * opened it.
 *
 * Users: the channel's bounce mode (pinned host staging from
 * copy_host_alloc() -> GPU slot) and the sim backend's GPU "DMA" (card
 * memory registered with copy_host_register() -> GPU slot, and back).
 * A copy batch (below) serves a RoCE channel's GPU landing ring.
 *
 * Implemented in copy_cuda.c in CUDA builds; without CUDA, copy_nocuda.c
 * refuses every copy with -EOPNOTSUPP (and opens no engine), so callers
 * need no #ifdef.  Functions return 0 or a negative errno (common/errmap.h
 * converts CUDA's codes).
 */
#ifndef FPGAD_COPY_H
#define FPGAD_COPY_H

#include <stddef.h>
#include <stdint.h>

struct copy_engine;

enum copy_kind {
	COPY_H2D,	/* pinned host -> device */
	COPY_D2H,	/* device -> pinned host */
	COPY_D2D,	/* device -> device (same GPU) */
	COPY_ANY,	/* either, told by the addresses (pinned host, device) */
};

struct copy_done {
	uint64_t cookie;	/* as given to copy_submit() */
	int status;		/* 0 or a negative errno: the copy failed */
};

/*
 * Open an engine on CUDA device @gpu allowing @depth completions (copy
 * submissions) outstanding at once (1..256).
 */
int copy_open(int gpu, unsigned depth, struct copy_engine **ret_ce);

/* Wait for every outstanding copy, then free the engine.  NULL is fine. */
void copy_close(struct copy_engine *ce);

/* The CUDA device ordinal the engine runs on. */
int copy_gpu(const struct copy_engine *ce);

/*
 * Queue a copy of @len bytes and a completion carrying @cookie; -EAGAIN
 * when @depth completions are already outstanding.  @len 0 queues only
 * the completion.
 */
int copy_submit(struct copy_engine *ce, void *dst, const void *src,
		size_t len, enum copy_kind kind, uint64_t cookie);

/* Queue a copy that completes with the next copy_submit(). */
int copy_chain(struct copy_engine *ce, void *dst, const void *src, size_t len,
	       enum copy_kind kind);

/*
 * Take the oldest completion.  Returns 1 and fills *@ret_done when it has
 * finished (successfully or not: see ret_done->status), 0 when nothing is
 * outstanding or, with @block false, the oldest copy is still running.
 * With @block true the calling thread polls briefly, then sleeps until
 * the copy finishes.
 */
int copy_reap(struct copy_engine *ce, int block, struct copy_done *ret_done);

/* Completions submitted and not yet reaped; 0 for a NULL engine. */
unsigned copy_pending(const struct copy_engine *ce);

/*
 * A batch of small copies on one GPU: queued in order on a non-blocking
 * stream of its own and waited for together.  The few bytes a RoCE
 * landing ring in GPU memory is checked by, the canaries written into it
 * and its frames into their slots (roce_rx.h), two waits a frame instead
 * of one per copy.  Host rows (a get's destination, a put's source) pass
 * through the batch's own pinned memory of @staging bytes, so any host
 * buffer will do: a put's source may be reused once the call returns; a
 * get's destination is filled by copy_batch_wait(), not before.  -ENOSPC
 * when the staging memory or the gets a batch holds (COPY_BATCH_GETS) run
 * out before a wait.  One batch is used by one thread at a time.
 */
#define COPY_BATCH_GETS 8u

struct copy_batch;

int copy_batch_open(int gpu, size_t staging, struct copy_batch **ret_b);
/* Wait for what is queued, then free the batch.  NULL is fine. */
void copy_batch_close(struct copy_batch *b);
/* @height rows of @width bytes, @spitch apart at device address @src, into @dst one after another. */
int copy_batch_get(struct copy_batch *b, void *dst, const void *src,
		   size_t spitch, size_t width, size_t height);
/* @height rows of @width bytes, one after another at @src, to @dpitch apart at device address @dst. */
int copy_batch_put(struct copy_batch *b, void *dst, size_t dpitch,
		   const void *src, size_t width, size_t height);
/* @len bytes from device address @src to @dst: device or pinned host memory. */
int copy_batch_copy(struct copy_batch *b, void *dst, const void *src, size_t len);
/*
 * Wait for everything queued and fill the gets' destinations: 0, or
 * -errno when the GPU failed any of it (no get's destination is then to
 * be trusted).  The staging memory is free again either way.
 */
int copy_batch_wait(struct copy_batch *b);

/* Page-locked host memory for staging (cudaHostAlloc, portable). */
int copy_host_alloc(size_t len, void **ret_ptr);
void copy_host_free(void *ptr);

/* Page-lock existing host memory (cudaHostRegister, portable). */
int copy_host_register(void *ptr, size_t len);
void copy_host_unregister(void *ptr);

#endif
