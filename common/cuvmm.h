/* SPDX-License-Identifier: MIT */
/*
 * cuvmm.h - GPU rings through the CUDA driver's virtual memory management
 * (VMM) API, shared as a file descriptor: fpgad allocates a ring with
 * cuMemCreate (a POSIX file descriptor requested, GPUDirect RDMA capable),
 * maps it (cuMemAddressReserve, cuMemMap, cuMemSetAccess) and exports it
 * once with cuMemExportToShareableHandle; the descriptor goes to each
 * lessee over the handoff socket, and libfpgad imports it
 * (cuMemImportFromShareableHandle) and maps it the same way.  Unlike a
 * CUDA IPC handle, the descriptor works across namespaces and on Tegra.
 *
 * A mapping holds the memory: each side lets go of its own (cuvmm_free),
 * and the memory goes when the last mapping and descriptor are gone.
 *
 * The driver is reached through the runtime (cudriver.h), never linked:
 * without libcuda every call fails and says so.  cuvmm_cuda.c; in a build
 * without CUDA, cuvmm_nocuda.c says "built without CUDA".  The export's
 * choice and names (cuvmm.c) need no GPU.
 */
#ifndef FPGAD_COMMON_CUVMM_H
#define FPGAD_COMMON_CUVMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a GPU ring reaches its lessee (OpenChannelReply.gpu_export). */
enum gpu_export {
	GPU_EXPORT_IPC,		/* cudaMalloc, a cudaIpcMemHandle_t in the reply */
	GPU_EXPORT_FD,		/* VMM, its descriptor on the handoff socket */
	GPU_EXPORT_HOST,	/* an integrated GPU's ring: host memory, its
				   memfd on the handoff socket, registered
				   with CUDA by the lessee */
};

/* What a device can do with VMM memory (CU_DEVICE_ATTRIBUTE_*). */
struct cuvmm_caps {
	bool vmm;		/* VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED */
	bool posix_fd;		/* HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED */
	bool rdma;		/* GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED */
};

/* A range of this process's GPU address space, mapped. */
struct cuvmm {
	uint64_t va;		/* CUdeviceptr; 0: none */
	size_t size;
};

/* The environment variable tests set to force an export ("fd", "ipc"). */
#define GPU_EXPORT_ENV "FPGAD_TEST_GPU_EXPORT"

/* "fd", "ipc" or "host". */
const char *gpu_export_name(enum gpu_export e);
/*
 * The export a reply names: "fd", "ipc", "host", and "" (an fpgad older
 * than the field, which knew only IPC); -EINVAL for anything else.
 */
int gpu_export_parse(const char *s, enum gpu_export *ret);
/*
 * The export for a ring on a discrete device that can do @caps: fd where
 * it has VMM, POSIX descriptors and GPUDirect RDMA on VMM memory, else
 * ipc, with @why saying what it lacks.  @force (GPU_EXPORT_ENV's value,
 * NULL or "" for none) picks one: -EOPNOTSUPP for fd on a device that
 * cannot, -EINVAL for a value that names neither (@why says so).  An
 * integrated GPU's rings are host memory, chosen before this.
 */
int gpu_export_choose(const struct cuvmm_caps *caps, const char *force,
		      enum gpu_export *ret, char *why, size_t whylen);
/* @size rounded up to a multiple of @granule (a power of two); 0 if it overflows. */
size_t cuvmm_round(size_t size, size_t granule);

/* What GPU @ordinal (a CUDA ordinal) can do; -ENODEV with @why without a driver. */
int cuvmm_caps(int ordinal, struct cuvmm_caps *ret, char *why, size_t whylen);
/* The smallest granule of a ring's allocation on @ordinal. */
int cuvmm_granule(int ordinal, size_t *ret, char *why, size_t whylen);
/*
 * @size bytes (a multiple of cuvmm_granule()) on GPU @ordinal, mapped for
 * it; the allocation's descriptor in @ret_fd (the caller closes it).
 */
int cuvmm_alloc(int ordinal, size_t size, struct cuvmm *ret, int *ret_fd,
		char *why, size_t whylen);
/*
 * The allocation of descriptor @fd (not taken), @size bytes of it, mapped
 * for GPU @owner (the memory's) and GPU @user (the caller's, -1 or @owner:
 * the same one).
 */
int cuvmm_import(int fd, size_t size, int owner, int user, struct cuvmm *ret,
		 char *why, size_t whylen);
/* Unmap @m and free its addresses; accepts one never mapped. */
void cuvmm_free(struct cuvmm *m);

#endif
