// SPDX-License-Identifier: MIT
/*
 * net_frame.c - frames from a network sender's packets: PSN accounting,
 * placement into the armed slot, the checks at the WRITE with Immediate
 * (net_frame.h says what makes a frame complete).
 */
#include <errno.h>
#include <string.h>

#include "device/net/net_frame.h"

void net_frame_init(struct net_frame *nf, const struct net_frame_cfg *cfg,
		    const struct net_frame_ops *ops, void *user)
{
	memset(nf, 0, sizeof(*nf));
	nf->cfg = *cfg;
	nf->ops = ops;
	nf->user = user;
}

void net_frame_restart(struct net_frame *nf, uint32_t rkey)
{
	nf->cfg.rkey = rkey;
	nf->synced = false;
	nf->numbers.valid = false;
	nf->active = false;
	nf->torn = false;
}

bool net_frame_release(struct net_frame *nf, struct net_slot *ret_slot)
{
	bool had = nf->have_slot;

	if (had)
		*ret_slot = nf->slot;
	nf->have_slot = false;
	nf->active = false;
	nf->torn = false;
	return had;
}

/* The first packet of a frame: note where it goes, arm a slot for it. */
static void frame_start(struct net_frame *nf, uint32_t page, uint64_t now_ns)
{
	nf->active = true;
	nf->page = page;
	nf->got = 0;
	nf->t_start_ns = now_ns;
	if (!nf->have_slot && nf->ops->take(nf->user, &nf->slot) == 0)
		nf->have_slot = true;
}

/* The WRITE with Immediate: the frame is complete, or torn. */
static void frame_end(struct net_frame *nf, const struct roce_pkt *p,
		      uint64_t meta_off, uint64_t now_ns)
{
	const uint64_t unit = ROCE_PAYLOAD_UNIT;
	struct net_frame_done d = { 0 };
	struct roce_meta m;
	bool ok = !nf->torn, seq_ok;

	roce_meta_parse(p->payload + p->dma_len - ROCE_META_SIZE, &m);
	if (roce_imm_psn(p->imm) != (p->psn & 0xfffffu) ||
	    roce_imm_page(p->imm) != nf->page)
		ok = false;
	/* Every byte the metadata counts arrived, and nothing beyond. */
	if (m.bytes_written > nf->cfg.frame_size || m.bytes_written > nf->got ||
	    meta_off != (m.bytes_written + unit - 1) / unit * unit ||
	    nf->got > meta_off)
		ok = false;
	/* A frame of no bytes is no frame (the RoCE path's rule too). */
	if (!m.bytes_written)
		ok = false;
	seq_ok = roce_frame_number(&nf->numbers, m.frame_number, &d.seq);
	/*
	 * Only a frame the checks vouch for moves the frame numbers on: a
	 * torn one's metadata may be anything, and one numbered far ahead
	 * would refuse the good frames after it.
	 */
	if (seq_ok && ok)
		roce_frame_number_take(&nf->numbers, d.seq);
	if (!nf->have_slot) {
		nf->cnt.no_slot_frames++;
	} else if (!ok || !seq_ok) {
		nf->cnt.incomplete_frames++;
	} else {
		d.cookie = nf->slot.cookie;
		d.length = m.bytes_written;
		d.t_start_ns = nf->t_start_ns;
		d.t_end_ns = now_ns;
		roce_meta_times(&m, &d.t_sender_start_ns, &d.t_sender_end_ns);
		nf->have_slot = false;
		nf->cnt.frames++;
		nf->seen_length = d.length;
		nf->ops->done(nf->user, &d);
	}
	nf->active = false;
	nf->torn = false;
}

bool net_frame_next(struct net_frame *nf, struct net_slot *ret_slot,
		    uint64_t *ret_offset)
{
	/* A frame that started with no slot goes on with none (no_slot_frames). */
	if (!nf->have_slot && !nf->active &&
	    nf->ops->take(nf->user, &nf->slot) == 0)
		nf->have_slot = true;
	if (!nf->have_slot)
		return false;
	*ret_slot = nf->slot;
	*ret_offset = nf->active ? nf->got : 0;
	return true;
}

/* A packet @p that parsed. */
static void packet(struct net_frame *nf, const struct roce_pkt *pp,
		   uint64_t now_ns)
{
	const struct roce_pkt p = *pp;
	uint64_t off, data;
	uint32_t page;
	bool imm;
	int32_t d;

	/* Another QP's or a stale ring's packets say nothing about ours. */
	if (p.dest_qp != nf->cfg.qpn) {
		nf->cnt.wrong_qp++;
		return;
	}
	if (p.rkey != nf->cfg.rkey) {
		nf->cnt.wrong_rkey++;
		return;
	}
	if (nf->synced) {
		d = roce_psn_diff(p.psn, nf->expect_psn);
		if (d < -ROCE_PSN_RESYNC_BEHIND) {
			/* The sender started over: follow it from here. */
			nf->cnt.psn_resyncs++;
			roce_frame_number_restart(&nf->numbers);
			if (nf->active)
				nf->torn = true;
			d = 0;
		} else if (d < 0) {
			nf->cnt.late_packets++;
			return;
		}
		if (d > 0) {
			nf->cnt.lost_packets += (uint64_t)d;
			nf->torn = true;
		}
	}
	nf->synced = true;
	nf->expect_psn = (p.psn + 1) & ROCE_PSN_MASK;

	imm = p.opcode == ROCE_OP_UC_WRITE_ONLY_IMM;
	data = p.dma_len;
	if (imm && data < ROCE_META_SIZE) {
		nf->cnt.bad_packets++;
		nf->torn = true;
		goto end;
	}
	if (imm)
		data -= ROCE_META_SIZE;
	if (roce_place(&nf->cfg.layout, p.va, p.dma_len, &page, &off) < 0) {
		nf->cnt.bad_packets++;
		nf->torn = true;
		goto end;
	}
	if (!nf->active)
		frame_start(nf, page, now_ns);
	else if (page != nf->page)
		nf->torn = true;
	/* In order, each byte once: nothing left over from another frame. */
	if (data && (off != nf->got || off > nf->cfg.slot_size ||
		     data > nf->cfg.slot_size - off)) {
		nf->torn = true;
	} else if (data && nf->have_slot) {
		/* Unless the receive put it there already (net_rx.h). */
		if (p.payload != nf->slot.base + off)
			memcpy(nf->slot.base + off, p.payload, data);
		nf->cnt.bytes += data;
		if (!off)
			nf->seen_payload = data;
	}
	nf->got += data;
	if (imm)
		frame_end(nf, &p, off + data, now_ns);
	return;
end:
	/* A WRITE with Immediate ends the frame even when it is broken. */
	if (!imm)
		return;
	if (nf->active && nf->have_slot)
		nf->cnt.incomplete_frames++;
	else if (nf->active)
		nf->cnt.no_slot_frames++;
	nf->active = false;
	nf->torn = false;
}

void net_frame_packet(struct net_frame *nf, const void *buf, size_t len,
		      uint64_t now_ns)
{
	struct roce_pkt p;

	nf->cnt.packets++;
	if (roce_parse(buf, len, &p) < 0) {
		nf->cnt.bad_packets++;
		return;
	}
	packet(nf, &p, now_ns);
}

void net_frame_packet_split(struct net_frame *nf, const void *hdr,
			    size_t hdr_len, size_t len, const void *payload,
			    uint64_t now_ns)
{
	struct roce_pkt p;

	nf->cnt.packets++;
	if (roce_parse_split(hdr, hdr_len, len, payload, &p) < 0) {
		nf->cnt.bad_packets++;
		return;
	}
	packet(nf, &p, now_ns);
}
