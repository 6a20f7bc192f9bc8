# SPDX-License-Identifier: MIT
#
# kmod.mk - the kernel module's part of the root Makefile (included by it).
#
#   make kmod         build kmod/fpgad_dma.ko against Debian's kernel headers,
#                     warnings (W=1's included) are errors
#   make kmod-matrix  build it against every installed kernel's headers
#                     (KMOD_KVERS), each in $(BUILD)/kmod/<release>/
#   make kmod-check   kmod-matrix, the guest test program, and
#                     tests/kmod/run.sh (QEMU) booting every one of those
#                     kernels with its module
#   make kmod-bringup the bring-up program for a real card
#                     (tests/kmod/bringup.sh runs it; see README)
#   make kmod-arm64   cross-compile it for arm64 against Debian's arm64
#                     headers of every installed kernel (fetched from the
#                     archive by tests/kmod/fetch-headers.sh, no multiarch),
#                     with and without PIN_NVP2P, warnings are errors
#   make kmod-conftest  the conftest step on the oldest installed kernel
#                     made to look like a distribution's backport
#                     (tests/kmod/backport.sh): each backport must be found
#                     by its probe and the module must still build
#   make kmod-suites  build it (warnings are errors, W=1, also with
#                     PIN_NVP2P) against the kernel headers of newer Debian
#                     suites (KMOD_SUITES), each in a chroot of its own
#                     made by mmdebstrap and kept in KMOD_SUITES_CACHE;
#                     skipped when the archive cannot be reached
#   make kmod-clean   (keeps the suites' chroots: rm -rf KMOD_SUITES_CACHE)
#
# The matrix builds each kernel twice: as it is booted, and with PIN_NVP2P
# against tests/kmod/nvp2p/nv-p2p.h (compile-only declarations of NVIDIA's
# API, never loaded), so that the nv-p2p path is compiled with -Werror on
# every kernel even where no NVIDIA driver source is installed.
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

# $(1): kernel headers directory, $(2): the directory Kbuild runs in, $(3):
# the log's name, $(4): more make variables (ARCH=, CROSS_COMPILE=,
# NVIDIA_SRC=, KCFLAGS=).  Warnings are errors, W=1's included; the log is
# shown but for BTF's note on out-of-tree modules.
define kmod_build_in
	$(call msg,KMOD,$(2)/fpgad_dma.ko)
	$(Q)mkdir -p $(BUILD)
	$(Q)+rc=0; $(MAKE) --no-print-directory -C $(1) \
		M=$(abspath $(2)) KCFLAGS=-Werror W=1 $(4) \
		$(if $(filter 1,$(V)),V=1,-s) modules >$(BUILD)/kmod-$(3).log 2>&1 || rc=$$?; \
		grep -v -e 'Skipping BTF generation' $(BUILD)/kmod-$(3).log; exit $$rc
endef

# $(1): kernel release, $(2): the directory Kbuild runs in, $(3): NVIDIA_SRC,
# $(4): the log's name, $(5): more make variables.
define kmod_build
	@if [ ! -f $(call kmod_kdir,$(1))/Makefile ]; then \
		echo "kmod: no kernel headers for $(1) in $(call kmod_kdir,$(1)) (apt-get install linux-headers-amd64)"; \
		exit 1; fi
	$(call kmod_build_in,$(call kmod_kdir,$(1)),$(2),$(4),NVIDIA_SRC=$(3) $(5))
endef

# Copy the module's sources into $(1) (Kbuild builds in the source tree).
define kmod_copy
	$(Q)mkdir -p $(1)/uapi
	$(Q)cp -p kmod/*.c kmod/*.h kmod/Kbuild $(1)/ && cp -p kmod/uapi/*.h $(1)/uapi/
endef

# The compile-only nv-p2p "driver source": the header and a Module.symvers
# that names its symbols as nvidia.ko's, so modpost resolves them.
KMOD_NVP2P_STUB := $(BUILD)/kmod/nvp2p-stub
KMOD_NVP2P_SYMS := nvidia_p2p_get_pages nvidia_p2p_put_pages \
	nvidia_p2p_free_page_table nvidia_p2p_dma_map_pages \
	nvidia_p2p_dma_unmap_pages nvidia_p2p_free_dma_mapping

$(KMOD_NVP2P_STUB)/Module.symvers: tests/kmod/nvp2p/nv-p2p.h
	$(Q)mkdir -p $(@D)
	$(Q)cp -p $< $(@D)/nv-p2p.h
	$(Q)for s in $(KMOD_NVP2P_SYMS); do \
		printf '0x00000000\t%s\tnvidia\tEXPORT_SYMBOL\t\n' $$s; done > $@

.PHONY: kmod kmod-matrix kmod-check kmod-clean kmod-bringup kmod-arm64 \
	kmod-conftest kmod-conftest-one kmod-suites

# Kbuild tracks its own dependencies: always ask it.
kmod:
	$(call kmod_build,$(KMOD_KVER),kmod,$(NVIDIA_SRC),$(KMOD_KVER))

# Kbuild builds in the source directory: one copy of the sources per
# kernel (cp -p keeps their times, so Kbuild rebuilds what changed).
KMOD_MATRIX_KOS := $(foreach k,$(KMOD_KVERS),$(BUILD)/kmod/$(k)/fpgad_dma.ko) \
	$(foreach k,$(KMOD_KVERS),$(BUILD)/kmod/nvp2p/$(k)/fpgad_dma.ko)

$(BUILD)/kmod/nvp2p/%/fpgad_dma.ko: $(KMOD_SRC) $(KMOD_NVP2P_STUB)/Module.symvers
	$(call kmod_copy,$(@D))
	$(call kmod_build,$*,$(@D),$(abspath $(KMOD_NVP2P_STUB)),nvp2p-$*)

$(BUILD)/kmod/%/fpgad_dma.ko: $(KMOD_SRC)
	$(call kmod_copy,$(@D))
	$(call kmod_build,$*,$(@D),$(NVIDIA_SRC),$*)

kmod-matrix: $(KMOD_MATRIX_KOS)

# arm64, cross-compiled: the kernels of the matrix, by ABI (6.1.0-57 for
# 6.1.0-57-amd64), against Debian's arm64 headers of the same version.
KMOD_ARM64_ABIS ?= $(patsubst %-amd64,%,$(filter %-amd64,$(KMOD_KVERS)))
KMOD_ARM64_CROSS ?= aarch64-linux-gnu-
KMOD_ARM64_DIR := $(BUILD)/kmod-arm64
KMOD_ARM64_KOS := $(foreach a,$(KMOD_ARM64_ABIS),$(KMOD_ARM64_DIR)/$(a)/fpgad_dma.ko \
	$(KMOD_ARM64_DIR)/nvp2p/$(a)/fpgad_dma.ko)
# One directory per kernel: its own apt lists and cache, so that make -j
# runs the fetches side by side without apt's locks in the way.
kmod_arm64_kdir = $(KMOD_ARM64_DIR)/headers/$(1)/root/usr/src/linux-headers-$(1)-arm64
KMOD_ARM64_VARS = ARCH=arm64 CROSS_COMPILE=$(KMOD_ARM64_CROSS)

$(KMOD_ARM64_DIR)/headers/%/stamp: tests/kmod/fetch-headers.sh
	$(call msg,FETCH,linux-headers-$*-arm64)
	$(Q)mkdir -p $(@D)
	$(Q)tests/kmod/fetch-headers.sh arm64 $* $(abspath $(@D)) >/dev/null
	$(Q)touch $@

$(KMOD_ARM64_DIR)/nvp2p/%/fpgad_dma.ko: $(KMOD_SRC) $(KMOD_NVP2P_STUB)/Module.symvers \
		$(KMOD_ARM64_DIR)/headers/%/stamp
	$(call kmod_copy,$(@D))
	$(call kmod_build_in,$(call kmod_arm64_kdir,$*),$(@D),arm64-nvp2p-$*,$(KMOD_ARM64_VARS) \
		NVIDIA_SRC=$(abspath $(KMOD_NVP2P_STUB)))

$(KMOD_ARM64_DIR)/%/fpgad_dma.ko: $(KMOD_SRC) $(KMOD_ARM64_DIR)/headers/%/stamp
	$(call kmod_copy,$(@D))
	$(call kmod_build_in,$(call kmod_arm64_kdir,$*),$(@D),arm64-$*,$(KMOD_ARM64_VARS) NVIDIA_SRC=)

# Skipped (failing with KMOD_STRICT=1) without the cross compiler or amd64
# headers to match; a fetch that fails (no archive) fails.
kmod-arm64:
	$(Q)if ! command -v $(KMOD_ARM64_CROSS)gcc >/dev/null; then \
		echo "kmod-arm64: SKIP: no $(KMOD_ARM64_CROSS)gcc (apt-get install gcc-aarch64-linux-gnu)"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi; \
	if [ -z "$(KMOD_ARM64_ABIS)" ]; then \
		echo "kmod-arm64: SKIP: no linux-headers-*-amd64 installed to match"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi; \
	$(MAKE) --no-print-directory $(KMOD_ARM64_KOS) && \
	for k in $(KMOD_ARM64_KOS); do \
		readelf -h $$k | grep -q 'Machine:.*AArch64' || { echo "kmod-arm64: $$k is not an arm64 module"; exit 1; }; \
	done; \
	echo "kmod-arm64: built for arm64 against $(KMOD_ARM64_ABIS) (with and without PIN_NVP2P)"

# The conftest step against backports (tests/kmod/backport.sh) on the
# oldest installed kernel: each backport must make its probe's FPGAD_HAVE_
# appear and the module build, where a test of the kernel's version picks
# the old spelling.  Skipped when that kernel's own build (kmod-matrix's)
# found class_create(name) already.
KMOD_CONFTEST_KVER ?= $(firstword $(KMOD_KVERS))
KMOD_CONFTEST_DIR := $(BUILD)/kmod-conftest
# backport:the FPGAD_HAVE_ it must produce (- for none)
KMOD_BACKPORTS := CLASS_CREATE_FN:CLASS_CREATE_NAME \
	CLASS_CREATE_MACRO:CLASS_CREATE_NAME PCI_IRQ_INTX:-

kmod-conftest:
	$(Q)if [ ! -f $(call kmod_kdir,$(KMOD_CONFTEST_KVER))/Makefile ]; then \
		echo "kmod-conftest: SKIP: no kernel headers for $(KMOD_CONFTEST_KVER) (apt-get install linux-headers-amd64)"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi; \
	$(MAKE) --no-print-directory $(BUILD)/kmod/$(KMOD_CONFTEST_KVER)/fpgad_dma.ko || exit 1; \
	if grep -q '^#define FPGAD_HAVE_CLASS_CREATE_NAME' $(BUILD)/kmod/$(KMOD_CONFTEST_KVER)/fpgad_conftest.h; then \
		echo "kmod-conftest: SKIP: $(KMOD_CONFTEST_KVER) has class_create(name) already (KMOD_CONFTEST_KVER= an older kernel)"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi; \
	for b in $(KMOD_BACKPORTS); do \
		bp=$${b%%:*}; have=$${b#*:}; d=$(KMOD_CONFTEST_DIR)/$$bp; \
		$(MAKE) --no-print-directory kmod-conftest-one KMOD_CONFTEST_ONE=$$d \
			KMOD_BACKPORT_KDIR=$$(tests/kmod/backport.sh $(KMOD_CONFTEST_KVER) $(abspath $(KMOD_CONFTEST_DIR))/headers-$$bp $$bp) || \
			{ echo "kmod-conftest: FAIL: fpgad_dma.ko does not build on $(KMOD_CONFTEST_KVER) with the backport $$bp"; exit 1; }; \
		if [ "$$have" != - ] && ! grep -q "^#define FPGAD_HAVE_$$have 1" $$d/fpgad_conftest.h; then \
			echo "kmod-conftest: FAIL: the backport $$bp is not seen (no FPGAD_HAVE_$$have in $$d/fpgad_conftest.h)"; exit 1; fi; \
		echo "kmod-conftest: $(KMOD_CONFTEST_KVER) with the backport $$bp: built$${have#-}" | \
			sed 's/built\(.\)/built, FPGAD_HAVE_\1/'; \
	done

kmod-conftest-one:
	$(call kmod_copy,$(KMOD_CONFTEST_ONE))
	$(call kmod_build_in,$(KMOD_BACKPORT_KDIR),$(KMOD_CONFTEST_ONE),conftest-$(notdir $(KMOD_CONFTEST_ONE)),NVIDIA_SRC=)

# Newer kernels than this host's, from Debian's archive: each suite's
# chroot has its own gcc (a newer kernel may need it).  A suite that
# cannot be made (no archive) is skipped, a build that fails fails.
KMOD_SUITES ?= trixie sid
KMOD_SUITES_CACHE ?= $(BUILD)/kmod-suites/chroots

kmod-suites: $(KMOD_NVP2P_STUB)/Module.symvers
	$(Q)failed=; skipped=; for s in $(KMOD_SUITES); do \
		rc=0; tests/kmod/suite-build.sh $$s $(KMOD_SUITES_CACHE) \
			$(BUILD)/kmod-suites/$$s $(KMOD_NVP2P_STUB) || rc=$$?; \
		case $$rc in 0) ;; 77) skipped="$$skipped $$s" ;; *) failed="$$failed $$s" ;; esac; \
	done; \
	if [ -n "$$failed" ]; then echo "kmod-suites: FAILED on$$failed"; exit 1; fi; \
	if [ -n "$$skipped" ]; then echo "kmod-suites: SKIPPED$$skipped (see above)"; \
		[ "$(KMOD_STRICT)" != 1 ]; exit $$?; fi

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
	$(Q)rm -rf $(BUILD)/kmod $(BUILD)/kmod-test $(BUILD)/tests/kmod $(KMOD_ARM64_DIR) \
		$(KMOD_CONFTEST_DIR) $(addprefix $(BUILD)/kmod-suites/,$(KMOD_SUITES))


-include tests/kmod/model.mk
