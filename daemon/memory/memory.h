/* SPDX-License-Identifier: MIT */
/*
 * memory.h - memory backends: where ring slots live.
 *
 *   host: a sealed memfd, mapped by the daemon; the lease holder maps the
 *         descriptor it is handed over the handoff socket (handoff.c).
 *   cuda: one allocation per ring (size rounded up to 2 MiB).  Where the
 *         GPU can (cuvmm.h): VMM memory whose file descriptor the lessee
 *         is handed like a host ring's memfd and maps with the VMM API
 *         (export "fd").  Else (no VMM or POSIX descriptors, or
 *         $FPGAD_TEST_GPU_EXPORT=ipc): one cudaMalloc exported once with
 *         cudaIpcGetMemHandle, which the client opens with
 *         cudaIpcOpenMemHandle (export "ipc").  On an integrated GPU
 *         (Jetson, IGX, DGX Spark: no CUDA IPC, the GPU reads host memory
 *         in place) the ring is a host memfd registered with CUDA
 *         (mem_integrated.c), handed over as host rings are (export
 *         "host").  Available only in builds with CUDA and on hosts where
 *         a GPU answers.
 *
 * Both also import memory a client registered for card transfers: a memfd
 * it made (host), an allocation it cudaMalloc'd and exported with
 * cudaIpcGetMemHandle (cuda, always IPC).
 *
 * All functions return 0 or a negative errno; ret_* are written on success.
 */
#ifndef FPGAD_MEMORY_H
#define FPGAD_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "cuvmm.h"

#define MEMORY_CUDA_GRANULE (2u << 20)
#define MEMORY_IPC_HANDLE_SIZE 64

/* alloc() flags. */
#define MEMORY_LESSEE_READS 0x1u	/* lessees only read it: seal it so */

/*
 * How a GPU orders the writes a third party (the card, a NIC) makes to its
 * memory: CUDA's CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING.
 * With none, what the card wrote may not be visible yet to a kernel that
 * reads it after it was published: fpgad flushes first
 * (memory_flush_rdma_writes(), once per burst of completions).
 */
enum rdma_order { RDMA_ORDER_UNKNOWN, RDMA_ORDER_NONE, RDMA_ORDER_OWNER, RDMA_ORDER_ALL };

struct mem_region {
	enum memory_kind kind;		/* MEMORY_HOST or MEMORY_CUDA */
	size_t size;			/* bytes usable (rounded) */
	void *host;			/* host mapping (host kind), else NULL */
	void *dev;			/* device pointer (cuda kind), else NULL */
	int gpu;			/* CUDA ordinal (cuda kind) */
	char gpu_bus_id[32];		/* its PCI bus id: ordinals differ between
					   processes, bus ids do not */
	int fd;				/* host kind: the sealed memfd; cuda
					   kind, export fd: the VMM
					   allocation's descriptor; export
					   host: the memfd; else -1 */
	enum gpu_export gpu_export;	/* cuda kind: how lessees reach it */
	struct cuvmm vmm;		/* cuda kind, export fd: the mapping */
	uint8_t ipc_handle[MEMORY_IPC_HANDLE_SIZE]; /* cuda kind, export ipc */
	bool imported;			/* import(): another process's memory */
	enum rdma_order rdma_order;	/* cuda kind: its GPU's rule */
	/*
	 * cuda kind on an integrated GPU (export host): host is the memfd's
	 * mapping (fd), dev its GPU address through @mapper.
	 */
	bool integrated;
	const struct memory_host_mapper *mapper;
};

/* What import() reaches: memory of another process. */
struct mem_import {
	uint64_t length;		/* host: bytes wanted */
	int fd;				/* host: a memfd; the region's on success */
	const uint8_t *ipc_handle;	/* cuda: cudaIpcMemHandle_t */
	const char *gpu_bus_id;		/* cuda: the GPU's PCI bus id */
};

struct memory_ops {
	const char *name;
	/*
	 * @size bytes (rounded up to MEMORY_SLOT_ALIGN, or to
	 * MEMORY_CUDA_GRANULE in GPU memory), all of it allocated now;
	 * @name_hint names the memfd in /proc/<pid>/fd (host kind).
	 */
	int (*alloc)(size_t size, const char *gpu, const char *name_hint,
		     unsigned flags, struct mem_region **ret_region);
	void (*free)(struct mem_region *r);
	/* A dma-buf fd for [offset, offset+len), for PIN_DMABUF. */
	int (*export_dmabuf)(struct mem_region *r, uint64_t offset,
			     uint64_t len, int *ret_fd);
	/*
	 * Reach memory of another process.  host: map @imp->fd, which must
	 * be a writable memfd sealed against shrinking and at least
	 * @imp->length bytes long (the region takes the descriptor); cuda:
	 * open the allocation @imp->ipc_handle names, all of it, on the GPU
	 * with @imp->gpu_bus_id.  free() lets go of it.  @why says what was
	 * wrong.
	 */
	int (*import)(const struct mem_import *imp,
		      struct mem_region **ret_region, char *why,
		      size_t whylen);
};

extern const struct memory_ops memory_host_ops;
extern const struct memory_ops memory_cuda_ops;

/*
 * Probe for a usable GPU: 0 and the ordinal when one answers, else a
 * negative errno and a one-line reason ("built without CUDA",
 * "no NVIDIA driver (libcuda.so.1 not found)", ...) in @why.
 */
int memory_cuda_probe(const char *gpu, int *ret_ordinal, char *why,
		      size_t whylen);

/*
 * Whether this process's CUDA contexts on GPU @ordinal are shared through
 * the Multi-Process Service (an MPS control daemon answered when CUDA
 * started): -EOPNOTSUPP when the driver cannot tell.
 */
int memory_cuda_mps(int ordinal, bool *ret_mps);

/*
 * The ops for MEMORY_HOST or MEMORY_CUDA (in a build without CUDA, a table
 * whose alloc fails: mem_nocuda.c); NULL for MEMORY_AUTO (probe and
 * choose first).
 */
const struct memory_ops *memory_ops_for(enum memory_kind kind);

/*
 * The rule of CUDA's attribute value @attribute (0, 100, 200; anything
 * else unknown); $FPGAD_TEST_RDMA_ORDER (none, owner, all) stands in for
 * the GPU's in tests.
 */
enum rdma_order memory_rdma_order(int attribute);
/* What the rule means for frames, for status and topo. */
const char *memory_rdma_order_rule(enum rdma_order o);
/* Make the card's writes to @r visible to its GPU (rule none). */
int memory_flush_rdma_writes(const struct mem_region *r);

/*
 * Whether a GPU whose CUDA attribute INTEGRATED is @attribute (1: it
 * shares the host's memory; -1 unknown) gets its rings in host memory;
 * $FPGAD_TEST_GPU_INTEGRATED (1 or 0) stands in for the GPU in tests, so
 * that a discrete GPU takes the integrated path too.
 */
bool memory_gpu_integrated(int attribute);
/* Whether CUDA GPU @ordinal is integrated (memory_gpu_integrated()). */
bool memory_cuda_integrated(int ordinal);

/* How a GPU reaches host memory in place: CUDA's in mem_cuda.c. */
struct memory_host_mapper {
	/* @host, @len bytes, made readable by GPU @gpu at *@ret_dev. */
	int (*map)(void *host, size_t len, int gpu, void **ret_dev);
	void (*unmap)(void *host, int gpu);
};

/*
 * A ring for integrated GPU @gpu: host memory as memory_host_ops.alloc()
 * makes it (a sealed memfd for the lessee; sealed against its writable
 * mappings with MEMORY_LESSEE_READS), mapped for the GPU through @m;
 * region kind MEMORY_CUDA, integrated.  memory_cuda_ops.free() frees it.
 */
int memory_integrated_alloc(size_t size, int gpu, const char *name_hint,
			    unsigned flags, const struct memory_host_mapper *m,
			    struct mem_region **ret_region);
void memory_integrated_free(struct mem_region *r);
/* What gpudirect means for a ring of an integrated GPU, for status and topo. */
extern const char memory_integrated_rule[];

#endif
