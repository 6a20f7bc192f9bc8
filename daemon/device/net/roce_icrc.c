// SPDX-License-Identifier: MIT
/*
 * roce_icrc.c - RoCE v2's invariant CRC (roce_icrc.h): the masked headers
 * rebuilt from the flow, then CRC-32 (roce_crc32.h) over them and the
 * packet, wherever its parts lie.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "device/net/roce_crc32.h"
#include "device/net/roce_icrc.h"
#include "device/net/roce_wire.h"

#define IPV4_HDR 20u
#define IPV6_HDR 40u
#define UDP_HDR 8u

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* One side's address into @addr; IPv4 (mapped too): true in *ret_v4. */
static int flow_addr(const struct sockaddr_storage *a, uint8_t *addr, int *ret_v4)
{
	if (a->ss_family == AF_INET) {
		memcpy(addr, &((const struct sockaddr_in *)a)->sin_addr, 4);
		*ret_v4 = 1;
		return ntohs(((const struct sockaddr_in *)a)->sin_port);
	}
	if (a->ss_family == AF_INET6) {
		const struct in6_addr *in6 = &((const struct sockaddr_in6 *)a)->sin6_addr;

		*ret_v4 = IN6_IS_ADDR_V4MAPPED(in6);
		memcpy(addr, *ret_v4 ? in6->s6_addr + 12 : in6->s6_addr,
		       *ret_v4 ? 4 : 16);
		return ntohs(((const struct sockaddr_in6 *)a)->sin6_port);
	}
	return -EAFNOSUPPORT;
}

int roce_flow_from(const struct sockaddr_storage *src,
		   const struct sockaddr_storage *dst, struct roce_flow *ret)
{
	struct roce_flow f = { .ip_id = ROCE_IPV4_ID, .ip_frag = ROCE_IPV4_FRAG };
	int sv4, dv4, sp, dp;

	sp = flow_addr(src, f.src, &sv4);
	dp = flow_addr(dst, f.dst, &dv4);
	if (sp < 0 || dp < 0 || sv4 != dv4)
		return -EAFNOSUPPORT;
	f.family = sv4 ? AF_INET : AF_INET6;
	f.sport = (uint16_t)sp;
	f.dport = (uint16_t)dp;
	*ret = f;
	return 0;
}

/* The masked IP and UDP headers and BTH of @pkt into @out; their length. */
static size_t masked_headers(const struct roce_flow *f, const uint8_t *pkt,
			     size_t len, uint8_t *out)
{
	uint8_t *udp;

	if (f->family == AF_INET) {
		out[0] = 0x45;
		out[1] = 0xff;				/* TOS */
		put16(out + 2, (uint16_t)(IPV4_HDR + UDP_HDR + len));
		put16(out + 4, f->ip_id);
		put16(out + 6, f->ip_frag);
		out[8] = 0xff;				/* TTL */
		out[9] = IPPROTO_UDP;
		put16(out + 10, 0xffff);		/* header checksum */
		memcpy(out + 12, f->src, 4);
		memcpy(out + 16, f->dst, 4);
		udp = out + IPV4_HDR;
	} else {
		/* Version 6, traffic class and flow label all 1s. */
		memset(out, 0xff, 4);
		out[0] = 0x6f;
		put16(out + 4, (uint16_t)(UDP_HDR + len));
		out[6] = IPPROTO_UDP;
		out[7] = 0xff;				/* hop limit */
		memcpy(out + 8, f->src, 16);
		memcpy(out + 24, f->dst, 16);
		udp = out + IPV6_HDR;
	}
	put16(udp, f->sport);
	put16(udp + 2, f->dport);
	put16(udp + 4, (uint16_t)(UDP_HDR + len));
	put16(udp + 6, 0xffff);				/* checksum */
	memcpy(udp + UDP_HDR, pkt, ROCE_BTH_SIZE);
	udp[UDP_HDR + 4] = 0xff;			/* BTH resv8a */
	return (size_t)(udp + UDP_HDR + ROCE_BTH_SIZE - out);
}

/* The iCRC the packet in @iov carries: its last 4 bytes, wherever they lie. */
static uint32_t carried(const struct iovec *iov, unsigned n, size_t len)
{
	size_t at = 0, from = len - ROCE_ICRC_SIZE;
	uint32_t v = 0;

	for (unsigned i = 0; i < n && at < len; at += iov[i++].iov_len)
		for (size_t j = from > at ? from - at : 0;
		     j < iov[i].iov_len && at + j < len; j++)
			v |= (uint32_t)((const uint8_t *)iov[i].iov_base)[j]
			     << (8 * (at + j - from));
	return v;
}

uint32_t roce_icrc_iov(const struct roce_flow *f, const struct iovec *iov,
		       unsigned n, size_t len)
{
	/* The LRH's 8 bytes of 1s, the masked headers, the RETH: one run. */
	uint8_t hdr[8 + IPV6_HDR + UDP_HDR + ROCE_BTH_SIZE + ROCE_RETH_SIZE];
	size_t end = len - ROCE_ICRC_SIZE, at = 0, from, more;
	size_t h = 8 + masked_headers(f, iov[0].iov_base, len, hdr + 8);
	uint32_t crc;

	memset(hdr, 0xff, 8);
	more = (iov[0].iov_len < end ? iov[0].iov_len : end) - ROCE_BTH_SIZE;
	if (more > ROCE_RETH_SIZE)
		more = ROCE_RETH_SIZE;
	memcpy(hdr + h, (const uint8_t *)iov[0].iov_base + ROCE_BTH_SIZE, more);
	crc = roce_crc32(0, hdr, h + more);
	/* The rest of the packet, up to the iCRC. */
	from = ROCE_BTH_SIZE + more;
	for (unsigned i = 0; i < n && at < end; at += iov[i++].iov_len) {
		size_t a = at < from ? from - at : 0;
		size_t b = iov[i].iov_len < end - at ? iov[i].iov_len : end - at;

		if (a < b)
			crc = roce_crc32(crc, (const uint8_t *)iov[i].iov_base + a, b - a);
	}
	return crc;
}

uint32_t roce_icrc(const struct roce_flow *f, const void *pkt, size_t len)
{
	struct iovec v = { (void *)pkt, len };

	return roce_icrc_iov(f, &v, 1, len);
}

void roce_icrc_seal(const struct roce_flow *f, void *pkt, size_t len)
{
	uint32_t c = roce_icrc(f, pkt, len);
	uint8_t *t = (uint8_t *)pkt + len - ROCE_ICRC_SIZE;

	for (unsigned i = 0; i < ROCE_ICRC_SIZE; i++)
		t[i] = (uint8_t)(c >> (8 * i));
}

int roce_icrc_check_iov(const struct roce_flow *f, const struct iovec *iov,
			unsigned n, size_t len)
{
	return roce_icrc_iov(f, iov, n, len) == carried(iov, n, len) ? 0 : -EBADMSG;
}

int roce_icrc_check(const struct roce_flow *f, const void *pkt, size_t len)
{
	struct iovec v = { (void *)pkt, len };

	return roce_icrc_check_iov(f, &v, 1, len);
}
