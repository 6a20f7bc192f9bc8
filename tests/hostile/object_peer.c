// SPDX-License-Identifier: MIT
/*
 * object_peer.c - a group member that hands fpgad objects meant to hurt
 * it: memory that faults under fpgad's copy, descriptors whose last close
 * blocks, and more idle handoff connections than its share.  It reports
 * what fpgad answered; fpgad's own health is checked by the caller.
 *
 *   object_peer memory URL hugetlb|sparse|punch register a host buffer of
 *	that kind; if fpgad takes it, punch it empty (hugetlb: and take
 *	every free huge page) and READ into it
 *   object_peer linger URL handoff-fds|handoff-queued|lease CHANNEL|xfer
 *	hand fpgad a TCP socket with unsent data and SO_LINGER {1, 30}
 *	along that path and let fpgad close the last reference; holds the
 *	socket's listener until stdin ends
 *   object_peer regions URL      two connections at once, each with its
 *	transfer queue: the second writes a pattern at card address 0, the
 *	first reads its own address 0; prints whether it saw the pattern
 *   object_peer flood HANDOFF_PATH N     N idle connections to the
 *	handoff socket, reopened as fpgad closes them, until stdin ends
 *
 * The memory kinds reach fpgad through libfpgad's own host buffers: this
 * program's memfd_create() and posix_fallocate(), which libfpgad calls,
 * make the memfd hugetlb or leave it sparse.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "client_internal.h"
#include "fpgad.h"

#define HUGE_LEN (2u << 20)

static bool mem_hugetlb, mem_sparse;
static int last_memfd = -1;

int memfd_create(const char *name, unsigned int flags)
{
	if (mem_hugetlb)
		flags |= MFD_HUGETLB;
	last_memfd = (int)syscall(SYS_memfd_create, name, flags);
	return last_memfd;
}

int posix_fallocate(int fd, off_t off, off_t len)
{
	if (mem_sparse)
		return 0;
	return fallocate(fd, 0, off, len) < 0 ? errno : 0;
}

static void wait_stdin_end(void)
{
	char c;

	while (read(0, &c, 1) > 0)
		;
}

/* Take every free huge page: a hugetlb memfd as large as they are. */
static void take_huge_pages(void)
{
	int fd = (int)syscall(SYS_memfd_create, "hog", MFD_HUGETLB);
	size_t n = 0;

	while (fd >= 0 && fallocate(fd, 0, (off_t)(n * HUGE_LEN), HUGE_LEN) == 0)
		n++;
	printf("hog: took %zu huge pages\n", n);
}

static int cmd_memory(const char *url, const char *kind)
{
	fpgad_client *c;
	fpgad_buffer *b;
	int r;

	mem_hugetlb = strcmp(kind, "hugetlb") == 0;
	mem_sparse = strcmp(kind, "sparse") == 0;
	if (fpgad_connect(url, &c) < 0)
		return 2;
	r = fpgad_buffer_alloc_host(c, HUGE_LEN, &b);
	printf("register: %d %s\n", r, r ? fpgad_errmsg(c) : "ok");
	fflush(stdout);
	if (r == 0) {
		if (fallocate(last_memfd, FALLOC_FL_PUNCH_HOLE |
			      FALLOC_FL_KEEP_SIZE, 0, HUGE_LEN) < 0)
			printf("punch: %s\n", strerror(errno));
		if (mem_hugetlb)
			take_huge_pages();
		fflush(stdout);
		r = fpgad_read(b, 0, 0, 4096, 5000);
		printf("read: %d %s\n", r, r ? fpgad_errmsg(c) : "ok");
		fpgad_buffer_unregister(b);
	}
	fpgad_disconnect(c);
	return 0;
}

/*
 * A TCP connection to a listener that never accepts nor reads, its
 * buffers full, SO_LINGER {1, 30}: its last close() sleeps 30 s.
 * *@ret_listener keeps the other end alive.
 */
static int lingering_socket(int *ret_listener)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct linger lg = { 1, 30 };
	socklen_t slen = sizeof(sa);
	int small = 4096, l, s;
	char junk[4096] = { 0 };

	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(l, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (l < 0 || bind(l, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&sa, &slen) < 0)
		return -1;
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	if (s < 0 || connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	while (send(s, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
	setsockopt(s, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	*ret_listener = l;
	return s;
}

/* @mh: one message of @len bytes, with @fd attached when >= 0. */
static void msg_with_fd(struct msghdr *mh, struct iovec *iov, char *ctl,
			size_t ctl_len, const void *buf, size_t len, int fd)
{
	struct cmsghdr *cm;

	iov->iov_base = (void *)buf;
	iov->iov_len = len;
	*mh = (struct msghdr){ .msg_iov = iov, .msg_iovlen = 1 };
	if (fd < 0)
		return;
	memset(ctl, 0, ctl_len);
	mh->msg_control = ctl;
	mh->msg_controllen = CMSG_SPACE(sizeof(int));
	cm = CMSG_FIRSTHDR(mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(fd));
}

/*
 * Send @n_plain messages of @buf, then one with @fd, in one call: fpgad
 * reads the first before it can end the connection on the last.
 */
static int send_with_fd(int sock, const void *buf, size_t len,
			unsigned n_plain, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl[2];
	struct mmsghdr mm[2];
	struct iovec iov[2];
	unsigned n = 0;

	memset(mm, 0, sizeof(mm));
	if (n_plain)
		msg_with_fd(&mm[n].msg_hdr, &iov[n], ctl[n].buf,
			    sizeof(ctl[n].buf), buf, len, -1), n++;
	msg_with_fd(&mm[n].msg_hdr, &iov[n], ctl[n].buf, sizeof(ctl[n].buf),
		    buf, len, fd);
	n++;
	errno = 0;
	if (sendmmsg(sock, mm, n, MSG_NOSIGNAL) == (int)n)
		return 0;
	return errno ? -errno : -EPIPE;	/* not all of them went */
}

/* Drop our copy of @s; if it never reached fpgad, without lingering. */
static void drop_socket(int s, int failed)
{
	struct linger off = { 0, 0 };

	if (failed)
		setsockopt(s, SOL_SOCKET, SO_LINGER, &off, sizeof(off));
	close(s);
}

static int dial_handoff(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (s >= 0 && connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(s);
		return -1;
	}
	return s;
}

/* A transfer queue's link, from OpenXferQueue and its handoff. */
static int xfer_link(fpgad_client *c)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenXferQueueRequest body = FPGAD__OPEN_XFER_QUEUE_REQUEST__INIT;
	Fpgad__Response *resp;
	int fds[2], link = -1;

	req.body_case = FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE;
	req.open_xfer_queue = &body;
	if (conn_transact(c, &req, &resp) < 0)
		return -1;
	if (handoff_exchange(c, resp->open_xfer_queue->handoff_path,
			     &resp->open_xfer_queue->handoff_token, NULL, 0,
			     fds, 2, &link) == 0) {
		close(fds[0]);
		close(fds[1]);
	}
	fpgad__response__free_unpacked(resp, NULL);
	return link;
}

static int cmd_linger(const char *url, const char *path, const char *how,
		      const char *channel)
{
	static const char garbage[] = "not a handoff request";
	int listener, s, r = -EINVAL;
	fpgad_client *c = NULL;
	fpgad_channel *ch;

	s = lingering_socket(&listener);
	if (s < 0) {
		perror("lingering socket");
		return 2;
	}
	if (strcmp(how, "handoff-fds") == 0 ||
	    strcmp(how, "handoff-queued") == 0) {
		bool queued = how[8] == 'q';

		/*
		 * The second message waits in the queue fpgad closes.  Where
		 * fpgad ended the connection before it went, again.
		 */
		for (int i = 0; i < 20 && r; i++) {
			int h = dial_handoff(path);

			r = send_with_fd(h, garbage, sizeof(garbage), queued, s);
			if (h >= 0)
				close(h);
		}
		drop_socket(s, r);
	} else if (fpgad_connect(url, &c) == 0) {
		if (strcmp(how, "lease") == 0 && channel &&
		    fpgad_channel_open(c, channel, 0, &ch) == 0) {
			r = send_with_fd(ch->link, garbage, sizeof(garbage), 0, s);
			drop_socket(s, r);
			fpgad_channel_close(ch);
		} else if (strcmp(how, "xfer") == 0) {
			int link = xfer_link(c);

			r = send_with_fd(link, garbage, sizeof(garbage), 0, s);
			drop_socket(s, r);
			close(link);
		}
		fpgad_disconnect(c);
	}
	printf("sent: %s\n", r ? strerror(-r) : "ok");
	fflush(stdout);
	wait_stdin_end();
	close(listener);
	return r ? 1 : 0;
}

static int cmd_regions(const char *url)
{
	fpgad_client *c[2] = { NULL, NULL };
	fpgad_buffer *b[2] = { NULL, NULL };
	unsigned char *w, *r;
	int ret = 2;

	for (int i = 0; i < 2; i++)
		if (fpgad_connect(url, &c[i]) < 0 ||
		    fpgad_buffer_alloc_host(c[i], 4096, &b[i]) < 0)
			goto out;
	/* Queues in order: the first connection's is made first. */
	r = fpgad_buffer_data(b[0]);
	w = fpgad_buffer_data(b[1]);
	if (fpgad_read(b[0], 0, 0, 4096, 5000) < 0)
		goto out;
	memset(w, 0xa5, 4096);
	if (fpgad_write(b[1], 0, 0, 4096, 5000) < 0 ||
	    fpgad_read(b[0], 0, 0, 4096, 5000) < 0)
		goto out;
	printf("first queue at 0: %s\n", r[0] == 0xa5 ? "the second's bytes" :
	       "its own");
	ret = 0;
out:
	if (ret)
		printf("regions: %s\n", c[0] ? fpgad_errmsg(c[0]) : "no connection");
	for (int i = 0; i < 2; i++) {
		fpgad_buffer_unregister(b[i]);
		fpgad_disconnect(c[i]);
	}
	return ret;
}

/* N idle connections, each reopened once fpgad closes it. */
static int cmd_flood(const char *path, unsigned n)
{
	struct pollfd *p = calloc(n, sizeof(*p));
	unsigned reopened = 0, open = 0;

	if (!p)
		return 2;
	for (unsigned i = 0; i < n; i++) {
		p[i].fd = dial_handoff(path);
		p[i].events = POLLIN;
		open += p[i].fd >= 0;
	}
	printf("open=%u\n", open);
	fflush(stdout);
	for (;;) {
		struct pollfd in = { .fd = 0, .events = POLLIN };

		if (poll(&in, 1, 0) > 0)
			break;
		poll(p, n, 100);
		for (unsigned i = 0; i < n; i++) {
			if (p[i].fd >= 0 && !p[i].revents)
				continue;
			if (p[i].fd >= 0)
				close(p[i].fd);
			p[i].fd = dial_handoff(path);
			reopened++;
		}
	}
	printf("reopened=%u\n", reopened);
	for (unsigned i = 0; i < n; i++)
		if (p[i].fd >= 0)
			close(p[i].fd);
	free(p);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "memory") == 0)
		return cmd_memory(argv[2], argv[3]);
	if (argc >= 5 && strcmp(argv[1], "linger") == 0)
		return cmd_linger(argv[2], argv[3], argv[4],
				  argc > 5 ? argv[5] : NULL);
	if (argc == 3 && strcmp(argv[1], "regions") == 0)
		return cmd_regions(argv[2]);
	if (argc == 4 && strcmp(argv[1], "flood") == 0)
		return cmd_flood(argv[2], (unsigned)strtoul(argv[3], NULL, 10));
	fprintf(stderr, "usage: object_peer memory URL hugetlb|sparse|punch | "
		"linger URL HANDOFF_PATH handoff-fds|handoff-queued|lease CHANNEL|xfer | "
		"regions URL | flood HANDOFF_PATH N\n");
	return 2;
}
