// SPDX-License-Identifier: MIT
/*
 * device_roce.c - source = roce as a device backend (net.h): a UC QP per
 * channel writes a landing ring; the streaming thread's wait() takes the
 * completions (roce_rx.c) on the QP's completion channel, no thread of
 * its own, and copies each good frame into the slot armed for it.
 *
 * The sender is told its target at each new ring (net_target.h), as a
 * UDP sender is, by the channel's control thread, which sends, retries
 * and reads the acknowledgement.  The request is gated: a new ring's
 * goes once a slot is armed on it (submit, net_target_armed()), for a
 * sender told before that could only write frames dropped for want of a
 * slot.  So the ring pinned at start is not told (the first lease's
 * replaces it before any slot is armed); the udp path tells both.
 *
 * The landing ring (roce_landing.h) is GPU memory registered as a
 * dma-buf MR when the ring is a GPU's and the NIC takes it, else host
 * memory.  In GPU memory roce_rx reaches it through CUDA copies (the
 * checks' few bytes; the frame device to device into the GPU ring,
 * which the channel then pins as it is, mode gpudirect), after a flush
 * of the NIC's writes where the GPU does not order them (rdma_order
 * none); the channel flushes again before it publishes, as for a card.
 *
 * Locking: q->lock guards the armed slots, the completions, roce_rx's
 * state and counters; wait() holds it while it drains the CQ (the copies
 * included), stats and pin take it from other threads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "clock.h"
#include "device/device.h"
#include "device/net/net.h"
#include "device/net/net_target.h"
#include "device/net/net_slots.h"
#include "device/net/roce_landing.h"
#include "device/net/roce_verbs.h"
#include "log.h"
#include "memory/memory.h"

struct device_queue {
	struct config_channel ch;
	struct source_stats shown;
	struct roce_verbs *v;
	struct net_target_ctl sctl;		/* the sender's control port */
	uint64_t resyncs_said;			/* psn_resyncs logged so far */
	int kick_fd;
	atomic_int kicked;
	struct roce_landing landing;
	bool landing_open;
	struct mem_region *landing_gpu;		/* GPU landing: its memory */
	struct roce_landing_gpu landing_io;	/* ... roce_rx's reach into it */

	pthread_mutex_t lock;
	struct net_slots slots;
	struct roce_rx rx;
	bool rx_ready;
	bool poll_failed;		/* said once */
};

/* --- roce_rx's callbacks (q->lock held) ------------------------------------ */

static int rx_poll(void *user, struct roce_wc *wc, unsigned max)
{
	struct device_queue *q = user;
	int n = roce_verbs_poll(q->v, wc, max);

	/* What the NIC wrote before these completions, visible to the copies. */
	if (n > 0 && q->landing_gpu && q->landing_gpu->rdma_order == RDMA_ORDER_NONE &&
	    memory_flush_rdma_writes(q->landing_gpu) < 0)
		return -EIO;
	return n;
}

static int rx_post_recv(void *user, unsigned n)
{
	return roce_verbs_post_recv(((struct device_queue *)user)->v, n);
}

static int rx_take(void *user, struct net_slot *ret_slot)
{
	return net_slots_take(&((struct device_queue *)user)->slots, ret_slot);
}

static void rx_done(void *user, const struct net_frame_done *d)
{
	net_slots_done(&((struct device_queue *)user)->slots, d);
}

static const struct roce_rx_ops rx_ops = {
	.poll = rx_poll,
	.post_recv = rx_post_recv,
	.take = rx_take,
	.done = rx_done,
};

/* --- the landing ring ------------------------------------------------------ */

/*
 * $FPGAD_TEST_LANDING_DMABUF=memfd stands in for a GPU ring where there is
 * none: the landing ring is tried as a dma-buf MR of a memfd (host memory,
 * so roce_rx reads it in place), to see a provider's answer.
 */
static bool landing_test(void)
{
	const char *e = getenv("FPGAD_TEST_LANDING_DMABUF");

	return e && !strcmp(e, "memfd");
}

static int landing_gpu_alloc(void *user, size_t len, void **ret_mem, int *ret_fd,
			     char *why, size_t whylen)
{
	struct device_queue *q = user;
	struct mem_region *m;
	int fd, r;

	if (landing_test()) {
		fd = memfd_create("fpgad-landing", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, (off_t)len) < 0 ||
		    (*ret_mem = mmap(NULL, len, PROT_READ | PROT_WRITE,
				     MAP_SHARED, fd, 0)) == MAP_FAILED) {
			r = -errno;
			if (fd >= 0)
				close(fd);
			snprintf(why, whylen, "memfd: %s", strerror(-r));
			return r;
		}
		*ret_fd = fd;
		return 0;
	}
	r = roce_landing_gpu_alloc(len, q->ch.gpu, q->ch.name, &m, ret_fd,
				   why, whylen);
	if (r < 0)
		return r;
	q->landing_gpu = m;
	*ret_mem = m->dev;
	return 0;
}

static void landing_gpu_free(void *user, void *mem, int fd)
{
	struct device_queue *q = user;

	close(fd);
	roce_landing_gpu_io_close(&q->landing_io);	/* its copies done */
	if (q->landing_gpu)
		memory_cuda_ops.free(q->landing_gpu);
	else
		munmap(mem, q->landing.len);
	q->landing_gpu = NULL;
}

static int landing_reg_dmabuf(void *user, int fd, size_t len, uint64_t iova,
			      uint32_t *ret_rkey)
{
	return roce_verbs_reg_dmabuf(((struct device_queue *)user)->v, fd, len,
				     iova, ret_rkey);
}

static int landing_reg_host(void *user, void *addr, size_t len, uint64_t iova,
			    uint32_t *ret_rkey)
{
	return roce_verbs_reg(((struct device_queue *)user)->v, addr, len, iova,
			      ret_rkey);
}

static const struct roce_landing_ops landing_ops = {
	.gpu_alloc = landing_gpu_alloc,
	.gpu_free = landing_gpu_free,
	.reg_dmabuf = landing_reg_dmabuf,
	.reg_host = landing_reg_host,
};

/* --- set-up -------------------------------------------------------------- */

/*
 * The sender's control socket; its target: fpgad's QP, the landing ring
 * (R_Key at each pin), payload = path MTU, the listen address at 4791.
 */
static int control_open(struct device_queue *q, const struct roce_verbs_cfg *vc,
			const struct roce_verbs_info *info)
{
	struct net_target *t = &q->sctl.target;
	struct sockaddr_storage local = vc->listen;
	int r;

	if (local.ss_family == AF_INET)
		((struct sockaddr_in *)&local)->sin_port = htons(ROCE_UDP_PORT);
	r = net_target_open(&q->sctl, q->ch.name, q->ch.sender_control, &vc->sender,
			 &local, &q->lock, &q->rx.cnt);
	snprintf(q->shown.control, sizeof(q->shown.control), "%s", q->sctl.where);
	t->qpn = info->qpn;
	t->layout = q->shown.layout;
	t->frame_size = (uint32_t)q->ch.frame_size;
	t->payload = info->mtu;
	q->sctl.gated = true;
	return r < 0 ? r : net_target_start(&q->sctl);
}

static void roce_queue_close(struct device_queue *q);

static int roce_queue_open(struct device *dev, const struct config_channel *ch,
			   struct device_queue **ret_q)
{
	struct roce_verbs_cfg vc = { .device = ch->rdma_device,
				     .sender_qpn = ch->sender_qpn, .mtu = ch->mtu };
	struct roce_verbs_info info;
	struct roce_rx_cfg rc = { 0 };
	struct device_queue *q;
	char why[256] = "";
	int r;

	(void)dev;
	if (ch->source != SOURCE_ROCE || ch->direction != DIR_C2H)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->kick_fd = q->sctl.fd = -1;
	q->ch = *ch;
	q->slots.slot_size = ch->slot_size;
	pthread_mutex_init(&q->lock, NULL);
	if (config_parse_endpoint(ch->listen, false, &vc.listen) < 0 ||
	    config_parse_endpoint(ch->sender, false, &vc.sender) < 0) {
		r = -EINVAL;	/* config_load() refused these already */
		goto fail;
	}
	net_layout(ch->frame_size, ch->slots, &rc.layout);
	vc.recv_depth = 2 * rc.layout.pages + ROCE_RX_BATCH;
	r = roce_verbs_open(&vc, &q->v, why, sizeof(why));
	if (r < 0) {
		log_err("roce: %s: %s", ch->name, why);
		goto fail;
	}
	roce_verbs_info(q->v, &info);
	if (info.mtu != ch->mtu)
		log_notice("roce: %s: %s port %u's active MTU is %u: path MTU %u, not %u",
			   ch->name, info.device, info.port, info.mtu, info.mtu, ch->mtu);
	rc.payload = info.mtu;
	rc.frame_size = ch->frame_size;
	rc.slot_size = ch->slot_size;
	r = roce_landing_open(&q->landing, &landing_ops, q,
			      ch->memory == MEMORY_CUDA || landing_test(),
			      info.device,
			      (size_t)rc.layout.pages * rc.layout.stride,
			      NET_VA_BASE);
	q->landing_open = r == 0;
	if (q->landing_gpu) {
		rc.io = &roce_landing_gpu_io;
		rc.io_user = &q->landing_io;
		q->slots.gpu = true;	/* the ring pinned as it is: gpudirect */
		r = roce_landing_gpu_io_open(&q->landing_io, q->landing_gpu,
					     roce_rx_io_staging(&rc));
	}
	r = r < 0 ? r : roce_rx_init(&q->rx, &rc, q->landing.mem);
	if (r < 0) {
		log_err("roce: %s: a landing ring of %zu bytes: %s", ch->name,
			q->landing.len, strerror(-r));
		goto fail;
	}
	snprintf(q->shown.landing, sizeof(q->shown.landing), "%s",
		 q->landing.shown);
	q->rx_ready = true;
	q->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->kick_fd < 0) {
		r = -errno;
		log_err("roce: %s: eventfd: %s", ch->name, strerror(-r));
		goto fail;
	}
	q->shown.source = SOURCE_ROCE;
	snprintf(q->shown.listen, sizeof(q->shown.listen), "%s", ch->listen);
	snprintf(q->shown.sender, sizeof(q->shown.sender), "%s", ch->sender);
	snprintf(q->shown.rdma_device, sizeof(q->shown.rdma_device), "%s:%u",
		 info.device, info.port);
	snprintf(q->shown.gid, sizeof(q->shown.gid), "%s", info.gid);
	q->shown.gid_index = info.gid_index;
	q->shown.mtu = info.mtu;
	q->shown.payload = info.mtu;
	q->shown.qpn = info.qpn;
	q->shown.sender_qpn = ch->sender_qpn;
	q->shown.layout = rc.layout;
	r = control_open(q, &vc, &info);
	if (r < 0)
		goto fail;
	log_info("roce: %s: %s port %u GID %s (index %u), QPN 0x%x from %s QPN 0x%x, path MTU %u, %u landing pages of %" PRIu64 " bytes, landing: %s",
		 ch->name, info.device, info.port, info.gid, info.gid_index,
		 info.qpn, ch->sender, ch->sender_qpn, info.mtu,
		 rc.layout.pages, rc.layout.stride, q->landing.shown);
	*ret_q = q;
	return 0;
fail:
	roce_queue_close(q);
	return r;
}

static void roce_queue_close(struct device_queue *q)
{
	if (!q)
		return;
	net_target_close(&q->sctl);
	roce_verbs_close(q->v);	/* the MR first, then its memory */
	if (q->rx_ready)
		roce_rx_free(&q->rx);
	if (q->landing_open)
		roce_landing_close(&q->landing, &landing_ops, q);
	if (q->kick_fd >= 0)
		close(q->kick_fd);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* --- the streaming thread's side ------------------------------------------ */

static void wake(struct device_queue *q);

/*
 * A new ring: the landing ring registered anew, so a new R_Key (a sender
 * still writing with the old one is refused by the NIC), and the sender
 * starts over.  The consumers' ring is host memory, bounce staging, or
 * with a GPU landing ring the GPU ring itself.
 */
static int roce_pin(struct device_queue *q, const struct dev_region *r,
		    uint64_t *ret_handle)
{
	uint32_t rkey;
	int e;

	pthread_mutex_lock(&q->lock);
	e = net_slots_pin(&q->slots, r, ret_handle);
	if (e < 0)
		goto out;
	e = roce_landing_reg(&q->landing, &landing_ops, q, NET_VA_BASE, &rkey);
	if (e < 0) {
		net_slots_unpin(&q->slots, *ret_handle);
		log_err("roce: %s: cannot register the landing ring: %s",
			q->ch.name, strerror(-e));
		goto out;
	}
	q->shown.rkey = rkey;
	roce_rx_restart(&q->rx);
	/* The sender is told: the control thread sends it, retries. */
	net_target_new_ring(&q->sctl, rkey);
	log_debug("roce: %s: ring pinned, R_Key 0x%08x", q->ch.name, rkey);
out:
	pthread_mutex_unlock(&q->lock);
	return e;
}

static int roce_unpin(struct device_queue *q, uint64_t handle)
{
	int r;

	pthread_mutex_lock(&q->lock);
	r = net_slots_unpin(&q->slots, handle);
	pthread_mutex_unlock(&q->lock);
	return r;
}

static int roce_submit(struct device_queue *q, const struct dev_xfer *x)
{
	bool tell;
	int r;

	pthread_mutex_lock(&q->lock);
	r = net_slots_arm(&q->slots, x, q->rx.have_slot);
	/* The sender is told its target once a slot waits for it. */
	tell = r == 0 && net_target_armed(&q->sctl);
	pthread_mutex_unlock(&q->lock);
	if (tell)
		net_target_wake(&q->sctl);
	return r;
}

/* Take what the NIC completed, then up to @max frames for the caller. */
static unsigned drain_pop(struct device_queue *q, struct dev_completion *out,
			  unsigned max)
{
	unsigned n;
	int r;

	pthread_mutex_lock(&q->lock);
	r = roce_rx_drain(&q->rx, &rx_ops, q, clock_now_ns());
	if (r < 0 && !q->poll_failed) {
		q->poll_failed = true;
		log_err("roce: %s: completions: %s; frames stop", q->ch.name,
			strerror(-r));
	}
	n = net_slots_pop(&q->slots, out, max);
	/* Said once, not per restart: the counter tells how many. */
	if (q->rx.cnt.psn_resyncs && !q->resyncs_said)
		log_notice("roce: %s: the sender's PSN went back (it restarted, jumped back or wrapped a narrower PSN): followed it; fpgactl stats counts each time",
			   q->ch.name);
	q->resyncs_said = q->rx.cnt.psn_resyncs;
	pthread_mutex_unlock(&q->lock);
	return n;
}

/* Sleep on the completion channel and the kick until @deadline (0: ever). */
static void sleep_events(struct device_queue *q, uint64_t deadline)
{
	struct pollfd p[2] = {
		{ .fd = roce_verbs_fd(q->v), .events = POLLIN },
		{ .fd = q->kick_fd, .events = POLLIN },
	};
	uint64_t now = clock_now_ns(), v;
	int ms = -1;

	if (deadline)
		ms = deadline > now ? (int)((deadline - now + 999999) / 1000000) : 0;
	if (poll(p, 2, ms) <= 0)
		return;
	/* Each event taken and acknowledged; the CQ is re-armed before sleeping. */
	if (p[0].revents)
		while (roce_verbs_event(q->v) == 0)
			;
	if (p[1].revents && read(q->kick_fd, &v, sizeof(v)) < 0)
		return;
}

static int roce_wait(struct device_queue *q, struct dev_completion *out,
		     unsigned max, int timeout_ms)
{
	uint64_t deadline = timeout_ms > 0 ? clock_deadline_ns(timeout_ms) : 0;
	uint64_t spin_end = clock_now_ns() + (uint64_t)q->ch.poll_us * 1000;
	unsigned n;

	if (!max)
		return 0;
	for (;;) {
		n = drain_pop(q, out, max);
		if (n)
			return (int)n;
		if (atomic_exchange(&q->kicked, 0) || !timeout_ms ||
		    (deadline && clock_now_ns() >= deadline))
			return 0;
		/* Busy-poll first where the channel asks (poll_us). */
		if (clock_now_ns() < spin_end)
			continue;
		/* Armed, then polled again: a completion between the two wakes us. */
		if (roce_verbs_arm(q->v) < 0)
			return 0;
		n = drain_pop(q, out, max);
		if (n)
			return (int)n;
		if (atomic_load(&q->kicked))
			continue;
		sleep_events(q, deadline);
	}
}

/* Wake a wait() sleeping in sleep_events(). */
static void wake(struct device_queue *q)
{
	uint64_t one = 1;

	if (write(q->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("roce: %s: wake: %s", q->ch.name, strerror(errno));
}

static void roce_kick(struct device_queue *q)
{
	atomic_store(&q->kicked, 1);
	wake(q);
}

/* Every armed slot, and the one the next frame was going into, comes back. */
static int roce_reset(struct device_queue *q)
{
	struct net_slot s;

	pthread_mutex_lock(&q->lock);
	net_slots_cancel(&q->slots, roce_rx_release(&q->rx, &s) ? &s : NULL);
	pthread_mutex_unlock(&q->lock);
	wake(q);
	return 0;
}

static int roce_stats(struct device_queue *q, struct source_stats *ret_stats)
{
	pthread_mutex_lock(&q->lock);
	*ret_stats = q->shown;
	ret_stats->cnt = q->rx.cnt;
	pthread_mutex_unlock(&q->lock);
	return 0;
}

const struct device_ops device_roce_ops = {
	.name = "roce",
	.queue_open = roce_queue_open,
	.queue_close = roce_queue_close,
	.pin = roce_pin,
	.unpin = roce_unpin,
	.submit = roce_submit,
	.wait = roce_wait,
	.kick = roce_kick,
	.reset = roce_reset,
};

const struct source source_roce = {
	.name = "roce",
	.ops = &device_roce_ops,
	.sender_paced = true,
	.stats = roce_stats,
};
