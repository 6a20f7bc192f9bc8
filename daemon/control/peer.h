/* SPDX-License-Identifier: MIT */
/*
 * peer.h - who is at the other end of a control connection, and how logs
 * name it: a local peer by pid and uid (SO_PEERCRED), a remote peer by its
 * address ("tcp 192.0.2.7:40512").  A peer without credentials is never
 * called "pid 0".
 */
#ifndef FPGAD_PEER_H
#define FPGAD_PEER_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

enum listener_kind { LISTENER_LOCAL, LISTENER_REMOTE };

#define PEER_NAME_MAX 80

struct peer {
	uint32_t pipe_id;
	enum listener_kind listener;
	bool creds;		/* uid/gid/pid valid (local only) */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	char addr[64];		/* remote: "tcp 192.0.2.7:40512", else "" */
};

/* "pid 412 uid 1000", "tcp 192.0.2.7:40512" or what is known. */
const char *peer_name(const struct peer *p, char *buf, size_t len);
/*
 * "@scheme ADDRESS:PORT" ("[ADDRESS]:PORT" for IPv6) of an AF_INET or
 * AF_INET6 address; -EAFNOSUPPORT for another family.
 */
int peer_format_addr(const struct sockaddr *sa, const char *scheme,
		     char *buf, size_t len);
/*
 * The IP address of @ss as 16 bytes (IPv4 mapped into IPv6), to count
 * connections per address; zeros for another family.
 */
void peer_addr_key(const struct sockaddr_storage *ss, uint8_t ret_key[16]);
/* nng's form of an AF_INET or AF_INET6 address as the system's. */
int peer_sockaddr_from_nng(const nng_sockaddr *na,
			   struct sockaddr_storage *ret_ss);

#endif
