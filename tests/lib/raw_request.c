// SPDX-License-Identifier: MIT
/*
 * raw_request.c - one control request sent as its protobuf bytes
 * (raw_request.h).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "raw_request.h"

Fpgad__Response *raw_transact(nng_socket s, Fpgad__Request *req)
{
	Fpgad__Response *resp;
	uint8_t buf[512];
	nng_msg *m;
	size_t len;

	if (fpgad__request__get_packed_size(req) > sizeof(buf))
		return NULL;
	len = fpgad__request__pack(req, buf);
	if (nng_send(s, buf, len, 0) != 0 || nng_recvmsg(s, &m, 0) != 0)
		return NULL;
	resp = fpgad__response__unpack(NULL, nng_msg_len(m), nng_msg_body(m));
	nng_msg_free(m);
	return resp;
}

int raw_handoff(const char *path, const ProtobufCBinaryData *token, int *fds,
		unsigned max, unsigned *ret_n, int *ret_sock)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	Fpgad__HandoffRequest req = FPGAD__HANDOFF_REQUEST__INIT;
	Fpgad__HandoffReply *rep;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t out[128], in[512];
	struct iovec iov = { .iov_base = out };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	unsigned n = 0;
	ssize_t got;
	int sock, code;

	req.token = *token;
	if (fpgad__handoff_request__get_packed_size(&req) > sizeof(out) ||
	    strlen(path) >= sizeof(sa.sun_path) || max > 4)
		return -EINVAL;
	iov.iov_len = fpgad__handoff_request__pack(&req, out);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0)
		return -errno;
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    sendmsg(sock, &mh, MSG_NOSIGNAL) < 0) {
		code = -errno;
		close(sock);
		return code;
	}
	iov.iov_base = in;
	iov.iov_len = sizeof(in);
	mh.msg_control = ctl.buf;
	mh.msg_controllen = sizeof(ctl.buf);
	got = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	for (struct cmsghdr *cm = got > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cm;
	     cm = CMSG_NXTHDR(&mh, cm))
		for (size_t k = 0; cm->cmsg_type == SCM_RIGHTS &&
		     k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); k++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + k * sizeof(int), sizeof(fd));
			if (n < max)
				fds[n++] = fd;
			else
				close(fd);
		}
	rep = got > 0 ? fpgad__handoff_reply__unpack(NULL, (size_t)got, in) : NULL;
	code = !rep ? -EBADMSG : rep->code ? -EACCES : 0;
	if (rep)
		fpgad__handoff_reply__free_unpacked(rep, NULL);
	if (code) {
		while (n)
			close(fds[--n]);
		close(sock);
		return code;
	}
	*ret_n = n;
	*ret_sock = sock;
	return 0;
}
