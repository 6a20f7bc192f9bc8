// SPDX-License-Identifier: MIT
/*
 * hsb_sender.c - a network-attached FPGA for tests and benchmarks: sends
 * frames of the sim frame format (fpgad_simframe.h, so every verifier
 * works) to a network channel as HSB's IP does (hsb_tx.h), over UDP, at a
 * rate, with faults on chosen frames.
 *
 *   hsb_sender --to ADDR:PORT --frame BYTES --slots N [--from ADDR]
 *              [--mtu N] [--qpn N] [--rkey N] [--count N] [--rate FPS]
 *              [--seconds S] [--fault KIND --every K [--alt-from ADDR]]
 *
 * --frame and --slots are the channel's frame_size and slots (the target
 * layout follows from them, net_layout()).  A fault hits every K-th frame:
 *   drop       its second packet is not sent (lost)
 *   dup        its second packet is sent twice
 *   reorder    its first two packets are swapped
 *   lose-imm   its WRITE with Immediate is not sent (two frames merge)
 *   bad-rkey   a foreign frame with another R_Key is sent before it
 *   bad-qpn    a foreign frame to another QP is sent before it
 *   wrong-sender  a foreign frame from --alt-from is sent before it
 * Foreign frames use their own PSNs and frame numbers: they stand for
 * another sender.
 *
 * RoCE mode (--rdma-dev DEV, hsb_verbs.h): the same frames through a UC QP
 * from --from to --to's QP --qpn (fpgad's, from fpgactl stats), --mtu the
 * path MTU and the payload of each WRITE.  The NIC numbers the packets,
 * so: drop and lose-imm leave a packet unsent (its PSN still counted in
 * the immediates), dup writes one twice (harmless), reorder sends the
 * WRITE with Immediate before the frame's last packet, bad-qpn and
 * wrong-sender go through a second QP (to QPN ^ 0x800000, none there, or
 * from --alt-from).  At the end one line: what was sent, for the test to
 * check fpgad's counters against.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config/config.h"
#include "device/net/net.h"
#include "fpgad_simframe.h"
#include "hsb_tx.h"
#include "hsb_verbs.h"

enum fault { F_NONE, F_DROP, F_DUP, F_REORDER, F_LOSE_IMM, F_BAD_RKEY,
	     F_BAD_QPN, F_WRONG_SENDER };
static const char *const fault_names[] = {
	"none", "drop", "dup", "reorder", "lose-imm", "bad-rkey", "bad-qpn",
	"wrong-sender",
};

struct opts {
	const char *to, *from, *alt_from;
	uint64_t frame;
	unsigned slots, mtu, every;
	uint32_t qpn, rkey;
	uint64_t count;
	unsigned rate;
	double seconds;
	enum fault fault;
	const char *rdma_dev;		/* RoCE mode */
};

struct sender {
	struct opts o;
	int fd, alt_fd;
	uint8_t *pkts;			/* one frame's packets */
	size_t *lens;
	struct mmsghdr *msgs;
	struct iovec *iov;
	void *frame, *pattern;
	uint64_t pattern_size;
	uint64_t sent_frames, sent_packets, faulted, foreign_packets;
	struct hsb_verbs *verbs;
};

static int usage(void)
{
	fprintf(stderr, "usage: hsb_sender --to ADDR:PORT --frame BYTES --slots N [--from ADDR]\n"
		"  [--mtu N] [--qpn N] [--rkey N] [--count N] [--rate FPS] [--seconds S]\n"
		"  [--fault drop|dup|reorder|lose-imm|bad-rkey|bad-qpn|wrong-sender --every K\n"
		"   [--alt-from ADDR]] [--rdma-dev DEV (RoCE: --to ADDR, --qpn fpgad's)]\n");
	return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "to", 1, NULL, 't' }, { "from", 1, NULL, 'f' },
		{ "alt-from", 1, NULL, 'a' }, { "frame", 1, NULL, 'F' },
		{ "slots", 1, NULL, 's' }, { "mtu", 1, NULL, 'm' },
		{ "qpn", 1, NULL, 'q' }, { "rkey", 1, NULL, 'k' },
		{ "count", 1, NULL, 'n' }, { "rate", 1, NULL, 'r' },
		{ "seconds", 1, NULL, 'S' }, { "fault", 1, NULL, 'x' },
		{ "every", 1, NULL, 'e' }, { "rdma-dev", 1, NULL, 'R' }, { 0 },
	};
	int c;

	*o = (struct opts){ .mtu = 1500, .qpn = 0x100, .every = 1 };
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 't': o->to = optarg; break;
		case 'f': o->from = optarg; break;
		case 'a': o->alt_from = optarg; break;
		case 'F': o->frame = strtoull(optarg, NULL, 0); break;
		case 's': o->slots = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'm': o->mtu = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'q': o->qpn = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'k': o->rkey = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'n': o->count = strtoull(optarg, NULL, 0); break;
		case 'r': o->rate = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'S': o->seconds = strtod(optarg, NULL); break;
		case 'e': o->every = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'R': o->rdma_dev = optarg; break;
		case 'x':
			o->fault = F_NONE;
			for (unsigned i = 0; i < sizeof(fault_names) / sizeof(*fault_names); i++)
				if (!strcmp(optarg, fault_names[i]))
					o->fault = (enum fault)i;
			if (o->fault == F_NONE && strcmp(optarg, "none"))
				return usage();
			break;
		default:
			return usage();
		}
	}
	if (!o->to || o->frame < FPGAD_SIMFRAME_HDR_SIZE || !o->slots || !o->every ||
	    roce_payload_size(o->mtu) == 0 || (!o->count && o->seconds <= 0) ||
	    (o->fault == F_WRONG_SENDER && !o->alt_from) ||
	    (o->rdma_dev && (!o->from || o->mtu % ROCE_PAYLOAD_UNIT)))
		return usage();
	return 0;
}

/* A UDP socket to @to, from @from (any address when NULL). */
static int open_socket(const char *to, const char *from)
{
	struct sockaddr_storage dst, src;
	int fd, size = 16 << 20;
	socklen_t len;

	if (config_parse_endpoint(to, true, &dst) < 0) {
		fprintf(stderr, "hsb_sender: --to %s is not ADDRESS:PORT\n", to);
		return -1;
	}
	len = dst.ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
					  sizeof(struct sockaddr_in);
	fd = socket(dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (from && (config_parse_endpoint(from, false, &src) < 0 ||
		     bind(fd, (struct sockaddr *)&src, len) < 0)) {
		fprintf(stderr, "hsb_sender: cannot send from %s: %s\n", from,
			strerror(errno));
		close(fd);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&dst, len) < 0) {
		fprintf(stderr, "hsb_sender: connect %s: %s\n", to, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Send packets @order[0..n) of the built frame on @fd. */
static int send_packets(struct sender *s, int fd, const unsigned *order, unsigned n)
{
	if (s->verbs)	/* fd: which QP */
		return hsb_verbs_send(s->verbs, fd == s->fd ? 0 : 1, s->pkts,
				      s->lens, order, n) < 0 ? -1 : 0;
	for (unsigned i = 0; i < n; i++) {
		s->iov[i].iov_base = s->pkts + (size_t)order[i] * ROCE_MAX_PACKET;
		s->iov[i].iov_len = s->lens[order[i]];
		s->msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &s->iov[i], .msg_iovlen = 1 };
	}
	for (unsigned done = 0; done < n;) {
		int r = sendmmsg(fd, s->msgs + done, n - done, 0);

		if (r < 0 && (errno == EINTR || errno == ENOBUFS || errno == ECONNREFUSED))
			continue;
		if (r < 0) {
			perror("hsb_sender: sendmmsg");
			return -1;
		}
		done += (unsigned)r;
	}
	return 0;
}

/* Build frame @seq's packets with @t; returns how many. */
static unsigned build(struct sender *s, const struct hsb_tx *t, uint64_t seq)
{
	unsigned n = hsb_tx_packets(t, s->o.frame);

	fpgad_simframe_fill(s->frame, s->o.frame, seq, 0, s->pattern, s->pattern_size);
	for (unsigned i = 0; i < n; i++)
		s->lens[i] = hsb_tx_packet(t, s->frame, s->o.frame, i,
					   s->pkts + (size_t)i * ROCE_MAX_PACKET);
	return n;
}

/* Another sender's frame: its own PSNs and numbers, fpgad must ignore it. */
static int send_foreign(struct sender *s, const struct hsb_tx *good)
{
	struct hsb_tx t = *good;
	unsigned order[4096], n;
	int fd = s->fd;

	t.psn = (good->psn + 0x400000) & ROCE_PSN_MASK;
	t.frame_number = good->frame_number + 0x4000;
	if (s->o.fault == F_BAD_RKEY)
		t.rkey ^= 0x5a5a0001;
	else if (s->o.fault == F_BAD_QPN && !s->verbs)
		t.qpn = (t.qpn + 1) & ROCE_QPN_MASK;
	else	/* another address, or RoCE's QP to another QPN */
		fd = s->alt_fd;
	n = build(s, &t, t.frame_number);
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	s->foreign_packets += n;
	return send_packets(s, fd, order, n);
}

static int send_frame(struct sender *s, struct hsb_tx *t, uint64_t seq, bool hit)
{
	unsigned order[4096 + 1], n, k = 0;

	if (hit && s->o.fault >= F_BAD_RKEY && send_foreign(s, t) < 0)
		return -1;
	t->frame_number = (uint32_t)seq;
	n = build(s, t, seq);
	for (unsigned i = 0; i < n; i++) {
		if (hit && s->o.fault == F_DROP && i == 1 % (n - 1))
			continue;
		if (hit && s->o.fault == F_LOSE_IMM && i == n - 1)
			continue;
		order[k++] = i;
		if (hit && s->o.fault == F_DUP && i == 1 % (n - 1))
			order[k++] = i;
	}
	if (hit && s->o.fault == F_REORDER && k > 2 && s->verbs) {
		order[k - 2] = n - 1;	/* the immediate overtakes */
		order[k - 1] = n - 2;
	} else if (hit && s->o.fault == F_REORDER && k > 2) {
		order[0] = 1;
		order[1] = 0;
	}
	if (send_packets(s, s->fd, order, k) < 0)
		return -1;
	t->psn = (t->psn + n) & ROCE_PSN_MASK;
	t->page = (t->page + 1) % t->lay.pages;
	s->sent_packets += k;
	return 0;
}

/* RoCE mode: QP 0, and the foreign QP its fault needs. */
static int open_verbs(struct sender *s, unsigned max_pkts)
{
	size_t len = (size_t)max_pkts * ROCE_MAX_PACKET;
	int r;

	r = hsb_verbs_open(s->o.rdma_dev, s->o.from, s->o.to, s->o.qpn, s->o.mtu,
			   2 * max_pkts + 2, s->pkts, len, &s->verbs);
	if (r < 0)
		return r;
	if (s->o.fault == F_BAD_QPN)
		r = hsb_verbs_foreign(s->verbs, s->o.from, s->o.qpn ^ 0x800000);
	else if (s->o.fault == F_WRONG_SENDER)
		r = hsb_verbs_foreign(s->verbs, s->o.alt_from, s->o.qpn);
	fprintf(stderr, "hsb_sender: RoCE on %s, QPN 0x%x\n", s->o.rdma_dev,
		hsb_verbs_qpn(s->verbs));
	return r;
}

int main(int argc, char **argv)
{
	struct sender s = { .alt_fd = -1 };
	struct hsb_tx t = { 0 };
	uint64_t start, next, gap;
	unsigned max_pkts;
	int r = 1;

	if (parse(argc, argv, &s.o))
		return 2;
	if (s.o.rdma_dev) {
		s.fd = 0;	/* QP 0; the foreign QP is 1 */
		s.alt_fd = 1;
	} else {
		s.fd = open_socket(s.o.to, s.o.from);
		if (s.fd < 0)
			return 1;
	}
	if (s.o.fault == F_WRONG_SENDER && !s.o.rdma_dev) {
		s.alt_fd = open_socket(s.o.to, s.o.alt_from);
		if (s.alt_fd < 0)
			return 1;
	}
	t.qpn = s.o.qpn;
	t.rkey = s.o.rkey;
	/* RoCE: each WRITE is one packet of up to the path MTU. */
	t.payload = s.o.rdma_dev ? s.o.mtu : roce_payload_size(s.o.mtu);
	/* Near the end of the PSN space: every run crosses its wrap. */
	t.psn = 0xffff00;
	net_layout(s.o.frame, s.o.slots, &t.lay);
	max_pkts = hsb_tx_packets(&t, s.o.frame);
	if (max_pkts > 4096) {
		fprintf(stderr, "hsb_sender: %u packets a frame: raise --mtu\n", max_pkts);
		return 2;
	}
	s.pattern_size = fpgad_simframe_pattern_size(s.o.frame);
	s.pattern = malloc(s.pattern_size);
	s.frame = malloc(s.o.frame);
	s.pkts = malloc((size_t)max_pkts * ROCE_MAX_PACKET);
	s.lens = calloc(max_pkts, sizeof(*s.lens));
	s.msgs = calloc(max_pkts + 1, sizeof(*s.msgs));
	s.iov = calloc(max_pkts + 1, sizeof(*s.iov));
	if (!s.pattern || !s.frame || !s.pkts || !s.lens || !s.msgs || !s.iov)
		goto out;
	if (s.o.rdma_dev && open_verbs(&s, max_pkts) < 0)
		goto out;
	fpgad_simframe_pattern_fill(s.pattern, s.pattern_size);

	gap = s.o.rate ? 1000000000ull / s.o.rate : 0;
	start = next = clock_now_ns();
	for (uint64_t seq = 0; !s.o.count || seq < s.o.count; seq++) {
		bool hit = s.o.fault != F_NONE && seq % s.o.every == s.o.every - 1;

		if (s.o.seconds > 0 && clock_now_ns() - start > (uint64_t)(s.o.seconds * 1e9))
			break;
		if (gap) {
			struct timespec ts = { (time_t)(next / 1000000000u),
					       (long)(next % 1000000000u) };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			next += gap;
		}
		if (send_frame(&s, &t, seq, hit) < 0)
			goto out;
		s.sent_frames++;
		s.faulted += hit;
	}
	printf("sent frames=%" PRIu64 " packets=%" PRIu64 " faulted=%" PRIu64
	       " foreign_packets=%" PRIu64 " seconds=%.3f\n", s.sent_frames,
	       s.sent_packets, s.faulted, s.foreign_packets,
	       (double)(clock_now_ns() - start) / 1e9);
	r = 0;
out:
	hsb_verbs_close(s.verbs);	/* before the packets it registered */
	free(s.pattern);
	free(s.frame);
	free(s.pkts);
	free(s.lens);
	free(s.msgs);
	free(s.iov);
	if (s.o.rdma_dev)
		return r;
	close(s.fd);
	if (s.alt_fd >= 0)
		close(s.alt_fd);
	return r;
}
