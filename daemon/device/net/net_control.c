// SPDX-License-Identifier: MIT
/*
 * net_control.c - the request that tells a network sender its target, and
 * its acknowledgement (net_control.h).
 */
#include <errno.h>

#include "device/net/net_control.h"

static const uint32_t reg_addr[NET_CTL_REGS] = {
	[NET_REG_VP_MASK_OFF] = NET_CTL_HIF + 0x0c,
	[NET_REG_PACKET_SIZE] = NET_CTL_HIF + 0x04,
	[NET_REG_BUFFER_LENGTH] = NET_CTL_VP + 0x18,
	[NET_REG_HOST_MAC_LOW] = NET_CTL_VP + 0x20,
	[NET_REG_HOST_MAC_HIGH] = NET_CTL_VP + 0x24,
	[NET_REG_HOST_IP] = NET_CTL_VP + 0x28,
	[NET_REG_HOST_UDP_PORT] = NET_CTL_VP + 0x2c,
	[NET_REG_QP] = NET_CTL_VP + 0x00,
	[NET_REG_RKEY] = NET_CTL_VP + 0x04,
	[NET_REG_PAGE_LSB] = NET_CTL_VP + 0x08,
	[NET_REG_PAGE_MSB] = NET_CTL_VP + 0x0c,
	[NET_REG_PAGE_INC] = NET_CTL_VP + 0x10,
	[NET_REG_MAX_BUFF] = NET_CTL_VP + 0x14,
	[NET_REG_VP_MASK_ON] = NET_CTL_HIF + 0x0c,
};

uint32_t net_ctl_reg_addr(unsigned r)
{
	return r < NET_CTL_REGS ? reg_addr[r] : 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void net_ctl_request(const struct net_target *t, uint16_t seq,
		     uint8_t out[NET_CTL_REQUEST])
{
	const uint8_t *m = t->host_mac;
	uint32_t v[NET_CTL_REGS] = {
		[NET_REG_VP_MASK_OFF] = 0,
		[NET_REG_PACKET_SIZE] = t->payload / ROCE_PAYLOAD_UNIT,
		[NET_REG_BUFFER_LENGTH] = t->frame_size,
		[NET_REG_HOST_MAC_LOW] = (uint32_t)m[2] << 24 | (uint32_t)m[3] << 16 |
					 (uint32_t)m[4] << 8 | m[5],
		[NET_REG_HOST_MAC_HIGH] = (uint32_t)m[0] << 8 | m[1],
		[NET_REG_HOST_IP] = t->host_ip,
		[NET_REG_HOST_UDP_PORT] = t->host_port,
		[NET_REG_QP] = t->qpn,
		[NET_REG_RKEY] = t->rkey,
		[NET_REG_PAGE_LSB] = (uint32_t)t->layout.base,
		[NET_REG_PAGE_MSB] = (uint32_t)(t->layout.base >> 32),
		[NET_REG_PAGE_INC] = (uint32_t)(t->layout.stride / ROCE_PAYLOAD_UNIT),
		[NET_REG_MAX_BUFF] = t->layout.pages - 1,
		[NET_REG_VP_MASK_ON] = 1,
	};

	out[0] = NET_CTL_WRITE_BLOCK;
	out[1] = NET_CTL_FLAG_ACK;
	out[2] = (uint8_t)(seq >> 8);
	out[3] = (uint8_t)seq;
	out[4] = out[5] = 0;
	for (unsigned r = 0; r < NET_CTL_REGS; r++) {
		put32(out + NET_CTL_HDR + 8 * r, reg_addr[r]);
		put32(out + NET_CTL_HDR + 8 * r + 4, v[r]);
	}
}

int net_ctl_reply(const uint8_t *buf, size_t len, uint16_t seq,
		  uint8_t *ret_status)
{
	if (len < NET_CTL_REPLY_MIN ||
	    buf[0] != (NET_CTL_WRITE_BLOCK | NET_CTL_REPLY) ||
	    ((uint16_t)buf[2] << 8 | buf[3]) != seq)
		return -EAGAIN;
	*ret_status = buf[4];
	return buf[4] ? -EPROTO : 0;
}
