# SPDX-License-Identifier: MIT
#
# man.mk - the manual pages (plain roff, man(7) macros; included by the
# root Makefile).
#
#   make man-check     mandoc -T lint on every page, and the EXAMPLES
#                      program of libfpgad(3) built and run against the tree
#   make install-man   into PREFIX/share/man (make install runs it)

MAN_PAGES := man/fpgad.8 man/fpgactl.1 man/fpgad.conf.5 man/libfpgad.3
MANDIR ?= $(PREFIX)/share/man

.PHONY: man-check install-man

install: install-man

install-man:
	@for p in $(MAN_PAGES); do s=$${p##*.}; \
		install -D -m 0644 $$p $(DESTDIR)$(MANDIR)/man$$s/$${p##*/} || exit 1; \
	done

man-check: $(BUILD)/libfpgad.a
	$(Q)BUILD=$(BUILD) tests/system/man-check.sh $(MAN_PAGES)

DEBS += mandoc
