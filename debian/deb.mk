# SPDX-License-Identifier: MIT
#
# deb.mk - the Debian packages (included by the root Makefile).
#
#   make deb         dpkg-buildpackage -b -us -uc on a copy of the tree (the
#                    files git knows, committed or not) in $(BUILD)/deb/src;
#                    the .debs land in $(BUILD)/deb
#   make deb-check   deb, then lintian on them (any error fails), then
#                    fpgad-dkms's module built by DKMS in a scratch tree

DEB_DIR := $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/fpgad-$(VERSION)
# The package build's own unit run (dh_auto_test) is left out: make check
# runs the unit suites in their own tier.  DEB_CHECK_OPTIONS= keeps it.
DEB_CHECK_OPTIONS ?= nocheck

.PHONY: deb deb-check

deb:
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(Q)if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -z --cached --others --exclude-standard | \
			xargs -0 -I{} sh -c '[ -e "{}" ] && echo "{}"' | \
			tar -cf - -T - | tar -xf - -C $(DEB_SRC); \
	else \
		tar -cf - --exclude=./build --exclude='./build-*' . | tar -xf - -C $(DEB_SRC); \
	fi
	$(call msg,DEB,$(DEB_DIR))
	$(Q)start=$$(date +%s); \
	(cd $(DEB_SRC) && DEB_BUILD_OPTIONS="$(DEB_CHECK_OPTIONS) $$DEB_BUILD_OPTIONS" \
		dpkg-buildpackage -b -us -uc -jauto) >$(DEB_DIR)/build.log 2>&1 || \
		{ tail -n 40 $(DEB_DIR)/build.log; echo "deb: dpkg-buildpackage failed; log in $(DEB_DIR)/build.log"; exit 1; }; \
	echo "deb: $$(ls $(DEB_DIR)/*.deb | wc -l) packages in $$(( $$(date +%s) - start )) s:"; \
	ls $(DEB_DIR)/*.deb | sed 's|^|  |'

deb-check: deb
	$(Q)BUILD=$(BUILD) tests/system/deb-check.sh $(DEB_DIR)

DEBS += debhelper dh-dkms dkms lintian
