// SPDX-License-Identifier: MIT
/*
 * control.c - the local control listener: an nng REP socket on ipc://,
 * its contexts and the hand-off to the loop.
 *
 * The socket runs CONTROL_CTXS contexts: a context receives on an nng
 * thread, the request is queued for the loop, the loop answers with
 * control_reply(), and the send completion starts the next receive.
 *
 * Connection limit: the listener keeps the ids of the connections it
 * accepted.  NNG_PIPE_EV_ADD_PRE admits a connection while there is room
 * and closes it otherwise; nng reports NNG_PIPE_EV_REM_POST for every pipe
 * that saw ADD_PRE, closed there or not, so only an admitted id frees a
 * place and only admitted connections reach the loop.
 *
 * A listener nng stopped (liveness.h: nng 1.5 ends one for good when a
 * peer leaves during the SP header exchange) is replaced: a new one is
 * bound beside the socket path and renamed over it, so a client finds
 * one listening at every moment; the old one keeps serving the
 * connections it accepted and is closed when the last one ends.
 *
 * fpgad listens on no network socket: remote status and metrics are
 * served by fpgad-exporter (exporter/), a client of this socket.
 */
#include <errno.h>
#include <grp.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/transport/ipc/ipc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/control.h"
#include "control/liveness.h"
#include "errmap.h"
#include "log.h"

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

/* An admitted connection, and the listener that accepted it. */
struct pipe_rec {
	uint32_t id;
	uint32_t listener;
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
	nng_socket sock;
	bool open;
	nng_listener l;
	struct control_ctx ctxs[CONTROL_CTXS];

	/* ipc:// only: the socket path, how it is made, its probe. */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	unsigned mode;
	gid_t gid;
	/* Set on the loop after the socket opens; read by pipe_admit(). */
	struct liveness *_Atomic live;
	/* Replaced listeners that still have connections (the loop's). */
	nng_listener *retired;
	unsigned n_retired;
	unsigned renewals;

	/* Admitted connections; nng threads, under pipes_lock. */
	pthread_mutex_t pipes_lock;
	struct pipe_rec *pipes;
	unsigned n_pipes;
	unsigned limit;
	struct log_limit refused;
};

struct control {
	struct control_handlers h;
	uv_async_t async;
	bool async_init;
	pthread_mutex_t lock;
	struct item *head, **tail;
	atomic_bool stopping;
	struct listener local;
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

static void peer_of(nng_pipe p, struct peer *ret)
{
	uint64_t v;

	memset(ret, 0, sizeof(*ret));
	ret->pipe_id = (uint32_t)nng_pipe_id(p);
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

/* ADD_PRE: admit @p while there is room, else close it at once. */
static void pipe_admit(struct listener *lst, nng_pipe p)
{
	struct pipe_rec rec = {
		.id = (uint32_t)nng_pipe_id(p),
		.listener = (uint32_t)nng_listener_id(nng_pipe_listener(p)),
	};
	char name[PEER_NAME_MAX];
	struct peer peer;
	unsigned n, limit;
	uint64_t pid;
	bool admit;

	/* fpgad's own probe (liveness.c): answered, so never a client. */
	if (nng_pipe_get_uint64(p, NNG_OPT_IPC_PEER_PID, &pid) == 0 &&
	    pid == (uint64_t)getpid()) {
		struct liveness *live = atomic_load(&lst->live);

		if (live)
			liveness_added(live);
		nng_pipe_close(p);
		return;
	}
	pthread_mutex_lock(&lst->pipes_lock);
	n = lst->n_pipes;
	limit = lst->limit;
	admit = n < limit && n < CONTROL_MAX_PIPES;
	if (admit)
		lst->pipes[lst->n_pipes++] = rec;
	pthread_mutex_unlock(&lst->pipes_lock);
	if (admit)
		return;
	peer_of(p, &peer);
	peer_name(&peer, name, sizeof(name));
	log_limited(&lst->refused, LOG_WARNING,
		    "control: refusing %s: %u connections on the local listener already (max_clients %u)",
		    name, n, limit);
	nng_pipe_close(p);
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
	peer_of(p, &it->peer);
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
	peer_of(nng_msg_get_pipe(msg), &it->peer);
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

void control_set_limits(struct control *ctl, const struct control_options *opt)
{
	struct listener *lst = &ctl->local;

	if (!lst->pipes)
		return;
	pthread_mutex_lock(&lst->pipes_lock);
	lst->limit = opt->max_clients;
	pthread_mutex_unlock(&lst->pipes_lock);
}

void control_close_pipe(struct control *ctl, uint32_t pipe_id)
{
	nng_pipe p = NNG_PIPE_INITIALIZER;

	(void)ctl;
	p.id = pipe_id;
	nng_pipe_close(p);
}

/* Connections of listener @id still admitted (*pipes_lock held). */
static unsigned pipes_of(const struct listener *lst, uint32_t id)
{
	unsigned n = 0;

	for (unsigned i = 0; i < lst->n_pipes; i++)
		n += lst->pipes[i].listener == id;
	return n;
}

/*
 * Close a replaced listener.  nng unlinks the path it was bound to, which
 * may be the socket path the new one was renamed to: a second name keeps
 * the live socket, and goes back over the path once the old is closed.
 */
static void retired_close(struct listener *lst, nng_listener l)
{
	char keep[sizeof(lst->path)];
	bool kept = false;

	if ((size_t)snprintf(keep, sizeof(keep), "%s.live", lst->path) < sizeof(keep)) {
		unlink(keep);
		kept = link(lst->path, keep) == 0;
	}
	nng_listener_close(l);
	if (kept && rename(keep, lst->path) < 0)
		log_err("control: cannot put %s back: %s; restart fpgad to listen again",
			lst->path, strerror(errno));
}

/* Close the replaced listeners whose last connection ended. */
static void retired_reap(struct listener *lst)
{
	unsigned i = 0, left;

	while (i < lst->n_retired) {
		pthread_mutex_lock(&lst->pipes_lock);
		left = pipes_of(lst, (uint32_t)nng_listener_id(lst->retired[i]));
		pthread_mutex_unlock(&lst->pipes_lock);
		if (left) {
			i++;
			continue;
		}
		retired_close(lst, lst->retired[i]);
		lst->retired[i] = lst->retired[--lst->n_retired];
	}
}

static int listener_bind(struct listener *lst, const char *url, nng_listener *ret)
{
	int rv;

	rv = nng_listener_create(ret, lst->sock, url);
	if (rv)
		return rv;
	rv = nng_listener_set_int(*ret, NNG_OPT_IPC_PERMISSIONS, (int)lst->mode);
	if (rv == 0)
		rv = nng_listener_start(*ret, 0);
	if (rv)
		nng_listener_close(*ret);
	return rv;
}

/* Give the socket file to the configured group, when there is one. */
static void socket_chown(const struct listener *lst, const char *path)
{
	if (lst->gid != (gid_t)-1 && chown(path, (uid_t)-1, lst->gid) < 0)
		log_warn("control: cannot give %s to group %u: %s; it keeps fpgad's group",
			 path, (unsigned)lst->gid, strerror(errno));
}

/* The probe found the listener dead (liveness.h): listen anew. */
static void listener_renew(void *arg)
{
	struct listener *lst = arg;
	char tmp[sizeof(lst->path)], url[sizeof(lst->path) + 8];
	nng_listener *more, l;
	int rv;

	log_warn("control: the listener on %s stopped accepting connections; listening anew (open connections stay)",
		 lst->path);
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", lst->path) >= sizeof(tmp)) {
		log_err("control: %s is too long to listen anew beside it; restart fpgad",
			lst->path);
		return;
	}
	more = realloc(lst->retired, (lst->n_retired + 1) * sizeof(*more));
	if (!more) {
		log_err("control: out of memory to listen anew on %s", lst->path);
		return;
	}
	lst->retired = more;
	unlink(tmp);
	snprintf(url, sizeof(url), "ipc://%s", tmp);
	rv = listener_bind(lst, url, &l);
	if (rv) {
		log_err("control: cannot listen on %s: %s", tmp, nng_strerror(rv));
		return;
	}
	socket_chown(lst, tmp);
	if (rename(tmp, lst->path) < 0) {
		log_err("control: cannot rename %s to %s: %s", tmp, lst->path,
			strerror(errno));
		nng_listener_close(l);
		return;
	}
	lst->retired[lst->n_retired++] = lst->l;
	lst->l = l;
	lst->renewals++;
	retired_reap(lst);
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
			retired_reap(&ctl->local);
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
			 const struct control_options *opt)
{
	lst->ctl = ctl;
	lst->limit = opt->max_clients;
	lst->mode = opt->socket_mode;
	lst->gid = opt->socket_gid;
	lst->pipes = calloc(CONTROL_MAX_PIPES, sizeof(*lst->pipes));
	if (!lst->pipes)
		return -ENOMEM;
	pthread_mutex_init(&lst->pipes_lock, NULL);
	log_limit_init(&lst->refused, "control: local refusals");
	return 0;
}

static void listener_fini(struct listener *lst)
{
	free(lst->retired);
	lst->retired = NULL;
	if (!lst->pipes)
		return;
	pthread_mutex_destroy(&lst->pipes_lock);
	log_limit_destroy(&lst->refused);
	free(lst->pipes);
	lst->pipes = NULL;
}

static int listener_start(struct control *ctl, struct listener *lst,
			  const char *url, const struct control_options *opt)
{
	int rv;

	if (listener_init(lst, ctl, opt) < 0) {
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
	rv = listener_bind(lst, url, &lst->l);
	if (rv)
		goto fail;
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

static void listener_close(struct listener *lst)
{
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
	/* A renewed listener was bound to another name: the path is fpgad's. */
	if (lst->renewals)
		unlink(lst->path);
}

/*
 * The socket first: once nng_close() returns no pipe callback runs, so
 * pipe_admit() no longer reads lst->live when the liveness probe goes.
 */
static void listener_stop(struct listener *lst)
{
	if (lst->open)
		listener_close(lst);
	liveness_stop(atomic_exchange(&lst->live, NULL));
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
	r = listener_start(ctl, &ctl->local, opt->local_url, opt);
	if (r < 0)
		goto fail;
	if (path) {
		struct listener *lst = &ctl->local;

		snprintf(lst->path, sizeof(lst->path), "%s", path);
		socket_chown(lst, path);
		struct liveness *live = NULL;

		r = liveness_start(loop, path, listener_renew, lst, &live);
		atomic_store(&lst->live, live);
		if (r < 0) {
			log_err("control: cannot watch the listener on %s: %s", path,
				strerror(-r));
			goto fail;
		}
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
