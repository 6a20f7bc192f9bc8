#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/containers/cdi.sh BUILD_DIR - fpgad-cdi's spec: checked against
# CDI's JSON schema and SPEC.md's rules (cdi_check.py), then used by a real
# container runtime: podman run --device KIND=c2h0 --network=none on an
# image made here from a root filesystem holding only the verifying
# consumer (statically linked) and fpgactl (its libraries copied in),
# against an fpgad on the simulated card.
# The last line is 'N passed, N failed[, N skipped]'.
set -u
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
. "$(dirname "$0")/lib.sh"

CDI=$TOP/k8s/fpgad-cdi
export FPGACTL=$BUILD/fpgactl
# A kind of this run's own, so that no other run's spec or image is touched.
RUN=r$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')
KIND=$RUN.test.fpgad.io/channel

if ! start_fpgad cdi; then
	fail fpgad "did not start"
	summary
	exit 1
fi
CHANNELS="c2h0 c2h1 h2c0"

# --- the spec ------------------------------------------------------------------
if "$PYTHON" -c 'import jsonschema' 2>/dev/null; then
	for v in 0.6.0 0.7.0; do
		if "$CDI" --url "$URL" --kind "$KIND" --cdi-version $v -o "$T/spec-$v.json" 2>"$T/cdi.err"; then
			# shellcheck disable=SC2086
			"$PYTHON" "$HERE/cdi_check.py" "$TOP/k8s/cdi-schema" "$T/spec-$v.json" "$RUNDIR" $CHANNELS \
				>"$T/check.out" 2>&1
			while read -r verdict rest; do
				case $verdict in
				PASS) pass "$v ${rest%%:*}" "${rest#*: }" ;;
				FAIL) fail "$v ${rest%%:*}" "${rest#*: }" ;;
				*) fail "$v cdi_check" "$verdict $rest" ;;
				esac
			done <"$T/check.out"
		else
			fail "$v fpgad-cdi" "$(cat "$T/cdi.err")"
		fi
	done
	# With MPS's pipe directory: a second mount, and CUDA_MPS_PIPE_DIRECTORY.
	if "$CDI" --url "$URL" --kind "$KIND" --mps-pipe-dir /run/nvidia-mps -o "$T/spec-mps.json" &&
		"$PYTHON" - "$HERE" "$TOP/k8s/cdi-schema" "$T/spec-mps.json" "$RUNDIR" <<'EOF'; then
import json, sys
sys.path.insert(0, sys.argv[1])
import cdi_check
spec = json.load(open(sys.argv[3]))
assert not list(cdi_check.validator(sys.argv[2]).iter_errors(spec))
e = spec["containerEdits"]
assert [m["hostPath"] for m in e["mounts"]] == [sys.argv[4], "/run/nvidia-mps"], e
assert e["env"] == ["CUDA_MPS_PIPE_DIRECTORY=/run/nvidia-mps"], e
EOF
		pass cdi-mps "--mps-pipe-dir: the pipe directory bound and CUDA_MPS_PIPE_DIRECTORY set; valid"
	else
		fail cdi-mps "the spec with --mps-pipe-dir is not what it should be"
	fi
else
	skip cdi-schema "python3-jsonschema is not installed"
fi
# What it must refuse.
if "$CDI" --url "$URL" --cdi-version 0.6.0 --gid 1000 >/dev/null 2>"$T/err" &&
	! grep -q additionalGids "$T/err"; then
	fail cdi-gid-version "additionalGids written into a 0.6.0 spec"
else
	pass cdi-gid-version "$(cat "$T/err")"
fi
if "$CDI" --url "$URL" --cdi-version 0.7.0 --gid 1000 | grep -q '"additionalGids"'; then
	pass cdi-gid "--gid writes additionalGids in a 0.7.0 spec"
else
	fail cdi-gid "no additionalGids"
fi
if "$CDI" --url "ipc://$T/nothing/fpgad.sock" >/dev/null 2>"$T/err"; then
	fail cdi-no-fpgad "a spec written with no fpgad answering"
else
	pass cdi-no-fpgad "$(cat "$T/err" | cut -c1-100)"
fi
if "$CDI" --url "tcp://127.0.0.1:1" >/dev/null 2>"$T/err"; then
	fail cdi-remote-url "a spec for a tcp:// fpgad"
else
	pass cdi-remote-url "$(cat "$T/err")"
fi

# --- podman ----------------------------------------------------------------------
podman_cases() {
	if ! have podman; then
		skip podman "podman is not installed (apt-get install podman runc)"
		return
	fi
	if [ "$(id -u)" != 0 ]; then
		skip podman "rootful podman needs root"
		return
	fi
	build_consumer || { fail podman-consumer "cannot be built"; return; }
	# The image: a root filesystem with the consumer and fpgactl, nothing else.
	mkdir -p "$T/rootfs/tmp" "$T/rootfs/dev/shm"
	cp "$CONSUMER" "$T/rootfs/consumer"
	# fpgactl too, with the shared libraries it links copied in.
	cp "$BUILD/fpgactl" "$T/rootfs/fpgactl"
	ldd "$BUILD/fpgactl" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
		while read -r lib; do
			mkdir -p "$T/rootfs$(dirname "$lib")"
			cp -L "$lib" "$T/rootfs$lib"
		done
	IMAGE=localhost/fpgad-test-consumer:$RUN
	if ! tar -C "$T/rootfs" -c . | podman import -q - "$IMAGE" >"$T/import.log" 2>&1; then
		fail podman-image "podman import: $(tail -n 1 "$T/import.log")"
		return
	fi
	CLEANUPS="$CLEANUPS podman_cleanup"
	if ! podman_detect "$IMAGE" /fpgactl --version; then
		skip podman "no container runs on this host: $PODMAN_WHY"
		return
	fi
	[ -n "$PODMAN_WHY" ] && echo "     ($PODMAN run $RUNARGS; before that: $PODMAN_WHY)"
	# Debian 12's podman 4.3 reads CDI specs up to 0.5.0 and refuses the
	# annotations of 0.6.0 ("unknown field"): find the version it reads.
	SPEC=/var/run/cdi/fpgad-test-$RUN.json
	for v in 0.6.0 0.5.0; do
		"$CDI" --url "$URL" --kind "$KIND" --cdi-version $v -o "$SPEC" || {
			fail podman-spec "fpgad-cdi failed"
			return
		}
		# shellcheck disable=SC2086
		out=$($PODMAN run --rm $RUNARGS --device "$KIND=c2h0" "$IMAGE" /consumer 200 2>&1)
		rc=$?
		if [ $rc = 0 ] || ! echo "$out" | grep -q 'unresolvable CDI devices'; then
			break
		fi
		reason=$($PODMAN --log-level=debug run --rm $RUNARGS --device "$KIND=c2h0" "$IMAGE" /consumer 1 2>&1 |
			sed -n 's/.*failed to parse CDI Spec[^:]*: //p' | head -n 1 | cut -c1-120)
		skip "podman-spec-$v" "podman $(podman --version | cut -d' ' -f3) cannot read it (${reason:-unresolvable}); trying 0.5.0, the same edits without annotations"
	done
	if [ $rc = 0 ] && echo "$out" | grep -q '200 frames verified' && echo "$out" | grep -q ' pid 1$'; then
		pass "podman-c2h0 (spec $v)" "$(echo "$out" | sed 's/^consumer: //')"
	else
		fail "podman-c2h0 (spec $v)" "exit $rc: $(echo "$out" | tail -n 2 | tr '\n' ' ')"
	fi
	# fpgactl's own verifying capture, told nothing but what the device set.
	# shellcheck disable=SC2086
	out=$($PODMAN run --rm $RUNARGS --device "$KIND=c2h0" "$IMAGE" /fpgactl capture c2h0 -n 200 --verify 2>&1)
	if [ $? = 0 ] && echo "$out" | grep -q '^verified   200, errors 0'; then
		pass podman-fpgactl-capture "fpgactl capture c2h0 -n 200 --verify: $(echo "$out" | grep '^verified' | tr -s ' ')"
	else
		fail podman-fpgactl-capture "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
	# An h2c channel: the container hands frames to the card, which checks them.
	# shellcheck disable=SC2086
	out=$($PODMAN run --rm $RUNARGS --device "$KIND=h2c0" "$IMAGE" /fpgactl send h2c0 -n 100 2>&1)
	if [ $? = 0 ] && echo "$out" | grep -q '^card       100 verified, 0 rejected'; then
		pass podman-h2c "fpgactl send h2c0 -n 100: $(echo "$out" | grep '^card' | tr -s ' ')"
	else
		fail podman-h2c "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
	fi
	# Two containers at once, a channel each.
	# shellcheck disable=SC2086
	$PODMAN run --rm $RUNARGS --device "$KIND=c2h0" "$IMAGE" /consumer 300 \
		>"$T/a.out" 2>&1 &
	a=$!
	# shellcheck disable=SC2086
	$PODMAN run --rm $RUNARGS --device "$KIND=c2h1" "$IMAGE" /consumer 100 \
		>"$T/b.out" 2>&1
	rb=$?
	wait $a
	ra=$?
	if [ $ra = 0 ] && [ $rb = 0 ] && grep -q 'c2h0: 300 frames verified' "$T/a.out" &&
		grep -q 'c2h1: 100 frames verified' "$T/b.out"; then
		pass podman-two-containers "c2h0 and c2h1 in two containers at once"
	else
		fail podman-two-containers "$(cat "$T/a.out" "$T/b.out" | tr '\n' ' ')"
	fi
	# The card device: FPGAD_URL and the mount, the channel of one's choice.
	# shellcheck disable=SC2086
	out=$($PODMAN run --rm $RUNARGS --device "$KIND=card" -e FPGAD_CHANNEL=c2h1 \
		"$IMAGE" /consumer 50 2>&1)
	if [ $? = 0 ] && echo "$out" | grep -q 'c2h1: 50 frames verified'; then
		pass podman-card "$(echo "$out" | sed 's/^consumer: //')"
	else
		fail podman-card "$out"
	fi
	# Without the device the container reaches no fpgad, even when told where.
	# shellcheck disable=SC2086
	out=$($PODMAN run --rm $RUNARGS -e FPGAD_URL="$URL" -e FPGAD_CHANNEL=c2h0 \
		"$IMAGE" /consumer 10 2>&1)
	if [ $? != 0 ] && echo "$out" | grep -q 'connect'; then
		pass podman-no-device "refused: $(echo "$out" | tail -n 1 | cut -c1-100)"
	else
		fail podman-no-device "a container without the device reached fpgad: $out"
	fi
	# A consumer that is not root in the container: the socket's group
	# (here fpgad's, root's) as a supplementary group.
	gid=$(stat -c %g "$RUNDIR/fpgad.sock")
	# shellcheck disable=SC2086
	out=$($PODMAN run --rm $RUNARGS --device "$KIND=c2h0" --user 65534:65534 \
		--group-add "$gid" "$IMAGE" /consumer 50 2>&1)
	if [ $? = 0 ] && echo "$out" | grep -q 'uid 65534'; then
		pass podman-non-root "$(echo "$out" | sed 's/^consumer: //') (group $gid added)"
	else
		fail podman-non-root "$out"
	fi
	# shellcheck disable=SC2086
	out=$($PODMAN run --rm $RUNARGS --device "$KIND=c2h0" --user 65534:65534 \
		"$IMAGE" /consumer 10 2>&1)
	if [ $? != 0 ] && echo "$out" | grep -qi 'permission denied'; then
		pass podman-non-root-no-group "refused without the socket's group"
	else
		fail podman-non-root-no-group "$out"
	fi
	# What the container sees: the OCI spec podman made from the CDI edits.
	# shellcheck disable=SC2086
	id=$($PODMAN create $RUNARGS --device "$KIND=c2h0" "$IMAGE" /consumer 2>/dev/null)
	# shellcheck disable=SC2086
	if [ -n "$id" ] && $PODMAN init "$id" >/dev/null 2>&1; then
		cfg=$(podman inspect --format '{{.StaticDir}}' "$id")/config.json
		if "$PYTHON" - "$cfg" "$RUNDIR" <<'EOF'; then
import json, sys
c = json.load(open(sys.argv[1])); d = sys.argv[2]
m = [x for x in c["mounts"] if x["destination"] == d]
env = c["process"]["env"]
assert len(m) == 1 and m[0]["source"] == d and "ro" in m[0]["options"], m
assert f"FPGAD_URL=ipc://{d}/fpgad.sock" in env and "FPGAD_CHANNEL=c2h0" in env, env
assert not [x for x in c["mounts"] if x["source"].startswith(d) and x is not m[0]]
assert not c["linux"].get("devices"), c["linux"].get("devices")
EOF
			pass podman-oci-spec "one read-only bind of $RUNDIR, FPGAD_URL and FPGAD_CHANNEL, no device nodes"
		else
			fail podman-oci-spec "the container's OCI spec is not what the CDI device says"
		fi
		podman rm -f "$id" >/dev/null 2>&1
	else
		skip podman-oci-spec "podman create/init failed"
	fi
	# fpgad restarts while a container runs: the directory mount shows its
	# new sockets, a mount of the two sockets keeps the old ones.
	for m in dir sockets; do
		"$CDI" --url "$URL" --kind "$KIND" --cdi-version "$v" --mount $m -o "$SPEC" || continue
		mkdir -p "$T/sync-$m"
		name=fpgad-test-$RUN-$m
		# shellcheck disable=SC2086
		$PODMAN run --rm $RUNARGS --name "$name" --device "$KIND=c2h0" -v "$T/sync-$m:/sync" \
			-e CONSUMER_WAIT_FOR=/sync/go "$IMAGE" /consumer 50 >"$T/restart-$m.out" 2>&1 &
		bg=$!
		for _ in $(seq 100); do
			[ "$(podman container inspect -f '{{.State.Running}}' "$name" 2>/dev/null)" = true ] && break
			sleep 0.05
		done
		stop_fpgad "$FPGAD_PID"
		start_fpgad cdi || { fail podman-fpgad-restart "fpgad did not start again"; break; }
		touch "$T/sync-$m/go"
		wait $bg
		rc=$?
		out=$(tail -n 1 "$T/restart-$m.out")
		if [ $m = dir ]; then
			if [ $rc = 0 ] && echo "$out" | grep -q '50 frames verified'; then
				pass podman-fpgad-restart-dir "a container started before the restart reaches the new fpgad: $(echo "$out" | sed 's/^consumer: //')"
			else
				fail podman-fpgad-restart-dir "exit $rc: $out"
			fi
		elif [ $rc != 0 ] && echo "$out" | grep -q 'connect'; then
			pass podman-fpgad-restart-sockets "--mount sockets: the container keeps the old sockets: $(echo "$out" | cut -c1-90)"
		else
			fail podman-fpgad-restart-sockets "exit $rc: $out (expected the old socket to be dead)"
		fi
	done
}

podman_cleanup() {
	rm -f "/var/run/cdi/fpgad-test-$RUN.json"
	podman rmi -f "localhost/fpgad-test-consumer:$RUN" >/dev/null 2>&1
}

podman_cases
summary
