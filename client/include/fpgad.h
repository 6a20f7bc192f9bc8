/* SPDX-License-Identifier: MIT */
/*
 * fpgad.h - libfpgad, the client library of fpgad.
 *
 * fpgad owns an FPGA DMA card and streams frames into a ring of GPU (or
 * host) buffers; this library lets an unprivileged process talk to it:
 * query status, lease a channel, and take frames zero-copy.
 *
 * Conventions: every function returns 0 (or a count) on success and a
 * negative errno on failure; out parameters are written only on success.
 * When fpgad refused a request, the function returns the errno that fits
 * the refusal (-EBUSY, -ENOENT, -EACCES, ...) and fpgad_errmsg() gives
 * fpgad's own message.  The library never prints; set a log callback to
 * see what it would have said.  Handles are opaque; one fpgad_client may
 * be used by one thread at a time.
 */
#ifndef FPGAD_H
#define FPGAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FPGAD_VERSION_MAJOR 0
#define FPGAD_VERSION_MINOR 1
#define FPGAD_VERSION_PATCH 0
#define FPGAD_VERSION_STRING "0.1.0"
#define FPGAD_VERSION_NUMBER \
	((FPGAD_VERSION_MAJOR << 16) | (FPGAD_VERSION_MINOR << 8) | FPGAD_VERSION_PATCH)

/* Control protocol version spoken, and the oldest accepted. */
#define FPGAD_PROTOCOL_VERSION 1
#define FPGAD_PROTOCOL_MIN_VERSION 1

/* Where fpgad listens when neither an URL nor $FPGAD_URL is given. */
#define FPGAD_DEFAULT_URL "ipc:///run/fpgad/fpgad.sock"

typedef struct fpgad_client fpgad_client;

/* Library version as "0.1.0". */
const char *fpgad_version(void);

/* The URL fpgad_connect() uses for NULL: $FPGAD_URL, else the default. */
const char *fpgad_default_url(void);

/*
 * Connect and exchange Hello.  @url NULL means fpgad_default_url().
 * Fails with -ECONNREFUSED when nothing listens, -EPROTO when the protocol
 * versions do not overlap or TLS is spoken on one side only, -EACCES when
 * the socket may not be opened or fpgad's TLS certificate is refused;
 * fpgad_errmsg(NULL) says why.  tls+tcp:// URLs verify fpgad's certificate
 * against the CA file $FPGAD_TLS_CA, for the URL's host or for the name in
 * $FPGAD_TLS_SERVER_NAME.
 */
int fpgad_connect(const char *url, fpgad_client **ret_client);
/* Close the connection; every lease it holds ends.  Accepts NULL. */
void fpgad_disconnect(fpgad_client *c);

/* Reply timeout for each request, default 5000 ms. */
void fpgad_set_timeout(fpgad_client *c, int timeout_ms);

enum fpgad_log_level { FPGAD_LOG_ERR = 3, FPGAD_LOG_WARN = 4, FPGAD_LOG_INFO = 6,
		       FPGAD_LOG_DEBUG = 7 };
typedef void (*fpgad_log_fn)(void *user, int level, const char *msg);
void fpgad_set_log(fpgad_client *c, fpgad_log_fn fn, void *user);

/*
 * fpgad's message for the last failed call on @c ("" if none).  With NULL:
 * why the calling thread's last fpgad_connect() could not reach fpgad
 * (refused or unverifiable TLS, a plain listener where TLS was asked for
 * or the reverse), or "".
 */
const char *fpgad_errmsg(const fpgad_client *c);

/* The software string fpgad gave in Hello, e.g. "fpgad 0.1.0". */
const char *fpgad_server_software(const fpgad_client *c);

struct fpgad_channel_summary {
	char name[32];
	char direction[8];	/* "c2h", "h2c" */
	char state[16];		/* "idle", "streaming", "recovering", "failed" */
	char memory[8];		/* "host", "cuda" */
	char mode[16];		/* "host", "gpudirect", "bounce" */
	uint32_t slots;
	uint64_t slot_size;
	uint64_t frame_size;
	uint64_t frames;
	uint64_t drops;
	uint32_t lessees;
};

struct fpgad_status {
	char version[32];
	uint64_t uptime_ms;
	char backend[64];
	char mode[16];
	char mode_reason[128];
	uint32_t clients;
	uint32_t pid;
	uint32_t n_channels;
	struct fpgad_channel_summary *channels;
};

int fpgad_status_get(fpgad_client *c, struct fpgad_status **ret_status);
void fpgad_status_free(struct fpgad_status *s);

struct fpgad_client_info {
	uint32_t pid;
	uint32_t uid;
	uint32_t gid;
	uint64_t connected_ms;	/* CLOCK_REALTIME, ms since the epoch */
	bool remote;
	uint32_t n_leases;
	char leases[16][32];	/* channel names */
};

struct fpgad_client_list {
	uint32_t n_clients;
	struct fpgad_client_info *clients;
};

int fpgad_clients_get(fpgad_client *c, struct fpgad_client_list **ret_list);
void fpgad_clients_free(struct fpgad_client_list *l);

/* --- channels and frames --------------------------------------------------- */

typedef struct fpgad_channel fpgad_channel;

/* fpgad_channel_open() flags. */
#define FPGAD_OPEN_SHARED 0x1u	/* shared-read lease: every reader sees every frame */

enum fpgad_memory { FPGAD_MEMORY_HOST = 1, FPGAD_MEMORY_CUDA = 2 };

struct fpgad_channel_info {
	char name[32];
	char direction[8];	/* "c2h" or "h2c" */
	char mode[16];		/* "host", "gpudirect", "bounce" */
	enum fpgad_memory memory;
	int gpu;		/* CUDA device ordinal in fpgad (cuda memory), else -1 */
	char gpu_bus_id[32];	/* its PCI bus id, "" when unknown; this process's
				   ordinal for it: cudaDeviceGetByPCIBusId() */
	uint32_t slots;
	uint64_t slot_size;	/* stride between slots, a multiple of 4096 */
	uint64_t frame_size;
};

/*
 * Lease channel @name on @c and map its ring: host memory directly, GPU
 * memory through one cudaIpcOpenMemHandle (the first one in a process
 * creates the CUDA context, about 0.1 s).  -EBUSY when another process
 * holds it (fpgad_errmsg() says who), -ENOENT for an unknown channel,
 * -ENODEV for GPU memory in a process without CUDA.
 */
int fpgad_channel_open(fpgad_client *c, const char *name, unsigned flags,
		       fpgad_channel **ret_ch);
/* End the lease and unmap; accepts NULL.  Frames still held are released. */
int fpgad_channel_close(fpgad_channel *ch);

void fpgad_channel_get_info(const fpgad_channel *ch,
			    struct fpgad_channel_info *ret_info);
/* Base address of @slot: a host pointer, or a CUDA device pointer. */
void *fpgad_slot_data(const fpgad_channel *ch, uint32_t slot);

/* fpgad_frame flags (as in fpgad_frames.h). */
#define FPGAD_FRAME_F_ERROR 0x1u
#define FPGAD_FRAME_F_TRUNCATED 0x2u
#define FPGAD_FRAME_F_DROPPED_BEFORE 0x4u

struct fpgad_frame {
	uint64_t seq;		/* the card's frame number; gaps = lost frames */
	uint32_t slot;
	uint32_t flags;		/* FPGAD_FRAME_F_* */
	uint64_t length;	/* valid bytes at data */
	uint64_t t_dma_start_ns; /* CLOCK_MONOTONIC */
	uint64_t t_dma_end_ns;
	uint64_t t_publish_ns;
	void *data;		/* fpgad_slot_data(slot) */
	uint64_t skipped;	/* older frames released unread (newest mode) */
	uint64_t pos_;		/* the library's */
};

/*
 * Skip to the newest ready frame in fpgad_frame_wait(), releasing older
 * ones unread (live-vision consumers); off by default (every frame, in
 * order).
 */
void fpgad_channel_set_newest(fpgad_channel *ch, bool newest);

/*
 * Busy-poll: fpgad_frame_wait() checks for a frame for up to @us
 * microseconds before it sleeps (0, the default: sleep at once).  Saves
 * the wake-up from the frame's latency when frames come sooner than that,
 * at the price of this thread spinning.
 */
void fpgad_channel_set_poll(fpgad_channel *ch, unsigned us);

/*
 * Take the next frame, waiting up to @timeout_ms (-1 = forever, 0 = do
 * not wait): 0, -ETIMEDOUT, -EPIPE (lease ended or fpgad stopped),
 * -ESTALE (the ring was re-created: fpgad restarted).  The slot stays
 * yours, and is never written, until fpgad_frame_release().
 */
int fpgad_frame_wait(fpgad_channel *ch, struct fpgad_frame *ret_frame,
		     int timeout_ms);
int fpgad_frame_release(fpgad_channel *ch, const struct fpgad_frame *f);

/*
 * h2c channels: fpgad_frame_wait() hands out an empty buffer (length 0,
 * fpgad_channel_info.slot_size bytes at data, in host or GPU memory);
 * write into it, then hand it to the card with @length bytes (1 to
 * slot_size).  fpgad_frame_release() gives a buffer back unused.
 */
int fpgad_frame_submit(fpgad_channel *ch, const struct fpgad_frame *f,
		       uint64_t length);
/* Copy @len host bytes into a buffer of @ch (host or GPU memory). */
int fpgad_frame_write(fpgad_channel *ch, const struct fpgad_frame *f,
		      const void *src, uint64_t len);

/*
 * Make a held frame readable on the host and return where: the slot
 * itself in host memory (no copy), else a copy in a pinned buffer of the
 * library's, made only when this frame is not already there.
 */
int fpgad_frame_host(fpgad_channel *ch, const struct fpgad_frame *f,
		     const void **ret_ptr);
/* Copies fpgad_frame_host() has made on @ch. */
uint64_t fpgad_channel_host_copies(const fpgad_channel *ch);
/* Events fpgad raised (FPGAD_EVENT_* of fpgad_frames.h), marked read. */
uint32_t fpgad_channel_events(fpgad_channel *ch);

struct fpgad_channel_stats {
	char state[16];
	char mode[16];
	uint64_t frames;
	uint64_t bytes;
	uint64_t drops;
	uint64_t stalls;
	uint64_t errors;
	uint64_t recoveries;
	uint64_t copies;
	uint64_t dma_ns_total;
	uint64_t card_good;	/* h2c on the sim backend: frames its sink verified */
	uint64_t card_bad;	/* ... and rejected */
	double queued_avg;	/* transfers queued on the card, on average,
				   when one completed */
};

int fpgad_channel_stats(fpgad_client *c, const char *name,
			struct fpgad_channel_stats *ret_stats);

/*
 * Clear a channel that FAILED after repeated DMA errors, so that it streams
 * again; -EINVAL when it has not failed (fpgad_errmsg() says its state).
 */
int fpgad_channel_reset(fpgad_client *c, const char *name);

/*
 * Send @len raw bytes as one request and return the reply's status code
 * and message: for tools and tests that probe fpgad with hand-made bytes.
 */
int fpgad_raw_request(fpgad_client *c, const void *buf, size_t len,
		      int *ret_code, char *msg, size_t msglen);

#ifdef __cplusplus
}
#endif

#endif
