# The GPU suite (DESIGN.md section 9, tier 5): a CUDA kernel that verifies
# frames in place in GPU memory and a client program that uses it.
#
#   make gpu         build $(BUILD)/gpu/gpu_client (needs nvcc: CUDA=1)
#   make gpu-check   run tests/gpu/run.sh; skips (and passes) without a GPU
#
# tests/gpu/run.sh BUILD [LOGDIR] runs the suite from built binaries only,
# so they may be built here (STATIC=1) and run on another machine.

GPU_DIR := $(BUILD)/gpu
GPU_ARCH ?= -gencode arch=compute_90,code=[sm_90,compute_90]
NVCC_FLAGS := -O2 -std=c++17 $(GPU_ARCH) -Iinclude -Itests/gpu \
	-Xcompiler -Wall,-Wextra,-fno-exceptions,-fno-rtti,-fno-threadsafe-statics
GPU_VERIFY_OBJ := $(GPU_DIR)/verify_kernel.o
GPU_BIN := $(GPU_DIR)/gpu_client $(GPU_DIR)/gpu_h2c $(GPU_DIR)/gpu_stale \
	$(GPU_DIR)/gpu_roce_landing

.PHONY: gpu gpu-check

ifeq ($(CUDA),1)
$(GPU_VERIFY_OBJ): tests/gpu/verify_kernel.cu tests/gpu/gpu_verify.h \
		include/fpgad_simframe.h
	$(call msg,NVCC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(NVCC_FLAGS) -c -o $@ $<

$(GPU_DIR)/gpu_client: $(BUILD)/obj/tests/gpu/gpu_client.o $(GPU_VERIFY_OBJ) \
		$(TEST_LIB_GPU) $(BUILD)/libfpgad.a
$(GPU_DIR)/gpu_h2c: $(BUILD)/obj/tests/gpu/gpu_h2c.o $(GPU_VERIFY_OBJ) \
		$(BUILD)/libfpgad.a

$(GPU_DIR)/gpu_stale: $(BUILD)/obj/tests/gpu/gpu_stale.o $(TEST_LIB_RAW) $(BUILD)/libfpgad.a

# A RoCE channel's GPU landing ring with a stand-in for the NIC.
$(GPU_DIR)/gpu_roce_landing: $(BUILD)/obj/tests/gpu/gpu_roce_landing.o \
		$(GPU_VERIFY_OBJ) $(BUILD)/obj/tests/bench/bench_util.o $(INTERNAL_LIBS)

$(GPU_BIN):
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

gpu: all $(GPU_BIN)
else
gpu:
	@echo "gpu: not built: CUDA=0 (nvcc not found, or CUDA=0 given; set NVCC= or CUDA_HOME=)"
endif

# Exit status 77 of run.sh is a skip (no GPU): it prints why and passes.
gpu-check: gpu
	@tests/gpu/run.sh $(BUILD) $(GPU_DIR)/logs; rc=$$?; \
		if [ $$rc = 77 ]; then exit 0; fi; exit $$rc

