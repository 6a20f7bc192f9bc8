#!/bin/sh
# selftest.sh - check-docs.sh against tests/docs/fixtures/sample.md: the
# good block and the error shown as the checker prints it are ok, the
# broken block and the error example that passes are not, each named at
# its line, and the exit status is 1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=$("$here/check-docs.sh" "$here/fixtures/sample.md")
rc=$?
fail=0
want() {
	printf '%s\n' "$out" | grep -q "$1" || { echo "selftest: no line '$1'"; fail=1; }
}
want "^ok .*sample.md:6 (addresses not this host's: 198.51.100.1 -> 127.0.0.1, 198.51.100.2 -> 127.0.0.2)$"
want "^not ok .*sample.md:18$"
want "^  .*sample.md:19: slots: '1' is not a whole number"
want "^ok .*sample.md:25: fails as shown$"
want "^not ok .*sample.md:38: an example of an error: it passed the checker"
want "^check-docs: 2 ok, 2 not ok, of 4 configuration blocks$"
[ "$rc" -eq 1 ] || { echo "selftest: exit status $rc, not 1"; fail=1; }
[ $fail -eq 0 ] || { printf '%s\n' "$out"; exit 1; }
echo "check-docs selftest: ok"
