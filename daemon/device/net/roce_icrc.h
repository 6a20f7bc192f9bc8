/* SPDX-License-Identifier: MIT */
/*
 * roce_icrc.h - RoCE v2's invariant CRC (InfiniBand Architecture
 * Specification, annex A17.8): CRC-32 (the Ethernet polynomial, as zlib
 * computes it) over
 *   8 bytes of 0xff      the masked LRH that RoCE v2 has not
 *   the IP header        IPv4: TOS, TTL and header checksum set to 1s;
 *                        IPv6: traffic class, flow label, hop limit 1s
 *   the UDP header       its checksum set to 1s
 *   the BTH              its resv8a byte (FECN, BECN) set to 1s
 *   the rest of the packet up to the iCRC
 * sent after the packet least significant byte first (as Linux's rxe and
 * HSB's emulator do).
 *
 * A UDP socket does not see the IP header: the receiver rebuilds it from
 * what it knows (both addresses and ports, the length), taking an IPv4
 * packet's identification and flags as an FPGA sends them: 0 and Don't
 * Fragment (HSB's IP does).  A sender that numbers its datagrams (a
 * kernel's IP stack) computes its iCRC over those values too.
 */
#ifndef FPGAD_NET_ROCE_ICRC_H
#define FPGAD_NET_ROCE_ICRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* IPv4's identification and flags an FPGA sends: 0, Don't Fragment. */
#define ROCE_IPV4_ID 0
#define ROCE_IPV4_FRAG 0x4000

/* The addresses and ports of one datagram: what the iCRC covers of them. */
struct roce_flow {
	int family;			/* AF_INET or AF_INET6 */
	uint8_t src[16], dst[16];	/* network order; IPv4: the first 4 */
	uint16_t sport, dport;		/* host order */
	uint16_t ip_id, ip_frag;	/* IPv4 only, host order */
};

/*
 * The flow of a datagram from @src to @dst (sockaddr_in or sockaddr_in6;
 * an IPv4-mapped IPv6 address counts as IPv4), with an FPGA's IPv4
 * identification and flags.  -EAFNOSUPPORT for another family, or when
 * one side is IPv4 and the other IPv6.
 */
int roce_flow_from(const struct sockaddr_storage *src,
		   const struct sockaddr_storage *dst, struct roce_flow *ret);

/*
 * The iCRC of the UDP payload @pkt of @len bytes (BTH first, its last 4
 * bytes the iCRC itself, which it does not cover).  @len >= 16.
 */
uint32_t roce_icrc(const struct roce_flow *f, const void *pkt, size_t len);

/*
 * The same of a packet in pieces: @len bytes in the @n buffers of @iov,
 * the first holding the BTH at least (the receive path lands headers and
 * payload apart).
 */
uint32_t roce_icrc_iov(const struct roce_flow *f, const struct iovec *iov,
		       unsigned n, size_t len);
int roce_icrc_check_iov(const struct roce_flow *f, const struct iovec *iov,
			unsigned n, size_t len);

/* Write @pkt's iCRC into its last 4 bytes. */
void roce_icrc_seal(const struct roce_flow *f, void *pkt, size_t len);

/* 0 when @pkt's last 4 bytes are its iCRC, -EBADMSG otherwise. */
int roce_icrc_check(const struct roce_flow *f, const void *pkt, size_t len);

#endif
