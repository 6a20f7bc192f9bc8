/* SPDX-License-Identifier: MIT */
/*
 * gpu_probe.h - whether a test or benchmark program has a GPU to run on,
 * said the same way by each (gpu_probe_cuda.c where CUDA is built,
 * gpu_probe_nocuda.c elsewhere).
 */
#ifndef FPGAD_TEST_GPU_PROBE_H
#define FPGAD_TEST_GPU_PROBE_H

/*
 * 0 after printing "N CUDA device(s), device 0: NAME"; 77 (a skip) after
 * printing "no GPU: why".
 */
int test_gpu_probe(void);

#endif
