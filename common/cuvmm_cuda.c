// SPDX-License-Identifier: MIT
/* cuvmm_cuda.c - VMM rings through the CUDA driver API (cuvmm.h). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cuda.h>
#include <cudaTypedefs.h>

#include "cudriver.h"
#include "cuvmm.h"
#include "errmap.h"

static struct cu_fns {
	PFN_cuDeviceGet_v2000 device_get;
	PFN_cuDeviceGetAttribute_v2000 attribute;
	PFN_cuMemGetAllocationGranularity_v10020 granularity;
	PFN_cuMemCreate_v10020 create;
	PFN_cuMemRelease_v10020 release;
	PFN_cuMemAddressReserve_v10020 reserve;
	PFN_cuMemAddressFree_v10020 address_free;
	PFN_cuMemMap_v10020 map;
	PFN_cuMemUnmap_v10020 unmap;
	PFN_cuMemSetAccess_v10020 set_access;
	PFN_cuMemExportToShareableHandle_v10020 export_fd;
	PFN_cuMemImportFromShareableHandle_v10020 import_fd;
	char why[192];			/* why one is missing, else "" */
} cu;
static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

static void cu_load(void)
{
	static const struct {
		size_t at;		/* the field of cu */
		const char *symbol;
		unsigned version;
	} fns[] = {
#define FN(field, sym, ver) { offsetof(struct cu_fns, field), sym, ver }
		FN(device_get, "cuDeviceGet", 2000),
		FN(attribute, "cuDeviceGetAttribute", 2000),
		FN(granularity, "cuMemGetAllocationGranularity", 10020),
		FN(create, "cuMemCreate", 10020),
		FN(release, "cuMemRelease", 10020),
		FN(reserve, "cuMemAddressReserve", 10020),
		FN(address_free, "cuMemAddressFree", 10020),
		FN(map, "cuMemMap", 10020),
		FN(unmap, "cuMemUnmap", 10020),
		FN(set_access, "cuMemSetAccess", 10020),
		FN(export_fd, "cuMemExportToShareableHandle", 10020),
		FN(import_fd, "cuMemImportFromShareableHandle", 10020),
#undef FN
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]) && !cu.why[0]; i++)
		*(void **)((char *)&cu + fns[i].at) =
			cudriver_entry(fns[i].symbol, fns[i].version, cu.why,
				       sizeof(cu.why));
}

/* The driver's functions, or -ENODEV with @why. */
static int cu_ready(char *why, size_t whylen)
{
	pthread_once(&cu_once, cu_load);
	if (!cu.why[0])
		return 0;
	snprintf(why, whylen, "%s", cu.why);
	return -ENODEV;
}

/* @what failed with @r: its errno, @why saying it. */
static int cu_fail(CUresult r, const char *what, char *why, size_t whylen)
{
	snprintf(why, whylen, "%s: CUresult %d", what, (int)r);
	return errmap_cu(r);
}

static void cu_prop(CUdevice dev, CUmemAllocationProp *p)
{
	*p = (CUmemAllocationProp){
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = dev },
	};
	p->allocFlags.gpuDirectRDMACapable = 1;
}

static int cu_device(int ordinal, CUdevice *ret, char *why, size_t whylen)
{
	CUresult r;
	int e = cu_ready(why, whylen);

	if (e)
		return e;
	r = cu.device_get(ret, ordinal);
	return r == CUDA_SUCCESS ? 0 : cu_fail(r, "cuDeviceGet", why, whylen);
}

int cuvmm_caps(int ordinal, struct cuvmm_caps *ret, char *why, size_t whylen)
{
	int vmm = 0, fd = 0, rdma = 0;
	CUdevice dev;
	int e = cu_device(ordinal, &dev, why, whylen);

	if (e)
		return e;
	if (cu.attribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev) ||
	    cu.attribute(&fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev) ||
	    cu.attribute(&rdma, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, dev)) {
		snprintf(why, whylen, "cuDeviceGetAttribute failed on GPU %d", ordinal);
		return -EIO;
	}
	*ret = (struct cuvmm_caps){ .vmm = vmm, .posix_fd = fd, .rdma = rdma };
	return 0;
}

int cuvmm_granule(int ordinal, size_t *ret, char *why, size_t whylen)
{
	CUmemAllocationProp p;
	CUdevice dev;
	CUresult r;
	int e = cu_device(ordinal, &dev, why, whylen);

	if (e)
		return e;
	cu_prop(dev, &p);
	r = cu.granularity(ret, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
	if (r != CUDA_SUCCESS)
		return cu_fail(r, "cuMemGetAllocationGranularity", why, whylen);
	if (!*ret || (*ret & (*ret - 1))) {
		snprintf(why, whylen, "GPU %d: granule %zu is not a power of two",
			 ordinal, *ret);
		return -EIO;
	}
	return 0;
}

/*
 * Map allocation @h (@size bytes) at fresh addresses, readable and
 * writable by @devs (n_devs of them).  The mapping holds the allocation.
 */
static int cu_map(CUmemGenericAllocationHandle h, size_t size,
		  const CUdevice *devs, unsigned n_devs, struct cuvmm *ret,
		  char *why, size_t whylen)
{
	CUmemAccessDesc acc[2];
	CUdeviceptr va = 0;
	CUresult r;
	const char *what = "cuMemAddressReserve";

	r = cu.reserve(&va, size, 0, 0, 0);
	if (r == CUDA_SUCCESS) {
		what = "cuMemMap";
		r = cu.map(va, size, 0, h, 0);
		if (r != CUDA_SUCCESS) {
			cu.address_free(va, size);
			va = 0;
		}
	}
	for (unsigned i = 0; r == CUDA_SUCCESS && i < n_devs; i++)
		acc[i] = (CUmemAccessDesc){
			.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE,
				      .id = devs[i] },
			.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
		};
	if (r == CUDA_SUCCESS) {
		what = "cuMemSetAccess";
		r = cu.set_access(va, size, acc, n_devs);
		if (r != CUDA_SUCCESS) {
			cu.unmap(va, size);
			cu.address_free(va, size);
		}
	}
	if (r != CUDA_SUCCESS)
		return cu_fail(r, what, why, whylen);
	*ret = (struct cuvmm){ .va = va, .size = size };
	return 0;
}

int cuvmm_alloc(int ordinal, size_t size, struct cuvmm *ret, int *ret_fd,
		char *why, size_t whylen)
{
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp p;
	CUdevice dev;
	CUresult r;
	int fd = -1, e = cu_device(ordinal, &dev, why, whylen);

	if (e)
		return e;
	cu_prop(dev, &p);
	r = cu.create(&h, size, &p, 0);
	if (r != CUDA_SUCCESS)
		return cu_fail(r, "cuMemCreate", why, whylen);
	r = cu.export_fd(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
	if (r != CUDA_SUCCESS) {
		e = cu_fail(r, "cuMemExportToShareableHandle", why, whylen);
	} else {
		/* Handed to lessees, never to a program this one starts. */
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		e = cu_map(h, size, &dev, 1, ret, why, whylen);
	}
	/* The mapping and the descriptor hold it now. */
	cu.release(h);
	if (e) {
		if (fd >= 0)
			close(fd);
		return e;
	}
	*ret_fd = fd;
	return 0;
}

int cuvmm_import(int fd, size_t size, int owner, int user, struct cuvmm *ret,
		 char *why, size_t whylen)
{
	CUmemGenericAllocationHandle h;
	CUdevice devs[2];
	unsigned n = 1;
	CUresult r;
	int e = cu_device(owner, &devs[0], why, whylen);

	if (!e && user >= 0 && user != owner) {
		e = cu_device(user, &devs[1], why, whylen);
		n = 2;
	}
	if (e)
		return e;
	r = cu.import_fd(&h, (void *)(uintptr_t)fd,
			 CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
	if (r != CUDA_SUCCESS)
		return cu_fail(r, "cuMemImportFromShareableHandle", why, whylen);
	e = cu_map(h, size, devs, n, ret, why, whylen);
	cu.release(h);
	return e;
}

void cuvmm_free(struct cuvmm *m)
{
	if (!m || !m->va)
		return;
	cu.unmap(m->va, m->size);
	cu.address_free(m->va, m->size);
	*m = (struct cuvmm){ 0 };
}
