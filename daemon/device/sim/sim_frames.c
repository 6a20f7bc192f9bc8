// SPDX-License-Identifier: MIT
/*
 * sim_frames.c - what the sim card sends and receives: the C2H frame
 * source (frame N at t0 + N / frame_rate, a FIFO that overruns), the H2C
 * sink that checks every frame it gets, the private memory they work in,
 * and the byte a corrupt fault flips (sim.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "clock.h"
#include "crc32c.h"
#include "device/sim/sim.h"
#include "fpgad_simframe.h"
#include "log.h"

/*
 * A queue's private memory, touched only where used: a stream queue's
 * pattern and frame headers (C2H) or receive buffers (H2C), a memory
 * queue's scratch bytes for corrupt faults.  No card address reaches it.
 */
int sim_frames_memory(struct device_queue *q)
{
	uint64_t max_frame, psize = 0, extra, len;
	void *mem;

	if (q->mem) {
		extra = SIM_PAGE;
	} else {
		max_frame = q->dir == DIR_C2H && q->frame_size ?
			    q->frame_size : q->max_len;
		psize = fpgad_simframe_pattern_size(max_frame);
		if (q->dir == DIR_C2H) {
			q->hdr_stride = max_frame <= SIM_SMALL_FRAME ?
				sim_round_up(max_frame, SIM_HDR_STRIDE) :
				SIM_HDR_STRIDE;
			extra = sim_round_up((uint64_t)q->depth *
					     q->hdr_stride, SIM_PAGE);
		} else {
			q->rx_stride = sim_round_up(q->max_len, SIM_PAGE);
			extra = q->rx_stride * q->depth;
		}
	}
	len = sim_round_up(psize, SIM_PAGE) + extra;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED) {
		log_err("sim: %s: no memory for the engine (%" PRIu64
			" bytes): %s", q->ch.name, len, strerror(errno));
		return -ENOMEM;
	}
	q->win = mem;
	q->win_len = len;
	q->pattern_size = psize;
	if (q->mem || q->dir == DIR_C2H) {
		q->hdrs = q->win;
		q->pattern = q->win + extra;
	} else {
		q->pattern = q->win;
		q->rx = q->win + sim_round_up(psize, SIM_PAGE);
	}
	if (psize)
		fpgad_simframe_pattern_fill((unsigned char *)q->pattern, psize);
	return 0;
}

void sim_frames_memory_free(struct device_queue *q)
{
	if (q->win)
		munmap(q->win, q->win_len);
	q->win = NULL;
}

/* The byte of an @n-byte transfer that a corrupt fault flips. */
uint64_t sim_flip_offset(struct device_queue *q, uint64_t n)
{
	uint64_t r = fpgad_simframe_mix(q->dev->faults.seed ^ (q->started << 8) ^
					q->engine);

	if (n <= FPGAD_SIMFRAME_HDR_SIZE)
		return n ? r % n : 0;
	return FPGAD_SIMFRAME_HDR_SIZE + r % (n - FPGAD_SIMFRAME_HDR_SIZE);
}

/* When frame @seq of a started source is produced. */
static uint64_t sim_frame_time(struct device_queue *q, uint64_t seq)
{
	uint64_t rate = q->ch.frame_rate;

	return q->t0 + seq / rate * CLOCK_NS_PER_SEC + seq % rate * CLOCK_NS_PER_SEC / rate;
}

/*
 * The frame the next C2H transfer gets at @now: drops what the source's
 * FIFO lost and writes the frame's number and production time.
 */
void sim_source_peek(struct device_queue *q, uint64_t now,
		     uint64_t *ret_seq, uint64_t *ret_avail)
{
	uint64_t rate = q->ch.frame_rate, dt, produced;

	if (!rate) {
		*ret_seq = q->next_seq;
		*ret_avail = now;
		return;
	}
	if (!q->source_started) {
		q->source_started = true;
		q->t0 = now;
	}
	dt = now - q->t0;
	produced = dt / CLOCK_NS_PER_SEC * rate + dt % CLOCK_NS_PER_SEC * rate / CLOCK_NS_PER_SEC + 1;
	if (produced > q->next_seq + SIM_SOURCE_FIFO) {
		uint64_t lost = produced - SIM_SOURCE_FIFO - q->next_seq;

		q->next_seq += lost;
		sim_count(&q->st.overruns, lost);
	}
	*ret_seq = q->next_seq;
	*ret_avail = sim_frame_time(q, q->next_seq);
}

/* H2C: check a received frame, count it, return its seq (0 if unknown). */
uint64_t sim_sink_check(struct device_queue *q, const void *buf,
			uint64_t len)
{
	struct fpgad_simframe_hdr h;
	uint64_t bad = 0;
	int r;

	r = fpgad_simframe_check(buf, len, FPGAD_SIMFRAME_ANY_SEQ, q->pattern,
				 q->pattern_size, &bad);
	sim_count(&q->st.frames, 1);
	if (r == FPGAD_SIMFRAME_OK) {
		sim_count(&q->st.sink_good, 1);
	} else {
		sim_count(&q->st.sink_bad, 1);
		atomic_store(&q->st.sink_last_error, r);
		atomic_store(&q->st.sink_last_offset, bad);
		log_debug("sim: %s: frame %s at byte %" PRIu64, q->ch.name,
			  fpgad_simframe_strerror(r), bad);
	}
	if (r == FPGAD_SIMFRAME_BAD_HEADER)
		return 0;
	memcpy(&h, buf, sizeof(h));
	return h.seq;
}

/*
 * The CRC-32C of every payload a frame of the queue's fixed size can carry
 * (payloads start at FPGAD_SIMFRAME_OFFSET_WORDS offsets of the pattern),
 * from the CRC registers at both ends of each window (crc32c.h): one pass
 * over the pattern here, no CRC work per frame.
 */
int sim_crc_prepare(struct device_queue *q)
{
	const unsigned n = FPGAD_SIMFRAME_OFFSET_WORDS;
	uint32_t op[32], *start, end = 0, reg = 0;
	uint64_t len;

	if (q->dir != DIR_C2H || q->frame_size <= FPGAD_SIMFRAME_HDR_SIZE)
		return 0;
	len = q->frame_size - FPGAD_SIMFRAME_HDR_SIZE;
	if (q->pattern_size < (uint64_t)(n - 1) * 8u + len)
		return -EINVAL;
	start = malloc(n * sizeof(*start));
	q->crc_tab = malloc(n * sizeof(*q->crc_tab));
	if (!start || !q->crc_tab) {
		free(start);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++) {
		start[i] = reg;
		reg = crc32c_update(reg, q->pattern + 8u * i, 8);
	}
	crc32c_zeros_op(len, op);
	for (unsigned i = 0; i < n; i++) {
		end = i ? crc32c_update(end, q->pattern + 8u * (i - 1) + len, 8) :
			  crc32c_update(0, q->pattern, len);
		q->crc_tab[i] = ~(crc32c_apply(op, 0xffffffffu ^ start[i]) ^ end);
	}
	free(start);
	q->crc_len = len;
	return 0;
}

void sim_frame_header(struct device_queue *q, struct fpgad_simframe_hdr *h,
		      uint64_t seq, uint64_t frame_len)
{
	uint64_t off = fpgad_simframe_payload_offset(seq);
	uint64_t len = frame_len - FPGAD_SIMFRAME_HDR_SIZE;

	fpgad_simframe_hdr_init(h, seq, frame_len, q->engine);
	if (frame_len <= FPGAD_SIMFRAME_HDR_SIZE)
		return;
	if (q->crc_tab && len == q->crc_len)
		fpgad_simframe_hdr_set_crc(h, q->crc_tab[seq %
					   FPGAD_SIMFRAME_OFFSET_WORDS]);
	else if (q->pattern_size >= off + len)
		fpgad_simframe_hdr_set_crc(h, crc32c(q->pattern + off, len));
}
