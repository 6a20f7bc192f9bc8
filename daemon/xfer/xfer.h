/* SPDX-License-Identifier: MIT */
/*
 * xfer.h - card memory transfers for clients: the card's memory engines
 * that serve them, the thread that serves every connection's transfer
 * queue (fpgad_xfer.h), and the buffers clients register.
 *
 * What a connection has here (its transfer queue, its buffers) belongs to
 * it: it ends with UnregisterBuffer, or when the connection closes or the
 * process dies (xfer_session_end), and fpgad lets go of a buffer only once
 * no transfer uses it any more.  Buffer ids are looked up among the
 * connection's own buffers only.
 *
 * Engines: [transfer] engines per direction, the lowest-numbered engines
 * that no channel uses; transfers longer than an engine takes are split
 * into parts that run on every engine of their direction at once.
 *
 * Threads: the functions below run on the loop thread; the transfer thread
 * (xfer_thread.c) takes entries, checks them, runs their parts and completes
 * them.  Functions return 0 or a negative errno, with @err saying why in
 * words; ret_* are written on success.
 */
#ifndef FPGAD_DAEMON_XFER_H
#define FPGAD_DAEMON_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config/config.h"
#include "control/handoff.h"
#include "device/device.h"
#include "fpgad_xfer.h"
#include "service/histogram.h"

struct xfer;

/* Who asks: a control connection (session) and its peer. */
struct xfer_who {
	const void *session;
	pid_t pid;
	uid_t uid;
};

/* Why a transfer that was not refused failed (xfer_stats.errors_by). */
enum xfer_error_kind {
	XFER_ERROR_IO,		/* the card said its DMA failed (-EIO) */
	XFER_ERROR_TIMEOUT,	/* the card's DMA timed out (-ETIMEDOUT) */
	XFER_ERROR_CANCELED,	/* an engine reset after a hang, the buffer
				   unregistered or the connection gone */
	XFER_ERROR_OTHER,	/* fpgad's side: no memory, no GPU copy
				   engine, a bounce copy that failed */
};
#define XFER_ERROR_KINDS (XFER_ERROR_OTHER + 1)

/* "io", "timeout", "canceled", "other". */
const char *xfer_error_kind_name(enum xfer_error_kind k);

struct xfer_stats {
	char engines[112];		/* "c2h 1, h2c 0", or "none (...)" */
	uint64_t card_memory;
	unsigned queues;		/* connections with a transfer queue */
	unsigned buffers;		/* registered, all connections */
	uint64_t registered;		/* their bytes */
	uint64_t transfers;		/* completed, any status */
	uint64_t bytes;			/* moved */
	uint64_t errors;		/* failed: the sum of errors_by */
	uint64_t refused;		/* broke a rule: the sum of refused_by */
	uint64_t resets;		/* engines reset after a hang */
	uint64_t errors_by[XFER_ERROR_KINDS];
	uint64_t refused_by[FPGAD_XFER_RULE_COUNT]; /* [FPGAD_XFER_RULE_NONE] 0 */
	/*
	 * Per direction (DIR_C2H: reads), each transfer fpgad started (not
	 * refused), any status: its completion's t_end_ns - t_start_ns.
	 */
	struct histo latency[2];
};

/*
 * Open the memory engines (cfg->transfer.engines of each direction) and
 * start the thread.  With engines = 0, or a backend without memory
 * engines, transfers are off and every request says so.
 */
int xfer_start(const struct config *cfg, const struct device_ops *ops,
	       struct device *dev, struct xfer **ret_x);
/* Stop the thread, end every queue, let go of every buffer; NULL is fine. */
void xfer_stop(struct xfer *x);

void xfer_get_stats(struct xfer *x, struct xfer_stats *ret_stats);
/* Buffers and bytes @session has registered. */
void xfer_session_stats(struct xfer *x, const void *session,
			unsigned *ret_buffers, uint64_t *ret_bytes);

/* OpenXferQueue: the token that fetches the queue on the handoff socket. */
struct xfer_queue_grant {
	uint8_t token[HANDOFF_TOKEN_SIZE];
	uint64_t size;			/* bytes of the memfd */
	uint32_t entries;		/* submission entries */
};

int xfer_open_queue(struct xfer *x, const struct xfer_who *who,
		    struct xfer_queue_grant *ret_grant, char *err,
		    size_t errlen);

/* RegisterBuffer. */
struct xfer_register_args {
	enum memory_kind memory;	/* MEMORY_HOST or MEMORY_CUDA */
	uint64_t length;
	const uint8_t *ipc_handle;	/* cuda: cudaIpcMemHandle_t */
	uint64_t ipc_offset;		/* cuda: where the buffer starts in it */
	const char *gpu_bus_id;		/* cuda */
	enum transfer_mode mode;
};

struct xfer_register_grant {
	uint64_t id;
	enum transfer_mode mode;
	char reason[128];
	bool host;			/* the memfd comes on the handoff socket */
	uint8_t token[HANDOFF_TOKEN_SIZE];
};

/*
 * Register a buffer for @who under @limits (max_buffers, max_registered):
 * -ENOSPC names the limit, -EINVAL a bad argument, -ENODEV no GPU.  A host
 * buffer is usable once its memfd came with the grant's token.
 */
int xfer_register(struct xfer *x, const struct xfer_who *who,
		  const struct config_transfer *limits,
		  const struct xfer_register_args *a,
		  struct xfer_register_grant *ret_grant, char *err,
		  size_t errlen);
/* UnregisterBuffer: -ENOENT when @session has no buffer @id. */
int xfer_unregister(struct xfer *x, const void *session, uint64_t id,
		    char *err, size_t errlen);
/* SetBufferMode: switch @id's transfer mode; the mode in use and why. */
int xfer_set_mode(struct xfer *x, const void *session, uint64_t id,
		  enum transfer_mode mode, enum transfer_mode *ret_mode,
		  char *reason, size_t reasonlen, char *err, size_t errlen);
/* The connection is gone: its queue ends, its buffers go. */
void xfer_session_end(struct xfer *x, const void *session);

/*
 * The handoff socket: does a queue or a pending host buffer hold @token?
 * 0 with the descriptors to send (the queue's memfd and doorbell) and a
 * target for xfer_link; -ENOENT when nothing here holds it; another
 * negative errno with @err.  A host buffer takes its memfd from
 * @peer->fds.
 */
int xfer_claim(struct xfer *x, const uint8_t *token,
	       const struct handoff_peer *peer, int *ret_fds,
	       unsigned *ret_n_fds, void **ret_target, char *err,
	       size_t errlen);
/*
 * The handoff succeeded over @fd: a queue keeps it as its link (closed
 * when the queue ends), a buffer has no use for it.  False when @target
 * is not xfer's.
 */
bool xfer_link(struct xfer *x, void *target, int fd);
/* The transfer plane as a holder of handoff tokens (xfer_claim, xfer_link). */
void xfer_claimer(struct xfer *x, struct handoff_claimer *ret);

#endif
