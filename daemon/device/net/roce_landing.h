/* SPDX-License-Identifier: MIT */
/*
 * roce_landing.h - which memory a RoCE channel's NIC writes: the landing
 * ring (roce_rx.h) in GPU memory beside a GPU ring, registered as a
 * dma-buf MR, or in host memory.  The choice and why, with no verbs and
 * no CUDA, so that tests drive it with fakes (roce_landing_ops).
 *
 * A channel whose ring is in GPU memory asks for GPU landing memory and
 * its dma-buf (memory_ops.export_dmabuf), then registers that with
 * ibv_reg_dmabuf_mr.  Where any step fails (no dma-buf of that memory; a
 * provider without dma-buf MRs, rxe among them; a libibverbs without the
 * call) the landing ring is host memory, as for a host ring, and shown
 * says why: status and topo print it after "landing: ".
 */
#ifndef FPGAD_NET_ROCE_LANDING_H
#define FPGAD_NET_ROCE_LANDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/net/roce_rx.h"
#include "memory/memory.h"

enum roce_landing_kind { ROCE_LANDING_HOST, ROCE_LANDING_GPU };

struct roce_landing_ops {
	/*
	 * @len bytes of GPU memory for the landing ring and a dma-buf fd
	 * of them: 0, or -errno with why in @why.
	 */
	int (*gpu_alloc)(void *user, size_t len, void **ret_mem, int *ret_fd,
			 char *why, size_t whylen);
	void (*gpu_free)(void *user, void *mem, int fd);
	/*
	 * Register the landing ring at @iova: its new R_Key (the one before
	 * goes), or -errno.  reg_dmabuf NULL: libibverbs has no
	 * ibv_reg_dmabuf_mr.
	 */
	int (*reg_dmabuf)(void *user, int fd, size_t len, uint64_t iova,
			  uint32_t *ret_rkey);
	int (*reg_host)(void *user, void *addr, size_t len, uint64_t iova,
			uint32_t *ret_rkey);
};

struct roce_landing {
	enum roce_landing_kind kind;
	void *mem;		/* host: the ring; gpu: its device address */
	size_t len;
	int fd;			/* gpu: its dma-buf; else -1 */
	char shown[224];	/* "gpu (dma-buf MR)", "host: ..." */
};

/*
 * A landing ring of @len bytes (a multiple of 4096), in GPU memory when
 * @gpu_ring and the NIC (@provider, its name) can write it there, and
 * registered once to learn that.  0, or -errno when not even host memory
 * could be had.  @iova: where the sender's addresses start.
 */
int roce_landing_open(struct roce_landing *l, const struct roce_landing_ops *ops,
		      void *user, bool gpu_ring, const char *provider, size_t len,
		      uint64_t iova);
/* Register it anew (each new ring): its new R_Key, or -errno. */
int roce_landing_reg(struct roce_landing *l, const struct roce_landing_ops *ops,
		     void *user, uint64_t iova, uint32_t *ret_rkey);
/* After the MR is gone. */
void roce_landing_close(struct roce_landing *l, const struct roce_landing_ops *ops,
			void *user);

/*
 * GPU landing memory as fpgad makes it: @len bytes of GPU @gpu's memory
 * (memory_cuda_ops, not an integrated GPU's) and a dma-buf fd of them.
 * 0, or -errno with why in @why.
 */
int roce_landing_gpu_alloc(size_t len, const char *gpu, const char *name,
			   struct mem_region **ret_region, int *ret_fd,
			   char *why, size_t whylen);

/*
 * roce_rx's reach into a landing ring in GPU memory (io_user: a struct
 * roce_landing_gpu): CUDA copies queued on a copy batch of its own
 * (memory/copy.h) and waited for together; a frame goes out to a slot in
 * GPU or pinned host memory, whichever its address is.
 */
struct roce_landing_gpu {
	struct mem_region *m;		/* the landing ring */
	struct copy_batch *batch;
};

/* @staging: roce_rx_io_staging() of the channel's roce_rx_cfg.  0 or -errno. */
int roce_landing_gpu_io_open(struct roce_landing_gpu *g, struct mem_region *m,
			     size_t staging);
/* Waits for what is queued: before the landing memory goes. */
void roce_landing_gpu_io_close(struct roce_landing_gpu *g);

extern const struct roce_landing_io roce_landing_gpu_io;

#endif
