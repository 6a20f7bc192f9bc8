// SPDX-License-Identifier: MIT
/*
 * sim_gpu.c - the sim's "DMA" into and out of GPU memory: real PCIe copies
 * (copy.h) between page-locked host memory (a stream queue's pattern and
 * buffers, or card memory for a memory queue) and the GPU buffer, several
 * in flight, completed in order and held to the link model (sim.h).  In a
 * build without CUDA, copy.h opens no engine and sim_gpu_attach refuses.
 */
#include <errno.h>
#include <string.h>

#include "clock.h"
#include "device/sim/sim.h"
#include "fpgad_simframe.h"
#include "memory/copy.h"
#include "log.h"

/* One transfer's copies are done (@status 0) or failed: complete it. */
static void sim_gpu_finish(struct device_queue *q, struct sim_copy *c,
			   int status)
{
	uint64_t now;

	if (status) {
		log_err("sim: %s: GPU copy failed: %s", q->ch.name,
			strerror(-status));
		c->cqe.c.status = -EIO;
	} else if (q->mem) {
		if (c->flip != UINT64_MAX)
			q->dev->card[c->card_addr + c->flip] ^= 0xff;
	} else if (q->dir == DIR_H2C) {
		unsigned char *rx = q->rx + c->slot * q->rx_stride;

		if (c->flip != UINT64_MAX)
			rx[c->flip] ^= 0xff;
		c->cqe.c.seq = sim_sink_check(q, rx, c->len);
	}
	if (!c->cqe.c.status && sim_engine_sleep_until(q, c->deadline))
		c->cqe.c.status = -ECANCELED;
	now = clock_now_ns();
	c->cqe.c.t_end_ns = now > c->deadline ? now : c->deadline;
	if (!c->cqe.c.status) {
		c->cqe.c.length = c->len;
		sim_count(&q->st.bytes, c->len);
		if (q->dir == DIR_C2H && !q->mem)
			sim_count(&q->st.frames, 1);
	}
	sim_complete(q, &c->cqe);
}

/*
 * A submission's completion carries the index of its last transfer: the
 * transfers chained before it (sim_gpu_launch_mem) complete with it.
 */
int sim_gpu_reap(struct device_queue *q, bool block)
{
	struct copy_done done;
	int r;

	if (!q->ce || !copy_pending(q->ce))
		return 0;
	r = copy_reap(q->ce, block, &done);
	if (r <= 0)
		return r;
	do
		sim_gpu_finish(q, &q->copies[q->copy_tail % SIM_MAX_INFLIGHT],
			       done.status);
	while (q->copy_tail++ < done.cookie);
	return 1;
}

/* Finish every transfer on the copy engine, in order. */
void sim_gpu_drain(struct device_queue *q)
{
	sim_gpu_close_chain(q);
	while (sim_gpu_reap(q, true) > 0)
		;
}

void sim_gpu_close_chain(struct device_queue *q)
{
	int r;

	if (!q->chained)
		return;
	/* The engine loop reaps before launching past the depth. */
	r = copy_submit(q->ce, NULL, NULL, 0, COPY_H2D, q->copy_head - 1);
	if (r == -EAGAIN && sim_gpu_reap(q, true) > 0)
		r = copy_submit(q->ce, NULL, NULL, 0, COPY_H2D, q->copy_head - 1);
	if (r) {
		log_err("sim: %s: cannot end a chain of GPU copies: %s",
			q->ch.name, strerror(-r));
		/* What was submitted before completes first, in order. */
		while (copy_pending(q->ce) && sim_gpu_reap(q, true) > 0)
			;
		while (q->copy_tail < q->copy_head)
			sim_gpu_finish(q, &q->copies[q->copy_tail++ % SIM_MAX_INFLIGHT],
				       -EIO);
	}
	q->chained = 0;
}

/* A transfer went to the copy engine (@r 0), or could not (-errno). */
static void sim_gpu_launched(struct device_queue *q, struct sim_cqe *cqe,
			     int r)
{
	if (r) {
		log_err("sim: %s: cannot queue a GPU copy: %s", q->ch.name,
			strerror(-r));
		/* Whatever was chained completes with the next submission. */
		cqe->c.status = -EIO;
		cqe->c.t_end_ns = clock_now_ns();
		sim_gpu_drain(q);
		sim_complete(q, cqe);
		return;
	}
	q->copy_head++;
}

/*
 * Start a transfer on the copy engine.  C2H: header and payload (and a
 * flipped byte) from card memory into the GPU buffer; H2C: the GPU buffer
 * into a receive buffer, checked when it is reaped.
 */
void sim_gpu_launch(struct device_queue *q, const struct sim_sqe *e,
		    struct sim_cqe *cqe, uint64_t deadline,
		    uint64_t n, uint64_t frame_len, bool corrupt)
{
	uint64_t idx = q->copy_head, cookie = idx;
	struct sim_copy *c = &q->copies[idx % SIM_MAX_INFLIGHT];
	unsigned slot = (unsigned)(idx % q->depth);
	int r;

	c->cqe = *cqe;
	c->deadline = deadline;
	c->len = n;
	c->flip = UINT64_MAX;
	c->slot = slot;

	if (q->dir == DIR_C2H && q->hdr_stride > SIM_HDR_STRIDE) {
		/* A small frame: made whole here, then one copy. */
		unsigned char *buf = q->hdrs + slot * q->hdr_stride;
		uint64_t off = fpgad_simframe_payload_offset(cqe->c.seq);

		sim_frame_header(q, (struct fpgad_simframe_hdr *)buf,
				 cqe->c.seq, frame_len);
		if (n > FPGAD_SIMFRAME_HDR_SIZE)
			memcpy(buf + FPGAD_SIMFRAME_HDR_SIZE, q->pattern + off,
			       n - FPGAD_SIMFRAME_HDR_SIZE);
		if (corrupt)
			buf[sim_flip_offset(q, n)] ^= 0xff;
		r = copy_submit(q->ce, e->addr, buf, n, COPY_H2D, cookie);
	} else if (q->dir == DIR_C2H) {
		unsigned char *hdr = q->hdrs + slot * q->hdr_stride;
		uint64_t off = fpgad_simframe_payload_offset(cqe->c.seq);
		uint64_t hlen = n < FPGAD_SIMFRAME_HDR_SIZE ?
				n : FPGAD_SIMFRAME_HDR_SIZE;
		uint64_t flip = corrupt ? sim_flip_offset(q, n) : UINT64_MAX;

		sim_frame_header(q, (struct fpgad_simframe_hdr *)hdr,
				 cqe->c.seq, frame_len);
		r = copy_chain(q->ce, e->addr, hdr, hlen, COPY_H2D);
		if (!r && n > hlen)
			r = copy_chain(q->ce, e->addr + hlen,
				       q->pattern + off, n - hlen, COPY_H2D);
		if (!r && flip != UINT64_MAX) {
			hdr[FPGAD_SIMFRAME_HDR_SIZE] =
				(flip < hlen ? hdr[flip] :
				 q->pattern[off + flip - hlen]) ^ 0xff;
			r = copy_chain(q->ce, e->addr + flip,
				       hdr + FPGAD_SIMFRAME_HDR_SIZE, 1,
				       COPY_H2D);
		}
		if (!r)
			r = copy_submit(q->ce, NULL, NULL, 0, COPY_H2D, cookie);
	} else {
		if (corrupt)
			c->flip = sim_flip_offset(q, n);
		r = copy_submit(q->ce, q->rx + slot * q->rx_stride, e->addr, n,
				COPY_D2H, cookie);
	}
	sim_gpu_launched(q, cqe, r);
}

/*
 * A memory queue's transfer: one copy per page-locked chunk of card memory
 * it touches, the last one completing it; a corrupt fault flips one byte
 * of what arrives (C2H: a one-byte copy from scratch; H2C: in card memory
 * once the copy is done).
 */
void sim_gpu_launch_mem(struct device_queue *q, const struct sim_sqe *e,
			struct sim_cqe *cqe, uint64_t deadline, bool corrupt)
{
	uint64_t idx = q->copy_head, n = e->x.length, a = e->x.card_addr;
	struct sim_copy *c = &q->copies[idx % SIM_MAX_INFLIGHT];
	/* Chained, more than depth transfers may be outstanding. */
	unsigned slot = (unsigned)(idx % SIM_MAX_INFLIGHT);
	bool c2h = q->dir == DIR_C2H, flip_after = corrupt && c2h, chain;
	uint64_t done = 0, flip = corrupt ? sim_flip_offset(q, n) : UINT64_MAX;
	int r;

	c->cqe = *cqe;
	c->deadline = deadline;
	c->len = n;
	c->flip = c2h ? UINT64_MAX : flip;
	c->card_addr = a;
	c->slot = slot;

	/*
	 * More transfers queued behind this one: its last copy is chained
	 * too, and the group completes with the last one's submission (one
	 * event per group, not per transfer), up to SIM_CHAIN_MAX of them.
	 */
	chain = !corrupt && !sim_sq_empty(q) && q->chained + 1 < SIM_CHAIN_MAX;
	r = sim_card_lock(q->dev, a, n);
	while (!r && done < n) {
		uint64_t piece = sim_card_chunk_left(a + done);
		unsigned char *card = q->dev->card + a + done;
		unsigned char *buf = e->addr + done;

		if (piece > n - done)
			piece = n - done;
		if (done + piece < n || flip_after || chain)
			r = c2h ? copy_chain(q->ce, buf, card, piece, COPY_H2D) :
				  copy_chain(q->ce, card, buf, piece, COPY_D2H);
		else
			r = c2h ? copy_submit(q->ce, buf, card, piece, COPY_H2D,
					      idx) :
				  copy_submit(q->ce, card, buf, piece, COPY_D2H,
					      idx);
		done += piece;
	}
	if (!r && flip_after) {
		q->hdrs[slot] = q->dev->card[a + flip] ^ 0xff;
		r = copy_submit(q->ce, e->addr + flip, q->hdrs + slot, 1,
				COPY_H2D, idx);
	}
	if (!r)
		q->chained = chain ? q->chained + 1 : 0;
	sim_gpu_launched(q, cqe, r);
}

int sim_gpu_attach(struct device_queue *q, int gpu)
{
	struct copy_engine *ce;
	int r;

	if (q->ce) {
		if (copy_gpu(q->ce) == gpu)
			return 0;
		log_err("sim: %s: GPU %d pinned while the queue runs on GPU %d",
			q->ch.name, gpu, copy_gpu(q->ce));
		return -EINVAL;
	}
	r = copy_open(gpu, q->depth, &ce);
	if (r) {
		log_err("sim: %s: no copy engine on GPU %d: %s", q->ch.name,
			gpu, strerror(-r));
		return r;
	}
	if (!q->registered) {
		r = copy_host_register(q->win, q->win_len);
		if (r) {
			copy_close(ce);
			return r;
		}
		q->registered = true;
	}
	q->ce = ce;
	return 0;
}

void sim_gpu_detach(struct device_queue *q)
{
	copy_close(q->ce);
	q->ce = NULL;
	if (q->registered)
		copy_host_unregister(q->win);
	q->registered = false;
}

/* GPU copies cannot be recalled: they finish, reported canceled. */
void sim_gpu_cancel(struct device_queue *q)
{
	sim_gpu_close_chain(q);
	while (copy_pending(q->ce)) {
		struct copy_done done;

		if (copy_reap(q->ce, true, &done) <= 0)
			break;
		do {
			struct sim_copy *c =
				&q->copies[q->copy_tail % SIM_MAX_INFLIGHT];

			c->cqe.c.status = -ECANCELED;
			c->cqe.c.t_end_ns = clock_now_ns();
			sim_complete(q, &c->cqe);
		} while (q->copy_tail++ < done.cookie);
	}
}
