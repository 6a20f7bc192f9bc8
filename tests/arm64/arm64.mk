# SPDX-License-Identifier: MIT
#
# arm64.mk - fpgad for aarch64 (included by the root Makefile): a cross
# build with Debian's gcc-aarch64-linux-gnu against the arm64 multiarch
# -dev packages, and its tests under qemu-user.
#
#   make deps-arm64   add dpkg's arm64 architecture (as root) and install
#                     DEBS_ARM64, else print how
#   make arm64        the rules above, with BUILD=$(ARM64_BUILD) and the
#                     cross compiler: fpgad, fpgad-exporter, fpgactl,
#                     libfpgad.{so,a}, fpgad.pc, the unit suites, and the
#                     integration suites and hostile peers for arm64-check
#   make arm64-check  tests/arm64/run.sh: the unit suites, then the tiers
#                     of ARM64_TIERS (default: unit), under qemu-aarch64
#                     (or natively on aarch64); skips saying why when no
#                     aarch64 binary can run here
#
# Without CUDA (no aarch64 toolkit here) and without RoCE (libibverbs-dev
# is not among the arm64 packages).  protoc-c runs on the build host; ar
# is the host's (binutils' generic ELF support indexes aarch64 objects).

ARM64_BUILD ?= build-arm64
ARM64_CC ?= aarch64-linux-gnu-gcc
ARM64_TIERS ?= unit
ARM64_MAKE = $(MAKE) --no-print-directory $(if $(filter 1,$(V)),,-s) BUILD=$(ARM64_BUILD) CC=$(ARM64_CC) \
	CUDA=0 ROCE=0 STATIC=0 SANITIZE=0

DEBS_ARM64 := gcc-aarch64-linux-gnu qemu-user-static libc6-dev:arm64 \
	libnng-dev:arm64 libuv1-dev:arm64 libprotobuf-c-dev:arm64 \
	libinih-dev:arm64 libjansson-dev:arm64 libmbedtls-dev:arm64 \
	libsystemd-dev:arm64 zlib1g-dev:arm64 libcmocka-dev:arm64

.PHONY: deps-arm64 arm64 arm64-check

# Adding an architecture to dpkg is this target's to do, not deps-check's.
deps-arm64:
	@if ! dpkg --print-foreign-architectures | grep -qx arm64; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "  DEPS   dpkg --add-architecture arm64"; \
			dpkg --add-architecture arm64 || exit 1; \
		else \
			echo "fpgad: arm64 is not a dpkg architecture here; run:"; \
			echo "  sudo dpkg --add-architecture arm64"; \
			exit 1; \
		fi; \
	fi
	$(call install_missing,$(DEBS_ARM64))

ARM64_ITESTS = $(patsubst tests/integration/%.c,$(BUILD)/itests/%,$(ITEST_SRC))
ARM64_PEERS = $(addprefix $(BUILD)/hostile/,hostile_peer ring_peer object_peer)

.PHONY: arm64-build
arm64:
	+$(Q)$(ARM64_MAKE) arm64-build
# (in the sub-make, BUILD=$(ARM64_BUILD))
arm64-build:
	$(Q)mkdir -p $(BUILD)/itests
	+$(Q)$(MAKE) --no-print-directory all unit $(ARM64_ITESTS) \
		$(BUILD)/itests/hold_frame $(ARM64_PEERS)

# arm64_skip GOAL: the shell's exit, GOAL saying which of DEBS_ARM64 are
# missing (make deps-arm64, which make deps-check leaves alone).
define arm64_skip
	missing=$$(for p in $(DEBS_ARM64); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "$(1): SKIP: not installed:" $$missing "(make deps-arm64)"; \
		exit 0; \
	fi
endef

arm64-check:
	+@$(call arm64_skip,arm64-check); \
	$(ARM64_MAKE) arm64-build && \
	BUILD=$(ARM64_BUILD) tests/arm64/run.sh $(ARM64_TIERS)
