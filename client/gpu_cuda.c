// SPDX-License-Identifier: MIT
/*
 * gpu_cuda.c - GPU memory through the CUDA runtime: fpgad's rings mapped
 * here, and this process's buffers exported for fpgad.
 */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client_internal.h"
#include "clock.h"
#include "cudriver.h"
#include "errmap.h"

/*
 * The GPU the calling thread works on: the device of its current CUDA
 * context, or -1 when it has none (it never chose one).
 */
static int caller_gpu(void)
{
	PFN_cuCtxGetCurrent_v4000 get_current;
	PFN_cuCtxGetDevice_v2000 get_device;
	CUcontext ctx = NULL;
	CUdevice dev;
	char why[128];

	get_current = (PFN_cuCtxGetCurrent_v4000)cudriver_entry("cuCtxGetCurrent", 4000,
								 why, sizeof(why));
	get_device = (PFN_cuCtxGetDevice_v2000)cudriver_entry("cuCtxGetDevice", 2000,
							       why, sizeof(why));
	if (!get_current || !get_device || get_current(&ctx) != CUDA_SUCCESS || !ctx ||
	    get_device(&dev) != CUDA_SUCCESS)
		return -1;
	return (int)dev;
}

/* "GPU 1 (0000:41:00.0)" into @buf. */
static const char *gpu_name(int gpu, char *buf, size_t len)
{
	char id[32];

	if (cudaDeviceGetPCIBusId(id, sizeof(id), gpu) != cudaSuccess) {
		cudaGetLastError();
		snprintf(id, sizeof(id), "bus id unknown");
	}
	snprintf(buf, len, "GPU %d (%s)", gpu, id);
	return buf;
}

/*
 * Why CUDA cannot start in this process when its surroundings are the
 * cause, in a container user's words, or "": CUDA needs this process's own
 * /proc (a new PID namespace without its own /proc mount breaks it).  Said
 * instead of CUDA's error ("OS call failed or operation not supported on
 * this OS"), so that it fits the error message.
 */
static const char *cuda_surroundings(cudaError_t e)
{
	char link[32];
	ssize_t n;

	if (e != cudaErrorOperatingSystem && e != cudaErrorInitializationError &&
	    e != cudaErrorNoDevice && e != cudaErrorInsufficientDriver)
		return "";
	n = readlink("/proc/self", link, sizeof(link) - 1);
	if (n < 0)
		return "CUDA cannot start without /proc: mount it";
	link[n] = '\0';
	if (atoi(link) != (int)getpid())
		return "CUDA cannot start in a PID namespace whose /proc is another's: mount /proc inside it (unshare --mount-proc)";
	return "";
}

/* Why a CUDA call failed: the surroundings' cause, else CUDA's word. */
static const char *cuda_why(cudaError_t e)
{
	const char *s = cuda_surroundings(e);

	return s[0] ? s : errmap_cuda_str(e);
}

/* The ring's GPU here: by PCI bus id where fpgad gave one (else *@gpu). */
static int ring_gpu(int *gpu, const char *bus_id, char *why, size_t whylen)
{
	cudaError_t e;

	if (!bus_id || !bus_id[0])
		return 0;
	e = cudaDeviceGetByPCIBusId(gpu, bus_id);
	if (e != cudaSuccess) {
		snprintf(why, whylen, "GPU %s is not visible here: %s", bus_id,
			 cuda_why(e));
		return errmap_cuda(e);
	}
	return 0;
}

/* @ptr registered for every GPU, and its address for kernels. */
static cudaError_t register_mapped(void *ptr, size_t len, unsigned flags,
				   void **ret_dev)
{
	cudaError_t e = cudaHostRegister(ptr, len, cudaHostRegisterMapped |
					 cudaHostRegisterPortable | flags);

	if (e == cudaSuccess) {
		e = cudaHostGetDevicePointer(ret_dev, ptr, 0);
		if (e != cudaSuccess)
			cudaHostUnregister(ptr);
	}
	return e;
}

/*
 * An integrated GPU's ring (export host): its memfd's mapping registered
 * for every GPU, so that a thread on any GPU reads it; a thread that chose
 * no GPU registers it on the ring's (made current).
 */
static int map_host_ring(const struct gpu_ring_ref *ref, int gpu, uint64_t t0,
			 struct gpu_mapping *ret, char *why, size_t whylen)
{
	cudaError_t e = cudaSuccess;
	uint64_t t1;
	void *host = ref->host;

	if (caller_gpu() < 0)
		e = cudaSetDevice(gpu);
	t1 = clock_now_ns();
	ret->cuda_ns = t1 - t0;
	if (e != cudaSuccess) {
		snprintf(why, whylen, "%s", cuda_why(e));
		return errmap_cuda(e);
	}
	e = register_mapped(host, ref->size,
			    ref->read_only ? cudaHostRegisterReadOnly : 0, &ret->ptr);
	ret->map_ns = clock_now_ns() - t1;
	if (e != cudaSuccess) {
		ret->ptr = NULL;
		snprintf(why, whylen, "cannot register its host memory with CUDA (cudaHostRegister%s): %s",
			 ref->read_only ? ", read-only" : "", cuda_why(e));
		return errmap_cuda(e);
	}
	ret->host = host;
	ret->host_len = ref->size;
	return 0;
}

/*
 * A thread that works on another GPU than the ring's maps the ring on its
 * own GPU through peer access, where the pair allows it; a thread that
 * chose no GPU maps it on the ring's (made current).
 */
int gpu_map(const struct gpu_ring_ref *ref, struct gpu_mapping *ret,
	    char *why, size_t whylen)
{
	char ring[64], own[64];
	cudaIpcMemHandle_t h;
	cudaError_t e = cudaSuccess;
	int cur, can = 0, gpu = ref->gpu, r;
	uint64_t t0 = clock_now_ns(), t1;

	memset(ret, 0, sizeof(*ret));
	r = ring_gpu(&gpu, ref->bus_id, why, whylen);
	if (r < 0)
		return r;
	if (ref->export == GPU_EXPORT_HOST)
		return map_host_ring(ref, gpu, t0, ret, why, whylen);
	cur = caller_gpu();
	if (cur >= 0 && cur != gpu) {
		e = cudaDeviceCanAccessPeer(&can, cur, gpu);
		if (e != cudaSuccess || !can) {
			cudaGetLastError();
			snprintf(why, whylen, "the ring is on %s and this thread works on %s: the pair has no peer access (cudaDeviceCanAccessPeer); consume on %s",
				 gpu_name(gpu, ring, sizeof(ring)), gpu_name(cur, own, sizeof(own)),
				 ring);
			return -EXDEV;
		}
	} else {
		e = cudaSetDevice(gpu);
	}
	t1 = clock_now_ns();
	ret->cuda_ns = t1 - t0;
	if (e == cudaSuccess && ref->export == GPU_EXPORT_FD) {
		r = cuvmm_import(ref->fd, ref->size, gpu, cur, &ret->vmm, why, whylen);
		ret->map_ns = clock_now_ns() - t1;
		if (r < 0)
			return r;
		ret->ptr = (void *)(uintptr_t)ret->vmm.va;
		return 0;
	}
	if (e == cudaSuccess) {
		memcpy(&h, ref->ipc_handle, sizeof(h));
		e = cudaIpcOpenMemHandle(&ret->ptr, h, cudaIpcMemLazyEnablePeerAccess);
		ret->map_ns = clock_now_ns() - t1;
	}
	if (e != cudaSuccess && cur >= 0 && cur != gpu) {
		snprintf(why, whylen, "the ring is on %s, this thread works on %s: cannot map it through peer access: %s",
			 gpu_name(gpu, ring, sizeof(ring)), gpu_name(cur, own, sizeof(own)),
			 cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	if (e != cudaSuccess) {
		snprintf(why, whylen, "cannot map it: %s",
			 cuda_why(e));
		return errmap_cuda(e);
	}
	return 0;
}

void gpu_unmap(struct gpu_mapping *m)
{
	if (m->host) {
		cudaHostUnregister(m->host);
		munmap(m->host, m->host_len);
	} else if (m->vmm.va) {
		cuvmm_free(&m->vmm);
	} else if (m->ptr) {
		cudaIpcCloseMemHandle(m->ptr);
	}
	memset(m, 0, sizeof(*m));
}

int gpu_host_alloc(size_t len, void **ret_ptr)
{
	return errmap_cuda(cudaMallocHost(ret_ptr, len));
}

void gpu_host_free(void *ptr)
{
	if (ptr)
		cudaFreeHost(ptr);
}

int gpu_to_host(void *dst, const void *src_dev, size_t len)
{
	return errmap_cuda(cudaMemcpy(dst, src_dev, len, cudaMemcpyDeviceToHost));
}

/*
 * cudaMemcpy from pageable memory may return once the bytes are staged,
 * before they land; a card reading the slot next must see them, so wait
 * for the copy itself on a stream of the library's.
 */
int gpu_from_host(void *dst_dev, const void *src, size_t len)
{
	cudaStream_t s;
	cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);

	if (e != cudaSuccess)
		return errmap_cuda(e);
	e = cudaMemcpyAsync(dst_dev, src, len, cudaMemcpyHostToDevice, s);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s);
	cudaStreamDestroy(s);
	return errmap_cuda(e);
}

int gpu_register_host(void *ptr, size_t len, void **ret_dev)
{
	return errmap_cuda(register_mapped(ptr, len, 0, ret_dev));
}

void gpu_unregister_host(void *ptr)
{
	cudaHostUnregister(ptr);
}

int gpu_stream_write32(void *stream, void *dev_addr, uint32_t value)
{
	static PFN_cuStreamWriteValue32_v11070 write32;
	enum cudaDriverEntryPointQueryResult q;
	CUresult r;

	if (!write32 &&
	    (cudaGetDriverEntryPointByVersion("cuStreamWriteValue32",
					      (void **)&write32, 11070,
					      cudaEnableDefault, &q) !=
	     cudaSuccess || q != cudaDriverEntryPointSuccess || !write32)) {
		write32 = NULL;
		return -EOPNOTSUPP;
	}
	/* The default flags fence the write after the stream's earlier work. */
	r = write32((CUstream)stream, (CUdeviceptr)(uintptr_t)dev_addr, value,
		    CU_STREAM_WRITE_VALUE_DEFAULT);
	return errmap_cu(r);
}

int gpu_pointer(const void *ptr, int *ret_gpu, char *why, size_t whylen)
{
	struct cudaPointerAttributes a;
	cudaError_t e = cudaPointerGetAttributes(&a, ptr);

	if (e != cudaSuccess) {
		/* No driver, no device: nothing here is GPU memory. */
		cudaGetLastError();
		return 0;
	}
	switch (a.type) {
	case cudaMemoryTypeDevice:
		*ret_gpu = a.device;
		return 1;
	case cudaMemoryTypeManaged:
		snprintf(why, whylen, "managed memory cannot be exported with "
			 "CUDA IPC: use cudaMalloc");
		return -EINVAL;
	default:
		return 0;
	}
}

int gpu_export(const void *ptr, int gpu, uint8_t *ret_handle,
	       uint64_t *ret_offset, char *bus_id, size_t idlen, char *why,
	       size_t whylen)
{
	PFN_cuMemGetAddressRange_v3020 range;
	CUdeviceptr base = 0;
	cudaIpcMemHandle_t h;
	size_t size = 0;
	cudaError_t e;

	range = (PFN_cuMemGetAddressRange_v3020)
		cudriver_entry("cuMemGetAddressRange", 3020, why, whylen);
	if (!range)
		return -EOPNOTSUPP;
	e = cudaSetDevice(gpu);
	if (e == cudaSuccess &&
	    range(&base, &size, (CUdeviceptr)(uintptr_t)ptr) != CUDA_SUCCESS) {
		snprintf(why, whylen, "cannot find the allocation of %p", ptr);
		return -EINVAL;
	}
	if (e == cudaSuccess)
		e = cudaIpcGetMemHandle(&h, (void *)(uintptr_t)base);
	if (e == cudaSuccess)
		e = cudaDeviceGetPCIBusId(bus_id, (int)idlen, gpu);
	if (e != cudaSuccess) {
		snprintf(why, whylen, "cannot export it: %s",
			 cudaGetErrorString(e));
		return errmap_cuda(e);
	}
	memcpy(ret_handle, &h, sizeof(h));
	*ret_offset = (uint64_t)((uintptr_t)ptr - (uintptr_t)base);
	return 0;
}
