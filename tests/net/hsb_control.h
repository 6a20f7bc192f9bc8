/* SPDX-License-Identifier: MIT */
/*
 * hsb_control.h - the sender's side of the target fpgad sends to its
 * control port, written from docs/net-target.md (not from fpgad's code,
 * so that the two cannot share a mistake): HSB's ECB WRITE_BLOCK into the
 * data channel registers, and the acknowledgement.  Header only, for
 * hsb_sender and the unit tests.
 */
#ifndef FPGAD_TESTS_HSB_CONTROL_H
#define FPGAD_TESTS_HSB_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The registers of the data channel (sensor 0's VP, data plane 0's HIF). */
struct hsb_regs {
	uint32_t qp, rkey, page_lsb, page_msb, page_inc, max_buff;
	uint32_t buffer_length, mac_low, mac_high, host_ip, host_udp_port;
	uint32_t packet_size, vp_mask;
};

static inline uint32_t hsb_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The register at @addr, or NULL for one the sender does not have. */
static inline uint32_t *hsb_reg(struct hsb_regs *r, uint32_t addr)
{
	switch (addr) {
	case 0x1000: return &r->qp;
	case 0x1004: return &r->rkey;
	case 0x1008: return &r->page_lsb;
	case 0x100c: return &r->page_msb;
	case 0x1010: return &r->page_inc;
	case 0x1014: return &r->max_buff;
	case 0x1018: return &r->buffer_length;
	case 0x1020: return &r->mac_low;
	case 0x1024: return &r->mac_high;
	case 0x1028: return &r->host_ip;
	case 0x102c: return &r->host_udp_port;
	case 0x02000304: return &r->packet_size;
	case 0x0200030c: return &r->vp_mask;
	default: return NULL;
	}
}

/*
 * One request @req of @len bytes: a WRITE_BLOCK's writes done, in order,
 * and its reply into @reply (at least @len + 2 bytes); returns the reply's
 * length, 0 for a datagram that is not a WRITE_BLOCK.  An unknown register
 * stops the block with status 0x03, as HSB answers.
 */
static inline size_t hsb_ctl_handle(struct hsb_regs *r, const uint8_t *req,
				    size_t len, uint8_t *reply)
{
	size_t n, i;
	uint8_t status = 0;

	if (len < 14 || req[0] != 0x09 || (len - 6) % 8)
		return 0;
	n = (len - 6) / 8;
	for (i = 0; i < n && !status; i++) {
		uint32_t *reg = hsb_reg(r, hsb_get32(req + 6 + 8 * i));

		if (reg)
			*reg = hsb_get32(req + 10 + 8 * i);
		else
			status = 0x03;
	}
	reply[0] = 0x89;
	reply[1] = req[1];
	reply[2] = req[2];
	reply[3] = req[3];
	reply[4] = status;
	reply[5] = 0;
	for (i = 6; i < len; i++)
		reply[i] = req[i];
	reply[len] = req[2];
	reply[len + 1] = req[3];
	return len + 2;
}

#endif
