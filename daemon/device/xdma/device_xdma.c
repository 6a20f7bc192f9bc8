// SPDX-License-Identifier: MIT
/*
 * device_xdma.c - the xdma device backend: a real card through
 * fpgad_dma.ko and /dev/fpgadN (kmod/uapi/fpgad_dma.h is the contract).
 *
 * The device keeps one open file for VERSION and INFO.  Each queue opens
 * the node again: the kernel ties pins and transfers to the open file, so
 * closing the queue (or the daemon dying) releases everything it pinned
 * and cancels everything it queued.
 *
 *   pin     DEV_REGION_HOST   -> PIN_HOST (address, length)
 *           DEV_REGION_DMABUF -> PIN_DMABUF (fd from the memory backend's
 *                                export_dmabuf; the kernel keeps its own
 *                                reference, the caller may close the fd)
 *           DEV_REGION_CUDA   -> PIN_NVP2P when the module has it
 *   submit  SUBMIT on the queue's engine; completions come back through
 *           read() of the queue's file
 *   wait    read() what is there; otherwise poll() the file and the
 *           queue's eventfd, which kick() writes
 *   reset   RESET: the engine stops, what this queue had queued completes
 *           with -ECANCELED; on a wedged channel (an engine that did not
 *           stop) the kernel resets the card's PCI function
 *   p2p     P2P_PATH: the PCI path to a GPU and the kernel's verdict on
 *           peer-to-peer, for topology.c
 *
 * A memory queue (mem_queue_open) is the same open file on an engine no
 * channel drives: SUBMIT carries the card address, which the module checks
 * against the card memory it reports.  Its completion descriptor is the
 * file itself, readable while a record waits.
 *
 * Only this file talks to the kernel driver.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "device/device.h"
#include "fpgad_dma.h"
#include "log.h"

#define XDMA_DEFAULT_PATH	"/dev/fpgad0"
#define XDMA_ENGINES		4	/* per direction, as the module allows */
#define XDMA_WAIT_BATCH		64	/* completions read at once */

struct device {
	char path[PATH_MAX];
	int fd;
	uint32_t features;
	struct fpgad_dma_info info;
	unsigned timeout_ms;		/* 0 = the module's default */
	pthread_mutex_t lock;		/* queues */
	bool lock_init;
	struct device_queue *queues[2][XDMA_ENGINES];
};

struct device_queue {
	struct device *dev;
	struct config_channel ch;
	uint32_t dir;			/* FPGAD_DMA_H2C / FPGAD_DMA_C2H */
	int fd;				/* this queue's own open file */
	int kick_fd;			/* eventfd */
};

/*
 * Open @path and state our ABI version; returns the fd, or -errno with
 * why in @err.
 */
static int xdma_open_file(const char *path, uint32_t *ret_features,
			  char *err, size_t errlen)
{
	struct fpgad_dma_version v;
	int fd, r;

	/* Non-blocking: wait() polls, read() only takes what is there. */
	fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "xdma: %s: %s%s", path, strerror(-r),
			 r == -ENOENT ? " (is fpgad_dma.ko loaded and the card "
					"bound? see kmod/)" : "");
		return r;
	}
	memset(&v, 0, sizeof(v));
	v.abi_version = FPGAD_DMA_ABI_VERSION;
	if (ioctl(fd, FPGAD_DMA_IOC_VERSION, &v)) {
		r = -errno;
		snprintf(err, errlen, "xdma: %s: VERSION: %s (not an fpgad_dma "
			 "device?)", path, strerror(-r));
		close(fd);
		return r;
	}
	if (v.abi_version != FPGAD_DMA_ABI_VERSION) {
		snprintf(err, errlen, "xdma: %s: driver ABI %u, fpgad speaks %u: "
			 "install matching fpgad_dma.ko and fpgad", path,
			 v.abi_version, FPGAD_DMA_ABI_VERSION);
		close(fd);
		return -EPROTO;
	}
	if (ret_features)
		*ret_features = v.features;
	return fd;
}

static void xdma_close(struct device *d);
static void xdma_queue_close(struct device_queue *q);

static int xdma_open(const struct config *cfg, struct device **ret_dev,
		     char *err, size_t errlen)
{
	struct device *d;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = -1;
	snprintf(d->path, sizeof(d->path), "%s",
		 cfg->device.path[0] ? cfg->device.path : XDMA_DEFAULT_PATH);
	d->timeout_ms = cfg->device.dma_timeout_ms;
	r = -pthread_mutex_init(&d->lock, NULL);
	if (r)
		goto fail;
	d->lock_init = true;

	r = xdma_open_file(d->path, &d->features, err, errlen);
	if (r < 0)
		goto fail;
	d->fd = r;
	if (ioctl(d->fd, FPGAD_DMA_IOC_INFO, &d->info)) {
		r = -errno;
		snprintf(err, errlen, "xdma: %s: INFO: %s", d->path, strerror(-r));
		goto fail;
	}
	d->info.engine[sizeof(d->info.engine) - 1] = 0;
	log_info("xdma: %s: %s engine %04x:%04x at %04x:%02x:%02x.%u, "
		 "%u H2C + %u C2H channels, PCIe gen%u x%u, dma-buf %s, "
		 "nv-p2p %s", d->path, d->info.engine, d->info.vendor,
		 d->info.device, d->info.pci_domain, d->info.pci_bus,
		 d->info.pci_devfn >> 3, d->info.pci_devfn & 7u,
		 d->info.h2c_channels, d->info.c2h_channels,
		 d->info.link_gen, d->info.link_width,
		 d->features & FPGAD_DMA_FEAT_DMABUF ? "yes" : "no",
		 d->features & FPGAD_DMA_FEAT_NVP2P ? "yes" : "no");
	*ret_dev = d;
	return 0;

fail:
	xdma_close(d);
	return r;
}

static void xdma_close(struct device *d)
{
	unsigned dir, i;

	if (!d)
		return;
	for (dir = 0; dir < 2; dir++)
		for (i = 0; i < XDMA_ENGINES; i++)
			xdma_queue_close(d->queues[dir][i]);
	if (d->fd >= 0)
		close(d->fd);
	if (d->lock_init)
		pthread_mutex_destroy(&d->lock);
	free(d);
}

static int xdma_info(struct device *d, struct device_info *ret_info)
{
	struct device_info info;

	memset(&info, 0, sizeof(info));
	snprintf(info.name, sizeof(info.name), "%s %04x:%04x %04x:%02x:%02x.%u",
		 d->info.engine, d->info.vendor, d->info.device,
		 d->info.pci_domain, d->info.pci_bus, d->info.pci_devfn >> 3,
		 d->info.pci_devfn & 7u);
	info.c2h_channels = d->info.c2h_channels;
	info.h2c_channels = d->info.h2c_channels;
	info.link_gen = d->info.link_gen;
	info.link_width = d->info.link_width;
	info.card_memory = d->info.card_memory;
	info.align = d->info.align;
	info.max_inflight = d->info.max_inflight;
	snprintf(info.pci_addr, sizeof(info.pci_addr), "%04x:%02x:%02x.%u",
		 d->info.pci_domain, d->info.pci_bus, d->info.pci_devfn >> 3,
		 d->info.pci_devfn & 7u);
	info.max_transfer = d->info.max_transfer;
	info.xfer_align = d->info.align ? d->info.align : 1;
	*ret_info = info;
	return 0;
}

static int xdma_queue_open(struct device *d, const struct config_channel *ch,
			   struct device_queue **ret_q);

static int xdma_mem_queue_open(struct device *d, enum direction dir,
			       unsigned engine, unsigned poll_us,
			       struct device_queue **ret_q)
{
	struct config_channel ch;

	(void)poll_us;
	memset(&ch, 0, sizeof(ch));
	snprintf(ch.name, sizeof(ch.name), "mem-%s%u",
		 dir == DIR_C2H ? "c2h" : "h2c", engine);
	ch.direction = dir;
	ch.engine = engine;
	return xdma_queue_open(d, &ch, ret_q);
}

static int xdma_completion_fd(struct device_queue *q)
{
	return q->fd;
}

static int xdma_queue_open(struct device *d, const struct config_channel *ch,
			   struct device_queue **ret_q)
{
	uint32_t dir, n;
	struct device_queue *q;
	char why[PATH_MAX + 128];
	int r;

	if (ch->direction != DIR_C2H && ch->direction != DIR_H2C)
		return -EINVAL;
	dir = ch->direction == DIR_C2H ? FPGAD_DMA_C2H : FPGAD_DMA_H2C;
	n = dir == FPGAD_DMA_C2H ? d->info.c2h_channels : d->info.h2c_channels;
	if (ch->engine >= n || ch->engine >= XDMA_ENGINES) {
		log_err("xdma: %s: %s engine %u: the card has %u", ch->name,
			dir == FPGAD_DMA_C2H ? "c2h" : "h2c", ch->engine, n);
		return -EINVAL;
	}

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->dev = d;
	q->ch = *ch;
	q->dir = dir;
	q->fd = -1;
	q->kick_fd = -1;

	pthread_mutex_lock(&d->lock);
	if (d->queues[dir][ch->engine]) {
		pthread_mutex_unlock(&d->lock);
		log_err("xdma: %s: %s engine %u is already open", ch->name,
			dir == FPGAD_DMA_C2H ? "c2h" : "h2c", ch->engine);
		free(q);
		return -EBUSY;
	}
	d->queues[dir][ch->engine] = q;
	pthread_mutex_unlock(&d->lock);

	r = xdma_open_file(d->path, NULL, why, sizeof(why));
	if (r < 0) {
		log_err("%s", why);
		goto fail;
	}
	q->fd = r;
	q->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (q->kick_fd < 0) {
		r = -errno;
		log_err("xdma: %s: eventfd: %s", ch->name, strerror(-r));
		goto fail;
	}
	*ret_q = q;
	return 0;

fail:
	xdma_queue_close(q);
	return r;
}

static void xdma_queue_close(struct device_queue *q)
{
	struct device *d;

	if (!q)
		return;
	d = q->dev;
	/* Closing the file cancels its transfers and releases its pins. */
	if (q->fd >= 0)
		close(q->fd);
	if (q->kick_fd >= 0)
		close(q->kick_fd);
	pthread_mutex_lock(&d->lock);
	if (d->queues[q->dir][q->ch.engine] == q)
		d->queues[q->dir][q->ch.engine] = NULL;
	pthread_mutex_unlock(&d->lock);
	free(q);
}

static int xdma_pin(struct device_queue *q, const struct dev_region *r,
		    uint64_t *ret_handle)
{
	const char *what;
	uint64_t handle;
	int rc;

	if (!r->length)
		return -EINVAL;
	switch (r->kind) {
	case DEV_REGION_HOST: {
		struct fpgad_dma_pin_host p;

		memset(&p, 0, sizeof(p));
		p.addr = (uintptr_t)r->addr;
		p.length = r->length;
		what = "PIN_HOST";
		rc = ioctl(q->fd, FPGAD_DMA_IOC_PIN_HOST, &p);
		handle = p.handle;
		break;
	}
	case DEV_REGION_DMABUF: {
		struct fpgad_dma_pin_dmabuf p;

		if (r->fd < 0)
			return -EBADF;
		memset(&p, 0, sizeof(p));
		p.fd = r->fd;
		p.offset = r->fd_offset;
		p.length = r->length;
		what = "PIN_DMABUF";
		rc = ioctl(q->fd, FPGAD_DMA_IOC_PIN_DMABUF, &p);
		handle = p.handle;
		break;
	}
	case DEV_REGION_CUDA: {
		struct fpgad_dma_pin_nvp2p p;

		if (!(q->dev->features & FPGAD_DMA_FEAT_NVP2P)) {
			log_err("xdma: %s: CUDA memory needs a dma-buf "
				"(DEV_REGION_DMABUF) or a module built with "
				"NVIDIA_SRC=", q->ch.name);
			return -EOPNOTSUPP;
		}
		memset(&p, 0, sizeof(p));
		p.gpu_addr = (uintptr_t)r->addr;
		p.length = r->length;
		what = "PIN_NVP2P";
		rc = ioctl(q->fd, FPGAD_DMA_IOC_PIN_NVP2P, &p);
		handle = p.handle;
		break;
	}
	default:
		return -EINVAL;
	}
	if (rc) {
		rc = -errno;
		log_err("xdma: %s: %s of %" PRIu64 " bytes: %s", q->ch.name,
			what, r->length, strerror(-rc));
		return rc;
	}
	*ret_handle = handle;
	return 0;
}

static int xdma_unpin(struct device_queue *q, uint64_t handle)
{
	struct fpgad_dma_unpin u;

	memset(&u, 0, sizeof(u));
	u.handle = handle;
	return ioctl(q->fd, FPGAD_DMA_IOC_UNPIN, &u) ? -errno : 0;
}

static int xdma_submit(struct device_queue *q, const struct dev_xfer *x)
{
	struct fpgad_dma_submit s;

	memset(&s, 0, sizeof(s));
	s.channel = q->ch.engine;
	s.direction = q->dir;
	s.handle = x->handle;
	s.offset = x->offset;
	s.card_addr = x->card_addr;
	s.length = x->length;
	s.cookie = x->cookie;
	s.timeout_ms = x->timeout_ms ? x->timeout_ms : q->dev->timeout_ms;
	return ioctl(q->fd, FPGAD_DMA_IOC_SUBMIT, &s) ? -errno : 0;
}

/* Completions already there; 0 when none, -errno on failure. */
static int xdma_reap(struct device_queue *q, struct dev_completion *out,
		     unsigned max)
{
	struct fpgad_dma_completion c[XDMA_WAIT_BATCH];
	unsigned n, i;
	ssize_t got;

	if (max > XDMA_WAIT_BATCH)
		max = XDMA_WAIT_BATCH;
	do
		got = read(q->fd, c, max * sizeof(c[0]));
	while (got < 0 && errno == EINTR);
	if (got < 0)
		return errno == EAGAIN ? 0 : -errno;
	n = (unsigned)((size_t)got / sizeof(c[0]));
	for (i = 0; i < n; i++) {
		if (c[i].flags & FPGAD_DMA_COMPLETION_WEDGED)
			log_err("xdma: %s: the engine did not stop (%s): the "
				"channel is wedged until reset", q->ch.name,
				strerror(-c[i].status));
		memset(&out[i], 0, sizeof(out[i]));
		out[i].cookie = c[i].cookie;
		out[i].status = c[i].status;
		out[i].length = c[i].length;
		out[i].t_start_ns = c[i].t_start_ns;
		out[i].t_end_ns = c[i].t_end_ns;
	}
	return (int)n;
}

static bool xdma_take_kick(struct device_queue *q)
{
	uint64_t v;

	return read(q->kick_fd, &v, sizeof(v)) == (ssize_t)sizeof(v);
}

static int xdma_wait(struct device_queue *q, struct dev_completion *out,
		     unsigned max, int timeout_ms)
{
	uint64_t deadline = 0;
	struct pollfd pfd[2];
	int r, left;

	if (!max)
		return 0;
	if (!out)
		return -EINVAL;
	if (timeout_ms > 0)
		deadline = (clock_now_ns() / CLOCK_NS_PER_MS) + (uint64_t)timeout_ms;
	for (;;) {
		r = xdma_reap(q, out, max);
		if (r)
			return r;
		if (xdma_take_kick(q) || !timeout_ms)
			return 0;

		left = -1;
		if (timeout_ms > 0) {
			uint64_t now = (clock_now_ns() / CLOCK_NS_PER_MS);

			if (now >= deadline)
				return 0;
			left = (int)(deadline - now);
		}
		pfd[0].fd = q->fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = q->kick_fd;
		pfd[1].events = POLLIN;
		r = poll(pfd, 2, left);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0 && (pfd[0].revents & (POLLERR | POLLHUP)) &&
		    !(pfd[0].revents & POLLIN)) {
			log_err("xdma: %s: the card is gone", q->ch.name);
			return -ENODEV;
		}
	}
}

static void xdma_kick(struct device_queue *q)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is saturated, a kick is pending anyway. */
	if (write(q->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_warn("xdma: %s: kick: %s", q->ch.name, strerror(errno));
}

static int xdma_reset(struct device_queue *q)
{
	struct fpgad_dma_reset rs;
	int r;

	memset(&rs, 0, sizeof(rs));
	rs.channel = q->ch.engine;
	rs.direction = q->dir;
	if (ioctl(q->fd, FPGAD_DMA_IOC_RESET, &rs)) {
		r = -errno;
		log_err("xdma: %s: RESET: %s", q->ch.name, strerror(-r));
		return r;
	}
	log_debug("xdma: %s: engine reset", q->ch.name);
	return 0;
}

/* The kernel walks the path and reads ACS, which needs privileges we lack. */
static int xdma_p2p_path(struct device *d, struct fpgad_dma_p2p_path *path)
{
	return ioctl(d->fd, FPGAD_DMA_IOC_P2P_PATH, path) ? -errno : 0;
}

const struct device_ops device_xdma_ops = {
	.name = "xdma",
	.open = xdma_open,
	.close = xdma_close,
	.info = xdma_info,
	.queue_open = xdma_queue_open,
	.queue_close = xdma_queue_close,
	.pin = xdma_pin,
	.unpin = xdma_unpin,
	.submit = xdma_submit,
	.wait = xdma_wait,
	.kick = xdma_kick,
	.reset = xdma_reset,
	.p2p_path = xdma_p2p_path,
	.mem_queue_open = xdma_mem_queue_open,
	.completion_fd = xdma_completion_fd,
};
