// SPDX-License-Identifier: MIT
/*
 * xdma_model.c - the XDMA engine model; see xdma_model.h for what it
 * models.
 *
 * Threads: one per channel (the engine) and one for the IRQ block, which
 * also lands posted writes that no read has flushed, every 100 us.  One
 * mutex covers all model state; engines let go of it only to sleep (rate
 * limit) and while they wait on a hung slave or a dead link.
 *
 * Register offsets and bits follow PG195 ("Register Space"); the
 * descriptor layout is kmod/xdma_desc.h's, read here independently.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xdma_model.h"

/* Targets: bits [19:16] of an identifier. */
#define ID_BASE			0x1fc00006u
#define ID_H2C			0
#define ID_C2H			1
#define ID_IRQ			2
#define ID_CONFIG		3
#define ID_H2C_SG		4
#define ID_C2H_SG		5
#define ID_STREAM		(1u << 15)

/* Channel registers. */
#define R_ID			0x00
#define R_CONTROL		0x04
#define R_CONTROL_W1S		0x08
#define R_CONTROL_W1C		0x0c
#define R_STATUS		0x40
#define R_STATUS_RC		0x44
#define R_COMPLETED		0x48
#define R_ALIGN			0x4c
#define R_WB_LO			0x88
#define R_WB_HI			0x8c
#define R_INT_MASK		0x90
#define R_INT_MASK_W1S		0x94
#define R_INT_MASK_W1C		0x98

/* SGDMA registers. */
#define R_SG_DESC_LO		0x80
#define R_SG_DESC_HI		0x84
#define R_SG_DESC_ADJ		0x88
#define R_SG_CREDITS		0x8c

/* IRQ block registers. */
#define R_IRQ_USER_EN		0x04
#define R_IRQ_CHAN_EN		0x10
#define R_IRQ_CHAN_EN_W1S	0x14
#define R_IRQ_CHAN_EN_W1C	0x18
#define R_IRQ_USER_REQ		0x40
#define R_IRQ_CHAN_REQ		0x44
#define R_IRQ_USER_PEND		0x48
#define R_IRQ_CHAN_PEND		0x4c
#define R_IRQ_CHAN_VEC0		0xa0
#define R_IRQ_CHAN_VEC1		0xa4

/* Control and status bits (the same positions in both). */
#define C_RUN			(1u << 0)
#define S_BUSY			(1u << 0)
#define S_DESC_STOPPED		(1u << 1)
#define S_DESC_COMPLETED	(1u << 2)
#define S_ALIGN			(1u << 3)
#define S_MAGIC			(1u << 4)
#define S_INVALID_LEN		(1u << 5)
#define S_IDLE_STOPPED		(1u << 6)
#define S_READ_ERR(n)		(1u << (9 + (n)))	/* H2C: PCIe; C2H: AXI */
#define S_WRITE_ERR(n)		(1u << (14 + (n)))	/* H2C: AXI */
#define S_DESC_ERR(n)		(1u << (19 + (n)))
#define ERR_UR			0	/* unsupported request */
#define ERR_DECODE		0	/* AXI: DECERR is the first bit */
#define ERR_SLAVE		1	/* AXI: SLVERR the second */
#define S_LOGGED		0x00fffe7eu	/* bits [23:9] and [6:1] */
#define C_IE_COMPLETED		(1u << 2)
#define C_POLL_WB		(1u << 26)

/* Descriptor. */
#define D_MAGIC			0xad4bu
#define D_STOP			(1u << 0)
#define D_COMPLETED		(1u << 1)
#define D_SIZE			32u
#define D_FETCH_BLOCK		4096u
#define D_LEN_MASK		0x0fffffffu

#define CHUNK			4096u
#define LEFTOVER_TAIL_MS	50
#define LEFTOVER_STALE_BUS	0x1000ull	/* a previous driver's buffer */
#define MAX_FAULTS		8
#define INTX_STORM		100

struct xm_write {
	uint32_t off, val;
};

struct xm_fault {
	unsigned int dir;
	uint64_t lo, hi;
	enum xm_fault_kind kind;
};

struct xm_chan {
	struct xm *m;
	unsigned int dir, n, engine;	/* engine: bit in the IRQ block */
	bool present;
	pthread_t thread;
	/* registers */
	uint32_t control, status, completed, align, int_mask;
	uint32_t wb_lo, wb_hi, desc_lo, desc_hi, desc_adj;
	/* engine state */
	bool start;			/* a Run rising edge to act on */
	bool busy;
	bool leftover;			/* running a previous driver's list */
	bool hung;
	unsigned int list_index;	/* descriptors started in this list */
	uint64_t list_t0;		/* when it started, us */
	uint64_t list_bytes;		/* bytes it moved */
	int bad_magic;			/* index with a bad magic, or -1 */
	int err_index;			/* xm_error_at(): descriptor, or -1 */
	uint32_t err_bits;
	bool err_after;
};

struct xm {
	struct xm_config cfg;
	struct xm_callbacks cb;
	pthread_mutex_t lock;
	pthread_cond_t cond;		/* engines: work, release, reset */
	pthread_cond_t irq_cond;	/* IRQ thread: something to do */
	pthread_t irq_thread;
	bool quit;
	uint8_t *card;
	struct xm_chan ch[2][XM_MAX_CHANNELS];
	unsigned int nengines;
	/* IRQ block */
	uint32_t chan_en, user_en, vec[2];
	uint32_t sent;			/* MSI: requests already messaged */
	enum xm_irq_mode irq_mode;
	unsigned int lose_irqs;
	/* posted writes */
	struct xm_write *fifo;
	size_t fifo_len, fifo_cap;
	/* faults and state */
	struct xm_fault faults[MAX_FAULTS];
	unsigned int nfaults;
	bool link_down;
	bool no_err_writeback;		/* an error stops the engine silently */
	unsigned long reset_gen;
	void (*on_run)(void *arg);
	void *on_run_arg;
	struct xm_stats st;
};

static void xm_violation(struct xm *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void xm_violation(struct xm *m, const char *fmt, ...)
{
	va_list ap;

	m->st.violations++;
	va_start(ap, fmt);
	vsnprintf(m->st.last_violation, sizeof(m->st.last_violation), fmt, ap);
	va_end(ap);
	if (getenv("XM_VERBOSE"))
		fprintf(stderr, "xdma model: violation: %s\n",
			m->st.last_violation);
}

static void xm_deadline(struct timespec *ts, long us)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += us * 1000;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* --- the IRQ block ------------------------------------------------------------- */

static uint32_t xm_chan_pending(const struct xm_chan *c)
{
	return c->status & c->int_mask & S_LOGGED;
}

static uint32_t xm_pend(const struct xm *m)
{
	uint32_t pend = 0;
	unsigned int d, n;

	for (d = 0; d < 2; d++)
		for (n = 0; n < XM_MAX_CHANNELS; n++) {
			const struct xm_chan *c = &m->ch[d][n];

			if (c->present && xm_chan_pending(c))
				pend |= 1u << c->engine;
		}
	return pend;
}

static uint32_t xm_req(const struct xm *m)
{
	return xm_pend(m) & m->chan_en;
}

static unsigned int xm_vec(const struct xm *m, unsigned int engine)
{
	return (m->vec[engine / 4] >> ((engine % 4) * 8)) & 0x1f;
}

/* --- registers -------------------------------------------------------------------- */

static struct xm_chan *xm_chan_at(struct xm *m, uint32_t off, bool sgdma)
{
	uint32_t block = off >> 12, n = (off >> 8) & 0xf;
	unsigned int dir;

	if (sgdma) {
		if (block != 4 && block != 5)
			return NULL;
		dir = block - 4;
	} else {
		if (block != 0 && block != 1)
			return NULL;
		dir = block;
	}
	if (n >= XM_MAX_CHANNELS || !m->ch[dir][n].present)
		return NULL;
	return &m->ch[dir][n];
}

static void xm_set_control(struct xm_chan *c, uint32_t val)
{
	struct xm *m = c->m;
	bool rising = !(c->control & C_RUN) && (val & C_RUN);
	bool falling = (c->control & C_RUN) && !(val & C_RUN);

	c->control = val;
	if (falling && c->start) {
		/* Run cleared before the engine took the list up: idle. */
		c->start = false;
		c->busy = false;
	}
	if (falling)
		pthread_cond_broadcast(&m->cond);
	if (!rising)
		return;
	if (c->busy) {
		xm_violation(m, "%s%u: Run set while the engine is busy",
			     c->dir ? "c2h" : "h2c", c->n);
		return;
	}
	/* Busy from the Run edge on, not from when the engine thread wakes. */
	c->start = true;
	c->busy = true;
	pthread_cond_broadcast(&m->cond);
}

static void xm_busy_write(struct xm_chan *c, const char *what)
{
	if (c->busy)
		xm_violation(c->m, "%s%u: %s written while the engine is busy",
			     c->dir ? "c2h" : "h2c", c->n, what);
}

static void xm_reg_write(struct xm *m, uint32_t off, uint32_t val)
{
	uint32_t block = off >> 12, reg = off & 0xff;
	struct xm_chan *c;

	if (block <= 1) {
		c = xm_chan_at(m, off, false);
		if (!c)
			return;
		switch (reg) {
		case R_CONTROL:
			xm_set_control(c, val);
			break;
		case R_CONTROL_W1S:
			xm_set_control(c, c->control | val);
			break;
		case R_CONTROL_W1C:
			xm_set_control(c, c->control & ~val);
			break;
		case R_WB_LO:
			xm_busy_write(c, "poll write-back address");
			c->wb_lo = val;
			break;
		case R_WB_HI:
			xm_busy_write(c, "poll write-back address");
			c->wb_hi = val;
			break;
		case R_INT_MASK:
			c->int_mask = val;
			break;
		case R_INT_MASK_W1S:
			c->int_mask |= val;
			break;
		case R_INT_MASK_W1C:
			c->int_mask &= ~val;
			break;
		}
	} else if (block == 2) {
		switch (off & 0xfff) {
		case R_IRQ_USER_EN:
			m->user_en = val;
			break;
		case R_IRQ_CHAN_EN:
			m->chan_en = val;
			break;
		case R_IRQ_CHAN_EN_W1S:
			m->chan_en |= val;
			break;
		case R_IRQ_CHAN_EN_W1C:
			m->chan_en &= ~val;
			break;
		case R_IRQ_CHAN_VEC0:
			m->vec[0] = val;
			break;
		case R_IRQ_CHAN_VEC1:
			m->vec[1] = val;
			break;
		}
	} else if (block == 4 || block == 5) {
		c = xm_chan_at(m, off, true);
		if (!c)
			return;
		switch (reg) {
		case R_SG_DESC_LO:
			xm_busy_write(c, "descriptor address");
			c->desc_lo = val;
			break;
		case R_SG_DESC_HI:
			xm_busy_write(c, "descriptor address");
			c->desc_hi = val;
			break;
		case R_SG_DESC_ADJ:
			xm_busy_write(c, "descriptor adjacent count");
			c->desc_adj = val;
			break;
		}
	}
	pthread_cond_broadcast(&m->irq_cond);
}

static uint32_t xm_id(unsigned int target, unsigned int n, bool stream)
{
	return ID_BASE | target << 16 | n << 8 | (stream ? ID_STREAM : 0);
}

static uint32_t xm_reg_read(struct xm *m, uint32_t off)
{
	uint32_t block = off >> 12, reg = off & 0xff, v;
	struct xm_chan *c;

	if (block <= 1) {
		c = xm_chan_at(m, off, false);
		if (!c)
			return 0;
		switch (reg) {
		case R_ID:
			return xm_id(c->dir ? ID_C2H : ID_H2C, c->n,
				     m->cfg.stream);
		case R_CONTROL:
			return c->control;
		case R_STATUS:
			return c->status | (c->busy ? S_BUSY : 0);
		case R_STATUS_RC:
			v = c->status | (c->busy ? S_BUSY : 0);
			c->status = 0;
			return v;
		case R_COMPLETED:
			return c->completed;
		case R_ALIGN:
			return c->align;
		case R_WB_LO:
			return c->wb_lo;
		case R_WB_HI:
			return c->wb_hi;
		case R_INT_MASK:
			return c->int_mask;
		}
		return 0;
	}
	if (block == 2) {
		switch (off & 0xfff) {
		case 0:
			return xm_id(ID_IRQ, 0, false);
		case R_IRQ_USER_EN:
			return m->user_en;
		case R_IRQ_CHAN_EN:
			return m->chan_en;
		case R_IRQ_USER_REQ:
		case R_IRQ_USER_PEND:
			return 0;
		case R_IRQ_CHAN_REQ:
			return xm_req(m);
		case R_IRQ_CHAN_PEND:
			return xm_pend(m);
		case R_IRQ_CHAN_VEC0:
			return m->vec[0];
		case R_IRQ_CHAN_VEC1:
			return m->vec[1];
		}
		return 0;
	}
	if (block == 3)
		return (off & 0xfff) ? 0 : xm_id(ID_CONFIG, 0, false);
	if (block == 4 || block == 5) {
		c = xm_chan_at(m, off, true);
		if (!c)
			return 0;
		switch (reg) {
		case R_ID:
			return xm_id(c->dir ? ID_C2H_SG : ID_H2C_SG, c->n,
				     false);
		case R_SG_DESC_LO:
			return c->desc_lo;
		case R_SG_DESC_HI:
			return c->desc_hi;
		case R_SG_DESC_ADJ:
			return c->desc_adj;
		}
	}
	return 0;
}

/* Land every posted write, in order.  Lock held. */
static void xm_drain(struct xm *m)
{
	size_t i;

	for (i = 0; i < m->fifo_len; i++)
		xm_reg_write(m, m->fifo[i].off, m->fifo[i].val);
	m->fifo_len = 0;
}

uint32_t xm_mmio_read(struct xm *m, uint32_t off)
{
	uint32_t v;

	pthread_mutex_lock(&m->lock);
	if (m->link_down || off >= XM_BAR_SIZE || (off & 3)) {
		pthread_mutex_unlock(&m->lock);
		return 0xffffffffu;
	}
	xm_drain(m);		/* a read does not pass posted writes */
	v = xm_reg_read(m, off);
	pthread_mutex_unlock(&m->lock);
	return v;
}

void xm_mmio_write(struct xm *m, uint32_t off, uint32_t val)
{
	void (*hook)(void *) = NULL;
	void *arg = NULL;
	uint32_t reg = off & 0xff;

	pthread_mutex_lock(&m->lock);
	if (!m->link_down && off < XM_BAR_SIZE && !(off & 3)) {
		if (m->fifo_len == m->fifo_cap) {
			size_t cap = m->fifo_cap ? 2 * m->fifo_cap : 64;
			struct xm_write *f = realloc(m->fifo, cap * sizeof(*f));

			if (!f)
				abort();
			m->fifo = f;
			m->fifo_cap = cap;
		}
		m->fifo[m->fifo_len].off = off;
		m->fifo[m->fifo_len].val = val;
		m->fifo_len++;
		pthread_cond_broadcast(&m->irq_cond);
		if ((off >> 12) <= 1 && (val & C_RUN) &&
		    (reg == R_CONTROL || reg == R_CONTROL_W1S)) {
			hook = m->on_run;
			arg = m->on_run_arg;
		}
	}
	pthread_mutex_unlock(&m->lock);
	if (hook)
		hook(arg);
}

/* --- the engines -------------------------------------------------------------------- */

enum xm_step {
	STEP_OK,
	STEP_ERROR,		/* an enabled error stopped the engine */
	STEP_ABORT,		/* reset or quit: stop at once, no more DMA */
};

static bool xm_aborted(const struct xm *m, unsigned long gen)
{
	return m->quit || m->reset_gen != gen;
}

static void xm_writeback(struct xm_chan *c, bool err);

/*
 * Log @bits if enabled; true when that stops the engine, which then writes
 * its count back with Sts_err set (in poll mode).
 */
static bool xm_error(struct xm_chan *c, uint32_t bits)
{
	struct xm *m = c->m;

	if (!(c->control & bits)) {
		m->st.errors_ignored++;
		return false;
	}
	c->status |= bits & c->control;
	m->st.errors_logged++;
	if (!m->no_err_writeback)
		xm_writeback(c, true);
	return true;
}

static int xm_host(struct xm *m, uint64_t bus, void *buf, size_t len,
		   bool to_host)
{
	return m->cb.dma(m->cb.ctx, bus, buf, len, to_host);
}

static const struct xm_fault *xm_fault_at(const struct xm *m, unsigned int dir,
					  uint64_t lo, uint64_t hi)
{
	unsigned int i;

	for (i = 0; i < m->nfaults; i++) {
		const struct xm_fault *f = &m->faults[i];

		if (f->dir == dir && lo < f->hi && f->lo < hi)
			return f;
	}
	return NULL;
}

/* Sleep @us with the lock let go. */
static void xm_nap(struct xm *m, uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	pthread_mutex_unlock(&m->lock);
	nanosleep(&ts, NULL);
	pthread_mutex_lock(&m->lock);
}

/* Wait while the link is down or a hung slave holds the engine. */
static bool xm_stall(struct xm_chan *c, unsigned long gen, uint64_t lo,
		     uint64_t hi)
{
	struct xm *m = c->m;

	for (;;) {
		const struct xm_fault *f = xm_fault_at(m, c->dir, lo, hi);

		if (xm_aborted(m, gen))
			return false;
		if (!m->link_down && !(f && f->kind == XM_FAULT_HANG))
			return true;
		c->hung = f && f->kind == XM_FAULT_HANG;
		pthread_cond_wait(&m->cond, &m->lock);
		c->hung = false;
	}
}

static uint64_t xm_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/*
 * Keep to cfg.bytes_per_ms: sleep when more than 1 ms ahead of the
 * schedule that started with the list (short sleeps would overshoot).
 */
static void xm_pace(struct xm_chan *c)
{
	struct xm *m = c->m;
	uint64_t due, now;

	if (!m->cfg.bytes_per_ms)
		return;
	due = c->list_t0 + c->list_bytes * 1000u / m->cfg.bytes_per_ms;
	now = xm_now_us();
	if (due > now + 1000)
		xm_nap(m, due - now);
}

/* Move one descriptor's bytes. */
static enum xm_step xm_move(struct xm_chan *c, unsigned long gen, uint64_t src,
			    uint64_t dst, uint32_t len)
{
	struct xm *m = c->m;
	bool c2h = c->dir == 1;
	uint64_t card = c2h ? src : dst, host = c2h ? dst : src;
	uint8_t buf[CHUNK];
	uint32_t done = 0;

	while (done < len) {
		uint32_t n = len - done < CHUNK ? len - done : CHUNK;
		uint64_t lo = card + done, hi = lo + n;
		const struct xm_fault *f;
		uint32_t axi_err = 0;

		if (!xm_stall(c, gen, lo, hi))
			return STEP_ABORT;
		f = xm_fault_at(m, c->dir, lo, hi);
		if (hi > m->cfg.card_size || (f && f->kind == XM_FAULT_DECODE))
			axi_err = ERR_DECODE + 1;
		else if (f && f->kind == XM_FAULT_SLAVE)
			axi_err = ERR_SLAVE + 1;

		if (c2h) {
			if (axi_err) {
				if (xm_error(c, S_READ_ERR(axi_err - 1)))
					return STEP_ERROR;
				memset(buf, 0, n);
			} else {
				memcpy(buf, m->card + lo, n);
			}
			/* Posted writes: a failure is not seen by the engine. */
			xm_host(m, host + done, buf, n, true);
		} else {
			if (xm_host(m, host + done, buf, n, false)) {
				if (xm_error(c, S_READ_ERR(ERR_UR)))
					return STEP_ERROR;
			} else if (axi_err) {
				if (xm_error(c, S_WRITE_ERR(axi_err - 1)))
					return STEP_ERROR;
			} else {
				memcpy(m->card + lo, buf, n);
			}
		}
		done += n;
		m->st.bytes += n;
		c->list_bytes += n;
		xm_pace(c);
		if (xm_aborted(m, gen))
			return STEP_ABORT;
	}
	return STEP_OK;
}

/*
 * PG195, "Poll Mode": "the completed descriptor count writeback occurs when
 * the DMA completes a transfer for a descriptor, and ie_descriptor_completed
 * and Pollmode_wb_enable are set.  The completed descriptor count reported
 * is the total number of completed descriptors since the DMA was initiated
 * (not just those descriptors with the Completed flag set)."  Bit 31 of
 * the word, Sts_err, is set in the write-back an engine makes when an
 * error stops it (what libxdma's WB_ERR_MASK tests); the status register
 * shows which error.
 */
#define WB_STS_ERR		(1u << 31)

static void xm_writeback(struct xm_chan *c, bool err)
{
	struct xm *m = c->m;
	uint64_t bus = (uint64_t)c->wb_hi << 32 | c->wb_lo;
	uint32_t v = htole32((c->completed & 0x00ffffffu) |
			     (err ? WB_STS_ERR : 0));

	if ((c->control & (C_POLL_WB | C_IE_COMPLETED)) !=
	    (C_POLL_WB | C_IE_COMPLETED))
		return;
	xm_host(m, bus, &v, sizeof(v), true);
	m->st.writebacks++;
	if (err)
		m->st.writeback_errors++;
}

struct xm_desc {
	uint32_t control, bytes;
	uint64_t src, dst, next;
};

static struct xm_desc xm_desc_decode(const uint8_t *p)
{
	uint32_t w[8];
	struct xm_desc d;

	memcpy(w, p, sizeof(w));
	d.control = le32toh(w[0]);
	d.bytes = le32toh(w[1]);
	d.src = (uint64_t)le32toh(w[3]) << 32 | le32toh(w[2]);
	d.dst = (uint64_t)le32toh(w[5]) << 32 | le32toh(w[4]);
	d.next = (uint64_t)le32toh(w[7]) << 32 | le32toh(w[6]);
	return d;
}

/*
 * Nxt_adj (PG195, "Descriptors"): the number of descriptors that follow the
 * next one contiguously, which the engine fetches with it in one read.  A
 * count that reaches past the list's Stop descriptor makes the engine
 * fetch, and may make it run, memory that is no descriptor of the list.
 */
static void xm_check_adjacent(struct xm_chan *c, const uint8_t *block,
			      uint32_t adj)
{
	uint32_t k;

	for (k = 0; k < adj; k++) {
		struct xm_desc d = xm_desc_decode(block + k * D_SIZE);

		if (d.control & D_STOP) {
			xm_violation(c->m, "%s%u: Nxt_adj fetches %u descriptors "
				     "past the Stop descriptor", c->dir ?
				     "c2h" : "h2c", c->n, adj - k);
			return;
		}
	}
}

/*
 * xm_error_at(): the error of the descriptor just started (the list_index
 * of which is one past it), before it moves data or, @after, once it is
 * counted complete (a late AXI response: PG195's read and write error bits
 * report them whenever they arrive).  True when it stopped the engine.
 */
static bool xm_injected(struct xm_chan *c, bool after)
{
	if (c->err_index < 0 || c->err_after != after ||
	    (unsigned int)c->err_index + 1 != c->list_index)
		return false;
	c->err_index = -1;
	return xm_error(c, c->err_bits);
}

/* Run the list the SGDMA registers point at until it stops. */
static void xm_run_list(struct xm_chan *c, unsigned long gen)
{
	struct xm *m = c->m;
	uint64_t addr = (uint64_t)c->desc_hi << 32 | c->desc_lo;
	uint32_t adj = c->desc_adj;
	uint8_t block[64 * D_SIZE];

	for (;;) {
		uint32_t k, bytes = (adj + 1) * D_SIZE;
		struct xm_desc d;

		if (addr % D_SIZE || adj > 63 ||
		    addr / D_FETCH_BLOCK != (addr + bytes - 1) / D_FETCH_BLOCK) {
			xm_violation(m, "%s%u: fetch of %u descriptors at %#llx "
				     "crosses 4 KiB or is misaligned",
				     c->dir ? "c2h" : "h2c", c->n, adj + 1,
				     (unsigned long long)addr);
			xm_error(c, S_DESC_ERR(ERR_UR));
			return;
		}
		if (!xm_stall(c, gen, 0, 0))
			return;
		m->st.fetches++;
		if (xm_host(m, addr, block, bytes, false)) {
			xm_error(c, S_DESC_ERR(ERR_UR));
			return;
		}
		xm_check_adjacent(c, block, adj);
		for (k = 0; k <= adj; k++) {
			d = xm_desc_decode(block + k * D_SIZE);
			if ((d.control >> 16) != D_MAGIC ||
			    (int)c->list_index == c->bad_magic) {
				c->list_index++;
				xm_error(c, S_MAGIC);
				return;
			}
			c->list_index++;
			if (!d.bytes || (d.bytes & ~D_LEN_MASK)) {
				xm_error(c, S_INVALID_LEN);
				return;
			}
			if (xm_injected(c, false))
				return;
			switch (xm_move(c, gen, d.src, d.dst, d.bytes)) {
			case STEP_ABORT:
			case STEP_ERROR:
				return;
			case STEP_OK:
				break;
			}
			c->completed++;
			m->st.descriptors++;
			if (xm_injected(c, true))
				return;
			if (d.control & D_COMPLETED)
				c->status |= S_DESC_COMPLETED & c->control;
			xm_writeback(c, false);
			if (d.control & D_STOP) {
				c->status |= S_DESC_STOPPED & c->control;
				return;
			}
			if (!(c->control & C_RUN)) {
				c->status |= S_IDLE_STOPPED & c->control;
				return;
			}
		}
		if (!d.next) {
			xm_violation(m, "%s%u: descriptor without Stop and "
				     "without a next address",
				     c->dir ? "c2h" : "h2c", c->n);
			return;
		}
		addr = d.next;
		adj = (d.control >> 8) & 0x3f;
	}
}

/*
 * A previous driver's list: it writes to that driver's buffers (a bus
 * address nothing maps now) every millisecond until Run is cleared, then
 * finishes the descriptor it is on, with one more write.  Without bus
 * mastering a write never leaves the card (the callback fails it); one
 * that does is DMA to a stale address.
 */
static void xm_leftover_write(struct xm *m)
{
	uint32_t v = 0xdeadbeef;

	m->st.leftover_writes++;
	xm_host(m, LEFTOVER_STALE_BUS, &v, sizeof(v), true);
}

static void xm_run_leftover(struct xm_chan *c, unsigned long gen)
{
	struct xm *m = c->m;
	struct timespec ts;

	while ((c->control & C_RUN) && !xm_aborted(m, gen)) {
		xm_leftover_write(m);
		xm_deadline(&ts, 1000);
		pthread_cond_timedwait(&m->cond, &m->lock, &ts);
	}
	xm_nap(m, LEFTOVER_TAIL_MS * 1000u);
	if (!xm_aborted(m, gen))
		xm_leftover_write(m);
}

static void *xm_engine(void *arg)
{
	struct xm_chan *c = arg;
	struct xm *m = c->m;

	pthread_mutex_lock(&m->lock);
	for (;;) {
		unsigned long gen;

		while (!m->quit && !c->start && !c->leftover)
			pthread_cond_wait(&m->cond, &m->lock);
		if (m->quit)
			break;
		gen = m->reset_gen;
		c->busy = true;
		if (c->leftover) {
			xm_run_leftover(c, gen);
			c->leftover = false;
		} else {
			c->start = false;
			c->completed = 0;
			c->list_index = 0;
			c->list_t0 = xm_now_us();
			c->list_bytes = 0;
			m->st.starts++;
			xm_run_list(c, gen);
			c->bad_magic = -1;
			c->err_index = -1;
		}
		c->busy = false;
		pthread_cond_broadcast(&m->cond);
		pthread_cond_broadcast(&m->irq_cond);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* --- interrupts ------------------------------------------------------------------------ */

static void xm_deliver(struct xm *m, unsigned int vec)
{
	enum xm_irq_mode mode = m->irq_mode;

	pthread_mutex_unlock(&m->lock);
	m->cb.irq(m->cb.ctx, mode, vec);
	pthread_mutex_lock(&m->lock);
}

/* INTx: the lines some request drives, as a mask of INTA..INTD. */
static uint32_t xm_intx_lines(const struct xm *m)
{
	uint32_t req = xm_req(m), lines = 0;
	unsigned int k;

	for (k = 0; k < m->nengines; k++)
		if (req & (1u << k))
			lines |= 1u << (xm_vec(m, k) & 3);
	return lines;
}

static void *xm_irq_thread(void *arg)
{
	struct xm *m = arg;
	struct timespec ts;

	pthread_mutex_lock(&m->lock);
	while (!m->quit) {
		uint32_t req, rise;
		unsigned int k, line, storm;

		xm_deadline(&ts, 100);
		pthread_cond_timedwait(&m->irq_cond, &m->lock, &ts);
		xm_drain(m);
		if (m->link_down || m->irq_mode == XM_IRQ_NONE)
			continue;
		req = xm_req(m);
		if (m->irq_mode != XM_IRQ_INTX) {
			/* Edge: one message when a request rises. */
			rise = req & ~m->sent;
			m->sent = req;
			for (k = 0; k < m->nengines; k++) {
				if (!(rise & (1u << k)))
					continue;
				if (m->lose_irqs) {
					m->lose_irqs--;
					m->st.irq_lost++;
					continue;
				}
				m->st.irq_messages++;
				xm_deliver(m, xm_vec(m, k));
			}
			continue;
		}
		/*
		 * Level: while a line is asserted its handler runs again.  The
		 * state is looked at again at once, without landing posted
		 * writes: a handler that masks the source with a write it does
		 * not flush sees itself called again for nothing.
		 */
		for (line = 0; line < 4; line++) {
			for (storm = 0; storm < INTX_STORM; storm++) {
				if (m->link_down ||
				    !(xm_intx_lines(m) & (1u << line)))
					break;
				m->st.intx_assertions++;
				xm_deliver(m, line);
			}
			if (storm == INTX_STORM)
				xm_violation(m, "INT%c stays asserted after %d "
					     "handler calls", 'A' + line,
					     INTX_STORM);
		}
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* --- life cycle and test controls --------------------------------------------------------- */

static void xm_chan_defaults(struct xm_chan *c)
{
	c->control = 0;
	c->status = 0;
	c->completed = 0;
	c->int_mask = 0;
	c->wb_lo = c->wb_hi = 0;
	c->desc_lo = c->desc_hi = c->desc_adj = 0;
	if (c->start)
		c->busy = false;	/* a Run edge no engine took up yet */
	c->start = false;
	c->bad_magic = -1;
	c->err_index = -1;
}

struct xm *xm_new(const struct xm_config *cfg, const struct xm_callbacks *cb)
{
	struct xm *m = calloc(1, sizeof(*m));
	unsigned int d, n;
	pthread_condattr_t ca;

	if (!m || cfg->n_h2c > XM_MAX_CHANNELS || cfg->n_c2h > XM_MAX_CHANNELS)
		abort();
	m->cfg = *cfg;
	m->user_en = cfg->user_irq_en;
	m->cb = *cb;
	m->card = calloc(1, cfg->card_size);
	if (!m->card)
		abort();
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->cond, &ca);
	pthread_cond_init(&m->irq_cond, &ca);
	pthread_condattr_destroy(&ca);

	for (d = 0; d < 2; d++) {
		unsigned int count = d ? cfg->n_c2h : cfg->n_h2c;

		for (n = 0; n < count; n++) {
			struct xm_chan *c = &m->ch[d][n];

			c->m = m;
			c->dir = d;
			c->n = n;
			c->engine = d ? cfg->n_h2c + n : n;
			c->present = true;
			c->align = cfg->align[d];
			xm_chan_defaults(c);
		}
	}
	m->nengines = cfg->n_h2c + cfg->n_c2h;
	if (cfg->left_running && cfg->n_h2c) {
		m->ch[0][0].leftover = true;
		m->ch[0][0].control = C_RUN;
	}
	for (d = 0; d < 2; d++)
		for (n = 0; n < XM_MAX_CHANNELS; n++)
			if (m->ch[d][n].present &&
			    pthread_create(&m->ch[d][n].thread, NULL, xm_engine,
					   &m->ch[d][n]))
				abort();
	if (pthread_create(&m->irq_thread, NULL, xm_irq_thread, m))
		abort();
	/* The leftover engine is Busy before anyone looks. */
	pthread_mutex_lock(&m->lock);
	while (cfg->left_running && cfg->n_h2c && !m->ch[0][0].busy)
		xm_nap(m, 100);
	pthread_mutex_unlock(&m->lock);
	return m;
}

void xm_free(struct xm *m)
{
	unsigned int d, n;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	m->quit = true;
	pthread_cond_broadcast(&m->cond);
	pthread_cond_broadcast(&m->irq_cond);
	pthread_mutex_unlock(&m->lock);
	for (d = 0; d < 2; d++)
		for (n = 0; n < XM_MAX_CHANNELS; n++)
			if (m->ch[d][n].present)
				pthread_join(m->ch[d][n].thread, NULL);
	pthread_join(m->irq_thread, NULL);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	pthread_cond_destroy(&m->irq_cond);
	free(m->fifo);
	free(m->card);
	free(m);
}

void xm_set_irq_mode(struct xm *m, enum xm_irq_mode mode)
{
	pthread_mutex_lock(&m->lock);
	m->irq_mode = mode;
	m->sent = 0;
	pthread_mutex_unlock(&m->lock);
}

void xm_reset(struct xm *m)
{
	unsigned int d, n;
	bool busy;

	pthread_mutex_lock(&m->lock);
	m->reset_gen++;
	m->fifo_len = 0;
	for (d = 0; d < 2; d++)
		for (n = 0; n < XM_MAX_CHANNELS; n++) {
			m->ch[d][n].leftover = false;
			if (m->ch[d][n].present)
				xm_chan_defaults(&m->ch[d][n]);
		}
	m->chan_en = m->user_en = 0;
	m->vec[0] = m->vec[1] = 0;
	m->sent = 0;
	pthread_cond_broadcast(&m->cond);
	/* Engines drop what they do at once; wait until they have. */
	do {
		busy = false;
		for (d = 0; d < 2; d++)
			for (n = 0; n < XM_MAX_CHANNELS; n++)
				busy |= m->ch[d][n].busy;
		if (busy)
			pthread_cond_wait(&m->cond, &m->lock);
	} while (busy);
	pthread_mutex_unlock(&m->lock);
}

uint8_t *xm_card(struct xm *m)
{
	return m->card;
}

void xm_get_stats(struct xm *m, struct xm_stats *ret)
{
	pthread_mutex_lock(&m->lock);
	*ret = m->st;
	pthread_mutex_unlock(&m->lock);
}

bool xm_busy(struct xm *m, unsigned int dir, unsigned int ch)
{
	bool busy;

	pthread_mutex_lock(&m->lock);
	busy = m->ch[dir][ch].busy;
	pthread_mutex_unlock(&m->lock);
	return busy;
}

unsigned int xm_hung(struct xm *m)
{
	unsigned int d, n, hung = 0;

	pthread_mutex_lock(&m->lock);
	for (d = 0; d < 2; d++)
		for (n = 0; n < XM_MAX_CHANNELS; n++)
			hung += m->ch[d][n].hung;
	pthread_mutex_unlock(&m->lock);
	return hung;
}

int xm_fault_add(struct xm *m, unsigned int dir, uint64_t card_lo,
		 uint64_t card_hi, enum xm_fault_kind kind)
{
	int ret = -ENOSPC;

	pthread_mutex_lock(&m->lock);
	if (m->nfaults < MAX_FAULTS) {
		m->faults[m->nfaults].dir = dir;
		m->faults[m->nfaults].lo = card_lo;
		m->faults[m->nfaults].hi = card_hi;
		m->faults[m->nfaults].kind = kind;
		m->nfaults++;
		ret = 0;
	}
	pthread_mutex_unlock(&m->lock);
	return ret;
}

void xm_fault_clear(struct xm *m)
{
	pthread_mutex_lock(&m->lock);
	m->nfaults = 0;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

void xm_lose_irqs(struct xm *m, unsigned int n)
{
	pthread_mutex_lock(&m->lock);
	m->lose_irqs = n;
	pthread_mutex_unlock(&m->lock);
}

void xm_bad_magic(struct xm *m, unsigned int dir, unsigned int ch,
		  unsigned int index)
{
	pthread_mutex_lock(&m->lock);
	m->ch[dir][ch].bad_magic = (int)index;
	pthread_mutex_unlock(&m->lock);
}

void xm_error_at(struct xm *m, unsigned int dir, unsigned int ch,
		 uint32_t bits, unsigned int index, bool after)
{
	pthread_mutex_lock(&m->lock);
	m->ch[dir][ch].err_bits = bits;
	m->ch[dir][ch].err_index = (int)index;
	m->ch[dir][ch].err_after = after;
	pthread_mutex_unlock(&m->lock);
}

void xm_err_writeback(struct xm *m, bool on)
{
	pthread_mutex_lock(&m->lock);
	m->no_err_writeback = !on;
	pthread_mutex_unlock(&m->lock);
}

void xm_link(struct xm *m, bool up)
{
	pthread_mutex_lock(&m->lock);
	m->link_down = !up;
	if (!up)
		m->fifo_len = 0;
	pthread_cond_broadcast(&m->cond);
	pthread_cond_broadcast(&m->irq_cond);
	pthread_mutex_unlock(&m->lock);
}

void xm_on_run(struct xm *m, void (*fn)(void *arg), void *arg)
{
	pthread_mutex_lock(&m->lock);
	m->on_run = fn;
	m->on_run_arg = arg;
	pthread_mutex_unlock(&m->lock);
}

