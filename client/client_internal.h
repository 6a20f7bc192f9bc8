/* SPDX-License-Identifier: MIT */
/*
 * client_internal.h - what libfpgad's files share; not installed.
 *
 *   conn.c      the control connection: round trips, status codes, errors
 *   reconnect.c the socket and dialer, the live connection, a new socket
 *   client.c    connect, disconnect, Status, ListClients
 *   forward.c   what fpgad-exporter asks: Metrics, and remote requests relayed
 *   attach.c    lease a channel and map its ring and descriptor ring
 *   frames.c    take, release and submit frames on a leased channel
 *   handoff.c   fpgad's handoff socket: tokens and descriptors
 *   xfer_queue.c  the client's end of the transfer queue (fpgad_xfer.h)
 *   xfer.c      card transfers: the queue, read, write, batch, async
 *   buffer.c    buffers registered for transfers
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

struct frame_consumer;
struct xfer_ctx;

struct fpgad_client {
	nng_socket sock;
	bool sock_open;			/* sock is open (reconnect.c) */
	char url[512];
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
	struct xfer_ctx *xf;		/* card transfers, once used */
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

struct fpgad_channel {
	struct fpgad_channel *next;
	fpgad_client *c;
	unsigned flags;			/* FPGAD_OPEN_* */
	uint64_t lease_id;		/* 0 while it has none */
	uint32_t conn;			/* the connection that granted the lease */
	int link;			/* the handoff connection, kept */
	struct fpgad_channel_info info;
	uint8_t *base;			/* host mapping or device pointer */
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
};

/*
 * reconnect.c: open c->sock and dial c->url (@wait: fail unless fpgad
 * answers now; otherwise nng dials in the background).
 */
int reconnect_open(fpgad_client *c, bool wait);
void reconnect_close(fpgad_client *c);
/* @msg, a reply, came: note the connection that carried it. */
void reconnect_replied(fpgad_client *c, nng_msg *msg);
/* Is @conn (reconnect_reply_conn) still the connection that is up? */
bool reconnect_conn_alive(fpgad_client *c, uint32_t conn);
/*
 * A reconnect attempt failed: when no answer came for a while, the dialer
 * is not trusted any longer and a new socket replaces it.
 */
void reconnect_attempt_failed(fpgad_client *c);

/* conn.c */
/* Hello: check that fpgad speaks our protocol, learn its software string. */
int conn_hello(fpgad_client *c);
/* Request timeouts of the socket, for now (fpgad_set_timeout: for good). */
void conn_set_timeouts(fpgad_client *c, int timeout_ms);
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

/* attach.c: close every channel still open on @c. */
void attach_close_all(fpgad_client *c);
/*
 * Is @ch's lease over without the library ending it: fpgad closed its end
 * of the link (lease ended, fpgad stopped or died) or the connection it
 * was made on is gone?
 */
bool attach_lease_gone(fpgad_channel *ch);
/*
 * fpgad went away: lease the same channel again (reconnecting as nng
 * redials), trying until @timeout_ms (-1 = no limit) runs out; the old
 * rings are unmapped first.  0, or the error of the last attempt.
 */
int attach_reopen(fpgad_channel *ch, int timeout_ms);

/* xfer.c */
/* End the transfer queue and every buffer of @c (disconnect). */
void xfer_close(fpgad_client *c);
/* The transfer state of @c, its queue open and alive: 0, or -errno. */
int xfer_ready(fpgad_client *c, struct xfer_ctx **ret_xf);
/* Buffers of @c (the list lives in the transfer state). */
struct fpgad_buffer **xfer_buffers(struct xfer_ctx *xf);

/* buffer.c: register @b (again, after a reconnect) on @c's connection. */
int buffer_register(fpgad_client *c, fpgad_buffer *b);
/* A transfer of @b completed: the card wrote it (@card_wrote). */
void buffer_transfer_done(fpgad_buffer *b, bool card_wrote);
/* Before a write to the card: GPU memory made current. */
int buffer_sync_device(fpgad_buffer *b);

/*
 * GPU memory of another process (gpu_cuda.c; without CUDA, gpu_nocuda.c
 * says "built without CUDA").  gpu_map opens a cudaIpcMemHandle_t once, on
 * the GPU with PCI bus id @bus_id (this process's ordinal for it may
 * differ from fpgad's), else on ordinal @gpu.
 */
int gpu_map(const void *ipc_handle, int gpu, const char *bus_id,
	    void **ret_ptr, char *why, size_t whylen);
void gpu_unmap(void *ptr);
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
