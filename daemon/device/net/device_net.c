// SPDX-License-Identifier: MIT
/*
 * device_net.c - network sources as a device backend (net.h): a UDP socket
 * and a receiving thread per port, frames assembled by net_frame.c into
 * the slots the streaming thread armed.
 *
 * A port is the socket of one listen ADDRESS:PORT.  Channels with the same
 * one (not port 0) share it, each with its own qpn (config.c checks): the
 * port's thread hands each datagram to the channel of its destination
 * QPN, and counts in wrong_qp one for none.  With one channel on the port
 * the datagrams are received where they belong in its slot (net_rx.h);
 * with several, whole into the port's buffers first, then copied in.
 *
 * Locking: q->lock guards the armed slots, the completions, the frame
 * state and its counters.  The receiving thread takes it twice per batch
 * of datagrams: to aim the batch's buffers at the slot it holds
 * (net_rx.h), and after the recvmmsg to take what came; the streaming
 * thread once per submit or wait.  While a recvmmsg may be writing into
 * the slot (receiving), a reset or an unpin waits for it to return: the
 * slot is not given back, nor its memory let go, under the kernel's feet.
 * On a shared port the kernel writes only the port's buffers, and the
 * thread takes a channel's lock once per run of datagrams for it.  Lock
 * order: ports_lock, then a port's lock, then a channel's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "device/device.h"
#include "device/net/net.h"
#include "device/net/net_target.h"
#include "device/net/net_rx.h"
#include "device/net/net_slots.h"
#include "device/net/roce_icrc.h"
#include "log.h"
#include "wait.h"

#define NET_BUF (ROCE_MAX_PACKET + 1)	/* one more: a longer one is cut */
#define NET_GRO_BUF 65536		/* datagrams coalesced by UDP GRO */
/* IP(V6)_PKTINFO's destination, UDP_GRO's segment. */
#define NET_CTL (CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(int)))
#define NET_RCVBUF (64 << 20)

struct net_port;

struct device_queue {
	struct config_channel ch;
	struct sockaddr_storage sender;	/* port 0: any port */
	struct sockaddr_storage local;	/* bound */
	struct source_stats shown;		/* endpoint and target, for stats */
	struct net_port *port;
	int fd;				/* the port's */

	/* Telling the sender its target: the control thread sends, retries. */
	struct net_target_ctl sctl;
	uint64_t resyncs_said;		/* psn_resyncs logged so far */

	pthread_mutex_t lock;
	struct net_slots slots;
	struct net_frame nf;
	bool receiving;			/* a recvmmsg may write into the slot */
	pthread_cond_t received;	/* it returned */

	_Atomic uint32_t cq_word;	/* futex: bumped at each completion */
	_Atomic uint32_t cq_sleep;	/* wait.h: a waiter sleeps */
	_Atomic uint32_t kicked;

	struct net_rx rx;
	struct sockaddr_storage from[NET_RX_BATCH];
	char ctl[NET_RX_BATCH][NET_CTL];
};

/*
 * The socket of one listen ADDRESS:PORT and its receiving thread, for
 * every channel on it.  ports_lock guards the list and refs; p->lock the
 * members, and is held by the thread while it hands a batch to them, so
 * that a channel that left is never handed one again.
 */
struct net_port {
	struct net_port *next;
	struct sockaddr_storage want;	/* listen, as configured */
	struct sockaddr_storage local;	/* bound */
	char listen[64], interface[16];
	char name[32];			/* its first channel's, for the log */
	bool gro, pktinfo;
	int fd, stop_fd;
	pthread_t thread;
	bool thread_started;
	unsigned refs;

	pthread_mutex_t lock;
	unsigned n;
	struct device_queue *members[CONFIG_MAX_CHANNELS];
	uint32_t qpns[CONFIG_MAX_CHANNELS];
	_Atomic uint64_t wrong_qp;	/* for no channel's QPN (shared) */

	/* Shared: each datagram whole, before it is handed on. */
	size_t buf_size;
	unsigned char *bufs;
	struct mmsghdr msgs[NET_RX_BATCH];
	struct iovec iov[NET_RX_BATCH];
	struct sockaddr_storage from[NET_RX_BATCH];
	char ctl[NET_RX_BATCH][NET_CTL];
};

static pthread_mutex_t ports_lock = PTHREAD_MUTEX_INITIALIZER;
static struct net_port *ports;

void net_layout(uint64_t frame_size, unsigned slots, struct sender_layout *ret)
{
	uint64_t meta = (frame_size + ROCE_PAYLOAD_UNIT - 1) / ROCE_PAYLOAD_UNIT *
			ROCE_PAYLOAD_UNIT;

	ret->base = NET_VA_BASE;
	ret->stride = (meta + ROCE_META_SIZE + 4095) / 4096 * 4096;
	ret->pages = slots < ROCE_MAX_PAGES ? slots : ROCE_MAX_PAGES;
}

/* --- completions: the receiving thread's side (q->lock held) ------------ */

static int frame_take(void *user, struct net_slot *ret_slot)
{
	return net_slots_take(&((struct device_queue *)user)->slots, ret_slot);
}

static void frame_done(void *user, const struct net_frame_done *d)
{
	net_slots_done(&((struct device_queue *)user)->slots, d);
}

static const struct net_frame_ops frame_ops = {
	.take = frame_take,
	.done = frame_done,
};

static void cq_wake(struct device_queue *q)
{
	wait_wake((uint32_t *)&q->cq_sleep, (uint32_t *)&q->cq_word, false);
}

/* --- the receiving thread ---------------------------------------------- */

static bool sender_ok(const struct device_queue *q,
		      const struct sockaddr_storage *from)
{
	const struct sockaddr_storage *want = &q->sender;

	if (from->ss_family != want->ss_family)
		return false;
	if (want->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)from, *b = (const void *)want;

		return a->sin_addr.s_addr == b->sin_addr.s_addr &&
		       (!b->sin_port || a->sin_port == b->sin_port);
	}
	const struct sockaddr_in6 *a = (const void *)from, *b = (const void *)want;

	return !memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr)) &&
	       (!b->sin6_port || a->sin6_port == b->sin6_port);
}

/*
 * What the kernel says of datagram @m: the address it was sent to
 * (IP_PKTINFO, IPV6_PKTINFO; the bound one when absent) with the bound
 * port in *ret_dst, and the size of the segments UDP GRO coalesced (0:
 * one).
 */
static void read_cmsgs(const struct sockaddr_storage *local, struct msghdr *m,
		       struct sockaddr_storage *ret_dst, unsigned *ret_seg)
{
	*ret_dst = *local;
	*ret_seg = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO &&
		    ret_dst->ss_family == AF_INET) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			((struct sockaddr_in *)ret_dst)->sin_addr = pi.ipi_addr;
		} else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO &&
			   ret_dst->ss_family == AF_INET6) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			((struct sockaddr_in6 *)ret_dst)->sin6_addr = pi.ipi6_addr;
		} else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
			int seg;

			memcpy(&seg, CMSG_DATA(c), sizeof(seg));
			*ret_seg = seg > 0 ? (unsigned)seg : 0;
		}
	}
}

/*
 * The datagrams in @buf (@seg bytes each, the last one shorter, when UDP
 * GRO coalesced them): their iCRC checked, then to the frame state.
 */
static void take_datagrams(struct device_queue *q, const unsigned char *buf,
			   size_t len, size_t seg, const struct roce_flow *flow,
			   uint64_t now)
{
	for (size_t off = 0; off < len; off += seg) {
		size_t n = len - off < seg ? len - off : seg;

		/* A runt is net_frame's to count as a bad packet. */
		if (flow && n >= ROCE_MIN_PACKET &&
		    roce_icrc_check(flow, buf + off, n) < 0) {
			q->nf.cnt.packets++;
			q->nf.cnt.bad_icrc++;
			continue;
		}
		net_frame_packet(&q->nf, buf + off, n, now);
	}
}

/* A datagram that landed in pieces where it belongs (net_rx_in_place()). */
static void take_in_place(struct device_queue *q, const struct iovec v[3],
			  size_t len, const struct roce_flow *flow, uint64_t now)
{
	if (flow && roce_icrc_check_iov(flow, v, 3, len) < 0) {
		q->nf.cnt.packets++;
		q->nf.cnt.bad_icrc++;
		return;
	}
	net_frame_packet_split(&q->nf, v[0].iov_base, v[0].iov_len, len,
			       v[1].iov_base, now);
}

/*
 * Datagram @m of @len bytes (UDP GRO's segments of @seg) from @from to
 * @dst, for channel @q (q->lock held): false when it is counted and not
 * taken; else true and, with the iCRC on, its flow in *ret_flow.
 */
static bool datagram_ok(struct device_queue *q, const struct msghdr *m,
			const struct sockaddr_storage *from,
			const struct sockaddr_storage *dst, size_t len,
			unsigned seg, struct roce_flow *ret_flow)
{
	if (!sender_ok(q, from)) {
		/* A zero-length datagram is one, too. */
		q->nf.cnt.wrong_sender += len ? (len + seg - 1) / seg : 1;
		return false;
	}
	if (!len || (m->msg_flags & MSG_TRUNC)) {
		q->nf.cnt.packets++;
		q->nf.cnt.bad_packets++;
		return false;
	}
	if (q->ch.icrc && roce_flow_from(from, dst, ret_flow) < 0) {
		q->nf.cnt.packets++;
		q->nf.cnt.bad_icrc++;
		return false;
	}
	return true;
}

/*
 * The end of what channel @q took (q->lock held, and let go here): its
 * consumer woken for the frames completed since there were @frames, a
 * PSN that went back said once.
 */
static void taken(struct device_queue *q, uint64_t frames)
{
	uint64_t resyncs;

	frames = q->nf.cnt.frames - frames;
	resyncs = q->nf.cnt.psn_resyncs;
	pthread_mutex_unlock(&q->lock);
	if (frames)
		cq_wake(q);
	/* Said once, not per restart: the counter tells how many. */
	if (resyncs && !q->resyncs_said)
		log_notice("net: %s: the sender's PSN went back (it restarted, jumped back or wrapped a narrower PSN): followed it; fpgactl stats counts each time",
			   q->ch.name);
	q->resyncs_said = resyncs;
}

/*
 * One recvmmsg for the port's one channel @q, into its slot: how many,
 * and in *ret_more all it asked for.
 */
static int receive_batch(struct device_queue *q, bool *ret_more)
{
	uint64_t before, now;
	bool gro = false;
	unsigned want;
	int n, e;

	pthread_mutex_lock(&q->lock);
	want = net_rx_plan(&q->rx, &q->nf);
	q->receiving = true;
	pthread_mutex_unlock(&q->lock);
	for (unsigned i = 0; i < want; i++) {
		q->rx.msgs[i].msg_hdr.msg_namelen = sizeof(q->from[i]);
		q->rx.msgs[i].msg_hdr.msg_controllen = sizeof(q->ctl[i]);
	}
	n = recvmmsg(q->fd, q->rx.msgs, want, MSG_DONTWAIT, NULL);
	e = errno;
	pthread_mutex_lock(&q->lock);
	q->receiving = false;
	pthread_cond_broadcast(&q->received);
	if (n <= 0) {
		pthread_mutex_unlock(&q->lock);
		*ret_more = false;
		return n < 0 ? -e : 0;
	}
	now = clock_now_ns();
	before = q->nf.cnt.frames;
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &q->rx.msgs[i].msg_hdr;
		size_t len = q->rx.msgs[i].msg_len;
		struct sockaddr_storage dst;
		struct roce_flow flow;
		struct iovec v[3];
		unsigned seg;

		read_cmsgs(&q->local, m, &dst, &seg);
		gro |= seg != 0;
		if (!seg || seg > len)
			seg = len ? (unsigned)len : 1;
		if (!datagram_ok(q, m, &q->from[i], &dst, len, seg, &flow))
			continue;
		if (seg == len && net_rx_in_place(&q->rx, &q->nf, (unsigned)i, v))
			take_in_place(q, v, len, q->ch.icrc ? &flow : NULL, now);
		else
			take_datagrams(q, net_rx_whole(&q->rx, (unsigned)i, (unsigned)n),
				       len, seg, q->ch.icrc ? &flow : NULL, now);
	}
	/* Coalesced datagrams (UDP GRO) cannot be aimed: received whole. */
	q->rx.plan = !gro;
	taken(q, before);
	*ret_more = (unsigned)n == want;
	return n;
}

/*
 * Segment @buf (@len bytes) of datagram @m on shared port @p: to the
 * channel of its destination QPN, or counted in the port's wrong_qp.
 * *cur: the channel taking the segments before, its lock held (frames
 * counted from *frames); the lock is kept across one channel's run.
 */
static void hand_on(struct net_port *p, const struct msghdr *m,
		    const struct sockaddr_storage *from,
		    const struct sockaddr_storage *dst,
		    const unsigned char *buf, size_t len, uint64_t now,
		    struct device_queue **cur, uint64_t *frames)
{
	int k = net_rx_demux(buf, len, p->qpns, p->n);
	struct device_queue *q;
	struct roce_flow flow;

	if (k < 0) {
		p->wrong_qp++;
		return;
	}
	q = p->members[k];
	if (q != *cur) {
		if (*cur)
			taken(*cur, *frames);
		pthread_mutex_lock(&q->lock);
		*cur = q;
		*frames = q->nf.cnt.frames;
	}
	if (datagram_ok(q, m, from, dst, len, (unsigned)len, &flow))
		take_datagrams(q, buf, len, len, q->ch.icrc ? &flow : NULL, now);
}

/*
 * One recvmmsg on port @p shared by several channels (p->lock held),
 * each datagram whole into the port's buffers, then to its channel.
 */
static int receive_shared(struct net_port *p, bool *ret_more)
{
	struct device_queue *cur = NULL;
	uint64_t now, frames = 0;
	int n;

	for (unsigned i = 0; i < NET_RX_BATCH; i++) {
		p->msgs[i].msg_hdr.msg_namelen = sizeof(p->from[i]);
		p->msgs[i].msg_hdr.msg_controllen = sizeof(p->ctl[i]);
	}
	n = recvmmsg(p->fd, p->msgs, NET_RX_BATCH, MSG_DONTWAIT, NULL);
	if (n <= 0) {
		*ret_more = false;
		return n < 0 ? -errno : 0;
	}
	now = clock_now_ns();
	for (int i = 0; i < n; i++) {
		struct msghdr *m = &p->msgs[i].msg_hdr;
		size_t len = p->msgs[i].msg_len;
		const unsigned char *buf = p->iov[i].iov_base;
		struct sockaddr_storage dst;
		unsigned seg;

		read_cmsgs(&p->local, m, &dst, &seg);
		/* Cut or empty: one, to the channel its header names, if any. */
		if (!seg || seg > len || (m->msg_flags & MSG_TRUNC))
			seg = len ? (unsigned)len : 1;
		for (size_t off = 0; off < len || !off; off += seg)
			hand_on(p, m, &p->from[i], &dst, buf + off,
				len - off < seg ? len - off : seg, now, &cur, &frames);
	}
	if (cur)
		taken(cur, frames);
	*ret_more = n == NET_RX_BATCH;
	return n;
}

/* One batch on port @p, for the channels on it now. */
static int port_batch(struct net_port *p, bool *ret_more)
{
	int r = 0;

	*ret_more = false;
	pthread_mutex_lock(&p->lock);
	if (p->n == 1)
		r = receive_batch(p->members[0], ret_more);
	else if (p->n > 1)
		r = receive_shared(p, ret_more);
	pthread_mutex_unlock(&p->lock);
	return r;
}

/* A reset or an unpin: after the recvmmsg writing into the slot (q->lock held). */
static void wait_received(struct device_queue *q)
{
	while (q->receiving)
		pthread_cond_wait(&q->received, &q->lock);
}

static void *net_receive_main(void *arg)
{
	struct net_port *port = arg;
	struct pollfd p[2] = {
		{ .fd = port->fd, .events = POLLIN },
		{ .fd = port->stop_fd, .events = POLLIN },
	};
	bool more;
	int r;

	for (;;) {
		/* Take what is there before sleeping again. */
		while ((r = port_batch(port, &more)) > 0 && more)
			;
		if (r < 0 && r != -EAGAIN && r != -EINTR)
			log_warn("net: %s: receive: %s", port->name, strerror(-r));
		if (poll(p, 2, -1) < 0 && errno != EINTR) {
			log_err("net: %s: poll: %s; receiving stops", port->name,
				strerror(errno));
			break;
		}
		if (p[1].revents)
			break;
	}
	return NULL;
}

/* --- set-up ---------------------------------------------------------------- */

static bool any_address(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr);
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/* Where each datagram was sent to: the iCRC covers it. */
static int want_pktinfo(struct net_port *p)
{
	int one = 1;

	if (p->pktinfo)
		return 0;
	if ((p->local.ss_family == AF_INET6 ?
	     setsockopt(p->fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one)) :
	     setsockopt(p->fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one))) < 0) {
		int r = -errno;

		log_err("net: %s: packet info: %s", p->name, strerror(-r));
		return r;
	}
	p->pktinfo = true;
	return 0;
}

/* The port's socket: bound, a large receive buffer, the kernel's drop counter. */
static int net_socket(struct net_port *p, const struct config_channel *ch)
{
	struct sockaddr_storage bound;
	socklen_t alen = sizeof(bound);
	int one = 1, size = NET_RCVBUF, got = 0;
	socklen_t glen = sizeof(got);
	const struct sockaddr_storage *local = &p->want;
	char name[64];

	p->fd = socket(local->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		return -errno;
	/* Past rmem_max where fpgad may (CAP_NET_ADMIN), else up to it. */
	if (setsockopt(p->fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	getsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &got, &glen);
	if (got < size)
		log_notice("net: %s: receive buffer %d KiB, not %d KiB (net.core.rmem_max): bursts may be dropped, and counted",
			   p->name, got >> 10, size >> 10);
	/*
	 * A socket bound to one address gets only datagrams sent to it, and
	 * is spared the message per datagram.
	 */
	p->local = *local;
	if (ch->icrc && any_address(local) && want_pktinfo(p) < 0)
		return -EINVAL;
	p->gro = ch->gro;
	if (ch->gro && setsockopt(p->fd, SOL_UDP, UDP_GRO, &one, sizeof(one)) < 0)
		log_notice("net: %s: UDP GRO: %s; datagrams come one by one",
			   p->name, strerror(errno));
	if (bind(p->fd, (const struct sockaddr *)local,
		 local->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
						sizeof(struct sockaddr_in)) < 0) {
		int r = -errno;

		log_err("net: %s: cannot bind %s: %s", p->name,
			net_endpoint_name(local, name, sizeof(name)), strerror(-r));
		return r;
	}
	if (getsockname(p->fd, (struct sockaddr *)&bound, &alen) < 0)
		return -errno;
	p->local = bound;
	net_endpoint_name(&bound, p->listen, sizeof(p->listen));
	net_local_interface(&bound, p->interface, sizeof(p->interface));
	return 0;
}

/* Port @p, its last channel gone (ports_lock held, or never listed). */
static void port_free(struct net_port *p)
{
	uint64_t one = 1;

	if (p->thread_started) {
		if (write(p->stop_fd, &one, sizeof(one)) < 0)
			log_warn("net: %s: stop: %s", p->name, strerror(errno));
		pthread_join(p->thread, NULL);
	}
	if (p->stop_fd >= 0)
		close(p->stop_fd);
	if (p->fd >= 0)
		close(p->fd);
	pthread_mutex_destroy(&p->lock);
	free(p->bufs);
	free(p);
}

/* A new port for channel @ch at @want, its thread started (ports_lock held). */
static int port_new(const struct config_channel *ch,
		    const struct sockaddr_storage *want, struct net_port **ret)
{
	struct net_port *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	p->fd = p->stop_fd = -1;
	p->want = *want;
	snprintf(p->name, sizeof(p->name), "%s", ch->name);
	pthread_mutex_init(&p->lock, NULL);
	p->buf_size = ch->gro ? NET_GRO_BUF : NET_BUF;
	p->bufs = malloc(NET_RX_BATCH * p->buf_size);
	if (!p->bufs) {
		r = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < NET_RX_BATCH; i++) {
		p->iov[i] = (struct iovec){ p->bufs + i * p->buf_size, p->buf_size };
		p->msgs[i].msg_hdr = (struct msghdr){
			.msg_name = &p->from[i], .msg_iov = &p->iov[i], .msg_iovlen = 1,
			.msg_control = p->ctl[i],
		};
	}
	r = net_socket(p, ch);
	if (r < 0)
		goto fail;
	p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->stop_fd < 0) {
		r = -errno;
		goto fail;
	}
	r = -pthread_create(&p->thread, NULL, net_receive_main, p);
	if (r < 0) {
		log_err("net: %s: cannot start the receiving thread: %s",
			ch->name, strerror(-r));
		goto fail;
	}
	p->thread_started = true;
	{
		char name[16];

		snprintf(name, sizeof(name), "net-%.11s", ch->name);
		pthread_setname_np(p->thread, name);
	}
	*ret = p;
	return 0;
fail:
	port_free(p);
	return r;
}

/*
 * Channel @q on the port of @want: the one already bound there (not port
 * 0), or a new one.
 */
static int port_join(struct device_queue *q, const struct sockaddr_storage *want)
{
	struct net_port *p = NULL;
	int r = 0;

	pthread_mutex_lock(&ports_lock);
	if (config_endpoint_port(want))
		for (p = ports; p && !config_endpoint_same(&p->want, want); p = p->next)
			;
	if (p) {
		/* config_load() refused these already; said again, whatever calls. */
		for (unsigned k = 0; k < p->n && r == 0; k++)
			if (p->qpns[k] == q->ch.qpn) {
				log_err("net: %s: channel %s listens on %s with the same qpn 0x%x: channels sharing a port need their own",
					q->ch.name, p->members[k]->ch.name, q->ch.listen, q->ch.qpn);
				r = -EADDRINUSE;
			}
		if (r == 0 && p->gro != q->ch.gro) {
			log_err("net: %s: %s is shared with gro = %s: set the same gro",
				q->ch.name, q->ch.listen, p->gro ? "yes" : "no");
			r = -EINVAL;
		}
		if (r == 0 && p->n == CONFIG_MAX_CHANNELS)
			r = -ENOSPC;
		if (r == 0 && q->ch.icrc && any_address(&p->local))
			r = want_pktinfo(p);
		if (r == 0)
			log_info("net: %s: shares %s with channel %s, told apart by QPN 0x%x: datagrams copied from the port's buffers",
				 q->ch.name, p->listen, p->members[0]->ch.name, q->ch.qpn);
	} else {
		r = port_new(&q->ch, want, &p);
		if (r == 0) {
			p->next = ports;
			ports = p;
		}
	}
	if (r == 0) {
		p->refs++;
		q->port = p;
		q->fd = p->fd;
		q->local = p->local;
		snprintf(q->shown.listen, sizeof(q->shown.listen), "%s", p->listen);
		snprintf(q->shown.interface, sizeof(q->shown.interface), "%s", p->interface);
		pthread_mutex_lock(&p->lock);
		p->qpns[p->n] = q->ch.qpn;
		p->members[p->n++] = q;
		pthread_mutex_unlock(&p->lock);
	}
	pthread_mutex_unlock(&ports_lock);
	return r;
}

/* Channel @q off its port, and the port gone with its last channel. */
static void port_leave(struct device_queue *q)
{
	struct net_port *p = q->port, **pp;

	if (!p)
		return;
	pthread_mutex_lock(&ports_lock);
	/* After this no batch is handed to @q. */
	pthread_mutex_lock(&p->lock);
	for (unsigned k = 0; k < p->n; k++)
		if (p->members[k] == q) {
			p->n--;
			p->members[k] = p->members[p->n];
			p->qpns[k] = p->qpns[p->n];
			break;
		}
	pthread_mutex_unlock(&p->lock);
	if (--p->refs == 0) {
		for (pp = &ports; *pp != p; pp = &(*pp)->next)
			;
		*pp = p->next;
		port_free(p);
	}
	pthread_mutex_unlock(&ports_lock);
	q->port = NULL;
	q->fd = -1;
}

/* The sender's control socket and target (net_target.h). */
static int control_open(struct device_queue *q)
{
	struct net_target *t = &q->sctl.target;
	int r;

	r = net_target_open(&q->sctl, q->ch.name, q->ch.sender_control, &q->sender,
			 &q->local, &q->lock, &q->nf.cnt);
	snprintf(q->shown.control, sizeof(q->shown.control), "%s", q->sctl.where);
	if (r < 0 || q->sctl.fd < 0)
		return r;
	t->qpn = q->ch.qpn;
	t->layout = q->shown.layout;
	t->frame_size = (uint32_t)q->ch.frame_size;
	t->payload = q->shown.payload;
	return net_target_start(&q->sctl);
}

static void net_queue_close(struct device_queue *q);

static int net_queue_open(struct device *dev, const struct config_channel *ch,
			  struct device_queue **ret_q)
{
	struct net_frame_cfg fc = { 0 };
	struct sockaddr_storage local;
	struct device_queue *q;
	int r;

	(void)dev;
	if (ch->source == SOURCE_CARD || ch->direction != DIR_C2H)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->fd = q->sctl.fd = -1;
	q->ch = *ch;
	q->slots.slot_size = ch->slot_size;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->received, NULL);
	if (config_parse_endpoint(ch->listen, true, &local) < 0 ||
	    config_parse_endpoint(ch->sender, false, &q->sender) < 0) {
		r = -EINVAL;	/* config_load() refused these already */
		goto fail;
	}
	q->shown.source = SOURCE_UDP;
	snprintf(q->shown.sender, sizeof(q->shown.sender), "%s", ch->sender);
	q->shown.mtu = ch->mtu;
	q->shown.payload = roce_payload_size(ch->mtu);
	q->shown.qpn = ch->qpn;
	net_layout(ch->frame_size, ch->slots, &q->shown.layout);
	fc.layout = q->shown.layout;
	fc.qpn = ch->qpn;
	fc.frame_size = ch->frame_size;
	fc.slot_size = ch->slot_size;
	net_frame_init(&q->nf, &fc, &frame_ops, q);

	r = net_rx_init(&q->rx, ch->gro ? NET_GRO_BUF : NET_BUF, q->shown.payload,
			ch->frame_size);
	if (r < 0)
		goto fail;
	for (unsigned i = 0; i < NET_RX_BATCH; i++) {
		q->rx.msgs[i].msg_hdr.msg_name = &q->from[i];
		q->rx.msgs[i].msg_hdr.msg_control = q->ctl[i];
	}
	r = port_join(q, &local);
	if (r < 0)
		goto fail;
	r = control_open(q);
	if (r < 0)
		goto fail;
	log_info("net: %s: udp on %s from %s, QPN 0x%x, %u-byte payloads, %u pages of %" PRIu64 " bytes",
		 ch->name, q->shown.listen, ch->sender, ch->qpn, q->shown.payload,
		 q->shown.layout.pages, q->shown.layout.stride);
	*ret_q = q;
	return 0;
fail:
	net_queue_close(q);
	return r;
}

static void net_queue_close(struct device_queue *q)
{
	if (!q)
		return;
	port_leave(q);
	net_target_close(&q->sctl);
	net_rx_free(&q->rx);
	pthread_cond_destroy(&q->received);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* --- the streaming thread's side -------------------------------------------- */

/* A key no sender of an earlier ring holds: random, never 0 or the last. */
static uint32_t new_rkey(const struct device_queue *q)
{
	uint32_t k = 0;

	if (q->ch.rkey)
		return q->ch.rkey;
	while (!k || k == q->nf.cfg.rkey)
		if (getrandom(&k, sizeof(k), 0) != sizeof(k))
			k = (uint32_t)clock_now_ns() * 2654435761u;
	return k;
}

static int net_pin(struct device_queue *q, const struct dev_region *r,
		   uint64_t *ret_handle)
{
	int e;

	pthread_mutex_lock(&q->lock);
	e = net_slots_pin(&q->slots, r, ret_handle);
	if (e == 0) {
		/* A new ring: a new key, and the sender starts over. */
		q->shown.rkey = new_rkey(q);
		net_frame_restart(&q->nf, q->shown.rkey);
	}
	if (e == 0) {
		/* The sender is told (the control thread sends, retries). */
		net_target_new_ring(&q->sctl, q->shown.rkey);
	}
	pthread_mutex_unlock(&q->lock);
	if (e == 0)
		log_debug("net: %s: ring pinned, R_Key 0x%08x", q->ch.name, q->shown.rkey);
	return e;
}

static int net_unpin(struct device_queue *q, uint64_t handle)
{
	int r;

	pthread_mutex_lock(&q->lock);
	wait_received(q);
	r = net_slots_unpin(&q->slots, handle);
	pthread_mutex_unlock(&q->lock);
	return r;
}

static int net_submit(struct device_queue *q, const struct dev_xfer *x)
{
	int r;

	pthread_mutex_lock(&q->lock);
	r = net_slots_arm(&q->slots, x, q->nf.have_slot);
	pthread_mutex_unlock(&q->lock);
	return r;
}

static unsigned cq_pop(struct device_queue *q, struct dev_completion *out,
		       unsigned max)
{
	unsigned n;

	pthread_mutex_lock(&q->lock);
	n = net_slots_pop(&q->slots, out, max);
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* wait_until()'s check: a frame to take, or a kick. */
static int cq_ready(const void *arg)
{
	struct device_queue *q = (struct device_queue *)arg;
	bool pending;

	pthread_mutex_lock(&q->lock);
	pending = q->slots.cq_n;
	pthread_mutex_unlock(&q->lock);
	return pending || atomic_load(&q->kicked);
}

static int net_wait(struct device_queue *q, struct dev_completion *out,
		    unsigned max, int timeout_ms)
{
	uint64_t deadline = timeout_ms > 0 ? clock_deadline_ns(timeout_ms) : 0;
	unsigned n;

	if (!max)
		return 0;
	for (;;) {
		n = cq_pop(q, out, max);
		if (n)
			return (int)n;
		if (atomic_exchange(&q->kicked, 0) || !timeout_ms)
			return 0;
		if (wait_until((uint32_t *)&q->cq_sleep, (uint32_t *)&q->cq_word,
			       cq_ready, q, clock_ms_left(deadline), false) == -ETIMEDOUT)
			return (int)cq_pop(q, out, max);
	}
}

static void net_kick(struct device_queue *q)
{
	wait_kick((uint32_t *)&q->kicked, (uint32_t *)&q->cq_sleep,
		  (uint32_t *)&q->cq_word, false);
}

/* Every armed slot, and the one a frame was going into, comes back. */
static int net_reset(struct device_queue *q)
{
	struct net_slot s;

	pthread_mutex_lock(&q->lock);
	wait_received(q);
	net_slots_cancel(&q->slots, net_frame_release(&q->nf, &s) ? &s : NULL);
	pthread_mutex_unlock(&q->lock);
	cq_wake(q);
	return 0;
}

static int net_stats(struct device_queue *q, struct source_stats *ret_stats)
{
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mem);

	pthread_mutex_lock(&q->lock);
	*ret_stats = q->shown;
	ret_stats->cnt = q->nf.cnt;
	pthread_mutex_unlock(&q->lock);
	/* A shared port's datagrams for no channel on it: each channel's count. */
	ret_stats->cnt.wrong_qp += atomic_load(&q->port->wrong_qp);
	/*
	 * The socket's count of datagrams it dropped, its buffer full: asked
	 * when wanted rather than told with every datagram (SO_RXQ_OVFL).
	 */
	if (getsockopt(q->fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 &&
	    len > SK_MEMINFO_DROPS * sizeof(mem[0]))
		ret_stats->cnt.kernel_drops = mem[SK_MEMINFO_DROPS];
	return 0;
}

const struct device_ops device_net_ops = {
	.name = "net",
	.queue_open = net_queue_open,
	.queue_close = net_queue_close,
	.pin = net_pin,
	.unpin = net_unpin,
	.submit = net_submit,
	.wait = net_wait,
	.kick = net_kick,
	.reset = net_reset,
};

const struct source source_udp = {
	.name = "udp",
	.ops = &device_net_ops,
	.sender_paced = true,
	.stats = net_stats,
};
