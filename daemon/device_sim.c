// SPDX-License-Identifier: MIT
/*
 * device_sim.c - the simulated card: the sim device backend.
 *
 * The model, per device:
 *   card memory  cfg->sim.card_memory bytes of address space, reserved with
 *                MAP_NORESERVE; each queue takes a window of it (first fit)
 *                for its pattern, frame headers and receive buffers, and
 *                only those pages are ever touched.
 *   link         one PCIe link, full duplex: C2H transfers of all queues
 *                share one direction's bandwidth, H2C the other's.  With
 *                gen 0 it is unlimited; otherwise a transfer of L bytes
 *                occupies it for L / (lane rate * width) and completes no
 *                earlier than that.
 * and per queue (one card DMA engine, one direction):
 *   C2H source   produces frame N (fpgad_simframe.h) at t0 + N / frame_rate,
 *                t0 being the first transfer's start, or on demand with
 *                frame_rate 0.  It buffers SIM_SOURCE_FIFO frames; older
 *                ones are lost (an overrun: a gap in seq).  A transfer
 *                shorter than the frame takes its head and is flagged
 *                DEV_COMPLETION_TRUNCATED; the source moves on.
 *   H2C sink     checks every buffer it receives with fpgad_simframe_check
 *                and counts good and bad frames (sim_queue_stats()).
 *   engine       a thread that executes transfers in submission order:
 *                host memory with memcpy, CUDA memory with cudaMemcpyAsync
 *                between registered card memory and the GPU buffer, several
 *                copies in flight (the channel's queue_depth, at most
 *                max_inflight) so the ring pipelines.
 *   faults       one fault every N transfers the engine starts, per kind:
 *                hang (no completion until reset), timeout (-ETIMEDOUT
 *                after the transfer's timeout), error (-EIO at once),
 *                corrupt (completes, one payload byte flipped).  A C2H
 *                frame a failed transfer took is lost.
 *
 * A C2H transfer that gets no frame within its timeout completes with
 * -ETIMEDOUT and takes no frame.  card_addr is ignored: the sim's engines
 * are streams.
 *
 * Threads: the queue's user (pin, submit, wait, reset, close), the engine,
 * and anyone calling kick or sim_queue_stats.  Submissions and completions
 * travel through single-producer single-consumer rings; a side about to
 * sleep announces it, and the other side makes the futex system call only
 * then.  The user thread counts transfers submitted and completions taken,
 * so neither ring can overflow.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "device.h"
#include "fpgad_simframe.h"
#include "log.h"
#ifdef FPGAD_CUDA
#include "copy.h"
#endif

#define SIM_ENGINES 16u			/* per direction */
#define SIM_MAX_INFLIGHT 16u		/* ring size: a power of two */
#define SIM_MAX_PINS 64u
#define SIM_ALIGN 4096u
#define SIM_PAGE 4096u
#define SIM_DEFAULT_CARD_MEMORY (2ull << 30)
#define SIM_DEFAULT_MAX_LEN (4ull << 20)
#define SIM_DEFAULT_TIMEOUT_MS 1000u
#define SIM_DEFAULT_DEPTH 4u
#define SIM_SOURCE_FIFO 4u
#define SIM_HDR_STRIDE 128u		/* header + flipped byte, per copy */
#define SIM_SPIN_NS 20000u		/* shorter waits spin */
#define SIM_MAX_EXTENTS (2u * SIM_ENGINES)
#define SIM_NS 1000000000ull

enum sim_fault {
	SIM_FAULT_NONE,
	SIM_FAULT_HANG,
	SIM_FAULT_TIMEOUT,
	SIM_FAULT_ERROR,
	SIM_FAULT_CORRUPT,
};

/* What sleeps on a queue's engine word. */
enum sim_sleep {
	SIM_AWAKE,
	SIM_SLEEP_WORK,		/* idle: submit wakes it */
	SIM_SLEEP_TIME,		/* pacing: reset and close wake it */
};

struct sim_extent {
	uint64_t start;
	uint64_t len;
};

struct device {
	struct config_sim sim;
	unsigned timeout_ms;
	uint64_t card_size;
	unsigned char *card;
	/* Per direction: when the link is free again, CLOCK_MONOTONIC ns. */
	_Atomic uint64_t link_free[2];

	pthread_mutex_t lock;		/* extents and queues */
	bool lock_init;
	struct sim_extent ext[SIM_MAX_EXTENTS];
	unsigned n_ext;
	struct device_queue *queues[2][SIM_ENGINES];
};

struct sim_pin {
	bool used;
	uint32_t gen;
	struct dev_region r;
	uint32_t inflight;		/* transfers not yet reaped */
};

struct sim_sqe {
	struct dev_xfer x;
	unsigned char *addr;		/* region address + offset */
	enum dev_region_kind kind;
	uint32_t pin;
};

struct sim_cqe {
	struct dev_completion c;
	uint32_t pin;
};

/* A transfer on the copy engine (engine thread only). */
struct sim_copy {
	struct sim_cqe cqe;
	uint64_t deadline;		/* link model: not done before */
	uint64_t len;
	uint64_t flip;			/* H2C: byte to corrupt or none */
	unsigned slot;
};

struct sim_counters {
	_Atomic uint64_t submitted, completed, bytes, frames, overruns;
	_Atomic uint64_t sink_good, sink_bad, sink_last_offset;
	_Atomic int32_t sink_last_error;
	_Atomic uint64_t fault_timeout, fault_error, fault_corrupt, fault_hang;
	_Atomic uint64_t timeouts, canceled;
};

struct device_queue {
	/* Submission ring: the user produces, the engine consumes. */
	alignas(64) _Atomic uint32_t sq_head;
	alignas(64) _Atomic uint32_t sq_tail;
	_Atomic uint32_t eng_word;	/* futex: bumped to wake the engine */
	_Atomic uint32_t eng_sleep;	/* enum sim_sleep */
	_Atomic uint32_t stop;
	_Atomic uint32_t reset_req;
	_Atomic uint32_t reset_ack;	/* futex: engine finished a reset */
	/* Completion ring: the engine produces, the user consumes. */
	alignas(64) _Atomic uint32_t cq_head;
	alignas(64) _Atomic uint32_t cq_tail;
	_Atomic uint32_t cq_word;	/* futex: bumped to wake the waiter */
	_Atomic uint32_t cq_sleep;
	_Atomic uint32_t kicked;

	alignas(64) struct sim_sqe sq[SIM_MAX_INFLIGHT];
	struct sim_cqe cq[SIM_MAX_INFLIGHT];

	struct device *dev;
	struct config_channel ch;
	enum direction dir;
	unsigned engine;
	unsigned depth;			/* copies in flight on a GPU */
	uint64_t max_len;		/* longest H2C or unframed transfer */
	uint64_t frame_size;		/* C2H: 0 = the transfer's length */

	/* The queue's window of card memory. */
	uint64_t win_start;
	uint64_t win_len;
	unsigned char *win;
	const unsigned char *pattern;
	uint64_t pattern_size;
	unsigned char *hdrs;		/* C2H: depth * SIM_HDR_STRIDE */
	unsigned char *rx;		/* H2C: depth * rx_stride */
	uint64_t rx_stride;

	/* The user thread's. */
	struct sim_pin pins[SIM_MAX_PINS];
	uint64_t submitted;
	uint64_t reaped;
	bool registered;		/* window registered with CUDA */
	struct copy_engine *ce;

	/* The engine's. */
	pthread_t thread;
	bool thread_started;
	uint32_t cq_next;		/* cq_head, engine copy */
	uint64_t started;		/* transfers started, for faults */
	uint64_t next_seq;
	uint64_t t0;
	bool source_started;
	bool cuda_active;
	struct sim_copy copies[SIM_MAX_INFLIGHT];
	uint64_t copy_head;		/* next to launch */
	uint64_t copy_tail;		/* oldest outstanding */

	struct sim_counters st;
};

/* ---- time, futexes --------------------------------------------------- */

static uint64_t sim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SIM_NS + (uint64_t)ts.tv_nsec;
}

/* Sleep while *@word == @val, until @deadline (CLOCK_MONOTONIC ns). */
static int sim_futex_wait(_Atomic uint32_t *word, uint32_t val,
			  uint64_t deadline)
{
	struct timespec ts;
	long r;

	ts.tv_sec = (time_t)(deadline / SIM_NS);
	ts.tv_nsec = (long)(deadline % SIM_NS);
	r = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET_PRIVATE, val,
		    deadline == UINT64_MAX ? NULL : &ts, NULL,
		    FUTEX_BITSET_MATCH_ANY);
	return r < 0 ? -errno : 0;
}

static void sim_futex_wake(_Atomic uint32_t *word)
{
	syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL,
		NULL, 0);
}

static void sim_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* ---- the link model ---------------------------------------------------- */

struct sim_gen {
	unsigned gt10;		/* transfer rate, 0.1 GT/s per lane */
	unsigned payload;	/* line encoding: payload bits ... */
	unsigned total;		/* ... per this many bits on the wire */
};

static const struct sim_gen sim_gens[] = {
	[1] = { 25, 8, 10 },
	[2] = { 50, 8, 10 },
	[3] = { 80, 128, 130 },
	[4] = { 160, 128, 130 },
	[5] = { 320, 128, 130 },
};

/* Nanoseconds @bytes take on the link, rounded up; 0 when unlimited. */
static uint64_t sim_link_ns(const struct link_model *l, uint64_t bytes)
{
	const struct sim_gen *g;
	uint64_t num, den;

	if (!l->gen)
		return 0;
	g = &sim_gens[l->gen];
	/* bytes * 8 bit * 1e9 ns / (gt10 * 1e8 * payload / total * width) */
	num = bytes * 80u * g->total;
	den = (uint64_t)g->gt10 * g->payload * l->width;
	return (num + den - 1) / den;
}

static uint64_t sim_link_rate(const struct link_model *l)
{
	const struct sim_gen *g = &sim_gens[l->gen];

	return (uint64_t)g->gt10 * 100000000u * g->payload * l->width /
	       (8u * g->total);
}

/*
 * Reserve the link in @dir for @bytes from @now on: writes when the
 * transfer starts and returns when it may complete.
 */
static uint64_t sim_link_reserve(struct device *d, enum direction dir,
				 uint64_t now, uint64_t bytes,
				 uint64_t *ret_start)
{
	uint64_t dur = sim_link_ns(&d->sim.link, bytes);
	uint64_t cur, start;

	if (!dur) {
		*ret_start = now;
		return now;
	}
	cur = atomic_load(&d->link_free[dir]);
	do {
		start = cur > now ? cur : now;
	} while (!atomic_compare_exchange_weak(&d->link_free[dir], &cur,
					       start + dur));
	*ret_start = start;
	return start + dur;
}

/* ---- card memory ------------------------------------------------------- */

static uint64_t sim_round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* First fit; the caller holds d->lock. */
static int sim_card_alloc(struct device *d, uint64_t len, uint64_t *ret_start)
{
	uint64_t at = 0;
	unsigned i;

	if (d->n_ext == SIM_MAX_EXTENTS)
		return -ENOMEM;
	for (i = 0; i <= d->n_ext; i++) {
		uint64_t end = i < d->n_ext ? d->ext[i].start : d->card_size;

		if (end - at >= len)
			break;
		at = d->ext[i].start + d->ext[i].len;
	}
	if (i > d->n_ext)
		return -ENOMEM;
	memmove(&d->ext[i + 1], &d->ext[i], (d->n_ext - i) * sizeof(d->ext[0]));
	d->ext[i].start = at;
	d->ext[i].len = len;
	d->n_ext++;
	*ret_start = at;
	return 0;
}

/* Give a window back and drop its pages; the caller holds d->lock. */
static void sim_card_free(struct device *d, uint64_t start)
{
	unsigned i;

	for (i = 0; i < d->n_ext; i++) {
		if (d->ext[i].start != start)
			continue;
		madvise(d->card + start, d->ext[i].len, MADV_DONTNEED);
		memmove(&d->ext[i], &d->ext[i + 1],
			(d->n_ext - i - 1) * sizeof(d->ext[0]));
		d->n_ext--;
		return;
	}
}

/* ---- rings ------------------------------------------------------------- */

static bool sim_sq_empty(struct device_queue *q)
{
	return atomic_load(&q->sq_head) == atomic_load(&q->sq_tail);
}

static bool sim_engine_interrupted(struct device_queue *q)
{
	return atomic_load(&q->stop) ||
	       atomic_load(&q->reset_req) != atomic_load(&q->reset_ack);
}

/* Wake the engine from any sleep (reset, close). */
static void sim_engine_poke(struct device_queue *q)
{
	atomic_fetch_add(&q->eng_word, 1);
	sim_futex_wake(&q->eng_word);
}

/*
 * Sleep until @t (UINT64_MAX: forever); returns -EINTR when a reset or
 * close interrupts it.  The last SIM_SPIN_NS are spun for precision.
 */
static int sim_engine_sleep_until(struct device_queue *q, uint64_t t)
{
	for (;;) {
		uint64_t now, wake;
		uint32_t v;

		if (sim_engine_interrupted(q))
			return -EINTR;
		now = sim_now();
		if (now >= t)
			return 0;
		if (t - now <= SIM_SPIN_NS) {
			sim_cpu_relax();
			continue;
		}
		wake = t == UINT64_MAX ? t : t - SIM_SPIN_NS / 2;
		v = atomic_load(&q->eng_word);
		atomic_store(&q->eng_sleep, SIM_SLEEP_TIME);
		if (!sim_engine_interrupted(q))
			sim_futex_wait(&q->eng_word, v, wake);
		atomic_store(&q->eng_sleep, SIM_AWAKE);
	}
}

/* Idle: sleep until there is work, a reset or a close. */
static void sim_engine_idle(struct device_queue *q)
{
	uint32_t v = atomic_load(&q->eng_word);

	atomic_store(&q->eng_sleep, SIM_SLEEP_WORK);
	if (sim_sq_empty(q) && !sim_engine_interrupted(q))
		sim_futex_wait(&q->eng_word, v, UINT64_MAX);
	atomic_store(&q->eng_sleep, SIM_AWAKE);
}

/* Post a completion (engine thread). */
static void sim_complete(struct device_queue *q, const struct sim_cqe *c)
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

	if (atomic_load(&q->cq_sleep)) {
		atomic_fetch_add(&q->cq_word, 1);
		sim_futex_wake(&q->cq_word);
	}
}

static void sim_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* ---- the engine -------------------------------------------------------- */

static enum sim_fault sim_fault_next(struct device_queue *q)
{
	const struct config_sim *s = &q->dev->sim;
	uint64_t n = ++q->started;

	if (s->fault_hang && n % s->fault_hang == 0)
		return SIM_FAULT_HANG;
	if (s->fault_timeout && n % s->fault_timeout == 0)
		return SIM_FAULT_TIMEOUT;
	if (s->fault_error && n % s->fault_error == 0)
		return SIM_FAULT_ERROR;
	if (s->fault_corrupt && n % s->fault_corrupt == 0)
		return SIM_FAULT_CORRUPT;
	return SIM_FAULT_NONE;
}

/* The byte of an @n-byte transfer that a corrupt fault flips. */
static uint64_t sim_flip_offset(struct device_queue *q, uint64_t n)
{
	uint64_t r = fpgad_simframe_mix(q->dev->sim.seed ^ (q->started << 8) ^
					q->engine);

	if (n <= FPGAD_SIMFRAME_HDR_SIZE)
		return n ? r % n : 0;
	return FPGAD_SIMFRAME_HDR_SIZE + r % (n - FPGAD_SIMFRAME_HDR_SIZE);
}

/* When frame @seq of a started source is produced. */
static uint64_t sim_frame_time(struct device_queue *q, uint64_t seq)
{
	uint64_t rate = q->ch.frame_rate;

	return q->t0 + seq / rate * SIM_NS + seq % rate * SIM_NS / rate;
}

/*
 * The frame the next C2H transfer gets at @now: drops what the source's
 * FIFO lost and writes the frame's number and production time.
 */
static void sim_source_peek(struct device_queue *q, uint64_t now,
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
	produced = dt / SIM_NS * rate + dt % SIM_NS * rate / SIM_NS + 1;
	if (produced > q->next_seq + SIM_SOURCE_FIFO) {
		uint64_t lost = produced - SIM_SOURCE_FIFO - q->next_seq;

		q->next_seq += lost;
		sim_count(&q->st.overruns, lost);
	}
	*ret_seq = q->next_seq;
	*ret_avail = sim_frame_time(q, q->next_seq);
}

/* H2C: check a received frame, count it, return its seq (0 if unknown). */
static uint64_t sim_sink_check(struct device_queue *q, const void *buf,
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

#ifdef FPGAD_CUDA
/*
 * Finish the oldest transfer on the copy engine: 1 when one was finished,
 * 0 when none was (nothing outstanding, or still running and !@block).
 */
static int sim_copy_reap(struct device_queue *q, bool block)
{
	struct copy_done done;
	struct sim_copy *c;
	uint64_t now;
	int r;

	if (!q->ce || !copy_pending(q->ce))
		return 0;
	r = copy_reap(q->ce, block, &done);
	if (r <= 0)
		return r;
	c = &q->copies[q->copy_tail++ % SIM_MAX_INFLIGHT];
	if (done.status) {
		log_err("sim: %s: GPU copy failed: %s", q->ch.name,
			strerror(-done.status));
		c->cqe.c.status = -EIO;
	} else if (q->dir == DIR_H2C) {
		unsigned char *rx = q->rx + c->slot * q->rx_stride;

		if (c->flip != UINT64_MAX)
			rx[c->flip] ^= 0xff;
		c->cqe.c.seq = sim_sink_check(q, rx, c->len);
	}
	if (!c->cqe.c.status && sim_engine_sleep_until(q, c->deadline))
		c->cqe.c.status = -ECANCELED;
	now = sim_now();
	c->cqe.c.t_end_ns = now > c->deadline ? now : c->deadline;
	if (!c->cqe.c.status) {
		c->cqe.c.length = c->len;
		sim_count(&q->st.bytes, c->len);
		if (q->dir == DIR_C2H)
			sim_count(&q->st.frames, 1);
	}
	sim_complete(q, &c->cqe);
	return 1;
}

/* Finish every transfer on the copy engine, in order. */
static void sim_copy_drain(struct device_queue *q)
{
	while (sim_copy_reap(q, true) > 0)
		;
}

/*
 * Start a transfer on the copy engine.  C2H: header and payload (and a
 * flipped byte) from card memory into the GPU buffer; H2C: the GPU buffer
 * into a receive buffer, checked when it is reaped.
 */
static void sim_copy_launch(struct device_queue *q, const struct sim_sqe *e,
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

	if (q->dir == DIR_C2H) {
		unsigned char *hdr = q->hdrs + slot * SIM_HDR_STRIDE;
		uint64_t off = fpgad_simframe_payload_offset(cqe->c.seq);
		uint64_t hlen = n < FPGAD_SIMFRAME_HDR_SIZE ?
				n : FPGAD_SIMFRAME_HDR_SIZE;
		uint64_t flip = corrupt ? sim_flip_offset(q, n) : UINT64_MAX;

		fpgad_simframe_hdr_init((struct fpgad_simframe_hdr *)hdr,
					cqe->c.seq, frame_len, q->engine);
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
	if (r) {
		log_err("sim: %s: cannot queue a GPU copy: %s", q->ch.name,
			strerror(-r));
		/* Whatever was chained completes with the next submission. */
		cqe->c.status = -EIO;
		cqe->c.t_end_ns = sim_now();
		sim_copy_drain(q);
		sim_complete(q, cqe);
		return;
	}
	q->copy_head++;
}
#else
static void sim_copy_drain(struct device_queue *q)
{
	(void)q;
}
#endif

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
		sim_copy_drain(q);

	now = sim_now();
	n = e->x.length;
	if (q->dir == DIR_C2H) {
		uint64_t seq, avail;

		sim_source_peek(q, now, &seq, &avail);
		if (avail > now) {
			sim_copy_drain(q);
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
			now = sim_now();
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
#ifdef FPGAD_CUDA
	if (e->kind == DEV_REGION_CUDA) {
		q->cuda_active = true;
		sim_copy_launch(q, e, &c, end, n, frame_len,
				fault == SIM_FAULT_CORRUPT);
		return;
	}
#endif
	flip = fault == SIM_FAULT_CORRUPT ? sim_flip_offset(q, n) : UINT64_MAX;
	if (q->dir == DIR_C2H) {
		fpgad_simframe_fill_part(e->addr, n, frame_len, c.c.seq,
					 q->engine, q->pattern,
					 q->pattern_size);
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
	if (q->dir == DIR_C2H)
		sim_count(&q->st.frames, 1);
done:
	now = sim_now();
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

	/* GPU copies cannot be recalled: they finish, reported canceled. */
#ifdef FPGAD_CUDA
	while (q->ce && copy_pending(q->ce)) {
		unsigned i = (unsigned)(q->copy_tail % SIM_MAX_INFLIGHT);
		struct sim_copy *c = &q->copies[i];
		struct copy_done done;

		if (copy_reap(q->ce, true, &done) <= 0)
			break;
		q->copy_tail++;
		c->cqe.c.status = -ECANCELED;
		c->cqe.c.t_end_ns = sim_now();
		sim_complete(q, &c->cqe);
	}
#endif
	while (sim_sq_pop(q, &e)) {
		struct sim_cqe c;

		memset(&c, 0, sizeof(c));
		c.c.cookie = e.x.cookie;
		c.c.status = -ECANCELED;
		c.c.t_start_ns = sim_now();
		c.c.t_end_ns = c.c.t_start_ns;
		c.pin = e.pin;
		sim_complete(q, &c);
	}
	atomic_store(&q->reset_ack, req);
	sim_futex_wake(&q->reset_ack);
}

static void *sim_engine_main(void *arg)
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
#ifdef FPGAD_CUDA
		if (q->cuda_active && copy_pending(q->ce)) {
			if (sim_copy_reap(q, false) > 0)
				continue;
			if (copy_pending(q->ce) >= q->depth ||
			    sim_sq_empty(q)) {
				sim_copy_reap(q, true);
				continue;
			}
		}
#endif
		if (!sim_sq_pop(q, &e)) {
			sim_engine_idle(q);
			continue;
		}
		sim_execute(q, &e);
	}
	return NULL;
}

/* ---- the device -------------------------------------------------------- */

static void sim_close(struct device *d);
static void sim_queue_close(struct device_queue *q);

static int sim_open(const struct config *cfg, struct device **ret_dev)
{
	const struct config_sim *s = &cfg->sim;
	struct device *d;
	void *card;
	int r;

	if (s->link.gen >= sizeof(sim_gens) / sizeof(sim_gens[0]) ||
	    (s->link.gen && (s->link.width < 1 || s->link.width > 16))) {
		log_err("sim: link gen%u x%u is not a PCIe link the sim models "
			"(gen 1-5, width 1-16, or gen 0 for unlimited)",
			s->link.gen, s->link.width);
		return -EINVAL;
	}

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->sim = *s;
	d->timeout_ms = cfg->device.dma_timeout_ms;
	if (!d->timeout_ms)
		d->timeout_ms = SIM_DEFAULT_TIMEOUT_MS;
	d->card_size = sim_round_up(s->card_memory ? s->card_memory :
				    SIM_DEFAULT_CARD_MEMORY, SIM_PAGE);
	if (d->card_size < s->card_memory) {
		r = -EINVAL;
		goto fail;
	}
	r = -pthread_mutex_init(&d->lock, NULL);
	if (r)
		goto fail;
	d->lock_init = true;

	card = mmap(NULL, d->card_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (card == MAP_FAILED) {
		r = -errno;
		log_err("sim: cannot reserve %" PRIu64 " bytes of card "
			"memory: %s", d->card_size, strerror(-r));
		goto fail;
	}
	d->card = card;

	if (s->link.gen)
		log_info("sim: card memory %" PRIu64 " MiB, link gen%u x%u "
			 "(%" PRIu64 " MB/s each way)", d->card_size >> 20,
			 s->link.gen, s->link.width,
			 sim_link_rate(&s->link) / 1000000u);
	else
		log_info("sim: card memory %" PRIu64 " MiB, link unlimited",
			 d->card_size >> 20);
	if (s->fault_timeout || s->fault_error || s->fault_corrupt ||
	    s->fault_hang)
		log_notice("sim: fault injection: one in timeout %u, error %u, "
			   "corrupt %u, hang %u transfers (0 = never)",
			   s->fault_timeout, s->fault_error, s->fault_corrupt,
			   s->fault_hang);
	*ret_dev = d;
	return 0;

fail:
	sim_close(d);
	return r;
}

static void sim_close(struct device *d)
{
	unsigned dir, i;

	if (!d)
		return;
	for (dir = 0; dir < 2; dir++)
		for (i = 0; i < SIM_ENGINES; i++)
			sim_queue_close(d->queues[dir][i]);
	if (d->card)
		munmap(d->card, d->card_size);
	if (d->lock_init)
		pthread_mutex_destroy(&d->lock);
	free(d);
}

static int sim_info(struct device *d, struct device_info *ret_info)
{
	struct device_info info;

	memset(&info, 0, sizeof(info));
	snprintf(info.name, sizeof(info.name), "sim");
	info.c2h_channels = SIM_ENGINES;
	info.h2c_channels = SIM_ENGINES;
	info.link_gen = d->sim.link.gen;
	info.link_width = d->sim.link.gen ? d->sim.link.width : 0;
	info.card_memory = d->card_size;
	info.align = SIM_ALIGN;
	info.max_inflight = SIM_MAX_INFLIGHT;
	*ret_info = info;
	return 0;
}

/* ---- queues ------------------------------------------------------------ */

/* Lay out the queue's window of card memory and take it. */
static int sim_queue_window(struct device_queue *q)
{
	struct device *d = q->dev;
	uint64_t max_frame, psize, extra, len;
	int r;

	max_frame = q->dir == DIR_C2H && q->frame_size ? q->frame_size :
		    q->max_len;
	psize = fpgad_simframe_pattern_size(max_frame);
	if (q->dir == DIR_C2H) {
		extra = sim_round_up((uint64_t)q->depth * SIM_HDR_STRIDE,
				     SIM_PAGE);
	} else {
		q->rx_stride = sim_round_up(q->max_len, SIM_PAGE);
		extra = q->rx_stride * q->depth;
	}
	len = sim_round_up(psize, SIM_PAGE) + extra;

	pthread_mutex_lock(&d->lock);
	r = sim_card_alloc(d, len, &q->win_start);
	pthread_mutex_unlock(&d->lock);
	if (r) {
		log_err("sim: %s: card memory full: %" PRIu64 " bytes wanted, "
			"%" PRIu64 " in all", q->ch.name, len, d->card_size);
		return r;
	}
	q->win_len = len;
	q->win = d->card + q->win_start;
	q->pattern_size = psize;
	if (q->dir == DIR_C2H) {
		q->hdrs = q->win;
		q->pattern = q->win + extra;
	} else {
		q->pattern = q->win;
		q->rx = q->win + sim_round_up(psize, SIM_PAGE);
	}
	fpgad_simframe_pattern_fill((unsigned char *)q->pattern, psize);
	return 0;
}

static int sim_queue_open(struct device *d, const struct config_channel *ch,
			  struct device_queue **ret_q)
{
	struct device_queue *q;
	char name[16];
	int r;

	if (ch->direction != DIR_C2H && ch->direction != DIR_H2C)
		return -EINVAL;
	if (ch->engine >= SIM_ENGINES) {
		log_err("sim: %s: engine %u: the sim has %u per direction",
			ch->name, ch->engine, SIM_ENGINES);
		return -EINVAL;
	}
	if (ch->direction == DIR_C2H && ch->frame_size &&
	    ch->frame_size < FPGAD_SIMFRAME_HDR_SIZE) {
		log_err("sim: %s: frame size %" PRIu64 " is below the %u-byte "
			"frame header", ch->name, ch->frame_size,
			FPGAD_SIMFRAME_HDR_SIZE);
		return -EINVAL;
	}

	q = aligned_alloc(64, sim_round_up(sizeof(*q), 64));
	if (!q)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	q->dev = d;
	q->ch = *ch;
	q->dir = ch->direction;
	q->engine = ch->engine;
	q->depth = ch->queue_depth ? ch->queue_depth : SIM_DEFAULT_DEPTH;
	if (q->depth > SIM_MAX_INFLIGHT)
		q->depth = SIM_MAX_INFLIGHT;
	q->frame_size = q->dir == DIR_C2H ? ch->frame_size : 0;
	q->max_len = ch->slot_size > ch->frame_size ? ch->slot_size :
		     ch->frame_size;
	if (!q->max_len)
		q->max_len = SIM_DEFAULT_MAX_LEN;

	pthread_mutex_lock(&d->lock);
	if (d->queues[q->dir][q->engine]) {
		pthread_mutex_unlock(&d->lock);
		log_err("sim: %s: %s engine %u is already open", ch->name,
			q->dir == DIR_C2H ? "c2h" : "h2c", q->engine);
		free(q);
		return -EBUSY;
	}
	d->queues[q->dir][q->engine] = q;
	pthread_mutex_unlock(&d->lock);

	r = sim_queue_window(q);
	if (r)
		goto fail;

	r = -pthread_create(&q->thread, NULL, sim_engine_main, q);
	if (r) {
		log_err("sim: %s: cannot start the engine thread: %s",
			ch->name, strerror(-r));
		goto fail;
	}
	q->thread_started = true;
	snprintf(name, sizeof(name), "sim-%s%u", q->dir == DIR_C2H ? "c2h" :
		 "h2c", q->engine);
	pthread_setname_np(q->thread, name);

	*ret_q = q;
	return 0;

fail:
	sim_queue_close(q);
	return r;
}

static void sim_queue_close(struct device_queue *q)
{
	struct device *d;

	if (!q)
		return;
	d = q->dev;
	if (q->thread_started) {
		atomic_store(&q->stop, 1);
		sim_engine_poke(q);
		pthread_join(q->thread, NULL);
	}
#ifdef FPGAD_CUDA
	copy_close(q->ce);
	if (q->registered)
		copy_host_unregister(q->win);
#endif
	pthread_mutex_lock(&d->lock);
	if (q->win)
		sim_card_free(d, q->win_start);
	if (d->queues[q->dir][q->engine] == q)
		d->queues[q->dir][q->engine] = NULL;
	pthread_mutex_unlock(&d->lock);
	free(q);
}

#ifdef FPGAD_CUDA
/* First CUDA pin: a copy engine on its GPU, card memory page-locked. */
static int sim_queue_cuda(struct device_queue *q, int gpu)
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
	/* copy_* log the CUDA reason when they fail. */
	r = copy_open(gpu, q->depth, &ce);
	if (r)
		return r;
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
#endif

static struct sim_pin *sim_pin_find(struct device_queue *q, uint64_t handle,
				    uint32_t *ret_idx)
{
	uint64_t idx = (handle & 0xffffffffu) - 1;

	if (idx >= SIM_MAX_PINS || !q->pins[idx].used ||
	    q->pins[idx].gen != (uint32_t)(handle >> 32))
		return NULL;
	*ret_idx = (uint32_t)idx;
	return &q->pins[idx];
}

static int sim_pin(struct device_queue *q, const struct dev_region *r,
		   uint64_t *ret_handle)
{
	struct sim_pin *p;
	unsigned i;

	if (!r->addr || !r->length || (uintptr_t)r->addr % SIM_ALIGN)
		return -EINVAL;
	switch (r->kind) {
	case DEV_REGION_HOST:
		break;
	case DEV_REGION_CUDA:
#ifdef FPGAD_CUDA
	{
		int ret = sim_queue_cuda(q, r->gpu);

		if (ret)
			return ret;
		break;
	}
#else
		log_err("sim: %s: CUDA memory needs a build with CUDA",
			q->ch.name);
		return -EOPNOTSUPP;
#endif
	case DEV_REGION_DMABUF:
		/* Callers fall back to pinning by address: not an error. */
		log_debug("sim: %s: the sim cannot import a dma-buf; pin the "
			  "memory by address", q->ch.name);
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}

	for (i = 0; i < SIM_MAX_PINS; i++)
		if (!q->pins[i].used)
			break;
	if (i == SIM_MAX_PINS)
		return -ENOSPC;
	p = &q->pins[i];
	p->used = true;
	p->gen++;
	p->r = *r;
	p->inflight = 0;
	*ret_handle = (uint64_t)p->gen << 32 | (i + 1);
	return 0;
}

static int sim_unpin(struct device_queue *q, uint64_t handle)
{
	struct sim_pin *p;
	uint32_t idx;

	p = sim_pin_find(q, handle, &idx);
	if (!p)
		return -EINVAL;
	if (p->inflight)
		return -EBUSY;
	p->used = false;
	return 0;
}

static int sim_submit(struct device_queue *q, const struct dev_xfer *x)
{
	struct sim_sqe *e;
	struct sim_pin *p;
	uint32_t idx, head;

	p = sim_pin_find(q, x->handle, &idx);
	if (!p || !x->length || x->offset > p->r.length ||
	    x->length > p->r.length - x->offset || x->offset % SIM_ALIGN)
		return -EINVAL;
	if (x->length > q->max_len &&
	    (q->dir == DIR_H2C || !q->frame_size))
		return -EINVAL;
	if (q->dir == DIR_C2H && !q->frame_size &&
	    x->length < FPGAD_SIMFRAME_HDR_SIZE)
		return -EINVAL;
	if (q->submitted - q->reaped >= SIM_MAX_INFLIGHT)
		return -EAGAIN;

	head = atomic_load_explicit(&q->sq_head, memory_order_relaxed);
	e = &q->sq[head % SIM_MAX_INFLIGHT];
	e->x = *x;
	e->addr = (unsigned char *)p->r.addr + x->offset;
	e->kind = p->r.kind;
	e->pin = idx;
	atomic_store(&q->sq_head, head + 1);
	q->submitted++;
	p->inflight++;
	sim_count(&q->st.submitted, 1);

	if (atomic_load(&q->eng_sleep) == SIM_SLEEP_WORK) {
		atomic_fetch_add(&q->eng_word, 1);
		sim_futex_wake(&q->eng_word);
	}
	return 0;
}

static unsigned sim_cq_pop(struct device_queue *q, struct dev_completion *out,
			   unsigned max)
{
	uint32_t tail = atomic_load_explicit(&q->cq_tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&q->cq_head, memory_order_acquire);
	unsigned n = 0;

	while (tail != head && n < max) {
		const struct sim_cqe *c = &q->cq[tail % SIM_MAX_INFLIGHT];

		out[n++] = c->c;
		q->pins[c->pin].inflight--;
		q->reaped++;
		tail++;
	}
	atomic_store_explicit(&q->cq_tail, tail, memory_order_release);
	return n;
}

static int sim_wait(struct device_queue *q, struct dev_completion *out,
		    unsigned max, int timeout_ms)
{
	uint64_t deadline = UINT64_MAX;
	unsigned n;

	if (!max)
		return 0;
	if (!out)
		return -EINVAL;
	if (timeout_ms > 0)
		deadline = sim_now() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		uint32_t v;
		int r;

		n = sim_cq_pop(q, out, max);
		if (n)
			return (int)n;
		if (atomic_exchange(&q->kicked, 0) || !timeout_ms)
			return 0;

		v = atomic_load(&q->cq_word);
		atomic_store(&q->cq_sleep, 1);
		if (atomic_load(&q->cq_head) != atomic_load(&q->cq_tail) ||
		    atomic_load(&q->kicked)) {
			atomic_store(&q->cq_sleep, 0);
			continue;
		}
		r = sim_futex_wait(&q->cq_word, v, deadline);
		atomic_store(&q->cq_sleep, 0);
		if (r == -ETIMEDOUT)
			return (int)sim_cq_pop(q, out, max);
	}
}

static void sim_kick(struct device_queue *q)
{
	atomic_store(&q->kicked, 1);
	atomic_fetch_add(&q->cq_word, 1);
	if (atomic_load(&q->cq_sleep))
		sim_futex_wake(&q->cq_word);
}

static int sim_reset(struct device_queue *q)
{
	uint32_t req = atomic_fetch_add(&q->reset_req, 1) + 1;
	uint32_t ack;

	sim_engine_poke(q);
	while ((ack = atomic_load(&q->reset_ack)) != req)
		sim_futex_wait(&q->reset_ack, ack, UINT64_MAX);
	log_debug("sim: %s: engine reset", q->ch.name);
	return 0;
}

int sim_queue_stats(struct device_queue *q, struct sim_queue_stats *ret_stats)
{
	struct sim_queue_stats s;

	if (!q)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.submitted = atomic_load(&q->st.submitted);
	s.completed = atomic_load(&q->st.completed);
	s.bytes = atomic_load(&q->st.bytes);
	s.frames = atomic_load(&q->st.frames);
	s.overruns = atomic_load(&q->st.overruns);
	s.sink_good = atomic_load(&q->st.sink_good);
	s.sink_bad = atomic_load(&q->st.sink_bad);
	s.sink_last_error = atomic_load(&q->st.sink_last_error);
	s.sink_last_offset = atomic_load(&q->st.sink_last_offset);
	s.fault_timeout = atomic_load(&q->st.fault_timeout);
	s.fault_error = atomic_load(&q->st.fault_error);
	s.fault_corrupt = atomic_load(&q->st.fault_corrupt);
	s.fault_hang = atomic_load(&q->st.fault_hang);
	s.timeouts = atomic_load(&q->st.timeouts);
	s.canceled = atomic_load(&q->st.canceled);
	*ret_stats = s;
	return 0;
}

static int sim_sink_counts(struct device_queue *q, uint64_t *ret_good,
			   uint64_t *ret_bad)
{
	*ret_good = atomic_load(&q->st.sink_good);
	*ret_bad = atomic_load(&q->st.sink_bad);
	return 0;
}

const struct device_ops device_sim_ops = {
	.name = "sim",
	.open = sim_open,
	.close = sim_close,
	.info = sim_info,
	.queue_open = sim_queue_open,
	.queue_close = sim_queue_close,
	.pin = sim_pin,
	.unpin = sim_unpin,
	.submit = sim_submit,
	.wait = sim_wait,
	.kick = sim_kick,
	.reset = sim_reset,
	.sink_counts = sim_sink_counts,
};
