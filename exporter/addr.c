// SPDX-License-Identifier: MIT
/* addr.c - naming and counting network peers (addr.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "addr.h"

int addr_format(const struct sockaddr *sa, const char *scheme, char *buf,
		size_t len)
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

void addr_peer_name(int fd, const char *scheme, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    addr_format((struct sockaddr *)&ss, scheme, buf, len) < 0)
		snprintf(buf, len, "a %s peer", scheme);
}

int addr_from_nng(const nng_sockaddr *na, struct sockaddr_storage *ret_ss)
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

void addr_key(const struct sockaddr_storage *ss, uint8_t ret_key[16])
{
	memset(ret_key, 0, 16);
	if (ss->ss_family == AF_INET6) {
		memcpy(ret_key, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else if (ss->ss_family == AF_INET) {
		ret_key[10] = ret_key[11] = 0xff;
		memcpy(ret_key + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	}
}
