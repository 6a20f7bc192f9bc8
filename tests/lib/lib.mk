# SPDX-License-Identifier: MIT
#
# lib.mk - helpers that several test tiers link (included by the root
# Makefile): tests/lib/*.c, one object each, named by the programs that
# use them.
#
#   raw_request.o   a control request as protobuf bytes (ring_peer, gpu_stale)
#   gpu_probe_*.o   whether there is a GPU, said the same way (the GPU
#                   suite's and the benchmarks' programs; _cuda or _nocuda
#                   as the build)

TEST_LIB_RAW := $(BUILD)/obj/tests/lib/raw_request.o
TEST_LIB_GPU := $(BUILD)/obj/tests/lib/gpu_probe_$(if $(filter 1,$(CUDA)),cuda,nocuda).o
