# libFuzzer harnesses, one per decoder of untrusted bytes.  `make fuzz`
# builds them (clang, ASan/UBSan) and runs each for FUZZ_SECONDS, going on
# from its corpus of earlier runs (build/fuzz/NAME.corpus); make check runs
# every tier in about 9 minutes on a 2-core machine, so a longer campaign
# is `make fuzz FUZZ_SECONDS=600`.

FUZZ_SECONDS ?= 5
FUZZ_DIR := $(BUILD)/fuzz
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Icommon -Iinclude -Iclient -Idaemon \
	-I$(BUILD)/gen

$(FUZZ_DIR)/fuzz_protocol: tests/fuzz/fuzz_protocol.c common/protocol.c common/names.c \
	$(PROTO_C)
$(FUZZ_DIR)/fuzz_frame_ring: tests/fuzz/fuzz_frame_ring.c client/frame_consumer.c \
	common/frame_ring.c common/futex.c common/wait.c common/clock.c
$(FUZZ_DIR)/fuzz_config: tests/fuzz/fuzz_config.c daemon/config/config.c common/names.c
$(FUZZ_DIR)/fuzz_net_frame: tests/fuzz/fuzz_net_frame.c tests/net/hsb_tx.h \
	daemon/device/net/net_frame.c daemon/device/net/roce_wire.c
$(FUZZ_DIR)/fuzz_net_rx: tests/fuzz/fuzz_net_rx.c tests/net/hsb_tx.h tests/net/rx_sim.h \
	daemon/device/net/net_rx.c daemon/device/net/net_frame.c daemon/device/net/roce_wire.c

FUZZ_BIN := $(FUZZ_DIR)/fuzz_protocol $(FUZZ_DIR)/fuzz_frame_ring $(FUZZ_DIR)/fuzz_config \
	$(FUZZ_DIR)/fuzz_net_frame $(FUZZ_DIR)/fuzz_net_rx

$(FUZZ_BIN): | $(PROTO_H)
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(FUZZ_DIR)
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^) -lprotobuf-c -linih

.PHONY: fuzz
fuzz: $(FUZZ_BIN)
	@set -e; for f in $(FUZZ_BIN); do \
		mkdir -p $$f.corpus; \
		echo "== $$f ($(FUZZ_SECONDS) s)"; \
		$$f -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -print_final_stats=1 \
			$$f.corpus 2>$$f.log || { tail -50 $$f.log; exit 1; }; \
		grep -E '^stat::number_of_executed_units' $$f.log; \
	done

