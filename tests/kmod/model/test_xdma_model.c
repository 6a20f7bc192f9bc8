// SPDX-License-Identifier: MIT
/*
 * test_xdma_model.c - fpgad_dma.ko's own sources (the .c files of kmod/) in user space
 * against the XDMA engine model: probe, start, completion by interrupt and
 * by poll-mode write-back, stop, timeout, engine errors, reset and removal,
 * with faults injected in the model, through the module's file operations
 * as /dev/fpgad0's users reach them.
 *
 * Every test ends with the model's and the DMA shim's books checked: no
 * DMA outside a live mapping and nothing a driver must not do to the
 * engine (tear_down).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kshim_test.h"
#include "uapi/fpgad_dma.h"

#define DEV		"fpgad0"
#define PCI_CARD	"0000:00:01.0"
#define WAIT_MS		5000
#define KIB		1024u
#define MIB		(1024u * 1024u)

struct fixture {
	struct kshim_pci_config cfg;
	struct kshim_pci *card;
	struct xm *xm;
	unsigned int mappings;		/* live DMA mappings once probed */
	struct kshim_file *files[8];	/* open, for tear_down after a failure */
};

static struct fixture fx;

/* --- helpers ------------------------------------------------------------------ */

static void params_default(void)
{
	assert_int_equal(kshim_param_set("ids", "0x9038"), 0);
	assert_int_equal(kshim_param_set("timeout_ms", "1000"), 0);
	assert_int_equal(kshim_param_set("max_inflight", "64"), 0);
	assert_int_equal(kshim_param_set("poll_mode", "0"), 0);
	assert_int_equal(kshim_param_set("card_memory", "0"), 0);
}

/* Load the module and plug in a card made from fx.cfg. */
static void plug(void)
{
	assert_int_equal(kshim_module_init(), 0);
	fx.card = kshim_pci_add(&fx.cfg);
	assert_non_null(fx.card);
	fx.xm = kshim_pci_model(fx.card);
	fx.mappings = kshim_dma_mappings();
}

static int set_up(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	kshim_pci_defaults(&fx.cfg);
	params_default();
	kshim_log_clear();
	kshim_lock_forget();
	kshim_set_admin(true);
	kshim_set_memlock(ULONG_MAX);
	kshim_dma_bounce(false);
	return 0;
}

static void assert_model_clean(void)
{
	struct xm_stats st;

	xm_get_stats(fx.xm, &st);
	if (st.violations)
		fail_msg("model: %llu violations, last: %s",
			 (unsigned long long)st.violations, st.last_violation);
	if (kshim_dma_violations())
		fail_msg("DMA outside a mapping: %llu, last: %s",
			 (unsigned long long)kshim_dma_violations(),
			 kshim_dma_last_violation());
}

static void close_dev(struct kshim_file *f)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(fx.files); i++)
		if (fx.files[i] == f)
			fx.files[i] = NULL;
	kshim_close(f);
}

static int tear_down(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(fx.files); i++)
		kshim_close(fx.files[i]);
	if (fx.card) {
		assert_model_clean();
		kshim_pci_remove(fx.card);
	}
	kshim_module_exit();
	assert_int_equal(kshim_dma_mappings(), 0);
	assert_int_equal(kshim_dmabuf_attachments(), 0);
	assert_int_equal(kshim_warnings(), 0);
	if (kshim_lock_violations())
		fail_msg("lock checker: %llu reports, last: %s",
			 (unsigned long long)kshim_lock_violations(),
			 kshim_lock_last_violation());
	kshim_topology_clear();
	return 0;
}

static struct kshim_file *open_dev(void)
{
	struct fpgad_dma_version v = { .abi_version = FPGAD_DMA_ABI_VERSION };
	struct kshim_file *f = NULL;

	unsigned int i;

	assert_int_equal(kshim_open(DEV, &f), 0);
	for (i = 0; i < ARRAY_SIZE(fx.files) && fx.files[i]; i++)
		;
	assert_true(i < ARRAY_SIZE(fx.files));
	fx.files[i] = f;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_VERSION, &v), 0);
	return f;
}

static u64 pin_host(struct kshim_file *f, void *addr, u64 len)
{
	struct fpgad_dma_pin_host p = { .addr = (uintptr_t)addr, .length = len };

	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_HOST, &p), 0);
	return p.handle;
}

static u64 pin_dmabuf(struct kshim_file *f, int fd)
{
	struct fpgad_dma_pin_dmabuf p = { .fd = fd };

	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_DMABUF, &p), 0);
	return p.handle;
}

static int submit(struct kshim_file *f, u32 dir, u32 ch, u64 handle, u64 off,
		  u64 card, u64 len, u64 cookie, u32 tmo)
{
	struct fpgad_dma_submit s = {
		.channel = ch, .direction = dir, .handle = handle,
		.offset = off, .card_addr = card, .length = len,
		.cookie = cookie, .timeout_ms = tmo,
	};

	return (int)kshim_ioctl(f, FPGAD_DMA_IOC_SUBMIT, &s);
}

/* One completion; status -9999 when none came within WAIT_MS. */
static struct fpgad_dma_completion wait_one(struct kshim_file *f)
{
	struct fpgad_dma_completion c = { .status = -9999 };
	unsigned int ms;

	for (ms = 0; ms < WAIT_MS; ms++) {
		if (kshim_poll(f) & EPOLLIN) {
			if (kshim_read(f, &c, sizeof(c), true) != sizeof(c))
				c.status = -9998;
			return c;
		}
		usleep(1000);
	}
	return c;
}

static int xfer(struct kshim_file *f, u32 dir, u32 ch, u64 handle, u64 off,
		u64 card, u64 len, u32 tmo)
{
	static u64 cookie = 1;
	struct fpgad_dma_completion c;
	int ret;

	ret = submit(f, dir, ch, handle, off, card, len, ++cookie, tmo);
	if (ret)
		return ret;
	c = wait_one(f);
	if (!c.status && (c.cookie != cookie || c.length != len ||
			  c.direction != dir || c.channel != ch))
		return -1000;
	return c.status;
}

static void fill(u8 *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (u8)(i * 7 + seed * 13 + (i >> 9));
}

static u8 *buf_new(size_t n)
{
	u8 *p = aligned_alloc(PAGE_SIZE, (n + PAGE_SIZE - 1) & PAGE_MASK);

	assert_non_null(p);
	memset(p, 0, n);
	return p;
}

static void wait_busy(unsigned int dir, unsigned int ch)
{
	unsigned int ms;

	for (ms = 0; ms < WAIT_MS && !xm_busy(fx.xm, dir, ch); ms++)
		usleep(1000);
	assert_true(xm_busy(fx.xm, dir, ch));
}

static void wait_hung(void)
{
	unsigned int ms;

	for (ms = 0; ms < WAIT_MS && !xm_hung(fx.xm); ms++)
		usleep(1000);
	assert_true(xm_hung(fx.xm) > 0);
}

static void wait_idle(unsigned int dir, unsigned int ch)
{
	unsigned int ms;

	for (ms = 0; ms < WAIT_MS && xm_busy(fx.xm, dir, ch); ms++)
		usleep(1000);
	assert_false(xm_busy(fx.xm, dir, ch));
}

static int reset_chan(struct kshim_file *f, u32 dir, u32 ch)
{
	struct fpgad_dma_reset r = { .channel = ch, .direction = dir };

	return (int)kshim_ioctl(f, FPGAD_DMA_IOC_RESET, &r);
}

/* --- probe and INFO ------------------------------------------------------------ */

static void test_probe_info(void **state)
{
	struct fpgad_dma_info in;
	struct kshim_file *f;

	(void)state;
	fx.cfg.xm.n_h2c = 2;
	fx.cfg.xm.n_c2h = 3;
	plug();
	assert_int_equal(kshim_pci_probe_result(fx.card), 0);
	assert_true(kshim_cdev_exists(DEV));
	f = open_dev();
	memset(&in, 0xff, sizeof(in));
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_INFO, &in), 0);
	assert_string_equal(in.engine, "xdma");
	assert_int_equal(in.h2c_channels, 2);
	assert_int_equal(in.c2h_channels, 3);
	assert_int_equal(in.link_gen, 2);
	assert_int_equal(in.link_width, 4);
	assert_int_equal(in.vendor, 0x10ee);
	assert_int_equal(in.device, 0x9038);
	assert_int_equal(in.align, 1);
	assert_int_equal(in.reserved[0], 0);
	close_dev(f);
	assert_true(kshim_log_has("XDMA on BAR 1"));
}

/* --- transfers --------------------------------------------------------------------- */

/* H2C then C2H through interrupts, byte-exact, on every channel pair. */
static void test_irq_roundtrip(void **state)
{
	const size_t n = 3 * PAGE_SIZE + 123;
	struct kshim_irq_stats before, after;
	struct kshim_file *f;
	u8 *buf = buf_new(4 * n);
	unsigned int ch;
	u64 h;

	(void)state;
	fx.cfg.xm.n_h2c = 2;
	fx.cfg.xm.n_c2h = 2;
	plug();
	kshim_irq_stats(&before);
	f = open_dev();
	h = pin_host(f, buf, 4 * n);
	for (ch = 0; ch < 2; ch++) {
		fill(buf, n, ch);
		memset(buf + 2 * n, 0, n);
		assert_int_equal(xfer(f, FPGAD_DMA_H2C, ch, h, 0, 4096 * ch + 17,
				      n, 0), 0);
		assert_memory_equal(xm_card(fx.xm) + 4096 * ch + 17, buf, n);
		assert_int_equal(xfer(f, FPGAD_DMA_C2H, ch, h, 2 * n,
				      4096 * ch + 17, n, 0), 0);
		assert_memory_equal(buf + 2 * n, buf, n);
	}
	kshim_irq_stats(&after);
	assert_true(after.handled >= before.handled + 4);
	assert_int_equal(after.misrouted, before.misrouted);
	assert_int_equal(kshim_sysfs(DEV, "interrupts"),
			 after.handled - before.handled);
	assert_int_equal(kshim_sysfs(DEV, "transfers"), 4);
	assert_int_equal(kshim_sysfs(DEV, "bytes_h2c"), 2 * n);
	close_dev(f);
	assert_int_equal(kshim_sysfs(DEV, "pins"), 0);
	assert_int_equal(kshim_dma_mappings(), fx.mappings);
	free(buf);
}

/*
 * More descriptors than one ring holds: the transfer runs as several
 * lists, in both completion modes (in poll mode the write-back word sits
 * right after the ring, where a list one descriptor too long would put its
 * last descriptor).
 */
static void test_multi_list(void **state)
{
	const size_t n = 1100 * PAGE_SIZE;	/* 4 KiB dma-buf segments */
	struct kshim_irq_stats before, after;
	struct kshim_file *f;
	struct xm_stats st0, st;
	u8 *src = buf_new(n), *dst = buf_new(n);
	unsigned int mode;
	int fd_src, fd_dst;
	u64 hs, hd;

	(void)state;
	fx.cfg.xm.card_size = 8 * MIB;
	plug();
	fd_src = kshim_dmabuf_new(src, n);
	fd_dst = kshim_dmabuf_new(dst, n);
	f = open_dev();
	hs = pin_dmabuf(f, fd_src);
	hd = pin_dmabuf(f, fd_dst);
	for (mode = 0; mode < 2; mode++) {
		assert_int_equal(kshim_param_set("poll_mode", mode ? "1" : "0"), 0);
		xm_get_stats(fx.xm, &st0);
		kshim_irq_stats(&before);
		fill(src, n, 9 + mode);
		memset(dst, 0, n);
		assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, hs, 0, 0, n, 0), 0);
		assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, hd, 0, 0, n, 0), 0);
		assert_memory_equal(dst, src, n);
		xm_get_stats(fx.xm, &st);
		kshim_irq_stats(&after);
		assert_true(st.starts - st0.starts >= 4);	/* two lists each way */
		assert_true(st.descriptors - st0.descriptors >= 2200);
		if (mode) {
			assert_true(st.writebacks - st0.writebacks >= 2200);
			assert_int_equal(st.irq_messages, st0.irq_messages);
			assert_int_equal(after.handled, before.handled);
		}
	}
	close_dev(f);
	kshim_dmabuf_put(fd_src);
	kshim_dmabuf_put(fd_dst);
	free(src);
	free(dst);
}

/* poll_mode=1: completion from the write-back, no interrupt at all. */
static void test_poll_mode(void **state)
{
	const size_t n = 64 * KIB;
	struct kshim_irq_stats before, after;
	struct kshim_file *f;
	struct xm_stats st;
	u8 *buf = buf_new(2 * n);
	u64 h;

	(void)state;
	assert_int_equal(kshim_param_set("poll_mode", "1"), 0);
	plug();
	f = open_dev();
	h = pin_host(f, buf, 2 * n);
	kshim_irq_stats(&before);
	fill(buf, n, 3);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 100, n, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, n, 100, n, 0), 0);
	assert_memory_equal(buf + n, buf, n);
	kshim_irq_stats(&after);
	assert_int_equal(after.handled, before.handled);
	xm_get_stats(fx.xm, &st);
	assert_true(st.writebacks >= 2);
	assert_int_equal(st.irq_messages, 0);
	assert_int_equal(kshim_sysfs(DEV, "interrupts"), 0);
	close_dev(f);
	free(buf);
}

/*
 * A timeout logs the engine's registers (status, control, completed count:
 * libxdma's engine_reg_dump); debugfs shows every channel's at any time
 * and goes with the card.
 */
static void test_register_dump(void **state)
{
	const size_t n = 64 * KIB;
	struct kshim_file *f;
	u8 *buf = buf_new(n);
	char regs[1024];
	u64 h;

	(void)state;
	fx.cfg.xm.bytes_per_ms = 1000;		/* 64 ms for the one descriptor */
	plug();
	f = open_dev();
	h = pin_host(f, buf, n);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 20), -ETIMEDOUT);
	assert_true(kshim_log_has("timed out"));
	assert_true(kshim_log_has("completed 0 int_mask"));
	assert_int_equal(kshim_debugfs_read("fpgad_dma/" PCI_CARD "/regs",
					    regs, sizeof(regs)), 0);
	assert_non_null(strstr(regs, "H2C 0: control "));
	assert_non_null(strstr(regs, "C2H 0: control "));
	close_dev(f);
	kshim_pci_remove(fx.card);
	fx.card = NULL;
	assert_int_equal(kshim_debugfs_read("fpgad_dma/" PCI_CARD "/regs",
					    regs, sizeof(regs)), -ENOENT);
	free(buf);
}

/* A timeout stops the engine between descriptors; the channel goes on. */
static void test_timeout_recovers(void **state)
{
	const size_t n = 64 * PAGE_SIZE;
	struct kshim_file *f;
	u8 *buf = buf_new(n), *back = buf_new(n);
	int fd;
	u64 h, hb;

	(void)state;
	fx.cfg.xm.bytes_per_ms = 1000;		/* 4 ms per 4 KiB descriptor */
	plug();
	fd = kshim_dmabuf_new(buf, n);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	hb = pin_host(f, back, n);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 30), -ETIMEDOUT);
	assert_int_equal(kshim_sysfs(DEV, "timeouts"), 1);
	assert_false(xm_busy(fx.xm, 0, 0));
	assert_int_equal(kshim_sysfs(DEV, "inflight"), 0);
	fill(buf, 2 * PAGE_SIZE, 4);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 2 * PAGE_SIZE, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, hb, 0, 0, 2 * PAGE_SIZE, 0), 0);
	assert_memory_equal(back, buf, 2 * PAGE_SIZE);
	close_dev(f);
	kshim_dmabuf_put(fd);
	free(buf);
	free(back);
}

/* An AXI read error on C2H: -EIO, counted, and the channel goes on. */
static void test_c2h_read_error(void **state)
{
	struct kshim_file *f;
	u8 *buf = buf_new(8 * KIB);
	u64 h;

	(void)state;
	plug();
	assert_int_equal(xm_fault_add(fx.xm, 1, 0x8000, 0x9000,
				      XM_FAULT_SLAVE), 0);
	f = open_dev();
	h = pin_host(f, buf, 8 * KIB);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 0, 0x7000, 8 * KIB, 0),
			 -EIO);
	assert_int_equal(kshim_sysfs(DEV, "errors"), 1);
	assert_true(kshim_log_has("error"));
	xm_fault_clear(fx.xm);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 0, 0x7000, 8 * KIB, 0), 0);
	close_dev(f);
	free(buf);
}

/* A descriptor with a bad magic stops the engine with an error. */
static void test_magic_error(void **state)
{
	const size_t n = 8 * PAGE_SIZE;
	struct kshim_file *f;
	u8 *buf = buf_new(n);
	int fd;
	u64 h;

	(void)state;
	plug();
	fd = kshim_dmabuf_new(buf, n);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	xm_bad_magic(fx.xm, 0, 0, 3);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), -EIO);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	close_dev(f);
	kshim_dmabuf_put(fd);
	free(buf);
}

/* A lost interrupt: the engine's status still tells, at the deadline. */
static void test_lost_interrupt(void **state)
{
	struct kshim_file *f;
	struct xm_stats st;
	u8 *buf = buf_new(8 * KIB);
	u64 h;

	(void)state;
	plug();
	f = open_dev();
	h = pin_host(f, buf, 8 * KIB);
	fill(buf, 4 * KIB, 5);
	xm_lose_irqs(fx.xm, 1);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 4 * KIB, 100), 0);
	xm_get_stats(fx.xm, &st);
	assert_int_equal(st.irq_lost, 1);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 4 * KIB, 0, 4 * KIB, 0), 0);
	assert_memory_equal(buf + 4 * KIB, buf, 4 * KIB);
	close_dev(f);
	free(buf);
}

/* RESET cancels what is queued and leaves the engine ready. */
static void test_reset_cancels(void **state)
{
	const size_t n = 16 * PAGE_SIZE;
	struct fpgad_dma_reset r = { .channel = 0, .direction = FPGAD_DMA_H2C };
	struct fpgad_dma_completion c;
	struct kshim_file *f;
	unsigned int i, cancelled = 0;
	u8 *buf = buf_new(n);
	int fd;
	u64 h;

	(void)state;
	fx.cfg.xm.bytes_per_ms = 4096;		/* 1 ms per descriptor */
	plug();
	fd = kshim_dmabuf_new(buf, n);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	for (i = 0; i < 4; i++)
		assert_int_equal(submit(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 10 + i, 0), 0);
	wait_busy(0, 0);
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_RESET, &r), 0);
	for (i = 0; i < 4; i++) {
		c = wait_one(f);
		assert_int_equal(c.cookie, 10 + i);
		cancelled += c.status == -ECANCELED;
		assert_true(c.status == -ECANCELED || c.status == 0);
	}
	assert_true(cancelled >= 3);
	assert_int_equal(kshim_sysfs(DEV, "resets"), 1);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	close_dev(f);
	kshim_dmabuf_put(fd);
	free(buf);
}

/* Close with transfers queued and running: pins go once the engine stops. */
static void test_close_busy(void **state)
{
	const size_t n = 16 * PAGE_SIZE;
	struct kshim_file *f;
	unsigned int i;
	u8 *buf = buf_new(n);
	int fd;
	u64 h;

	(void)state;
	fx.cfg.xm.bytes_per_ms = 4096;
	plug();
	fd = kshim_dmabuf_new(buf, n);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	pin_host(f, buf, n);
	for (i = 0; i < 3; i++)
		assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, h, 0, 0, n, i, 0), 0);
	wait_busy(1, 0);
	close_dev(f);
	assert_int_equal(kshim_sysfs(DEV, "pins"), 0);
	assert_int_equal(kshim_sysfs(DEV, "inflight"), 0);
	assert_int_equal(kshim_dmabuf_attachments(), 0);
	assert_int_equal(kshim_dma_mappings(), fx.mappings);
	kshim_dmabuf_put(fd);
	free(buf);
}

/* PIN_NVP2P (built with the NVIDIA API here): DMA into "GPU memory". */
static void test_nvp2p_pin(void **state)
{
	const u64 gpu = 0x7f0000000000ull, n = 256 * KIB;
	struct fpgad_dma_pin_nvp2p p = { .gpu_addr = gpu, .length = n };
	struct fpgad_dma_version v = { .abi_version = FPGAD_DMA_ABI_VERSION };
	struct kshim_file *f;
	u8 *mem = buf_new(n), *host = buf_new(n);
	u64 hh;

	(void)state;
	plug();
	kshim_gpu_mem(gpu, mem, n);
	f = open_dev();
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_VERSION, &v), 0);
	assert_true(v.features & FPGAD_DMA_FEAT_NVP2P);
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_NVP2P, &p), 0);
	hh = pin_host(f, host, n);
	fill(host, n, 6);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, hh, 0, 0, n, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, p.handle, 0, 0, n, 0), 0);
	assert_memory_equal(mem, host, n);
	close_dev(f);
	free(mem);
	free(host);
}

/* Unplug with a file open and work queued: everything completes. */
static void test_remove_open(void **state)
{
	const size_t n = 16 * PAGE_SIZE;
	struct fpgad_dma_completion c;
	struct kshim_file *f;
	unsigned int i;
	u8 *buf = buf_new(n);
	int fd;
	u64 h;

	(void)state;
	fx.cfg.xm.bytes_per_ms = 4096;
	plug();
	fd = kshim_dmabuf_new(buf, n);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	for (i = 0; i < 3; i++)
		assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, h, 0, 0, n, i, 0), 0);
	wait_busy(1, 0);
	assert_model_clean();
	kshim_pci_remove(fx.card);
	fx.card = NULL;
	assert_false(kshim_cdev_exists(DEV));
	for (i = 0; i < 3; i++) {
		c = wait_one(f);
		assert_true(c.status == -ENODEV || c.status == -ECANCELED ||
			    c.status == 0);
	}
	assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, h, 0, 0, n, 9, 0), -ENODEV);
	assert_true(kshim_poll(f) & EPOLLHUP);
	close_dev(f);
	assert_int_equal(kshim_dmabuf_attachments(), 0);
	kshim_dmabuf_put(fd);
	free(buf);
}

/* --- stopping: a descriptor is short enough to finish, a hung one wedges -------- */

/* A contiguous 4 MiB becomes several descriptors of at most 1 MiB. */
static void test_desc_cap(void **state)
{
	const size_t n = 4 * MIB;
	struct kshim_file *f;
	struct xm_stats st;
	u8 *buf = buf_new(n);
	u64 h;

	(void)state;
	fx.cfg.xm.card_size = 8 * MIB;
	plug();
	f = open_dev();
	h = pin_host(f, buf, n);
	fill(buf, n, 1);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	assert_memory_equal(xm_card(fx.xm), buf, n);
	xm_get_stats(fx.xm, &st);
	assert_int_equal(st.descriptors, 4);
	close_dev(f);
	free(buf);
}

/* Start a transfer on a hung slave and let it time out: the channel wedges. */
static struct kshim_file *wedge_h2c(u8 *buf, size_t n)
{
	struct fpgad_dma_completion c;
	struct kshim_file *f;
	u64 h;

	assert_int_equal(xm_fault_add(fx.xm, 0, 0, n, XM_FAULT_HANG), 0);
	f = open_dev();
	h = pin_host(f, buf, n);
	assert_int_equal(submit(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 77, 50), 0);
	c = wait_one(f);
	assert_int_equal(c.cookie, 77);
	assert_int_equal(c.status, -ETIMEDOUT);
	assert_true(c.flags & FPGAD_DMA_COMPLETION_WEDGED);
	assert_int_equal(kshim_sysfs(DEV, "wedged"), 1);
	assert_true(kshim_log_has("did not stop"));
	/* Nothing more runs on it, and the pin stays with the engine. */
	assert_int_equal(submit(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 78, 0), -EIO);
	close_dev(f);
	assert_int_equal(kshim_sysfs(DEV, "pins"), 1);
	assert_true(kshim_dma_mappings() > fx.mappings);
	return f;
}

/* The slave recovers: RESET finds the engine stopped and lets the pin go. */
static void test_wedge_slave_recovers(void **state)
{
	const size_t n = 64 * KIB;
	struct kshim_file *f;
	u8 *buf = buf_new(2 * n);
	u64 h;

	(void)state;
	plug();
	wedge_h2c(buf, n);
	xm_fault_clear(fx.xm);
	wait_idle(0, 0);		/* it finished the descriptor: still mapped */
	assert_model_clean();
	f = open_dev();
	assert_int_equal(reset_chan(f, FPGAD_DMA_H2C, 0), 0);
	assert_int_equal(kshim_pci_resets(fx.card), 0);
	assert_int_equal(kshim_sysfs(DEV, "wedged"), 0);
	assert_int_equal(kshim_sysfs(DEV, "pins"), 0);
	assert_int_equal(kshim_dma_mappings(), fx.mappings);
	h = pin_host(f, buf, 2 * n);
	fill(buf, n, 2);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, n, 0, n, 0), 0);
	assert_memory_equal(buf + n, buf, n);
	close_dev(f);
	free(buf);
}

/* The slave stays hung: RESET resets the function, then all is usable. */
static void test_wedge_function_reset(void **state)
{
	const size_t n = 64 * KIB;
	struct kshim_file *f;
	u8 *buf = buf_new(2 * n);
	u64 h;

	(void)state;
	plug();
	wedge_h2c(buf, n);
	f = open_dev();
	assert_int_equal(reset_chan(f, FPGAD_DMA_H2C, 0), 0);
	assert_int_equal(kshim_pci_resets(fx.card), 1);
	assert_false(xm_busy(fx.xm, 0, 0));
	assert_int_equal(kshim_sysfs(DEV, "wedged"), 0);
	assert_int_equal(kshim_sysfs(DEV, "pins"), 0);
	assert_int_equal(kshim_dma_mappings(), fx.mappings);
	xm_fault_clear(fx.xm);
	h = pin_host(f, buf, 2 * n);
	fill(buf, n, 3);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, n, 0, n, 0), 0);
	assert_memory_equal(buf + n, buf, n);
	close_dev(f);
	free(buf);
}

/* No function reset available: RESET says so; removal still ends it safely. */
static void test_wedge_no_reset(void **state)
{
	const size_t n = 64 * KIB;
	struct kshim_file *f;
	u8 *buf = buf_new(n);

	(void)state;
	fx.cfg.no_reset = true;
	plug();
	wedge_h2c(buf, n);
	f = open_dev();
	assert_int_equal(reset_chan(f, FPGAD_DMA_H2C, 0), -EIO);
	assert_int_equal(kshim_sysfs(DEV, "wedged"), 1);
	close_dev(f);
	assert_model_clean();
	/* Unplugged: bus mastering off first, then the pin goes. */
	kshim_pci_remove(fx.card);
	fx.card = NULL;
	assert_int_equal(kshim_dma_mappings(), 0);
	assert_int_equal(kshim_dma_violations(), 0);
	free(buf);
}

/* --- channel kinds and errors the engine must report --------------------------- */

static void test_stream_refused(void **state)
{
	(void)state;
	fx.cfg.xm.stream = true;
	plug();
	assert_int_equal(kshim_pci_probe_result(fx.card), -EOPNOTSUPP);
	assert_false(kshim_cdev_exists(DEV));
	assert_true(kshim_log_has("AXI4-Stream"));
}

/* An AXI decode or slave error on an H2C write is an error, not success. */
static void test_h2c_write_error(void **state)
{
	struct kshim_file *f;
	u8 *buf = buf_new(16 * KIB);
	u64 h;

	(void)state;
	plug();
	assert_int_equal(xm_fault_add(fx.xm, 0, 0x4000, 0x5000,
				      XM_FAULT_DECODE), 0);
	assert_int_equal(xm_fault_add(fx.xm, 0, 0xc000, 0xd000,
				      XM_FAULT_SLAVE), 0);
	f = open_dev();
	h = pin_host(f, buf, 16 * KIB);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0x2000, 16 * KIB, 0), -EIO);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0xa000, 16 * KIB, 0), -EIO);
	assert_int_equal(kshim_sysfs(DEV, "errors"), 2);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0x10000, 16 * KIB, 0), 0);
	close_dev(f);
	free(buf);
}

/*
 * Poll mode sees errors at once: the engine's write-back carries Sts_err
 * when an error stops it, and the driver reads the status register while
 * it polls as well, for an engine whose write-back does not arrive: with
 * either, waiting for the count would end in -ETIMEDOUT.
 */
static void test_poll_mode_errors(void **state)
{
	const size_t n = 8 * PAGE_SIZE;
	struct kshim_file *f;
	struct xm_stats st;
	u8 *buf = buf_new(n);
	unsigned int wb;
	int fd;
	u64 h;

	(void)state;
	assert_int_equal(kshim_param_set("poll_mode", "1"), 0);
	plug();
	assert_int_equal(xm_fault_add(fx.xm, 1, 0x1000, 0x2000,
				      XM_FAULT_DECODE), 0);
	assert_int_equal(xm_fault_add(fx.xm, 0, 0x11000, 0x12000,
				      XM_FAULT_SLAVE), 0);
	fd = kshim_dmabuf_new(buf, n);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	for (wb = 0; wb < 2; wb++) {
		xm_err_writeback(fx.xm, !wb);
		assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 0, 0, n, 300), -EIO);
		assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0x10000, n, 300), -EIO);
		xm_bad_magic(fx.xm, 0, 0, 2);
		assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0x20000, n, 300), -EIO);
		assert_int_equal(kshim_sysfs(DEV, "errors"), 3 * (wb + 1));
		assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0x20000, n, 0), 0);
		xm_get_stats(fx.xm, &st);
		assert_int_equal(st.writeback_errors, 3);
	}
	close_dev(f);
	kshim_dmabuf_put(fd);
	free(buf);
}

/*
 * Every error bit the engine logs, each of the five bits of the read,
 * write and descriptor groups included, raised before the first, a middle
 * and the last descriptor moves data and after each has been counted, in
 * both completion modes: each fails the transfer with -EIO (not
 * -ETIMEDOUT: an error is seen at once), and the channel goes on.  After
 * the last descriptor the completed count is whole: only the status bit
 * (and, in poll mode, the write-back's Sts_err) tells.
 */
static void test_error_bits_everywhere(void **state)
{
	static const struct {
		const char *name;
		u32 bit;
	} groups[] = {
		{ "align", XM_ERR_ALIGN }, { "magic", XM_ERR_MAGIC },
		{ "length", XM_ERR_LENGTH }, { "read", XM_ERR_READ },
		{ "write", XM_ERR_WRITE }, { "desc", XM_ERR_DESC },
	};
	/* Three descriptors: 1 MiB each at most. */
	const size_t n = 2 * MIB + 4 * KIB;
	const struct {
		unsigned int index;
		bool after;
	} at[] = {
		{ 0, false }, { 0, true }, { 1, false }, { 1, true },
		{ 2, false }, { 2, true },
	};
	struct kshim_file *f;
	struct xm_stats st;
	u8 *buf = buf_new(n);
	unsigned int g, b, a, mode, dir;
	long long errors = 0;
	u64 h, wb_errors;

	(void)state;
	fx.cfg.xm.card_size = 4 * MIB;
	plug();
	f = open_dev();
	h = pin_host(f, buf, n);
	for (mode = 0; mode < 2; mode++) {
		assert_int_equal(kshim_param_set("poll_mode", mode ? "1" : "0"), 0);
		for (g = 0; g < ARRAY_SIZE(groups); g++) {
			/* The groups of five: read, write and desc. */
			unsigned int bits = groups[g].bit >= XM_ERR_READ ? 5 : 1;

			for (b = 0; b < bits; b++)
			for (a = 0; a < ARRAY_SIZE(at); a++)
			for (dir = 0; dir < 2; dir++) {
				xm_get_stats(fx.xm, &st);
				wb_errors = st.writeback_errors;
				xm_error_at(fx.xm, dir, 0, groups[g].bit << b,
					    at[a].index, at[a].after);
				if (xfer(f, dir, 0, h, 0, 0, n, 5000) != -EIO)
					fail_msg("%s error bit %u at descriptor %u%s, %s, %s: not -EIO",
						 groups[g].name, b, at[a].index,
						 at[a].after ? " (after)" : "",
						 dir ? "C2H" : "H2C",
						 mode ? "poll" : "interrupt");
				xm_get_stats(fx.xm, &st);
				assert_int_equal(st.writeback_errors,
						 wb_errors + mode);
				errors++;
			}
		}
		assert_int_equal(kshim_sysfs(DEV, "errors"), errors);
		assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	}
	xm_get_stats(fx.xm, &st);
	assert_int_equal(st.errors_ignored, 0);
	close_dev(f);
	free(buf);
}

/* --- interrupts ------------------------------------------------------------------ */

/* Legacy INTx on pin INTB: the engines must raise INTB. */
static void test_intx_pin(void **state)
{
	struct kshim_irq_stats before, st;
	struct kshim_file *f;
	u8 *buf = buf_new(8 * KIB);
	u64 h;

	(void)state;
	fx.cfg.irq_modes = PCI_IRQ_INTX;
	fx.cfg.intx_pin = 2;
	plug();
	assert_false(kshim_pci_command(fx.card) & PCI_COMMAND_INTX_DISABLE);
	f = open_dev();
	h = pin_host(f, buf, 8 * KIB);
	kshim_irq_stats(&before);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 8 * KIB, 300), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 0, 0, 8 * KIB, 300), 0);
	kshim_irq_stats(&st);
	assert_true(st.handled - before.handled >= 2);
	assert_int_equal(st.misrouted - before.misrouted, 0);
	close_dev(f);
	free(buf);
}

/* A level interrupt is masked before the handler returns: no second call. */
static void test_intx_no_spurious(void **state)
{
	struct kshim_irq_stats before, st;
	struct kshim_file *f;
	u8 *buf = buf_new(8 * KIB);
	unsigned int i;
	u64 h;

	(void)state;
	fx.cfg.irq_modes = PCI_IRQ_INTX;
	plug();
	f = open_dev();
	h = pin_host(f, buf, 8 * KIB);
	/* The counts are the process's: this test's are the difference. */
	kshim_irq_stats(&before);
	for (i = 0; i < 10; i++)
		assert_int_equal(xfer(f, i & 1, 0, h, 0, 0, 8 * KIB, 0), 0);
	kshim_irq_stats(&st);
	assert_true(st.handled - before.handled >= 10);
	assert_int_equal(st.unhandled - before.unhandled, 0);
	/* The card's own count: what its handler took, not the line's. */
	assert_int_equal(kshim_sysfs(DEV, "interrupts"),
			 st.handled - before.handled);
	/* Another device on the shared line rings: not the card's. */
	for (i = 0; i < 5; i++)
		kshim_irq_fire(fx.card, 0);
	assert_int_equal(kshim_sysfs(DEV, "interrupts"),
			 st.handled - before.handled);
	close_dev(f);
	free(buf);
}

/* --- timeouts that fit the transfer ------------------------------------------------------ */

/* 16 MiB at Gen1 x1 takes ~70 ms: a 10 ms default grows with the length. */
static void test_timeout_scales(void **state)
{
	const size_t n = 16 * MIB;
	struct fpgad_dma_info in;
	struct kshim_file *f;
	u8 *buf = buf_new(n);
	u64 h;

	(void)state;
	fx.cfg.link_gen = 1;
	fx.cfg.link_width = 1;
	fx.cfg.xm.card_size = n;
	fx.cfg.xm.bytes_per_ms = 250000;
	assert_int_equal(kshim_param_set("timeout_ms", "10"), 0);
	plug();
	f = open_dev();
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_INFO, &in), 0);
	assert_int_equal(in.default_timeout_ms, 10);
	assert_int_equal(in.timeout_bytes_per_ms, 62500);
	h = pin_host(f, buf, n);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	/* An explicit timeout is the caller's: not stretched. */
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 10), -ETIMEDOUT);
	close_dev(f);
	free(buf);
}

/* --- memory taken away under a running transfer --------------------------------------- */

/* NVIDIA frees the GPU memory: the engine is stopped before the callback returns. */
static void test_nvp2p_revoke(void **state)
{
	const u64 gpu = 0x7f0000000000ull, n = 1 * MIB;
	struct fpgad_dma_pin_nvp2p p = { .gpu_addr = gpu, .length = n };
	struct fpgad_dma_completion c;
	struct kshim_file *f;
	u8 *mem = buf_new(n);

	(void)state;
	fx.cfg.xm.bytes_per_ms = 6554;		/* 10 ms per 64 KiB page */
	plug();
	kshim_gpu_mem(gpu, mem, n);
	f = open_dev();
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_NVP2P, &p), 0);
	assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, p.handle, 0, 0, n, 5, 0), 0);
	wait_busy(1, 0);
	kshim_gpu_free(gpu);
	assert_false(xm_busy(fx.xm, 1, 0));
	c = wait_one(f);
	assert_int_equal(c.status, -ENOLINK);
	assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, p.handle, 0, 0, n, 6, 0),
			 -ENOLINK);
	assert_model_clean();
	close_dev(f);
	free(mem);
}

/* The GPU memory freed in another thread, as cudaFree in a client's thread. */
struct nvp2p_race {
	struct kshim_file *f;
	u64 gpu, handle;
	long unpin;
	bool done;
};

static void *race_gpu_free(void *arg)
{
	struct nvp2p_race *r = arg;

	kshim_gpu_free(r->gpu);
	return NULL;
}

static void *race_unpin(void *arg)
{
	struct nvp2p_race *r = arg;
	struct fpgad_dma_unpin u = { .handle = r->handle };

	r->unpin = kshim_ioctl(r->f, FPGAD_DMA_IOC_UNPIN, &u);
	__atomic_store_n(&r->done, true, __ATOMIC_RELEASE);
	return NULL;
}

static bool race_done_within(struct nvp2p_race *r, unsigned int ms)
{
	for (; ms; ms--) {
		if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
			return true;
		usleep(1000);
	}
	return __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
}

/*
 * UNPIN (release) while the free callback runs, the callback held at each
 * of its points in turn: after its first unlock it has taken the memory and
 * is revoking the pin, so release must not return; at any later point
 * release may return, and then the callback must not touch the pin's
 * object again (ASan: a use after free fails the suite).
 */
static void test_nvp2p_release_races_callback(void **state)
{
	static const struct {
		enum kshim_point_kind kind;
		unsigned int n;
		bool release_waits;
	} at[] = {
		{ KSHIM_POINT_UNLOCK, 1, true },
		{ KSHIM_POINT_UNLOCK, 2, false },
		{ KSHIM_POINT_UNLOCK, 3, false },
		{ KSHIM_POINT_WAKE, 1, false },
		{ KSHIM_POINT_WAKE, 2, false },
	};
	const u64 gpu = 0x7f0000000000ull, n = 256 * KIB;
	struct kshim_file *f;
	u8 *mem = buf_new(n);
	unsigned int i;

	(void)state;
	plug();
	kshim_gpu_mem(gpu, mem, n);
	f = open_dev();
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		struct fpgad_dma_pin_nvp2p p = { .gpu_addr = gpu, .length = n };
		struct nvp2p_race r = { .f = f, .gpu = gpu };
		pthread_t cb, rel;
		bool held;

		assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_NVP2P, &p), 0);
		r.handle = p.handle;
		kshim_gpu_pause_at(at[i].kind, at[i].n);
		assert_int_equal(pthread_create(&cb, NULL, race_gpu_free, &r), 0);
		held = kshim_gpu_wait_paused(500);
		/* The callback takes the memory under a lock: that point exists. */
		if (at[i].release_waits)
			assert_true(held);
		assert_int_equal(pthread_create(&rel, NULL, race_unpin, &r), 0);
		if (held && at[i].release_waits && race_done_within(&r, 200))
			fail_msg("point %u: release returned while the free callback was revoking the pin",
				 i);
		if (held && !at[i].release_waits)
			race_done_within(&r, 200);
		kshim_gpu_resume();
		assert_int_equal(pthread_join(cb, NULL), 0);
		assert_int_equal(pthread_join(rel, NULL), 0);
		assert_int_equal(r.unpin, 0);
		assert_int_equal(kshim_sysfs(DEV, "pins"), 0);
	}
	close_dev(f);
	assert_int_equal(kshim_dma_mappings(), fx.mappings);
	free(mem);
}

/*
 * The GPU memory is freed while PIN_NVP2P sets the pin up, at each step
 * after nvidia_p2p_get_pages registered the callback: the callback returns
 * at once (it runs under the NVIDIA driver's locks: waiting for set-up
 * would deadlock), PIN_NVP2P fails with ENOLINK, nothing leaks, and the
 * next pin of the same memory works.
 */
static void test_nvp2p_callback_during_pin(void **state)
{
	static const enum kshim_nvp2p_step steps[] = {
		KSHIM_NVP2P_GOT_PAGES, KSHIM_NVP2P_MAP, KSHIM_NVP2P_MAPPED,
	};
	const u64 gpu = 0x7f0000000000ull, n = 256 * KIB;
	struct kshim_file *f;
	u8 *mem = buf_new(n), *host = buf_new(n);
	unsigned int i;
	u64 hh;

	(void)state;
	plug();
	kshim_gpu_mem(gpu, mem, n);
	f = open_dev();
	hh = pin_host(f, host, n);
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		struct fpgad_dma_pin_nvp2p p = { .gpu_addr = gpu, .length = n };

		kshim_gpu_free_during(steps[i]);
		if (kshim_ioctl(f, FPGAD_DMA_IOC_PIN_NVP2P, &p) != -ENOLINK)
			fail_msg("step %u: PIN_NVP2P did not fail with ENOLINK", i);
		assert_false(kshim_gpu_callback_blocked());
		assert_int_equal(kshim_sysfs(DEV, "pins"), 1);
		assert_int_equal(kshim_dma_mappings(), fx.mappings + 1);
	}
	kshim_gpu_free_during(KSHIM_NVP2P_NONE);
	{
		struct fpgad_dma_pin_nvp2p p = { .gpu_addr = gpu, .length = n };

		assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_NVP2P, &p), 0);
		fill(host, n, 11);
		assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, hh, 0, 0, n, 0), 0);
		assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, p.handle, 0, 0, n, 0), 0);
		assert_memory_equal(mem, host, n);
	}
	close_dev(f);
	free(mem);
	free(host);
}

/* An exporter moves a dma-buf: the same, through move_notify. */
static void test_dmabuf_move_notify(void **state)
{
	const size_t n = 64 * PAGE_SIZE;
	struct fpgad_dma_completion c;
	struct kshim_file *f;
	u8 *buf = buf_new(n);
	int fd;
	u64 h;

	(void)state;
	fx.cfg.xm.bytes_per_ms = 1000;
	plug();
	fd = kshim_dmabuf_new(buf, n);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, h, 0, 0, n, 5, 0), 0);
	wait_busy(1, 0);
	kshim_dmabuf_move(fd);
	assert_false(xm_busy(fx.xm, 1, 0));
	c = wait_one(f);
	assert_int_equal(c.status, -ENOLINK);
	assert_model_clean();
	close_dev(f);
	kshim_dmabuf_put(fd);
	free(buf);
}

/* --- uapi versions -------------------------------------------------------------------- */

/* INFO as a newer fpgad would ask for it: a field more at the end. */
struct info_next {
	struct fpgad_dma_info in;
	__u64 more;
};
#define IOC_INFO_NEXT	_IOWR(FPGAD_DMA_IOC_MAGIC, 0x01, struct info_next)
/* SUBMIT cut short: older than any ABI the driver knows. */
#define IOC_SUBMIT_SHORT _IOWR(FPGAD_DMA_IOC_MAGIC, 0x06, struct fpgad_dma_reset)

static long version_as(struct kshim_file *f, u32 abi,
		       struct fpgad_dma_version *v)
{
	memset(v, 0, sizeof(*v));
	v->abi_version = abi;
	return kshim_ioctl(f, FPGAD_DMA_IOC_VERSION, v);
}

/*
 * An older fpgad (a minor behind, comparing the reply for equality) keeps
 * working with this module; a newer minor or another major does not; a
 * structure grows at its end without breaking either side.
 */
static void test_abi_versions(void **state)
{
	const u32 older = FPGAD_DMA_ABI_VERSION - 1;
	struct fpgad_dma_version v;
	struct fpgad_dma_info in;
	struct fpgad_dma_reset r = { 0, 0 };
	struct info_next next;
	struct kshim_file *f;

	(void)state;
	plug();
	assert_int_equal(kshim_open(DEV, &f), 0);
	fx.files[0] = f;
	assert_int_equal(FPGAD_DMA_ABI_MAJOR(older),
			 FPGAD_DMA_ABI_MAJOR(FPGAD_DMA_ABI_VERSION));
	assert_int_equal(version_as(f, older, &v), 0);
	assert_int_equal(v.abi_version, older);
	assert_int_equal(v.driver_version, FPGAD_DMA_ABI_VERSION);
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_INFO, &in), 0);

	assert_int_equal(version_as(f, FPGAD_DMA_ABI_VERSION + 1, &v), 0);
	assert_int_equal(v.abi_version, FPGAD_DMA_ABI_VERSION);
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_INFO, &in), -EPROTO);
	assert_int_equal(version_as(f, FPGAD_DMA_ABI(1, 0), &v), 0);
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_INFO, &in), -EPROTO);
	/* A reply reused as the next call: driver_version is out only. */
	v.abi_version = FPGAD_DMA_ABI_VERSION;
	assert_int_equal(v.driver_version, FPGAD_DMA_ABI_VERSION);
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_VERSION, &v), 0);
	v.reserved = 1;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_VERSION, &v), -EINVAL);

	assert_int_equal(version_as(f, FPGAD_DMA_ABI_VERSION, &v), 0);
	memset(&next, 0, sizeof(next));
	assert_int_equal(kshim_ioctl(f, IOC_INFO_NEXT, &next), 0);
	assert_string_equal(next.in.engine, "xdma");
	assert_int_equal(next.more, 0);
	memset(&next, 0, sizeof(next));
	next.more = 1;
	assert_int_equal(kshim_ioctl(f, IOC_INFO_NEXT, &next), -E2BIG);
	assert_int_equal(kshim_ioctl(f, IOC_SUBMIT_SHORT, &r), -EINVAL);
}

/* --- lock order (klockdep.c) ------------------------------------------------------------ */

static void assert_no_lock_report(void)
{
	if (kshim_lock_violations())
		fail_msg("lock checker: %s", kshim_lock_last_violation());
}

/*
 * nv-p2p: nvidia_p2p_put_pages waits for a free callback running on the
 * same pages, so no lock the callback takes may be held across it.  One
 * pin released by UNPIN (put_pages), one whose GPU memory is freed (the
 * callback): each order is recorded once, and together they close a cycle
 * if release holds the pin's lock across put_pages.
 */
static void test_lock_order_nvp2p_put_pages(void **state)
{
	const u64 gpu = 0x7f0000000000ull, n = 128 * KIB;
	struct fpgad_dma_pin_nvp2p p = { .gpu_addr = gpu, .length = n / 2 };
	struct fpgad_dma_unpin u;
	struct kshim_file *f;
	u8 *mem = buf_new(n);

	(void)state;
	plug();
	kshim_gpu_mem(gpu, mem, n);
	f = open_dev();
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_NVP2P, &p), 0);
	u.handle = p.handle;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_UNPIN, &u), 0);
	p.gpu_addr = gpu + n / 2;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_NVP2P, &p), 0);
	kshim_gpu_free(gpu);
	assert_no_lock_report();
	/* The dead pin is released after its callback: put_pages not called. */
	u.handle = p.handle;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_UNPIN, &u), 0);
	assert_int_equal(kshim_sysfs(DEV, "pins"), 0);
	assert_no_lock_report();
	close_dev(f);
	free(mem);
}

/*
 * dma_resv_lock against hw_lock: RESET of a wedged channel lets go of the
 * pin the engine held; when that is the last reference to a dma-buf pin,
 * its release takes the reservation lock.  An exporter calls move_notify
 * with the reservation held, and the revoke waits for the engine, that is
 * for whoever holds hw_lock.  The pin must be let go after hw_lock.
 */
static void test_lock_order_resv_hw_lock(void **state)
{
	const size_t n = 64 * KIB;
	struct fpgad_dma_completion c;
	struct kshim_file *f;
	u8 *buf = buf_new(n), *other = buf_new(n);
	int fd, fd2;
	u64 h;

	(void)state;
	plug();
	fd = kshim_dmabuf_new(buf, n);
	fd2 = kshim_dmabuf_new(other, n);
	assert_int_equal(xm_fault_add(fx.xm, 0, 0, n, XM_FAULT_HANG), 0);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	assert_int_equal(submit(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 1, 50), 0);
	c = wait_one(f);
	assert_true(c.flags & FPGAD_DMA_COMPLETION_WEDGED);
	close_dev(f);			/* the wedged channel holds the last ref */
	kshim_dmabuf_put(fd);
	xm_fault_clear(fx.xm);
	wait_idle(0, 0);
	f = open_dev();
	assert_int_equal(reset_chan(f, FPGAD_DMA_H2C, 0), 0);
	assert_int_equal(kshim_dmabuf_attachments(), 0);
	pin_dmabuf(f, fd2);
	kshim_dmabuf_move(fd2);
	assert_no_lock_report();
	close_dev(f);
	kshim_dmabuf_put(fd2);
	free(buf);
	free(other);
}

/* The checker itself: an AB-BA, a mutex under a spinlock, a sleep in an IRQ. */
static void test_lock_checker(void **state)
{
	struct mutex a, b;
	spinlock_t s;

	(void)state;
	mutex_init(&a);
	mutex_init(&b);
	spin_lock_init(&s);
	mutex_lock(&a);
	mutex_lock(&b);
	mutex_unlock(&b);
	mutex_unlock(&a);
	assert_int_equal(kshim_lock_violations(), 0);
	mutex_lock(&b);
	mutex_lock(&a);
	mutex_unlock(&a);
	mutex_unlock(&b);
	assert_int_equal(kshim_lock_violations(), 1);
	assert_non_null(strstr(kshim_lock_last_violation(), "AB-BA"));
	spin_lock(&s);
	mutex_lock(&a);
	mutex_unlock(&a);
	spin_unlock(&s);
	assert_int_equal(kshim_lock_violations(), 2);
	assert_non_null(strstr(kshim_lock_last_violation(), "spinlock"));
	kshim_irq_enter();
	might_sleep();
	kshim_irq_exit();
	assert_int_equal(kshim_lock_violations(), 3);
	assert_non_null(strstr(kshim_lock_last_violation(), "interrupt"));
	mutex_destroy(&a);
	mutex_destroy(&b);
	kshim_lock_forget();
}

/* Revoked while the engine is hung: bus mastering goes off, RESET brings it back. */
static void test_revoke_hung(void **state)
{
	const u64 gpu = 0x7f0000000000ull, n = 256 * KIB;
	struct fpgad_dma_pin_nvp2p p = { .gpu_addr = gpu, .length = n };
	struct fpgad_dma_completion c;
	struct kshim_file *f;
	u8 *mem = buf_new(n), *host = buf_new(n);
	u64 hh;

	(void)state;
	plug();
	kshim_gpu_mem(gpu, mem, n);
	assert_int_equal(xm_fault_add(fx.xm, 1, 0, n, XM_FAULT_HANG), 0);
	f = open_dev();
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_NVP2P, &p), 0);
	assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, p.handle, 0, 0, n, 5, 0), 0);
	wait_hung();
	kshim_gpu_free(gpu);
	assert_false(kshim_pci_master(fx.card));
	assert_true(kshim_log_has("bus mastering"));
	xm_fault_clear(fx.xm);		/* it would write now: nowhere to go */
	wait_idle(1, 0);
	c = wait_one(f);
	assert_true(c.flags & FPGAD_DMA_COMPLETION_WEDGED);
	assert_model_clean();
	assert_int_equal(reset_chan(f, FPGAD_DMA_C2H, 0), 0);
	assert_true(kshim_pci_master(fx.card));
	hh = pin_host(f, host, n);
	fill(host, n, 8);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, hh, 0, 0, n, 0), 0);
	assert_memory_equal(xm_card(fx.xm), host, n);
	close_dev(f);
	free(mem);
	free(host);
}

/* --- robustness -------------------------------------------------------------------------- */

/* Link down mid-transfer: all-ones reads mean gone, the pin stays held. */
static void test_link_down(void **state)
{
	const size_t n = 64 * PAGE_SIZE;
	struct fpgad_dma_completion c;
	struct kshim_file *f;
	u8 *buf = buf_new(n);
	int fd;
	u64 h;

	(void)state;
	fx.cfg.xm.bytes_per_ms = 1000;
	plug();
	fd = kshim_dmabuf_new(buf, n);
	f = open_dev();
	h = pin_dmabuf(f, fd);
	assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, h, 0, 0, n, 5, 100), 0);
	wait_busy(1, 0);
	xm_link(fx.xm, false);
	c = wait_one(f);
	assert_int_equal(c.status, -ENODEV);
	assert_true(c.flags & FPGAD_DMA_COMPLETION_WEDGED);
	/* A shared line's interrupt is not ours while the card reads all ones. */
	assert_int_equal(kshim_irq_fire(fx.card, 0), 0);
	/* The link comes back and the engine finishes its list into the held pin. */
	xm_link(fx.xm, true);
	wait_idle(1, 0);
	assert_model_clean();
	assert_int_equal(reset_chan(f, FPGAD_DMA_C2H, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 0, 0, PAGE_SIZE, 0), 0);
	close_dev(f);
	kshim_dmabuf_put(fd);
	free(buf);
}

static void flip_poll_mode(void *arg)
{
	bool *done = arg;

	if (!*done)
		assert_int_equal(kshim_param_set("poll_mode", "1"), 0);
	*done = true;
}

/*
 * Poll mode after interrupt-mode lists, one of them ending without its
 * interrupt (lost, or a list that ended on a timeout): the engine's
 * interrupt stays disabled in the IRQ block, so no message and no handler
 * call comes in poll mode, whatever the engine's status bits do.
 */
static void test_poll_mode_after_interrupts(void **state)
{
	struct kshim_irq_stats before, after;
	struct kshim_file *f;
	struct xm_stats st0, st;
	u8 *buf = buf_new(16 * KIB);
	u64 h;

	(void)state;
	fx.cfg.xm.n_c2h = 1;
	plug();
	f = open_dev();
	h = pin_host(f, buf, 16 * KIB);
	fill(buf, 8 * KIB, 31);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 8 * KIB, 0), 0);
	xm_lose_irqs(fx.xm, 2);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 8 * KIB, 100), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 8 * KIB, 0, 8 * KIB, 100), 0);
	xm_get_stats(fx.xm, &st0);
	assert_int_equal(st0.irq_lost, 2);

	assert_int_equal(kshim_param_set("poll_mode", "1"), 0);
	kshim_irq_stats(&before);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 8 * KIB, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 8 * KIB, 0, 8 * KIB, 0), 0);
	assert_memory_equal(buf + 8 * KIB, buf, 8 * KIB);
	usleep(20000);		/* a late message would have come by now */
	xm_get_stats(fx.xm, &st);
	kshim_irq_stats(&after);
	assert_true(st.writebacks > st0.writebacks);
	if (st.irq_messages != st0.irq_messages || after.handled != before.handled ||
	    after.unhandled != before.unhandled)
		fail_msg("poll mode: %llu interrupt messages, %llu handler calls",
			 (unsigned long long)(st.irq_messages - st0.irq_messages),
			 (unsigned long long)(after.handled + after.unhandled -
					      before.handled - before.unhandled));
	close_dev(f);
	free(buf);
}

/* poll_mode changes while a list starts: the list finishes the way it began. */
static void test_poll_mode_switch(void **state)
{
	struct kshim_file *f;
	u8 *buf = buf_new(8 * KIB);
	bool flipped = false;
	u64 h;

	(void)state;
	plug();
	f = open_dev();
	h = pin_host(f, buf, 8 * KIB);
	xm_on_run(fx.xm, flip_poll_mode, &flipped);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 8 * KIB, 200), 0);
	assert_true(flipped);
	xm_on_run(fx.xm, NULL, NULL);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 8 * KIB, 200), 0);
	close_dev(f);
	free(buf);
}

/* The CPU writes another part of the pin while a transfer runs. */
struct cpu_write {
	u8 *at;
	size_t n;
	unsigned int seed;
};

static void cpu_writes(void *arg)
{
	struct cpu_write *w = arg;

	if (w->at)
		fill(w->at, w->n, w->seed);
	w->at = NULL;
}

/*
 * Behind bounce buffers (swiotlb=force, SEV/TDX, a 32-bit mask) each
 * transfer syncs its own range, in its own direction: the card reads what
 * the CPU wrote before H2C, the CPU reads what the card wrote in C2H, and
 * what the CPU writes meanwhile to other parts of the pin (the other half
 * of a ring) is not overwritten by stale bounce data.  Without bounce
 * buffers nothing is synced at all.
 */
static void test_bounce_sync(void **state)
{
	const size_t n = 16 * KIB;
	struct cpu_write w;
	struct kshim_file *f;
	u8 *buf = buf_new(4 * n), *want = buf_new(n);
	u64 h, syncs;

	(void)state;
	plug();
	f = open_dev();
	kshim_dma_bounce(true);
	h = pin_host(f, buf, 4 * n);

	/* H2C of [0, n) while the CPU writes [2n, 3n). */
	fill(buf, n, 21);
	w = (struct cpu_write){ buf + 2 * n, n, 22 };
	xm_on_run(fx.xm, cpu_writes, &w);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	assert_null(w.at);
	assert_memory_equal(xm_card(fx.xm), buf, n);
	fill(want, n, 22);
	if (memcmp(buf + 2 * n, want, n))
		fail_msg("H2C: the CPU's writes elsewhere in the pin were overwritten");

	/* C2H of card [0, n) into [n, 2n) while the CPU writes [3n, 4n). */
	w = (struct cpu_write){ buf + 3 * n, n, 23 };
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, n, 0, n, 0), 0);
	assert_null(w.at);
	fill(want, n, 21);
	if (memcmp(buf + n, want, n))
		fail_msg("C2H: the card's data did not reach the CPU");
	fill(want, n, 23);
	if (memcmp(buf + 3 * n, want, n))
		fail_msg("C2H: the CPU's writes elsewhere in the pin were overwritten");
	fill(want, n, 22);
	assert_memory_equal(buf + 2 * n, want, n);
	xm_on_run(fx.xm, NULL, NULL);
	close_dev(f);

	/* A mapping that needs no sync: none is made. */
	kshim_dma_bounce(false);
	f = open_dev();
	h = pin_host(f, buf, 4 * n);
	syncs = kshim_dma_syncs();
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, n, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, n, 0, n, 0), 0);
	assert_int_equal(kshim_dma_syncs(), syncs);
	close_dev(f);
	free(buf);
	free(want);
}

/*
 * A previous driver left an engine running, writing to that driver's
 * buffers: probe stops it before it turns bus mastering on, so none of its
 * writes leaves the card (each would be DMA to a stale address).
 */
static void test_leftover_engine(void **state)
{
	struct kshim_file *f;
	struct xm_stats st;
	u8 *buf = buf_new(8 * KIB);
	u64 h;

	(void)state;
	fx.cfg.xm.left_running = true;
	plug();
	assert_int_equal(kshim_pci_probe_result(fx.card), 0);
	assert_false(xm_busy(fx.xm, 0, 0));
	assert_true(kshim_pci_master(fx.card));
	xm_get_stats(fx.xm, &st);
	assert_true(st.leftover_writes > 0);
	if (kshim_dma_violations())
		fail_msg("the leftover engine wrote to host memory: %s",
			 kshim_dma_last_violation());
	f = open_dev();
	h = pin_host(f, buf, 8 * KIB);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0, 8 * KIB, 0), 0);
	close_dev(f);
	free(buf);
}

/* Alignment is each channel's: a C2H-only card reports its C2H engine's. */
static void test_align_per_channel(void **state)
{
	struct fpgad_dma_info in;
	struct kshim_file *f;

	(void)state;
	fx.cfg.xm.n_h2c = 0;
	fx.cfg.xm.n_c2h = 2;
	fx.cfg.xm.align[1] = 0x00400140;	/* 64-byte addresses */
	plug();
	f = open_dev();
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_INFO, &in), 0);
	assert_int_equal(in.h2c_channels, 0);
	assert_int_equal(in.align, 64);
	close_dev(f);
}

/* SUBMIT refuses addresses off the engine's alignment, card or host side. */
static void test_align_enforced(void **state)
{
	const size_t n = 16 * KIB;
	struct kshim_file *f;
	u8 *buf = buf_new(n + 64);
	u64 h, odd;

	(void)state;
	fx.cfg.xm.align[0] = fx.cfg.xm.align[1] = 0x00400140;
	plug();
	f = open_dev();
	h = pin_host(f, buf, n);
	odd = pin_host(f, buf + 1, n);		/* byte 0 one past 64 */
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, h, 0, 0x40, 4 * KIB, 0), 0);
	assert_int_equal(xfer(f, FPGAD_DMA_C2H, 0, h, 64, 0x80, 100, 0), 0);
	assert_int_equal(submit(f, FPGAD_DMA_H2C, 0, h, 0, 0x41, 64, 1, 0), -EINVAL);
	assert_int_equal(submit(f, FPGAD_DMA_C2H, 0, h, 8, 0x40, 64, 2, 0), -EINVAL);
	assert_int_equal(submit(f, FPGAD_DMA_H2C, 0, odd, 0, 0x40, 64, 3, 0), -EINVAL);
	assert_int_equal(xfer(f, FPGAD_DMA_H2C, 0, odd, 63, 0x40, 64, 0), 0);
	close_dev(f);
	free(buf);
}

/*
 * Host pins are the caller's locked memory: charged to RLIMIT_MEMLOCK and
 * refused beyond it, given back when the pin goes.
 */
static void test_pin_memlock(void **state)
{
	const size_t n = 16 * PAGE_SIZE;
	struct fpgad_dma_pin_host p = { 0 };
	struct fpgad_dma_unpin u;
	struct kshim_file *f;
	u8 *buf = buf_new(2 * n);
	u64 h;

	(void)state;
	plug();
	f = open_dev();
	kshim_set_admin(false);
	kshim_set_memlock(n + 8 * PAGE_SIZE);
	h = pin_host(f, buf, n);
	assert_int_equal(kshim_locked_vm(), 16);
	p.addr = (uintptr_t)(buf + n);
	p.length = n;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_HOST, &p), -ENOMEM);
	assert_int_equal(kshim_locked_vm(), 16);
	u.handle = h;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_UNPIN, &u), 0);
	assert_int_equal(kshim_locked_vm(), 0);
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_PIN_HOST, &p), 0);
	assert_int_equal(kshim_locked_vm(), 16);
	close_dev(f);
	assert_int_equal(kshim_locked_vm(), 0);
	/* CAP_IPC_LOCK is not bound by it. */
	kshim_set_admin(true);
	f = open_dev();
	pin_host(f, buf, 2 * n);
	close_dev(f);
	kshim_set_memlock(ULONG_MAX);
	free(buf);
}

/* User interrupts a previous driver left enabled are masked at probe. */
static void test_user_irqs_masked(void **state)
{
	(void)state;
	fx.cfg.xm.user_irq_en = 0xffff;
	plug();
	assert_int_equal(xm_mmio_read(fx.xm, 0x2004), 0);
}

/* --- the PCI path to a peer (P2P_PATH) ----------------------------------------------- */

static int p2p_path(struct kshim_file *f, const struct pci_dev *peer,
		    struct fpgad_dma_p2p_path *p)
{
	memset(p, 0xee, sizeof(*p));
	p->peer_domain = (u32)peer->bus->domain;
	p->peer_bus = peer->bus->number;
	p->peer_devfn = (u8)peer->devfn;
	p->reserved0 = 0;
	p->reserved1 = 0;
	return (int)kshim_ioctl(f, FPGAD_DMA_IOC_P2P_PATH, p);
}

static void assert_hop(const struct fpgad_dma_p2p_hop *h, const struct pci_dev *br,
		       u8 type, u8 flags)
{
	assert_int_equal(h->domain, (u32)br->bus->domain);
	assert_int_equal(h->bus, br->bus->number);
	assert_int_equal(h->devfn, br->devfn);
	assert_int_equal(h->type, type);
	assert_int_equal(h->flags, flags);
	assert_int_equal(h->reserved, 0);
}

/*
 * Root port -> switch upstream port -> two downstream ports, the card under
 * one, the peer under the other: up to the upstream port, then down.
 */
static void test_p2p_same_switch(void **state)
{
	const u16 acs = PCI_ACS_SV | PCI_ACS_RR | PCI_ACS_CR | PCI_ACS_UF;
	struct pci_dev *rp, *us, *ds1, *ds2, *gpu;
	struct fpgad_dma_p2p_path p;
	struct kshim_file *f;

	(void)state;
	plug();
	rp = kshim_bridge_add(NULL, 0, PCI_DEVFN(2, 0), PCI_EXP_TYPE_ROOT_PORT, acs, 0);
	us = kshim_bridge_add(rp, 0, 0, PCI_EXP_TYPE_UPSTREAM, 0, 0);
	ds1 = kshim_bridge_add(us, 0, PCI_DEVFN(0, 0), PCI_EXP_TYPE_DOWNSTREAM, acs, 0);
	ds2 = kshim_bridge_add(us, 0, PCI_DEVFN(1, 0), PCI_EXP_TYPE_DOWNSTREAM, acs, 0);
	gpu = kshim_endpoint_add(ds2, 0, 0);
	kshim_pci_set_parent(fx.card, ds1);
	kshim_set_p2pdma_distance(4);
	f = open_dev();

	assert_int_equal(p2p_path(f, gpu, &p), 0);
	assert_int_equal(p.n_hops, 3);
	assert_hop(&p.hops[0], ds1, FPGAD_P2P_HOP_DOWNSTREAM, FPGAD_P2P_HOP_ACS);
	assert_hop(&p.hops[1], us, FPGAD_P2P_HOP_UPSTREAM, FPGAD_P2P_HOP_COMMON);
	assert_hop(&p.hops[2], ds2, FPGAD_P2P_HOP_DOWNSTREAM, FPGAD_P2P_HOP_ACS);
	assert_int_equal(p.hops[0].acs_cap, acs);
	assert_int_equal(p.hops[0].acs_ctrl, 0);
	assert_int_equal(p.distance, 4);
	assert_int_equal(p.verdict, FPGAD_P2P_SUPPORTED);
	assert_int_equal(p.reserved1, 0);

	/* Request redirect on the peer's downstream port: the kernel's "no". */
	kshim_set_acs(ds2, acs, PCI_ACS_RR | PCI_ACS_CR);
	kshim_set_p2pdma_distance(-1);
	assert_int_equal(p2p_path(f, gpu, &p), 0);
	assert_int_equal(p.hops[2].flags, FPGAD_P2P_HOP_ACS | FPGAD_P2P_HOP_REDIRECT);
	assert_int_equal(p.hops[2].acs_ctrl, PCI_ACS_RR | PCI_ACS_CR);
	assert_int_equal(p.distance, -1);
	assert_int_equal(p.verdict, FPGAD_P2P_ACS_REDIRECT);
	/* Without CAP_SYS_ADMIN: the verdict and the flags, no raw registers. */
	kshim_set_admin(false);
	assert_int_equal(p2p_path(f, gpu, &p), 0);
	kshim_set_admin(true);
	assert_int_equal(p.verdict, FPGAD_P2P_ACS_REDIRECT);
	assert_int_equal(p.hops[2].flags, FPGAD_P2P_HOP_ACS | FPGAD_P2P_HOP_REDIRECT);
	assert_int_equal(p.hops[0].acs_cap, 0);
	assert_int_equal(p.hops[2].acs_cap, 0);
	assert_int_equal(p.hops[2].acs_ctrl, 0);
	/* Source validation alone redirects nothing. */
	kshim_set_acs(ds2, acs, PCI_ACS_SV);
	assert_int_equal(p2p_path(f, gpu, &p), 0);
	assert_int_equal(p.verdict & FPGAD_P2P_ACS_REDIRECT, 0);
	close_dev(f);
}

/* Card and peer on different root ports: through the root complex. */
static void test_p2p_host_bridge(void **state)
{
	struct pci_dev *rp1, *rp2, *gpu, *gpu1, *rp_other;
	struct fpgad_dma_p2p_path p;
	struct kshim_file *f;

	(void)state;
	plug();
	rp1 = kshim_bridge_add(NULL, 0, PCI_DEVFN(2, 0), PCI_EXP_TYPE_ROOT_PORT, 0, 0);
	rp2 = kshim_bridge_add(NULL, 0, PCI_DEVFN(3, 0), PCI_EXP_TYPE_ROOT_PORT, 0, 0);
	gpu = kshim_endpoint_add(rp2, 0, 0);
	kshim_pci_set_parent(fx.card, rp1);
	f = open_dev();

	assert_int_equal(p2p_path(f, gpu, &p), 0);
	assert_int_equal(p.n_hops, 3);
	assert_hop(&p.hops[0], rp1, FPGAD_P2P_HOP_ROOT_PORT, 0);
	assert_int_equal(p.hops[1].type, FPGAD_P2P_HOP_HOST_BRIDGE);
	assert_int_equal(p.hops[1].domain, 0);
	assert_int_equal(p.hops[1].bus, 0);
	assert_hop(&p.hops[2], rp2, FPGAD_P2P_HOP_ROOT_PORT, 0);
	assert_int_equal(p.distance, -1);
	assert_int_equal(p.verdict, FPGAD_P2P_VIA_HOST_BRIDGE);
	/* A host bridge the kernel allows. */
	kshim_set_p2pdma_distance(6);
	assert_int_equal(p2p_path(f, gpu, &p), 0);
	assert_int_equal(p.verdict, FPGAD_P2P_VIA_HOST_BRIDGE |
			 FPGAD_P2P_SUPPORTED | FPGAD_P2P_HOST_BRIDGE_OK);

	/* Another PCI domain: two host bridges. */
	rp_other = kshim_bridge_add(NULL, 1, PCI_DEVFN(1, 0), PCI_EXP_TYPE_ROOT_PORT, 0, 0);
	gpu1 = kshim_endpoint_add(rp_other, 1, 0);
	kshim_set_p2pdma_distance(-1);
	assert_int_equal(p2p_path(f, gpu1, &p), 0);
	assert_int_equal(p.n_hops, 4);
	assert_int_equal(p.hops[1].type, FPGAD_P2P_HOP_HOST_BRIDGE);
	assert_int_equal(p.hops[2].type, FPGAD_P2P_HOP_HOST_BRIDGE);
	assert_int_equal(p.hops[2].domain, 1);
	assert_hop(&p.hops[3], rp_other, FPGAD_P2P_HOP_ROOT_PORT, 0);
	assert_int_equal(p.verdict, FPGAD_P2P_VIA_HOST_BRIDGE | FPGAD_P2P_OTHER_DOMAIN);
	close_dev(f);
}

static void test_p2p_errors(void **state)
{
	struct pci_dev *br, *gpu, *top;
	struct fpgad_dma_p2p_path p;
	struct kshim_file *f;
	unsigned int i;

	(void)state;
	plug();
	f = open_dev();
	/* Nothing at that address. */
	memset(&p, 0, sizeof(p));
	p.peer_bus = 0x77;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_P2P_PATH, &p), -ENODEV);
	/* The card itself. */
	assert_int_equal(p2p_path(f, kshim_pci_dev(fx.card), &p), -EINVAL);
	/* Reserved fields. */
	top = kshim_bridge_add(NULL, 0, PCI_DEVFN(4, 0), PCI_EXP_TYPE_ROOT_PORT, 0, 0);
	gpu = kshim_endpoint_add(top, 0, 0);
	memset(&p, 0, sizeof(p));
	p.peer_bus = gpu->bus->number;
	p.reserved0 = 1;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_P2P_PATH, &p), -EINVAL);
	p.reserved0 = 0;
	p.reserved1 = 1;
	assert_int_equal(kshim_ioctl(f, FPGAD_DMA_IOC_P2P_PATH, &p), -EINVAL);
	/* 20 bridges deep: E2BIG says how many hops it would take. */
	br = top;
	for (i = 0; i < 19; i++)
		br = kshim_bridge_add(br, 0, 0, PCI_EXP_TYPE_PCI_BRIDGE, 0, 0);
	gpu = kshim_endpoint_add(br, 0, 0);
	assert_int_equal(p2p_path(f, gpu, &p), -E2BIG);
	assert_int_equal(p.n_hops, 1 + 20);
	assert_int_equal(p.hops[0].domain, 0xeeeeeeee);	/* nothing else written */
	assert_int_equal((u32)p.distance, 0xeeeeeeee);
	close_dev(f);
}

/* An argument runs only the tests whose names match it (a * pattern). */
int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_probe_info, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_irq_roundtrip, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_multi_list, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_poll_mode, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_timeout_recovers, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_register_dump, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_c2h_read_error, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_magic_error, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_lost_interrupt, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_reset_cancels, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_close_busy, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_nvp2p_pin, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_remove_open, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_desc_cap, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_wedge_slave_recovers, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_wedge_function_reset, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_wedge_no_reset, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_stream_refused, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_h2c_write_error, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_poll_mode_errors, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_error_bits_everywhere, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_intx_pin, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_intx_no_spurious, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_timeout_scales, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_nvp2p_revoke, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_nvp2p_release_races_callback, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_nvp2p_callback_during_pin, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_dmabuf_move_notify, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_revoke_hung, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_link_down, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_poll_mode_switch, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_poll_mode_after_interrupts, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_leftover_engine, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_bounce_sync, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_align_per_channel, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_align_enforced, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_user_irqs_masked, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_pin_memlock, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_p2p_same_switch, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_p2p_host_bridge, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_p2p_errors, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_abi_versions, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_lock_order_nvp2p_put_pages, set_up, tear_down),
		cmocka_unit_test_setup_teardown(test_lock_order_resv_hw_lock, set_up, tear_down),
		cmocka_unit_test(test_lock_checker),
	};

	if (argc > 1)
		cmocka_set_test_filter(argv[1]);
	return cmocka_run_group_tests_name("xdma_model", tests, NULL, NULL);
}
