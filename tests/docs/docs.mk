# SPDX-License-Identifier: MIT
#
# docs.mk - the documentation tier (included by the root Makefile):
#
#   make doc-check   every configuration example of README.md, the man
#                    pages and systemd/fpgad.conf through
#                    `fpgad --check-config` (tests/docs/check-docs.sh),
#                    after the script's own test on a sample document
#                    (tests/docs/selftest.sh)

.PHONY: doc-check

doc-check: all
	$(Q)BUILD=$(BUILD) tests/docs/selftest.sh
	$(Q)BUILD=$(BUILD) tests/docs/check-docs.sh
