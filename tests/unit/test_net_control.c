// SPDX-License-Identifier: MIT
/*
 * test_net_control.c - the target fpgad tells a sender (net_control.c),
 * read by the sender's side written from the documentation
 * (tests/net/hsb_control.h): every register lands where HSB keeps it,
 * with the value the sender needs; the acknowledgement is told apart
 * from a refusal, a stale one and noise.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../net/hsb_control.h"
#include "device/net/net_control.h"

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
	uint8_t req[NET_CTL_REQUEST], reply[NET_CTL_REQUEST + 2];
	struct hsb_regs r;

	(void)state;
	memset(&r, 0xa5, sizeof(r));
	net_ctl_request(&target, 0x1234, req);
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
	assert_int_equal(net_ctl_reg_addr(NET_REG_VP_MASK_ON), 0x0200030c);
	assert_int_equal(net_ctl_reg_addr(NET_CTL_REGS), 0);

	/* The sender's reply acknowledges this request, not another. */
	uint8_t status = 0xff;

	assert_int_equal(net_ctl_reply(reply, sizeof(req) + 2, 0x1234, &status), 0);
	assert_int_equal(status, 0);
	assert_int_equal(net_ctl_reply(reply, sizeof(req) + 2, 0x1235, &status), -EAGAIN);
}

static void replies(void **state)
{
	uint8_t refused[] = { 0x89, 0x01, 0x00, 0x07, 0x03, 0x00 };
	uint8_t runt[] = { 0x89, 0x01, 0x00, 0x07 };
	uint8_t read_reply[] = { 0x94, 0x01, 0x00, 0x07, 0x00, 0x00 };
	uint8_t status = 0;

	(void)state;
	assert_int_equal(net_ctl_reply(refused, sizeof(refused), 7, &status), -EPROTO);
	assert_int_equal(status, 0x03);
	assert_int_equal(net_ctl_reply(runt, sizeof(runt), 7, &status), -EAGAIN);
	assert_int_equal(net_ctl_reply(read_reply, sizeof(read_reply), 7, &status), -EAGAIN);
	assert_int_equal(net_ctl_reply(NULL, 0, 7, &status), -EAGAIN);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_sets_registers),
		cmocka_unit_test(replies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
