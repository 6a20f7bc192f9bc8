// SPDX-License-Identifier: MIT
/*
 * net_rx.c - receive buffers aimed at the slot (net_rx.h): the plan before
 * a recvmmsg, the check after it, the way back to whole datagrams.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "device/net/net_rx.h"

int net_rx_init(struct net_rx *rx, size_t buf_size, uint32_t payload,
		uint64_t frame)
{
	memset(rx, 0, sizeof(*rx));
	rx->bufs = malloc(NET_RX_BATCH * buf_size);
	if (!rx->bufs)
		return -ENOMEM;
	rx->buf_size = buf_size;
	rx->payload = payload;
	rx->frame = frame;
	rx->plan = true;
	return 0;
}

void net_rx_free(struct net_rx *rx)
{
	free(rx->bufs);
	rx->bufs = NULL;
}

static unsigned char *spill(struct net_rx *rx, unsigned i)
{
	return rx->bufs + (size_t)i * rx->buf_size;
}

/* Message @i whole into its buffer. */
static void whole(struct net_rx *rx, unsigned i)
{
	rx->at[i] = NULL;
	rx->iov[i][0] = (struct iovec){ spill(rx, i), rx->buf_size };
	rx->msgs[i].msg_hdr.msg_iov = rx->iov[i];
	rx->msgs[i].msg_hdr.msg_iovlen = 1;
}

/* Message @i: a data packet's headers, @len payload bytes at @at, the rest. */
static void aim(struct net_rx *rx, unsigned i, unsigned char *at, uint32_t len)
{
	rx->at[i] = at;
	rx->aimed[i] = len;
	rx->iov[i][0] = (struct iovec){ rx->hdr[i], NET_RX_HDR };
	rx->iov[i][1] = (struct iovec){ at, len };
	/* As many bytes in all as a whole buffer holds: a longer one is cut. */
	rx->iov[i][2] = (struct iovec){ spill(rx, i), rx->buf_size - NET_RX_HDR - len };
	rx->msgs[i].msg_hdr.msg_iov = rx->iov[i];
	rx->msgs[i].msg_hdr.msg_iovlen = 3;
}

unsigned net_rx_plan(struct net_rx *rx, struct net_frame *nf)
{
	uint64_t payload = nf->seen_payload ? nf->seen_payload : rx->payload;
	uint64_t frame = nf->seen_length ? nf->seen_length : rx->frame;
	uint64_t room = nf->cfg.slot_size, off;
	struct net_slot s;
	unsigned i = 0, n;

	if (rx->plan && payload && payload + NET_RX_HDR < rx->buf_size &&
	    net_frame_next(nf, &s, &off))
		for (; i < NET_RX_BATCH && off < frame && off < room; i++) {
			uint64_t len = payload;

			if (len > frame - off)
				len = frame - off;
			if (len > room - off)
				len = room - off;
			aim(rx, i, s.base + off, (uint32_t)len);
			off += len;
		}
	/* The frame ends in this batch: its last packet is its last message. */
	n = i < NET_RX_BATCH && i ? i + 1 : NET_RX_BATCH;
	for (; i < NET_RX_BATCH; i++)
		whole(rx, i);
	rx->whole_from = NET_RX_BATCH;
	return n;
}

bool net_rx_in_place(struct net_rx *rx, const struct net_frame *nf,
		     unsigned i, struct iovec ret_iov[3])
{
	const struct msghdr *m = &rx->msgs[i].msg_hdr;
	size_t len = rx->msgs[i].msg_len;
	struct roce_pkt p;

	if (i >= rx->whole_from || !rx->at[i] || (m->msg_flags & MSG_TRUNC) ||
	    len != NET_RX_HDR + rx->aimed[i] + ROCE_ICRC_SIZE)
		return false;
	/* A data packet (its pad, if any, lies after its payload in the slot)... */
	if (roce_parse_split(rx->hdr[i], NET_RX_HDR, len, rx->at[i], &p) < 0)
		return false;
	/* ... that the frame expects where it landed. */
	if (!nf->have_slot ||
	    rx->at[i] != nf->slot.base + (nf->active ? nf->got : 0))
		return false;
	ret_iov[0] = (struct iovec){ rx->hdr[i], NET_RX_HDR };
	ret_iov[1] = (struct iovec){ rx->at[i], rx->aimed[i] };
	ret_iov[2] = (struct iovec){ spill(rx, i), ROCE_ICRC_SIZE };
	return true;
}

/* Message @k put back together in its spill buffer. */
static void gather(struct net_rx *rx, unsigned k)
{
	size_t len = rx->msgs[k].msg_len, h, s;
	unsigned char *b = spill(rx, k);

	if (!rx->at[k])
		return;
	h = len < NET_RX_HDR ? len : NET_RX_HDR;
	s = len - h < rx->aimed[k] ? len - h : rx->aimed[k];
	if (len > h + s)
		memmove(b + h + s, b, len - h - s);
	memcpy(b + h, rx->at[k], s);
	memcpy(b, rx->hdr[k], h);
	rx->at[k] = NULL;
}

unsigned char *net_rx_whole(struct net_rx *rx, unsigned i, unsigned n)
{
	/*
	 * This one and all after it, before anything is copied into the slot
	 * where they landed.
	 */
	for (unsigned k = i; k < rx->whole_from && k < n; k++)
		gather(rx, k);
	if (i < rx->whole_from)
		rx->whole_from = i;
	return spill(rx, i);
}

int net_rx_demux(const void *buf, size_t len, const uint32_t *qpns, unsigned n)
{
	const unsigned char *b = buf;
	uint32_t qpn;

	if (len < ROCE_BTH_SIZE)
		return -1;
	qpn = (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
	for (unsigned i = 0; i < n; i++)
		if (qpns[i] == qpn)
			return (int)i;
	return -1;
}
