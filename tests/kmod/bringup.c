// SPDX-License-Identifier: MIT
/*
 * bringup.c - the checks tests/kmod/bringup.sh runs on the day a real XDMA
 * card is plugged in, through /dev/fpgadN's ioctls.  One line per check:
 * "PASS name: detail", "FAIL name: detail" or "SKIP name: why", then a
 * count; exit status 1 when anything failed.
 *
 *   identify        VERSION, INFO: engine, PCI address, link, channels
 *   first-light     one 4 KiB transfer each way (-o first-light runs only
 *                   this: the script counts its interrupts)
 *   loopback        every H2C channel to card memory and back through a
 *                   C2H channel, 4 KiB to 16 MiB, byte-exact
 *   concurrent      every H2C channel at once, each its own data at its
 *                   own card address, then every C2H channel reading it
 *                   back at once, byte-exact
 *   unaligned       addresses off the engine's alignment: refused with
 *                   EINVAL where it has one, else byte-exact at odd
 *                   addresses and lengths
 *   decode-error    H2C and C2H at an address no AXI slave decodes
 *                   (-b): -EIO, counted, RESET, and the channels still work
 *   timeout         a transfer longer than a 1 ms timeout (one jiffy, so
 *                   up to 10 ms): -ETIMEDOUT, not wedged (else RESET), and
 *                   the channel works afterwards; when the window is too
 *                   small for that at the link's rate, the size it needs
 *   p2p-path        with -g: the PCI path to that GPU and the verdict, so
 *                   that a dma-buf failure below reads in its light
 *   dmabuf-256m     256 MiB of GPU memory as one dma-buf (CUDA builds, a
 *                   GPU): card -> GPU -> card -> host, byte-exact
 *   nvp2p           PIN_NVP2P (NVIDIA_SRC= builds, CUDA builds, a GPU):
 *                   cudaMalloc'd memory card -> GPU -> card -> host,
 *                   byte-exact, then freed under the pin: the free
 *                   callback turns it dead (SUBMIT: ENOLINK), UNPIN works
 *
 * Every FAIL says what to look at next.  Errors are printed by name
 * (errname(): the kernel's internal 524 ENOTSUPP included).  Interrupt
 * and poll-mode completion are the same checks run twice by the script
 * with the module's poll_mode parameter switched.  -E edu accepts QEMU's
 * edu device (the script's dry run); built with BRINGUP_NO_MEMORY it has
 * no GPU memory backend and links statically for that guest.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fpgad_dma.h"
#ifndef BRINGUP_NO_MEMORY
#include "memory/memory.h"
#endif

#define MIB		(1024u * 1024u)
#define WAIT_MS		30000
#define DMABUF_BYTES	(256ull * MIB)

struct opts {
	const char *dev;
	uint64_t card_addr;
	uint64_t card_size;		/* 0: from INFO, else 1 MiB */
	uint64_t bad_addr;
	bool have_bad;
	const char *gpu;		/* PCI address of a GPU */
	const char *mode;		/* label for the lines */
	const char *engine;		/* expected engine: "xdma" */
	const char *only;		/* -o: run this check alone */
};

/*
 * An errno by name and meaning.  524 is the kernel's internal ENOTSUPP,
 * which leaks from some exporters and IOMMU paths and which libc does not
 * know ("Unknown error 524").
 */
static const char *errname(int err)
{
	static const struct {
		int err;
		const char *name;
	} names[] = {
		{ EIO, "EIO (the engine reported an error: dmesg has its status)" },
		{ ETIMEDOUT, "ETIMEDOUT (no completion within the timeout)" },
		{ EINVAL, "EINVAL (a field the driver refuses: alignment, range)" },
		{ ENOMEM, "ENOMEM (out of memory, or RLIMIT_MEMLOCK: ulimit -l)" },
		{ ENODEV, "ENODEV (the card is gone)" },
		{ ENOLINK, "ENOLINK (the memory's exporter took it back)" },
		{ EPROTO, "EPROTO (module and program ABI differ)" },
		{ EOPNOTSUPP, "EOPNOTSUPP (not in this build of the module)" },
		{ 524, "ENOTSUPP (kernel-internal 524: the exporter or the "
		       "IOMMU cannot map this peer-to-peer)" },
		{ EBADMSG, "EBADMSG (data came back different)" },
		{ EAGAIN, "EAGAIN (busy: try again)" },
	};
	static char other[64];
	size_t i;

	if (err < 0)
		err = -err;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].err == err)
			return names[i].name;
	snprintf(other, sizeof(other), "errno %d (%s)", err, strerror(err));
	return other;
}

static unsigned int passed, failed, skipped;

static void report(const char *verdict, const char *mode, const char *name,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void report(const char *verdict, const char *mode, const char *name,
		   const char *fmt, ...)
{
	va_list ap;

	if (!strcmp(verdict, "PASS"))
		passed++;
	else if (!strcmp(verdict, "FAIL"))
		failed++;
	else
		skipped++;
	printf("%s %s/%s: ", verdict, mode, name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static long long counter(const char *dev, const char *name)
{
	char path[256], buf[64];
	const char *base = strrchr(dev, '/');
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/fpgad/%s/%s",
		 base ? base + 1 : dev, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = strtoll(buf, NULL, 10);
	fclose(f);
	return v;
}

static int submit(int fd, uint32_t dir, uint32_t ch, uint64_t handle,
		  uint64_t off, uint64_t card, uint64_t len, uint64_t cookie,
		  uint32_t tmo)
{
	struct fpgad_dma_submit s;

	memset(&s, 0, sizeof(s));
	s.channel = ch;
	s.direction = dir;
	s.handle = handle;
	s.offset = off;
	s.card_addr = card;
	s.length = len;
	s.cookie = cookie;
	s.timeout_ms = tmo;
	return ioctl(fd, FPGAD_DMA_IOC_SUBMIT, &s) ? -errno : 0;
}

/* The next completion; 0, or -ETIME when none came. */
static int wait_completion(int fd, struct fpgad_dma_completion *c)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, WAIT_MS) != 1 ||
	    read(fd, c, sizeof(*c)) != (ssize_t)sizeof(*c))
		return -ETIME;
	return 0;
}

/* Submit and wait; the completion's status, or -ETIME when none came. */
static int xfer_rec(int fd, uint32_t dir, uint32_t ch, uint64_t handle,
		    uint64_t off, uint64_t card, uint64_t len, uint32_t tmo,
		    struct fpgad_dma_completion *c)
{
	static uint64_t cookie;
	int ret;

	memset(c, 0, sizeof(*c));
	ret = submit(fd, dir, ch, handle, off, card, len, ++cookie, tmo);
	if (ret)
		return ret;
	if (wait_completion(fd, c))
		return -ETIME;
	if (!c->status && (c->cookie != cookie || c->length != len))
		return -EBADMSG;
	return c->status;
}

static int xfer(int fd, uint32_t dir, uint32_t ch, uint64_t handle,
		uint64_t off, uint64_t card, uint64_t len, uint32_t tmo,
		uint32_t *ret_flags)
{
	struct fpgad_dma_completion c;
	int ret = xfer_rec(fd, dir, ch, handle, off, card, len, tmo, &c);

	if (ret_flags)
		*ret_flags = c.flags;
	return ret;
}

static uint64_t pin_host(int fd, void *addr, uint64_t len)
{
	struct fpgad_dma_pin_host p;

	memset(&p, 0, sizeof(p));
	p.addr = (uintptr_t)addr;
	p.length = len;
	return ioctl(fd, FPGAD_DMA_IOC_PIN_HOST, &p) ? 0 : p.handle;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 12));
}

static int open_dev(const char *path, struct fpgad_dma_info *info,
		    uint32_t *ret_features)
{
	struct fpgad_dma_version v;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	memset(&v, 0, sizeof(v));
	v.abi_version = FPGAD_DMA_ABI_VERSION;
	if (ioctl(fd, FPGAD_DMA_IOC_VERSION, &v) ||
	    v.abi_version != FPGAD_DMA_ABI_VERSION ||
	    ioctl(fd, FPGAD_DMA_IOC_INFO, info)) {
		close(fd);
		return -EPROTO;
	}
	*ret_features = v.features;
	return fd;
}

struct bufs {
	uint8_t *a, *b;			/* source and back */
	size_t n;
	uint64_t ha, hb;
};

static int bufs_pin(int fd, struct bufs *b, size_t n)
{
	b->n = n;
	b->a = mmap(NULL, n, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	b->b = mmap(NULL, n, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (b->a == MAP_FAILED || b->b == MAP_FAILED)
		return -ENOMEM;
	b->ha = pin_host(fd, b->a, n);
	b->hb = pin_host(fd, b->b, n);
	return b->ha && b->hb ? 0 : -EFAULT;
}

/* H2C @h then C2H @c over @len bytes at @card; 0 when byte-exact. */
/* 4 KiB, or all of a smaller card window (QEMU's edu has 4095 bytes). */
static uint64_t small_len(const struct opts *o)
{
	return o->card_size < 4096 ? o->card_size : 4096;
}

static int reset_chan(int fd, uint32_t dir, uint32_t ch)
{
	struct fpgad_dma_reset r = { .channel = ch, .direction = dir };

	return ioctl(fd, FPGAD_DMA_IOC_RESET, &r) ? -errno : 0;
}

static int roundtrip(int fd, struct bufs *b, uint32_t h, uint32_t c,
		     uint64_t card, uint64_t len, unsigned int seed,
		     char *why, size_t whylen)
{
	int ret;

	fill(b->a, len, seed);
	memset(b->b, 0, len);
	ret = xfer(fd, FPGAD_DMA_H2C, h, b->ha, 0, card, len, 0, NULL);
	if (ret) {
		snprintf(why, whylen, "H2C %" PRIu64 " bytes: %s", len, errname(ret));
		return ret;
	}
	ret = xfer(fd, FPGAD_DMA_C2H, c, b->hb, 0, card, len, 0, NULL);
	if (ret) {
		snprintf(why, whylen, "C2H %" PRIu64 " bytes: %s", len, errname(ret));
		return ret;
	}
	if (memcmp(b->a, b->b, len)) {
		size_t i = 0;

		while (b->a[i] == b->b[i])
			i++;
		snprintf(why, whylen, "%" PRIu64 " bytes came back different from byte %zu",
			 len, i);
		return -EIO;
	}
	return 0;
}

static void check_loopback(int fd, const struct fpgad_dma_info *in,
			   const struct opts *o, struct bufs *b)
{
	const uint64_t sizes[] = { 4096, 64 * 1024, MIB, 16 * MIB };
	char why[160], name[48];
	uint32_t h;
	size_t s;

	for (h = 0; h < in->h2c_channels; h++) {
		uint32_t c = h % in->c2h_channels;
		uint64_t moved = 0;
		int ret = 0;

		snprintf(name, sizeof(name), "loopback-h2c%u-c2h%u", h, c);
		for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && !ret; s++) {
			uint64_t len = s ? sizes[s] : small_len(o);

			if (len > o->card_size || len > b->n)
				break;
			ret = roundtrip(fd, b, h, c, o->card_addr, len, h + s,
					why, sizeof(why));
			moved += len;
		}
		if (ret)
			report("FAIL", o->mode, name, "%s; is card %#" PRIx64 "+%" PRIu64
			       " memory on the card's AXI bus (the Vivado address editor)? "
			       "give --card-addr/--card-size, and read the register dump "
			       "below (status bits 9-23: AXI read/write/descriptor errors)",
			       why, o->card_addr, o->card_size);
		else
			report("PASS", o->mode, name, "%" PRIu64 " bytes each way at card %#" PRIx64
			       ", byte-exact", moved, o->card_addr);
	}
}

static void check_decode_error(int fd, const struct fpgad_dma_info *in,
			       const struct opts *o, struct bufs *b)
{
	long long errors = counter(o->dev, "errors");
	char why[160];
	int h2c, c2h;

	if (!o->have_bad) {
		report("SKIP", o->mode, "decode-error",
		       "give -b ADDR, a card address no AXI slave decodes");
		return;
	}
	h2c = xfer(fd, FPGAD_DMA_H2C, 0, b->ha, 0, o->bad_addr, 4096, 0, NULL);
	c2h = xfer(fd, FPGAD_DMA_C2H, 0, b->hb, 0, o->bad_addr, 4096, 0, NULL);
	/* An engine that logged an AXI error is reset before anything else. */
	reset_chan(fd, FPGAD_DMA_H2C, 0);
	reset_chan(fd, FPGAD_DMA_C2H, 0);
	if (h2c != -EIO || c2h != -EIO)
		report("FAIL", o->mode, "decode-error",
		       "at %#" PRIx64 ": H2C %s, C2H %s (both should be EIO): something "
		       "decodes that address (pick another -b) or the card hides "
		       "DECERR (its AXI interconnect's default slave)",
		       o->bad_addr, errname(h2c), errname(c2h));
	else if (counter(o->dev, "errors") != errors + 2)
		report("FAIL", o->mode, "decode-error", "errors counter %lld, %lld expected",
		       counter(o->dev, "errors"), errors + 2);
	else if (roundtrip(fd, b, 0, 0, o->card_addr, small_len(o), 99, why, sizeof(why)))
		report("FAIL", o->mode, "decode-error", "channels unusable after it: %s", why);
	else
		report("PASS", o->mode, "decode-error",
		       "H2C and C2H at %#" PRIx64 ": EIO, counted; channels still work",
		       o->bad_addr);
	(void)in;
}

/*
 * Submit one transfer per channel of @dir, all before waiting: channel k
 * moves [k * len, (k + 1) * len) of the host buffer to or from card
 * address card_addr + (k % @nsrc) * len.  Waits only for what was
 * submitted; the first failure.
 */
static int concurrent_dir(int fd, const struct opts *o, uint32_t dir,
			  uint32_t n, uint32_t nsrc, uint64_t handle,
			  uint64_t len)
{
	struct fpgad_dma_completion c;
	uint32_t k, sent = 0, got;
	int ret = 0;

	for (k = 0; k < n && !ret; k++) {
		ret = submit(fd, dir, k, handle, k * len,
			     o->card_addr + (k % nsrc) * len, len, 1000 + k, 0);
		if (!ret)
			sent++;
	}
	for (got = 0; got < sent; got++) {
		if (wait_completion(fd, &c))
			return -ETIME;
		if (c.status && !ret)
			ret = c.status;
	}
	return ret;
}

/*
 * Every H2C channel at once, each writing its own data to its own card
 * address, then every C2H channel at once reading them back: all complete
 * and the data is byte-exact.
 */
static void check_concurrent(int fd, const struct fpgad_dma_info *in,
			     const struct opts *o, struct bufs *b)
{
	uint32_t n[2] = { in->h2c_channels, in->c2h_channels }, k;
	uint64_t len = small_len(o);
	const char *what = "H2C";
	int ret;

	if (n[0] < 2 && n[1] < 2) {
		report("SKIP", o->mode, "concurrent", "one channel each way");
		return;
	}
	if (n[0] * len > o->card_size || (n[0] > n[1] ? n[0] : n[1]) * len > b->n) {
		report("SKIP", o->mode, "concurrent", "the card window holds less than "
		       "%u x %" PRIu64 " bytes (-s)", n[0], len);
		return;
	}
	for (k = 0; k < n[0]; k++)
		fill(b->a + k * len, len, 200 + k);
	memset(b->b, 0, n[1] * len);
	ret = concurrent_dir(fd, o, FPGAD_DMA_H2C, n[0], n[0], b->ha, len);
	if (!ret) {
		what = "C2H";
		ret = concurrent_dir(fd, o, FPGAD_DMA_C2H, n[1], n[0], b->hb, len);
	}
	for (k = 0; !ret && k < n[1]; k++)
		if (memcmp(b->b + k * len, b->a + (k % n[0]) * len, len))
			ret = -EBADMSG;
	if (ret == -EBADMSG)
		report("FAIL", o->mode, "concurrent", "C2H channel %u read back other "
		       "data than H2C channel %u wrote at card %#" PRIx64 ": channels that "
		       "work alone mix their data together (the card's AXI interconnect)",
		       k - 1, (k - 1) % n[0], o->card_addr + ((k - 1) % n[0]) * len);
	else if (ret)
		report("FAIL", o->mode, "concurrent", "%s: %s: channels that work alone fail "
		       "together: the card's AXI interconnect or its memory "
		       "controller (register dump and dmesg below)", what, errname(ret));
	else
		report("PASS", o->mode, "concurrent", "%u H2C, then %u C2H channels at once, "
		       "%" PRIu64 " bytes each, byte-exact", n[0], n[1], len);
}

/*
 * Addresses off the engine's alignment: SUBMIT refuses them (EINVAL) when
 * it has one, since the engine would stop on an ALIGN error mid-transfer;
 * with none, odd addresses and lengths go through byte-exact.
 */
static void check_unaligned(int fd, const struct fpgad_dma_info *in,
			    const struct opts *o, struct bufs *b)
{
	uint64_t len = small_len(o) > 3 ? small_len(o) - 3 : 0;
	int card, host, ret;

	if (in->align > 1) {
		card = submit(fd, FPGAD_DMA_H2C, 0, b->ha, 0, o->card_addr + 1,
			      in->align, 1, 0);
		host = submit(fd, FPGAD_DMA_C2H, 0, b->hb, 1, o->card_addr,
			      in->align, 2, 0);
		if (card != -EINVAL || host != -EINVAL)
			report("FAIL", o->mode, "unaligned",
			       "alignment %u: card address +1: %s, host address +1: %s "
			       "(both should be EINVAL: the engine would stop on an ALIGN error)",
			       in->align, errname(card), errname(host));
		else
			report("PASS", o->mode, "unaligned", "alignment %u: card and host "
			       "addresses off it refused with EINVAL", in->align);
		return;
	}
	if (!len || o->card_size < len + 1) {
		report("SKIP", o->mode, "unaligned", "card window too small");
		return;
	}
	fill(b->a + 1, len, 77);
	memset(b->b, 0, len + 3);
	ret = xfer(fd, FPGAD_DMA_H2C, 0, b->ha, 1, o->card_addr + 1, len, 0, NULL);
	if (!ret)
		ret = xfer(fd, FPGAD_DMA_C2H, 0, b->hb, 3, o->card_addr + 1, len, 0, NULL);
	if (!ret && memcmp(b->a + 1, b->b + 3, len))
		ret = -EBADMSG;
	if (ret)
		report("FAIL", o->mode, "unaligned", "alignment 1 (any address): %" PRIu64
		       " bytes at card +1, host +1 and +3: %s: the engine's alignments "
		       "register promises what it cannot do", len, errname(ret));
	else
		report("PASS", o->mode, "unaligned", "alignment 1: %" PRIu64 " bytes at card "
		       "%#" PRIx64 " from host +1, back to host +3, byte-exact", len,
		       o->card_addr + 1);
}

/*
 * A 1 ms timeout is one jiffy: it passes up to 10 ms (HZ=100) after the
 * engine started.  The transfer must take longer than that for a timeout
 * to be certain: the whole window, from a buffer of its own when the
 * window is larger than the 16 MiB ones (up to TIMEOUT_MAX_BYTES).  When
 * it finishes in time, the size that would take TIMEOUT_NEED_MS at the
 * rate it ran at is what the SKIP asks for.
 */
#define TIMEOUT_MAX_BYTES	(1024ull * MIB)
#define TIMEOUT_NEED_MS		20

static void check_timeout(int fd, const struct opts *o, struct bufs *b)
{
	struct fpgad_dma_reset r = { .channel = 0, .direction = FPGAD_DMA_H2C };
	uint64_t len = o->card_size < TIMEOUT_MAX_BYTES ? o->card_size : TIMEOUT_MAX_BYTES;
	long long timeouts = counter(o->dev, "timeouts");
	struct fpgad_dma_completion c;
	uint64_t h = b->ha, took_ns, big_len = len;
	uint8_t *big = NULL;
	char why[160];
	int ret;

	if (len > b->n) {
		big = mmap(NULL, big_len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		h = big == MAP_FAILED ? 0 : pin_host(fd, big, big_len);
		if (!h) {
			len = b->n;
			h = b->ha;
		}
	}
	ret = xfer_rec(fd, FPGAD_DMA_H2C, 0, h, 0, o->card_addr, len, 1, &c);
	if (ret == 0) {
		took_ns = c.t_end_ns > c.t_start_ns ? c.t_end_ns - c.t_start_ns : 1;
		report("SKIP", o->mode, "timeout",
		       "%" PRIu64 " bytes took %" PRIu64 " us, within a 1 ms timeout (one "
		       "jiffy: up to 10 ms): a certain timeout needs %u ms of transfer, "
		       "--card-size %" PRIu64 " or more at this link's rate", len,
		       took_ns / 1000, TIMEOUT_NEED_MS,
		       (uint64_t)((double)len * TIMEOUT_NEED_MS * 1e6 / (double)took_ns));
		goto out;
	}
	if (ret != -ETIMEDOUT) {
		report("FAIL", o->mode, "timeout", "status %s, ETIMEDOUT expected",
		       errname(ret));
		goto out;
	}
	if (c.flags & FPGAD_DMA_COMPLETION_WEDGED) {
		ret = ioctl(fd, FPGAD_DMA_IOC_RESET, &r) ? -errno : 0;
		report(ret ? "FAIL" : "PASS", o->mode, "timeout-wedged",
		       "the engine did not stop within its wait; RESET: %s",
		       ret ? errname(ret) : "function reset, recovered");
	}
	if (counter(o->dev, "timeouts") != timeouts + 1)
		report("FAIL", o->mode, "timeout", "timeouts counter %lld, %lld expected",
		       counter(o->dev, "timeouts"), timeouts + 1);
	else if (roundtrip(fd, b, 0, 0, o->card_addr, small_len(o), 7, why, sizeof(why)))
		report("FAIL", o->mode, "timeout", "channel unusable after it: %s", why);
	else
		report("PASS", o->mode, "timeout",
		       "%" PRIu64 " bytes with a 1 ms timeout: ETIMEDOUT%s; the channel works again",
		       len, c.flags ? " (wedged, reset)" : ", engine stopped");
out:
	if (h && h != b->ha) {
		struct fpgad_dma_unpin u = { .handle = h };

		ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u);
	}
	if (big && big != MAP_FAILED)
		munmap(big, big_len);
}

#ifndef BRINGUP_NO_MEMORY
/*
 * @bytes of the GPU memory pinned as @gpu, through the card in @chunk-byte
 * pieces: host -> card -> GPU, then GPU -> card -> host, byte-exact.
 */
static int gpu_through_card(int fd, const struct opts *o, struct bufs *b,
			    uint64_t gpu, uint64_t bytes, uint64_t chunk)
{
	uint64_t off;
	int ret = 0;

	for (off = 0; off < bytes && !ret; off += chunk) {
		uint64_t n = bytes - off < chunk ? bytes - off : chunk;

		fill(b->a, n, (unsigned int)(off / chunk));
		ret = xfer(fd, FPGAD_DMA_H2C, 0, b->ha, 0, o->card_addr, n, 0, NULL);
		if (!ret)
			ret = xfer(fd, FPGAD_DMA_C2H, 0, gpu, off, o->card_addr, n, 0, NULL);
	}
	for (off = 0; off < bytes && !ret; off += chunk) {
		uint64_t n = bytes - off < chunk ? bytes - off : chunk;

		fill(b->a, n, (unsigned int)(off / chunk));
		memset(b->b, 0, n);
		ret = xfer(fd, FPGAD_DMA_H2C, 0, gpu, off, o->card_addr, n, 0, NULL);
		if (!ret)
			ret = xfer(fd, FPGAD_DMA_C2H, 0, b->hb, 0, o->card_addr, n, 0, NULL);
		if (!ret && memcmp(b->a, b->b, n))
			ret = -EBADMSG;
	}
	return ret;
}
#endif

/* 256 MiB of GPU memory, one dma-buf: card -> GPU -> card -> host. */
static void check_dmabuf(int fd, const struct opts *o, struct bufs *b)
{
#ifdef BRINGUP_NO_MEMORY
	report("SKIP", o->mode, "dmabuf-256m", "built without the GPU memory backend");
	(void)fd;
	(void)b;
}
#else
	const struct memory_ops *mops = memory_ops_for(MEMORY_CUDA);
	struct fpgad_dma_pin_dmabuf p;
	uint64_t chunk = o->card_size < b->n ? o->card_size : b->n;
	struct mem_region *r = NULL;
	char why[192];
	int dfd = -1, ret = 0, ordinal;

	if (!mops) {
		report("SKIP", o->mode, "dmabuf-256m", "built without CUDA");
		return;
	}
	if (memory_cuda_probe(o->gpu ? o->gpu : "", &ordinal, why, sizeof(why))) {
		report("SKIP", o->mode, "dmabuf-256m", "%s", why);
		return;
	}
	ret = mops->alloc(DMABUF_BYTES, o->gpu ? o->gpu : "", "bringup", 0, &r);
	if (!ret)
		ret = mops->export_dmabuf(r, 0, DMABUF_BYTES, &dfd);
	if (ret) {
		report("FAIL", o->mode, "dmabuf-256m", "256 MiB of GPU memory as a dma-buf: %s",
		       errname(ret));
		goto out;
	}
	memset(&p, 0, sizeof(p));
	p.fd = dfd;
	if (ioctl(fd, FPGAD_DMA_IOC_PIN_DMABUF, &p)) {
		report("FAIL", o->mode, "dmabuf-256m", "PIN_DMABUF: %s (the p2p-path line above says whether the kernel allows the path)", errname(errno));
		goto out;
	}
	ret = gpu_through_card(fd, o, b, p.handle, DMABUF_BYTES, chunk);
	if (ret)
		report("FAIL", o->mode, "dmabuf-256m", "%s", errname(ret));
	else
		report("PASS", o->mode, "dmabuf-256m",
		       "256 MiB of GPU memory, one dma-buf, through the card both ways in "
		       "%" PRIu64 "-byte transfers, byte-exact", chunk);
	{
		struct fpgad_dma_unpin u = { .handle = p.handle };

		ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u);
	}
out:
	if (dfd >= 0)
		close(dfd);
	if (r)
		mops->free(r);
}
#endif

/*
 * PIN_NVP2P on cudaMalloc'd memory (64 KiB-aligned, as nv-p2p wants):
 * through the card both ways, then the memory freed under the pin, which
 * makes NVIDIA call the module's free callback: the pin is dead (SUBMIT
 * fails with ENOLINK) and UNPIN still releases it.
 */
#define NVP2P_BYTES		(64ull * MIB)
#define NVP2P_ALIGN		(64ull * 1024)

static void check_nvp2p(int fd, const struct opts *o, struct bufs *b,
			uint32_t features)
{
#ifdef BRINGUP_NO_MEMORY
	if (!(features & FPGAD_DMA_FEAT_NVP2P))
		report("SKIP", o->mode, "nvp2p", "module built without NVIDIA_SRC= "
		       "(make kmod NVIDIA_SRC=/usr/src/nvidia-<version>)");
	else
		report("SKIP", o->mode, "nvp2p", "PIN_NVP2P built in; this program is "
		       "built without the GPU memory backend");
	(void)fd;
	(void)b;
}
#else
	const struct memory_ops *mops = memory_ops_for(MEMORY_CUDA);
	uint64_t chunk = o->card_size < b->n ? o->card_size : b->n;
	struct fpgad_dma_pin_nvp2p p;
	struct fpgad_dma_unpin u;
	struct mem_region *r = NULL;
	char why[192];
	int ret, ordinal, dead;

	if (!(features & FPGAD_DMA_FEAT_NVP2P)) {
		report("SKIP", o->mode, "nvp2p", "module built without NVIDIA_SRC= "
		       "(make kmod NVIDIA_SRC=/usr/src/nvidia-<version>)");
		return;
	}
	if (!mops) {
		report("SKIP", o->mode, "nvp2p", "PIN_NVP2P built in; this program is "
		       "built without CUDA");
		return;
	}
	if (memory_cuda_probe(o->gpu ? o->gpu : "", &ordinal, why, sizeof(why))) {
		report("SKIP", o->mode, "nvp2p", "%s", why);
		return;
	}
	ret = mops->alloc(NVP2P_BYTES + NVP2P_ALIGN, o->gpu ? o->gpu : "",
			  "bringup-nvp2p", 0, &r);
	if (ret) {
		report("FAIL", o->mode, "nvp2p", "cudaMalloc of %llu bytes: %s",
		       NVP2P_BYTES + NVP2P_ALIGN, errname(ret));
		return;
	}
	memset(&p, 0, sizeof(p));
	p.gpu_addr = ((uintptr_t)r->dev + NVP2P_ALIGN - 1) & ~(NVP2P_ALIGN - 1);
	p.length = NVP2P_BYTES;
	if (ioctl(fd, FPGAD_DMA_IOC_PIN_NVP2P, &p)) {
		report("FAIL", o->mode, "nvp2p", "PIN_NVP2P of %#" PRIx64 ": %s (dmesg: "
		       "nvidia_p2p_get_pages; is the GPU's driver the one the module "
		       "was built against?)", (uint64_t)p.gpu_addr, errname(errno));
		mops->free(r);
		return;
	}
	ret = gpu_through_card(fd, o, b, p.handle, NVP2P_BYTES, chunk);
	/* cudaFree under the pin: NVIDIA calls the free callback now. */
	mops->free(r);
	dead = submit(fd, FPGAD_DMA_C2H, 0, p.handle, 0, o->card_addr, 4096, 3, 0);
	memset(&u, 0, sizeof(u));
	u.handle = p.handle;
	if (ret)
		report("FAIL", o->mode, "nvp2p", "64 MiB through the card: %s", errname(ret));
	else if (dead != -ENOLINK)
		report("FAIL", o->mode, "nvp2p", "SUBMIT on the pin after its memory was "
		       "freed: %s, ENOLINK expected (the free callback did not revoke it)",
		       errname(dead));
	else if (ioctl(fd, FPGAD_DMA_IOC_UNPIN, &u))
		report("FAIL", o->mode, "nvp2p", "UNPIN of the revoked pin: %s",
		       errname(errno));
	else
		report("PASS", o->mode, "nvp2p", "64 MiB of cudaMalloc'd memory through the "
		       "card both ways, byte-exact; freed under the pin: ENOLINK, unpinned");
	if (dead == 0) {
		struct fpgad_dma_completion c;

		wait_completion(fd, &c);	/* the transfer that ran anyway */
	}
}
#endif

static void check_p2p(int fd, const struct opts *o)
{
	struct fpgad_dma_p2p_path p;
	unsigned int domain, bus, dev, fn, i;
	char hops[FPGAD_P2P_MAX_HOPS * 40] = "", *at = hops;

	if (!o->gpu || sscanf(o->gpu, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) {
		report("SKIP", o->mode, "p2p-path", "give -g DDDD:BB:DD.F, the GPU's PCI address");
		return;
	}
	memset(&p, 0, sizeof(p));
	p.peer_domain = domain;
	p.peer_bus = (uint8_t)bus;
	p.peer_devfn = (uint8_t)(dev << 3 | fn);
	if (ioctl(fd, FPGAD_DMA_IOC_P2P_PATH, &p)) {
		report("FAIL", o->mode, "p2p-path", "P2P_PATH %s: %s", o->gpu, errname(errno));
		return;
	}
	for (i = 0; i < p.n_hops; i++)
		at += snprintf(at, sizeof(hops) - (size_t)(at - hops), " %04x:%02x:%02x.%u/%u%s%s",
			       p.hops[i].domain, p.hops[i].bus, p.hops[i].devfn >> 3,
			       p.hops[i].devfn & 7u, p.hops[i].type,
			       p.hops[i].flags & FPGAD_P2P_HOP_COMMON ? "/common" : "",
			       p.hops[i].flags & FPGAD_P2P_HOP_REDIRECT ? "/acs-redirect" : "");
	report("PASS", o->mode, "p2p-path", "to %s: distance %d, verdict %#x, hops%s",
	       o->gpu, p.distance, p.verdict, hops);
}

/* One 4 KiB transfer each way, nothing else: the script counts interrupts. */
static int first_light(int fd, const struct opts *o)
{
	uint64_t len = small_len(o);
	struct bufs b;
	char why[160];
	int ret;

	ret = bufs_pin(fd, &b, 4096);
	if (!ret)
		ret = roundtrip(fd, &b, 0, 0, o->card_addr, len, 1, why, sizeof(why));
	else
		snprintf(why, sizeof(why), "cannot pin 2 x 4 KiB: %s", errname(ret));
	if (ret)
		report("FAIL", o->mode, "first-light", "%s", why);
	else
		report("PASS", o->mode, "first-light", "%" PRIu64 " bytes each way at card %#"
		       PRIx64, len, o->card_addr);
	close(fd);
	return ret ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: bringup [-d /dev/fpgadN] [-a CARD_ADDR] [-s CARD_SIZE] "
		   "[-b BAD_ADDR] [-g GPU_PCI_ADDR] [-m LABEL] [-E ENGINE] "
		   "[-o first-light]\n");
}

int main(int argc, char **argv)
{
	struct opts o = { .dev = "/dev/fpgad0", .mode = "run", .engine = "xdma" };
	struct fpgad_dma_info in;
	uint32_t features = 0;
	struct bufs b = { 0 };
	int fd, c;

	while ((c = getopt(argc, argv, "d:a:s:b:g:m:E:o:h")) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'a': o.card_addr = strtoull(optarg, NULL, 0); break;
		case 's': o.card_size = strtoull(optarg, NULL, 0); break;
		case 'b': o.bad_addr = strtoull(optarg, NULL, 0); o.have_bad = true; break;
		case 'g': o.gpu = optarg; break;
		case 'm': o.mode = optarg; break;
		case 'E': o.engine = optarg; break;
		case 'o': o.only = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&in, 0, sizeof(in));
	fd = open_dev(o.dev, &in, &features);
	if (fd < 0) {
		report("FAIL", o.mode, "identify", "%s: %s", o.dev, errname(fd));
		return 1;
	}
	if (!o.card_size)
		o.card_size = in.card_memory ? in.card_memory - o.card_addr : MIB;
	if (o.only && !strcmp(o.only, "first-light"))
		return first_light(fd, &o);
	report(strcmp(in.engine, o.engine) ? "FAIL" : "PASS", o.mode, "identify",
	       "%s engine %04x:%04x at %04x:%02x:%02x.%u, PCIe gen%u x%u, %u H2C + %u C2H, "
	       "align %u, card window %#" PRIx64 "+%" PRIu64 ", default timeout %u ms + "
	       "length/%" PRIu64 " B/ms", in.engine, in.vendor, in.device, in.pci_domain,
	       in.pci_bus, in.pci_devfn >> 3, in.pci_devfn & 7u, in.link_gen, in.link_width,
	       in.h2c_channels, in.c2h_channels, in.align, o.card_addr, o.card_size,
	       in.default_timeout_ms, (uint64_t)in.timeout_bytes_per_ms);
	/* Before the dma-buf check, whose failure it explains. */
	check_p2p(fd, &o);
	if (!in.h2c_channels || !in.c2h_channels) {
		report("SKIP", o.mode, "loopback", "needs an H2C and a C2H channel");
	} else if (bufs_pin(fd, &b, 16 * MIB)) {
		report("FAIL", o.mode, "loopback", "cannot pin 2 x 16 MiB of host memory");
	} else {
		check_loopback(fd, &in, &o, &b);
		check_concurrent(fd, &in, &o, &b);
		check_unaligned(fd, &in, &o, &b);
		check_decode_error(fd, &in, &o, &b);
		check_timeout(fd, &o, &b);
		check_dmabuf(fd, &o, &b);
	}
	if (in.h2c_channels && in.c2h_channels && b.ha)
		check_nvp2p(fd, &o, &b, features);
	else
		report("SKIP", o.mode, "nvp2p", "needs the loopback's buffers");
	close(fd);
	printf("bringup %s: %u passed, %u failed, %u skipped\n", o.mode, passed,
	       failed, skipped);
	return failed ? 1 : 0;
}
