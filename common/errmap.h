/* SPDX-License-Identifier: MIT */
/*
 * errmap.h - the one place foreign error codes become negative errno
 * values: nng's (errmap.c, both sides) and CUDA's runtime and driver codes
 * (errmap_cuda.c, CUDA builds only).
 */
#ifndef FPGAD_COMMON_ERRMAP_H
#define FPGAD_COMMON_ERRMAP_H

/* 0 for 0, else a negative errno for an nng error code. */
int errmap_nng(int nng_err);
/* 0 for cudaSuccess, else a negative errno for a cudaError_t. */
int errmap_cuda(int cuda_error);
/*
 * A cudaError_t in words an operator can act on: "no NVIDIA driver
 * (libcuda.so.1 not found)" where the runtime says the driver is too old
 * but there is none, else the runtime's words.
 */
const char *errmap_cuda_str(int cuda_error);
/* 0 for CUDA_SUCCESS, else a negative errno for a CUresult. */
int errmap_cu(int cu_result);

#endif
