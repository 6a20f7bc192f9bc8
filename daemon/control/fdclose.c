// SPDX-License-Identifier: MIT
/*
 * fdclose.c - closing what a client handed fpgad without letting it block
 * fpgad (fdclose.h).
 *
 * A unix socket is drained after shutdown(): nothing new can be queued
 * then, and with SO_PASSCRED every message received carries credentials,
 * so a return of 0 without them is the end of the queue, not an empty
 * message.  What a drain turns up goes on a work list rather than into
 * recursion: a client can nest sockets in sockets.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control/fdclose.h"

/* SCM_MAX_FD: the most descriptors one message carries. */
#define FDCLOSE_MAX_PER_MSG 253
/* Messages drained from one socket at most: a bound, never reached. */
#define FDCLOSE_MAX_MSGS 65536

struct fdclose_list {
	int *fd;
	size_t n, cap;
};

/* Queue @fd for closing; with no room, close it at once (best effort). */
static void fdclose_push(struct fdclose_list *l, int fd)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		int *p = realloc(l->fd, cap * sizeof(*p));

		if (!p) {
			close(fd);
			return;
		}
		l->fd = p;
		l->cap = cap;
	}
	l->fd[l->n++] = fd;
}

/*
 * Take one message off @fd, its descriptors onto @l: false at the end of
 * the queue.
 */
static bool fdclose_drain_one(int fd, struct fdclose_list *l)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * FDCLOSE_MAX_PER_MSG) +
			 CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} ctl;
	char data[4096];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	bool creds = false;
	ssize_t n;

	n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return false;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
	     cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET)
			continue;
		if (cm->cmsg_type == SCM_CREDENTIALS)
			creds = true;
		if (cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		     k++) {
			int in;

			memcpy(&in, CMSG_DATA(cm) + k * sizeof(int), sizeof(in));
			fdclose_push(l, in);
		}
	}
	return n > 0 || creds;
}

/* Make @fd's close unable to block; what it held goes onto @l. */
static void fdclose_disarm(int fd, struct fdclose_list *l)
{
	struct linger off = { 0, 0 };
	int domain, one = 1;
	socklen_t len = sizeof(domain);

	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &off, sizeof(off)) < 0)
		return;		/* not a socket */
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	    domain != AF_UNIX)
		return;
	shutdown(fd, SHUT_RDWR);
	setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
	for (unsigned i = 0; i < FDCLOSE_MAX_MSGS; i++)
		if (!fdclose_drain_one(fd, l))
			break;
}

void fdclose_untrusted(int fd)
{
	struct fdclose_list l = { 0 };

	if (fd < 0)
		return;
	fdclose_push(&l, fd);
	while (l.n) {
		int next = l.fd[--l.n];

		fdclose_disarm(next, &l);
		close(next);
	}
	free(l.fd);
}
