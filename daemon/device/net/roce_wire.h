/* SPDX-License-Identifier: MIT */
/*
 * roce_wire.h - the packets a network-attached FPGA sends, as NVIDIA's
 * Holoscan Sensor Bridge (HSB) IP sends them: RoCE v2 UC RDMA WRITEs into
 * pages of a ring, on UDP (port 4791 for RoCE, or a configured port for
 * the socket path; the same bytes either way).  Every multi-byte field is
 * big-endian unless said otherwise.
 *
 * A UDP payload is
 *   BTH   12 bytes  [0] opcode, [1] SE|M|PadCnt(2)|TVer(4), [2,4) P_Key,
 *                   [4] FECN|BECN|resv6, [5,8) destination QP, [8] AckReq|
 *                   resv7, [9,12) PSN (24 bits)
 *   RETH  16 bytes  [0,8) virtual address, [8,12) R_Key, [12,16) DMA length
 *   ImmDt  4 bytes  opcode 0x2B only: (PSN[19:0] << 12) | page[11:0]
 *   payload         DMA length bytes written at the virtual address
 *   pad             PadCnt bytes (0 from HSB)
 *   iCRC   4 bytes  CRC-32 over the IP and UDP headers (masked as RoCE
 *                   v2 says) and the packet (roce_icrc.h): the socket path
 *                   checks it from what the socket says of the addresses
 *                   (icrc = no for a sender that sends none); an RDMA NIC
 *                   checks it itself on the RoCE path
 *
 * A frame is a run of opcode 0x2A (UC RDMA WRITE Only) packets into one
 * page, each carrying at most the payload size ((MTU - 74) rounded down to
 * 128 bytes), ended by one opcode 0x2B (UC RDMA WRITE Only with Immediate)
 * whose payload ends with the 128-byte metadata block; that block lands at
 * page base + roundup(frame bytes, 128).  Metadata (big-endian):
 *   [0] flags u32, [4] PSN u32, [8] CRC u32, [12] frame start seconds
 *   u64, [20] frame start ns u32, [24] bytes written u64, [32] frame
 *   number u32 (HSB receivers read its low 16 bits), [36] metadata seconds
 *   u64, [44] metadata ns u32, [48, 128) reserved.
 *
 * This file decodes those untrusted bytes and checks them against a ring's
 * layout; it keeps no state.  net_frame.c assembles frames from them.
 */
#ifndef FPGAD_NET_ROCE_WIRE_H
#define FPGAD_NET_ROCE_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/source.h"

#define ROCE_UDP_PORT 4791
#define ROCE_OP_UC_WRITE_ONLY 0x2a
#define ROCE_OP_UC_WRITE_ONLY_IMM 0x2b
#define ROCE_BTH_SIZE 12u
#define ROCE_RETH_SIZE 16u
#define ROCE_IMM_SIZE 4u
#define ROCE_ICRC_SIZE 4u
#define ROCE_META_SIZE 128u
#define ROCE_PSN_MASK 0xffffffu
#define ROCE_QPN_MASK 0xffffffu
/* Ethernet 14 + IPv4 20 + UDP 8 + BTH + RETH + ImmDt + iCRC + FCS 4. */
#define ROCE_MTU_OVERHEAD 74u
/* Payloads are whole 128-byte units; pages are numbered in 12 bits. */
#define ROCE_PAYLOAD_UNIT 128u
#define ROCE_MAX_PAGES 4096u
/* The smallest and largest datagram: headers and iCRC, and a jumbo frame. */
#define ROCE_MIN_PACKET (ROCE_BTH_SIZE + ROCE_RETH_SIZE + ROCE_ICRC_SIZE)
#define ROCE_MAX_PACKET 9216u

/* One decoded packet; payload points into the caller's buffer. */
struct roce_pkt {
	uint8_t opcode;
	uint32_t dest_qp;
	uint32_t psn;
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
	uint32_t imm;		/* opcode 0x2B only */
	const uint8_t *payload;	/* dma_len bytes */
};

struct roce_meta {
	uint32_t flags;
	uint32_t psn;
	uint32_t crc;
	uint64_t start_s;
	uint32_t start_ns;
	uint64_t bytes_written;
	uint32_t frame_number;
	uint64_t meta_s;
	uint32_t meta_ns;
};


/*
 * Decode the UDP payload @buf of @len bytes: a UC WRITE Only, with or
 * without immediate, whose lengths add up.  -EPROTONOSUPPORT for another
 * opcode or transport version, -EBADMSG for a packet whose lengths do not
 * add up (runt, DMA length beyond the packet, trailing bytes).
 */
int roce_parse(const void *buf, size_t len, struct roce_pkt *ret_pkt);

/*
 * The same of a packet received in pieces: its @len bytes begin with its
 * headers, exactly the @hdr_len bytes at @hdr, and its payload is at
 * @payload.  -EBADMSG also when its headers are not @hdr_len bytes long.
 */
int roce_parse_split(const void *hdr, size_t hdr_len, size_t len,
		     const void *payload, struct roce_pkt *ret_pkt);

/* Decode the 128-byte metadata block at @p. */
void roce_meta_parse(const void *p, struct roce_meta *ret_meta);

/*
 * The frame start and frame end (metadata) times of @m, seconds and
 * nanoseconds of the sender's clock (PTP when it runs PTP), in ns: 0 for
 * none (both 0) and for one that is no time (nanoseconds of 10^9 or more,
 * or past 2^64 ns).
 */
void roce_meta_times(const struct roce_meta *m, uint64_t *ret_start_ns,
		     uint64_t *ret_end_ns);

static inline uint32_t roce_imm_psn(uint32_t imm) { return imm >> 12; }
static inline uint32_t roce_imm_page(uint32_t imm) { return imm & 0xfffu; }

/*
 * The page and the offset in it of @len bytes at @va, when they lie inside
 * one page of @lay; -ERANGE otherwise (before the base, past the last
 * page, across a page's end).  No overflow for any input.
 */
int roce_place(const struct sender_layout *lay, uint64_t va, uint64_t len,
	       uint32_t *ret_page, uint64_t *ret_offset);

/* The payload size for @mtu: (mtu - 74) rounded down to 128; 0 if none. */
uint32_t roce_payload_size(unsigned mtu);

/*
 * PSN arithmetic (24 bits): how far @psn is ahead of @expect, 0 when it is
 * the one expected, negative when it is behind (a duplicate or late).
 */
int32_t roce_psn_diff(uint32_t psn, uint32_t expect);

/*
 * The sender's frame numbers (16 bits on the wire, in the metadata) as a
 * 64-bit sequence, for both receivers: the first one seen starts it.
 */
struct roce_frame_numbers {
	bool valid;			/* a frame number was seen */
	bool restart;			/* the sender started over: follow it */
	uint64_t next;			/* the one expected next, unwrapped */
};

/*
 * A PSN this far behind the expected one is no duplicate or reordering
 * (those come within a few packets) but a sender that started over: a
 * restart, a jump back, or a PSN narrower than RoCE's 24 bits wrapping
 * (HSB's emulator counts 20).  The receivers follow it, count it
 * (psn_resyncs) and let the frame numbers start over with it.
 */
#define ROCE_PSN_RESYNC_BEHIND 64

/*
 * @number unwrapped into *@ret_seq: true for it or one ahead of it (up to
 * 2^15 - 1); false for one behind (a frame from the past).
 */
bool roce_frame_number(const struct roce_frame_numbers *fn, uint32_t number,
		       uint64_t *ret_seq);
/*
 * The sender started over (its PSN went back): its next frame number is
 * taken whatever it is, the sequence going on from the last one.
 */
void roce_frame_number_restart(struct roce_frame_numbers *fn);
/* @seq was taken: the next one is expected after it. */
void roce_frame_number_take(struct roce_frame_numbers *fn, uint64_t seq);

#endif
