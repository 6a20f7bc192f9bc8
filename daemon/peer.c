// SPDX-License-Identifier: MIT
/* peer.c - naming a control peer in logs (peer.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>

#include "peer.h"

const char *peer_name(const struct peer *p, char *buf, size_t len)
{
	if (p->listener == LISTENER_REMOTE)
		snprintf(buf, len, "%s", p->addr[0] ? p->addr : "remote peer (address unknown)");
	else if (p->creds)
		snprintf(buf, len, "pid %d uid %u", (int)p->pid, (unsigned)p->uid);
	else
		snprintf(buf, len, "local peer (no credentials)");
	return buf;
}

int peer_format_addr(const struct sockaddr *sa, const char *scheme,
		     char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		snprintf(buf, len, "%s %s:%u", scheme, host, ntohs(in->sin_port));
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		snprintf(buf, len, "%s [%s]:%u", scheme, host, ntohs(in6->sin6_port));
		return 0;
	}
	return -EAFNOSUPPORT;
}
