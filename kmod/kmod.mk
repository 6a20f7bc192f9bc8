# SPDX-License-Identifier: MIT
#
# kmod.mk - the kernel module's part of the root Makefile (included by it).
#
#   make kmod         build kmod/fpgad_dma.ko against Debian's kernel headers,
#                     warnings are errors
#   make kmod-check   kmod, the guest test program, tests/kmod/run.sh (QEMU)
#   make kmod-bringup the bring-up program for a real card
#                     (tests/kmod/bringup.sh runs it; see README)
#   make kmod-clean
#
# KMOD_KVER picks the kernel (default: the newest installed
# /usr/src/linux-headers-*-amd64, else the running kernel); NVIDIA_SRC=
# builds PIN_NVP2P in.  A test that cannot run prints why and is skipped;
# KMOD_STRICT=1 turns a skip into a failure.

ifeq ($(origin KMOD_KVER),undefined)
KMOD_KVER := $(or $(patsubst /usr/src/linux-headers-%,%,$(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1)),$(shell uname -r))
endif
KMOD_KDIR ?= $(firstword $(wildcard /usr/src/linux-headers-$(KMOD_KVER)) /lib/modules/$(KMOD_KVER)/build)
KMOD_KO := kmod/fpgad_dma.ko
KMOD_GUEST := $(BUILD)/tests/kmod/kmod_test
KMOD_STRICT ?= 0
NVIDIA_SRC ?=

.PHONY: kmod kmod-check kmod-clean kmod-bringup

# Kbuild tracks its own dependencies: always ask it.
kmod:
	@if [ ! -f $(KMOD_KDIR)/Makefile ]; then \
		echo "kmod: no kernel headers for $(KMOD_KVER) in $(KMOD_KDIR) (apt-get install linux-headers-amd64)"; \
		exit 1; fi
	$(call msg,KMOD,$(KMOD_KO))
	$(Q)mkdir -p $(BUILD)
	$(Q)rc=0; $(MAKE) --no-print-directory -C $(KMOD_KDIR) M=$(CURDIR)/kmod \
		KCFLAGS=-Werror NVIDIA_SRC=$(NVIDIA_SRC) \
		$(if $(filter 1,$(V)),V=1,-s) modules >$(BUILD)/kmod.log 2>&1 || rc=$$?; \
		grep -v -e 'Skipping BTF generation' $(BUILD)/kmod.log; exit $$rc

# The guest program links the daemon's xdma backend to drive it as well.
KMOD_GUEST_SRC := tests/kmod/kmod_test.c tests/kmod/kmod_xfer.c daemon/device/xdma/device_xdma.c daemon/service/log.c \
	common/clock.c

$(KMOD_GUEST): $(KMOD_GUEST_SRC) tests/kmod/kmod_xfer.h kmod/uapi/fpgad_dma.h daemon/device/device.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -static -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror \
		-Ikmod/uapi -Idaemon -Icommon -I/usr/include/libdrm -o $@ \
		$(KMOD_GUEST_SRC) -lpthread

# Links the daemon's memory backend: a GPU dma-buf where CUDA is built in.
KMOD_BRINGUP := $(BUILD)/tests/kmod/bringup

$(KMOD_BRINGUP): $(BUILD)/obj/tests/kmod/bringup.o $(BUILD)/libfpgad-core.a \
		$(BUILD)/libfpgad-common.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

# Built and its script parsed in make check; run only on a card's host.
kmod-bringup: $(KMOD_BRINGUP)
	$(Q)sh -n tests/kmod/bringup.sh
	$(Q)$(KMOD_BRINGUP) -h >/dev/null

kmod-check:
	$(Q)if [ ! -f $(KMOD_KDIR)/Makefile ]; then \
		echo "kmod-check: SKIP: no kernel headers for $(KMOD_KVER) (apt-get install linux-headers-amd64)"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi; \
	$(MAKE) --no-print-directory kmod && \
	$(MAKE) --no-print-directory $(KMOD_GUEST) || exit 1; \
	rc=0; KVER=$(KMOD_KVER) tests/kmod/run.sh $(KMOD_KO) $(KMOD_GUEST) \
		$(BUILD)/kmod-test || rc=$$?; \
	if [ $$rc = 77 ]; then \
		echo "kmod-check: SKIPPED (see above)"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi; \
	exit $$rc

kmod-clean:
	-$(Q)[ -f $(KMOD_KDIR)/Makefile ] && \
		$(MAKE) --no-print-directory -C $(KMOD_KDIR) M=$(CURDIR)/kmod -s clean
	$(Q)rm -rf $(BUILD)/kmod-test $(BUILD)/tests/kmod

CHECK_EXTRA += kmod-bringup kmod-check

-include tests/kmod/model.mk
