// SPDX-License-Identifier: MIT
/*
 * ring_peer.c - a hostile lessee, written as anyone could from
 * proto/fpgad.proto: it leases a channel, fetches its rings' descriptors
 * from the handoff socket, then does everything a lessee can do to them:
 * truncate and grow them, map the c2h data ring writable, scribble random
 * words over the descriptor ring while frames flow, claim and release what
 * it never held.  It reports what the kernel refused and what it did, and
 * exits 0 when every refusal the design promises happened:
 *
 *   ring_peer URL CHANNEL SECONDS
 *
 * fpgad's own health is checked by the caller afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "fpgad.h"
#include "fpgad.pb-c.h"
#include "raw_request.h"

static int failures;

static void expect(int ok, const char *what)
{
	printf("%s: %s\n", ok ? "ok" : "NOT OK", what);
	failures += !ok;
}

/* The handoff, by hand: two descriptors (host memory) or one. */
static int handoff(const Fpgad__OpenChannelReply *o, int *fds, int *ret_n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	Fpgad__HandoffRequest req = FPGAD__HANDOFF_REQUEST__INIT;
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	uint8_t out[128], in[256];
	struct iovec iov = { .iov_base = in, .iov_len = sizeof(in) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *cm;
	size_t len;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", o->handoff_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	req.token = o->handoff_token;
	len = fpgad__handoff_request__pack(&req, out);
	if (send(fd, out, len, 0) != (ssize_t)len || recvmsg(fd, &mh, 0) <= 0)
		return -EIO;
	*ret_n = 0;
	for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
		for (size_t k = 0; k < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int) &&
		     *ret_n < 4; k++)
			memcpy(&fds[(*ret_n)++], CMSG_DATA(cm) + k * sizeof(int),
			       sizeof(int));
	return fd;	/* the link: kept open */
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

int main(int argc, char **argv)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__Hello hello = FPGAD__HELLO__INIT;
	Fpgad__OpenChannelRequest open = FPGAD__OPEN_CHANNEL_REQUEST__INIT;
	Fpgad__Response *resp;
	int fds[4], n = 0, link;
	uint64_t seed = 0x9e3779b97f4a7c15ull, desc_size, ring_size;
	uint64_t *desc;
	time_t end;
	nng_socket s;
	struct stat st;
	void *m;

	if (argc != 4) {
		fprintf(stderr, "usage: ring_peer URL CHANNEL SECONDS\n");
		return 2;
	}
	if (nng_req0_open(&s) != 0 || nng_dial(s, argv[1], NULL, 0) != 0) {
		fprintf(stderr, "ring_peer: cannot reach %s\n", argv[1]);
		return 1;
	}
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 5000);
	hello.version = hello.min_version = FPGAD_PROTOCOL_VERSION;
	req.id = 1;
	req.body_case = FPGAD__REQUEST__BODY_HELLO;
	req.hello = &hello;
	resp = raw_transact(s, &req);
	if (!resp || resp->code)
		return 1;
	fpgad__response__free_unpacked(resp, NULL);
	open.name = argv[2];
	req.id = 2;
	req.body_case = FPGAD__REQUEST__BODY_OPEN_CHANNEL;
	req.open_channel = &open;
	resp = raw_transact(s, &req);
	if (!resp || resp->code || strcmp(resp->open_channel->memory, "host")) {
		fprintf(stderr, "ring_peer: OpenChannel: %s\n",
			resp ? resp->message : "no reply");
		return 1;
	}
	desc_size = resp->open_channel->desc_size;
	ring_size = resp->open_channel->ring_size;
	link = handoff(resp->open_channel, fds, &n);
	expect(link >= 0 && n == 2, "the handoff gives the descriptor ring and the data ring");
	if (link < 0 || n != 2)
		return 1;
	/* A second claim of the same token is refused. */
	{
		int fds2[4], n2 = 0, l2 = handoff(resp->open_channel, fds2, &n2);

		expect(n2 == 0, "a token is good for one handoff only");
		if (l2 >= 0)
			close(l2);
	}
	fpgad__response__free_unpacked(resp, NULL);

	/* What would make fpgad's own mappings fault: all refused. */
	for (int i = 0; i < 2; i++) {
		expect(ftruncate(fds[i], 0) < 0 && errno == EPERM,
		       i ? "truncating the data ring: EPERM" :
			   "truncating the descriptor ring: EPERM");
		expect(ftruncate(fds[i], 1 << 30) < 0 && errno == EPERM,
		       i ? "growing the data ring: EPERM" :
			   "growing the descriptor ring: EPERM");
		expect(fcntl(fds[i], F_ADD_SEALS, F_SEAL_WRITE) < 0,
		       "changing the seals: refused");
	}
	expect(fstat(fds[1], &st) == 0 && (uint64_t)st.st_size >= ring_size,
	       "the data ring is as large as fpgad said");
	m = mmap(NULL, ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
	if (m == MAP_FAILED)
		expect(errno == EPERM, "mapping the c2h data ring writable: EPERM");
	else
		printf("note: this kernel lets a lessee write into the frames it "
		       "reads (no F_SEAL_FUTURE_WRITE)\n");

	/* Scribble over the descriptor ring while frames flow. */
	desc = mmap(NULL, desc_size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[0], 0);
	expect(desc != MAP_FAILED, "the descriptor ring maps read-write");
	if (desc == MAP_FAILED)
		return 1;
	end = time(NULL) + atoi(argv[3]);
	while (time(NULL) < end) {
		for (unsigned k = 0; k < 1000; k++)
			desc[rnd(&seed) % (desc_size / 8)] = rnd(&seed);
		usleep(1000);
	}
	munmap(desc, desc_size);
	printf("ring_peer: %d refusals missing\n", failures);
	close(link);
	nng_close(s);
	return failures ? 1 : 0;
}
