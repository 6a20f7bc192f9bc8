/* SPDX-License-Identifier: MIT */
/*
 * sim.h - the simulated card's parts and what they share; the sim is the
 * device backend device_sim_ops (device.h).  Not for files outside
 * daemon/device/sim/, except sim_queue_stats() for tests.
 *
 *   device_sim.c  the backend's ops: open, queues, pins, submit, wait
 *   sim_card.c    card memory: the address space memory queues address
 *   sim_link.c    the PCIe link model
 *   sim_frames.c  C2H frame sources and the H2C sink, and the private
 *                 memory they work in
 *   sim_faults.c  fault injection and its test knob SIM_FAULTS_ENV
 *   sim_engine.c  the engine thread that executes transfers
 *   sim_gpu.c     transfers into and out of GPU memory (CUDA copies)
 *
 * The model, per device:
 *   card memory  cfg->sim.card_memory bytes of address space, user data
 *                only: reserved with MAP_NORESERVE, backed page by page as
 *                it is written (a page never written reads as zeros), so a
 *                write at an address is what a later read there returns.
 *                For copies into and out of GPU memory it is page-locked
 *                in SIM_CARD_CHUNK pieces, each the first time a transfer
 *                touches it.
 *   link         one PCIe link, full duplex: C2H transfers of all queues
 *                share one direction's bandwidth, H2C the other's.  With
 *                gen 0 it is unlimited; otherwise a transfer of L bytes
 *                occupies it for L / (lane rate * width) and completes no
 *                earlier than that.
 * and per queue (one card DMA engine, one direction), either a stream queue
 * (queue_open: a channel's source or sink, working in memory of its own
 * that no card address reaches: pattern, frame headers, receive buffers)
 * or a memory queue (mem_queue_open: transfers between a pin and card
 * memory at dev_xfer.card_addr, SIM_XFER_ALIGN aligned, at most
 * SIM_XFER_MAX_LEN each):
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
 *   faults       one fault every N transfers the engine starts, per kind
 *                (set by the environment, SIM_FAULTS_ENV, for tests):
 *                hang (no completion until reset), timeout (-ETIMEDOUT
 *                after the transfer's timeout), error (-EIO at once),
 *                corrupt (completes, one payload byte flipped).  A C2H
 *                frame a failed transfer took is lost.
 *
 * A C2H transfer of a stream queue that gets no frame within its timeout
 * completes with -ETIMEDOUT and takes no frame; stream queues ignore
 * card_addr.  Faults hit memory queues the same way (corrupt flips one
 * byte of what arrives).
 *
 * Threads: the queue's user (pin, submit, wait, reset, close), the engine,
 * and anyone calling kick or sim_queue_stats.  Submissions and completions
 * travel through single-producer single-consumer rings; a side about to
 * sleep announces it, and the other side makes the futex system call only
 * then.  The user thread counts transfers submitted and completions taken,
 * so neither ring can overflow.
 */
#ifndef FPGAD_SIM_H
#define FPGAD_SIM_H

#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "device/device.h"
#include "fpgad_simframe.h"
#include "spin.h"

#define SIM_ENGINES 16u			/* per direction */
#define SIM_MAX_INFLIGHT 16u		/* ring size: a power of two */
#define SIM_MAX_PINS 64u
#define SIM_XFER_MAX_PINS 4096u	/* memory queues: every client's buffers */
#define SIM_ALIGN 4096u
#define SIM_PAGE 4096u
#define SIM_DEFAULT_CARD_MEMORY (2ull << 30)
#define SIM_DEFAULT_MAX_LEN (4ull << 20)
#define SIM_DEFAULT_TIMEOUT_MS 1000u
#define SIM_DEFAULT_DEPTH 4u
#define SIM_SOURCE_FIFO 4u
#define SIM_HDR_STRIDE 128u		/* header + flipped byte, per copy */
#define SIM_SMALL_FRAME 16384u		/* C2H frames this small: made whole in
					   staging, one GPU copy each */
#define SIM_SPIN_NS 20000u		/* shorter waits spin */
#define SIM_XFER_ALIGN 64u		/* memory queues: a 512-bit data path */
#define SIM_XFER_MAX_LEN (4ull << 20)	/* memory queues: one transfer */
#define SIM_XFER_DEPTH 8u		/* memory queues: GPU copies in flight */
#define SIM_CHAIN_MAX 16u		/* memory transfers per GPU completion */
#define SIM_CARD_CHUNK (64ull << 20)	/* page-locked for CUDA at a time */
#define SIM_CARD_MAX (1ull << 40)

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

/*
 * Fault injection, a test knob: one fault of each kind in every N
 * transfers of a queue, 0 = never, and the seed that picks the byte a
 * corrupt fault flips.  Read from the environment at open
 * (SIM_FAULTS_ENV="timeout=N,error=N,corrupt=N,hang=N,seed=N", any of
 * them), never from fpgad.conf: no operator decides to break the card.
 */
#define SIM_FAULTS_ENV "FPGAD_SIM_FAULTS"
#define SIM_FAULTS_SEED 1u

struct sim_faults {
	unsigned timeout;
	unsigned error;
	unsigned corrupt;
	unsigned hang;
	unsigned seed;
};

/* sim_faults.c.  Parse @s (NULL or "" = none) into @ret; on error a
 * sentence in @err. */
int sim_faults_parse(const char *s, struct sim_faults *ret, char *err,
		     size_t errlen);
/* The same for SIM_FAULTS_ENV; the sentence names the variable. */
int sim_faults_from_env(struct sim_faults *ret, char *err, size_t errlen);
/* The fault the transfer the engine starts now gets. */
enum sim_fault sim_fault_next(struct device_queue *q);

struct device {
	struct config_sim sim;
	struct sim_faults faults;
	unsigned timeout_ms;
	uint64_t card_size;
	unsigned char *card;
	/* Per direction: when the link is free again, CLOCK_MONOTONIC ns. */
	_Atomic uint64_t link_free[2];

	pthread_mutex_t lock;		/* queues, card_locked */
	bool lock_init;
	uint8_t *card_locked;		/* per SIM_CARD_CHUNK: page-locked */
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
	uint64_t card_addr;		/* memory queue */
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

	/* Completion descriptor (completion_fd), for a waiter on many queues. */
	_Atomic int cfd;		/* eventfd, -1 until asked for */
	_Atomic uint32_t cfd_armed;	/* the user polls it: write on completion */
	_Atomic uint32_t cfd_fired;	/* written since the user last looked */

	struct device *dev;
	struct config_channel ch;
	enum direction dir;
	unsigned engine;
	bool mem;			/* a memory queue (mem_queue_open) */
	uint64_t poll_ns;		/* memory queue: spin for work first */
	struct spin spin;		/* memory queue without poll_ns: the
					   adaptive spin for work (spin.h) */
	unsigned depth;			/* copies in flight on a GPU */
	uint64_t max_len;		/* longest H2C, unframed or memory transfer */
	uint64_t frame_size;		/* C2H: 0 = the transfer's length */

	/*
	 * The queue's private memory (no card address reaches it): a stream
	 * queue's pattern, frame headers and receive buffers; a memory
	 * queue's bytes flipped by corrupt faults.
	 */
	uint64_t win_len;
	unsigned char *win;
	const unsigned char *pattern;
	uint64_t pattern_size;
	uint64_t hdr_stride;		/* C2H: SIM_HDR_STRIDE, or room for a
					   whole small frame */
	unsigned char *hdrs;		/* C2H: depth * hdr_stride; memory:
					   depth scratch bytes */
	unsigned char *rx;		/* H2C: depth * rx_stride */
	uint64_t rx_stride;
	uint32_t *crc_tab;		/* C2H: CRC per payload start offset */
	uint64_t crc_len;		/* ... of payloads this long */

	/* The user thread's. */
	struct sim_pin *pins;
	unsigned n_pins;
	uint64_t submitted;
	uint64_t reaped;
	bool registered;		/* private memory registered with CUDA */
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
	unsigned chained;		/* launched since the last submission:
					   they complete with the next one */

	struct sim_counters st;
};

/*
 * What the card model did on one queue, for tests and status.  @q must
 * come from device_sim_ops; any thread may call it.
 */
struct sim_queue_stats {
	uint64_t submitted;	/* transfers accepted by submit */
	uint64_t completed;	/* completions posted, any status */
	uint64_t bytes;		/* moved by transfers that succeeded */
	uint64_t frames;	/* C2H: frames sent; H2C: frames checked */
	uint64_t overruns;	/* C2H: frames the source lost, no transfer */
	uint64_t sink_good;	/* H2C: frames that verified */
	uint64_t sink_bad;	/* H2C: frames that did not */
	int32_t sink_last_error; /* H2C: last fpgad_simframe_check() failure */
	uint32_t reserved;
	uint64_t sink_last_offset; /* H2C: its first bad byte */
	uint64_t fault_timeout;	/* injected faults, per kind */
	uint64_t fault_error;
	uint64_t fault_corrupt;
	uint64_t fault_hang;
	uint64_t timeouts;	/* -ETIMEDOUT completions (faults included) */
	uint64_t canceled;	/* -ECANCELED completions (reset) */
};

int sim_queue_stats(struct device_queue *q, struct sim_queue_stats *ret_stats);

static inline uint64_t sim_round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

static inline void sim_count(_Atomic uint64_t *c, uint64_t n)
{
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
}

/* sim_card.c: card memory. */
int sim_card_reserve(struct device *d);
void sim_card_release(struct device *d);
/* Is [addr, addr + len) card memory? */
bool sim_card_contains(const struct device *d, uint64_t addr, uint64_t len);
/* Page-lock the chunks [addr, addr + len) touches for CUDA copies. */
int sim_card_lock(struct device *d, uint64_t addr, uint64_t len);
/* Bytes from @addr to the end of its chunk. */
uint64_t sim_card_chunk_left(uint64_t addr);
/* Zero [addr, addr + len) of card memory (device_ops.scrub). */
int sim_card_scrub(struct device *d, uint64_t addr, uint64_t len);

/* sim_link.c */
/* Whether the sim models a link of @l (gen 0 = unlimited). */
bool sim_link_valid(const struct link_model *l);
/* Bytes per second each way. */
uint64_t sim_link_rate(const struct link_model *l);
/*
 * Reserve the link in @dir for @bytes from @now on: writes when the
 * transfer starts and returns when it may complete.
 */
uint64_t sim_link_reserve(struct device *d, enum direction dir, uint64_t now,
			  uint64_t bytes, uint64_t *ret_start);

/* sim_frames.c */
/* Lay out and allocate the queue's private memory. */
int sim_frames_memory(struct device_queue *q);
void sim_frames_memory_free(struct device_queue *q);
uint64_t sim_flip_offset(struct device_queue *q, uint64_t n);
void sim_source_peek(struct device_queue *q, uint64_t now, uint64_t *ret_seq,
		     uint64_t *ret_avail);
uint64_t sim_sink_check(struct device_queue *q, const void *buf, uint64_t len);
/* The CRC of each payload a frame of the queue's size can carry. */
int sim_crc_prepare(struct device_queue *q);
/* The header of frame @seq, its payload's CRC-32C included. */
void sim_frame_header(struct device_queue *q, struct fpgad_simframe_hdr *h,
		      uint64_t seq, uint64_t frame_len);

/* sim_engine.c */
void *sim_engine_main(void *arg);
bool sim_sq_empty(struct device_queue *q);
void sim_engine_poke(struct device_queue *q);
int sim_engine_sleep_until(struct device_queue *q, uint64_t t);
void sim_complete(struct device_queue *q, const struct sim_cqe *c);

/* sim_gpu.c: CUDA copies; without CUDA, sim_gpu_attach refuses. */
int sim_gpu_attach(struct device_queue *q, int gpu);
void sim_gpu_detach(struct device_queue *q);
int sim_gpu_reap(struct device_queue *q, bool block);
void sim_gpu_drain(struct device_queue *q);
void sim_gpu_launch(struct device_queue *q, const struct sim_sqe *e,
		    struct sim_cqe *cqe, uint64_t deadline, uint64_t n,
		    uint64_t frame_len, bool corrupt);
/* A memory queue's transfer between card memory and GPU memory. */
void sim_gpu_launch_mem(struct device_queue *q, const struct sim_sqe *e,
			struct sim_cqe *cqe, uint64_t deadline, bool corrupt);
/* Finish what the copy engine has, each reported -ECANCELED (reset). */
void sim_gpu_cancel(struct device_queue *q);
/* End an open chain of memory transfers with a completion of its own. */
void sim_gpu_close_chain(struct device_queue *q);

#endif
