// SPDX-License-Identifier: MIT
/*
 * test_net_target.c - the target fpgad tells a sender (net_target.c),
 * read by the sender's side written from the documentation
 * (tests/net/hsb_control.h): every register lands where HSB keeps it,
 * with the value the sender needs; the acknowledgement is told apart
 * from a refusal, a stale one and noise.  The exchange (struct net_target_ctl,
 * both sources' side) over loopback: a RoCE channel's target (host port
 * 4791), its retries, its acknowledgement and failures counted once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "../net/hsb_control.h"
#include "device/net/net_target.h"

static const struct net_target target = {
	.qpn = 0x4d2,
	.rkey = 0xdeadbeef,
	.layout = { .base = 0x10000000000ull, .stride = 61440, .pages = 16 },
	.frame_size = 60000,
	.payload = 1408,
	.host_ip = 0x0a4d0001,		/* 10.77.0.1 */
	.host_port = 4791,
	.host_mac = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 },
};

static void request_sets_registers(void **state)
{
	uint8_t req[NET_TARGET_REQUEST], reply[NET_TARGET_REQUEST + 2];
	struct hsb_regs r;

	(void)state;
	memset(&r, 0xa5, sizeof(r));
	net_target_request(&target, 0x1234, req);
	/* HSB's framing: WRITE_BLOCK, acknowledge, the sequence number. */
	assert_int_equal(req[0], 0x09);
	assert_int_equal(req[1], 0x01);
	assert_int_equal(req[2] << 8 | req[3], 0x1234);
	assert_int_equal(hsb_ctl_handle(&r, req, sizeof(req), reply), sizeof(req) + 2);
	assert_int_equal(reply[4], 0);
	assert_int_equal(r.qp, 0x4d2);
	assert_int_equal(r.rkey, 0xdeadbeef);
	assert_int_equal(r.page_lsb, 0);
	assert_int_equal(r.page_msb, 0x100);
	assert_int_equal(r.page_inc, 61440 / 128);
	assert_int_equal(r.max_buff, 15);
	assert_int_equal(r.buffer_length, 60000);
	assert_int_equal(r.packet_size, 1408 / 128);
	assert_int_equal(r.host_ip, 0x0a4d0001);
	assert_int_equal(r.host_udp_port, 4791);
	assert_int_equal(r.mac_high, 0x0211);
	assert_int_equal(r.mac_low, 0x22334455);
	/* Disabled first, enabled last: never half a target. */
	assert_int_equal(r.vp_mask, 1);
	assert_int_equal(req[6] << 24 | req[7] << 16 | req[8] << 8 | req[9], 0x0200030c);
	assert_int_equal(req[10] | req[11] | req[12] | req[13], 0);
	assert_int_equal(net_target_reg_addr(NET_REG_VP_MASK_ON), 0x0200030c);
	assert_int_equal(net_target_reg_addr(NET_TARGET_REGS), 0);

	/* The sender's reply acknowledges this request, not another. */
	uint8_t status = 0xff;

	assert_int_equal(net_target_reply(reply, sizeof(req) + 2, 0x1234, &status), 0);
	assert_int_equal(status, 0);
	assert_int_equal(net_target_reply(reply, sizeof(req) + 2, 0x1235, &status), -EAGAIN);
}

static void replies(void **state)
{
	uint8_t refused[] = { 0x89, 0x01, 0x00, 0x07, 0x03, 0x00 };
	uint8_t runt[] = { 0x89, 0x01, 0x00, 0x07 };
	uint8_t read_reply[] = { 0x94, 0x01, 0x00, 0x07, 0x00, 0x00 };
	uint8_t status = 0;

	(void)state;
	assert_int_equal(net_target_reply(refused, sizeof(refused), 7, &status), -EPROTO);
	assert_int_equal(status, 0x03);
	assert_int_equal(net_target_reply(runt, sizeof(runt), 7, &status), -EAGAIN);
	assert_int_equal(net_target_reply(read_reply, sizeof(read_reply), 7, &status), -EAGAIN);
	assert_int_equal(net_target_reply(NULL, 0, 7, &status), -EAGAIN);
}

/* A sender's control port on loopback (port 0, read back), its text. */
static int sender_port(char *ep, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &alen), 0);
	snprintf(ep, len, "127.0.0.1:%u", ntohs(a.sin_port));
	return fd;
}

/* The request @fd got (one, already there): decoded into @r; its length. */
static ssize_t take_request(int fd, struct hsb_regs *r, struct sockaddr_in *from,
			    uint8_t req[NET_TARGET_REQUEST])
{
	socklen_t flen = sizeof(*from);
	uint8_t reply[NET_TARGET_REQUEST + 2];
	ssize_t n = recvfrom(fd, req, NET_TARGET_REQUEST, MSG_DONTWAIT,
			     (struct sockaddr *)from, &flen);

	if (n > 0)
		assert_true(hsb_ctl_handle(r, req, (size_t)n, reply) > 0);
	return n;
}

/*
 * @c opened towards the fake sender at @ep, as channel roce0 writing to
 * 127.0.0.1:4791, counting into @cnt under @lock.
 */
static void open_loopback(struct net_target_ctl *c, const char *ep,
			  pthread_mutex_t *lock, struct source_counters *cnt)
{
	struct sockaddr_storage local = { 0 };
	struct sockaddr_in *l = (void *)&local;

	l->sin_family = AF_INET;
	l->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l->sin_port = htons(4791);
	assert_int_equal(net_target_open(c, "roce0", ep, NULL, &local, lock, cnt), 0);
}

/*
 * A RoCE channel's exchange: listen 127.0.0.1 at 4791 is the host port
 * told; the sender gets each ring's R_Key, a lost request is sent again
 * with its sequence number, the acknowledgement is counted once; a sender
 * that never answers is one failure after NET_TARGET_TRIES tries.
 */
static void exchange_roce_target(void **state)
{
	struct sockaddr_in from;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct source_counters cnt = { 0 };
	uint8_t req[NET_TARGET_REQUEST], ack[NET_TARGET_REPLY_MIN + 1] = { 0 };
	struct hsb_regs r;
	struct net_target_ctl c;
	char ep[64];
	int fd = sender_port(ep, sizeof(ep));
	uint64_t now = 1000000000ull;

	(void)state;
	open_loopback(&c, ep, &lock, &cnt);
	assert_true(c.fd >= 0);
	assert_string_equal(c.where, ep);
	c.target.qpn = 0x11;
	c.target.layout = target.layout;
	c.target.frame_size = 16000;
	c.target.payload = 1024;
	/* Nothing to say before a ring. */
	net_target_step(&c, now);
	assert_int_equal(net_target_timeout(&c, now), -1);
	assert_true(take_request(fd, &r, &from, req) < 0);

	net_target_new_ring(&c, 0xabc00);
	net_target_step(&c, now);
	memset(&r, 0, sizeof(r));
	assert_int_equal(take_request(fd, &r, &from, req), NET_TARGET_REQUEST);
	assert_int_equal(r.qp, 0x11);
	assert_int_equal(r.rkey, 0xabc00);
	assert_int_equal(r.host_ip, INADDR_LOOPBACK);
	assert_int_equal(r.host_udp_port, 4791);
	assert_int_equal(r.packet_size * 128u, 1024);
	assert_int_equal(r.buffer_length, 16000);
	assert_int_equal(r.max_buff + 1, target.layout.pages);
	/* Not answered: again at the retry, not before. */
	assert_int_equal(net_target_timeout(&c, now), NET_TARGET_RETRY_MS);
	net_target_step(&c, now + 1);
	assert_true(take_request(fd, &r, &from, req) < 0);
	net_target_step(&c, now + NET_TARGET_RETRY_MS * 1000000ull);
	assert_int_equal(take_request(fd, &r, &from, req), NET_TARGET_REQUEST);
	/* The acknowledgement: counted once, then quiet. */
	ack[0] = NET_TARGET_WRITE_BLOCK | NET_TARGET_REPLY;
	ack[2] = req[2];
	ack[3] = req[3];
	assert_int_equal(sendto(fd, ack, sizeof(ack), 0, (struct sockaddr *)&from,
				sizeof(from)), sizeof(ack));
	assert_int_equal(sendto(fd, ack, sizeof(ack), 0, (struct sockaddr *)&from,
				sizeof(from)), sizeof(ack));
	{
		struct pollfd p = { .fd = c.fd, .events = POLLIN };

		assert_int_equal(poll(&p, 1, -1), 1);	/* the acks are there */
	}
	net_target_replies(&c);
	assert_int_equal(cnt.control_acks, 1);
	assert_int_equal(cnt.control_failures, 0);
	assert_int_equal(net_target_timeout(&c, now), -1);

	/* The next ring, never answered: NET_TARGET_TRIES tries, one failure. */
	net_target_new_ring(&c, 0xdef00);
	for (unsigned i = 0; i <= NET_TARGET_TRIES; i++)
		net_target_step(&c, now + (i + 10) * NET_TARGET_RETRY_MS * 1000000ull);
	for (unsigned i = 0; i < NET_TARGET_TRIES; i++) {
		assert_int_equal(take_request(fd, &r, &from, req), NET_TARGET_REQUEST);
		assert_int_equal(r.rkey, 0xdef00);
	}
	assert_true(take_request(fd, &r, &from, req) < 0);
	assert_int_equal(cnt.control_acks, 1);
	assert_int_equal(cnt.control_failures, 1);
	net_target_close(&c);
	close(fd);
}

/*
 * A gated sender (source = roce) is told a new ring only once a slot is
 * armed for it: what it wrote before that would be lost.  And the control
 * thread, started, sends it by itself.
 */
static void exchange_gated(void **state)
{
	struct sockaddr_in from;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct source_counters cnt = { 0 };
	uint8_t req[NET_TARGET_REQUEST];
	struct hsb_regs r;
	struct net_target_ctl c;
	char ep[64];
	int fd = sender_port(ep, sizeof(ep));
	uint64_t now = 1000000000ull;

	(void)state;
	open_loopback(&c, ep, &lock, &cnt);
	c.target.layout = target.layout;
	c.gated = true;
	net_target_new_ring(&c, 0x1100);
	net_target_step(&c, now);
	assert_true(take_request(fd, &r, &from, req) < 0);	/* no slot yet */
	assert_int_equal(net_target_timeout(&c, now), -1);
	/* A newer ring before any slot: only it is told. */
	net_target_new_ring(&c, 0x1600);
	assert_true(net_target_armed(&c));
	assert_false(net_target_armed(&c));	/* once */
	net_target_step(&c, now);
	assert_int_equal(take_request(fd, &r, &from, req), NET_TARGET_REQUEST);
	assert_int_equal(r.rkey, 0x1600);
	assert_int_equal(cnt.control_failures, 0);

	/* Started, the control thread tells the next ring by itself. */
	assert_int_equal(net_target_start(&c), 0);
	pthread_mutex_lock(&lock);
	net_target_new_ring(&c, 0x2200);
	assert_true(net_target_armed(&c));
	pthread_mutex_unlock(&lock);
	net_target_wake(&c);
	/* (A retry of the unanswered 0x1600 may come first.) */
	r.rkey = 0;
	for (int i = 0; i < 8 && r.rkey != 0x2200; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		assert_int_equal(poll(&p, 1, 5000), 1);
		assert_int_equal(take_request(fd, &r, &from, req), NET_TARGET_REQUEST);
	}
	assert_int_equal(r.rkey, 0x2200);
	net_target_close(&c);
	close(fd);
}

/* sender_control = none, or an IPv6 sender: nothing is sent, nothing counted. */
static void exchange_none(void **state)
{
	struct sockaddr_storage local = { .ss_family = AF_INET6 };
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct source_counters cnt = { 0 };
	struct net_target_ctl c;

	(void)state;
	assert_int_equal(net_target_open(&c, "r", "none", NULL, &local, &lock, &cnt), 0);
	assert_int_equal(c.fd, -1);
	assert_string_equal(c.where, "none");
	assert_int_equal(net_target_open(&c, "r", "[::1]:8192", NULL, &local, &lock, &cnt), 0);
	assert_int_equal(c.fd, -1);
	net_target_new_ring(&c, 5);
	net_target_step(&c, 1);
	assert_int_equal(net_target_timeout(&c, 1), -1);
	assert_int_equal(cnt.control_acks + cnt.control_failures, 0);
	net_target_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_sets_registers),
		cmocka_unit_test(replies),
		cmocka_unit_test(exchange_roce_target),
		cmocka_unit_test(exchange_gated),
		cmocka_unit_test(exchange_none),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
