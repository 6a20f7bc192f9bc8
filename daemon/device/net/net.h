/* SPDX-License-Identifier: MIT */
/*
 * net.h - network sources: a channel whose frames come from a
 * network-attached FPGA (source = udp; source = roce: device_roce.c,
 * roce_rx.h) rather than the card.
 *
 * device_net_ops (device.h) is a device backend for such channels, so that
 * their frames go through the same streaming thread, ring, leases,
 * policies, integrity check, counters and client API as a card's.  It
 * needs no open device (queue_open takes NULL); each queue is one channel:
 *
 *   queue_open  binds a UDP socket (large SO_RCVBUF) and starts its
 *               receiving thread (recvmmsg into the slot, net_rx.h), or
 *               joins the socket of another channel with the same listen
 *               (told apart by destination QPN, device_net.c)
 *   pin         takes the ring (host memory only: a GPU ring is served
 *               in bounce mode, through pinned staging) and makes a new
 *               R_Key for it, so a sender still writing to the ring of a
 *               lessee before is refused
 *   submit      arms a slot for the sender's next frame
 *   wait        takes complete frames (net_frame.h decides what is)
 *   reset       takes back every armed slot (-ECANCELED)
 *
 * The sender is told where to write (net_layout(): QPN, R_Key, base
 * address, page stride, pages, payload size); fpgactl status shows it.
 * A sender has no backpressure: a frame that starts while no slot is armed
 * is dropped and counted, and a slot a lessee holds is never armed.
 */
#ifndef FPGAD_NET_NET_H
#define FPGAD_NET_NET_H

#include <stdint.h>

#include "config/config.h"

#include "device/net/net_frame.h"
#include "device/net/roce_wire.h"

/* The base address told to senders; pages follow at the stride. */
#define NET_VA_BASE 0x10000000000ull

/*
 * Where a sender of frames of up to @frame_size bytes writes into @slots
 * pages: one page per slot (at most 4096), each with room for the frame
 * and the 128-byte metadata block after it, 4 KiB aligned.
 */
void net_layout(uint64_t frame_size, unsigned slots, struct sender_layout *ret);

#endif
