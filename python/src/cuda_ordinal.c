// SPDX-License-Identifier: MIT
/*
 * cuda_ordinal.c - which CUDA device, by this process's numbering, holds a
 * ring that libfpgad mapped: DLPack names devices by ordinal, and fpgad's
 * ordinal may differ from ours (CUDA_VISIBLE_DEVICES).  Asked of the CUDA
 * driver, which libfpgad has already loaded, through dlopen, so the module
 * needs no CUDA library at link time and builds the same either way.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>

#include "pyfpgad.h"

/* From the CUDA driver API (cuda.h): CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL. */
#define CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9

typedef int (*cu_init_fn)(unsigned int flags);
typedef int (*cu_pointer_attr_fn)(void *data, int attribute, unsigned long long ptr);
typedef int (*cu_device_by_bus_fn)(int *dev, const char *bus_id);

int pyfpgad_cuda_ordinal(const void *ptr, const char *bus_id)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	cu_init_fn init;
	cu_pointer_attr_fn attr;
	cu_device_by_bus_fn by_bus;
	int ordinal = -1, r = -ENODEV;

	if (!lib)
		return -ENODEV;
	init = (cu_init_fn)dlsym(lib, "cuInit");
	attr = (cu_pointer_attr_fn)dlsym(lib, "cuPointerGetAttribute");
	by_bus = (cu_device_by_bus_fn)dlsym(lib, "cuDeviceGetByPCIBusId");
	if (!init || init(0) != 0)
		goto out;
	if (ptr && attr && attr(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
				(unsigned long long)(uintptr_t)ptr) == 0 && ordinal >= 0) {
		r = ordinal;
		goto out;
	}
	if (bus_id && bus_id[0] && by_bus && by_bus(&ordinal, bus_id) == 0 && ordinal >= 0)
		r = ordinal;
out:
	dlclose(lib);
	return r;
}
