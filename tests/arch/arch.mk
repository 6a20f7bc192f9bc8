# SPDX-License-Identifier: MIT
#
# arch.mk - the architecture check (included by the root Makefile):
# every include and every call between the tree's C files against the
# order of folders written in tests/arch/layers.
#
#   make arch-check   tests/arch/check.py; a climbing or crossing arrow
#                     fails with the two files (and the function) named

.PHONY: arch-check

arch-check:
	$(Q)python3 tests/arch/check.py .

DEBS += universal-ctags
CHECK_EXTRA += arch-check
