/* SPDX-License-Identifier: MIT */
/*
 * xfer_impl.h - what the transfer plane's files share (xfer.h says what
 * the service is).  Not for other files.
 *
 * The files, highest first (tests/arch/layers holds them to it):
 *
 *   xfer_thread.c start and stop, the engines, the transfer thread: take
 *                  and check entries, split transfers into parts, run them
 *                  (bounce copies too), complete them, the hang check; a
 *                  connection's end
 *   xfer_buffer.c  registered buffers: ids, import, pins, modes, release;
 *                  the handoff of a queue or a host buffer's memfd
 *   xfer_client.c  a connection's transfer state: its queue, the handoff
 *   xfer_bounce.c  bounce mode's staging and GPU copy engines
 *   xfer_wake.c    what wakes the transfer thread
 *   xfer_server.c  fpgad's end of one queue (xfer_server.h)
 *
 * Locking: x->lock protects everything here, the engines' device queues
 * included.  The transfer thread holds it while it works and drops it
 * when it sleeps; the loop thread holds it for each request (importing a
 * buffer's memory, which can take long, happens before it takes it).
 *
 * Life of a connection's state (struct xfer_client): made by its first
 * request; its queue's entries are taken while it is served; at the end
 * of the connection (gone) nothing more is taken, what was taken and not
 * started completes as canceled, and the state is freed once no transfer
 * of it runs (outstanding 0).  A buffer likewise: unregistered (dead), it
 * is unknown to new entries at once and let go of once no transfer uses
 * it (inflight 0).
 */
#ifndef FPGAD_XFER_IMPL_H
#define FPGAD_XFER_IMPL_H

#include <pthread.h>
#include <stdatomic.h>

#include "memory/copy.h"
#include "memory/memory.h"
#include "xfer/xfer.h"
#include "xfer/xfer_server.h"

#define XFER_MAX_ENGINES 8u	/* per direction */
#define XFER_MAX_GPUS 16u	/* bounce copy engines, one per GPU */
#define XFER_MAX_STAGING 64u	/* bits in staging_free */
#define XFER_COPY_DEPTH 64u
#define XFER_TAKE_BUDGET 32u	/* entries per connection per pass */
#define XFER_MAX_TIMEOUT_MS 600000u
#define XFER_GPU_ALIGN 4096u	/* GPU memory: GPUDirect pins pages */
#define XFER_REASON 128

struct xfer_engine {
	struct device_queue *q;
	enum direction dir;
	unsigned index;			/* the card's engine number */
	unsigned inflight;		/* parts submitted, or reserved for one */
	unsigned submitted;		/* parts the card has */
	unsigned max;			/* the device's max_inflight */
	int cfd;			/* completion descriptor, or -1 */
	uint64_t progress_ns;		/* last completion, or first submit */
	uint32_t longest_ms;		/* longest part timeout since progress */
	uint64_t staging_pin;		/* bounce staging, pinned here */
};

/* A client's GPU allocation, opened once however many buffers it holds. */
struct xfer_ipc {
	struct xfer_ipc *next;
	struct mem_region *mem;		/* the whole allocation */
	unsigned refs;
};

struct xfer_buffer {
	uint64_t id;
	struct xfer_client *c;
	enum memory_kind memory;
	struct mem_region *mem;		/* host: the client's memfd, mapped */
	struct xfer_ipc *ipc;		/* cuda: its allocation */
	unsigned char *addr;		/* host pointer, or device pointer */
	uint64_t offset;		/* cuda: into the allocation */
	uint64_t length;
	enum transfer_mode mode;
	char reason[XFER_REASON];
	bool direct;			/* pinned for gpudirect or host mode */
	uint64_t pins[2][XFER_MAX_ENGINES]; /* per engine; 0 = none */
	unsigned inflight;		/* transfers using it */
	bool ready;			/* a host buffer got its memfd */
	bool dead;			/* unregistered, or its connection gone */
	struct handoff_token token;	/* host memory: for its memfd */
};

/* One entry being served. */
struct xfer_req {
	struct xfer_req *next;		/* the client's ready list */
	struct xfer_client *c;
	struct xfer_buffer *b;
	struct fpgad_xfer_sqe sqe;	/* fpgad's own copy */
	enum direction dir;
	enum transfer_mode mode;
	uint64_t dispatched;		/* bytes handed to parts */
	unsigned parts;			/* parts running */
	bool on_ready;
	bool stopped;			/* no more parts: failed or canceled */
	int status;
	uint64_t fail_addr;		/* lowest card address that failed */
	uint64_t t_start_ns;
};

enum xfer_stage { XFER_DMA, XFER_COPY_IN, XFER_COPY_OUT };

/* A piece of a transfer one engine moves at once. */
struct xfer_part {
	struct xfer_req *r;
	struct xfer_engine *e;
	uint64_t off;			/* into the transfer */
	uint64_t len;
	enum xfer_stage stage;
	int slot;			/* bounce staging, or -1 */
	struct copy_engine *ce;		/* bounce */
};

struct xfer_client {
	struct xfer_client *next;
	struct xfer *x;
	const void *session;		/* identity; NULL once gone */
	pid_t pid;
	uid_t uid;
	struct xfer_server *srv;	/* its queue, once asked for */
	struct handoff_token token;	/* for its queue's handoff */
	int link_fd;			/* kept from the handoff, -1 before */
	int region;			/* its card region, -1: none */
	uint64_t card_base;		/* where its card address 0 is */
	bool gone;
	/* Buffers: id = generation << 32 | (index + 1). */
	struct xfer_buffer **bufs;
	uint32_t *gens;
	unsigned n_slots;
	unsigned n_buffers;		/* registered and not released */
	uint64_t registered;		/* their bytes */
	/* Transfers. */
	unsigned outstanding;		/* entries taken, not completed */
	struct xfer_req *ready;		/* taken, with parts to start */
	struct xfer_req **ready_tail;
	struct xfer_req *barrier;	/* waits for the ones before it */
	bool wake;			/* completions since the last wake */
};

struct xfer_counters {
	uint64_t transfers, bytes, resets;
	uint64_t errors[XFER_ERROR_KINDS];
	uint64_t refused[FPGAD_XFER_RULE_COUNT];
	struct histo latency[2];	/* per direction */
};

struct xfer {
	const struct device_ops *ops;
	struct device *dev;
	struct device_info info;
	struct config_transfer cfg;
	unsigned dma_timeout_ms;
	char gpu[32];			/* [device] gpu, for bounce */
	bool on;			/* engines open: transfers served */
	char why_off[96];
	struct xfer_server_rules rules;
	struct xfer_engine eng[2][XFER_MAX_ENGINES];
	unsigned n_eng[2];

	pthread_mutex_t lock;
	bool lock_init;
	pthread_t thread;
	bool thread_started;
	atomic_bool stop;
	int epfd;
	int wake_fd;			/* eventfd: the loop thread pokes */

	/* [transfer] card_regions: one region of card memory per queue. */
	uint64_t region_size;
	bool *region_used;

	struct xfer_client *clients;
	unsigned rr;			/* where dispatch starts, in turn */
	struct xfer_ipc *ipcs;

	/* Bounce: staging parts (pinned host, pinned in every engine). */
	void *staging;
	unsigned n_staging;
	uint64_t staging_free;		/* bit per part */
	struct copy_engine *ce[XFER_MAX_GPUS];
	unsigned n_ce;

	struct xfer_counters n;
};

/* xfer_thread.c (x->lock held) */
/* Complete @r now; frees it. */
void xfer_req_finish(struct xfer *x, struct xfer_req *r);
/* @c's connection is gone: take nothing more, cancel what waits. */
void xfer_client_end(struct xfer *x, struct xfer_client *c);

/* xfer_buffer.c (x->lock held) */
/* @c's buffer @id, if registered and usable; NULL otherwise. */
struct xfer_buffer *xfer_buffer_find(struct xfer_client *c, uint64_t id);
/* The buffer is dead: drop it from its table, free it if unused. */
void xfer_buffer_kill(struct xfer *x, struct xfer_buffer *b);
/* Free @b if it is dead and no transfer uses it. */
void xfer_buffer_maybe_free(struct xfer *x, struct xfer_buffer *b);

/* xfer_client.c (x->lock held) */
struct xfer_client *xfer_client_find(struct xfer *x, const void *session);
/* @who's state, made the first time; NULL without memory. */
struct xfer_client *xfer_client_get(struct xfer *x, const struct xfer_who *who);
/* Free @c if it is gone and nothing of it runs any more. */
void xfer_client_maybe_free(struct xfer *x, struct xfer_client *c);
/* xfer_claim for a queue's token: -ENOENT when no queue holds @token. */
int xfer_client_claim(struct xfer *x, const uint8_t *token,
		      const struct handoff_peer *peer, int *ret_fds,
		      unsigned *ret_n_fds, void **ret_target, char *err,
		      size_t errlen);

/* xfer_bounce.c (x->lock held) */
/* The copy engine of GPU @gpu, opened the first time. */
int xfer_copy_engine(struct xfer *x, int gpu, struct copy_engine **ret_ce);
/* Staging for bounce mode, made the first time. */
int xfer_staging(struct xfer *x, char *err, size_t errlen);
/* A free part of the staging (-1: none), given back; where it is. */
int xfer_staging_get(struct xfer *x);
void xfer_staging_put(struct xfer *x, int slot);
unsigned char *xfer_staging_at(struct xfer *x, int slot);
/* At stop: the copy engines closed, the staging freed. */
void xfer_bounce_free(struct xfer *x);

/* xfer_wake.c */
/* Wake the transfer thread (it looks at every queue again). */
void xfer_poke(struct xfer *x);
/*
 * Watch @fd for the thread: an eventfd it empties when it rang (@drain: a
 * doorbell, the wake), or a device's completion descriptor, which only
 * the device reads.  0 or -errno.
 */
enum { XFER_EV_POLL = 1, XFER_EV_DRAIN = 2 };
int xfer_epoll_add(struct xfer *x, int fd, bool drain);

#endif
