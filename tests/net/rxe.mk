# SPDX-License-Identifier: MIT
#
# rxe.mk - the soft-RoCE tier (included by the root Makefile, after net.mk
# and system.mk).
#
#   make rxe-check   tests/net/rxe-guest.sh in the system tier's QEMU guest
#                    (tests/system/run.sh: Debian's kernel, the same cached
#                    root file system): rdma_rxe and what it depends on,
#                    carried from this machine's /lib/modules/KVER, loaded
#                    there; rxe0 on a veth; ibv_uc_pingpong on it; then
#                    tests/net/run-roce.sh (fpgad's RoCE path) with the
#                    binaries built here
#
# In make check the system tier runs this suite too, in a boot of its own
# at the same time as its own (RXE_IN_SYSTEM=1 SYSTEM_BOOTS=each below),
# and the rxe-check tier reports what that boot wrote ($(SYSTEM_WORK)/rxe.log and rxe.result); run
# alone, rxe-check boots by itself.  A tier that cannot run (no QEMU, no
# Debian kernel, no rdma_rxe for it) prints why and is skipped;
# SYSTEM_STRICT=1 turns a skip into a failure.

RXE_WORK := $(BUILD)/rxe
# What the guest runs fpgad's RoCE path with: fpgad, fpgactl, what
# tests/net/net.mk builds for it (ROCE_BINS: more programs under
# $(NET_DIR)), and the scripts of tests/net.
RXE_BINS := $(PROGRAMS) $(HSB_SENDER) $(NET_CONSUMER) $(ROCE_BINS)
# rxe asks the crypto API for "crc32" (its iCRC) when a device is added: a
# module the kernel would load through modprobe, which finds no module
# files in the guest.
RXE_MODULES := rdma_rxe crc32_generic veth
RXE_ARGS = -G rxe=tests/net/rxe-guest.sh $(addprefix -m ,$(RXE_MODULES)) \
	$(foreach f,$(RXE_BINS),-f $(f)=rxe/build/$(f:$(BUILD)/%=%)) \
	$(foreach f,$(wildcard tests/net/*.sh),-f $(f)=rxe/tree/$(f))

.PHONY: rxe-check rxe-report

# rxe-report STATUS: 77 is a skip; SYSTEM_STRICT=1 makes it a failure.
rxe_verdict = if [ $$rc = 77 ]; then echo "rxe-check: SKIPPED (see above)"; \
	[ "$(SYSTEM_STRICT)" != 1 ]; exit $$?; fi; exit $$rc

rxe-check: deb $(RXE_BINS)
	$(Q)rc=0; SYSTEM_CACHE=$(SYSTEM_CACHE) tests/system/run.sh \
		$(subst -G ,-g ,$(RXE_ARGS)) $(DEB_DIR) $(RXE_WORK) || rc=$$?; \
	$(rxe_verdict)

# What the system tier's boot found, when it ran this suite after the
# packages it installed were built (else a boot of its own).
rxe-report:
	$(Q)rc=0; r=$(SYSTEM_WORK)/rxe.result; deb=$$(ls $(DEB_DIR)/fpgad_*.deb 2>/dev/null | head -n 1); \
	if [ -n "$$deb" ] && [ -f "$$r" ] && [ "$$r" -nt "$$deb" ]; then \
		echo "rxe: as the system tier found it (a boot beside its own):"; \
		cat $(SYSTEM_WORK)/rxe.log; \
		case $$(cat "$$r") in PASS*) ;; SKIP*) rc=77 ;; *) rc=1 ;; esac; \
	else \
		$(MAKE) --no-print-directory rxe-check || rc=$$?; \
	fi; \
	$(rxe_verdict)

ifeq ($(RXE_IN_SYSTEM),1)
SYSTEM_SUITES += $(RXE_ARGS)
system-check: $(RXE_BINS)
endif

# run.sh decompresses the modules on this machine (Debian's are .ko.xz).
DEBS += xz-utils

