// SPDX-License-Identifier: MIT
/* errmap_cuda.c - CUDA runtime and driver codes as errno values (errmap.h). */
#include <dlfcn.h>
#include <errno.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "errmap.h"

int errmap_cuda(int cuda_error)
{
	switch ((enum cudaError)cuda_error) {
	case cudaSuccess:
		return 0;
	case cudaErrorMemoryAllocation:
		return -ENOMEM;
	case cudaErrorInvalidValue:
	case cudaErrorInvalidDevicePointer:
		return -EINVAL;
	case cudaErrorInvalidResourceHandle:
	case cudaErrorMapBufferObjectFailed:
		return -EBADF;
	case cudaErrorInvalidDevice:
	case cudaErrorInitializationError:
	case cudaErrorInsufficientDriver:
	case cudaErrorNoDevice:
	case cudaErrorStubLibrary:
	case cudaErrorDevicesUnavailable:
	case cudaErrorSystemDriverMismatch:
	case cudaErrorCompatNotSupportedOnDevice:
	case cudaErrorCudartUnloading:
		return -ENODEV;
	case cudaErrorNotSupported:
		return -EOPNOTSUPP;
	case cudaErrorNotPermitted:
		return -EPERM;
	case cudaErrorHostMemoryAlreadyRegistered:
		return -EEXIST;
	case cudaErrorHostMemoryNotRegistered:
		return -ENOENT;
	case cudaErrorNotReady:
		return -EAGAIN;
	case cudaErrorLaunchTimeout:
		return -ETIMEDOUT;
	default:
		return -EIO;
	}
}

int errmap_cu(int cu_result)
{
	switch ((CUresult)cu_result) {
	case CUDA_SUCCESS:
		return 0;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return -ENOMEM;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_INVALID_CONTEXT:
	case CUDA_ERROR_INVALID_HANDLE:
		return -EINVAL;
	case CUDA_ERROR_INVALID_DEVICE:
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_DEINITIALIZED:
	case CUDA_ERROR_NO_DEVICE:
	case CUDA_ERROR_STUB_LIBRARY:
		return -ENODEV;
	case CUDA_ERROR_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	case CUDA_ERROR_NOT_PERMITTED:
		return -EPERM;
	default:
		return -EIO;
	}
}

const char *errmap_cuda_str(int cuda_error)
{
	void *lib;

	/*
	 * The runtime says "driver version is insufficient" also when there
	 * is no driver at all: the library it loads is not there.
	 */
	if (cuda_error == cudaErrorInsufficientDriver) {
		lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
		if (!lib)
			return "no NVIDIA driver (libcuda.so.1 not found)";
		dlclose(lib);
		return "the NVIDIA driver is older than this CUDA runtime (update the driver)";
	}
	if (cuda_error == cudaErrorNoDevice)
		return "no NVIDIA GPU (the driver sees none)";
	return cudaGetErrorString((cudaError_t)cuda_error);
}
