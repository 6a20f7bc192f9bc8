# SPDX-License-Identifier: MIT
#
# deb.mk - the Debian packages (included by the root Makefile).
#
#   make deb         dpkg-buildpackage -b -us -uc on a copy of the tree (the
#                    files git knows, committed or not) in $(BUILD)/deb/src;
#                    the .debs land in $(BUILD)/deb
#   make deb-check   deb, then lintian on them (any error fails), then
#                    fpgad-dkms's module built by DKMS in a scratch tree
#   make deb-arm64   the architecture-dependent packages cross-built for
#                    arm64 (dpkg-buildpackage -a arm64 -B) in
#                    $(BUILD)/deb-arm64, without CUDA, RoCE, python3-fpgad
#                    or the package build's unit run; fpgad-dkms (all) is
#                    make deb's.  Needs make deps-arm64.
#   make deb-arm64-check  deb-arm64, then tests/system/deb-check.sh on them

DEB_DIR := $(BUILD)/deb
# The package build's own unit run (dh_auto_test) is left out: make check
# runs the unit suites in their own tier.  DEB_CHECK_OPTIONS= keeps it.
DEB_CHECK_OPTIONS ?= nocheck

DEB_ARM64_DIR := $(BUILD)/deb-arm64
# Profiles of debian/control and debian/rules: no libibverbs-dev (not among
# the arm64 packages), and no Python module (its cross build needs
# libpython3.11-dev:arm64, which has to be the very version of the build
# machine's Python and so would upgrade it).
DEB_ARM64_PROFILES := nocheck,nopython,pkg.fpgad.noroce

.PHONY: deb deb-check deb-arm64 deb-arm64-check

# deb_build DIR,DPKG-BUILDPACKAGE OPTIONS,DEB_BUILD_OPTIONS[,ENVIRONMENT]:
# the tree copied to DIR/fpgad-$(VERSION), the packages built there,
# landing in DIR.
define deb_build
	$(Q)rm -rf $(1) && mkdir -p $(1)/fpgad-$(VERSION)
	$(Q)if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
			xargs -0 -I{} sh -c '[ -e "{}" ] && echo "{}"' | \
			tar -cf - -T - | tar -xf - -C $(1)/fpgad-$(VERSION); \
	else \
		tar -cf - --exclude=./build --exclude='./build-*' . | tar -xf - -C $(1)/fpgad-$(VERSION); \
	fi
	$(call msg,DEB,$(1))
	$(Q)start=$$(date +%s); \
	(cd $(1)/fpgad-$(VERSION) && DEB_BUILD_OPTIONS="$(3) $$DEB_BUILD_OPTIONS" $(4) \
		dpkg-buildpackage $(2) -us -uc -jauto) >$(1)/build.log 2>&1 || \
		{ tail -n 40 $(1)/build.log; echo "deb: dpkg-buildpackage failed; log in $(1)/build.log"; exit 1; }; \
	echo "deb: $$(ls $(1)/*.deb | wc -l) packages in $$(( $$(date +%s) - start )) s:"; \
	ls $(1)/*.deb | sed 's|^|  |'
endef

deb:
	$(call deb_build,$(DEB_DIR),-b,$(DEB_CHECK_OPTIONS))

deb-check: deb
	$(Q)BUILD=$(BUILD) tests/system/deb-check.sh $(DEB_DIR)

deb-arm64:
	$(call deb_build,$(DEB_ARM64_DIR),-a arm64 -B -P$(DEB_ARM64_PROFILES),nocheck nocuda,CC=$(ARM64_CC))

# Skips as arm64-check does without make deps-arm64.
deb-arm64-check:
	+@$(call arm64_skip,deb-arm64-check); \
	$(MAKE) --no-print-directory deb-arm64 && \
	BUILD=$(BUILD) DEB_ARCH=arm64 tests/system/deb-check.sh $(DEB_ARM64_DIR)

DEBS += debhelper dh-dkms dkms lintian
