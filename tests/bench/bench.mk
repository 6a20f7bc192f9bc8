# Benchmarks (DESIGN.md section 10): every figure a ratio against a
# baseline measured in the same run.
#
#   make bench-bin   build the benchmark programs into $(BUILD)/bench/
#   make bench       build, then run tests/bench/run.sh: BENCHMARKS.md at the
#                    top of the tree and in BENCH_OUT, raw JSON lines beside it
#
# tests/bench/run.sh BUILD [OUT_DIR] runs from built binaries only, so they
# may be built here (STATIC=1) and run on another machine.

BENCH_DIR := $(BUILD)/bench
BENCH_OUT ?= $(BENCH_DIR)/out
BENCH_UTIL_OBJ := $(BUILD)/obj/tests/bench/bench_util.o
BENCH_BIN := $(BENCH_DIR)/bench_copy $(BENCH_DIR)/bench_stream \
	$(BENCH_DIR)/bench_futex $(BENCH_DIR)/bench_ctl
# bench_stream verifies frames in GPU memory with the GPU suite's kernel.
BENCH_CUDA_OBJ := $(if $(filter 1,$(CUDA)),$(GPU_VERIFY_OBJ))

.PHONY: bench-bin

$(BENCH_DIR)/bench_stream: $(BUILD)/obj/tests/bench/bench_stream.o \
		$(BENCH_CUDA_OBJ) $(BENCH_UTIL_OBJ) $(BUILD)/libfpgad.a
$(BENCH_DIR)/bench_ctl: $(BUILD)/obj/tests/bench/bench_ctl.o $(BENCH_UTIL_OBJ) \
		$(BUILD)/libfpgad.a
$(BENCH_DIR)/bench_copy: $(BUILD)/obj/tests/bench/bench_copy.o $(BENCH_UTIL_OBJ) \
		$(TEST_LIB_GPU) $(BUILD)/libfpgad.a
$(BENCH_DIR)/bench_futex: $(BUILD)/obj/tests/bench/bench_futex.o $(BENCH_UTIL_OBJ)
ifeq ($(CUDA),1)
# Another process's GPU copies against a verifying consumer's kernels.
BENCH_BIN += $(BENCH_DIR)/bench_gpuslice
$(BENCH_DIR)/bench_gpuslice: $(BUILD)/obj/tests/bench/bench_gpuslice.o \
		$(GPU_VERIFY_OBJ) $(BENCH_UTIL_OBJ)
endif

$(BENCH_BIN):
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

bench-bin: all $(BENCH_BIN)

bench: bench-bin
	$(Q)tests/bench/run.sh $(BUILD) $(BENCH_OUT)
