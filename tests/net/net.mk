# Network sources: the UDP path end to end over a veth pair between network
# namespaces (root; skips saying why otherwise).  `make net-check` builds
# the sender (tests/net/hsb_sender.c) and runs tests/net/run.sh.

# ip(8) makes the veth pair and the namespaces.
DEBS += iproute2

NET_DIR := $(BUILD)/net
HSB_SENDER := $(NET_DIR)/hsb_sender
NET_CONSUMER := $(NET_DIR)/net_consumer

$(BUILD)/obj/tests/net/%.o: INC_DIR := $(INC_DAEMON) -Itests/net

$(HSB_SENDER): $(BUILD)/obj/tests/net/hsb_sender.o $(INTERNAL_LIBS)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

# Written against fpgad.h alone, as a consumer would be.
$(NET_CONSUMER): $(BUILD)/obj/tests/net/net_consumer.o $(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

.PHONY: net-check
net-check: all $(HSB_SENDER) $(NET_CONSUMER)
	@BUILD=$(BUILD) tests/net/run.sh


# The benchmark: fpgad's UDP path against a bare recvmmsg loop, same sender,
# same run (tests/bench/net.sh; BENCHMARKS.md's network section).
BENCH_RECV := $(BUILD)/bench/bench_recv
$(BENCH_RECV): $(BUILD)/obj/tests/bench/bench_recv.o $(BUILD)/obj/tests/bench/bench_util.o
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

# The tier's programs; bench-bin builds them too, for the GPU host's run.
.PHONY: net-bin
net-bin: all $(HSB_SENDER) $(NET_CONSUMER) $(BENCH_RECV)
bench-bin: net-bin

.PHONY: bench-net
bench-net: all $(HSB_SENDER) $(NET_CONSUMER) $(BENCH_RECV)
	@BUILD=$(BUILD) tests/bench/net.sh
