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
 *              [--gso] [--no-icrc] [--stamp BASE]
 *   hsb_sender --control PORT [--configs N] [--config-wait S] [--no-ack]
 *              [--from ADDR] ...
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
 *   bad-icrc   a payload byte of its second packet changes after its iCRC
 * Every packet carries RoCE v2's iCRC (roce_icrc.h), as an FPGA's do;
 * --no-icrc leaves it zero.  --gso sends runs of packets of one size as
 * one datagram the kernel cuts (UDP_SEGMENT), as a fast sender does.
 * --stamp BASE puts frame start and end times in each frame's metadata,
 * as an FPGA with a PTP clock does, known ones: frame seq starts at BASE
 * + seq * 1000 ns and ends 500 ns later (net_consumer --stamp checks
 * them); without it they are 0 (none).
 *
 * --control PORT (0: any free one): the sender learns its target from the
 * host, as an FPGA does (docs/net-target.md; hsb_control.h): it listens
 * on PORT (printing "control ADDR:PORT"), acknowledges each request, and
 * starts sending at the N-th (--configs, 1) to the host address, QPN,
 * R_Key and pages it was told; a later one changes its target between
 * frames.  It gives up when the N-th has not come --config-wait seconds
 * (30) after it started listening: for a sender started before fpgad,
 * fpgad's start and whatever runs before its first lease count too.
 * --to, --qpn, --rkey, --frame, --slots, --mtu are not needed then.
 * --no-ack never answers (a sender that cannot be reached).
 * With --rdma-dev too, it learns fpgad's QPN and the path MTU there
 * (payload size) and writes to the host address it was told (port 4791);
 * a later request must keep the QPN (the UC QP is connected to it).
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
#include <poll.h>
#include <netinet/udp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "config/config.h"
#include "device/net/net.h"
#include "device/net/roce_icrc.h"
#include "fpgad_simframe.h"
#include "hsb_control.h"
#include "hsb_tx.h"
#include "hsb_verbs.h"

enum fault { F_NONE, F_DROP, F_DUP, F_REORDER, F_LOSE_IMM, F_BAD_RKEY,
	     F_BAD_QPN, F_WRONG_SENDER, F_BAD_ICRC };
static const char *const fault_names[] = {
	"none", "drop", "dup", "reorder", "lose-imm", "bad-rkey", "bad-qpn",
	"wrong-sender", "bad-icrc",
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
	bool gso, icrc;
	const char *control;
	unsigned configs;
	double config_wait;		/* s, for the --configs-th request */
	bool no_ack;
	const char *rdma_dev;		/* RoCE mode */
	bool stamp;			/* --stamp */
	uint64_t stamp_base;
};

struct sender {
	struct opts o;
	int fd, alt_fd;
	struct roce_flow flow, alt_flow;	/* what each socket's iCRC covers */
	uint8_t *pkts;			/* one frame's packets */
	size_t *lens;
	struct mmsghdr *msgs;
	struct iovec *iov;
	char (*gso_ctl)[CMSG_SPACE(sizeof(uint16_t))];
	void *frame, *pattern;
	uint64_t pattern_size;
	uint64_t sent_frames, sent_packets, faulted, foreign_packets;
	int ctl_fd;
	struct hsb_regs regs;
	unsigned configs;		/* requests taken */
	uint16_t last_seq;		/* the last one's sequence number */
	bool have_seq;
	struct hsb_verbs *verbs;
};

static int usage(void)
{
	fprintf(stderr, "usage: hsb_sender --to ADDR:PORT --frame BYTES --slots N [--from ADDR]\n"
		"  [--mtu N] [--qpn N] [--rkey N] [--count N] [--rate FPS] [--seconds S]\n"
		"  [--fault drop|dup|reorder|lose-imm|bad-rkey|bad-qpn|wrong-sender|bad-icrc\n"
		"   --every K [--alt-from ADDR]] [--gso] [--no-icrc]\n"
		"  [--stamp BASE] [--rdma-dev DEV (RoCE: --to ADDR, --qpn fpgad's)]\n"
		"       hsb_sender --control PORT [--configs N] [--config-wait S] [--no-ack]\n"
		"  [--from ADDR] ...\n");
	return 2;
}

/* A whole number, all of @s: 0, or -1. */
static int parse_u64(const char *s, uint64_t *ret)
{
	char *end;

	errno = 0;
	*ret = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -1 : 0;
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
		{ "every", 1, NULL, 'e' }, { "gso", 0, NULL, 'g' },
		{ "no-icrc", 0, NULL, 'I' }, { "control", 1, NULL, 'C' },
		{ "configs", 1, NULL, 'N' }, { "config-wait", 1, NULL, 'W' },
		{ "no-ack", 0, NULL, 'A' },
		{ "rdma-dev", 1, NULL, 'R' }, { "stamp", 1, NULL, 'T' }, { 0 },
	};
	int c;

	*o = (struct opts){ .mtu = 1500, .qpn = 0x100, .every = 1, .icrc = true,
			    .configs = 1, .config_wait = 30 };
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
		case 'g': o->gso = true; break;
		case 'I': o->icrc = false; break;
		case 'C': o->control = optarg; break;
		case 'N': o->configs = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'W': o->config_wait = strtod(optarg, NULL); break;
		case 'A': o->no_ack = true; break;
		case 'R': o->rdma_dev = optarg; break;
		case 'T':
			o->stamp = true;
			if (parse_u64(optarg, &o->stamp_base) < 0)
				return usage();
			break;
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
	/* Told by the host: its target comes later. */
	if (o->control && !o->to)
		o->to = "", o->slots = 1, o->frame = o->frame ? o->frame : FPGAD_SIMFRAME_HDR_SIZE;
	if (!o->to || o->frame < FPGAD_SIMFRAME_HDR_SIZE || !o->slots || !o->every ||
	    roce_payload_size(o->mtu) == 0 || (!o->count && o->seconds <= 0) ||
	    !(o->config_wait > 0) ||
	    (o->fault == F_WRONG_SENDER && !o->alt_from) ||
	    (o->rdma_dev && (!o->from || (!o->control && o->mtu % ROCE_PAYLOAD_UNIT))))
		return usage();
	return 0;
}

/*
 * A UDP socket to @to, from @from (any address when NULL); *ret_flow: its
 * addresses and ports, for the iCRC.
 */
static int open_socket(const char *to, const char *from, struct roce_flow *ret_flow)
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
	len = sizeof(src);
	if (getsockname(fd, (struct sockaddr *)&src, &len) < 0 ||
	    roce_flow_from(&src, &dst, ret_flow) < 0) {
		fprintf(stderr, "hsb_sender: %s: no flow for the iCRC\n", to);
		close(fd);
		return -1;
	}
	return fd;
}

#define GSO_MAX_SEGS 64		/* the kernel's UDP_MAX_SEGMENTS */
#define GSO_MAX_BYTES 65000	/* an IP datagram's payload, with room */

/*
 * Packets @order[i..) as one GSO datagram in s->msgs[*m]: a run of packets
 * of one size, the last one maybe shorter.  Returns the next packet.
 */
static unsigned gso_run(struct sender *s, const unsigned *order, unsigned i,
			unsigned n, unsigned m)
{
	struct msghdr *h = &s->msgs[m].msg_hdr;
	size_t seg = s->lens[order[i]], total = 0;
	unsigned k = i;
	struct cmsghdr *c;

	*h = (struct msghdr){ .msg_iov = &s->iov[i], .msg_control = s->gso_ctl[m],
			      .msg_controllen = sizeof(s->gso_ctl[m]) };
	while (k < n && k - i < GSO_MAX_SEGS && total + s->lens[order[k]] <= GSO_MAX_BYTES &&
	       s->lens[order[k]] <= seg) {
		bool shorter = s->lens[order[k]] < seg;

		s->iov[k].iov_base = s->pkts + (size_t)order[k] * ROCE_MAX_PACKET;
		s->iov[k].iov_len = s->lens[order[k]];
		total += s->lens[order[k]];
		k++;
		if (shorter)
			break;
	}
	h->msg_iovlen = k - i;
	c = CMSG_FIRSTHDR(h);
	c->cmsg_level = SOL_UDP;
	c->cmsg_type = UDP_SEGMENT;
	c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
	*(uint16_t *)(void *)CMSG_DATA(c) = (uint16_t)seg;
	return k;
}

/* Send packets @order[0..n) of the built frame on @fd. */
static int send_packets(struct sender *s, int fd, const unsigned *order, unsigned n)
{
	unsigned m = 0;

	if (s->verbs)	/* fd: which QP */
		return hsb_verbs_send(s->verbs, fd == s->fd ? 0 : 1, s->pkts,
				      s->lens, order, n) < 0 ? -1 : 0;
	if (s->o.gso) {
		for (unsigned i = 0; i < n; m++)
			i = gso_run(s, order, i, n, m);
		n = m;
	} else {
		for (unsigned i = 0; i < n; i++) {
			s->iov[i].iov_base = s->pkts + (size_t)order[i] * ROCE_MAX_PACKET;
			s->iov[i].iov_len = s->lens[order[i]];
			s->msgs[i].msg_hdr = (struct msghdr){ .msg_iov = &s->iov[i],
							      .msg_iovlen = 1 };
		}
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

/* Build frame @seq's packets with @t, for @flow; returns how many. */
static unsigned build(struct sender *s, const struct hsb_tx *t, uint64_t seq,
		      const struct roce_flow *flow)
{
	unsigned n = hsb_tx_packets(t, s->o.frame);

	fpgad_simframe_fill(s->frame, s->o.frame, seq, 0, s->pattern, s->pattern_size);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *p = s->pkts + (size_t)i * ROCE_MAX_PACKET;

		s->lens[i] = hsb_tx_packet(t, s->frame, s->o.frame, i, p);
		if (s->o.icrc)
			roce_icrc_seal(flow, p, s->lens[i]);
	}
	return n;
}

/* Another sender's frame: its own PSNs and numbers, fpgad must ignore it. */
static int send_foreign(struct sender *s, const struct hsb_tx *good)
{
	struct hsb_tx t = *good;
	unsigned order[4096], n;
	int fd = s->fd;
	const struct roce_flow *flow = &s->flow;

	t.psn = (good->psn + 0x400000) & ROCE_PSN_MASK;
	t.frame_number = good->frame_number + 0x4000;
	if (s->o.fault == F_BAD_RKEY)
		t.rkey ^= 0x5a5a0001;
	else if (s->o.fault == F_BAD_QPN && !s->verbs)
		t.qpn = (t.qpn + 1) & ROCE_QPN_MASK;
	else	/* another address, or RoCE's QP to another QPN */
		fd = s->alt_fd, flow = &s->alt_flow;
	n = build(s, &t, t.frame_number, flow);
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	s->foreign_packets += n;
	return send_packets(s, fd, order, n);
}

static int send_frame(struct sender *s, struct hsb_tx *t, uint64_t seq, bool hit)
{
	unsigned order[4096 + 1], n, k = 0;

	if (hit && s->o.fault >= F_BAD_RKEY && s->o.fault <= F_WRONG_SENDER &&
	    send_foreign(s, t) < 0)
		return -1;
	t->frame_number = (uint32_t)seq;
	if (s->o.stamp) {
		t->t_start_ns = s->o.stamp_base + seq * 1000;
		t->t_end_ns = t->t_start_ns + 500;
	}
	n = build(s, t, seq, &s->flow);
	/* A payload byte changed on the way, after the iCRC was computed. */
	if (hit && s->o.fault == F_BAD_ICRC)
		s->pkts[(size_t)(1 % (n - 1)) * ROCE_MAX_PACKET + ROCE_BTH_SIZE +
			ROCE_RETH_SIZE + 100] ^= 0x80;
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

/* The control socket on --from (any address) at --control's port. */
static int control_open(struct sender *s)
{
	char ep[96], name[64];
	struct sockaddr_storage a;
	socklen_t len = sizeof(a);

	snprintf(ep, sizeof(ep), "%s:%s", s->o.from ? s->o.from : "0.0.0.0", s->o.control);
	if (config_parse_endpoint(ep, true, &a) < 0) {
		fprintf(stderr, "hsb_sender: --control %s: not a port\n", s->o.control);
		return -1;
	}
	s->ctl_fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (s->ctl_fd < 0 || bind(s->ctl_fd, (struct sockaddr *)&a, a.ss_family == AF_INET6 ?
				  sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) < 0 ||
	    getsockname(s->ctl_fd, (struct sockaddr *)&a, &len) < 0) {
		fprintf(stderr, "hsb_sender: control port %s: %s\n", ep, strerror(errno));
		return -1;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)&a)->sin_addr, name, sizeof(name));
	printf("control %s:%u\n", name, ntohs(((struct sockaddr_in *)&a)->sin_port));
	fflush(stdout);
	return 0;
}

/*
 * Take the requests waiting on the control port, for at most @wait_ms:
 * each is done and acknowledged (not with --no-ack).  The number taken.
 */
static unsigned control_take(struct sender *s, int wait_ms)
{
	uint8_t req[4096], reply[4096 + 2];
	struct sockaddr_storage from;
	struct pollfd p = { .fd = s->ctl_fd, .events = POLLIN };
	unsigned taken = 0;

	while (poll(&p, 1, taken ? 0 : wait_ms) > 0) {
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(s->ctl_fd, req, sizeof(req), 0,
				     (struct sockaddr *)&from, &flen);
		uint16_t seq;
		size_t rl;

		if (n < 0)
			break;
		rl = hsb_ctl_handle(&s->regs, req, (size_t)n, reply);
		if (!rl)
			continue;
		/* A retry of the request taken last says nothing new. */
		seq = (uint16_t)(req[2] << 8 | req[3]);
		if (!s->have_seq || seq != s->last_seq)
			taken++;
		s->last_seq = seq;
		s->have_seq = true;
		if (!s->o.no_ack)
			sendto(s->ctl_fd, reply, rl, 0, (struct sockaddr *)&from, flen);
	}
	s->configs += taken;
	return taken;
}

/* The target in the registers, into @t. */
static void control_target(const struct sender *s, struct hsb_tx *t)
{
	const struct hsb_regs *r = &s->regs;

	t->qpn = r->qp;
	t->rkey = r->rkey;
	t->payload = r->packet_size * ROCE_PAYLOAD_UNIT;
	t->lay.base = (uint64_t)r->page_msb << 32 | r->page_lsb;
	t->lay.stride = (uint64_t)r->page_inc * ROCE_PAYLOAD_UNIT;
	t->lay.pages = r->max_buff + 1;
	if (t->page >= t->lay.pages)
		t->page = 0;
}

/* Wait for the --configs-th request; then where to send, into @to. */
static int control_wait(struct sender *s, char *to, size_t len)
{
	uint64_t end = clock_now_ns() + (uint64_t)(s->o.config_wait * 1e9);
	struct in_addr ip;

	while (s->configs < s->o.configs || !(s->regs.vp_mask & 1)) {
		if (clock_now_ns() > end) {
			fprintf(stderr, "hsb_sender: %u of %u configurations in %g s\n",
				s->configs, s->o.configs, s->o.config_wait);
			return -1;
		}
		control_take(s, 1000);
	}
	ip.s_addr = htonl(s->regs.host_ip);
	snprintf(to, len, "%s:%u", inet_ntoa(ip), s->regs.host_udp_port & 0xffff);
	if (!s->regs.buffer_length || !s->regs.packet_size || !s->regs.page_inc) {
		fprintf(stderr, "hsb_sender: told a frame of %u bytes, packets of %u units, pages of %u units\n",
			s->regs.buffer_length, s->regs.packet_size, s->regs.page_inc);
		return -1;
	}
	s->o.frame = s->regs.buffer_length;
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
	struct sender s = { .alt_fd = -1, .ctl_fd = -1 };
	struct hsb_tx t = { 0 };
	uint64_t start, next, gap;
	unsigned max_pkts;
	char to[96];
	int r = 1;

	if (parse(argc, argv, &s.o))
		return 2;
	if (s.o.control) {
		if (control_open(&s) < 0 || control_wait(&s, to, sizeof(to)) < 0)
			return 1;
		s.o.to = to;
		/* RoCE: the QP to connect to and the path MTU, as told. */
		if (s.o.rdma_dev) {
			s.o.qpn = s.regs.qp;
			s.o.mtu = s.regs.packet_size * ROCE_PAYLOAD_UNIT;
		}
	}
	if (s.o.rdma_dev) {
		s.fd = 0;	/* QP 0; the foreign QP is 1 */
		s.alt_fd = 1;
	} else {
		s.fd = open_socket(s.o.to, s.o.from, &s.flow);
		if (s.fd < 0)
			return 1;
	}
	if (s.o.fault == F_WRONG_SENDER && !s.o.rdma_dev) {
		s.alt_fd = open_socket(s.o.to, s.o.alt_from, &s.alt_flow);
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
	if (s.o.control)
		control_target(&s, &t);
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
	s.gso_ctl = calloc(max_pkts + 1, sizeof(*s.gso_ctl));
	if (!s.pattern || !s.frame || !s.pkts || !s.lens || !s.msgs || !s.iov || !s.gso_ctl)
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
		/* A new target between frames, as an FPGA's registers change. */
		if (s.o.control && control_take(&s, 0)) {
			control_target(&s, &t);
			if (hsb_tx_packets(&t, s.o.frame) > max_pkts) {
				fprintf(stderr, "hsb_sender: told smaller packets mid-stream\n");
				goto out;
			}
			if (s.o.rdma_dev && t.qpn != s.o.qpn) {
				fprintf(stderr, "hsb_sender: told another QPN (0x%x, not 0x%x) mid-stream: the UC QP is connected\n",
					t.qpn, s.o.qpn);
				goto out;
			}
		}
		if (send_frame(&s, &t, seq, hit) < 0)
			goto out;
		s.sent_frames++;
		s.faulted += hit;
	}
	printf("sent frames=%" PRIu64 " packets=%" PRIu64 " faulted=%" PRIu64
	       " foreign_packets=%" PRIu64 " configs=%u rkey=%u seconds=%.3f\n",
	       s.sent_frames, s.sent_packets, s.faulted, s.foreign_packets,
	       s.configs, t.rkey, (double)(clock_now_ns() - start) / 1e9);
	r = 0;
out:
	hsb_verbs_close(s.verbs);	/* before the packets it registered */
	free(s.pattern);
	free(s.frame);
	free(s.pkts);
	free(s.lens);
	free(s.msgs);
	free(s.iov);
	free(s.gso_ctl);
	if (s.ctl_fd >= 0)
		close(s.ctl_fd);
	if (s.o.rdma_dev)
		return r;
	close(s.fd);
	if (s.alt_fd >= 0)
		close(s.alt_fd);
	return r;
}
