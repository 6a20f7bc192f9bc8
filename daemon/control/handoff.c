// SPDX-License-Identifier: MIT
/* handoff.c - rings' file descriptors to their lessees (handoff.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control/fdclose.h"
#include "control/handoff.h"
#include "protocol.h"
#include "log.h"

/* A request is a token and a few bytes of framing. */
#define HANDOFF_MAX_REQUEST PROTOCOL_HANDOFF_MAX
/* The most descriptors one message can carry (the kernel's SCM_MAX_FD). */
#define HANDOFF_SCM_MAX_FD 253

struct hconn {
	struct hconn *next;
	struct handoff *h;
	int fd;
	uid_t uid;
	uv_poll_t poll;
	uv_timer_t timer;
	unsigned open_handles;
};

struct handoff {
	struct handoff_claimer claimers[HANDOFF_MAX_CLAIMERS];
	unsigned n_claimers;
	uv_loop_t *loop;
	int fd;
	uv_poll_t poll;
	bool poll_init;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct hconn *conns;
	unsigned n_conns;
	unsigned open_handles;	/* the listener's, plus one per live hconn */
	bool stopping;
};

static void handoff_release(struct handoff *h)
{
	if (--h->open_handles)
		return;
	free(h);
}

static void conn_closed(uv_handle_t *handle)
{
	struct hconn *c = handle->data;
	struct handoff *h = c->h;

	if (--c->open_handles)
		return;
	free(c);
	handoff_release(h);
}

/*
 * Forget @c; close its socket unless it was handed to a lease (what the
 * client queued on it is the client's: fdclose.h).
 */
static void conn_end(struct hconn *c, bool close_fd)
{
	struct handoff *h = c->h;

	for (struct hconn **pp = &h->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			h->n_conns--;
			break;
		}
	}
	/* uv_close stops polling at once: the fd may be closed after it. */
	uv_close((uv_handle_t *)&c->poll, conn_closed);
	uv_close((uv_handle_t *)&c->timer, conn_closed);
	if (close_fd)
		fdclose_untrusted(c->fd);
}

static void reply(int fd, int code, const char *msg, const int *fds,
		  unsigned n_fds, bool *ret_sent)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HANDOFF_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	uint8_t out[512];
	struct iovec iov;
	struct msghdr mh = { 0 };
	size_t len;

	*ret_sent = false;
	if (protocol_encode_handoff(code, msg, n_fds, out, sizeof(out),
				    &len) < 0)
		return;
	iov.iov_base = out;
	iov.iov_len = len;
	mh.msg_iov = &iov;
	mh.msg_iovlen = 1;
	if (n_fds) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * n_fds);
	}
	*ret_sent = sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) ==
		    (ssize_t)len;
}

/*
 * Receive one request and the descriptors that came with it (at most
 * HANDOFF_MAX_IN_FDS; any more are closed at once): its length, as recv().
 * Room for as many as a message can carry: the kernel would close any
 * that did not fit, in this thread, where the close could block.
 */
static ssize_t conn_recv(int fd, uint8_t *buf, size_t len, int *in_fds,
			 unsigned *ret_n_in)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HANDOFF_SCM_MAX_FD)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	unsigned n_in = 0;
	ssize_t n;

	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
	for (struct cmsghdr *cm = n >= 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		     k++) {
			int in;

			memcpy(&in, CMSG_DATA(cm) + k * sizeof(int), sizeof(in));
			if (n_in < HANDOFF_MAX_IN_FDS)
				in_fds[n_in++] = in;
			else
				fdclose_untrusted(in);
		}
	}
	*ret_n_in = n_in;
	return n;
}

static void close_fds(const int *fds, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		fdclose_untrusted(fds[i]);
}

/* One request on @c: answer it, and hand the connection on or close it. */
/* Who holds @token: the claimer that says so, asked in turn. */
static int claim(struct handoff *h, const uint8_t *token, size_t len,
		 const struct handoff_peer *peer, int *ret_fds, unsigned *ret_n_fds,
		 void **ret_target, const struct handoff_claimer **ret_by,
		 char *err, size_t errlen)
{
	if (len != HANDOFF_TOKEN_SIZE) {
		snprintf(err, errlen, "a token is %d bytes", HANDOFF_TOKEN_SIZE);
		return -EINVAL;
	}
	for (unsigned i = 0; i < h->n_claimers; i++) {
		const struct handoff_claimer *c = &h->claimers[i];
		int r = c->claim(c->user, token, peer, ret_fds, ret_n_fds,
				 ret_target, err, errlen);

		if (r == -ENOENT)
			continue;
		*ret_by = c;
		return r;
	}
	snprintf(err, errlen, "pid %d (uid %u): no lease holds that token (wrong, or already used)",
		 (int)peer->pid, (unsigned)peer->uid);
	return -ENOENT;
}

int handoff_add_claimer(struct handoff *h, const struct handoff_claimer *c)
{
	if (h->n_claimers >= HANDOFF_MAX_CLAIMERS)
		return -ENOSPC;
	h->claimers[h->n_claimers++] = *c;
	return 0;
}

static void conn_serve(struct hconn *c)
{
	struct handoff *h = c->h;
	uint8_t buf[HANDOFF_MAX_REQUEST], token[HANDOFF_TOKEN_SIZE];
	int fds[HANDOFF_MAX_FDS], in_fds[HANDOFF_MAX_IN_FDS], code;
	struct handoff_peer peer;
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	unsigned n_fds = 0, n_in = 0;
	char err[160] = "";
	size_t token_len;
	const struct handoff_claimer *by = NULL;
	void *lease = NULL;
	bool sent;
	ssize_t n;

	n = conn_recv(c->fd, buf, sizeof(buf), in_fds, &n_in);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		close_fds(in_fds, n_in);
		conn_end(c, true);
		return;
	}
	code = protocol_decode_handoff(buf, (size_t)n > sizeof(buf) ?
				       sizeof(buf) + 1 : (size_t)n,
				       token, &token_len, err, sizeof(err));
	if (code == 0 &&
	    getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0) {
		code = protocol_status_code(-errno);
		snprintf(err, sizeof(err), "no peer credentials: %s",
			 strerror(errno));
	}
	if (code == 0) {
		peer = (struct handoff_peer){ .pid = cred.pid, .uid = cred.uid,
					      .gid = cred.gid, .fds = in_fds,
					      .n_fds = n_in };
		code = protocol_status_code(claim(h, token, token_len, &peer, fds,
						  &n_fds, &lease, &by, err, sizeof(err)));
	}
	/* What the claim did not keep. */
	close_fds(in_fds, n_in);
	if (code != 0) {
		reply(c->fd, code, err, NULL, 0, &sent);
		log_notice("handoff: refused: %s", err);
		conn_end(c, true);
		return;
	}
	/* A claim may say something on success (a reply is never empty). */
	reply(c->fd, 0, err, fds, n_fds, &sent);
	if (!sent) {
		conn_end(c, true);
		return;
	}
	by->link(by->user, lease, c->fd);
	conn_end(c, false);
}

static void on_conn(uv_poll_t *p, int status, int events)
{
	struct hconn *c = p->data;

	(void)events;
	if (status < 0) {
		conn_end(c, true);
		return;
	}
	conn_serve(c);
}

static void on_conn_timeout(uv_timer_t *t)
{
	conn_end(t->data, true);
}

/* Whether @uid may have one more connection pending on @h. */
static bool conn_room_for(const struct handoff *h, uid_t uid)
{
	unsigned n = 0;

	if (h->n_conns >= HANDOFF_MAX_PENDING)
		return false;
	for (const struct hconn *c = h->conns; c; c = c->next)
		n += c->uid == uid;
	return n < HANDOFF_MAX_PENDING_UID;
}

static void conn_add(struct handoff *h, int fd)
{
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	struct hconn *c;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) < 0 ||
	    !conn_room_for(h, cred.uid) || !(c = calloc(1, sizeof(*c)))) {
		fdclose_untrusted(fd);
		return;
	}
	c->h = h;
	c->fd = fd;
	c->uid = cred.uid;
	if (uv_poll_init(h->loop, &c->poll, fd) < 0) {
		fdclose_untrusted(fd);
		free(c);
		return;
	}
	uv_timer_init(h->loop, &c->timer);
	c->poll.data = c->timer.data = c;
	c->open_handles = 2;
	h->open_handles++;
	c->next = h->conns;
	h->conns = c;
	h->n_conns++;
	uv_poll_start(&c->poll, UV_READABLE | UV_DISCONNECT, on_conn);
	uv_timer_start(&c->timer, on_conn_timeout, HANDOFF_TIMEOUT_MS, 0);
}

static void on_listen(uv_poll_t *p, int status, int events)
{
	struct handoff *h = p->data;

	(void)events;
	if (status < 0)
		return;
	/* A bounded batch per wake-up: the loop has other work. */
	for (unsigned i = 0; i < HANDOFF_MAX_PENDING; i++) {
		int fd = accept4(h->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		conn_add(h, fd);
	}
}

static void listener_closed(uv_handle_t *handle)
{
	handoff_release(handle->data);
}

int handoff_start(uv_loop_t *loop, const char *path, unsigned mode,
		  gid_t gid, struct handoff **ret_h)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct handoff *h;
	int r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->loop = loop;
	h->fd = -1;
	h->open_handles = 1;
	snprintf(h->path, sizeof(h->path), "%s", path);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	h->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC,
		       0);
	if (h->fd < 0) {
		r = -errno;
		goto fail;
	}
	unlink(path);
	if (bind(h->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, mode) < 0 ||
	    (gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) ||
	    listen(h->fd, HANDOFF_MAX_PENDING) < 0) {
		r = -errno;
		goto fail;
	}
	r = uv_poll_init(loop, &h->poll, h->fd);
	if (r < 0)
		goto fail;
	h->poll_init = true;
	h->poll.data = h;
	uv_poll_start(&h->poll, UV_READABLE, on_listen);
	*ret_h = h;
	return 0;
fail:
	log_err("handoff: cannot listen on %s: %s", path, strerror(-r));
	handoff_stop(h);
	return r;
}

void handoff_stop(struct handoff *h)
{
	if (!h || h->stopping)
		return;
	h->stopping = true;
	while (h->conns)
		conn_end(h->conns, true);
	if (h->poll_init)
		uv_close((uv_handle_t *)&h->poll, listener_closed);
	if (h->fd >= 0) {
		close(h->fd);
		unlink(h->path);
	}
	if (!h->poll_init)
		handoff_release(h);
}

/* --- tokens ------------------------------------------------------------------ */

int handoff_token_make(struct handoff_token *t)
{
	ssize_t n = getrandom(t->bytes, sizeof(t->bytes), 0);

	t->valid = n == (ssize_t)sizeof(t->bytes);
	return t->valid ? 0 : -EAGAIN;
}

int handoff_token_claim(struct handoff_token *t, const uint8_t *token,
			const struct handoff_peer *peer, pid_t pid, uid_t uid,
			const char *what, char *err, size_t errlen)
{
	if (!t->valid || memcmp(t->bytes, token, sizeof(t->bytes)) != 0)
		return -ENOENT;
	if (peer->pid != pid || peer->uid != uid) {
		snprintf(err, errlen, "%s is pid %d's, not pid %d's (uid %u)", what,
			 (int)pid, (int)peer->pid, (unsigned)peer->uid);
		return -EACCES;
	}
	t->valid = false;
	return 0;
}
