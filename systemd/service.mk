# SPDX-License-Identifier: MIT
#
# service.mk - what operators install beside the binaries (included by the
# root Makefile; `make install` runs install-service).
#
#   make install-service   the remote-listener drop-in, under PREFIX/DESTDIR

.PHONY: install-service

install: install-service

install-service:
	install -D -m 0644 systemd/fpgad-remote.conf \
		$(DESTDIR)$(PREFIX)/share/fpgad/fpgad-remote.conf
