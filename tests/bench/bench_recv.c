// SPDX-License-Identifier: MIT
/*
 * bench_recv.c - the baseline of the network benchmark (tests/bench/net.sh):
 * a bare recvmmsg loop on a UDP socket, as large a receive buffer as
 * fpgad's, that only counts what arrives.  fpgad's receiving thread is
 * measured against it, fed by the same sender in the same run.
 *
 *   bench_recv ADDRESS [IDLE_MS]
 *
 * Prints "port N" once bound, then, IDLE_MS (default 500) after the last
 * datagram, one line: datagrams, payload bytes (datagram bytes less the
 * RoCE headers, as fpgad counts payload), seconds from the first to the
 * last datagram, and the loop's CPU seconds.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench_util.h"

#define BATCH 64
#define BUF 9217
/* BTH + RETH + iCRC: what a data packet carries besides its payload. */
#define HDRS 32

int main(int argc, char **argv)
{
	static unsigned char bufs[BATCH][BUF];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	int fd, size = 64 << 20, idle_ms = argc > 2 ? atoi(argv[2]) : 500;
	uint64_t pkts = 0, bytes = 0, first = 0, last = 0;
	struct rusage ru0, ru1;

	if (argc < 2 || inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) {
		fprintf(stderr, "usage: bench_recv IPV4ADDRESS [IDLE_MS]\n");
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0 &&
		       setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) < 0) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &alen) < 0) {
		perror("bench_recv");
		return 1;
	}
	printf("port %u\n", ntohs(a.sin_port));
	fflush(stdout);
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], BUF };
		msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1 };
	}
	getrusage(RUSAGE_THREAD, &ru0);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n;

		n = recvmmsg(fd, msgs, BATCH, MSG_DONTWAIT, NULL);
		if (n > 0) {
			last = bench_now_ns();
			if (!first)
				first = last;
			pkts += (uint64_t)n;
			for (int i = 0; i < n; i++)
				bytes += msgs[i].msg_len > HDRS ? msgs[i].msg_len - HDRS : 0;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			perror("bench_recv: recvmmsg");
			return 1;
		}
		if (poll(&p, 1, first ? idle_ms : 60000) == 0)
			break;
	}
	getrusage(RUSAGE_THREAD, &ru1);
	printf("datagrams=%" PRIu64 " payload_bytes=%" PRIu64 " seconds=%.6f cpu_seconds=%.6f\n",
	       pkts, bytes, (double)(last - first) / 1e9,
	       (double)(ru1.ru_utime.tv_sec - ru0.ru_utime.tv_sec) +
	       (double)(ru1.ru_utime.tv_usec - ru0.ru_utime.tv_usec) / 1e6 +
	       (double)(ru1.ru_stime.tv_sec - ru0.ru_stime.tv_sec) +
	       (double)(ru1.ru_stime.tv_usec - ru0.ru_stime.tv_usec) / 1e6);
	close(fd);
	return 0;
}
