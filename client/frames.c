// SPDX-License-Identifier: MIT
/*
 * frames.c - taking frames on a leased channel: wait (in order, or the
 * newest), release, hand h2c buffers to the card, and make a frame
 * readable on the host, copying only when it is not there yet.
 */
#include <errno.h>
#include <string.h>

#include "client_internal.h"
#include "clock.h"
#include "crc32c.h"
#include "frame_consumer.h"

/*
 * How often a waiting consumer checks that its lease is still there, and
 * the slack left for waking up and checking: together within the bound
 * fpgad.h promises.
 */
#define FRAMES_LIVENESS_MS 40
#define FRAMES_WAKE_SLACK_MS 10
_Static_assert(FRAMES_LIVENESS_MS + FRAMES_WAKE_SLACK_MS <= FPGAD_GONE_NOTICE_MS,
	       "a waiter checks less often than FPGAD_GONE_NOTICE_MS promises");

void fpgad_channel_set_newest(fpgad_channel *ch, bool newest)
{
	ch->newest = newest;
}

void fpgad_channel_set_poll(fpgad_channel *ch, unsigned us)
{
	ch->poll_us = us;
}

uint32_t fpgad_channel_events(fpgad_channel *ch)
{
	uint32_t e;

	if (ch->cons)
		ch->events |= frame_consumer_events(ch->cons);
	e = ch->events;
	ch->events = 0;
	return e;
}

/*
 * The lease ended behind the library's back: fpgad stopped or died (or
 * the connection it was made on broke).  With reconnect on, the session
 * is restored (session.c): -ESTALE once this channel is leased again.
 */
static int lease_lost(fpgad_channel *ch, uint64_t deadline)
{
	int r;

	/*
	 * Ended on fpgad's side: nothing to give back.  Closing the channel
	 * must not ask a fpgad that died, before nng has noticed, and wait
	 * out the control timeout for its answer.
	 */
	ch->lease_id = 0;
	r = session_lost(ch->c, &ch->restored, clock_ms_left(deadline));
	if (r == -ESTALE)
		lease_drop_old(ch);
	return r;
}

int fpgad_frame_wait(fpgad_channel *ch, struct fpgad_frame *ret_frame,
		     int timeout_ms)
{
	uint64_t deadline = clock_deadline_ns(timeout_ms);
	uint64_t spin_end = clock_now_ns() + (uint64_t)ch->poll_us * 1000u;
	struct frame_ring_frame f;
	int r, left;

	if (!ch->cons)
		return lease_lost(ch, deadline);
	if (ch->restored) {
		/* Leased again by a restore another call ran. */
		lease_drop_old(ch);
		return -ESTALE;
	}
	for (;;) {
		r = ch->newest ? frame_consumer_claim_newest(ch->cons, &f) :
				 frame_consumer_claim(ch->cons, &f);
		if (r >= 0)
			break;
		if (r == -EPROTO)
			continue;
		if (r != -EAGAIN)
			return r;
		ch->events |= frame_consumer_events(ch->cons);
		if ((ch->events & (FPGAD_EVENT_CLOSED | FPGAD_EVENT_DAEMON_GONE)) ||
		    lease_gone(ch))
			return lease_lost(ch, deadline);
		/* Busy-poll first, if asked to (and the timeout allows it). */
		if (ch->poll_us && timeout_ms != 0 && clock_now_ns() < spin_end)
			continue;
		left = clock_ms_left(deadline);
		if (timeout_ms == 0 || left == 0)
			return -ETIMEDOUT;
		/* Wake up now and then to see whether fpgad is still there. */
		if (left < 0 || left > FRAMES_LIVENESS_MS)
			left = FRAMES_LIVENESS_MS;
		r = frame_consumer_wait(ch->cons, left);
		if (r == -ESTALE)
			return r;
	}
	ch->held_pos[f.slot] = f.pos;
	ret_frame->lost = 0;
	if (!ch->h2c) {
		/* Gaps as this process sees them: exact, whoever made them. */
		f.flags &= ~FPGAD_FRAME_F_DROPPED_BEFORE;
		if (ch->seen_seq && f.seq > ch->last_seq + 1) {
			f.flags |= FPGAD_FRAME_F_DROPPED_BEFORE;
			ret_frame->lost = f.seq - ch->last_seq - 1;
		}
		ch->seen_seq = true;
		ch->last_seq = f.seq;
	}
	ret_frame->seq = f.seq;
	ret_frame->slot = f.slot;
	ret_frame->flags = f.flags;
	ret_frame->length = f.length;
	ret_frame->t_dma_start_ns = f.t_dma_start_ns;
	ret_frame->t_dma_end_ns = f.t_dma_end_ns;
	ret_frame->t_publish_ns = f.t_publish_ns;
	ret_frame->t_sender_start_ns = f.t_sender_start_ns;
	ret_frame->t_sender_end_ns = f.t_sender_end_ns;
	ret_frame->data = fpgad_slot_data(ch, f.slot);
	ret_frame->skipped = ch->newest ? (uint64_t)r : 0;
	return 0;
}

void *fpgad_slot_data(const fpgad_channel *ch, uint32_t slot)
{
	if (!ch->base || slot >= ch->info.slots)
		return NULL;
	return ch->base + (uint64_t)slot * ch->info.slot_size;
}

/* Where @slot is in this process's host memory, or NULL (GPU memory). */
static void *slot_host(const fpgad_channel *ch, uint32_t slot)
{
	if (ch->info.memory == FPGAD_MEMORY_HOST)
		return fpgad_slot_data(ch, slot);
	if (!ch->gpu.host || slot >= ch->info.slots)
		return NULL;
	return (uint8_t *)ch->gpu.host + (uint64_t)slot * ch->info.slot_size;
}

/* The descriptor this process holds for @in's slot; -EINVAL if none. */
static int held(const fpgad_channel *ch, const struct fpgad_frame *in,
		struct frame_ring_frame *ret_f)
{
	if (!ch->held_pos)
		return -EPIPE;	/* the lease is gone, and the frames with it */
	if (!in || in->slot >= ch->info.slots ||
	    ch->held_pos[in->slot] == FRAMES_NOT_HELD)
		return -EINVAL;
	memset(ret_f, 0, sizeof(*ret_f));
	ret_f->pos = ch->held_pos[in->slot];
	ret_f->slot = in->slot;
	return 0;
}

int fpgad_frame_release(fpgad_channel *ch, const struct fpgad_frame *in)
{
	struct frame_ring_frame f;
	int r = held(ch, in, &f);

	if (r == 0)
		r = frame_consumer_release(ch->cons, &f);
	if (r == 0)
		ch->held_pos[in->slot] = FRAMES_NOT_HELD;
	return r;
}

int fpgad_frame_submit(fpgad_channel *ch, const struct fpgad_frame *in,
		       uint64_t length)
{
	struct frame_ring_frame f;
	int r;

	if (!ch->h2c || !length ||
	    length > ch->info.slot_size)
		return -EINVAL;
	r = held(ch, in, &f);
	if (r == 0)
		r = frame_consumer_submit(ch->cons, &f, length);
	if (r == 0)
		ch->held_pos[in->slot] = FRAMES_NOT_HELD;
	return r;
}

/* @host, a word of the descriptor ring, as the GPU addresses it. */
static void *desc_dev(const fpgad_channel *ch, const void *host)
{
	return (char *)ch->desc_dev + ((const char *)host - (const char *)ch->desc);
}

/*
 * Queue on @stream the stores that hand @in back (with @fill bytes for the
 * card, h2c); the library forgets the frame now, the producer sees it when
 * the GPU has done what came before on @stream.
 */
static int release_on_stream(fpgad_channel *ch, const struct fpgad_frame *in,
			     void *stream, uint64_t fill)
{
	struct frame_ring_frame f;
	struct frame_async a;
	int r = held(ch, in, &f);

	if (r < 0)
		return r;
	if (!ch->desc_dev) {
		r = gpu_register_host(ch->desc, ch->desc_len, &ch->desc_dev);
		if (r < 0) {
			ch->desc_dev = NULL;
			return r;
		}
	}
	r = frame_consumer_async_words(ch->cons, &f, &a);
	if (r < 0)
		return r;
	if (fill) {
		r = gpu_stream_write32(stream, desc_dev(ch, a.fill), (uint32_t)fill);
		if (r == 0)
			r = gpu_stream_write32(stream,
					       desc_dev(ch, (char *)a.fill + 4),
					       (uint32_t)(fill >> 32));
	}
	if (r == 0)
		r = gpu_stream_write32(stream, desc_dev(ch, a.state_low),
				       a.released_low);
	if (r == 0)
		r = gpu_stream_write32(stream, desc_dev(ch, a.done), a.count);
	if (r == 0)
		ch->held_pos[in->slot] = FRAMES_NOT_HELD;
	return r;
}

int fpgad_frame_release_async(fpgad_channel *ch, const struct fpgad_frame *f,
			      void *cuda_stream)
{
	return release_on_stream(ch, f, cuda_stream, 0);
}

int fpgad_frame_submit_async(fpgad_channel *ch, const struct fpgad_frame *f,
			     uint64_t length, void *cuda_stream)
{
	if (!ch->h2c || !length || length > ch->info.slot_size)
		return -EINVAL;
	return release_on_stream(ch, f, cuda_stream, length);
}

int fpgad_frame_write(fpgad_channel *ch, const struct fpgad_frame *f,
		      const void *src, uint64_t len)
{
	void *dst = fpgad_slot_data(ch, f->slot), *host = slot_host(ch, f->slot);

	if (!dst || len > ch->info.slot_size)
		return -EINVAL;
	if (!host)
		return gpu_from_host(dst, src, len);
	memcpy(host, src, len);
	return 0;
}

int fpgad_frame_host(fpgad_channel *ch, const struct fpgad_frame *f,
		     const void **ret_ptr)
{
	uint32_t s = f->slot;
	int r;

	if (!ch->held_pos)
		return -EPIPE;
	if (s >= ch->info.slots || f->length > ch->info.slot_size ||
	    ch->held_pos[s] == FRAMES_NOT_HELD)
		return -EINVAL;
	if (slot_host(ch, s)) {
		/* Already in host memory: nothing to copy. */
		*ret_ptr = slot_host(ch, s);
		return 0;
	}
	if (!ch->host[s]) {
		r = gpu_host_alloc(ch->info.slot_size, &ch->host[s]);
		if (r < 0)
			return r;
		ch->host_pos[s] = FRAMES_NOT_HELD;
	}
	if (ch->host_pos[s] != ch->held_pos[s]) {
		r = gpu_to_host(ch->host[s], fpgad_slot_data(ch, s), f->length);
		if (r < 0)
			return r;
		ch->host_pos[s] = ch->held_pos[s];
		ch->host_copies++;
	}
	*ret_ptr = ch->host[s];
	return 0;
}

int fpgad_frame_verify(fpgad_channel *ch, const struct fpgad_frame *f)
{
	const void *p;
	int r = fpgad_frame_host(ch, f, &p);

	if (r < 0)
		return r;
	switch (crc32c_frame_check(p, f->length)) {
	case 1:
		return 0;
	case 0:
		return -ENODATA;
	default:
		return -EBADMSG;
	}
}

uint64_t fpgad_channel_host_copies(const fpgad_channel *ch)
{
	return ch->host_copies;
}
