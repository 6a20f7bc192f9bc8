// SPDX-License-Identifier: MIT
/*
 * kmod_xfer.c - card memory transfers through the daemon's xdma backend
 * (daemon/device/xdma/device_xdma.c) on QEMU's edu device, as fpgad's transfer thread
 * drives it: memory queues (mem_queue_open) of both directions, their
 * completion descriptors (what the thread polls), host memory pinned the
 * way fpgad pins a client's registered memfd, a vgem dma-buf standing in
 * for GPU memory (PIN_DMABUF), writes and reads at card addresses over
 * the edu's card memory checked byte for byte, and the module's refusal
 * of a transfer that ends past the card's memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "device/device.h"
#include "kmod_xfer.h"

#define XDEV "/dev/fpgad0"
#define XPAGE 4096u
#define XWAIT_MS 5000

static void (*ok)(int ok, const char *fmt, ...);

/* Submit, wait on the completion descriptor as fpgad does, take it. */
static int xfer(struct device_queue *q, uint64_t handle, uint64_t off,
		uint64_t card, uint64_t len, uint64_t cookie)
{
	const struct device_ops *ops = &device_xdma_ops;
	struct dev_xfer x = { .handle = handle, .offset = off,
			      .card_addr = card, .length = len,
			      .cookie = cookie };
	struct pollfd p = { .fd = ops->completion_fd(q), .events = POLLIN };
	struct dev_completion c;
	int r = ops->submit(q, &x);

	if (r)
		return r;
	if (poll(&p, 1, XWAIT_MS) != 1)
		return -9000;
	if (ops->wait(q, &c, 1, 0) != 1 || c.cookie != cookie)
		return -9001;
	return c.status ? c.status : c.length == len ? 0 : -9002;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 29 + seed * 101 + (i >> 7));
}

void kmod_xfer_tests(void (*check)(int ok, const char *fmt, ...),
		     int (*vgem_dmabuf)(size_t size))
{
	const struct device_ops *ops = &device_xdma_ops;
	struct device_queue *qh = NULL, *qc = NULL, *q2 = NULL;
	struct dev_region rh = { .kind = DEV_REGION_HOST, .fd = -1,
				 .length = 2 * XPAGE };
	struct dev_region rd = { .kind = DEV_REGION_DMABUF,
				 .length = 2 * XPAGE };
	struct device_info info;
	struct config cfg;
	struct device *d;
	uint64_t hh, hc, hd;
	uint8_t *mem, *dma;
	int mfd, dbuf;

	ok = check;
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.device.path, sizeof(cfg.device.path), "%s", XDEV);
	if (ops->open(&cfg, &d, NULL, 0)) {
		ok(0, "xfer: xdma backend open");
		return;
	}
	if (ops->info(d, &info))
		memset(&info, 0, sizeof(info));
	ok(info.card_memory == 4095 && info.max_transfer == 4095 &&
	   info.xfer_align == 1,
	   "xfer: card memory %llu bytes, transfers up to %llu, alignment %u",
	   (unsigned long long)info.card_memory,
	   (unsigned long long)info.max_transfer, info.xfer_align);
	ok(ops->mem_queue_open(d, DIR_H2C, 0, 0, &qh) == 0 &&
	   ops->mem_queue_open(d, DIR_C2H, 0, 0, &qc) == 0,
	   "xfer: memory queues of both directions on engine 0");
	ok(ops->mem_queue_open(d, DIR_C2H, 0, 0, &q2) == -EBUSY &&
	   ops->mem_queue_open(d, DIR_C2H, 1, 0, &q2) == -EINVAL,
	   "xfer: an engine taken, an engine missing: refused");
	ok(ops->completion_fd(qh) >= 0 && ops->completion_fd(qc) >= 0,
	   "xfer: completion descriptors");

	/* Host memory the way a client registers it: a sealed memfd. */
	mfd = memfd_create("kmod-xfer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	mem = MAP_FAILED;
	if (mfd >= 0 && ftruncate(mfd, 2 * XPAGE) == 0 &&
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0)
		mem = mmap(NULL, 2 * XPAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
			   mfd, 0);
	dbuf = vgem_dmabuf(2 * XPAGE);
	dma = mmap(NULL, 2 * XPAGE, PROT_READ | PROT_WRITE, MAP_SHARED, dbuf, 0);
	if (mem == MAP_FAILED || dma == MAP_FAILED) {
		ok(0, "xfer: memfd and dma-buf mappings");
		goto close;
	}
	rh.addr = mem;
	rd.fd = dbuf;
	ok(ops->pin(qh, &rh, &hh) == 0 && ops->pin(qc, &rh, &hc) == 0 &&
	   ops->pin(qc, &rd, &hd) == 0,
	   "xfer: a memfd pinned in both queues, a vgem dma-buf in one");

	/* Host -> card address 100, card -> dma-buf. */
	fill(mem, 1000, 1);
	memset(dma, 0, 2 * XPAGE);
	ok(xfer(qh, hh, 0, 100, 1000, 1) == 0, "xfer: write 1000 bytes at card address 100");
	ok(xfer(qc, hd, 512, 100, 1000, 2) == 0 && !memcmp(dma + 512, mem, 1000),
	   "xfer: read them back into the dma-buf, byte-exact");
	/* dma-buf -> card address 3000 (to the last byte), card -> host. */
	fill(dma + XPAGE, 1095, 2);
	ok(xfer(qh, hh, 0, 0, 1, 3) == 0, "xfer: one byte at card address 0");
	{
		/* The dma-buf as the source of a write: an h2c pin of it. */
		uint64_t hw;

		ok(ops->pin(qh, &rd, &hw) == 0 &&
		   xfer(qh, hw, XPAGE, 3000, 1095, 4) == 0,
		   "xfer: write 1095 bytes from the dma-buf, to the last byte of card memory");
		memset(mem + XPAGE, 0, XPAGE);
		ok(xfer(qc, hc, XPAGE, 3000, 1095, 5) == 0 &&
		   !memcmp(mem + XPAGE, dma + XPAGE, 1095),
		   "xfer: read them into host memory, byte-exact");
		ok(ops->unpin(qh, hw) == 0, "xfer: unpin the dma-buf's h2c pin");
	}
	/* What lies past the card's memory is refused by the module. */
	ok(xfer(qc, hc, 0, 4000, 200, 6) == -EINVAL &&
	   xfer(qc, hc, 0, 4095, 1, 7) == -EINVAL,
	   "xfer: a transfer ending past card memory: EINVAL");
	/* The first bytes are still what was written there. */
	memset(mem, 0xee, 8);
	ok(xfer(qc, hc, 0, 100, 8, 8) == 0 && mem[0] == (uint8_t)(0 * 29 + 101) &&
	   mem[7] == (uint8_t)(7 * 29 + 101),
	   "xfer: card address 100 still holds the first write");
	ok(ops->unpin(qh, hh) == 0 && ops->unpin(qc, hc) == 0 &&
	   ops->unpin(qc, hd) == 0, "xfer: unpin");
close:
	ops->queue_close(qh);
	ops->queue_close(qc);
	ops->close(d);
	if (mem != MAP_FAILED)
		munmap(mem, 2 * XPAGE);
	if (dma != MAP_FAILED)
		munmap(dma, 2 * XPAGE);
	if (mfd >= 0)
		close(mfd);
	if (dbuf >= 0)
		close(dbuf);
}
