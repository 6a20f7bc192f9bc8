// SPDX-License-Identifier: MIT
/*
 * roce_wire.c - decode the RoCE v2 packets of a network-attached FPGA
 * (roce_wire.h): the one place fpgad reads a sender's bytes.  Nothing here
 * trusts a length or an address it did not check.
 */
#include <errno.h>

#include "device/net/roce_wire.h"

static uint32_t be16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | be16(p + 1);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | be24(p + 1);
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/*
 * The headers at @p (@avail bytes of them there) of a packet of @len
 * bytes: decoded into *@pkt, their size into *@ret_hdr.
 */
static int parse_headers(const uint8_t *p, size_t avail, size_t len,
			 struct roce_pkt *pkt, size_t *ret_hdr)
{
	size_t hdr = ROCE_BTH_SIZE + ROCE_RETH_SIZE, pad;

	if (!p || len < ROCE_MIN_PACKET || avail < hdr)
		return -EBADMSG;
	pkt->opcode = p[0];
	/* Transport version 0 is the only one. */
	if ((p[1] & 0x0f) != 0)
		return -EPROTONOSUPPORT;
	if (pkt->opcode == ROCE_OP_UC_WRITE_ONLY_IMM)
		hdr += ROCE_IMM_SIZE;
	else if (pkt->opcode != ROCE_OP_UC_WRITE_ONLY)
		return -EPROTONOSUPPORT;
	pad = (p[1] >> 4) & 0x3;
	if (len < hdr + pad + ROCE_ICRC_SIZE || avail < hdr)
		return -EBADMSG;
	pkt->dest_qp = be24(p + 5);
	pkt->psn = be24(p + 9);
	pkt->va = be64(p + ROCE_BTH_SIZE);
	pkt->rkey = be32(p + ROCE_BTH_SIZE + 8);
	pkt->dma_len = be32(p + ROCE_BTH_SIZE + 12);
	if (pkt->opcode == ROCE_OP_UC_WRITE_ONLY_IMM)
		pkt->imm = be32(p + ROCE_BTH_SIZE + ROCE_RETH_SIZE);
	/* The DMA length is exactly what the packet carries. */
	if ((uint64_t)pkt->dma_len != len - hdr - pad - ROCE_ICRC_SIZE)
		return -EBADMSG;
	*ret_hdr = hdr;
	return 0;
}

int roce_parse(const void *buf, size_t len, struct roce_pkt *ret_pkt)
{
	struct roce_pkt pkt = { 0 };
	size_t hdr;
	int r = parse_headers(buf, len, len, &pkt, &hdr);

	if (r < 0)
		return r;
	pkt.payload = (const uint8_t *)buf + hdr;
	*ret_pkt = pkt;
	return 0;
}

int roce_parse_split(const void *hdr, size_t hdr_len, size_t len,
		     const void *payload, struct roce_pkt *ret_pkt)
{
	struct roce_pkt pkt = { 0 };
	size_t h;
	int r = parse_headers(hdr, hdr_len, len, &pkt, &h);

	if (r < 0)
		return r;
	if (h != hdr_len)
		return -EBADMSG;
	pkt.payload = payload;
	*ret_pkt = pkt;
	return 0;
}

void roce_meta_parse(const void *buf, struct roce_meta *ret_meta)
{
	const uint8_t *p = buf;
	struct roce_meta m = {
		.flags = be32(p),
		.psn = be32(p + 4),
		.crc = be32(p + 8),
		.start_s = be64(p + 12),
		.start_ns = be32(p + 20),
		.bytes_written = be64(p + 24),
		.frame_number = be32(p + 32),
		.meta_s = be64(p + 36),
		.meta_ns = be32(p + 44),
	};

	*ret_meta = m;
}

static uint64_t meta_time_ns(uint64_t s, uint32_t ns)
{
	const uint64_t giga = 1000000000u;

	if (ns >= giga || s > (UINT64_MAX - ns) / giga)
		return 0;
	return s * giga + ns;
}

void roce_meta_times(const struct roce_meta *m, uint64_t *ret_start_ns,
		     uint64_t *ret_end_ns)
{
	*ret_start_ns = meta_time_ns(m->start_s, m->start_ns);
	*ret_end_ns = meta_time_ns(m->meta_s, m->meta_ns);
}

int roce_place(const struct sender_layout *lay, uint64_t va, uint64_t len,
	       uint32_t *ret_page, uint64_t *ret_offset)
{
	uint64_t rel, page, off;

	if (!lay->stride || va < lay->base)
		return -ERANGE;
	rel = va - lay->base;
	page = rel / lay->stride;
	off = rel % lay->stride;
	if (page >= lay->pages || len > lay->stride - off)
		return -ERANGE;
	*ret_page = (uint32_t)page;
	*ret_offset = off;
	return 0;
}

uint32_t roce_payload_size(unsigned mtu)
{
	if (mtu <= ROCE_MTU_OVERHEAD)
		return 0;
	return (mtu - ROCE_MTU_OVERHEAD) / ROCE_PAYLOAD_UNIT * ROCE_PAYLOAD_UNIT;
}

int32_t roce_psn_diff(uint32_t psn, uint32_t expect)
{
	uint32_t d = (psn - expect) & ROCE_PSN_MASK;

	/* Half the PSN space ahead, half behind. */
	return d & 0x800000u ? (int32_t)d - 0x1000000 : (int32_t)d;
}

bool roce_frame_number(const struct roce_frame_numbers *fn, uint32_t number,
		       uint64_t *ret_seq)
{
	uint16_t d;

	if (!fn->valid) {
		*ret_seq = (uint16_t)number;
		return true;
	}
	d = (uint16_t)((uint16_t)number - (uint16_t)fn->next);
	if (d >= 0x8000u && !fn->restart)
		return false;
	*ret_seq = fn->next + d;
	return true;
}

void roce_frame_number_restart(struct roce_frame_numbers *fn)
{
	fn->restart = fn->valid;
}

void roce_frame_number_take(struct roce_frame_numbers *fn, uint64_t seq)
{
	fn->next = seq + 1;
	fn->valid = true;
	fn->restart = false;
}
