# SPDX-License-Identifier: MIT
#
# system.mk - the system tier (included by the root Makefile).
#
#   make system-check   the Debian packages (make deb-check), then
#                       tests/system/run.sh: Debian's kernel in QEMU with a
#                       minimal Debian root file system and systemd as
#                       PID 1, the packages installed and fpgad.service
#                       driven as an operator would (see guest.sh)
#
# The root file system is cached in $(SYSTEM_CACHE) (see run.sh and
# README.md).  A tier that cannot run prints why and is skipped;
# SYSTEM_STRICT=1 turns a skip into a failure.

SYSTEM_CACHE ?= $(BUILD)/system-cache
SYSTEM_STRICT ?= 0
SYSTEM_WORK := $(BUILD)/system
# More suites for the same boot (run.sh's -G, -f and -m), each reported by
# its own tier: tests/net/rxe.mk adds the soft-RoCE suite in make check.
SYSTEM_SUITES ?=
# one: the suites in turn in one boot; each: a boot per suite, at once.
SYSTEM_BOOTS ?= one

.PHONY: system-check

system-check: deb-check
	$(Q)rc=0; SYSTEM_CACHE=$(SYSTEM_CACHE) SYSTEM_BOOTS=$(SYSTEM_BOOTS) tests/system/run.sh \
		-g system=tests/system/guest.sh $(SYSTEM_SUITES) $(DEB_DIR) $(SYSTEM_WORK) || rc=$$?; \
	if [ $$rc = 77 ]; then \
		echo "system-check: SKIPPED (see above)"; \
		[ "$(SYSTEM_STRICT)" != 1 ]; exit $$?; fi; \
	exit $$rc

DEBS += mmdebstrap libarchive-tools
