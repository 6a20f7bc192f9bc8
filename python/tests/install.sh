#!/bin/sh
# SPDX-License-Identifier: MIT
#
# python/tests/install.sh - README's Python steps as a user types them on a
# fresh machine, offline: make python (which must leave what pip needs,
# fpgad.pc included), a new venv with Debian's setuptools and wheel, pip
# install of ./python, and the installed package imported from a folder
# that holds a directory called fpgad (which must not shadow it).
#
# Environment: BUILD (default build), PYTHON (default /usr/bin/python3).
# Exit status: 0 passed, 1 failed, 77 skipped (no venv module).
set -u
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-/usr/bin/python3}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "python-install: ok: $*"; }
bad() { fail=$((fail + 1)); echo "python-install: FAIL: $*"; }

"$PYTHON" -c 'import ensurepip' 2>/dev/null ||
	{ echo "python-install: SKIP: no venv support in $PYTHON (python3-venv)"; exit 77; }
work=$(mktemp -d /tmp/fpgad-pyinst.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM

# make python alone writes what setup.py reads from the build tree.
rm -f "$BUILD/fpgad.pc"
make --no-print-directory -s BUILD="$BUILD" python >"$work/make.log" 2>&1 ||
	{ cat "$work/make.log"; bad "make python"; }
[ -f "$BUILD/fpgad.pc" ] && ok "make python writes $BUILD/fpgad.pc" ||
	bad "make python leaves no $BUILD/fpgad.pc (pip install ./python needs it)"

# README: /usr/bin/python3 -m venv --system-site-packages venv
#         venv/bin/pip install --no-build-isolation ./python
# (Debian's python3 by its path: another first on PATH lacks its wheel.)
readme=$(dirname "$0")/../../README.md
grep -q '^/usr/bin/python3 -m venv --system-site-packages venv ' "$readme" &&
	grep -q '^venv/bin/pip install --no-build-isolation ./python ' "$readme" &&
	ok "README's venv steps name Debian's python3 (/usr/bin/python3)" ||
	bad "README's venv steps are not the ones tested here"
if "$PYTHON" -m venv --system-site-packages "$work/venv" >"$work/venv.log" 2>&1; then
	ok "python3 -m venv --system-site-packages"
else
	bad "venv: $(tail -n 3 "$work/venv.log")"
fi
if FPGAD_BUILD="$(cd "$BUILD" && pwd)" "$work/venv/bin/pip" install --no-index --no-build-isolation \
	./python >"$work/pip.log" 2>&1; then
	ok "pip install --no-build-isolation ./python in the venv, offline"
else
	bad "pip install: $(grep -m 3 -i -e error -e invalid "$work/pip.log")"
fi

# A runtime directory called fpgad in the working directory (README once
# used /tmp/fpgad) must not hide the installed package.
mkdir -p "$work/cwd/fpgad"
where=$(cd "$work/cwd" && "$work/venv/bin/python" -c \
	'import fpgad; print(fpgad.__file__, hasattr(fpgad, "connect"))' 2>&1)
case $where in
"$work/venv/"*" True") ok "import fpgad finds the installed package: ${where% True}" ;;
*) bad "import fpgad from a folder holding fpgad/: $where" ;;
esac

echo "python-install: $pass passed, $fail failed"
[ "$fail" = 0 ]
