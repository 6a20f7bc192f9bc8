// SPDX-License-Identifier: MIT
/*
 * mem_cuda.c - the CUDA memory backend: one GPU allocation per ring.
 *
 * The ring is rounded up to MEMORY_CUDA_GRANULE (2 MiB, the GPU's large
 * page, which is also what GPUDirect pins).  Where the GPU allows it, it
 * is VMM memory (cuvmm.h: cuMemCreate, GPUDirect RDMA capable) whose file
 * descriptor lessees are handed over the handoff socket (export "fd");
 * else, or with $FPGAD_TEST_GPU_EXPORT=ipc, one cudaMalloc exported once
 * with cudaIpcGetMemHandle (export "ipc") and marked SYNC_MEMOPS so that
 * DMA by the card and CUDA copies see each other's writes in order (VMM
 * memory takes no SYNC_MEMOPS: fpgad's copies wait on their streams'
 * events before frames are published, and the client's on its own).
 *
 * Driver API functions (dma-buf export, pointer attributes, VMM) are
 * reached through cudaGetDriverEntryPointByVersion: fpgad never links
 * libcuda, so it starts, and says why there is no GPU, on machines
 * without a driver.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "cudriver.h"
#include "errmap.h"
#include "memory/copy.h"
#include "memory/memory.h"
#include "log.h"

_Static_assert(sizeof(cudaIpcMemHandle_t) == MEMORY_IPC_HANDLE_SIZE,
	       "IPC handle fits mem_region.ipc_handle");

static bool memory_cuda_is_index(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return i > 0 && i < 6;
}

int memory_cuda_probe(const char *gpu, int *ret_ordinal, char *why,
		      size_t whylen)
{
	int count = 0, ordinal;
	char none[1];
	cudaError_t e;

	if (!why || !whylen) {
		why = none;
		whylen = sizeof(none);
	}
	e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess) {
		snprintf(why, whylen, "%s", errmap_cuda_str(e));
		return -ENODEV;
	}
	if (count <= 0) {
		snprintf(why, whylen, "no CUDA device");
		return -ENODEV;
	}
	if (!gpu || !gpu[0]) {
		ordinal = 0;
	} else if (memory_cuda_is_index(gpu)) {
		ordinal = atoi(gpu);
		if (ordinal >= count) {
			snprintf(why, whylen, "gpu %s: there are %d CUDA "
				 "devices", gpu, count);
			return -ENODEV;
		}
	} else {
		e = cudaDeviceGetByPCIBusId(&ordinal, gpu);
		if (e != cudaSuccess) {
			snprintf(why, whylen, "gpu %s: "
				 "cudaDeviceGetByPCIBusId: %s", gpu,
				 cudaGetErrorString(e));
			return -ENODEV;
		}
	}
	*ret_ordinal = ordinal;
	return 0;
}

/* A driver API function by name, or NULL (logged) when the driver lacks it. */
static void *memory_cuda_entry(const char *symbol, unsigned version)
{
	char why[160];
	void *fn = cudriver_entry(symbol, version, why, sizeof(why));

	if (!fn)
		log_warn("memory: %s", why);
	return fn;
}

int memory_cuda_mps(int ordinal, bool *ret_mps)
{
	PFN_cuDeviceGetAttribute_v2000 get;
	int on = 0;

	get = (PFN_cuDeviceGetAttribute_v2000)
		memory_cuda_entry("cuDeviceGetAttribute", 2000);
	if (!get)
		return -EOPNOTSUPP;
	if (get(&on, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, ordinal) != CUDA_SUCCESS)
		return -EOPNOTSUPP;
	*ret_mps = on != 0;
	return 0;
}

/* The GPU's rule for third-party writes (memory.h). */
static enum rdma_order memory_cuda_rdma_order(int ordinal)
{
	PFN_cuDeviceGetAttribute_v2000 get;
	int v = -1;

	get = (PFN_cuDeviceGetAttribute_v2000)
		memory_cuda_entry("cuDeviceGetAttribute", 2000);
	if (get && get(&v, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING,
		       ordinal) != CUDA_SUCCESS)
		v = -1;
	return memory_rdma_order(v);
}

/* CUDA attribute @a of GPU @ordinal, -1 when the driver cannot say. */
static int memory_cuda_attribute(int ordinal, CUdevice_attribute a)
{
	PFN_cuDeviceGetAttribute_v2000 get;
	int v = -1;

	get = (PFN_cuDeviceGetAttribute_v2000)
		memory_cuda_entry("cuDeviceGetAttribute", 2000);
	if (!get || get(&v, a, ordinal) != CUDA_SUCCESS)
		return -1;
	return v;
}

bool memory_cuda_integrated(int ordinal)
{
	return memory_gpu_integrated(memory_cuda_attribute(ordinal,
							   CU_DEVICE_ATTRIBUTE_INTEGRATED));
}

/* An integrated GPU's ring: host memory it reads through cudaHostRegister. */
static int memory_cuda_host_map(void *host, size_t len, int gpu, void **ret_dev)
{
	cudaError_t e = cudaSetDevice(gpu);

	if (e == cudaSuccess)
		e = cudaHostRegister(host, len, cudaHostRegisterMapped |
				     cudaHostRegisterPortable);
	if (e != cudaSuccess) {
		log_err("memory: GPU %d: cannot register %zu bytes of host memory: cudaHostRegister: %s",
			gpu, len, cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	e = cudaHostGetDevicePointer(ret_dev, host, 0);
	if (e != cudaSuccess) {
		log_err("memory: GPU %d: no device address for registered host memory: %s",
			gpu, cudaGetErrorString(e));
		cudaHostUnregister(host);
		return errmap_cuda(e);
	}
	return 0;
}

static void memory_cuda_host_unmap(void *host, int gpu)
{
	cudaSetDevice(gpu);
	cudaHostUnregister(host);
}

static const struct memory_host_mapper memory_cuda_host_mapper = {
	.map = memory_cuda_host_map,
	.unmap = memory_cuda_host_unmap,
};

/*
 * A lessee that only reads its ring maps it read-only and registers that
 * mapping with cudaHostRegisterReadOnly, which not every GPU supports:
 * where it does not, the ring is not sealed against writable mappings
 * (as on a kernel without F_SEAL_FUTURE_WRITE, mem_host.c).
 */
static int memory_cuda_alloc_integrated(size_t size, int ordinal,
					const char *name_hint, unsigned flags,
					struct mem_region **ret_region)
{
	bool ro = memory_cuda_attribute(ordinal,
					CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED) == 1;
	struct mem_region *r;
	int ret;

	/* CUDA registers host memory only where the GPU is I/O coherent. */
	if (memory_cuda_attribute(ordinal, CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED) == 0) {
		log_err("memory: %s: integrated GPU %d cannot register host memory (CUDA's HOST_REGISTER_SUPPORTED is 0): its ring cannot be shared",
			name_hint ? name_hint : "ring", ordinal);
		return -EOPNOTSUPP;
	}
	if (!ro)
		flags &= ~MEMORY_LESSEE_READS;
	log_debug("memory: %s: integrated GPU %d: %zu bytes of host memory, %s for the lessee",
		  name_hint ? name_hint : "ring", ordinal, size,
		  flags & MEMORY_LESSEE_READS ? "read-only" :
		  ro ? "writable" : "writable (the GPU cannot register read-only memory)");
	ret = memory_integrated_alloc(size, ordinal, name_hint, flags,
				      &memory_cuda_host_mapper, &r);
	if (ret)
		return ret;	/* the caller says it, the mapper CUDA's words */
	if (cudaDeviceGetPCIBusId(r->gpu_bus_id, sizeof(r->gpu_bus_id),
				  ordinal) != cudaSuccess)
		r->gpu_bus_id[0] = '\0';
	*ret_region = r;
	return 0;
}

int memory_flush_rdma_writes(const struct mem_region *r)
{
	cudaError_t e = cudaSetDevice(r->gpu);

	if (e == cudaSuccess)
		e = cudaDeviceFlushGPUDirectRDMAWrites(cudaFlushGPUDirectRDMAWritesTargetCurrentDevice,
						       cudaFlushGPUDirectRDMAWritesToOwner);
	return e == cudaSuccess ? 0 : errmap_cuda(e);
}

static void memory_cuda_free(struct mem_region *r)
{
	if (!r)
		return;
	if (r->integrated) {
		memory_integrated_free(r);
		return;
	}
	if (r->vmm.va) {
		cudaSetDevice(r->gpu);
		cuvmm_free(&r->vmm);
	} else if (r->dev) {
		cudaSetDevice(r->gpu);
		if (r->imported)
			cudaIpcCloseMemHandle(r->dev);
		else
			cudaFree(r->dev);
	}
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

/* Card DMA and CUDA copies to the ring stay ordered (GPUDirect RDMA rule). */
static void memory_cuda_sync_memops(struct mem_region *r)
{
	PFN_cuPointerSetAttribute_v6000 set;
	unsigned int one = 1;
	CUresult cr;

	set = (PFN_cuPointerSetAttribute_v6000)
		memory_cuda_entry("cuPointerSetAttribute", 6000);
	if (!set)
		return;
	cr = set(&one, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS,
		 (CUdeviceptr)(uintptr_t)r->dev);
	if (cr != CUDA_SUCCESS)
		log_warn("memory: GPU %d: cannot set SYNC_MEMOPS: CUresult %d",
			 r->gpu, (int)cr);
}

/*
 * How lessees will reach a ring on GPU @ordinal, and the size of its
 * allocation (@r->size rounded up to the VMM granule for export fd).
 * -errno only when $FPGAD_TEST_GPU_EXPORT asks for what cannot be.
 */
static int memory_cuda_choose_export(struct mem_region *r, const char *what)
{
	const char *force = getenv(GPU_EXPORT_ENV);
	struct cuvmm_caps caps = { 0 };
	char why[192];
	size_t granule = 0, size;
	int ret;

	if (cuvmm_caps(r->gpu, &caps, why, sizeof(why)) < 0)
		log_warn("memory: %s: GPU %d: %s", what, r->gpu, why);
	ret = gpu_export_choose(&caps, force, &r->gpu_export, why, sizeof(why));
	if (ret < 0) {
		log_err("memory: %s: %s", what, why);
		return ret;
	}
	if (r->gpu_export == GPU_EXPORT_IPC) {
		log_debug("memory: %s: GPU %d: exported with CUDA IPC: %s", what,
			  r->gpu, why);
		return 0;
	}
	ret = cuvmm_granule(r->gpu, &granule, why, sizeof(why));
	size = ret < 0 ? 0 : cuvmm_round(r->size, granule);
	if (!size) {
		log_warn("memory: %s: GPU %d: no VMM granule (%s): exported with CUDA IPC",
			 what, r->gpu, ret < 0 ? why : "too large");
		r->gpu_export = GPU_EXPORT_IPC;
		return force && force[0] ? (ret < 0 ? ret : -EINVAL) : 0;
	}
	r->size = size;
	return 0;
}

/* A VMM ring (export fd): its mapping, and its descriptor kept in @r->fd. */
static int memory_cuda_alloc_vmm(struct mem_region *r, const char *what)
{
	char why[192];
	int ret = cuvmm_alloc(r->gpu, r->size, &r->vmm, &r->fd, why, sizeof(why));

	if (ret < 0) {
		log_err("memory: %s: cannot allocate %zu bytes of VMM memory on GPU %d: %s",
			what, r->size, r->gpu, why);
		return ret;
	}
	r->dev = (void *)(uintptr_t)r->vmm.va;
	return 0;
}

/* A cudaMalloc ring (export ipc): its IPC handle in @r->ipc_handle. */
static int memory_cuda_alloc_ipc(struct mem_region *r, const char *what)
{
	cudaIpcMemHandle_t h;
	cudaError_t e;

	e = cudaMalloc(&r->dev, r->size);
	if (e != cudaSuccess) {
		r->dev = NULL;
		log_err("memory: %s: cannot allocate %zu bytes on GPU %d: %s",
			what, r->size, r->gpu, cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	memory_cuda_sync_memops(r);
	e = cudaIpcGetMemHandle(&h, r->dev);
	if (e != cudaSuccess) {
		log_err("memory: %s: cannot export GPU memory: "
			"cudaIpcGetMemHandle: %s", what, cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	memcpy(r->ipc_handle, &h, sizeof(h));
	return 0;
}

static int memory_cuda_alloc(size_t size, const char *gpu,
			     const char *name_hint, unsigned flags,
			     struct mem_region **ret_region)
{
	const char *what = name_hint ? name_hint : "ring";
	const char *force = getenv(GPU_EXPORT_ENV);
	bool forced = force && force[0];
	struct mem_region *r;
	char why[192];
	cudaError_t e;
	int ordinal, ret;

	(void)flags;
	if (!size || size > SIZE_MAX - MEMORY_CUDA_GRANULE)
		return -EINVAL;
	ret = memory_cuda_probe(gpu, &ordinal, why, sizeof(why));
	if (ret) {
		log_err("memory: %s: %s", what, why);
		return ret;
	}
	if (memory_cuda_integrated(ordinal))
		return memory_cuda_alloc_integrated(size, ordinal, name_hint,
						    flags, ret_region);

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->kind = MEMORY_CUDA;
	r->size = (size + MEMORY_CUDA_GRANULE - 1) / MEMORY_CUDA_GRANULE *
		  MEMORY_CUDA_GRANULE;
	r->gpu = ordinal;
	r->fd = -1;

	e = cudaSetDevice(ordinal);
	if (e != cudaSuccess) {
		log_err("memory: %s: GPU %d: %s", what, ordinal,
			cudaGetErrorString(e));
		ret = errmap_cuda(e);
		goto fail;
	}
	ret = memory_cuda_choose_export(r, what);
	if (ret == 0)
		ret = r->gpu_export == GPU_EXPORT_FD ?
		      memory_cuda_alloc_vmm(r, what) : memory_cuda_alloc_ipc(r, what);
	/* A GPU that said it could and cannot: the legacy export, unless forced. */
	if (ret < 0 && r->gpu_export == GPU_EXPORT_FD && !forced) {
		log_warn("memory: %s: GPU %d: exported with CUDA IPC instead", what, ordinal);
		r->gpu_export = GPU_EXPORT_IPC;
		ret = memory_cuda_alloc_ipc(r, what);
	}
	if (ret < 0)
		goto fail;
	r->rdma_order = memory_cuda_rdma_order(ordinal);
	if (cudaDeviceGetPCIBusId(r->gpu_bus_id, sizeof(r->gpu_bus_id),
				  ordinal) != cudaSuccess)
		r->gpu_bus_id[0] = '\0';

	*ret_region = r;
	return 0;

fail:
	memory_cuda_free(r);
	return ret;
}

static int memory_cuda_export_dmabuf(struct mem_region *r, uint64_t offset,
				     uint64_t len, int *ret_fd)
{
	PFN_cuMemGetHandleForAddressRange_v11070 get;
	long page = sysconf(_SC_PAGESIZE);
	CUresult cr;
	int fd = -1;

	if (!r || !r->dev || !len || offset > r->size ||
	    len > r->size - offset || page <= 0 ||
	    offset % (uint64_t)page || len % (uint64_t)page)
		return -EINVAL;
	if (cudaSetDevice(r->gpu) != cudaSuccess)
		return -ENODEV;
	get = (PFN_cuMemGetHandleForAddressRange_v11070)
		memory_cuda_entry("cuMemGetHandleForAddressRange", 11070);
	if (!get)
		return -EOPNOTSUPP;
	cr = get(&fd, (CUdeviceptr)(uintptr_t)r->dev + offset, len,
		 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (cr != CUDA_SUCCESS) {
		log_err("memory: GPU %d: no dma-buf for %" PRIu64 " bytes: "
			"cuMemGetHandleForAddressRange: CUresult %d", r->gpu,
			len, (int)cr);
		return errmap_cu(cr);
	}
	*ret_fd = fd;
	return 0;
}

/*
 * A client's GPU allocation, for card transfers: opened once here (the
 * caller keeps one region per allocation, however many buffers it holds),
 * its size from the driver so that no buffer reaches past it.
 */
static int memory_cuda_import(const struct mem_import *imp,
			      struct mem_region **ret_region, char *why,
			      size_t whylen)
{
	PFN_cuMemGetAddressRange_v3020 range;
	CUdeviceptr base = 0;
	cudaIpcMemHandle_t h;
	struct mem_region *r;
	size_t size = 0;
	cudaError_t e;
	int ordinal;

	e = cudaDeviceGetByPCIBusId(&ordinal, imp->gpu_bus_id);
	if (e != cudaSuccess) {
		snprintf(why, whylen, "GPU %s is not visible to fpgad: %s",
			 imp->gpu_bus_id, cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	range = (PFN_cuMemGetAddressRange_v3020)
		memory_cuda_entry("cuMemGetAddressRange", 3020);
	if (!range) {
		snprintf(why, whylen, "the CUDA driver has no cuMemGetAddressRange");
		return -EOPNOTSUPP;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->kind = MEMORY_CUDA;
	r->gpu = ordinal;
	r->fd = -1;
	r->imported = true;
	memcpy(&h, imp->ipc_handle, sizeof(h));
	memcpy(r->ipc_handle, imp->ipc_handle, sizeof(r->ipc_handle));
	r->rdma_order = memory_cuda_rdma_order(ordinal);
	snprintf(r->gpu_bus_id, sizeof(r->gpu_bus_id), "%s", imp->gpu_bus_id);
	e = cudaSetDevice(ordinal);
	if (e == cudaSuccess)
		e = cudaIpcOpenMemHandle(&r->dev, h,
					 cudaIpcMemLazyEnablePeerAccess);
	if (e != cudaSuccess) {
		r->dev = NULL;
		snprintf(why, whylen, "cannot open the IPC handle on GPU %s: %s",
			 imp->gpu_bus_id, cudaGetErrorString(e));
		memory_cuda_free(r);
		return errmap_cuda(e);
	}
	if (range(&base, &size, (CUdeviceptr)(uintptr_t)r->dev) !=
	    CUDA_SUCCESS || base != (CUdeviceptr)(uintptr_t)r->dev || !size) {
		snprintf(why, whylen, "cannot tell the size of the allocation");
		memory_cuda_free(r);
		return -EINVAL;
	}
	r->size = size;
	*ret_region = r;
	return 0;
}

const struct memory_ops memory_cuda_ops = {
	.name = "cuda",
	.alloc = memory_cuda_alloc,
	.free = memory_cuda_free,
	.export_dmabuf = memory_cuda_export_dmabuf,
	.import = memory_cuda_import,
};
