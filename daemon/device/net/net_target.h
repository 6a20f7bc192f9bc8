/* SPDX-License-Identifier: MIT */
/*
 * net_target.h - telling a network sender where to write: the request
 * fpgad sends to the sender's control port at each new ring, in the
 * Ethernet Control Bus (ECB) framing HSB's host uses to write an FPGA's
 * registers over UDP (port 8192), and the sender's acknowledgement.
 * docs/net-target.md gives every byte; a sender is built against it.
 *
 * The request is one WRITE_BLOCK (command 0x09, flags 0x01: acknowledge;
 * big-endian): [0] 0x09, [1] 0x01, [2,4) sequence number, [4,6) 0, then
 * NET_TARGET_REGS pairs of (u32 register address, u32 value), in the order
 * of enum net_target_reg below: the sender is disabled first and enabled
 * last, so it never writes with half a target.  The registers are HSB's
 * data channel registers (its sensor 0 VP block at 0x1000, its data
 * plane 0 HIF block at 0x02000300).
 *
 * The acknowledgement: [0] 0x89, [1] flags, [2,4) the sequence number,
 * [4] status (0: success), [5] 0, then HSB echoes the pairs and the
 * latched sequence number; fpgad reads the first 5 bytes.
 */
#ifndef FPGAD_NET_TARGET_H
#define FPGAD_NET_TARGET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "device/net/net_frame.h"
#include "device/net/roce_wire.h"

#define NET_TARGET_PORT 8192		/* HSB's control port */
#define NET_TARGET_WRITE_BLOCK 0x09
#define NET_TARGET_REPLY 0x80		/* added to the command in a reply */
#define NET_TARGET_FLAG_ACK 0x01
#define NET_TARGET_HDR 6u
#define NET_TARGET_REPLY_MIN 5u
#define NET_TARGET_TRIES 5			/* requests sent before giving up */
#define NET_TARGET_RETRY_MS 200		/* between them */

/* HSB's register blocks: sensor 0's virtual port, data plane 0's HIF. */
#define NET_TARGET_VP 0x1000u
#define NET_TARGET_HIF 0x02000300u

/* The registers fpgad writes, in the order it writes them. */
enum net_target_reg {
	NET_REG_VP_MASK_OFF,	/* HIF + 0x0c = 0: the sender stops */
	NET_REG_PACKET_SIZE,	/* HIF + 0x04: payload bytes / 128 */
	NET_REG_BUFFER_LENGTH,	/* VP + 0x18: frame bytes */
	NET_REG_HOST_MAC_LOW,	/* VP + 0x20: host MAC bytes 2..5 */
	NET_REG_HOST_MAC_HIGH,	/* VP + 0x24: host MAC bytes 0..1 */
	NET_REG_HOST_IP,	/* VP + 0x28: host IPv4 address */
	NET_REG_HOST_UDP_PORT,	/* VP + 0x2c: host UDP port */
	NET_REG_QP,		/* VP + 0x00: destination QP number */
	NET_REG_RKEY,		/* VP + 0x04: the ring's R_Key */
	NET_REG_PAGE_LSB,	/* VP + 0x08: base address, low 32 bits */
	NET_REG_PAGE_MSB,	/* VP + 0x0c: base address, high 32 bits */
	NET_REG_PAGE_INC,	/* VP + 0x10: page stride / 128 */
	NET_REG_MAX_BUFF,	/* VP + 0x14: pages - 1 */
	NET_REG_VP_MASK_ON,	/* HIF + 0x0c = 1: the sender starts */
	NET_TARGET_REGS
};

#define NET_TARGET_REQUEST (NET_TARGET_HDR + 8u * NET_TARGET_REGS)

/* What a sender is told. */
struct net_target {
	uint32_t qpn, rkey;
	struct sender_layout layout;
	uint32_t frame_size;
	uint32_t payload;
	uint32_t host_ip;		/* IPv4, host order */
	uint16_t host_port;
	uint8_t host_mac[6];
};

/* The address of register @r (enum net_target_reg). */
uint32_t net_target_reg_addr(unsigned r);

/* The request with sequence number @seq telling @t, into @out. */
void net_target_request(const struct net_target *t, uint16_t seq,
		     uint8_t out[NET_TARGET_REQUEST]);

/*
 * A datagram from the sender's control port: 0 when it acknowledges
 * request @seq, -EPROTO when it refuses it (*ret_status: the sender's
 * status), -EAGAIN for anything else (another sequence number, a
 * runt, another command): ignored.
 */
int net_target_reply(const uint8_t *buf, size_t len, uint16_t seq,
		  uint8_t *ret_status);

/*
 * The channel's side of the exchange, the same for source = udp and roce,
 * and off the channel's receiving and streaming threads: at each new ring
 * (net_target_new_ring, under *lock) a request, sent by the control thread
 * (net_target_start) that owns the socket (net_target_step), again every
 * NET_TARGET_RETRY_MS until acknowledged (net_target_replies), NET_TARGET_TRIES
 * times at most; each outcome counted once in *cnt (control_acks,
 * control_failures) under *lock.
 */
struct net_target_ctl {
	int fd;				/* -1: sender_control = none */
	const char *chan;		/* the channel's name, for the log */
	char where[64];			/* where it is sent, or "none" */
	pthread_mutex_t *lock;		/* guards target, pending and *cnt */
	struct source_counters *cnt;
	struct net_target target;
	bool pending;			/* *lock: a new target to send */
	bool busy;			/* owner: waiting for its ack */
	uint16_t seq;
	uint32_t rkey;			/* the request's */
	unsigned tries;
	uint64_t next_ns;
	uint8_t req[NET_TARGET_REQUEST];
	int wake_fd;			/* eventfd: a new ring, or stop */
	bool stop;			/* *lock */
	/*
	 * A sender that must not be told before a slot is armed for it
	 * (source = roce: what it writes before that is lost): a new ring's
	 * request waits for net_target_armed().
	 */
	bool gated;
	bool armed;			/* *lock: a slot armed since the ring */
	bool started;
	pthread_t thread;
};

/*
 * Opens @c for channel @chan: the socket connected to @sender_control
 * (config's text; "" for @sender's address at NET_TARGET_PORT, "none" for
 * none), and the target's host fields from @local (the address and port
 * the sender writes to; the wildcard: the address towards the sender).
 * IPv6 tells nothing (HSB's registers hold IPv4): c->fd stays -1.
 * The caller fills the rest of c->target.  0 or -errno (logged).
 */
int net_target_open(struct net_target_ctl *c, const char *chan, const char *sender_control,
		 const struct sockaddr_storage *sender,
		 const struct sockaddr_storage *local, pthread_mutex_t *lock,
		 struct source_counters *cnt);
/*
 * Start the control thread, which owns the exchange from now on (a
 * channel without sender control starts none).  0 or -errno (logged).
 */
int net_target_start(struct net_target_ctl *c);
/* Stop the thread (when started) and close the socket. */
void net_target_close(struct net_target_ctl *c);

/*
 * A new ring with key @rkey: the sender is told again (*lock held); the
 * control thread, when started, is woken to send it.
 */
void net_target_new_ring(struct net_target_ctl *c, uint32_t rkey);

/*
 * A slot was armed (*lock held): a gated request may go now.  True when
 * the control thread is to be woken for it (net_target_wake(), with the
 * lock let go).
 */
bool net_target_armed(struct net_target_ctl *c);
void net_target_wake(struct net_target_ctl *c);

/* The owner: start a pending request, or send a try that is due. */
void net_target_step(struct net_target_ctl *c, uint64_t now);

/* The owner: the sender's replies on c->fd (POLLIN), counted. */
void net_target_replies(struct net_target_ctl *c);

/* How long the owner may sleep before its next try (ms, -1: ever). */
int net_target_timeout(const struct net_target_ctl *c, uint64_t now);

/* @a's text, ADDRESS:PORT or [ADDRESS]:PORT, into @buf; returns @buf. */
const char *net_endpoint_name(const struct sockaddr_storage *a, char *buf,
			      size_t len);

/* The interface holding address @a into @ret; "any" for the wildcard. */
void net_local_interface(const struct sockaddr_storage *a, char *ret, size_t len);

#endif
