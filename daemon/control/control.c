// SPDX-License-Identifier: MIT
/*
 * control.c - nng REP listeners, contexts and the hand-off to the loop.
 *
 * Each listener has its own REP socket, so a request's listener (local or
 * remote) is known from the socket it came in on.  Each socket runs
 * CONTROL_CTXS contexts: a context receives on an nng thread, the request
 * is queued for the loop, the loop answers with control_reply(), and the
 * send completion starts the next receive.
 *
 * Connection limits: each listener keeps the ids of the connections it
 * accepted.  NNG_PIPE_EV_ADD_PRE admits a connection while there is room
 * and closes it otherwise; nng reports NNG_PIPE_EV_REM_POST for every pipe
 * that saw ADD_PRE, closed there or not, so only an admitted id frees a
 * place and only admitted connections reach the loop.
 *
 * The remote listener also bounds what one address and an idle
 * connection can hold: ADD_PRE refuses a connection from an address that
 * has max_remote_per_address admitted already, and control_close_idle()
 * (a loop timer's) closes a remote connection that sent no request for
 * remote_idle_timeout_ms, so idle peers cannot keep every place for as
 * long as they like.
 */
#include <errno.h>
#include <grp.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/supplemental/tls/tls.h>
#include <nng/transport/ipc/ipc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "control/control.h"
#include "errmap.h"
#include "service/log.h"

#define CONTROL_CTXS 16
/* The most connections a listener admits, whatever its limit says. */
#define CONTROL_MAX_PIPES 4096

enum item_kind { ITEM_REQUEST, ITEM_PIPE_ADD, ITEM_PIPE_REM };

struct item {
	struct item *next;
	enum item_kind kind;
	struct control_ctx *ctx;	/* ITEM_REQUEST */
	nng_msg *msg;			/* ITEM_REQUEST */
	struct peer peer;
};

enum ctx_state { CTX_RECV, CTX_LOOP, CTX_SEND, CTX_STOPPED };

/* An admitted connection: its pipe, its peer's address, its last request. */
struct pipe_rec {
	uint32_t id;
	uint8_t addr[16];		/* remote: IPv6, or IPv4-mapped */
	uint64_t active_ms;
};

struct control_ctx {
	struct listener *lst;
	nng_ctx ctx;
	nng_aio *aio;
	enum ctx_state state;
	bool opened;
};

struct listener {
	struct control *ctl;
	enum listener_kind kind;
	const char *scheme;		/* remote: "tcp" or "tls+tcp" */
	const char *limit_key;		/* the config key of its limit */
	nng_socket sock;
	bool open;
	nng_listener l;
	char bound[256];		/* remote: the URL with the port bound */
	struct control_ctx ctxs[CONTROL_CTXS];

	/* Admitted connections; nng threads, under pipes_lock. */
	pthread_mutex_t pipes_lock;
	struct pipe_rec *pipes;
	unsigned n_pipes;
	unsigned limit;
	unsigned per_address;		/* 0: no limit per address */
	unsigned idle_ms;		/* 0: idle connections stay */
	struct log_limit refused, idle;
};

struct control {
	struct control_handlers h;
	uv_async_t async;
	bool async_init;
	pthread_mutex_t lock;
	struct item *head, **tail;
	atomic_bool stopping;
	struct listener local, remote;
};

static void enqueue(struct control *ctl, struct item *it)
{
	pthread_mutex_lock(&ctl->lock);
	it->next = NULL;
	*ctl->tail = it;
	ctl->tail = &it->next;
	pthread_mutex_unlock(&ctl->lock);
	uv_async_send(&ctl->async);
}

/* NNG_OPT_REMADDR as "tcp 192.0.2.7:40512". */
static void remote_addr(const struct listener *lst, nng_pipe p, char *buf,
			size_t len)
{
	struct sockaddr_storage ss;
	nng_sockaddr na;

	if (nng_pipe_get_addr(p, NNG_OPT_REMADDR, &na) != 0 ||
	    peer_sockaddr_from_nng(&na, &ss) < 0)
		return;
	peer_format_addr((struct sockaddr *)&ss, lst->scheme, buf, len);
}

static void peer_of(struct listener *lst, nng_pipe p, struct peer *ret)
{
	uint64_t v;

	memset(ret, 0, sizeof(*ret));
	ret->pipe_id = (uint32_t)nng_pipe_id(p);
	ret->listener = lst->kind;
	if (lst->kind != LISTENER_LOCAL) {
		remote_addr(lst, p, ret->addr, sizeof(ret->addr));
		return;
	}
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_UID, &v) != 0)
		return;
	ret->uid = (uid_t)v;
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_GID, &v) != 0)
		return;
	ret->gid = (gid_t)v;
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &v) != 0)
		return;
	ret->pid = (pid_t)v;
	ret->creds = true;
}

/* @p's peer address as 16 bytes (peer_addr_key); zeros if unknown. */
static void pipe_addr_key(nng_pipe p, uint8_t key[16])
{
	struct sockaddr_storage ss = { 0 };
	nng_sockaddr na;

	if (nng_pipe_get_addr(p, NNG_OPT_REMADDR, &na) != 0 ||
	    peer_sockaddr_from_nng(&na, &ss) < 0)
		ss.ss_family = AF_UNSPEC;
	peer_addr_key(&ss, key);
}

/* Admitted connections from the address @key; under pipes_lock. */
static unsigned pipes_from(const struct listener *lst, const uint8_t key[16])
{
	unsigned n = 0;

	for (unsigned i = 0; i < lst->n_pipes; i++)
		n += memcmp(lst->pipes[i].addr, key, 16) == 0;
	return n;
}

/* ADD_PRE: admit @p while there is room, else close it at once. */
static void pipe_admit(struct listener *lst, nng_pipe p)
{
	struct pipe_rec rec = { .id = (uint32_t)nng_pipe_id(p),
				.active_ms = clock_now_ns() / 1000000 };
	unsigned n, limit, from = 0, per_address;
	char name[PEER_NAME_MAX];
	struct peer peer;
	bool admit;

	if (lst->kind != LISTENER_LOCAL)
		pipe_addr_key(p, rec.addr);
	pthread_mutex_lock(&lst->pipes_lock);
	n = lst->n_pipes;
	limit = lst->limit;
	per_address = lst->per_address;
	if (per_address)
		from = pipes_from(lst, rec.addr);
	admit = n < limit && n < CONTROL_MAX_PIPES && (!per_address || from < per_address);
	if (admit)
		lst->pipes[lst->n_pipes++] = rec;
	pthread_mutex_unlock(&lst->pipes_lock);
	if (admit)
		return;
	peer_of(lst, p, &peer);
	peer_name(&peer, name, sizeof(name));
	if (n < limit)
		log_limited(&lst->refused, LOG_WARNING,
			    "control: refusing %s: %u connections from its address already (max_remote_per_address %u)",
			    name, from, per_address);
	else
		log_limited(&lst->refused, LOG_WARNING,
			    "control: refusing %s: %u connections on the %s listener already (%s %u)",
			    name, n, lst->kind == LISTENER_LOCAL ? "local" : "remote",
			    lst->limit_key, limit);
	nng_pipe_close(p);
}

/* A request came on @id: it is not idle. */
static void pipe_touch(struct listener *lst, uint32_t id)
{
	pthread_mutex_lock(&lst->pipes_lock);
	for (unsigned i = 0; i < lst->n_pipes; i++) {
		if (lst->pipes[i].id == id) {
			lst->pipes[i].active_ms = clock_now_ns() / 1000000;
			break;
		}
	}
	pthread_mutex_unlock(&lst->pipes_lock);
}

void control_close_idle(struct control *ctl)
{
	struct listener *lst = &ctl->remote;
	uint64_t now = clock_now_ns() / 1000000;
	uint32_t ids[64];
	unsigned n = 0, idle_ms;
	char name[PEER_NAME_MAX];
	struct peer peer;

	if (!lst->pipes)
		return;
	pthread_mutex_lock(&lst->pipes_lock);
	idle_ms = lst->idle_ms;
	for (unsigned i = 0; idle_ms && i < lst->n_pipes && n < 64; i++) {
		if (now - lst->pipes[i].active_ms < idle_ms)
			continue;
		/* Closed once: its REM_POST takes the record away. */
		lst->pipes[i].active_ms = now;
		ids[n++] = lst->pipes[i].id;
	}
	pthread_mutex_unlock(&lst->pipes_lock);
	for (unsigned i = 0; i < n; i++) {
		nng_pipe p = NNG_PIPE_INITIALIZER;

		p.id = ids[i];
		peer_of(lst, p, &peer);
		log_limited(&lst->idle, LOG_NOTICE,
			    "control: closing %s: no request for %u ms (remote_idle_timeout_ms)",
			    peer_name(&peer, name, sizeof(name)), idle_ms);
		nng_pipe_close(p);
	}
}

/* REM_POST: true when @p had been admitted (its place is free again). */
static bool pipe_release(struct listener *lst, nng_pipe p)
{
	uint32_t id = (uint32_t)nng_pipe_id(p);
	bool found = false;

	pthread_mutex_lock(&lst->pipes_lock);
	for (unsigned i = 0; i < lst->n_pipes; i++) {
		if (lst->pipes[i].id == id) {
			lst->pipes[i] = lst->pipes[--lst->n_pipes];
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&lst->pipes_lock);
	return found;
}

static void pipe_event(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	struct listener *lst = arg;
	struct item *it;

	if (ev == NNG_PIPE_EV_ADD_PRE) {
		pipe_admit(lst, p);
		return;
	}
	/* A refused connection never reached the loop: nothing to tell. */
	if (ev == NNG_PIPE_EV_REM_POST && !pipe_release(lst, p))
		return;
	it = calloc(1, sizeof(*it));
	if (!it) {
		/* Without a record the connection cannot be served. */
		nng_pipe_close(p);
		return;
	}
	it->kind = ev == NNG_PIPE_EV_ADD_POST ? ITEM_PIPE_ADD : ITEM_PIPE_REM;
	peer_of(lst, p, &it->peer);
	enqueue(lst->ctl, it);
}

static void ctx_recv(struct control_ctx *c)
{
	c->state = CTX_RECV;
	nng_ctx_recv(c->ctx, c->aio);
}

/* Runs on an nng thread. */
static void ctx_done(void *arg)
{
	struct control_ctx *c = arg;
	struct control *ctl = c->lst->ctl;
	int rv = nng_aio_result(c->aio);
	struct item *it;
	nng_msg *msg;

	if (c->state == CTX_SEND) {
		if (rv != 0) {
			msg = nng_aio_get_msg(c->aio);
			nng_msg_free(msg);
		}
		if (rv == NNG_ECLOSED || rv == NNG_ECANCELED || ctl->stopping) {
			c->state = CTX_STOPPED;
			return;
		}
		ctx_recv(c);
		return;
	}
	if (rv == NNG_ECLOSED || rv == NNG_ECANCELED) {
		c->state = CTX_STOPPED;
		return;
	}
	if (rv != 0) {
		ctx_recv(c);
		return;
	}
	msg = nng_aio_get_msg(c->aio);
	it = calloc(1, sizeof(*it));
	if (!it) {
		nng_msg_free(msg);
		ctx_recv(c);
		return;
	}
	it->kind = ITEM_REQUEST;
	it->ctx = c;
	it->msg = msg;
	peer_of(c->lst, nng_msg_get_pipe(msg), &it->peer);
	if (c->lst->kind != LISTENER_LOCAL)
		pipe_touch(c->lst, it->peer.pipe_id);
	c->state = CTX_LOOP;
	enqueue(ctl, it);
}

void control_reply(struct control_ctx *c, const void *buf, size_t len)
{
	nng_msg *msg;

	if (nng_msg_alloc(&msg, len) != 0) {
		log_err("control: out of memory for a %zu-byte reply", len);
		ctx_recv(c);
		return;
	}
	if (len)
		memcpy(nng_msg_body(msg), buf, len);
	nng_aio_set_msg(c->aio, msg);
	c->state = CTX_SEND;
	nng_ctx_send(c->ctx, c->aio);
}

static void listener_set_limit(struct listener *lst, unsigned limit,
			       unsigned per_address, unsigned idle_ms)
{
	if (!lst->pipes)
		return;
	pthread_mutex_lock(&lst->pipes_lock);
	lst->limit = limit;
	lst->per_address = per_address;
	lst->idle_ms = idle_ms;
	pthread_mutex_unlock(&lst->pipes_lock);
}

void control_set_limits(struct control *ctl, const struct control_options *opt)
{
	listener_set_limit(&ctl->local, opt->max_clients, 0, 0);
	listener_set_limit(&ctl->remote, opt->max_remote_clients,
			   opt->max_remote_per_address, opt->remote_idle_ms);
}

void control_close_pipe(struct control *ctl, uint32_t pipe_id)
{
	nng_pipe p = NNG_PIPE_INITIALIZER;

	(void)ctl;
	p.id = pipe_id;
	nng_pipe_close(p);
}

static void drain(uv_async_t *async)
{
	struct control *ctl = async->data;
	struct item *it, *next;

	pthread_mutex_lock(&ctl->lock);
	it = ctl->head;
	ctl->head = NULL;
	ctl->tail = &ctl->head;
	pthread_mutex_unlock(&ctl->lock);

	for (; it; it = next) {
		next = it->next;
		switch (it->kind) {
		case ITEM_PIPE_ADD:
			ctl->h.connected(ctl->h.user, &it->peer);
			break;
		case ITEM_PIPE_REM:
			ctl->h.disconnected(ctl->h.user, it->peer.pipe_id);
			break;
		case ITEM_REQUEST:
			ctl->h.request(ctl->h.user, it->ctx, &it->peer,
				       nng_msg_body(it->msg), nng_msg_len(it->msg));
			nng_msg_free(it->msg);
			break;
		}
		free(it);
	}
}

/* The part of a listener nng never sees: its admitted connections. */
static int listener_init(struct listener *lst, struct control *ctl,
			 enum listener_kind kind, const char *url,
			 const struct control_options *opt)
{
	lst->ctl = ctl;
	lst->kind = kind;
	lst->scheme = strncmp(url, "tls+", 4) == 0 ? "tls+tcp" : "tcp";
	lst->limit_key = kind == LISTENER_LOCAL ? "max_clients" : "max_remote_clients";
	lst->limit = kind == LISTENER_LOCAL ? opt->max_clients : opt->max_remote_clients;
	if (kind != LISTENER_LOCAL) {
		lst->per_address = opt->max_remote_per_address;
		lst->idle_ms = opt->remote_idle_ms;
	}
	lst->pipes = calloc(CONTROL_MAX_PIPES, sizeof(*lst->pipes));
	if (!lst->pipes)
		return -ENOMEM;
	pthread_mutex_init(&lst->pipes_lock, NULL);
	log_limit_init(&lst->refused, kind == LISTENER_LOCAL ?
		       "control: local refusals" : "control: remote refusals");
	log_limit_init(&lst->idle, "control: idle remote connections closed");
	return 0;
}

static void listener_fini(struct listener *lst)
{
	if (!lst->pipes)
		return;
	pthread_mutex_destroy(&lst->pipes_lock);
	log_limit_destroy(&lst->refused);
	log_limit_destroy(&lst->idle);
	free(lst->pipes);
	lst->pipes = NULL;
}

/*
 * @url with the port the listener holds, which differs when @url asks for
 * port 0 (any free port): what a client must dial, logged at start.
 */
static void bound_url(struct listener *lst, const char *url)
{
	const char *colon = strrchr(url, ':');
	int port;

	snprintf(lst->bound, sizeof(lst->bound), "%s", url);
	if (colon && nng_listener_get_int(lst->l, NNG_OPT_TCP_BOUND_PORT, &port) == 0)
		snprintf(lst->bound, sizeof(lst->bound), "%.*s:%d",
			 (int)(colon - url), url, port);
}

const char *control_remote_url(const struct control *ctl)
{
	return ctl->remote.bound;
}

static int listener_start(struct control *ctl, struct listener *lst,
			  enum listener_kind kind, const char *url,
			  const struct control_options *opt)
{
	int rv;

	if (listener_init(lst, ctl, kind, url, opt) < 0) {
		log_err("control: out of memory for the listener on %s", url);
		return -ENOMEM;
	}
	rv = nng_rep0_open(&lst->sock);
	if (rv)
		goto fail;
	lst->open = true;
	rv = nng_socket_set_size(lst->sock, NNG_OPT_RECVMAXSZ,
				 opt->max_message + CONTROL_HEADER_MAX);
	if (rv)
		goto fail;
	rv = nng_pipe_notify(lst->sock, NNG_PIPE_EV_ADD_PRE, pipe_event, lst);
	if (rv)
		goto fail;
	rv = nng_pipe_notify(lst->sock, NNG_PIPE_EV_ADD_POST, pipe_event, lst);
	if (rv)
		goto fail;
	rv = nng_pipe_notify(lst->sock, NNG_PIPE_EV_REM_POST, pipe_event, lst);
	if (rv)
		goto fail;
	rv = nng_listener_create(&lst->l, lst->sock, url);
	if (rv)
		goto fail;
	if (kind == LISTENER_LOCAL) {
		rv = nng_listener_set_int(lst->l, NNG_OPT_IPC_PERMISSIONS,
					  (int)opt->socket_mode);
		if (rv)
			goto fail;
	}
	if (strncmp(url, "tls+", 4) == 0) {
		rv = nng_listener_set_string(lst->l, NNG_OPT_TLS_CERT_KEY_FILE,
					     opt->tls_cert_key ? opt->tls_cert_key : "");
		if (rv) {
			log_err("control: %s: cannot use %s as certificate and key: %s",
				url, opt->tls_cert_key, nng_strerror(rv));
			return errmap_nng(rv);
		}
	}
	rv = nng_listener_start(lst->l, 0);
	if (rv)
		goto fail;
	if (kind != LISTENER_LOCAL)
		bound_url(lst, url);
	for (unsigned i = 0; i < CONTROL_CTXS; i++) {
		struct control_ctx *c = &lst->ctxs[i];

		c->lst = lst;
		rv = nng_ctx_open(&c->ctx, lst->sock);
		if (rv)
			goto fail;
		c->opened = true;
		rv = nng_aio_alloc(&c->aio, ctx_done, c);
		if (rv)
			goto fail;
		ctx_recv(c);
	}
	return 0;
fail:
	log_err("control: cannot listen on %s: %s", url, nng_strerror(rv));
	return errmap_nng(rv);
}

static void listener_stop(struct listener *lst)
{
	if (!lst->open)
		return;
	for (unsigned i = 0; i < CONTROL_CTXS; i++)
		if (lst->ctxs[i].aio)
			nng_aio_stop(lst->ctxs[i].aio);
	nng_close(lst->sock);
	for (unsigned i = 0; i < CONTROL_CTXS; i++) {
		if (lst->ctxs[i].aio) {
			nng_msg *m = nng_aio_get_msg(lst->ctxs[i].aio);

			if (lst->ctxs[i].state == CTX_SEND && m)
				nng_msg_free(m);
			nng_aio_free(lst->ctxs[i].aio);
		}
	}
	lst->open = false;
}

int control_start(uv_loop_t *loop, const struct control_options *opt,
		  const struct control_handlers *h, struct control **ret_ctl)
{
	struct control *ctl;
	const char *path;
	int r;

	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->h = *h;
	ctl->tail = &ctl->head;
	pthread_mutex_init(&ctl->lock, NULL);
	r = uv_async_init(loop, &ctl->async, drain);
	if (r < 0)
		goto fail;
	ctl->async.data = ctl;
	ctl->async_init = true;

	/*
	 * A socket file left by a killed fpgad would make the bind fail; the
	 * runtime directory's lock (runtime.c) says no live fpgad owns it.
	 */
	path = strncmp(opt->local_url, "ipc://", 6) == 0 ? opt->local_url + 6 : NULL;
	if (path)
		unlink(path);
	r = listener_start(ctl, &ctl->local, LISTENER_LOCAL, opt->local_url, opt);
	if (r < 0)
		goto fail;
	if (path && opt->socket_gid != (gid_t)-1 &&
	    chown(path, (uid_t)-1, opt->socket_gid) < 0)
		log_warn("control: cannot give %s to group %u: %s; it keeps fpgad's group",
			 path, (unsigned)opt->socket_gid, strerror(errno));
	if (opt->remote_url && opt->remote_url[0]) {
		r = listener_start(ctl, &ctl->remote, LISTENER_REMOTE,
				   opt->remote_url, opt);
		if (r < 0)
			goto fail;
	}
	*ret_ctl = ctl;
	return 0;
fail:
	control_stop(ctl);
	return r;
}

static void control_free(struct control *ctl)
{
	listener_fini(&ctl->local);
	listener_fini(&ctl->remote);
	pthread_mutex_destroy(&ctl->lock);
	free(ctl);
}

static void async_closed(uv_handle_t *handle)
{
	control_free(handle->data);
}

void control_stop(struct control *ctl)
{
	struct item *it, *next;

	if (!ctl)
		return;
	ctl->stopping = true;
	listener_stop(&ctl->local);
	listener_stop(&ctl->remote);
	for (it = ctl->head; it; it = next) {
		next = it->next;
		if (it->msg)
			nng_msg_free(it->msg);
		free(it);
	}
	ctl->head = NULL;
	if (ctl->async_init) {
		uv_close((uv_handle_t *)&ctl->async, async_closed);
		return;
	}
	control_free(ctl);
}
