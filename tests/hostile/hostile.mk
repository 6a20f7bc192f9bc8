# The hostile-client tier: real fpgad processes attacked by peers that
# speak the protocol byte for byte, from other uids where it matters.
# `make hostile` builds the peer and runs tests/hostile/run.sh (cases that
# need root to switch users skip with the reason when not run as root).

HOSTILE_DIR := $(BUILD)/hostile
HOSTILE_PEER := $(HOSTILE_DIR)/hostile_peer
RING_PEER := $(HOSTILE_DIR)/ring_peer
OBJECT_PEER := $(HOSTILE_DIR)/object_peer

$(HOSTILE_PEER): $(BUILD)/obj/tests/hostile/hostile_peer.o $(BUILD)/libfpgad-common.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lprotobuf-c

$(RING_PEER): $(BUILD)/obj/tests/hostile/ring_peer.o $(TEST_LIB_RAW) $(BUILD)/libfpgad-common.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lnng -lprotobuf-c

$(OBJECT_PEER): $(BUILD)/obj/tests/hostile/object_peer.o $(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

.PHONY: hostile
hostile: all $(HOSTILE_PEER) $(RING_PEER) $(OBJECT_PEER)
	@BUILD=$(BUILD) tests/hostile/run.sh

