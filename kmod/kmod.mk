# SPDX-License-Identifier: MIT
#
# kmod.mk - the kernel module's part of the root Makefile (included by it).
#
#   make kmod         build kmod/fpgad_dma.ko against Debian's kernel headers,
#                     warnings are errors
#   make kmod-matrix  build it against every installed kernel's headers
#                     (KMOD_KVERS), each in $(BUILD)/kmod/<release>/
#   make kmod-check   kmod-matrix, the guest test program, and
#                     tests/kmod/run.sh (QEMU) booting every one of those
#                     kernels with its module
#   make kmod-bringup the bring-up program for a real card
#                     (tests/kmod/bringup.sh runs it; see README)
#   make kmod-clean
#
# KMOD_KVER picks the kernel of make kmod (default: the newest installed
# /usr/src/linux-headers-*-amd64, else the running kernel); KMOD_KVERS the
# kernels of the matrix (default: every installed one, oldest first);
# NVIDIA_SRC= builds PIN_NVP2P in.  A test that cannot run prints why and
# is skipped; KMOD_STRICT=1 turns a skip into a failure.  The newest kernel
# runs every QEMU boot (KMOD_BOOTS), the older ones the main boot only
# (KMOD_OLD_BOOTS; empty: built with -Werror, not booted): the p2p boots
# test the PCI walk, not the kernel.

KMOD_KVERS_ALL := $(patsubst /usr/src/linux-headers-%,%,$(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V))
ifeq ($(origin KMOD_KVER),undefined)
KMOD_KVER := $(or $(lastword $(KMOD_KVERS_ALL)),$(shell uname -r))
endif
KMOD_KVERS ?= $(or $(KMOD_KVERS_ALL),$(KMOD_KVER))
KMOD_KDIR ?= $(firstword $(wildcard /usr/src/linux-headers-$(KMOD_KVER)) /lib/modules/$(KMOD_KVER)/build)
KMOD_KO := kmod/fpgad_dma.ko
KMOD_GUEST := $(BUILD)/tests/kmod/kmod_test
KMOD_STRICT ?= 0
KMOD_BOOTS ?= main p2p-switch p2p-rootport
KMOD_OLD_BOOTS ?= main
NVIDIA_SRC ?=
KMOD_SRC := $(wildcard kmod/*.c kmod/*.h kmod/uapi/*.h) kmod/Kbuild

kmod_kdir = $(firstword $(wildcard /usr/src/linux-headers-$(1)) /lib/modules/$(1)/build)

# $(1): kernel release, $(2): the directory Kbuild runs in.  Warnings are
# errors; the log is shown but for BTF's note on out-of-tree modules.
define kmod_build
	@if [ ! -f $(call kmod_kdir,$(1))/Makefile ]; then \
		echo "kmod: no kernel headers for $(1) in $(call kmod_kdir,$(1)) (apt-get install linux-headers-amd64)"; \
		exit 1; fi
	$(call msg,KMOD,$(2)/fpgad_dma.ko)
	$(Q)mkdir -p $(BUILD)
	$(Q)+rc=0; $(MAKE) --no-print-directory -C $(call kmod_kdir,$(1)) \
		M=$(abspath $(2)) KCFLAGS=-Werror NVIDIA_SRC=$(NVIDIA_SRC) \
		$(if $(filter 1,$(V)),V=1,-s) modules >$(BUILD)/kmod-$(1).log 2>&1 || rc=$$?; \
		grep -v -e 'Skipping BTF generation' $(BUILD)/kmod-$(1).log; exit $$rc
endef

.PHONY: kmod kmod-matrix kmod-check kmod-clean kmod-bringup

# Kbuild tracks its own dependencies: always ask it.
kmod:
	$(call kmod_build,$(KMOD_KVER),kmod)

# Kbuild builds in the source directory: one copy of the sources per
# kernel (cp -p keeps their times, so Kbuild rebuilds what changed).
KMOD_MATRIX_KOS := $(foreach k,$(KMOD_KVERS),$(BUILD)/kmod/$(k)/fpgad_dma.ko)

$(BUILD)/kmod/%/fpgad_dma.ko: $(KMOD_SRC)
	$(Q)mkdir -p $(@D)/uapi
	$(Q)cp -p kmod/*.c kmod/*.h kmod/Kbuild $(@D)/ && cp -p kmod/uapi/*.h $(@D)/uapi/
	$(call kmod_build,$*,$(@D))

kmod-matrix: $(KMOD_MATRIX_KOS)

# The guest program links the daemon's xdma backend to drive it as well.
KMOD_GUEST_SRC := tests/kmod/kmod_test.c tests/kmod/kmod_xfer.c daemon/device/xdma/device_xdma.c common/log.c \
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

# The same checks, static and without the GPU memory backend, for the QEMU
# guest: run.sh's dry run of bringup.sh against the edu device.
KMOD_BRINGUP_GUEST := $(BUILD)/tests/kmod/bringup-guest

$(KMOD_BRINGUP_GUEST): tests/kmod/bringup.c kmod/uapi/fpgad_dma.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -static -std=gnu11 -D_GNU_SOURCE -DBRINGUP_NO_MEMORY -O2 -Wall \
		-Wextra -Werror -Ikmod/uapi -o $@ tests/kmod/bringup.c

# Built and its script parsed in make check; run only on a card's host.
kmod-bringup: $(KMOD_BRINGUP)
	$(Q)sh -n tests/kmod/bringup.sh
	$(Q)$(KMOD_BRINGUP) -h >/dev/null

kmod-check:
	$(Q)if [ ! -f $(KMOD_KDIR)/Makefile ]; then \
		echo "kmod-check: SKIP: no kernel headers for $(KMOD_KVER) (apt-get install linux-headers-amd64)"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi; \
	$(MAKE) --no-print-directory kmod-matrix && \
	$(MAKE) --no-print-directory $(KMOD_GUEST) $(KMOD_BRINGUP_GUEST) || exit 1; \
	failed=; skipped=; \
	rm -f $(addprefix $(BUILD)/kmod-test/,$(addsuffix .rc,$(KMOD_KVERS))); \
	for k in $(KMOD_KVERS); do \
		boots="$(KMOD_OLD_BOOTS)"; \
		[ "$$k" = "$(lastword $(KMOD_KVERS))" ] && boots="$(KMOD_BOOTS)"; \
		if [ -z "$$boots" ]; then \
			echo "== kmod-check: $$k: built, not booted (KMOD_OLD_BOOTS is empty)"; \
			continue; fi; \
		mkdir -p $(BUILD)/kmod-test/$$k; \
		{ echo "== kmod-check: $$k ($$boots)"; \
		  rc=0; KVER=$$k BRINGUP_GUEST=$(KMOD_BRINGUP_GUEST) \
			tests/kmod/run.sh $(BUILD)/kmod/$$k/fpgad_dma.ko \
			$(KMOD_GUEST) $(BUILD)/kmod-test/$$k $$boots || rc=$$?; \
		  echo $$rc > $(BUILD)/kmod-test/$$k.rc; \
		} > $(BUILD)/kmod-test/$$k.out 2>&1 & \
	done; \
	wait; \
	for k in $(KMOD_KVERS); do \
		[ -f $(BUILD)/kmod-test/$$k.rc ] || continue; \
		cat $(BUILD)/kmod-test/$$k.out; \
		case $$(cat $(BUILD)/kmod-test/$$k.rc) in 0) ;; 77) skipped="$$skipped $$k" ;; \
		*) failed="$$failed $$k" ;; esac; \
	done; \
	if [ -n "$$failed" ]; then \
		echo "kmod-check: FAILED on$$failed"; exit 1; fi; \
	if [ -n "$$skipped" ]; then \
		echo "kmod-check: SKIPPED on$$skipped (see above)"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi

kmod-clean:
	-$(Q)[ -f $(KMOD_KDIR)/Makefile ] && \
		$(MAKE) --no-print-directory -C $(KMOD_KDIR) M=$(CURDIR)/kmod -s clean
	$(Q)rm -rf $(BUILD)/kmod $(BUILD)/kmod-test $(BUILD)/tests/kmod

CHECK_EXTRA += kmod-bringup kmod-check

-include tests/kmod/model.mk
