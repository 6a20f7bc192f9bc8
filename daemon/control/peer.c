// SPDX-License-Identifier: MIT
/* peer.c - naming a control peer in logs (peer.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "control/peer.h"

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

int peer_sockaddr_from_nng(const nng_sockaddr *na,
			   struct sockaddr_storage *ret_ss)
{
	struct sockaddr_storage ss = { 0 };

	if (na->s_family == NNG_AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		in->sin_port = na->s_in.sa_port;
		in->sin_addr.s_addr = na->s_in.sa_addr;
	} else if (na->s_family == NNG_AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = na->s_in6.sa_port;
		memcpy(&in6->sin6_addr, na->s_in6.sa_addr, sizeof(in6->sin6_addr));
	} else {
		return -EAFNOSUPPORT;
	}
	*ret_ss = ss;
	return 0;
}

void peer_addr_key(const struct sockaddr_storage *ss, uint8_t ret_key[16])
{
	memset(ret_key, 0, 16);
	if (ss->ss_family == AF_INET6) {
		memcpy(ret_key, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else if (ss->ss_family == AF_INET) {
		ret_key[10] = ret_key[11] = 0xff;
		memcpy(ret_key + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	}
}
