/* SPDX-License-Identifier: MIT */
/*
 * net_rx.h - the UDP path's receive buffers, aimed so that a packet's
 * payload lands where it belongs in the armed slot and is never copied
 * again (device_net.c), with no sockets here so that tests and the fuzzer
 * drive it.
 *
 * Before each recvmmsg, net_rx_plan() reads the frame state: the sender's
 * packets come in order, each of the payload size the stream showed
 * (net_frame.seen_payload), up to the length of its last good frame
 * (seen_length), so packet k of the batch is expected with its payload at
 * the slot offset got + k * payload.  Each message's buffer is then three
 * pieces: the data packet's headers (28 bytes) into a header buffer, the
 * expected payload into the slot at that offset, the rest (the iCRC, or
 * whatever a packet that does not fit the guess carries) into a spill
 * buffer.  The WRITE with Immediate that ends the frame is expected last
 * and received whole: the batch stops there, the next frame's slot being
 * another.
 *
 * After the receive, net_rx_in_place() says whether a message is the
 * packet expected (its headers exactly those 28 bytes, its payload exactly
 * the bytes aimed at the slot) and whether the frame state still expects
 * its payload there; only then is it handed on in pieces
 * (net_frame_packet_split(), which skips the copy).  Any other message,
 * and every one after it in the batch, is first put back together in its
 * spill buffer (net_rx_whole()) and goes the copying way, before anything
 * writes into the slot: what a packet that missed the guess left in the
 * slot lies past every byte the frame has vouched for (the guesses start
 * at got and never overlap), so nothing needs copying back, and a slot a
 * consumer holds is never aimed at (only the one the receiver holds).
 */
#ifndef FPGAD_NET_RX_H
#define FPGAD_NET_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "device/net/net_frame.h"

#define NET_RX_BATCH 64				/* messages per recvmmsg */
#define NET_RX_HDR (ROCE_BTH_SIZE + ROCE_RETH_SIZE)	/* a data packet's headers */

struct net_rx {
	size_t buf_size;			/* each message's spill buffer */
	unsigned char *bufs;
	uint32_t payload;			/* the guess before the stream shows one */
	uint64_t frame;
	bool plan;				/* false: every message whole */
	struct mmsghdr msgs[NET_RX_BATCH];	/* msg_name, msg_control: the caller's */
	struct iovec iov[NET_RX_BATCH][3];
	unsigned char hdr[NET_RX_BATCH][NET_RX_HDR];
	unsigned char *at[NET_RX_BATCH];	/* payload aimed here; NULL: whole */
	uint32_t aimed[NET_RX_BATCH];		/* bytes aimed at the slot */
	unsigned whole_from;			/* messages from here on are whole */
};

/*
 * Buffers of @buf_size bytes (the longest datagram, or UDP GRO's), the
 * payload and frame length to guess until the stream shows its own.
 */
int net_rx_init(struct net_rx *rx, size_t buf_size, uint32_t payload,
		uint64_t frame);
void net_rx_free(struct net_rx *rx);

/*
 * Aim the buffers of the next receive at where @nf expects its packets
 * (none when rx->plan is false or no slot is armed): how many messages to
 * receive.
 */
unsigned net_rx_plan(struct net_rx *rx, struct net_frame *nf);

/*
 * Message @i of the @n received landed as aimed and @nf expects its
 * payload where it is: true, and *ret_iov holds its pieces (headers,
 * payload, iCRC) for the iCRC and net_frame_packet_split().
 */
bool net_rx_in_place(struct net_rx *rx, const struct net_frame *nf,
		     unsigned i, struct iovec ret_iov[3]);

/*
 * Message @i of the @n received, whole: its bytes (msgs[i].msg_len), the
 * ones after it put back together too.
 */
unsigned char *net_rx_whole(struct net_rx *rx, unsigned i, unsigned n);

/*
 * Which of the @n channels sharing a port (their QPNs in @qpns) datagram
 * @buf of @len bytes is for, by its BTH's destination QPN: its index, or
 * -1 when it is for none or too short to say.
 */
int net_rx_demux(const void *buf, size_t len, const uint32_t *qpns, unsigned n);

#endif
