/* SPDX-License-Identifier: MIT */
/*
 * peer.h - who is at the other end of a control connection, and how logs
 * name it: by pid and uid (SO_PEERCRED, from the ipc pipe).  A peer
 * without credentials is never called "pid 0".
 */
#ifndef FPGAD_PEER_H
#define FPGAD_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PEER_NAME_MAX 80

struct peer {
	uint32_t pipe_id;
	bool creds;		/* uid/gid/pid valid */
	uid_t uid;
	gid_t gid;
	pid_t pid;
};

/* "pid 412 uid 1000", or "local peer (no credentials)". */
const char *peer_name(const struct peer *p, char *buf, size_t len);

#endif
