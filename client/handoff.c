// SPDX-License-Identifier: MIT
/*
 * handoff.c - the client's end of fpgad's handoff socket (proto/fpgad.proto,
 * HandoffRequest): present a token, send descriptors with it and receive
 * the ones fpgad hands over, and map what came.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "client_internal.h"
#include "clock.h"

#define HANDOFF_MAX_FDS 2
/* A handoff fpgad reset: the pauses before trying again. */
#define HANDOFF_RETRY_MIN_MS 5
#define HANDOFF_RETRY_MAX_MS 80

static int handoff_fail(fpgad_client *c, int r, const char *fmt,
			const char *what)
{
	conn_set_errmsg(c, fmt, what, strerror(-r));
	conn_log(c, FPGAD_LOG_ERR, "%s", c->errmsg);
	return r;
}

/* Send the request for @token with @send_fds (n_send of them) attached. */
static int handoff_send(int sock, const ProtobufCBinaryData *token,
			const int *send_fds, unsigned n_send)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HANDOFF_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	Fpgad__HandoffRequest req = FPGAD__HANDOFF_REQUEST__INIT;
	uint8_t out[128];
	struct iovec iov = { .iov_base = out };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t len;

	req.token = *token;
	len = fpgad__handoff_request__get_packed_size(&req);
	if (len > sizeof(out) || n_send > HANDOFF_MAX_FDS)
		return -EBADMSG;
	iov.iov_len = fpgad__handoff_request__pack(&req, out);
	if (n_send) {
		struct cmsghdr *cm;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_send);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * n_send);
		memcpy(CMSG_DATA(cm), send_fds, sizeof(int) * n_send);
	}
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -errno;
}

/*
 * Connect to @sa, send the request and take the reply with its
 * descriptors: the socket, connected, in @ret_sock even on failure.
 */
static int handoff_try(fpgad_client *c, const struct sockaddr_un *sa,
		       const ProtobufCBinaryData *token, const int *send_fds,
		       unsigned n_send, int *fds, unsigned want, int *ret_sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HANDOFF_MAX_FDS)];
		struct cmsghdr align;
	} ctl;
	Fpgad__HandoffReply *rep;
	uint8_t in[512];
	struct iovec iov = { .iov_base = in, .iov_len = sizeof(in) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	unsigned got = 0;
	ssize_t n;
	int sock, r;

	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	*ret_sock = sock;
	if (sock < 0 || connect(sock, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		return handoff_fail(c, -errno, "cannot reach fpgad's handoff socket %s: %s",
				    sa->sun_path);
	r = handoff_send(sock, token, send_fds, n_send);
	if (r)
		return handoff_fail(c, r, "handoff %s: %s", sa->sun_path);
	do {
		n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return handoff_fail(c, n < 0 ? -errno : -ECONNRESET, "handoff %s: %s",
				    sa->sun_path);
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(fd));
			if (got < want)
				fds[got++] = fd;
			else
				close(fd);
		}
	}
	rep = fpgad__handoff_reply__unpack(NULL, (size_t)n, in);
	if (!rep) {
		r = handoff_fail(c, -EBADMSG, "fpgad's handoff reply is malformed%s: %s", "");
	} else if (rep->code != FPGAD__STATUS_CODE__STATUS_OK) {
		conn_set_errmsg(c, "%s", rep->message);
		r = conn_status_errno(rep->code);
	} else if (rep->n_fds != want || got != want) {
		r = handoff_fail(c, -EBADMSG, "fpgad handed over the wrong descriptors%s: %s", "");
	} else {
		r = 0;
	}
	if (rep)
		fpgad__handoff_reply__free_unpacked(rep, NULL);
	if (r < 0)
		while (got)
			close(fds[--got]);
	return r;
}

int handoff_exchange(fpgad_client *c, const char *path,
		     const ProtobufCBinaryData *token, const int *send_fds,
		     unsigned n_send, int *fds, unsigned want, int *ret_link)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint64_t deadline = clock_deadline_ns(c->timeout_ms);
	unsigned pause_ms = HANDOFF_RETRY_MIN_MS;
	int sock, left, r;

	if (!token->len || !path || !path[0] || strlen(path) >= sizeof(sa.sun_path))
		return handoff_fail(c, -EBADMSG, "fpgad named no handoff socket%s: %s", "");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	for (;;) {
		r = handoff_try(c, &sa, token, send_fds, n_send, fds, want, &sock);
		if (r == 0 && ret_link) {
			*ret_link = sock;
			return 0;
		}
		if (sock >= 0)
			close(sock);
		/*
		 * fpgad closed the connection before it read the token (its
		 * pending handoffs were full, or it timed out): the token is
		 * still good, so try again while the timeout lasts.
		 */
		left = clock_ms_left(deadline);
		if ((r != -ECONNRESET && r != -EPIPE && r != -EAGAIN) ||
		    (left >= 0 && left < (int)pause_ms))
			return r;
		usleep(pause_ms * 1000);
		if (pause_ms < HANDOFF_RETRY_MAX_MS)
			pause_ms *= 2;
	}
}

int handoff_map(int fd, uint64_t len, int prot, void **ret_map)
{
	struct stat st;
	void *map;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!len || (uint64_t)st.st_size < len)
		return -EBADMSG;
	map = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -errno;
	*ret_map = map;
	return 0;
}
