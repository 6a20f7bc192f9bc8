# SPDX-License-Identifier: MIT
#
# xfer.mk - card memory transfers' part of the root Makefile (included by
# it): the integration suite's helper client, the queue fuzzer, the GPU
# variants and the benchmark.  The unit and integration suites themselves
# (tests/unit/test_xfer*.c, tests/integration/test_xfer.c) are picked up by
# the Makefile's own rules.

$(BUILD)/itests/xfer_client: $(BUILD)/obj/tests/integration/xfer_client.o \
		$(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

integration: $(BUILD)/itests/xfer_client

# fpgad.conf's sizes are parsed by common/size.c.
$(FUZZ_DIR)/fuzz_config: common/size.c

# fpgad's end of the transfer queue, against a hostile client.
FUZZ_XFER := $(FUZZ_DIR)/fuzz_xfer_queue
$(FUZZ_XFER): tests/fuzz/fuzz_xfer_queue.c daemon/xfer/xfer_server.c \
		daemon/memory/mem_host.c common/log.c common/xfer_ring.c \
		common/frame_ring.c common/futex.c common/wait.c common/clock.c common/spin.c \
		client/xfer_queue.c | $(PROTO_H)
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(FUZZ_DIR)
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)
FUZZ_BIN += $(FUZZ_XFER)
fuzz: $(FUZZ_XFER)

# Transfers against the raw copy of the same size and direction
# (tests/bench/xfer.sh, called by tests/bench/run.sh).
$(BENCH_DIR)/bench_xfer: $(BUILD)/obj/tests/bench/bench_xfer.o \
		$(BENCH_UTIL_OBJ) $(TEST_LIB_GPU) $(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)
bench-bin: $(BENCH_DIR)/bench_xfer

# The GPU variants (tests/gpu/xfer.sh): built where nvcc is, run where a
# GPU is; elsewhere they skip, saying why.
ifeq ($(CUDA),1)
$(GPU_DIR)/gpu_xfer: $(BUILD)/obj/tests/gpu/gpu_xfer.o $(TEST_LIB_GPU) $(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)
gpu: $(GPU_DIR)/gpu_xfer
endif

.PHONY: gpu-xfer-check
gpu-xfer-check: gpu
	@tests/gpu/xfer.sh $(BUILD) $(GPU_DIR)/logs; rc=$$?; \
		if [ $$rc = 77 ]; then exit 0; fi; exit $$rc

