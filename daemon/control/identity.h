/* SPDX-License-Identifier: MIT */
/*
 * identity.h - who a local peer is, in an operator's words: its process
 * name and, when it runs in a container, the container's id and the
 * Kubernetes pod's UID, read from /proc/PID/comm and /proc/PID/cgroup at
 * connect.  Both cgroup drivers (systemd: kubepods-...-pod<UID>.slice/
 * cri-containerd-<ID>.scope; cgroupfs: kubepods/.../pod<UID>/<ID>),
 * cgroup v2 and v1, and docker's, podman's and CRI-O's scope names.
 */
#ifndef FPGAD_IDENTITY_H
#define FPGAD_IDENTITY_H

#include <stddef.h>
#include <sys/types.h>

#define IDENTITY_CONTAINER_MAX 65	/* 64 hex digits */
#define IDENTITY_POD_MAX 37		/* a UUID */

struct identity {
	char process[16];		/* /proc/PID/comm, "" unknown */
	char container[IDENTITY_CONTAINER_MAX];	/* "" none */
	char pod[IDENTITY_POD_MAX];	/* "" none */
};

/* The container and pod named by @text, /proc/PID/cgroup's content. */
void identity_from_cgroup(const char *text, struct identity *ret);
/* @pid's identity; what cannot be read stays "". */
void identity_read(pid_t pid, struct identity *ret);
/*
 * ", python3 in pod 0f4c..., container 3a1b2c3d4e5f" (the container's
 * id shortened to 12 digits), ", python3" outside one, "" unknown.
 */
const char *identity_name(const struct identity *id, char *buf, size_t len);

#endif
