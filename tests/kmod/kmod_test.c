// SPDX-License-Identifier: MIT
/*
 * kmod_test.c - runs inside the QEMU guest (static binary, PID 1's child)
 * against fpgad_dma.ko bound to QEMU's edu device, with vgem loaded.
 *
 * The last part drives the same device through the daemon's xdma backend
 * (daemon/device/xdma/device_xdma.c, linked in), as fpgad's streaming threads do.
 *
 * With an argument it checks FPGAD_DMA_IOC_P2P_PATH in the q35 boots
 * tests/kmod/run.sh makes: "p2p-switch" (edu and a peer under two
 * downstream ports of one x3130 switch) and "p2p-rootport" (edu on a root
 * port, one peer on another root port, one under a second host bridge).
 * The expected path is what the kernel enumerated from QEMU's command
 * line, read back from sysfs: the device paths, the ports' ids (TI XIO3130
 * upstream 104c:8232 and downstream 104c:8233, QEMU's root port 1b36:000c)
 * and their ACS capabilities in config space.
 *
 * Prints one "ok"/"not ok" line per check and "kmod_test: N failed" at the
 * end; exits non-zero when anything failed.  Every wait is bounded, so a
 * hung driver shows up as a failure, not as a hang.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/dma-buf.h>
#include <drm.h>
#include <drm_mode.h>

#include "device/device.h"
#include "fpgad_dma.h"
#include "kmod_xfer.h"

#define DEV		"/dev/fpgad0"
#define SYSFS		"/sys/class/fpgad/fpgad0/"
#define PAGE		4096u
#define WAIT_MS		5000

static int failures;
static int checks;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s %d - ", ok ? "ok" : "not ok", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static void die(const char *what)
{
	printf("not ok - %s: %s\nkmod_test: aborted\n", what, strerror(errno));
	fflush(stdout);
	exit(2);
}

static long long counter(const char *name)
{
	char path[128], buf[64];
	long long v = -1;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SYSFS "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = 0;
		v = strtoll(buf, NULL, 10);
	}
	close(fd);
	return v;
}

static int open_dev(void)
{
	struct fpgad_dma_version v = { .abi_version = FPGAD_DMA_ABI_VERSION };
	int fd = open(DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open " DEV);
	if (ioctl(fd, FPGAD_DMA_IOC_VERSION, &v))
		die("VERSION");
	return fd;
}

static uint64_t pin_host(int fd, void *addr, uint64_t len)
{
	struct fpgad_dma_pin_host p = { .addr = (uintptr_t)addr, .length = len };

	if (ioctl(fd, FPGAD_DMA_IOC_PIN_HOST, &p))
		die("PIN_HOST");
	return p.handle;
}

static int submit(int fd, uint32_t dir, uint64_t handle, uint64_t off,
		  uint64_t card, uint64_t len, uint64_t cookie, uint32_t tmo)
{
	struct fpgad_dma_submit s = {
		.channel = 0, .direction = dir, .handle = handle,
		.offset = off, .card_addr = card, .length = len,
		.cookie = cookie, .timeout_ms = tmo,
	};

	return ioctl(fd, FPGAD_DMA_IOC_SUBMIT, &s) ? -errno : 0;
}

/* One completion, waited for with poll(); status -9999 if none came. */
static struct fpgad_dma_completion wait_one(int fd)
{
	struct fpgad_dma_completion c = { .status = -9999 };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, WAIT_MS) != 1 || !(pfd.revents & POLLIN))
		return c;
	if (read(fd, &c, sizeof(c)) != sizeof(c))
		c.status = -9998;
	return c;
}

/* Submit and wait; returns the completion status. */
static int xfer(int fd, uint32_t dir, uint64_t handle, uint64_t off,
		uint64_t card, uint64_t len, uint32_t tmo)
{
	static uint64_t cookie = 1000;
	struct fpgad_dma_completion c;
	int ret;

	cookie++;
	ret = submit(fd, dir, handle, off, card, len, cookie, tmo);
	if (ret)
		return ret;
	c = wait_one(fd);
	if (c.status == 0 && (c.cookie != cookie || c.length != len ||
			      c.direction != dir))
		return -1000;
	return c.status;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 8));
}

/* 1: first-call rule and INFO. */
static void test_version_info(void)
{
	struct fpgad_dma_version v = { .abi_version = FPGAD_DMA_ABI_VERSION + 1 };
	struct fpgad_dma_info in;
	int fd = open(DEV, O_RDWR), rc;

	if (fd < 0)
		die("open " DEV);
	check(ioctl(fd, FPGAD_DMA_IOC_INFO, &in) == -1 && errno == EPROTO,
	      "INFO before VERSION fails with EPROTO");
	rc = ioctl(fd, FPGAD_DMA_IOC_VERSION, &v);
	check(rc == 0 && v.abi_version == FPGAD_DMA_ABI_VERSION,
	      "VERSION reports the driver's ABI %u", v.abi_version);
	check(ioctl(fd, FPGAD_DMA_IOC_INFO, &in) == -1 && errno == EPROTO,
	      "INFO after a mismatched VERSION still fails with EPROTO");
	v.abi_version = FPGAD_DMA_ABI_VERSION;
	check(ioctl(fd, FPGAD_DMA_IOC_VERSION, &v) == 0 &&
	      (v.features & FPGAD_DMA_FEAT_DMABUF), "VERSION matches, dma-buf feature");
	memset(&in, 0xff, sizeof(in));
	rc = ioctl(fd, FPGAD_DMA_IOC_INFO, &in);
	check(rc == 0 && !strcmp(in.engine, "edu") && in.h2c_channels == 1 &&
	      in.c2h_channels == 1 && in.card_memory == 4095 &&
	      in.vendor == 0x1234 && in.device == 0x11e8 &&
	      in.max_inflight > 0 && in.reserved[0] == 0 &&
	      in.timeout_bytes_per_ms == 62500,
	      "INFO: engine %s, %u+%u channels, card memory %llu",
	      in.engine, in.h2c_channels, in.c2h_channels,
	      (unsigned long long)in.card_memory);
	check(ioctl(fd, _IOWR(FPGAD_DMA_IOC_MAGIC, 0x7f, struct fpgad_dma_reset),
		    &in) == -1 && errno == ENOTTY, "unknown ioctl: ENOTTY");
	errno = 0;
	check(lseek(fd, 0, SEEK_SET) == -1 && errno == ESPIPE,
	      "lseek fails with ESPIPE (errno %d)", errno);
	close(fd);
}

/* 2: PIN_HOST and real DMA through edu, byte-exact. */
static void test_host_dma(void)
{
	int fd = open_dev();
	uint8_t *buf = mmap(NULL, 4 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t h;
	int st;

	if (buf == MAP_FAILED)
		die("mmap");
	memset(buf, 0, 4 * PAGE);
	h = pin_host(fd, buf, 4 * PAGE);
	check(h != 0 && counter("pins") == 1 &&
	      counter("pinned_bytes") == 4 * PAGE, "PIN_HOST: handle %llu, counters",
	      (unsigned long long)h);

	fill(buf, 2048, 1);
	st = xfer(fd, FPGAD_DMA_H2C, h, 0, 0, 2048, 0);
	check(st == 0, "H2C 2048 bytes host->card: status %d", st);
	st = xfer(fd, FPGAD_DMA_C2H, h, PAGE, 0, 2048, 0);
	check(st == 0 && !memcmp(buf, buf + PAGE, 2048),
	      "C2H 2048 bytes card->host byte-exact: status %d", st);

	/* Across a page boundary: two DMA segments unless contiguous. */
	fill(buf + 2 * PAGE - 1000, 2000, 2);
	st = xfer(fd, FPGAD_DMA_H2C, h, 2 * PAGE - 1000, 2000, 2000, 0);
	check(st == 0, "H2C across a page boundary: status %d", st);
	memset(buf + 3 * PAGE - 7, 0, 2000);
	st = xfer(fd, FPGAD_DMA_C2H, h, 3 * PAGE - 7, 2000, 2000, 0);
	check(st == 0 && !memcmp(buf + 2 * PAGE - 1000, buf + 3 * PAGE - 7, 2000),
	      "C2H across a page boundary byte-exact: status %d", st);
	/* The first transfer's bytes are still on the card. */
	memset(buf + PAGE, 0, 1000);
	st = xfer(fd, FPGAD_DMA_C2H, h, PAGE, 0, 1000, 0);
	check(st == 0 && !memcmp(buf, buf + PAGE, 1000),
	      "card memory kept the first transfer");

	check(submit(fd, FPGAD_DMA_H2C, h, 0, 4000, 200, 1, 0) == -EINVAL,
	      "SUBMIT past card memory: EINVAL");
	check(submit(fd, FPGAD_DMA_H2C, h, 4 * PAGE - 10, 0, 20, 1, 0) == -EINVAL,
	      "SUBMIT past the pin: EINVAL");
	check(submit(fd, FPGAD_DMA_H2C, h, 0, 0, 0, 1, 0) == -EINVAL,
	      "SUBMIT of length 0: EINVAL");
	check(submit(fd, FPGAD_DMA_H2C, h + 100, 0, 0, 16, 1, 0) == -ENOENT,
	      "SUBMIT with an unknown handle: ENOENT");
	check(submit(fd, 2, h, 0, 0, 16, 1, 0) == -EINVAL &&
	      submit(fd, FPGAD_DMA_H2C, h, 0, 0, 16, 1, 0) == 0 &&
	      wait_one(fd).status == 0, "bad direction: EINVAL; channel still fine");

	{
		struct fpgad_dma_unpin u = { .handle = h };

		check(ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u) == 0 &&
		      counter("pins") == 0 && counter("pinned_bytes") == 0,
		      "UNPIN: counters back to zero");
		check(ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u) == -1 && errno == ENOENT,
		      "second UNPIN: ENOENT");
	}
	{
		struct fpgad_dma_pin_host p = { .addr = 0x1000, .length = PAGE };

		check(ioctl(fd, FPGAD_DMA_IOC_PIN_HOST, &p) == -1 && errno == EFAULT,
		      "PIN_HOST of unmapped memory: EFAULT");
		p.addr = (uintptr_t)buf;
		p.length = 0;
		check(ioctl(fd, FPGAD_DMA_IOC_PIN_HOST, &p) == -1 && errno == EINVAL,
		      "PIN_HOST of length 0: EINVAL");
	}
	close(fd);
	munmap(buf, 4 * PAGE);
}

/* A vgem dumb buffer exported as a dma-buf. */
static int vgem_dmabuf(size_t size)
{
	struct drm_mode_create_dumb cd = { .width = size / 4, .height = 1, .bpp = 32 };
	struct drm_prime_handle ph = { 0 };
	int card = open("/dev/dri/card0", O_RDWR | O_CLOEXEC);

	if (card < 0)
		die("open /dev/dri/card0");
	if (ioctl(card, DRM_IOCTL_MODE_CREATE_DUMB, &cd))
		die("DRM_IOCTL_MODE_CREATE_DUMB");
	ph.handle = cd.handle;
	ph.flags = DRM_CLOEXEC | DRM_RDWR;
	if (ioctl(card, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph))
		die("DRM_IOCTL_PRIME_HANDLE_TO_FD");
	close(card);	/* the dma-buf keeps the object alive */
	return ph.fd;
}

static void dmabuf_sync(int fd, uint64_t flags)
{
	struct dma_buf_sync s = { .flags = flags };

	if (ioctl(fd, DMA_BUF_IOCTL_SYNC, &s))
		die("DMA_BUF_IOCTL_SYNC");
}

static void dmabuf_sync_map(uint8_t *map)
{
	(void)map;	/* vgem's mmap is coherent on x86; the fd is closed */
}

/* Lines of debugfs' dma_buf/bufinfo that name an attached device. */
static int dmabuf_attachments(void)
{
	char line[512];
	int n = 0, in_attached = 0;
	FILE *f = fopen("/sys/kernel/debug/dma_buf/bufinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "Attached Devices")) {
			in_attached = 1;
			continue;
		}
		if (in_attached && strstr(line, "Total"))
			in_attached = 0;
		else if (in_attached && strchr(line, ':'))
			n++;
	}
	fclose(f);
	return n;
}

/* 3: dma-buf from vgem, pinned with PIN_DMABUF, DMA checked through mmap. */
static void test_dmabuf(void)
{
	const size_t size = 4 * PAGE;
	int fd = open_dev();
	int dbuf = vgem_dmabuf(size);
	uint8_t *host = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			    dbuf, 0);
	struct fpgad_dma_pin_dmabuf p = { .fd = dbuf };
	uint64_t hh, hd;
	int st;

	if (host == MAP_FAILED || map == MAP_FAILED)
		die("mmap");
	hh = pin_host(fd, host, PAGE);

	st = ioctl(fd, FPGAD_DMA_IOC_PIN_DMABUF, &p);
	check(st == 0 && p.handle && counter("pinned_bytes") == PAGE + size,
	      "PIN_DMABUF of a vgem buffer: handle %llu", (unsigned long long)p.handle);
	hd = p.handle;
	check(dmabuf_attachments() == 1, "the dma-buf has one attachment");

	/* Card -> dma-buf, checked through the dma-buf's mmap. */
	fill(host, 2048, 3);
	dmabuf_sync(dbuf, DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW);
	memset(map, 0x5a, size);
	dmabuf_sync(dbuf, DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW);
	st = xfer(fd, FPGAD_DMA_H2C, hh, 0, 100, 2048, 0);
	check(st == 0, "H2C host->card: status %d", st);
	st = xfer(fd, FPGAD_DMA_C2H, hd, PAGE + 512, 100, 2048, 0);
	dmabuf_sync(dbuf, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
	check(st == 0 && !memcmp(map + PAGE + 512, host, 2048) &&
	      map[PAGE + 511] == 0x5a && map[PAGE + 512 + 2048] == 0x5a,
	      "C2H card->dma-buf byte-exact through mmap, neighbours untouched: status %d", st);
	dmabuf_sync(dbuf, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);

	/* dma-buf -> card -> host. */
	dmabuf_sync(dbuf, DMA_BUF_SYNC_START | DMA_BUF_SYNC_WRITE);
	fill(map + 3 * PAGE, 1500, 4);
	dmabuf_sync(dbuf, DMA_BUF_SYNC_END | DMA_BUF_SYNC_WRITE);
	st = xfer(fd, FPGAD_DMA_H2C, hd, 3 * PAGE, 0, 1500, 0);
	check(st == 0, "H2C dma-buf->card: status %d", st);
	memset(host, 0, PAGE);
	st = xfer(fd, FPGAD_DMA_C2H, hh, 0, 0, 1500, 0);
	check(st == 0 && !memcmp(host, map + 3 * PAGE, 1500),
	      "C2H card->host matches what the dma-buf held: status %d", st);

	/* A pin of part of the buffer: offsets are relative to the pin. */
	{
		struct fpgad_dma_pin_dmabuf q = { .fd = dbuf, .offset = 2 * PAGE,
						  .length = PAGE };
		struct fpgad_dma_unpin u;

		check(ioctl(fd, FPGAD_DMA_IOC_PIN_DMABUF, &q) == 0,
		      "PIN_DMABUF of a sub-range");
		/* card[100, 1100) now holds what map[3 PAGE + 100...] held. */
		st = xfer(fd, FPGAD_DMA_C2H, q.handle, 8, 100, 1000, 0);
		dmabuf_sync(dbuf, DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ);
		check(st == 0 && !memcmp(map + 2 * PAGE + 8, map + 3 * PAGE + 100, 1000),
		      "C2H into the sub-range lands at its offset: status %d", st);
		dmabuf_sync(dbuf, DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ);
		check(submit(fd, FPGAD_DMA_C2H, q.handle, PAGE - 4, 0, 8, 1, 0) == -EINVAL,
		      "SUBMIT past the sub-range: EINVAL");
		u.handle = q.handle;
		check(ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u) == 0, "UNPIN of the sub-range");
		q.offset = size;
		check(ioctl(fd, FPGAD_DMA_IOC_PIN_DMABUF, &q) == -1 && errno == EINVAL,
		      "PIN_DMABUF past the buffer: EINVAL");
		q.fd = fd;
		q.offset = 0;
		check(ioctl(fd, FPGAD_DMA_IOC_PIN_DMABUF, &q) == -1 &&
		      (errno == EINVAL || errno == EBADF),
		      "PIN_DMABUF of a file that is not a dma-buf: %s", strerror(errno));
	}

	/* The driver keeps its own reference: close the fd, DMA still works. */
	munmap(map, size);
	close(dbuf);
	st = xfer(fd, FPGAD_DMA_C2H, hd, 0, 0, 64, 0);
	check(st == 0, "DMA into the dma-buf after its fd was closed: status %d", st);

	{
		struct fpgad_dma_unpin u = { .handle = hd };

		check(ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u) == 0 &&
		      counter("pinned_bytes") == PAGE,
		      "UNPIN of the dma-buf");
	}
	check(dmabuf_attachments() <= 0, "no dma-buf attachment left (%d)",
	      dmabuf_attachments());
	close(fd);
	munmap(host, PAGE);
	check(counter("pins") == 0, "close released the host pin");
}

/* 4: a timeout that leaves the channel usable. */
static void test_timeout(void)
{
	int fd = open_dev();
	uint8_t *buf = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long long before = counter("timeouts");
	uint64_t h;
	int st;

	if (buf == MAP_FAILED)
		die("mmap");
	h = pin_host(fd, buf, 2 * PAGE);
	/* edu starts its DMA ~100 ms after the command: 5 ms cannot do. */
	st = xfer(fd, FPGAD_DMA_H2C, h, 0, 0, 512, 5);
	check(st == -ETIMEDOUT && counter("timeouts") == before + 1,
	      "5 ms timeout: status %d, timeouts counter %lld", st,
	      counter("timeouts"));
	check(counter("inflight") == 0, "nothing in flight after the timeout");

	fill(buf, 3000, 5);
	st = xfer(fd, FPGAD_DMA_H2C, h, 0, 1000, 3000, 0);
	check(st == 0, "next transfer on the channel works: status %d", st);
	memset(buf + PAGE, 0, 3000);
	st = xfer(fd, FPGAD_DMA_C2H, h, PAGE, 1000, 3000, 0);
	check(st == 0 && !memcmp(buf, buf + PAGE, 3000),
	      "and is byte-exact after the timeout: status %d", st);
	close(fd);
	munmap(buf, 2 * PAGE);
}

/* 5: RESET cancels queued work; limits; read() rules; UNPIN while busy. */
static void test_reset_and_limits(void)
{
	int fd = open_dev();
	uint8_t *buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fpgad_dma_completion c[8];
	struct fpgad_dma_info in;
	struct fpgad_dma_reset r = { .channel = 0, .direction = FPGAD_DMA_C2H };
	struct fpgad_dma_unpin u;
	long long resets = counter("resets");
	unsigned int i, cancelled = 0, okay = 0, n;
	int st, busy;
	uint64_t h;

	if (buf == MAP_FAILED || ioctl(fd, FPGAD_DMA_IOC_INFO, &in))
		die("setup");
	h = pin_host(fd, buf, PAGE);

	check(read(fd, c, sizeof(c[0]) - 1) == -1 && errno == EINVAL,
	      "read() shorter than a record: EINVAL");
	fcntl(fd, F_SETFL, O_NONBLOCK);
	check(read(fd, c, sizeof(c)) == -1 && errno == EAGAIN,
	      "O_NONBLOCK read() with nothing done: EAGAIN");
	fcntl(fd, F_SETFL, 0);

	for (i = 0; i < 4; i++)
		check(submit(fd, FPGAD_DMA_C2H, h, 0, 0, 256, 100 + i, 0) == 0,
		      "queue transfer %u", i);
	u.handle = h;
	busy = ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u) == -1 && errno == EBUSY;
	check(busy, "UNPIN while transfers use the pin: EBUSY");
	check(ioctl(fd, FPGAD_DMA_IOC_RESET, &r) == 0 &&
	      counter("resets") == resets + 1, "RESET");
	for (i = 0; i < 4; i++) {
		c[i] = wait_one(fd);
		if (c[i].status == -ECANCELED)
			cancelled++;
		else if (c[i].status == 0)
			okay++;
		if (c[i].cookie != 100 + i)
			break;
	}
	check(i == 4 && cancelled >= 3 && cancelled + okay == 4,
	      "RESET: %u cancelled, %u done, completions in order", cancelled, okay);
	st = xfer(fd, FPGAD_DMA_C2H, h, 0, 0, 256, 0);
	check(st == 0, "transfer after RESET: status %d", st);

	/* max_inflight counts records not yet read. */
	n = in.max_inflight < 8 ? in.max_inflight : 8;
	for (i = 0; i < n; i++)
		if (submit(fd, FPGAD_DMA_H2C, h, 0, 0, 16, i, 0))
			break;
	check(i == n && (n < in.max_inflight ||
			 submit(fd, FPGAD_DMA_H2C, h, 0, 0, 16, 99, 0) == -EAGAIN),
	      "SUBMIT beyond max_inflight (%u): EAGAIN", in.max_inflight);
	for (i = 0; i < n; i++)
		if (wait_one(fd).status != 0)
			break;
	check(i == n, "all %u completions read", n);
	check(ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u) == 0, "UNPIN once idle");
	close(fd);
	munmap(buf, PAGE);
}

/* 6: close with pins and transfers outstanding releases everything. */
static void test_close_outstanding(void)
{
	int fd = open_dev();
	int dbuf = vgem_dmabuf(2 * PAGE);
	uint8_t *buf = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fpgad_dma_pin_dmabuf p = { .fd = dbuf };
	uint64_t h;
	int i;

	if (buf == MAP_FAILED || ioctl(fd, FPGAD_DMA_IOC_PIN_DMABUF, &p))
		die("setup");
	close(dbuf);
	h = pin_host(fd, buf, 2 * PAGE);
	pin_host(fd, buf + PAGE, PAGE);
	for (i = 0; i < 3; i++) {
		if (submit(fd, FPGAD_DMA_H2C, h, 0, 0, 1024, i, 0) ||
		    submit(fd, FPGAD_DMA_C2H, p.handle, 0, 0, 1024, i, 0))
			die("SUBMIT");
	}
	check(counter("pins") == 3 && counter("inflight") > 0 &&
	      dmabuf_attachments() == 1,
	      "3 pins, %lld transfers in flight", counter("inflight"));
	close(fd);
	check(counter("pins") == 0 && counter("pinned_bytes") == 0 &&
	      counter("inflight") == 0 && counter("files") == 0,
	      "close released everything: pins %lld bytes %lld inflight %lld files %lld",
	      counter("pins"), counter("pinned_bytes"), counter("inflight"),
	      counter("files"));
	check(dmabuf_attachments() <= 0, "the dma-buf was detached");

	/* And the channel still works for the next client. */
	fd = open_dev();
	h = pin_host(fd, buf, 2 * PAGE);
	fill(buf, 700, 6);
	memset(buf + PAGE, 0, 700);
	check(xfer(fd, FPGAD_DMA_H2C, h, 0, 3000, 700, 0) == 0 &&
	      xfer(fd, FPGAD_DMA_C2H, h, PAGE, 3000, 700, 0) == 0 &&
	      !memcmp(buf, buf + PAGE, 700), "next client's DMA is byte-exact");
	close(fd);
	munmap(buf, 2 * PAGE);
}

static struct dev_completion backend_wait(struct device_queue *q, int tmo)
{
	struct dev_completion c[4];
	int n = device_xdma_ops.wait(q, c, 1, tmo);

	if (n != 1) {
		memset(c, 0, sizeof(c[0]));
		c[0].status = n < 0 ? n : -9000 - n;
	}
	return c[0];
}

/* 7: the daemon's xdma backend over the same device. */
static void test_backend(void)
{
	const struct device_ops *ops = &device_xdma_ops;
	struct config_channel chh = { .name = "h2c0", .direction = DIR_H2C };
	struct config_channel chc = { .name = "c2h0", .direction = DIR_C2H };
	struct config_channel bad = { .name = "c2h1", .direction = DIR_C2H,
				      .engine = 1 };
	struct device_queue *qh = NULL, *qc = NULL, *q2 = NULL;
	struct dev_completion out[4], c;
	struct device_info info;
	struct dev_region rh, rd, rc;
	struct dev_xfer x;
	struct config cfg;
	struct device *d;
	char why[256] = "";
	uint64_t hh, hd, t0;
	unsigned i, cancelled = 0;
	int dbuf, n;
	uint8_t *buf = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *map;

	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.device.path, sizeof(cfg.device.path), "%s", DEV);
	if (buf == MAP_FAILED || ops->open(&cfg, &d, why, sizeof(why))) {
		printf("# %s\n", why);
		die("xdma backend open");
	}
	check(ops->info(d, &info) == 0 && !strncmp(info.name, "edu 1234:11e8", 13) &&
	      info.h2c_channels == 1 && info.c2h_channels == 1 &&
	      info.card_memory == 4095 && info.max_inflight > 0,
	      "backend info: %s", info.name);
	check(ops->queue_open(d, &chh, &qh) == 0 && ops->queue_open(d, &chc, &qc) == 0,
	      "backend: two queues");
	check(ops->queue_open(d, &chh, &q2) == -EBUSY, "backend: engine already open: EBUSY");
	check(ops->queue_open(d, &bad, &q2) == -EINVAL, "backend: missing engine: EINVAL");

	memset(&rh, 0, sizeof(rh));
	rh.kind = DEV_REGION_HOST;
	rh.addr = buf;
	rh.length = 2 * PAGE;
	rh.fd = -1;
	dbuf = vgem_dmabuf(2 * PAGE);
	map = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, dbuf, 0);
	if (map == MAP_FAILED)
		die("mmap dma-buf");
	memset(&rd, 0, sizeof(rd));
	rd.kind = DEV_REGION_DMABUF;
	rd.fd = dbuf;
	rd.fd_offset = PAGE;
	rd.length = PAGE;
	check(ops->pin(qh, &rh, &hh) == 0 && ops->pin(qc, &rd, &hd) == 0,
	      "backend: host pin and dma-buf pin");
	close(dbuf);
	memset(&rc, 0, sizeof(rc));
	rc.kind = DEV_REGION_CUDA;
	rc.addr = (void *)(uintptr_t)0x10000;
	rc.length = 65536;
	check(ops->pin(qc, &rc, &t0) == -EOPNOTSUPP,
	      "backend: CUDA pin without nv-p2p: EOPNOTSUPP");

	fill(buf, 1800, 7);
	memset(&x, 0, sizeof(x));
	x.handle = hh;
	x.card_addr = 200;
	x.length = 1800;
	x.cookie = 77;
	check(ops->submit(qh, &x) == 0, "backend: submit H2C");
	c = backend_wait(qh, 5000);
	check(c.status == 0 && c.cookie == 77 && c.length == 1800 &&
	      c.t_end_ns >= c.t_start_ns, "backend: H2C completion: status %d", c.status);
	x.handle = hd;
	x.offset = 96;
	x.cookie = 78;
	check(ops->submit(qc, &x) == 0, "backend: submit C2H into the dma-buf");
	c = backend_wait(qc, 5000);
	dmabuf_sync_map(map);
	check(c.status == 0 && c.cookie == 78 && !memcmp(map + PAGE + 96, buf, 1800),
	      "backend: C2H into the dma-buf byte-exact: status %d", c.status);

	ops->kick(qc);
	t0 = (uint64_t)time(NULL);
	check(ops->wait(qc, out, 4, -1) == 0 && (uint64_t)time(NULL) - t0 < 2,
	      "backend: kick wakes a blocked wait");
	check(ops->wait(qc, out, 4, 50) == 0, "backend: wait times out with nothing");

	x.timeout_ms = 5;
	x.cookie = 79;
	check(ops->submit(qc, &x) == 0 && backend_wait(qc, 5000).status == -ETIMEDOUT,
	      "backend: 5 ms timeout: -ETIMEDOUT");
	x.timeout_ms = 0;
	for (i = 0; i < 3; i++) {
		x.cookie = 80 + i;
		if (ops->submit(qc, &x))
			die("backend submit");
	}
	check(ops->reset(qc) == 0, "backend: reset");
	for (i = 0, n = 0; i < 3; i++) {
		c = backend_wait(qc, 5000);
		if (c.cookie == 80 + i)
			n++;
		if (c.status == -ECANCELED)
			cancelled++;
	}
	check(n == 3 && cancelled >= 2, "backend: reset cancelled %u of 3, in order",
	      cancelled);
	x.cookie = 90;
	check(ops->submit(qc, &x) == 0 && backend_wait(qc, 5000).status == 0,
	      "backend: transfer after reset");
	check(ops->unpin(qc, hd) == 0 && ops->unpin(qc, hd) != 0, "backend: unpin");

	/* Close with the host pin and a transfer outstanding. */
	x.handle = hh;
	x.offset = 0;
	check(ops->submit(qh, &x) == 0, "backend: submit, then close at once");
	ops->queue_close(qh);
	ops->queue_close(qc);
	check(counter("pins") == 0 && counter("inflight") == 0 && counter("files") == 1,
	      "backend: queue close released everything (files %lld)", counter("files"));
	ops->close(d);
	check(counter("files") == 0, "backend: device closed");
	munmap(map, 2 * PAGE);
	munmap(buf, 2 * PAGE);
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* 8: the card goes away (unbind) under an open file with pins and work. */
static void test_unbind_open(void)
{
	int fd = open_dev();
	int dbuf = vgem_dmabuf(PAGE);
	uint8_t *buf = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct fpgad_dma_pin_dmabuf p = { .fd = dbuf };
	struct fpgad_dma_completion c;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char link[256], *bdf;
	uint64_t h;
	ssize_t n;
	int i;

	n = readlink(SYSFS "device", link, sizeof(link) - 1);
	if (n <= 0 || buf == MAP_FAILED || ioctl(fd, FPGAD_DMA_IOC_PIN_DMABUF, &p))
		die("unbind setup");
	link[n] = 0;
	bdf = strrchr(link, '/') + 1;
	close(dbuf);
	h = pin_host(fd, buf, PAGE);
	for (i = 0; i < 3; i++)
		if (submit(fd, FPGAD_DMA_C2H, i ? h : p.handle, 0, 0, 512, i, 0))
			die("SUBMIT");

	check(write_file("/sys/bus/pci/drivers/fpgad_dma/unbind", bdf) == 0 &&
	      access(DEV, F_OK) != 0, "unbind %s with a file open", bdf);
	check(dmabuf_attachments() <= 0, "unbind released the dma-buf pin");
	check(submit(fd, FPGAD_DMA_C2H, h, 0, 0, 16, 9, 0) == -ENODEV,
	      "SUBMIT after unbind: ENODEV");
	for (i = 0; i < 3; i++) {
		c = wait_one(fd);
		if (c.status != -ENODEV && c.status != -ECANCELED && c.status != 0)
			break;
	}
	check(i == 3, "the 3 outstanding transfers completed (last status %d)",
	      c.status);
	check(poll(&pfd, 1, 1000) == 1 && (pfd.revents & POLLHUP) &&
	      read(fd, &c, sizeof(c)) == -1 && errno == ENODEV,
	      "then poll() says POLLHUP and read() ENODEV");
	close(fd);
	check(write_file("/sys/bus/pci/drivers/fpgad_dma/bind", bdf) == 0 &&
	      access(DEV, F_OK) == 0 && counter("pins") == 0,
	      "bind again: " DEV " is back");

	fd = open_dev();
	h = pin_host(fd, buf, PAGE);
	fill(buf, 256, 9);
	memset(buf + 1024, 0, 256);
	check(xfer(fd, FPGAD_DMA_H2C, h, 0, 50, 256, 0) == 0 &&
	      xfer(fd, FPGAD_DMA_C2H, h, 1024, 50, 256, 0) == 0 &&
	      !memcmp(buf, buf + 1024, 256), "DMA after rebinding is byte-exact");
	close(fd);
	munmap(buf, PAGE);
}


/* --- the PCI path to a peer (P2P_PATH) -------------------------------------- */

#define PCI_SYSFS	"/sys/bus/pci/devices/"
#define PEER_ID		"0x8086 0x10d3"		/* e1000e, the stand-in GPU */
#define ACS_ID		0x0d

struct bdf {
	unsigned int domain, bus, dev, fn;
};

static int bdf_parse(const char *s, struct bdf *b)
{
	return sscanf(s, "%x:%x:%x.%x", &b->domain, &b->bus, &b->dev, &b->fn) == 4 ?
	       0 : -1;
}

static unsigned int bdf_devfn(const struct bdf *b)
{
	return (b->dev << 3) | b->fn;
}

static int read_text(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY);
	ssize_t got;

	if (fd < 0)
		return -1;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got <= 0)
		return -1;
	buf[got] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* "0xVVVV 0xDDDD" of a PCI function. */
static void pci_id(const char *name, char *out, size_t n)
{
	char path[256], v[16] = "?", d[16] = "?";

	snprintf(path, sizeof(path), PCI_SYSFS "%s/vendor", name);
	read_text(path, v, sizeof(v));
	snprintf(path, sizeof(path), PCI_SYSFS "%s/device", name);
	read_text(path, d, sizeof(d));
	snprintf(out, n, "%s %s", v, d);
}

/*
 * The bridges above @name, nearest first, from its sysfs path
 * (/sys/devices/pci0000:00/0000:00:02.0/.../<name>); returns how many.
 */
static int pci_parents(const char *name, char parents[][16], int max)
{
	char link[512], real[512], *tok, *save = NULL;
	char chain[16][16];
	int n = 0, i;

	snprintf(link, sizeof(link), PCI_SYSFS "%s", name);
	if (!realpath(link, real))
		return -1;
	for (tok = strtok_r(real, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		struct bdf b;

		if (strlen(tok) == 12 && !bdf_parse(tok, &b) && n < 16)
			snprintf(chain[n++], 16, "%s", tok);
	}
	/* chain: root port ... name */
	for (i = 0; i < n - 1 && i < max; i++)
		snprintf(parents[i], 16, "%s", chain[n - 2 - i]);
	return n - 1 < max ? n - 1 : max;
}

/* The root bus ("pci0000:80") a function sits under. */
static void pci_root(const char *name, char *out, size_t n)
{
	char link[512], real[512], *p;

	snprintf(link, sizeof(link), PCI_SYSFS "%s", name);
	out[0] = 0;
	if (!realpath(link, real))
		return;
	p = strstr(real, "/pci");
	if (p)
		snprintf(out, n, "%.10s", p + 1);	/* pciDDDD:BB */
}

/* Config space offset of the ACS capability, 0 without one. */
static int acs_pos(const char *name)
{
	char path[256];
	uint32_t hdr;
	int fd, pos = 0x100, guard = 0;

	snprintf(path, sizeof(path), PCI_SYSFS "%s/config", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	while (pos && guard++ < 64) {
		if (pread(fd, &hdr, 4, pos) != 4 || !hdr || hdr == 0xffffffffu)
			break;
		if ((hdr & 0xffff) == ACS_ID) {
			close(fd);
			return pos;
		}
		pos = (int)(hdr >> 20) & 0xffc;
	}
	close(fd);
	return 0;
}

static uint16_t config16(const char *name, int where)
{
	char path[256];
	uint16_t v = 0xffff;
	int fd;

	snprintf(path, sizeof(path), PCI_SYSFS "%s/config", name);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		if (pread(fd, &v, 2, where) != 2)
			v = 0xffff;
		close(fd);
	}
	return v;
}

static int set_config16(const char *name, int where, uint16_t v)
{
	char path[256];
	int fd, ret = -1;

	snprintf(path, sizeof(path), PCI_SYSFS "%s/config", name);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		ret = pwrite(fd, &v, 2, where) == 2 ? 0 : -1;
		close(fd);
	}
	return ret;
}

/* The first function with vendor/device @id whose root bus is @root. */
static int find_pci(const char *id, const char *root, char *out, size_t n)
{
	DIR *d = opendir(PCI_SYSFS);
	struct dirent *e;
	char r[80];
	int found = -1;

	if (!d)
		return -1;
	while (found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		pci_id(e->d_name, r, sizeof(r));
		if (strcmp(r, id))
			continue;
		pci_root(e->d_name, r, sizeof(r));
		if (!root || !strcmp(r, root)) {
			snprintf(out, n, "%.15s", e->d_name);	/* dddd:bb:dd.f */
			found = 0;
		}
	}
	closedir(d);
	return found;
}

static void card_name(char *out, size_t n)
{
	char link[256];
	ssize_t len = readlink(SYSFS "device", link, sizeof(link) - 1);

	if (len <= 0)
		die("readlink " SYSFS "device");
	link[len] = 0;
	snprintf(out, n, "%s", strrchr(link, '/') + 1);
}

static int p2p_path(int fd, const char *peer, struct fpgad_dma_p2p_path *p)
{
	struct bdf b;

	memset(p, 0, sizeof(*p));
	if (bdf_parse(peer, &b))
		return -EINVAL;
	p->peer_domain = b.domain;
	p->peer_bus = (uint8_t)b.bus;
	p->peer_devfn = (uint8_t)bdf_devfn(&b);
	return ioctl(fd, FPGAD_DMA_IOC_P2P_PATH, p) ? -errno : 0;
}

/* Hop @h is bridge @name of type @type with @flags (ACS from config space). */
static int hop_is(const struct fpgad_dma_p2p_hop *h, const char *name,
		  unsigned int type, unsigned int flags)
{
	int pos = acs_pos(name);
	struct bdf b;

	if (bdf_parse(name, &b))
		return 0;
	if (pos) {
		flags |= FPGAD_P2P_HOP_ACS;
		if (h->acs_cap != config16(name, pos + 4) ||
		    h->acs_ctrl != config16(name, pos + 6))
			return 0;
	} else if (h->acs_cap || h->acs_ctrl) {
		return 0;
	}
	return h->domain == b.domain && h->bus == b.bus &&
	       h->devfn == bdf_devfn(&b) && h->type == type &&
	       h->flags == flags && !h->reserved;
}

static int hop_is_host(const struct fpgad_dma_p2p_hop *h, const char *root)
{
	unsigned int domain, bus;

	if (sscanf(root, "pci%x:%x", &domain, &bus) != 2)
		return 0;
	return h->type == FPGAD_P2P_HOP_HOST_BRIDGE && h->domain == domain &&
	       h->bus == bus && !h->devfn && !h->flags && !h->acs_cap;
}

static void print_path(const char *what, const struct fpgad_dma_p2p_path *p)
{
	uint32_t i;

	printf("kmod_test: %s: distance %d verdict %#x, %u hops:", what,
	       p->distance, p->verdict, p->n_hops);
	for (i = 0; i < p->n_hops && i < FPGAD_P2P_MAX_HOPS; i++)
		printf(" %04x:%02x:%02x.%u/t%u/f%#x/acs %04x:%04x",
		       p->hops[i].domain, p->hops[i].bus, p->hops[i].devfn >> 3,
		       p->hops[i].devfn & 7, p->hops[i].type, p->hops[i].flags,
		       p->hops[i].acs_cap, p->hops[i].acs_ctrl);
	printf("\n");
}

/* pc machine: edu on the root bus; the host bridge 00:00.0 as the peer. */
static void test_p2p_local(void)
{
	struct fpgad_dma_p2p_path p;
	char card[64];
	int fd = open_dev(), ret;

	card_name(card, sizeof(card));
	ret = p2p_path(fd, "0000:00:00.0", &p);
	print_path("edu to 0000:00:00.0", &p);
	check(ret == 0 && p.n_hops == 1 && hop_is_host(&p.hops[0], "pci0000:00") &&
	      p.verdict == (FPGAD_P2P_VIA_HOST_BRIDGE | FPGAD_P2P_NO_P2PDMA) &&
	      p.distance == -1,
	      "P2P_PATH on the root bus: one host bridge hop, no P2PDMA in this kernel");
	check(p2p_path(fd, "0000:7f:1f.7", &p) == -ENODEV,
	      "P2P_PATH to an address without a device: ENODEV");
	check(p2p_path(fd, card, &p) == -EINVAL, "P2P_PATH to the card itself: EINVAL");
	memset(&p, 0, sizeof(p));
	p.reserved1 = 1;
	check(ioctl(fd, FPGAD_DMA_IOC_P2P_PATH, &p) == -1 && errno == EINVAL,
	      "P2P_PATH with a reserved field set: EINVAL");
	close(fd);
}

/* q35: edu and the peer under two downstream ports of one switch. */
static int test_p2p_switch(void)
{
	const unsigned int v = FPGAD_P2P_NO_P2PDMA;
	char card[64], peer[64], cp[4][16], pp[4][16], id[40];
	struct fpgad_dma_p2p_path p;
	int fd = open_dev(), nc, np, pos, ret;

	card_name(card, sizeof(card));
	if (find_pci(PEER_ID, NULL, peer, sizeof(peer)))
		die("no e1000e peer in this boot");
	nc = pci_parents(card, cp, 4);
	np = pci_parents(peer, pp, 4);
	printf("kmod_test: card %s, peer %s\n", card, peer);
	pci_id(cp[1], id, sizeof(id));
	check(nc == 3 && np == 3 && !strcmp(cp[1], pp[1]) && !strcmp(id, "0x104c 0x8232"),
	      "QEMU built it: card and peer below one switch upstream port (%s)", cp[1]);

	ret = p2p_path(fd, peer, &p);
	print_path("card to peer", &p);
	check(ret == 0 && p.n_hops == 3, "P2P_PATH: 3 hops (%d)", ret);
	check(hop_is(&p.hops[0], cp[0], FPGAD_P2P_HOP_DOWNSTREAM, 0),
	      "hop 0: the card's downstream port %s", cp[0]);
	check(hop_is(&p.hops[1], cp[1], FPGAD_P2P_HOP_UPSTREAM, FPGAD_P2P_HOP_COMMON),
	      "hop 1: the switch upstream port %s, the common bridge", cp[1]);
	check(hop_is(&p.hops[2], pp[0], FPGAD_P2P_HOP_DOWNSTREAM, 0),
	      "hop 2: the peer's downstream port %s", pp[0]);
	check(p.verdict == v && p.distance == -1,
	      "verdict: same switch, no ACS redirect (%#x)", p.verdict);

	/* ACS redirect on the root port above the switch is off the path. */
	pos = acs_pos(cp[2]);
	check(pos && !set_config16(cp[2], pos + 6, 0x000c) &&
	      p2p_path(fd, peer, &p) == 0 && p.verdict == v,
	      "request/completion redirect on the root port %s above the switch: verdict unchanged",
	      cp[2]);
	if (pos)
		set_config16(cp[2], pos + 6, 0);
	close(fd);
	return failures;
}

/* q35: edu on a root port; peers on another root port and another host bridge. */
static int test_p2p_rootport(void)
{
	const unsigned int v = FPGAD_P2P_VIA_HOST_BRIDGE | FPGAD_P2P_NO_P2PDMA;
	char card[64], peer[64], far[64], cp[4][16], pp[4][16], fp[4][16], id[40];
	struct fpgad_dma_p2p_path p;
	int fd = open_dev(), nc, np, nf, pos, ret;

	card_name(card, sizeof(card));
	if (find_pci(PEER_ID, "pci0000:00", peer, sizeof(peer)) ||
	    find_pci(PEER_ID, "pci0000:80", far, sizeof(far)))
		die("peers missing in this boot");
	printf("kmod_test: card %s, peer %s, far peer %s\n", card, peer, far);
	nc = pci_parents(card, cp, 4);
	np = pci_parents(peer, pp, 4);
	nf = pci_parents(far, fp, 4);
	pci_id(cp[0], id, sizeof(id));
	check(nc == 1 && np == 1 && nf == 1 && strcmp(cp[0], pp[0]) &&
	      !strcmp(id, "0x1b36 0x000c"),
	      "QEMU built it: card, peer and far peer each on a root port of its own");

	ret = p2p_path(fd, peer, &p);
	print_path("card to peer", &p);
	check(ret == 0 && p.n_hops == 3 &&
	      hop_is(&p.hops[0], cp[0], FPGAD_P2P_HOP_ROOT_PORT, 0) &&
	      hop_is_host(&p.hops[1], "pci0000:00") &&
	      hop_is(&p.hops[2], pp[0], FPGAD_P2P_HOP_ROOT_PORT, 0),
	      "P2P_PATH: root port %s, the host bridge, root port %s", cp[0], pp[0]);
	check(p.verdict == v && p.distance == -1,
	      "verdict: through the root complex (%#x)", p.verdict);
	check(p.hops[0].acs_cap && (p.hops[0].flags & FPGAD_P2P_HOP_ACS),
	      "QEMU's root ports have ACS (cap %#x)", p.hops[0].acs_cap);

	/* Request and completion redirect on the peer's root port. */
	pos = acs_pos(pp[0]);
	check(pos && !set_config16(pp[0], pos + 6, 0x000c), "set ACS RR|CR on %s", pp[0]);
	ret = p2p_path(fd, peer, &p);
	print_path("card to peer, ACS redirect on", &p);
	check(ret == 0 && p.hops[2].acs_ctrl == 0x000c &&
	      hop_is(&p.hops[2], pp[0], FPGAD_P2P_HOP_ROOT_PORT, FPGAD_P2P_HOP_REDIRECT) &&
	      p.verdict == (v | FPGAD_P2P_ACS_REDIRECT),
	      "the peer's root port redirects: hop flagged, verdict ACS_REDIRECT");
	if (pos)
		set_config16(pp[0], pos + 6, 0);
	check(p2p_path(fd, peer, &p) == 0 && p.verdict == v,
	      "redirect off again: verdict back");

	ret = p2p_path(fd, far, &p);
	print_path("card to far peer", &p);
	check(ret == 0 && p.n_hops == 4 &&
	      hop_is(&p.hops[0], cp[0], FPGAD_P2P_HOP_ROOT_PORT, 0) &&
	      hop_is_host(&p.hops[1], "pci0000:00") &&
	      hop_is_host(&p.hops[2], "pci0000:80") &&
	      hop_is(&p.hops[3], fp[0], FPGAD_P2P_HOP_ROOT_PORT, 0) &&
	      p.verdict == (v | FPGAD_P2P_OTHER_DOMAIN),
	      "P2P_PATH to the peer under the second host bridge: two host bridges, OTHER_DOMAIN");
	close(fd);
	return failures;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1) {
		if (!strcmp(argv[1], "p2p-switch"))
			test_p2p_switch();
		else if (!strcmp(argv[1], "p2p-rootport"))
			test_p2p_rootport();
		else
			check(0, "unknown test %s", argv[1]);
		printf("kmod_test: %d checks, %d failed\n", checks, failures);
		return failures ? 1 : 0;
	}
	test_version_info();
	test_host_dma();
	test_dmabuf();
	test_timeout();
	test_reset_and_limits();
	test_close_outstanding();
	test_backend();
	test_p2p_local();
	kmod_xfer_tests(check, vgem_dmabuf);
	printf("counters: transfers %lld h2c %lld c2h %lld timeouts %lld cancels %lld resets %lld errors %lld\n",
	       counter("transfers"), counter("bytes_h2c"), counter("bytes_c2h"),
	       counter("timeouts"), counter("cancels"), counter("resets"),
	       counter("errors"));
	check(counter("pins") == 0 && counter("pinned_bytes") == 0 &&
	      counter("files") == 0 && counter("inflight") == 0 &&
	      counter("errors") == 0 && counter("wedged") == 0,
	      "counters after all clients closed: no pins, files, work, errors or wedged channels");
	test_unbind_open();
	printf("kmod_test: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
