/* SPDX-License-Identifier: MIT */
/*
 * hsb_tx.h - the sending side of roce_wire.h, for tests: the packets an
 * HSB-style FPGA sends for one frame (data as UC WRITE Only packets of the
 * payload size, then a WRITE Only with Immediate carrying the metadata
 * block, as HSB does when the metadata does not fit the last packet).
 * Header only; the unit tests, the fuzzer's seeds and hsb_sender use it.
 */
#ifndef FPGAD_TESTS_HSB_TX_H
#define FPGAD_TESTS_HSB_TX_H

#include <stdint.h>
#include <string.h>

#include "device/net/roce_wire.h"

struct hsb_tx {
	uint32_t qpn, rkey;
	struct sender_layout lay;
	uint32_t payload;		/* bytes per data packet */
	uint32_t psn;			/* of the frame's first packet */
	uint32_t page;
	uint32_t frame_number;
	/* The metadata's frame start and end times, ns (0: none sent). */
	uint64_t t_start_ns, t_end_ns;
};

static inline void hsb_put(uint8_t *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

/* A packet's headers at @out; returns where the payload goes. */
static inline uint8_t *hsb_headers(uint8_t *out, uint8_t opcode, uint32_t qpn,
				   uint32_t psn, uint64_t va, uint32_t rkey,
				   uint32_t dma_len, uint32_t imm)
{
	memset(out, 0, ROCE_BTH_SIZE);
	out[0] = opcode;
	hsb_put(out + 2, 0xffff, 2);
	hsb_put(out + 5, qpn & ROCE_QPN_MASK, 3);
	hsb_put(out + 9, psn & ROCE_PSN_MASK, 3);
	hsb_put(out + ROCE_BTH_SIZE, va, 8);
	hsb_put(out + ROCE_BTH_SIZE + 8, rkey, 4);
	hsb_put(out + ROCE_BTH_SIZE + 12, dma_len, 4);
	out += ROCE_BTH_SIZE + ROCE_RETH_SIZE;
	if (opcode == ROCE_OP_UC_WRITE_ONLY_IMM) {
		hsb_put(out, imm, 4);
		out += ROCE_IMM_SIZE;
	}
	return out;
}

static inline uint32_t hsb_tx_packets(const struct hsb_tx *t, uint64_t len)
{
	return (uint32_t)((len + t->payload - 1) / t->payload) + 1;
}

/*
 * Packet @i (0 .. hsb_tx_packets() - 1) of the frame of @len bytes at
 * @data, into @out (ROCE_MAX_PACKET bytes); returns its length.  The iCRC
 * trailer is left zero: roce_icrc_seal() writes it, knowing the addresses.
 */
static inline size_t hsb_tx_packet(const struct hsb_tx *t, const void *data,
				   uint64_t len, uint32_t i, uint8_t *out)
{
	uint64_t page_va = t->lay.base + (uint64_t)t->page * t->lay.stride;
	uint32_t psn = (t->psn + i) & ROCE_PSN_MASK;
	uint64_t off = (uint64_t)i * t->payload;
	uint8_t *p;

	if (i + 1 < hsb_tx_packets(t, len)) {
		uint32_t n = len - off < t->payload ? (uint32_t)(len - off) :
						      t->payload;

		p = hsb_headers(out, ROCE_OP_UC_WRITE_ONLY, t->qpn, psn,
				page_va + off, t->rkey, n, 0);
		memcpy(p, (const uint8_t *)data + off, n);
		memset(p + n, 0, ROCE_ICRC_SIZE);
		return (size_t)(p + n + ROCE_ICRC_SIZE - out);
	}
	p = hsb_headers(out, ROCE_OP_UC_WRITE_ONLY_IMM, t->qpn, psn,
			page_va + (len + ROCE_PAYLOAD_UNIT - 1) /
				  ROCE_PAYLOAD_UNIT * ROCE_PAYLOAD_UNIT,
			t->rkey, ROCE_META_SIZE,
			(psn & 0xfffffu) << 12 | (t->page & 0xfffu));
	memset(p, 0, ROCE_META_SIZE + ROCE_ICRC_SIZE);
	hsb_put(p + 4, psn, 4);
	hsb_put(p + 24, len, 8);
	hsb_put(p + 32, t->frame_number, 4);
	hsb_put(p + 12, t->t_start_ns / 1000000000u, 8);
	hsb_put(p + 20, t->t_start_ns % 1000000000u, 4);
	hsb_put(p + 36, t->t_end_ns / 1000000000u, 8);
	hsb_put(p + 44, t->t_end_ns % 1000000000u, 4);
	return (size_t)(p + ROCE_META_SIZE + ROCE_ICRC_SIZE - out);
}

#endif
