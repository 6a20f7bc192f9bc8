# SPDX-License-Identifier: MIT
#
# arch.mk - the architecture check (included by the root Makefile):
# every include and every call between the tree's C files against the
# order of folders written in tests/arch/layers.
#
#   make arch-check   tests/arch/check.py; a climbing or crossing arrow
#                     fails with the two files (and the function) named;
#                     tests/arch/counters.py: the channel counters of
#                     common/channel_counters.h in every file written by hand;
#                     tests/arch/names.py: every file a comment or README.md
#                     names exists (each stale name with its file:line);
#                     tests/arch/names_json.py: fpgactl's JSON keys, the
#                     Python dataclasses, fpgactl(1) and the metrics use
#                     one name per concept

.PHONY: arch-check

arch-check:
	$(Q)python3 tests/arch/check.py .
	$(Q)python3 tests/arch/counters.py .
	$(Q)python3 tests/arch/names.py .
	$(Q)python3 tests/arch/names_json.py .

DEBS += universal-ctags
