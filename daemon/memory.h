/* SPDX-License-Identifier: MIT */
/*
 * memory.h - memory backends: where ring slots live.
 *
 *   host: POSIX shared memory, mapped by the daemon and by the lease holder
 *         (shm_open name handed out in OpenChannel).  Owner-only mode.
 *   cuda: one cudaMalloc per ring (size rounded up to 2 MiB), exported once
 *         with cudaIpcGetMemHandle; the client maps it once with
 *         cudaIpcOpenMemHandle.  Available only in builds with CUDA and on
 *         hosts where a GPU answers.
 *
 * All functions return 0 or a negative errno; ret_* are written on success.
 */
#ifndef FPGAD_MEMORY_H
#define FPGAD_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define MEMORY_SLOT_ALIGN 4096u
#define MEMORY_CUDA_GRANULE (2u << 20)
#define MEMORY_IPC_HANDLE_SIZE 64

struct mem_region {
	enum memory_kind kind;		/* MEMORY_HOST or MEMORY_CUDA */
	size_t size;			/* bytes usable (rounded) */
	void *host;			/* host mapping (host kind), else NULL */
	void *dev;			/* device pointer (cuda kind), else NULL */
	int gpu;			/* CUDA ordinal (cuda kind) */
	char gpu_bus_id[32];		/* its PCI bus id: ordinals differ between
					   processes, bus ids do not */
	char shm_name[64];		/* host kind: "/fpgad.<...>" */
	int shm_fd;			/* host kind, else -1 */
	uint8_t ipc_handle[MEMORY_IPC_HANDLE_SIZE]; /* cuda kind */
};

struct memory_ops {
	const char *name;
	/* @name_hint makes the shm name unique and readable. */
	int (*alloc)(size_t size, const char *gpu, const char *name_hint,
		     struct mem_region **ret_region);
	void (*free)(struct mem_region *r);
	/* Let @uid (the lease holder) map it; host kind only. */
	int (*grant)(struct mem_region *r, uid_t uid);
	/* A dma-buf fd for [offset, offset+len), for PIN_DMABUF. */
	int (*export_dmabuf)(struct mem_region *r, uint64_t offset,
			     uint64_t len, int *ret_fd);
};

extern const struct memory_ops memory_host_ops;
extern const struct memory_ops memory_cuda_ops;

/*
 * Probe for a usable GPU: 0 and the ordinal when one answers, else a
 * negative errno and a one-line reason ("built without CUDA",
 * "no CUDA driver: ...") in @why.
 */
int memory_cuda_probe(const char *gpu, int *ret_ordinal, char *why,
		      size_t whylen);

/*
 * The ops for MEMORY_HOST or MEMORY_CUDA (in a build without CUDA, a table
 * whose alloc fails: mem_nocuda.c); NULL for MEMORY_AUTO (probe and
 * choose first).
 */
const struct memory_ops *memory_ops_for(enum memory_kind kind);

#endif
