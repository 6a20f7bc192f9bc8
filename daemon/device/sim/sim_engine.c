// SPDX-License-Identifier: MIT
/*
 * sim_engine.c - a sim queue's engine thread: take transfers from the
 * submission ring in order, inject the faults that are due, move the bytes
 * (frames from the source or into the sink, or between card memory and the
 * pin for a memory queue; memcpy for host memory, sim_gpu.c for GPU
 * memory), hold each transfer until the link model says it is done, post
 * completions, and cancel everything on a reset (sim.h).
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>

#include "clock.h"
#include "device/sim/sim.h"
#include "fpgad_simframe.h"
#include "futex.h"
#include "log.h"
#include "memory/copy.h"
#include "memory/fault_guard.h"
#include "wait.h"

bool sim_sq_empty(struct device_queue *q)
{
	return atomic_load(&q->sq_head) == atomic_load(&q->sq_tail);
}

static bool sim_engine_interrupted(struct device_queue *q)
{
	return atomic_load(&q->stop) ||
	       atomic_load(&q->reset_req) != atomic_load(&q->reset_ack);
}

/* Wake the engine from any sleep (reset, close). */
void sim_engine_poke(struct device_queue *q)
{
	atomic_fetch_add(&q->eng_word, 1);
	futex_wake((uint32_t *)&q->eng_word, false);
}

/*
 * Sleep until @t (UINT64_MAX: forever); returns -EINTR when a reset or
 * close interrupts it.  The last SIM_SPIN_NS are spun for precision.
 */
int sim_engine_sleep_until(struct device_queue *q, uint64_t t)
{
	for (;;) {
		uint64_t now, wake;
		uint32_t v;

		if (sim_engine_interrupted(q))
			return -EINTR;
		now = clock_now_ns();
		if (now >= t)
			return 0;
		if (t - now <= SIM_SPIN_NS) {
			futex_spin();
			continue;
		}
		wake = t == UINT64_MAX ? t : t - SIM_SPIN_NS / 2;
		v = atomic_load(&q->eng_word);
		atomic_store(&q->eng_sleep, SIM_SLEEP_TIME);
		if (!sim_engine_interrupted(q))
			futex_wait((uint32_t *)&q->eng_word, v,
				   wake == UINT64_MAX ? 0 : wake, false);
		atomic_store(&q->eng_sleep, SIM_AWAKE);
	}
}

static int sim_engine_has_work(const void *arg)
{
	struct device_queue *q = (struct device_queue *)arg;

	return !sim_sq_empty(q) || sim_engine_interrupted(q);
}

/*
 * Idle: sleep until there is work, a reset or a close.  A memory queue
 * spins for work first: poll_ns when asked to, else the adaptive spin
 * (spin.h), as a card's engine would take the next descriptor at once.
 */
static void sim_engine_idle(struct device_queue *q)
{
	uint64_t t0 = clock_now_ns();
	uint32_t v;

	if (q->poll_ns) {
		uint64_t until = t0 + q->poll_ns;

		while (!sim_engine_has_work(q) && clock_now_ns() < until)
			futex_spin();
	} else if (q->mem) {
		spin_wait(&q->spin, t0, sim_engine_has_work, q);
	}
	if (sim_engine_has_work(q))
		return;
	v = atomic_load(&q->eng_word);

	atomic_store(&q->eng_sleep, SIM_SLEEP_WORK);
	if (sim_sq_empty(q) && !sim_engine_interrupted(q))
		futex_wait((uint32_t *)&q->eng_word, v, 0, false);
	atomic_store(&q->eng_sleep, SIM_AWAKE);
	if (q->mem && !q->poll_ns)
		spin_learn(&q->spin, clock_now_ns() - t0);
}

/* Post a completion (engine thread). */
void sim_complete(struct device_queue *q, const struct sim_cqe *c)
{
	uint32_t head = q->cq_next;

	if (head - atomic_load(&q->cq_tail) >= SIM_MAX_INFLIGHT) {
		/* Cannot happen: submit keeps completions within the ring. */
		log_err("sim: %s: completion ring overflow", q->ch.name);
		return;
	}
	q->cq[head % SIM_MAX_INFLIGHT] = *c;
	q->cq_next = head + 1;
	atomic_store(&q->cq_head, head + 1);

	atomic_fetch_add_explicit(&q->st.completed, 1, memory_order_relaxed);
	if (c->c.status == -ETIMEDOUT)
		atomic_fetch_add_explicit(&q->st.timeouts, 1,
					  memory_order_relaxed);
	else if (c->c.status == -ECANCELED)
		atomic_fetch_add_explicit(&q->st.canceled, 1,
					  memory_order_relaxed);

	wait_wake((uint32_t *)&q->cq_sleep, (uint32_t *)&q->cq_word, false);
	/* Written before fired is set: the reader then finds it readable. */
	if (atomic_load(&q->cfd_armed) && atomic_exchange(&q->cfd_armed, 0)) {
		if (eventfd_write(atomic_load(&q->cfd), 1) < 0)
			log_warn("sim: %s: completion descriptor: %s",
				 q->ch.name, strerror(errno));
		atomic_store(&q->cfd_fired, 1);
	}
}

/*
 * A memory queue's transfer in host memory; @flip: byte to corrupt.  The
 * buffer is a client's: a fault on it fails the transfer with -EFAULT.
 */
static int sim_move_mem(struct device_queue *q, const struct sim_sqe *e,
			uint64_t flip)
{
	unsigned char *card = q->dev->card + e->x.card_addr;
	int r;

	if (q->dir == DIR_C2H) {
		r = fault_guard_copy(e->addr, card, e->x.length);
		if (!r && flip != UINT64_MAX)
			r = fault_guard_copy(e->addr + flip, &(unsigned char){
						card[flip] ^ 0xff }, 1);
	} else {
		r = fault_guard_copy(card, e->addr, e->x.length);
		if (!r && flip != UINT64_MAX)
			card[flip] ^= 0xff;
	}
	if (r)
		log_warn("sim: %s: transfer at card 0x%llx: the client's buffer "
			 "faulted: %s", q->ch.name,
			 (unsigned long long)e->x.card_addr, strerror(-r));
	return r;
}

/* Execute one transfer from the submission ring. */
static void sim_execute(struct device_queue *q, const struct sim_sqe *e)
{
	uint64_t timeout_ns, now, n, frame_len = 0, end, flip;
	enum sim_fault fault;
	struct sim_cqe c;

	memset(&c, 0, sizeof(c));
	c.c.cookie = e->x.cookie;
	c.pin = e->pin;
	timeout_ns = (uint64_t)(e->x.timeout_ms ? e->x.timeout_ms :
				q->dev->timeout_ms) * 1000000u;
	fault = sim_fault_next(q);
	/* Completions leave in order: GPU copies finish before others do. */
	if (e->kind != DEV_REGION_CUDA ||
	    (fault != SIM_FAULT_NONE && fault != SIM_FAULT_CORRUPT))
		sim_gpu_drain(q);

	now = clock_now_ns();
	n = e->x.length;
	if (q->dir == DIR_C2H && !q->mem) {
		uint64_t seq, avail;

		sim_source_peek(q, now, &seq, &avail);
		if (avail > now) {
			sim_gpu_drain(q);
			if (avail - now > timeout_ns) {
				c.c.t_start_ns = now;
				c.c.status = sim_engine_sleep_until(q,
							now + timeout_ns) ?
					     -ECANCELED : -ETIMEDOUT;
				goto done;
			}
			if (sim_engine_sleep_until(q, avail)) {
				c.c.t_start_ns = now;
				c.c.status = -ECANCELED;
				goto done;
			}
			now = clock_now_ns();
		}
		q->next_seq = seq + 1;
		c.c.seq = seq;
		frame_len = q->frame_size ? q->frame_size : e->x.length;
		if (n >= frame_len)
			n = frame_len;
		else
			c.c.flags |= DEV_COMPLETION_TRUNCATED;
	}
	c.c.t_start_ns = now;

	switch (fault) {
	case SIM_FAULT_HANG:
		sim_count(&q->st.fault_hang, 1);
		log_debug("sim: %s: injected hang", q->ch.name);
		sim_engine_sleep_until(q, UINT64_MAX);
		c.c.status = -ECANCELED;
		goto done;
	case SIM_FAULT_TIMEOUT:
		sim_count(&q->st.fault_timeout, 1);
		log_debug("sim: %s: injected timeout", q->ch.name);
		c.c.status = sim_engine_sleep_until(q, now + timeout_ns) ?
			     -ECANCELED : -ETIMEDOUT;
		goto done;
	case SIM_FAULT_ERROR:
		sim_count(&q->st.fault_error, 1);
		log_debug("sim: %s: injected error", q->ch.name);
		c.c.status = -EIO;
		goto done;
	case SIM_FAULT_CORRUPT:
		sim_count(&q->st.fault_corrupt, 1);
		log_debug("sim: %s: injected corruption", q->ch.name);
		break;
	case SIM_FAULT_NONE:
		break;
	}

	end = sim_link_reserve(q->dev, q->dir, now, n, &c.c.t_start_ns);
	if (e->kind == DEV_REGION_CUDA) {
		q->cuda_active = true;
		if (q->mem)
			sim_gpu_launch_mem(q, e, &c, end,
					   fault == SIM_FAULT_CORRUPT);
		else
			sim_gpu_launch(q, e, &c, end, n, frame_len,
				       fault == SIM_FAULT_CORRUPT);
		return;
	}
	flip = fault == SIM_FAULT_CORRUPT ? sim_flip_offset(q, n) : UINT64_MAX;
	if (q->mem) {
		c.c.status = sim_move_mem(q, e, flip);
		if (c.c.status)
			goto done;
	} else if (q->dir == DIR_C2H) {
		fpgad_simframe_fill_part(e->addr, n, frame_len, c.c.seq,
					 q->engine, q->pattern,
					 q->pattern_size);
		if (n >= FPGAD_SIMFRAME_HDR_SIZE) {
			struct fpgad_simframe_hdr h;

			sim_frame_header(q, &h, c.c.seq, frame_len);
			memcpy(e->addr, &h, sizeof(h));
		}
		if (flip != UINT64_MAX)
			e->addr[flip] ^= 0xff;
	} else {
		memcpy(q->rx, e->addr, n);
		if (flip != UINT64_MAX)
			q->rx[flip] ^= 0xff;
		c.c.seq = sim_sink_check(q, q->rx, n);
	}
	if (sim_engine_sleep_until(q, end)) {
		c.c.status = -ECANCELED;
		goto done;
	}
	c.c.length = n;
	sim_count(&q->st.bytes, n);
	if (q->dir == DIR_C2H && !q->mem)
		sim_count(&q->st.frames, 1);
done:
	now = clock_now_ns();
	c.c.t_end_ns = now > c.c.t_start_ns ? now : c.c.t_start_ns;
	sim_complete(q, &c);
}

static bool sim_sq_pop(struct device_queue *q, struct sim_sqe *ret)
{
	uint32_t tail = atomic_load_explicit(&q->sq_tail, memory_order_relaxed);

	if (atomic_load_explicit(&q->sq_head, memory_order_acquire) == tail)
		return false;
	*ret = q->sq[tail % SIM_MAX_INFLIGHT];
	atomic_store_explicit(&q->sq_tail, tail + 1, memory_order_release);
	return true;
}

/* Cancel everything queued and acknowledge the reset. */
static void sim_engine_reset(struct device_queue *q)
{
	uint32_t req = atomic_load(&q->reset_req);
	struct sim_sqe e;

	sim_gpu_cancel(q);
	while (sim_sq_pop(q, &e)) {
		struct sim_cqe c;

		memset(&c, 0, sizeof(c));
		c.c.cookie = e.x.cookie;
		c.c.status = -ECANCELED;
		c.c.t_start_ns = clock_now_ns();
		c.c.t_end_ns = c.c.t_start_ns;
		c.pin = e.pin;
		sim_complete(q, &c);
	}
	atomic_store(&q->reset_ack, req);
	futex_wake((uint32_t *)&q->reset_ack, false);
}

void *sim_engine_main(void *arg)
{
	struct device_queue *q = arg;
	struct sim_sqe e;

	/* Pacing sleeps are short: ask for precise wake-ups. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	while (!atomic_load(&q->stop)) {
		if (atomic_load(&q->reset_req) != atomic_load(&q->reset_ack)) {
			sim_engine_reset(q);
			continue;
		}
		if (q->cuda_active && copy_pending(q->ce)) {
			if (sim_gpu_reap(q, false) > 0)
				continue;
			if (copy_pending(q->ce) >= q->depth ||
			    sim_sq_empty(q)) {
				sim_gpu_reap(q, true);
				continue;
			}
		}
		if (!sim_sq_pop(q, &e)) {
			if (q->chained)
				sim_gpu_close_chain(q);
			else
				sim_engine_idle(q);
			continue;
		}
		sim_execute(q, &e);
	}
	return NULL;
}
