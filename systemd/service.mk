# SPDX-License-Identifier: MIT
#
# service.mk - what operators install beside the binaries (included by the
# root Makefile; `make install` runs install-service).
#
#   make install-service    the template unit fpgad@.service (one fpgad
#                           per card: systemd/template.sed made from
#                           fpgad.service.in), the unit's drop-ins (remote listener, MPS), an
#                           MPS control daemon unit to start from, and
#                           fpgactl's bash completion, under PREFIX and
#                           DESTDIR
#   make completion-check   the completion, as bash calls it, against a
#                           real fpgad

.PHONY: install-service completion-check

install: install-service

install-service:
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed -f systemd/template.sed systemd/fpgad.service.in | \
		sed 's|@SBINDIR@|$(PREFIX)/sbin|g' > \
		$(DESTDIR)$(PREFIX)/lib/systemd/system/fpgad@.service
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' systemd/fpgad-exporter.service.in > \
		$(DESTDIR)$(PREFIX)/lib/systemd/system/fpgad-exporter.service
	install -D -m 0644 systemd/fpgad-remote.conf \
		$(DESTDIR)$(PREFIX)/share/fpgad/fpgad-remote.conf
	install -D -m 0644 systemd/fpgad-mps.conf \
		$(DESTDIR)$(PREFIX)/share/fpgad/fpgad-mps.conf
	install -D -m 0644 systemd/nvidia-mps.service \
		$(DESTDIR)$(PREFIX)/share/fpgad/nvidia-mps.service
	install -D -m 0644 client/fpgactl/fpgactl.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/fpgactl

completion-check: all
	$(Q)BUILD=$(BUILD) tests/system/completion-check.sh

