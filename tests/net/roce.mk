# source = roce: fpgad's RoCE v2 path through rdma-core's libibverbs
# (daemon/device/net/roce_verbs.c), and its end-to-end test on an RDMA
# device (tests/net/run-roce.sh; the rxe tier runs it in QEMU).
#
# ROCE=1 (the default where libibverbs-dev is installed) links libibverbs;
# ROCE=0 builds fpgad without it (source = roce then says so at start).
# STATIC=1 defaults to ROCE=dlopen there: a static libibverbs would need
# its providers and libnl linked in, so fpgad loads the host's
# libibverbs.so.1 (and its providers) at run time instead
# (daemon/device/net/roce_ibv_dl.c); a host without rdma-core still starts
# it, and a roce channel there says what to install.  hsb_sender, a test
# tool, gets RoCE with ROCE=1 only.

DEBS += libibverbs-dev ibverbs-providers rdma-core

ifeq ($(origin ROCE),undefined)
ROCE := $(if $(wildcard /usr/include/infiniband/verbs.h),$(if $(filter 1,$(STATIC)),dlopen,1),0)
endif

ROCE_VERBS_OBJ := $(BUILD)/obj/daemon/device/net/roce_verbs.o \
	$(BUILD)/obj/daemon/device/net/roce_ibv_dl.o
ROCE_STAMP := $(BUILD)/.roce-$(ROCE)
# A change of ROCE rebuilds the one object it changes.
$(ROCE_STAMP):
	$(Q)mkdir -p $(dir $@) && rm -f $(BUILD)/.roce-* && touch $@
$(ROCE_VERBS_OBJ): $(ROCE_STAMP)
ifeq ($(ROCE),1)
$(ROCE_VERBS_OBJ): CPPFLAGS += -DFPGAD_ROCE=1
DEP_LIBS += -libverbs
endif
ifeq ($(ROCE),dlopen)
$(ROCE_VERBS_OBJ): CPPFLAGS += -DFPGAD_ROCE=1 -DFPGAD_ROCE_DLOPEN=1
DEP_LIBS += -ldl
endif

HSB_VERBS_OBJ := $(BUILD)/obj/tests/net/hsb_verbs.o
$(HSB_VERBS_OBJ): $(ROCE_STAMP)
ifeq ($(ROCE),1)
$(HSB_VERBS_OBJ): CPPFLAGS += -DFPGAD_ROCE=1
endif
$(HSB_SENDER): $(HSB_VERBS_OBJ)
# hsb_verbs.o comes after the archives in the link: what it takes from them.
$(HSB_SENDER): DEP_LIBS := $(BUILD)/libfpgad-core.a $(DEP_LIBS)

# The RoCE path end to end: needs an RDMA device with a RoCE v2 GID
# (RDMA_DEV, ADDR, ALT_ADDR); skips saying why without one.
.PHONY: roce-check
roce-check: all $(HSB_SENDER) $(NET_CONSUMER)
	@BUILD=$(BUILD) tests/net/run-roce.sh

# What the landing ring costs: fpgad's work per frame against a bare memcpy
# (tests/bench/bench_roce_rx.c; README's RoCE section).
BENCH_ROCE_RX := $(BUILD)/bench/bench_roce_rx
$(BENCH_ROCE_RX): $(BUILD)/obj/tests/bench/bench_roce_rx.o \
		$(BUILD)/obj/tests/bench/bench_util.o $(INTERNAL_LIBS)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(DEP_LIBS)

.PHONY: bench-roce
bench-roce: $(BENCH_ROCE_RX)
	@$(BENCH_ROCE_RX)

# What a RoCE sender controls (landing pages, immediates) through roce_rx.c,
# in `make fuzz` beside the other decoders (tests/fuzz/fuzz.mk).
FUZZ_ROCE_RX := $(FUZZ_DIR)/fuzz_roce_rx
$(FUZZ_ROCE_RX): tests/fuzz/fuzz_roce_rx.c daemon/device/net/roce_rx.c \
		daemon/device/net/roce_wire.c
	$(call msg,FUZZCC,$@)
	$(Q)mkdir -p $(FUZZ_DIR)
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $(filter %.c,$^)
FUZZ_BIN += $(FUZZ_ROCE_RX)
fuzz: $(FUZZ_ROCE_RX)
