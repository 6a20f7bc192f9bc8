// SPDX-License-Identifier: MIT
/*
 * test_roce_icrc.c - RoCE v2's invariant CRC (roce_icrc.c) against a
 * packet a RoCE NIC sent: a CNP captured on a ConnectX-4 Lx (the capture
 * in Scapy's RoCE tests), whose IP header has a TOS, a TTL and a checksum,
 * whose UDP checksum is 0 and whose BTH has BECN set: every masked field
 * differs from its mask.  Then what the masks leave out and what they do
 * not: a masked field changes nothing, any other byte changes the CRC.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "device/net/roce_icrc.h"
#include "device/net/roce_wire.h"

/*
 * The UDP payload of the capture (IPv4 10.0.17.1 -> 10.0.18.1, ID 0x718c,
 * DF, TOS 0xc2, TTL 64; UDP 0 -> 4791): BTH (CNP opcode 0x81, BECN, QPN
 * 0x118), 16 reserved bytes, the iCRC the NIC computed.
 */
static const uint8_t cnp[] = {
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18, 0x00, 0x00, 0x00, 0x00,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0x82, 0xfd, 0x00, 0x2a,
};

static struct roce_flow cnp_flow(void)
{
	struct roce_flow f = {
		.family = AF_INET,
		.src = { 10, 0, 17, 1 },
		.dst = { 10, 0, 18, 1 },
		.sport = 0,
		.dport = 4791,
		.ip_id = 0x718c,
		.ip_frag = 0x4000,
	};

	return f;
}

static void nic_packet(void **state)
{
	struct roce_flow f = cnp_flow();
	uint8_t p[sizeof(cnp)];

	(void)state;
	assert_int_equal(roce_icrc(&f, cnp, sizeof(cnp)), 0x2a00fd82u);
	assert_int_equal(roce_icrc_check(&f, cnp, sizeof(cnp)), 0);
	/* Sealing writes what the NIC wrote, least significant byte first. */
	memcpy(p, cnp, sizeof(p));
	memset(p + sizeof(p) - 4, 0, 4);
	roce_icrc_seal(&f, p, sizeof(p));
	assert_memory_equal(p, cnp, sizeof(p));
}

static void masked_fields(void **state)
{
	struct roce_flow f = cnp_flow();
	uint8_t p[sizeof(cnp)];

	(void)state;
	/* FECN, BECN and resv6 are masked: the NIC's BECN changes nothing. */
	memcpy(p, cnp, sizeof(p));
	p[4] = 0x80;
	assert_int_equal(roce_icrc_check(&f, p, sizeof(p)), 0);
	p[4] = 0x00;
	assert_int_equal(roce_icrc_check(&f, p, sizeof(p)), 0);
}

static void covered_fields(void **state)
{
	struct roce_flow f = cnp_flow(), g;
	uint8_t p[sizeof(cnp)];

	(void)state;
	/* Each byte of the packet but resv8a, one bit flipped: refused. */
	for (size_t i = 0; i < sizeof(cnp); i++) {
		if (i == 4)
			continue;
		memcpy(p, cnp, sizeof(p));
		p[i] ^= 0x01;
		assert_int_equal(roce_icrc_check(&f, p, sizeof(p)), -EBADMSG);
	}
	/* The addresses, ports and IPv4 identification are covered too. */
	g = f, g.src[3] ^= 1;
	assert_int_equal(roce_icrc_check(&g, cnp, sizeof(cnp)), -EBADMSG);
	g = f, g.dst[0] ^= 1;
	assert_int_equal(roce_icrc_check(&g, cnp, sizeof(cnp)), -EBADMSG);
	g = f, g.sport = 1;
	assert_int_equal(roce_icrc_check(&g, cnp, sizeof(cnp)), -EBADMSG);
	g = f, g.dport = 4792;
	assert_int_equal(roce_icrc_check(&g, cnp, sizeof(cnp)), -EBADMSG);
	g = f, g.ip_id = 0;
	assert_int_equal(roce_icrc_check(&g, cnp, sizeof(cnp)), -EBADMSG);
	/* Shorter by the last payload byte: another packet, another CRC. */
	memcpy(p, cnp, sizeof(p));
	memmove(p + sizeof(p) - 5, p + sizeof(p) - 4, 4);
	assert_int_equal(roce_icrc_check(&f, p, sizeof(p) - 1), -EBADMSG);
}

/* The flow from socket addresses, IPv4-mapped IPv6 as IPv4. */
static void flow_from_sockets(void **state)
{
	struct sockaddr_storage a = { 0 }, b = { 0 }, c = { 0 };
	struct sockaddr_in *s = (void *)&a, *d = (void *)&b;
	struct sockaddr_in6 *m = (void *)&c;
	struct roce_flow f, g, want = cnp_flow();

	(void)state;
	s->sin_family = AF_INET;
	inet_pton(AF_INET, "10.0.17.1", &s->sin_addr);
	s->sin_port = htons(0);
	d->sin_family = AF_INET;
	inet_pton(AF_INET, "10.0.18.1", &d->sin_addr);
	d->sin_port = htons(4791);
	assert_int_equal(roce_flow_from(&a, &b, &f), 0);
	assert_int_equal(f.family, AF_INET);
	assert_memory_equal(f.src, want.src, 4);
	assert_memory_equal(f.dst, want.dst, 4);
	assert_int_equal(f.dport, 4791);
	/* An FPGA's identification and flags: 0, DF. */
	assert_int_equal(f.ip_id, 0);
	assert_int_equal(f.ip_frag, 0x4000);

	m->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "::ffff:10.0.17.1", &m->sin6_addr);
	assert_int_equal(roce_flow_from(&c, &b, &g), 0);
	assert_int_equal(g.family, AF_INET);
	assert_memory_equal(g.src, want.src, 4);

	inet_pton(AF_INET6, "2001:db8::1", &m->sin6_addr);
	assert_int_equal(roce_flow_from(&c, &b, &g), -EAFNOSUPPORT);
	assert_int_equal(roce_flow_from(&c, &c, &g), 0);
	assert_int_equal(g.family, AF_INET6);
}

/* IPv6: sealed and checked, and the addresses are covered. */
static void ipv6_round_trip(void **state)
{
	struct roce_flow f = { .family = AF_INET6, .sport = 49152, .dport = 4791 };
	uint8_t p[ROCE_BTH_SIZE + 64 + ROCE_ICRC_SIZE];

	(void)state;
	inet_pton(AF_INET6, "2001:db8::1", f.src);
	inet_pton(AF_INET6, "2001:db8::2", f.dst);
	for (size_t i = 0; i < sizeof(p); i++)
		p[i] = (uint8_t)(i * 7);
	roce_icrc_seal(&f, p, sizeof(p));
	assert_int_equal(roce_icrc_check(&f, p, sizeof(p)), 0);
	f.dst[15] ^= 3;
	assert_int_equal(roce_icrc_check(&f, p, sizeof(p)), -EBADMSG);
}

/*
 * A packet landed in pieces (headers, payload, trailer apart, as the
 * receive path lands them) has the iCRC of the whole, wherever the cuts
 * fall; a byte changed in any piece, the trailer's included, is caught.
 */
static void packet_in_pieces(void **state)
{
	struct roce_flow f = cnp_flow();
	uint8_t p[ROCE_BTH_SIZE + ROCE_RETH_SIZE + 9000 + ROCE_ICRC_SIZE];
	const size_t len = sizeof(p);

	(void)state;
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 131 + 7);
	roce_icrc_seal(&f, p, len);
	for (unsigned k = 0; k < 400; k++) {
		/* First cut at the BTH or after; the pieces are copies. */
		size_t a = ROCE_BTH_SIZE + (k * 37) % 40;
		size_t b = a + (k * 7919) % (len - a + 1);
		uint8_t x[sizeof(p)];
		struct iovec v[3] = {
			{ x, a }, { x + a, b - a }, { x + b, len - b },
		};
		size_t flip = (k * 104729) % len;

		memcpy(x, p, len);
		assert_int_equal(roce_icrc_iov(&f, v, 3, len), roce_icrc(&f, p, len));
		assert_int_equal(roce_icrc_check_iov(&f, v, 3, len), 0);
		if (flip == 4)
			continue;	/* the BTH's masked byte */
		x[flip] ^= 0x10;
		assert_int_equal(roce_icrc_check_iov(&f, v, 3, len), -EBADMSG);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nic_packet),
		cmocka_unit_test(masked_fields),
		cmocka_unit_test(covered_fields),
		cmocka_unit_test(flow_from_sockets),
		cmocka_unit_test(ipv6_round_trip),
		cmocka_unit_test(packet_in_pieces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
