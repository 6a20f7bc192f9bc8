/* SPDX-License-Identifier: MIT */
/*
 * fpgad.h - libfpgad, the client library of fpgad.
 *
 * fpgad owns an FPGA DMA card and streams frames into a ring of GPU (or
 * host) buffers; this library lets an unprivileged process talk to it:
 * query status, lease a channel, and take frames zero-copy; and read and
 * write the card's memory from buffers of its own.
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
/*
 * fpgad_frame_wait() notices that fpgad stopped or died within this many
 * milliseconds, whatever its timeout: it checks every 40 ms, and the rest
 * is the wake-up's slack (more only when the process is not scheduled).
 */
#define FPGAD_GONE_NOTICE_MS 50

/*
 * 3: the client maps GPU rings that reach it as a file descriptor on the
 * handoff socket (OpenChannelReply.gpu_export "fd" or "host"); fpgad
 * refuses such a channel to a client of protocol 2, which could only
 * open a CUDA IPC handle.
 */
#define FPGAD_PROTOCOL_VERSION 3
#define FPGAD_PROTOCOL_GPU_FD 3
#define FPGAD_PROTOCOL_MIN_VERSION 2

/* Where fpgad listens when neither an URL nor $FPGAD_URL is given. */
#define FPGAD_DEFAULT_URL "ipc:///run/fpgad/fpgad.sock"

typedef struct fpgad_client fpgad_client;

/* Library version as "0.1.0". */
FPGAD_EXPORT const char *fpgad_version(void);

/*
 * The URL fpgad_connect() uses for NULL: $FPGAD_URL, else the card named
 * by $FPGAD_CARD (fpgad_card_url()), else the default.  "" when
 * $FPGAD_CARD is not a card name.
 */
FPGAD_EXPORT const char *fpgad_default_url(void);

/* Where the fpgad of each card listens when $FPGAD_RUNTIME_ROOT is unset. */
#define FPGAD_RUNTIME_ROOT "/run/fpgad"

/*
 * The URL of card @name's fpgad (the unit fpgad@NAME.service):
 * ipc://ROOT/NAME/fpgad.sock, ROOT being $FPGAD_RUNTIME_ROOT or
 * FPGAD_RUNTIME_ROOT.  A name is 1-64 letters, digits, '_', '-' and '.',
 * not starting with '.': else -EINVAL; -ENAMETOOLONG when @len is short.
 */
FPGAD_EXPORT int fpgad_card_url(const char *name, char *buf, size_t len);
/*
 * fpgad_connect() to card @name's fpgad.  -ENOENT when no such card runs
 * (fpgad_errmsg(NULL) names the cards that do), -EINVAL for a bad name.
 */
FPGAD_EXPORT int fpgad_connect_card(const char *name, fpgad_client **ret_client);

/* The cards whose fpgad has a socket under the runtime root, by name. */
struct fpgad_card_list {
	uint32_t n_cards;
	char **names;		/* sorted */
};
/* An empty list when the root does not exist; -errno on other failures. */
FPGAD_EXPORT int fpgad_cards_get(struct fpgad_card_list **ret_list);
FPGAD_EXPORT void fpgad_cards_free(struct fpgad_card_list *l);

/*
 * Connect and exchange Hello.  @url NULL means fpgad_default_url() (with
 * $FPGAD_CARD set and $FPGAD_URL not: fpgad_connect_card()).
 * Fails with -ECONNREFUSED when nothing listens, -EUSERS when fpgad closed
 * the connection without answering (its listener is at its connection
 * limit), -EPROTO when the protocol versions do not overlap or TLS is
 * spoken on one side only, -EACCES when the socket may not be opened or
 * fpgad's TLS certificate is refused; fpgad_errmsg(NULL) says why.
 * tls+tcp:// URLs verify fpgad's certificate against the CA file
 * $FPGAD_TLS_CA, for the URL's host or for the name in
 * $FPGAD_TLS_SERVER_NAME.
 */
FPGAD_EXPORT int fpgad_connect(const char *url, fpgad_client **ret_client);
/* Close the connection; every lease it holds ends.  Accepts NULL. */
FPGAD_EXPORT void fpgad_disconnect(fpgad_client *c);

/*
 * Reply timeout for each request, default 5000 ms.  A request that timed
 * out may still have been applied by fpgad: the same call again, before
 * any other request, gets fpgad's answer to the first one (an
 * fpgad_channel_open() its lease) instead of applying it twice.
 */
FPGAD_EXPORT void fpgad_set_timeout(fpgad_client *c, int timeout_ms);

/*
 * Ride through a restart of fpgad (off by default).  When fpgad stops or
 * dies, fpgad_frame_wait() on a channel of @c reconnects and leases the
 * same channel again (as long as its timeout allows; with -1, until fpgad
 * is back), then returns -ESTALE once: every frame held until then is
 * gone, and so is every pointer into the old ring (fpgad_slot_data() of
 * the new ring may differ).  The next wait takes frames of the new ring.
 * Without it, fpgad_frame_wait() returns -EPIPE within
 * FPGAD_GONE_NOTICE_MS (50 ms) of fpgad's death and the channel stays dead.
 */
FPGAD_EXPORT void fpgad_set_reconnect(fpgad_client *c, bool reconnect);

enum fpgad_log_level { FPGAD_LOG_ERR = 3, FPGAD_LOG_WARN = 4, FPGAD_LOG_INFO = 6,
		       FPGAD_LOG_DEBUG = 7 };
typedef void (*fpgad_log_fn)(void *user, int level, const char *msg);
FPGAD_EXPORT void fpgad_set_log(fpgad_client *c, fpgad_log_fn fn, void *user);

/*
 * fpgad's message for the last failed call on @c ("" if none).  With NULL:
 * why the calling thread's last fpgad_connect() could not reach fpgad
 * (refused or unverifiable TLS, a plain listener where TLS was asked for
 * or the reverse), or "".
 */
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
	uint32_t leases;
	char source[8];		/* "card", "udp" (a network sender: stats
				   has its endpoint and counters) */
	bool integrated;	/* cuda memory of an integrated GPU: host
				   memory the GPU reads in place */
};

/* The card, as lspci -vv and modinfo tell it; 0 or "" where unknown. */
struct fpgad_card {
	char pci_address[16];	/* "0000:01:00.0", "" for the simulated card */
	uint16_t vendor_id;
	uint16_t device_id;
	uint16_t subsystem_vendor_id;
	uint16_t subsystem_device_id;
	uint32_t link_gen;	/* PCIe generation negotiated now */
	uint32_t link_width;	/* lanes negotiated now */
	uint32_t max_link_gen;	/* what the card and its slot can do */
	uint32_t max_link_width;
	int32_t numa_node;	/* -1: none or unknown */
	char driver[32];	/* bound kernel driver */
	char module_version[32];
	char simulates[160];	/* the simulated card: what it models */
	/*
	 * PCIe AER errors of the card since boot, as the kernel counts them
	 * (sysfs aer_dev_*'s TOTAL_ERR_ lines), read at the request; only with
	 * aer (not on the simulated card, nor without AER or an older fpgad).
	 */
	bool aer;
	uint64_t aer_correctable;
	uint64_t aer_nonfatal;
	uint64_t aer_fatal;
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
	/* Card memory transfers. */
	uint64_t card_memory;		/* bytes of card address space */
	char transfer_engines[112];	/* "c2h 1, h2c 1", or "none (why)" */
	uint32_t transfer_queues;	/* connections with a transfer queue */
	uint32_t transfer_buffers;	/* buffers registered, all clients */
	uint64_t transfer_registered;	/* their bytes */
	uint64_t transfers;		/* completed, any status */
	uint64_t transfer_bytes;
	uint64_t transfer_errors;	/* failed on the card */
	uint64_t transfer_refused;	/* broke a rule */
	/* Where the card's work runs; "" when not placed. */
	char numa[192];		/* numa = auto: the node, its CPUs, memory */
	char gpu_choice[192];	/* gpu = nearest: which GPU and why */
	struct fpgad_card card;		/* the card fpgad drives */
};

FPGAD_EXPORT int fpgad_status_get(fpgad_client *c, struct fpgad_status **ret_status);
FPGAD_EXPORT void fpgad_status_free(struct fpgad_status *s);

struct fpgad_client_info {
	uint32_t pid;
	uint32_t uid;
	uint32_t gid;
	uint64_t connected_ms;	/* CLOCK_REALTIME, ms since the epoch */
	bool remote;		/* always false: remote peers reach fpgad
				   through fpgad-exporter */
	uint32_t n_leases;
	char leases[16][32];	/* channel names */
	uint32_t buffers;	/* registered for transfers */
	uint64_t registered;	/* their bytes */
	char process[16];	/* its name at connect, "" unknown */
	char container[65];	/* its container's id, "" none */
	char pod[37];		/* its Kubernetes pod's UID, "" none */
	uint64_t pinned;	/* ring bytes its leases hold */
};

struct fpgad_client_list {
	uint32_t n_clients;
	struct fpgad_client_info *clients;
};

FPGAD_EXPORT int fpgad_clients_get(fpgad_client *c, struct fpgad_client_list **ret_list);
FPGAD_EXPORT void fpgad_clients_free(struct fpgad_client_list *l);

/* --- serving the network (fpgad-exporter) ------------------------------------ */

/*
 * fpgad's counters in the Prometheus text exposition format (0.0.4), as a
 * NUL-terminated malloc'ed text: free() it.
 */
FPGAD_EXPORT int fpgad_metrics_get(fpgad_client *c, char **ret_text);
/*
 * Relay one request of a remote peer: @request, @len bytes of an encoded
 * fpgad.Request (proto/fpgad.proto) as the peer sent it.  It is decoded
 * here; one above @max_len bytes, malformed, or other than Hello, Status,
 * ChannelStats and Topology (the read-only requests) is refused here with
 * the status fpgad would answer, and @why (@whylen bytes, "" otherwise)
 * says why.  Any other is packed anew and sent to fpgad on @c.  Either
 * way *ret_reply (free() it) holds the encoded fpgad.Response to send
 * back, with the peer's request id, and 0 is returned; when fpgad does
 * not answer (or @c is NULL: no connection), the reply says so and the
 * errno is returned as well.  -ENOMEM: no reply.
 */
FPGAD_EXPORT int fpgad_relay(fpgad_client *c, const void *request, size_t len,
			     size_t max_len, void **ret_reply, size_t *ret_len,
			     char *why, size_t whylen);

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
	/*
	 * cuda memory of an integrated GPU (Jetson, IGX): the ring is host
	 * memory the GPU reads in place; fpgad_slot_data() is its address
	 * for kernels and fpgad_frame_host() copies nothing.
	 */
	bool integrated;
};

/*
 * Lease channel @name on @c and map its ring: host memory directly, GPU
 * memory once (the first map in a process creates the CUDA context, about
 * 0.1 s): the VMM allocation whose file descriptor fpgad handed over
 * (cuMemImportFromShareableHandle, export "fd"), or, from an fpgad whose
 * GPU has no VMM or POSIX file descriptor handles, or that predates them,
 * a cudaIpcOpenMemHandle (export "ipc"); an integrated GPU's ring (host
 * memory, export "host") mapped and registered with cudaHostRegister.
 * -EBUSY when another process
 * holds it (fpgad_errmsg() says who), -ENOENT for an unknown channel,
 * -ENODEV for GPU memory in a process without CUDA.  A calling thread
 * whose current CUDA device is not the ring's gets the ring mapped on its
 * own device through peer access, or -EXDEV (fpgad_errmsg() names both
 * GPUs) where the pair has none.
 */
FPGAD_EXPORT int fpgad_channel_open(fpgad_client *c, const char *name, unsigned flags,
				    fpgad_channel **ret_ch);
/* End the lease and unmap; accepts NULL.  Frames still held are released. */
FPGAD_EXPORT int fpgad_channel_close(fpgad_channel *ch);

FPGAD_EXPORT void fpgad_channel_get_info(const fpgad_channel *ch,
					 struct fpgad_channel_info *ret_info);

/* How a lease was set up (fpgad_channel_open): for diagnostics. */
struct fpgad_channel_setup {
	char gpu_export[8];	/* cuda memory: "fd", "ipc" or "host" (an
				   integrated GPU's); host memory: "" */
	uint64_t lease_ns;	/* OpenChannel and the handoff of descriptors */
	uint64_t cuda_ns;	/* cuda memory: CUDA started on the ring's GPU
				   (the first time in a process: its context) */
	uint64_t map_ns;	/* the ring imported and mapped */
};
FPGAD_EXPORT void fpgad_channel_get_setup(const fpgad_channel *ch,
					  struct fpgad_channel_setup *ret_setup);
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
	/*
	 * The sender's own times for the frame: when it started and when it
	 * ended, as a network-attached FPGA stamps them (HSB's metadata:
	 * frame start, metadata time), in ns since the epoch of the sender's
	 * clock: PTP time when the sender runs PTP, else whatever its clock
	 * counts.  Not CLOCK_MONOTONIC: compare them with t_dma_* only
	 * knowing how the sender's clock relates to this host's.  0 when the
	 * source gives none: the sim and the XDMA card never do, a sender
	 * may send zeros, and a time that is no time (nanoseconds of 10^9 or
	 * more) reads 0.  A program built against an fpgad.h without them
	 * gets fpgad_frame_wait@FPGAD_0, which writes the frame up to lost.
	 */
	uint64_t t_sender_start_ns;
	uint64_t t_sender_end_ns;
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
 * died: noticed within FPGAD_GONE_NOTICE_MS, 50 ms, whatever the
 * timeout), -ESTALE (with
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
	/* A network channel (source = udp or roce); all zero for a card's. */
	bool network;
	struct fpgad_net_stats {
		char listen[64];	/* bound ADDRESS:PORT */
		char source[8];		/* "udp" or "roce" */
		char interface[16];	/* holding that address; "any" */
		char sender[64];	/* the only sender accepted */
		uint32_t mtu;
		uint32_t payload;	/* bytes per packet the sender sends */
		uint32_t qpn;		/* where the sender writes: QP, */
		uint32_t rkey;		/* the current ring's key, */
		uint64_t va_base;	/* pages of page_stride bytes from */
		uint64_t page_stride;	/* va_base */
		uint32_t pages;
		uint64_t packets;	/* from the sender */
		uint64_t payload_bytes;	/* written into slots */
		uint64_t lost_packets;	/* PSNs skipped */
		uint64_t late_packets;	/* duplicated or reordered: ignored */
		uint64_t incomplete_frames; /* torn: never delivered */
		uint64_t no_slot_frames; /* no slot free for them: dropped */
		uint64_t bad_packets;	/* undecodable or outside the ring */
		uint64_t wrong_qp;	/* to another QP: ignored */
		uint64_t wrong_rkey;	/* with another (stale) key: ignored */
		uint64_t wrong_sender;	/* from another address: ignored */
		uint64_t kernel_drops;	/* the socket's buffer overflowed */
		uint64_t bad_icrc;	/* RoCE's iCRC wrong: not used */
		char control[64];	/* where the sender is told its target */
		uint64_t control_acks;	/* targets it acknowledged */
		uint64_t control_failures; /* ... it did not, or refused */
		/* source = roce: qpn is fpgad's QP, the NIC's number for it. */
		char rdma_device[48];	/* DEVICE:PORT */
		char gid[48];		/* listen's RoCE v2 GID */
		uint32_t gid_index;
		uint32_t sender_qpn;
		uint64_t overrun_frames; /* rewritten by the sender while
					    copied: never delivered */
		uint64_t psn_resyncs;	/* its PSN went back (a restart, a
					   jump back, a narrower PSN space
					   wrapping): followed */
	} net;
	char last_error[128];	/* the last DMA failure, or why the channel
				   FAILED; "" none since fpgad started */
	char integrity[8];	/* "none" (integrity_errors mean nothing) or
				   "crc32c"; "" from an older fpgad */
	/*
	 * source = roce: the landing ring the NIC writes, "gpu (dma-buf
	 * MR)", or "host..." and why not the GPU's ("host: rxe0 refused
	 * ibv_reg_dmabuf_mr: Operation not supported"); else "".
	 */
	char net_landing[224];
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
	bool integrated;	/* its ring: host memory of an integrated GPU */
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

/* What a probe measured and chose (fpgad_channel_probe). */
struct fpgad_probe {
	char mode[16];		/* the mode the channel runs in now */
	char mode_reason[192];	/* auto's reason, with both rates */
	double gpudirect_bps;	/* measured; 0 = not measured or failed */
	double bounce_bps;
	bool switched;		/* the mode changed */
};

/*
 * Measure channel @name (c2h, GPU memory, mode = auto) again in gpudirect
 * and in bounce, as fpgad did at start, and run it in the mode auto
 * chooses now.  The channel must be idle: -EBUSY while leased (the probe
 * borrows its DMA engine for up to twice [device] probe_ms); -EINVAL for a
 * channel whose mode is set, or in host memory.  Local socket only.
 */
FPGAD_EXPORT int fpgad_channel_probe(fpgad_client *c, const char *name,
				     struct fpgad_probe *ret_probe);
/* --- card memory transfers ------------------------------------------------ */

/*
 * Move bytes between a buffer of this process and an address in the card's
 * memory (fpgad_status.card_memory bytes of it): load coefficients or
 * tables into card DDR, read results back, send GPU output to a card
 * address.  A buffer is registered once and named by its handle after
 * that; transfers go through a shared-memory queue (fpgad_xfer.h), with no
 * control round trip per transfer.  Everything registered on a
 * connection ends with it, or when the process goes away.
 *
 * Buffers are
 *   - host memory from fpgad_buffer_alloc_host(): a memfd the library maps
 *     here and hands to fpgad, so the card's DMA reaches the very pages
 *     this process reads.  No other host memory qualifies (malloc'ed,
 *     stack, cudaHostAlloc'ed or mapped memory cannot be reached by fpgad,
 *     an unprivileged other process): fpgad_buffer_register() refuses it;
 *   - CUDA device memory (cudaMalloc) through fpgad_buffer_register(): the
 *     library exports its allocation with cudaIpcGetMemHandle and fpgad
 *     opens it once.  It must start and end on 4 KiB boundaries.
 *
 * Rules, each refused by name (fpgad_errmsg(), fpgad_xfer_strerror()):
 * card_addr, the buffer offset and the length are multiples of the
 * alignment (fpgad_xfer_rules: the card's engines' granule, 64 bytes on
 * the simulated card; 4 KiB in GPU memory, as GPUDirect pins pages); the
 * transfer lies within card memory and within the buffer; its length is
 * 1 byte to max_length.  Longer transfers than an engine moves at once are
 * split; a part that fails fails the whole transfer, and fail_addr names
 * its card address.  Transfers of one batch, or submitted without waiting,
 * run at the same time and finish in any order (FPGAD_XFER_BARRIER orders
 * one after everything before it).  Card memory is one address space for
 * every client, as on the card itself: fpgad keeps clients' buffers apart,
 * not their card addresses.
 */
typedef struct fpgad_buffer fpgad_buffer;

/*
 * How the card reaches a buffer.  GPU memory: gpudirect (card DMA
 * straight into GPU memory) or bounce (card DMA into pinned host staging,
 * then a GPU copy: the vendor's traditional path); host memory: host.
 * auto picks the first that works and says why.
 */
enum fpgad_mode {
	FPGAD_MODE_AUTO = 0,
	FPGAD_MODE_GPUDIRECT = 1,
	FPGAD_MODE_BOUNCE = 2,
	FPGAD_MODE_HOST = 3,
};

struct fpgad_buffer_info {
	uint64_t id;		/* fpgad's name for it on this connection */
	enum fpgad_memory memory;
	uint64_t length;
	enum fpgad_mode mode;	/* the mode in use, never AUTO */
	char mode_reason[128];	/* why that mode */
	int gpu;		/* GPU memory: this process's device ordinal */
};

/*
 * @length bytes (rounded up to the page size) of host memory that fpgad can
 * reach, zeroed, registered; fpgad_buffer_data() says where.  -ENOSPC
 * names the limit reached (max_buffers, max_registered).
 */
FPGAD_EXPORT int fpgad_buffer_alloc_host(fpgad_client *c, uint64_t length,
					 fpgad_buffer **ret_buf);
/*
 * Register @length bytes of CUDA device memory at @ptr (@flags: 0) for
 * transfers, in auto mode.  -EINVAL for host memory (see above; a libfpgad
 * built without CUDA sees no GPU memory) or misaligned memory, -ENODEV
 * when fpgad has no CUDA.
 */
FPGAD_EXPORT int fpgad_buffer_register(fpgad_client *c, void *ptr,
				       uint64_t length, unsigned flags,
				       fpgad_buffer **ret_buf);
/*
 * End a registration (fpgad lets go of the memory once no transfer uses
 * it) and free the handle; memory from fpgad_buffer_alloc_host() is
 * unmapped.  -EBUSY, and nothing ends, while transfers of the buffer are
 * submitted and not reaped.  Accepts NULL.
 */
FPGAD_EXPORT int fpgad_buffer_unregister(fpgad_buffer *buf);
/* Where the buffer is: a host pointer, or the CUDA device pointer. */
FPGAD_EXPORT void *fpgad_buffer_data(const fpgad_buffer *buf);
FPGAD_EXPORT void fpgad_buffer_get_info(const fpgad_buffer *buf,
					struct fpgad_buffer_info *ret_info);
/*
 * Switch the transfer mode of a registered buffer; transfers submitted
 * afterwards use it.  Code written for the CPU path gains GPUDirect with
 * this one call:
 *
 *	fpgad_buffer_register(c, gpu_ptr, len, 0, &buf);
 *	fpgad_buffer_set_mode(buf, FPGAD_MODE_GPUDIRECT);   (or BOUNCE)
 *
 * -EINVAL for a mode the memory cannot have (host for GPU memory),
 * -EOPNOTSUPP when the card cannot pin it for gpudirect.
 */
FPGAD_EXPORT int fpgad_buffer_set_mode(fpgad_buffer *buf, enum fpgad_mode mode);

/*
 * Last-owner tracking.  A GPU buffer may have a host view (pinned, the
 * library's); the library records who wrote the buffer last and where
 * the current bytes are, and copies only when a view is stale: after a
 * read from the card, or when the application says a GPU kernel wrote the
 * buffer, the host view is refreshed at the next fpgad_buffer_host(); when
 * the application says it wrote the host view, the GPU memory is updated
 * before the next write to the card.  Host buffers are their own view.
 */
enum fpgad_writer {
	FPGAD_WRITER_CARD = 1,	/* a read from the card (set by the library) */
	FPGAD_WRITER_GPU = 2,	/* a kernel or a CUDA copy of the application */
	FPGAD_WRITER_HOST = 3,	/* the application, through the host view */
};

/* The host view of @buf, copied from GPU memory only when it is stale. */
FPGAD_EXPORT int fpgad_buffer_host(fpgad_buffer *buf, void **ret_ptr);
/* Record that @who wrote @buf (the whole of it) last. */
FPGAD_EXPORT void fpgad_buffer_wrote(fpgad_buffer *buf, enum fpgad_writer who);
/* Who wrote @buf last; 0 when nobody has yet. */
FPGAD_EXPORT enum fpgad_writer fpgad_buffer_last_writer(const fpgad_buffer *buf);
/* Copies between GPU memory and the host view made so far. */
FPGAD_EXPORT uint64_t fpgad_buffer_copies(const fpgad_buffer *buf);

/* Card memory, engines and the transfer rules fpgad enforces. */
struct fpgad_xfer_rules {
	uint64_t card_memory;	/* bytes of card address space */
	uint64_t max_length;	/* longest transfer */
	uint64_t part_size;	/* longest piece an engine moves at once */
	uint32_t host_align;	/* alignment in host memory */
	uint32_t gpu_align;	/* alignment in GPU memory */
};

/* The rules of @c's transfer queue (opened now if it is not yet). */
FPGAD_EXPORT int fpgad_xfer_rules(fpgad_client *c, struct fpgad_xfer_rules *ret_rules);

/*
 * Read @length bytes at card address @card_addr into @buf at @buf_offset
 * (card to buffer), or write them from @buf to the card, and wait up to
 * @timeout_ms (-1 = no limit) for the result: 0, or a negative errno with
 * fpgad_errmsg() naming the rule broken or where the card failed:
 * -EINVAL (a rule), -ENOENT (not a buffer of this connection),
 * -EOPNOTSUPP (no engine of the card serves that direction), -EIO,
 * -ETIMEDOUT or -ECANCELED (the card, or an engine reset after it hung),
 * -ETIMEDOUT (no result in time: the transfer
 * may still run, and may still write the buffer), -EPIPE (fpgad went away;
 * with fpgad_set_reconnect() the buffers are registered again and -ESTALE
 * says so once).
 */
FPGAD_EXPORT int fpgad_read(fpgad_buffer *buf, uint64_t buf_offset,
			    uint64_t card_addr, uint64_t length, int timeout_ms);
FPGAD_EXPORT int fpgad_write(fpgad_buffer *buf, uint64_t buf_offset,
			     uint64_t card_addr, uint64_t length, int timeout_ms);

#define FPGAD_XFER_READ 1	/* card -> buffer */
#define FPGAD_XFER_WRITE 2	/* buffer -> card */
#define FPGAD_XFER_BARRIER 0x1u	/* after every earlier transfer of @c */

/* One transfer of a batch, or of the asynchronous form. */
struct fpgad_xfer {
	/* Filled by the caller. */
	unsigned op;		/* FPGAD_XFER_READ or FPGAD_XFER_WRITE */
	unsigned flags;		/* FPGAD_XFER_BARRIER, or 0 */
	fpgad_buffer *buf;
	uint64_t buf_offset;
	uint64_t card_addr;
	uint64_t length;
	void *user;		/* the caller's, untouched */
	/* Filled when it completes. */
	int status;		/* 0 or a negative errno, as fpgad_read() */
	uint32_t rule;		/* the rule broken (fpgad_xfer.h), 0 = none */
	uint64_t done;		/* bytes moved (before fail_addr, on failure) */
	uint64_t fail_addr;	/* card address where it failed */
	uint64_t limit;		/* the value of the rule broken */
	uint64_t t_start_ns;	/* CLOCK_MONOTONIC: fpgad took it */
	uint64_t t_end_ns;	/* and completed it */
	enum fpgad_mode mode;	/* the mode it ran in */
};

/*
 * Run @n transfers at once and wait for all (@timeout_ms for the whole
 * batch): 0 when every one succeeded, else the status of the first that
 * failed, in array order, with fpgad_errmsg() saying why; every element's
 * status is set.  One wake-up of fpgad for the batch.
 */
FPGAD_EXPORT int fpgad_xfer_batch(fpgad_client *c, struct fpgad_xfer *x,
				  unsigned n, int timeout_ms);
/*
 * Asynchronous form: queue @n transfers and return at once: how many were
 * queued (fewer than @n when the queue is full; -EAGAIN when none fit).
 * The elements must stay where they are until fpgad_xfer_reap() hands
 * them back.
 */
FPGAD_EXPORT int fpgad_xfer_submit(fpgad_client *c, struct fpgad_xfer *x,
				   unsigned n);
/*
 * Take completed transfers: up to @max of them into @ret (pointers to the
 * submitted elements, results filled in), waiting up to @timeout_ms for
 * the first (0 = do not wait): how many, -ETIMEDOUT, or -EPIPE (fpgad
 * went away: transfers outstanding then complete with -EPIPE).
 */
FPGAD_EXPORT int fpgad_xfer_reap(fpgad_client *c, struct fpgad_xfer **ret,
				 unsigned max, int timeout_ms);
/* Transfers submitted and not reaped yet. */
FPGAD_EXPORT unsigned fpgad_xfer_pending(const fpgad_client *c);
/* Why @x failed, in one line ("card range: ..."); returns @buf. */
FPGAD_EXPORT const char *fpgad_xfer_strerror(const struct fpgad_xfer *x,
					     char *buf, size_t len);
/*
 * Busy-poll: waits for transfers check for a completion for up to @us
 * microseconds before they sleep.  0, the default: a short adaptive spin
 * (at most 50 us, and only while this connection's completions have been
 * coming that soon; none once they come later), then sleep.
 */
FPGAD_EXPORT void fpgad_xfer_set_poll(fpgad_client *c, unsigned us);

#ifdef __cplusplus
}
#endif

#endif
