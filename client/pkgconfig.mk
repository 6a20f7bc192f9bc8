# SPDX-License-Identifier: MIT
#
# pkgconfig.mk - libfpgad for programs built against the source tree
# (included by the root Makefile; `make all` builds it).
#
#   build/fpgad-uninstalled.pc   PKG_CONFIG_PATH=build pkg-config --libs fpgad
#                                picks it: the tree's header, build/libfpgad.so
#                                (run path set) or, with --static, libfpgad.a
#   build/libfpgad.so.0          the soname, for programs linked to the tree
#   make pc-check                both .pc files, shared and fully static links

.PHONY: pc-check

all: $(BUILD)/fpgad-uninstalled.pc $(BUILD)/libfpgad.so.0

$(BUILD)/fpgad-uninstalled.pc: client/fpgad-uninstalled.pc.in Makefile client/pkgconfig.mk
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(BUILD)
	$(Q)sed -e 's|@TREE@|$(CURDIR)|g' -e 's|@BUILDDIR@|$(abspath $(BUILD))|g' \
		-e 's|@VERSION@|$(VERSION)|g' -e 's|@CUDA_LIBS@|$(CUDA_LIBS)|g' $< > $@

$(BUILD)/libfpgad.so.0: $(BUILD)/libfpgad.so
	$(Q)ln -sf libfpgad.so $@

pc-check: all
	$(Q)BUILD=$(BUILD) tests/system/pc-check.sh

