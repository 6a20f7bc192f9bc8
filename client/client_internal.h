/* SPDX-License-Identifier: MIT */
/*
 * client_internal.h - what libfpgad's files share; not installed.
 *
 * The files, highest first (tests/arch/layers holds them to it): the
 * public calls, over the session, over the connection.
 *
 *   client.c    connect (by URL or card name), disconnect, settings,
 *               Status, ListClients
 *   forward.c   what fpgad-exporter asks: Metrics, and remote requests relayed
 *   attach.c    open and close a channel, its info, stats, probe, reset
 *   frames.c    take, release and submit frames on a leased channel
 *   buffer.c    buffers registered for transfers, and their views
 *   topology.c  the card's PCI path to each GPU (Topology)
 *   xfer.c      card transfers: read, write, batch, async
 *   session.c   Hello; the session restored after fpgad came back
 *   lease.c     a channel's lease: OpenChannel, its rings mapped, its end
 *   xfer_ctx.c  a connection's transfer queue, its slots and completions,
 *               its buffers' registrations
 *   handoff.c   fpgad's handoff socket: tokens and descriptors
 *   reconnect.c the socket and dialer, the live connection, a new socket
 *   conn.c      round trips, status codes, the error message, the log
 *   dial.c      why a dial failed, in words; TLS set-up (dial.h)
 *   card.c      a card's name, its fpgad's URL, the cards that run
 *   frame_consumer.c  the client's end of the frame plane (frame_consumer.h)
 *   xfer_queue.c  the client's end of the transfer queue (xfer_queue.h)
 *   owner.c     who wrote a buffer last, and which copy a view needs
 *   gpu_cuda.c  GPU memory through the CUDA runtime (gpu_nocuda.c without)
 */
#ifndef FPGAD_CLIENT_INTERNAL_H
#define FPGAD_CLIENT_INTERNAL_H

#include <nng/nng.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>

#include "fpgad.h"
#include "fpgad.pb-c.h"
#include "cuvmm.h"

struct frame_consumer;
struct xfer_ctx;

#define CLIENT_URL_MAX 512

struct fpgad_client {
	nng_socket sock;
	bool sock_open;			/* sock is open (reconnect.c) */
	char url[CLIENT_URL_MAX];
	/*
	 * The address of url that answered (reconnect.c), dialled again
	 * after a restart, and the name a certificate is checked against.
	 */
	char dial_url[CLIENT_URL_MAX];
	char dial_name[256];
	char server[64];
	char errmsg[256];
	uint64_t next_id;
	int timeout_ms;
	fpgad_log_fn log;
	void *log_user;
	struct fpgad_channel *channels;	/* open channels, for disconnect */
	bool reconnect;			/* fpgad_set_reconnect() */
	/*
	 * The connection (nng pipe id) that is up now, 0 while none is: a
	 * lease or queue lives as long as the connection that granted it.
	 */
	_Atomic uint32_t live_pipe;
	uint32_t reply_pipe;		/* the one that carried the last reply */
	uint64_t down_since_ns;		/* reconnecting, no answer since */
	nng_aio *aio;			/* a round trip's reply */
	int rt_timeout_ms;		/* this round trip's (conn_set_timeouts) */
	/*
	 * A request whose reply did not come in time: fpgad may have applied
	 * it.  The same request again goes with the same id, and fpgad answers
	 * it from its reply cache instead of applying it twice.
	 */
	uint8_t *unanswered;
	size_t unanswered_len;
	uint64_t unanswered_id;
	/*
	 * Hello is said once per connection: a retry after a timeout then
	 * goes straight to the request that timed out.
	 */
	uint32_t greeted_pipe;
	/*
	 * Until Hello is answered: a connection fpgad closes is one it
	 * refused (over its listener's limit), and the wait ends at once.
	 */
	pthread_mutex_t lock;
	bool connecting;
	bool refused;
	struct xfer_ctx *xf;		/* card transfers, once used (xfer_ctx.c) */
	unsigned xfer_poll_us;		/* fpgad_xfer_set_poll() */
};

/* owner.c: where a buffer's current bytes are (fpgad_buffer_wrote). */
#define OWNER_DEVICE 0x1u
#define OWNER_HOST 0x2u

enum owner_copy { OWNER_NO_COPY, OWNER_TO_HOST, OWNER_TO_DEVICE };

struct owner {
	bool one_place;			/* host memory: its own view */
	uint8_t valid;			/* OWNER_* holding the current bytes */
	uint8_t writer;			/* enum fpgad_writer, 0 = nobody */
};

void owner_init(struct owner *o, bool one_place);
void owner_wrote(struct owner *o, enum fpgad_writer who);
/* The copy that makes the bytes at @where (OWNER_*) current, if any. */
enum owner_copy owner_need(const struct owner *o, unsigned where);
void owner_copied(struct owner *o, enum owner_copy copy);

struct fpgad_buffer {
	struct fpgad_buffer *next;
	fpgad_client *c;
	uint64_t id;			/* fpgad's, on the current connection */
	enum fpgad_memory memory;
	void *data;			/* host mapping, or device pointer */
	uint64_t length;
	int memfd;			/* host: kept to register it again */
	enum fpgad_mode mode;		/* asked for (AUTO) or set */
	struct fpgad_buffer_info info;	/* as fpgad answered */
	uint8_t ipc_handle[64];		/* cuda */
	uint64_t ipc_offset;
	char gpu_bus_id[32];
	struct owner owner;
	void *host;			/* cuda: the host view, once asked for */
	uint64_t copies;
	unsigned pending;		/* transfers of it not reaped */
};

/* held_pos value of a slot this process does not hold. */
#define FRAMES_NOT_HELD UINT64_MAX

/* A ring in GPU memory as fpgad shares it, and its mapping here (gpu_map). */
struct gpu_ring_ref {
	enum gpu_export export;
	const void *ipc_handle;		/* ipc: 64 bytes */
	int fd;				/* fd: the allocation's (not taken) */
	uint64_t size;			/* fd, host: bytes to map */
	void *host;			/* host: the memfd mapped here; the
					   mapping's once gpu_map succeeds */
	bool read_only;			/* host: mapped read-only: register it so */
	int gpu;
	const char *bus_id;
};
struct gpu_mapping {
	void *ptr;			/* the ring here (for kernels) */
	struct cuvmm vmm;		/* export fd: what gpu_unmap lets go */
	void *host;			/* export host: the memfd's mapping,
					   registered with CUDA */
	size_t host_len;
	uint64_t cuda_ns;		/* CUDA started on the GPU (the first
					   time in a process: its context) */
	uint64_t map_ns;		/* the ring imported and mapped */
};

struct fpgad_channel {
	struct fpgad_channel *next;
	fpgad_client *c;
	unsigned flags;			/* FPGAD_OPEN_* */
	uint64_t lease_id;		/* 0 while it has none */
	uint32_t conn;			/* the connection that granted the lease */
	int link;			/* the handoff connection, kept */
	struct fpgad_channel_info info;
	uint8_t *base;			/* host mapping or device pointer */
	struct gpu_mapping gpu;		/* cuda memory: base's mapping */
	struct fpgad_channel_setup setup; /* how the lease was set up */
	size_t ring_size;
	void *desc;
	size_t desc_len;
	struct frame_consumer *cons;
	bool newest;
	unsigned poll_us;
	uint32_t events;
	bool h2c;			/* the lessee fills buffers for the card */
	bool seen_seq;			/* c2h: last_seq holds a frame's seq */
	uint64_t last_seq;
	uint64_t *held_pos;		/* per slot: descriptor position held */
	void *desc_dev;			/* the descriptor ring as the GPU sees it
					   (stream-ordered release), or NULL */
	uint32_t async_issued;		/* stream-ordered releases queued */
	void **host;			/* cuda: per-slot pinned copies */
	uint64_t *host_pos;		/* cuda: which frame each copy holds */
	uint64_t host_copies;
	/*
	 * Leased again after fpgad came back (lease_renew), not told yet:
	 * the next wait says -ESTALE, and the ring the caller knew (@old,
	 * its mappings only) goes then.
	 */
	bool restored;
	struct fpgad_channel *old;
};

/* Transfers completed and not handed back, at most. */
#define XFER_DONE_MAX (3u * FPGAD_XFER_MAX_ENTRIES)

struct xfer_slot {
	struct fpgad_xfer *x;		/* NULL: free, or abandoned */
	fpgad_buffer *buf;
	uint32_t gen;
	bool used;
};

/* What a connection holds for card transfers (xfer_ctx.c). */
struct xfer_ctx {
	fpgad_client *c;
	void *mem;			/* the queue, mapped */
	size_t len;
	struct xfer_queue *q;
	int doorbell;
	int link;
	uint32_t conn;			/* the connection that granted it */
	bool lost;			/* the queue ended: -EPIPE from now on */
	bool restored;			/* opened again, not told yet (-ESTALE) */
	struct xfer_slot *slots;
	uint32_t n_slots;
	uint32_t *free;			/* free slot indices */
	uint32_t n_free;
	struct fpgad_xfer **done;	/* completed, not handed back yet */
	unsigned n_done;
	struct fpgad_buffer *buffers;
};

/* card.c: the URL of card @name's fpgad, which must run (else why, dial.c). */
int card_find(const char *name, char *url, size_t len);

/*
 * reconnect.c: open c->sock and dial c->url (@wait: fail unless fpgad
 * answers now; otherwise nng dials in the background).
 */
int reconnect_open(fpgad_client *c, bool wait);
void reconnect_close(fpgad_client *c);
/* Request timeouts of the socket, for now (fpgad_set_timeout: for good). */
void reconnect_set_timeouts(fpgad_client *c, int timeout_ms);
/* Is @conn (the reply_pipe of a grant) still the connection that is up? */
bool reconnect_conn_alive(fpgad_client *c, uint32_t conn);
/*
 * A reconnect attempt failed: when no answer came for a while, the dialer
 * is not trusted any longer and a new socket replaces it.
 */
void reconnect_attempt_failed(fpgad_client *c);

/* conn.c: one round trip at a time; it notes the connection of the reply. */
/* The errno for a fpgad status code. */
int conn_status_errno(int code);
void conn_log(const fpgad_client *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void conn_set_errmsg(fpgad_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Send @req (its id is set here) and take its reply, whatever its status. */
int conn_call(fpgad_client *c, Fpgad__Request *req, Fpgad__Response **ret_resp);
/* Send @req (its id is set here) and take a STATUS_OK reply. */
int conn_transact(fpgad_client *c, Fpgad__Request *req,
		  Fpgad__Response **ret_resp);
/* Frees @resp and fails unless it carries @body. */
int conn_expect(fpgad_client *c, Fpgad__Response *resp,
		Fpgad__Response__BodyCase body);
/* conn_transact, then conn_expect: a STATUS_OK reply carrying @body. */
int conn_request(fpgad_client *c, Fpgad__Request *req,
		 Fpgad__Response__BodyCase body, Fpgad__Response **ret_resp);
/*
 * Send @len raw bytes as one request and return the reply's status code
 * and message: for tests that probe fpgad with hand-made bytes.
 */
int conn_raw_request(fpgad_client *c, const void *buf, size_t len,
		     int *ret_code, char *msg, size_t msglen);

/*
 * handoff.c: present @token on fpgad's handoff socket @path, sending
 * @send_fds with it, and receive @want descriptors into @fds.  With
 * @ret_link, the connection is kept there (a lease's or a queue's link);
 * otherwise it is closed.
 */
int handoff_exchange(fpgad_client *c, const char *path,
		     const ProtobufCBinaryData *token, const int *send_fds,
		     unsigned n_send, int *fds, unsigned want, int *ret_link);
/* Map @len bytes of @fd, which must be at least that long. */
int handoff_map(int fd, uint64_t len, int prot, void **ret_map);

/* lease.c: lease channel @name for @ch and map what fpgad grants. */
int lease_take(fpgad_channel *ch, const char *name);
/* CloseChannel for @ch's lease: by name and lease id, never another's. */
int lease_give_back(fpgad_channel *ch);
/* Let go of everything mapped or held for @ch, an old ring included. */
void lease_unmap(fpgad_channel *ch);
/*
 * Is @ch's lease over without the library ending it: fpgad closed its end
 * of the link (lease ended, fpgad stopped or died) or the connection it
 * was made on is gone?
 */
bool lease_gone(fpgad_channel *ch);
/*
 * Lease @ch's channel again on the current connection (session.c); the
 * ring the caller knows stays mapped (ch->old) and ch->restored is set.
 */
int lease_renew(fpgad_channel *ch);
/* The caller was told (-ESTALE): the old ring goes. */
void lease_drop_old(fpgad_channel *ch);

/* xfer_ctx.c */
/* The transfer state of @c, made the first time (no queue yet). */
int xfer_state(fpgad_client *c, struct xfer_ctx **ret_xf);
/* OpenXferQueue, the handoff, and a check of what came. */
int xfer_open(struct xfer_ctx *xf);
/* Is the queue over: the connection lost, the queue closed, fpgad gone? */
bool xfer_gone(struct xfer_ctx *xf, bool look_at_link);
/* @x completes here, without fpgad, with @status (and @rule broken). */
void xfer_fail_local(struct xfer_ctx *xf, struct fpgad_xfer *x,
		     int status, uint32_t rule);
/* The queue is over: what was outstanding completes with -EPIPE. */
void xfer_lose(struct xfer_ctx *xf);
/* End the transfer state of @c (disconnect, its buffers gone already). */
void xfer_close(fpgad_client *c);
/* Register @b (again, after a reconnect) on @c's connection. */
int xfer_ctx_register(fpgad_client *c, fpgad_buffer *b);
/* UnregisterBuffer for @id on the current connection. */
int xfer_ctx_unregister(fpgad_client *c, uint64_t id);
/* A transfer mode's name in the protocol ("auto", ...), and back. */
const char *xfer_mode_name(enum fpgad_mode mode);
enum fpgad_mode xfer_mode_of(const char *name);

/* session.c: Hello, once per connection: fpgad speaks our protocol. */
int session_hello(fpgad_client *c);
/*
 * Something of @c's session ended behind the library's back (a lease, the
 * transfer queue; the caller marked it so): without reconnect, -EPIPE.
 * With it, the session is restored, trying until @timeout_ms (-1 = no
 * limit) runs out: -ESTALE once @restored (the caller's part) is back,
 * else the error of the last attempt.
 */
int session_lost(fpgad_client *c, bool *restored, int timeout_ms);
/* An error that says fpgad is not (or not yet) back. */
bool session_not_back(int r);

/*
 * xfer.c: the transfer state of @c, its queue open and alive (opened the
 * first time): 0, or -errno (-ESTALE once after a restore).
 */
int xfer_ready(fpgad_client *c, struct xfer_ctx **ret_xf);

/* buffer.c: at disconnect, every buffer of @c ends with the connection. */
void buffer_close_all(fpgad_client *c);

/* attach.c: close every channel still open on @c. */
void attach_close_all(fpgad_client *c);

/*
 * GPU memory of another process (gpu_cuda.c; without CUDA, gpu_nocuda.c
 * says "built without CUDA").  gpu_map maps a ring fpgad shares, on the
 * GPU with PCI bus id @bus_id (this process's ordinal for it may differ
 * from fpgad's), else on ordinal @gpu: its VMM descriptor (export fd,
 * cuvmm.h), its cudaIpcMemHandle_t (export ipc), or an integrated GPU's
 * memfd, mapped by the caller, registered with cudaHostRegister for every
 * GPU (export host; gpu_unmap unregisters and unmaps it).
 */
int gpu_map(const struct gpu_ring_ref *ref, struct gpu_mapping *ret,
	    char *why, size_t whylen);
/* Let go of @m's mapping (only this process's: fpgad's stays). */
void gpu_unmap(struct gpu_mapping *m);
int gpu_host_alloc(size_t len, void **ret_ptr);
void gpu_host_free(void *ptr);
int gpu_to_host(void *dst, const void *src_dev, size_t len);
int gpu_from_host(void *dst_dev, const void *src, size_t len);
/* Map host memory for the GPU (@ret_dev: its address there). */
int gpu_register_host(void *ptr, size_t len, void **ret_dev);
void gpu_unregister_host(void *ptr);
/* Queue, on CUDA stream @stream, a store of @value at @dev_addr. */
int gpu_stream_write32(void *stream, void *dev_addr, uint32_t value);

/* A string of a reply into a fixed array, "" for NULL, cut to fit. */
void conn_copy_str(char *dst, size_t len, const char *src);
#define COPY(dst, src) conn_copy_str(dst, sizeof(dst), src)
/*
 * Is @ptr CUDA device memory of this process?  1 and its device ordinal,
 * 0 for anything else (host memory, or no CUDA), -EINVAL for managed
 * memory, with @why.
 */
int gpu_pointer(const void *ptr, int *ret_gpu, char *why, size_t whylen);
/*
 * Export the allocation holding @ptr: its cudaIpcMemHandle_t, where @ptr
 * is in it, and its GPU's PCI bus id.
 */
int gpu_export(const void *ptr, int gpu, uint8_t *ret_handle,
	       uint64_t *ret_offset, char *bus_id, size_t idlen, char *why,
	       size_t whylen);

#endif
