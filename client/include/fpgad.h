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

/* Marks the library's API; everything else in libfpgad.so is hidden. */
#if defined(FPGAD_BUILDING_LIBRARY) && defined(__GNUC__)
#define FPGAD_EXPORT __attribute__((visibility("default")))
#else
#define FPGAD_EXPORT
#endif

#define FPGAD_VERSION_MAJOR 0
#define FPGAD_VERSION_MINOR 1
#define FPGAD_VERSION_PATCH 0
#define FPGAD_VERSION_STRING "0.1.0"
#define FPGAD_VERSION_NUMBER \
	((FPGAD_VERSION_MAJOR << 16) | (FPGAD_VERSION_MINOR << 8) | FPGAD_VERSION_PATCH)

/* Control protocol version spoken, and the oldest accepted. */
#define FPGAD_PROTOCOL_VERSION 2
#define FPGAD_PROTOCOL_MIN_VERSION 2

/* Where fpgad listens when neither an URL nor $FPGAD_URL is given. */
#define FPGAD_DEFAULT_URL "ipc:///run/fpgad/fpgad.sock"

typedef struct fpgad_client fpgad_client;

/* Library version as "0.1.0". */
FPGAD_EXPORT const char *fpgad_version(void);

/* The URL fpgad_connect() uses for NULL: $FPGAD_URL, else the default. */
FPGAD_EXPORT const char *fpgad_default_url(void);

/*
 * Connect and exchange Hello.  @url NULL means fpgad_default_url().
 * Fails with -ECONNREFUSED when nothing listens, -EUSERS when fpgad closed
 * the connection without answering (its listener is at its connection
 * limit), -EPROTO when the protocol versions do not overlap.
 */
FPGAD_EXPORT int fpgad_connect(const char *url, fpgad_client **ret_client);
/* Close the connection; every lease it holds ends.  Accepts NULL. */
FPGAD_EXPORT void fpgad_disconnect(fpgad_client *c);

/* Reply timeout for each request, default 5000 ms. */
FPGAD_EXPORT void fpgad_set_timeout(fpgad_client *c, int timeout_ms);

/*
 * Ride through a restart of fpgad (off by default).  When fpgad stops or
 * dies, fpgad_frame_wait() on a channel of @c reconnects and leases the
 * same channel again (as long as its timeout allows; with -1, until fpgad
 * is back), then returns -ESTALE once: every frame held until then is
 * gone, and so is every pointer into the old ring (fpgad_slot_data() of
 * the new ring may differ).  The next wait takes frames of the new ring.
 * Without it, fpgad_frame_wait() returns -EPIPE within 100 ms of fpgad's
 * death and the channel stays dead.
 */
FPGAD_EXPORT void fpgad_set_reconnect(fpgad_client *c, bool reconnect);

enum fpgad_log_level { FPGAD_LOG_ERR = 3, FPGAD_LOG_WARN = 4, FPGAD_LOG_INFO = 6,
		       FPGAD_LOG_DEBUG = 7 };
typedef void (*fpgad_log_fn)(void *user, int level, const char *msg);
FPGAD_EXPORT void fpgad_set_log(fpgad_client *c, fpgad_log_fn fn, void *user);

/* fpgad's message for the last failed call on @c ("" if none). */
FPGAD_EXPORT const char *fpgad_errmsg(const fpgad_client *c);

/* The software string fpgad gave in Hello, e.g. "fpgad 0.1.0". */
FPGAD_EXPORT const char *fpgad_server_software(const fpgad_client *c);

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
	char gpu_sharing[16];	/* "mps", "time-slicing", "unknown", "" (no GPU) */
	char gpu_sharing_note[192]; /* why it matters, when it does */
	uint32_t n_channels;
	struct fpgad_channel_summary *channels;
};

FPGAD_EXPORT int fpgad_status_get(fpgad_client *c, struct fpgad_status **ret_status);
FPGAD_EXPORT void fpgad_status_free(struct fpgad_status *s);

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

FPGAD_EXPORT int fpgad_clients_get(fpgad_client *c, struct fpgad_client_list **ret_list);
FPGAD_EXPORT void fpgad_clients_free(struct fpgad_client_list *l);

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
FPGAD_EXPORT int fpgad_channel_open(fpgad_client *c, const char *name, unsigned flags,
				    fpgad_channel **ret_ch);
/* End the lease and unmap; accepts NULL.  Frames still held are released. */
FPGAD_EXPORT int fpgad_channel_close(fpgad_channel *ch);

FPGAD_EXPORT void fpgad_channel_get_info(const fpgad_channel *ch,
					 struct fpgad_channel_info *ret_info);
/* Base address of @slot: a host pointer, or a CUDA device pointer. */
FPGAD_EXPORT void *fpgad_slot_data(const fpgad_channel *ch, uint32_t slot);

/* fpgad_frame flags (as in fpgad_frames.h). */
#define FPGAD_FRAME_F_ERROR 0x1u
#define FPGAD_FRAME_F_TRUNCATED 0x2u
#define FPGAD_FRAME_F_DROPPED_BEFORE 0x4u	/* frames were lost just before
						   this one: see lost */

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
	uint64_t lost;		/* frames missing just before this one, as this
				   process saw the sequence (seq - previous
				   seq - 1, skipped ones included); nonzero
				   exactly when flags has DROPPED_BEFORE */
};

/*
 * Skip to the newest ready frame in fpgad_frame_wait(), releasing older
 * ones unread (live-vision consumers); off by default (every frame, in
 * order).
 */
FPGAD_EXPORT void fpgad_channel_set_newest(fpgad_channel *ch, bool newest);

/*
 * Busy-poll: fpgad_frame_wait() checks for a frame for up to @us
 * microseconds before it sleeps (0, the default: sleep at once).  Saves
 * the wake-up from the frame's latency when frames come sooner than that,
 * at the price of this thread spinning.
 */
FPGAD_EXPORT void fpgad_channel_set_poll(fpgad_channel *ch, unsigned us);

/*
 * Take the next frame, waiting up to @timeout_ms (-1 = forever, 0 = do
 * not wait): 0, -ETIMEDOUT, -EPIPE (the lease ended, or fpgad stopped or
 * died: noticed within 100 ms whatever the timeout), -ESTALE (with
 * fpgad_set_reconnect(): fpgad came back and the channel was leased
 * again).  The slot stays yours, and is never written, until
 * fpgad_frame_release().
 */
FPGAD_EXPORT int fpgad_frame_wait(fpgad_channel *ch, struct fpgad_frame *ret_frame,
				  int timeout_ms);
FPGAD_EXPORT int fpgad_frame_release(fpgad_channel *ch, const struct fpgad_frame *f);

/*
 * Stream-ordered release: queue the frame's release on CUDA stream
 * @cuda_stream (a cudaStream_t; NULL is the legacy default stream), behind
 * the GPU work already queued there that reads the frame.  Returns at once;
 * the slot goes back to fpgad when the GPU reaches that point, and no CPU
 * thread waits for it.  The frame is no longer the process's to release.
 * -ENODEV in a process or build without CUDA, -EOPNOTSUPP when the driver
 * cannot write memory from a stream.
 */
FPGAD_EXPORT int fpgad_frame_release_async(fpgad_channel *ch,
					   const struct fpgad_frame *f,
					   void *cuda_stream);

/*
 * h2c channels: fpgad_frame_wait() hands out an empty buffer (length 0,
 * fpgad_channel_info.slot_size bytes at data, in host or GPU memory);
 * write into it, then hand it to the card with @length bytes (1 to
 * slot_size).  fpgad_frame_release() gives a buffer back unused.
 */
FPGAD_EXPORT int fpgad_frame_submit(fpgad_channel *ch, const struct fpgad_frame *f,
				    uint64_t length);
/*
 * The same, stream-ordered: the buffer goes to the card when the GPU work
 * queued on @cuda_stream before it (the kernel that fills it) is done.
 * A buffer filled by your own GPU work and handed over with
 * fpgad_frame_submit() must be complete first: synchronize the stream
 * (cudaStreamSynchronize) before calling it, or use this call.
 */
FPGAD_EXPORT int fpgad_frame_submit_async(fpgad_channel *ch,
					  const struct fpgad_frame *f,
					  uint64_t length, void *cuda_stream);
/*
 * Copy @len host bytes into a buffer of @ch (host or GPU memory); when it
 * returns they are there, and the card may read them.
 */
FPGAD_EXPORT int fpgad_frame_write(fpgad_channel *ch, const struct fpgad_frame *f,
				   const void *src, uint64_t len);

/*
 * Make a held frame readable on the host and return where: the slot
 * itself in host memory (no copy), else a copy in a pinned buffer of the
 * library's, made only when this frame is not already there.
 */
FPGAD_EXPORT int fpgad_frame_host(fpgad_channel *ch, const struct fpgad_frame *f,
				  const void **ret_ptr);
/*
 * Check a held frame against the CRC-32C the card put in its header (the
 * sim card's frame format, fpgad_simframe.h): 0 when the payload matches,
 * -EBADMSG when it does not (corrupted on the way), -ENODATA when there
 * is nothing to check (no CRC, or a frame cut short), -EINVAL when @f is
 * not held.  A frame in GPU memory is read through fpgad_frame_host(), so
 * it costs a copy; fpgad checks host-memory and bounce frames itself with
 * integrity = crc32c and flags bad ones FPGAD_FRAME_F_ERROR.
 */
FPGAD_EXPORT int fpgad_frame_verify(fpgad_channel *ch, const struct fpgad_frame *f);
/* Copies fpgad_frame_host() has made on @ch. */
FPGAD_EXPORT uint64_t fpgad_channel_host_copies(const fpgad_channel *ch);
/* Events fpgad raised (FPGAD_EVENT_* of fpgad_frames.h), marked read. */
FPGAD_EXPORT uint32_t fpgad_channel_events(fpgad_channel *ch);

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
	uint64_t integrity_errors; /* frames whose CRC fpgad found wrong
				      (integrity = crc32c), flagged ERROR */
	double queued_avg;	/* transfers queued on the card, on average,
				   when one completed */
	uint64_t latency_ns_total; /* c2h: DMA end to publication, summed
				      over latency_frames frames */
	uint64_t latency_frames;
};

FPGAD_EXPORT int fpgad_channel_stats(fpgad_client *c, const char *name,
				     struct fpgad_channel_stats *ret_stats);

/*
 * Clear a channel that FAILED after repeated DMA errors, so that it streams
 * again; -EINVAL when it has not failed (fpgad_errmsg() says its state).
 */
FPGAD_EXPORT int fpgad_channel_reset(fpgad_client *c, const char *name);

/* --- peer-to-peer topology ------------------------------------------------- */

/* One end of a card-GPU pair as fpgad reads it from sysfs. */
struct fpgad_topo_end {
	char address[16];	/* PCI address, "" for the simulated card */
	bool found;		/* on the host's PCI bus */
	int32_t numa_node;	/* -1: none or unknown */
	char host_bridge[16];	/* "pci0000:00", "" unknown */
	char root_port[16];	/* the first bridge below it, "" none */
	int32_t iommu_group;	/* -1: none */
	char iommu[16];		/* none, passthrough, translated, blocked,
				   unmanaged, unknown */
};

/* The card and one GPU: the path classed as nvidia-smi topo -m does. */
struct fpgad_topo_gpu {
	struct fpgad_topo_end gpu;
	char path_class[8];	/* PIX, PXB, PHB, NODE, SYS, SIM, unknown */
	char verdict[16];	/* direct, host-bridge, iommu, acs-redirect, vm,
				   unsupported, simulated, no-gpu, unknown */
	char reason[256];	/* one line: the path and the verdict's cause */
	char common_bridge[16];	/* the lowest bridge above both, "" none */
	char acs_bridge[16];	/* the first bridge redirecting, "" none */
	bool kernel;		/* the kernel module answered */
	int32_t distance;	/* its pci_p2pdma_distance(), with kernel */
	char warning[192];	/* the first file that could not be read */
};

struct fpgad_topo_channel {
	char name[32];
	char gpu[16];		/* PCI address of its GPU, "" in host memory */
	char mode[16];		/* in use */
	char mode_reason[192];
	double gpudirect_bps;	/* measured at start; 0 = not measured */
	double bounce_bps;
};

struct fpgad_topology {
	char card[64];		/* the device's name */
	struct fpgad_topo_end card_end;
	bool simulated;		/* the simulated card: no PCI path */
	bool vm;		/* the host is a virtual machine */
	char vm_reason[96];
	char sysfs[256];	/* where fpgad read the tree, "" for /sys */
	char warning[192];	/* a host file that could not be read */
	uint32_t n_gpus;
	struct fpgad_topo_gpu *gpus;
	uint32_t n_channels;
	struct fpgad_topo_channel *channels;
};

/*
 * The card against every GPU of fpgad's host (Topology), with what auto
 * chose for each channel; served on the remote listener too.
 */
FPGAD_EXPORT int fpgad_topology_get(fpgad_client *c, struct fpgad_topology **ret_topo);
FPGAD_EXPORT void fpgad_topology_free(struct fpgad_topology *t);

#ifdef __cplusplus
}
#endif

#endif
