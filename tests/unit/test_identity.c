// SPDX-License-Identifier: MIT
/*
 * test_identity.c - a peer's container and pod from /proc/PID/cgroup, for
 * the layouts the container runtimes and the kubelet's two cgroup drivers
 * write, and its own process read from /proc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "control/identity.h"

#define CID "3a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcdef"
#define POD "0f4c7b0e-2d1a-4c3b-9e8f-7a6b5c4d3e2f"
#define POD_ "0f4c7b0e_2d1a_4c3b_9e8f_7a6b5c4d3e2f"

static void expect(const char *text, const char *container, const char *pod)
{
	struct identity id = { .process = "x" };

	identity_from_cgroup(text, &id);
	if (strcmp(id.container, container) || strcmp(id.pod, pod))
		fail_msg("'%s': container '%s' pod '%s', want '%s' '%s'", text,
			 id.container, id.pod, container, pod);
	assert_string_equal(id.process, "x");
}

static void test_cgroup_layouts(void **state)
{
	(void)state;
	/* cgroup v2, the kubelet's systemd driver, containerd and CRI-O. */
	expect("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" POD_
	       ".slice/cri-containerd-" CID ".scope\n", CID, POD);
	expect("0::/kubepods.slice/kubepods-pod" POD_ ".slice/crio-" CID ".scope\n", CID, POD);
	/* cgroup v2, the cgroupfs driver. */
	expect("0::/kubepods/burstable/pod" POD "/" CID "\n", CID, POD);
	/* cgroup v1: the controllers' lines, any of them. */
	expect("12:pids:/kubepods/besteffort/pod" POD "/" CID "\n"
	       "11:memory:/kubepods/besteffort/pod" POD "/" CID "\n"
	       "1:name=systemd:/kubepods/besteffort/pod" POD "/" CID "\n", CID, POD);
	/* docker and podman, no pod. */
	expect("0::/system.slice/docker-" CID ".scope\n", CID, "");
	expect("13:cpuset:/docker/" CID "\n0::/\n", CID, "");
	expect("0::/machine.slice/libpod-" CID ".scope/container\n", CID, "");
	/* No container: a login session, a service, the root. */
	expect("0::/user.slice/user-1000.slice/session-3.scope\n", "", "");
	expect("0::/system.slice/fpgad-consumer.service\n", "", "");
	expect("0::/\n", "", "");
	/* What is not an id: too short, too long, upper case, "pod" alone. */
	expect("0::/docker-3a1b2c3d4e5f.scope\n", "", "");
	expect("0::/docker-" CID "0.scope\n", "", "");
	expect("0::/docker-3A1B2C3D4E5F60718293A4B5C6D7E8F90123456789ABCDEF0123456789ABCDEF.scope\n", "", "");
	expect("0::/kubepods/podnothing/" CID "\n", CID, "");
	/* Garbage and a line too long are nothing, never a crash. */
	expect("", "", "");
	expect("no colons at all\n::\n:\n", "", "");
}

static void test_read_self(void **state)
{
	struct identity id;
	char buf[160], comm[32];
	FILE *f;

	(void)state;
	/* Its own name, whatever runs it (valgrind's is another). */
	f = fopen("/proc/self/comm", "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	comm[strcspn(comm, "\n")] = '\0';
	identity_read(getpid(), &id);
	assert_string_equal(id.process, comm);
	identity_name(&id, buf, sizeof(buf));
	assert_non_null(strstr(buf, comm));
	identity_read(0, &id);
	assert_string_equal(id.process, "");
	assert_string_equal(identity_name(&id, buf, sizeof(buf)), "");
	memcpy(id.container, CID, sizeof(CID));
	memcpy(id.pod, POD, sizeof(POD));
	snprintf(id.process, sizeof(id.process), "python3");
	assert_string_equal(identity_name(&id, buf, sizeof(buf)),
			    ", python3 in pod " POD ", container 3a1b2c3d4e5f");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_layouts),
		cmocka_unit_test(test_read_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
