// SPDX-License-Identifier: MIT
/*
 * roce_rx.c - frames from RoCE completions (roce_rx.h): the checks at each
 * WRITE with Immediate, the copy from the landing page into the armed
 * slot, the canaries that show a lost packet.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "device/net/roce_rx.h"

/* The canaries' generator (splitmix64): unpredictable is not needed. */
static uint64_t canary_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

uint64_t roce_rx_meta_offset(uint64_t frame_size)
{
	return (frame_size + ROCE_PAYLOAD_UNIT - 1) / ROCE_PAYLOAD_UNIT *
	       ROCE_PAYLOAD_UNIT;
}

static uint64_t page_off(const struct roce_rx *rx, uint32_t page)
{
	return (uint64_t)page * rx->cfg.layout.stride;
}

/* The WRITEs (chunks) @bytes of a frame take. */
static uint64_t cfg_chunks(const struct roce_rx_cfg *cfg, uint64_t bytes)
{
	return (bytes + cfg->payload - 1) / cfg->payload;
}

static uint64_t chunks(const struct roce_rx *rx, uint64_t bytes)
{
	return cfg_chunks(&rx->cfg, bytes);
}

/* The landing ring in host memory: read and written in place. */
static int host_get(void *user, void *dst, uint64_t off, uint64_t pitch,
		    size_t width, size_t n)
{
	for (size_t i = 0; i < n; i++)
		memcpy((unsigned char *)dst + i * width,
		       (unsigned char *)user + off + i * pitch, width);
	return 0;
}

static int host_put(void *user, uint64_t off, uint64_t pitch, const void *src,
		    size_t width, size_t n)
{
	for (size_t i = 0; i < n; i++)
		memcpy((unsigned char *)user + off + i * pitch,
		       (const unsigned char *)src + i * width, width);
	return 0;
}

static int host_copy_out(void *user, void *dst, uint64_t off, size_t len)
{
	memcpy(dst, (unsigned char *)user + off, len);
	return 0;
}

static const struct roce_landing_io host_io = {
	.get = host_get,
	.put = host_put,
	.copy_out = host_copy_out,
};

/* The first 8 bytes of each of @n chunks of @page into @dst. */
static int chunk_starts(struct roce_rx *rx, uint32_t page, uint64_t n,
			uint64_t *dst)
{
	return rx->io->get(rx->io_user, dst, page_off(rx, page),
			   rx->cfg.payload, sizeof(uint64_t), n);
}

static int meta_get(struct roce_rx *rx, uint32_t page, unsigned char *ret_meta)
{
	return rx->io->get(rx->io_user, ret_meta, page_off(rx, page) +
			   roce_rx_meta_offset(rx->cfg.frame_size), 0,
			   ROCE_META_SIZE, 1);
}

/*
 * Wait for the io queued (roce_landing_io).  Where that fails, a page
 * armed since the last wait may lack its canaries: it is stale.
 */
static int io_wait(struct roce_rx *rx)
{
	int r = rx->io->wait ? rx->io->wait(rx->io_user) : 0;

	if (r < 0 && rx->arm_queued)
		rx->page[rx->arm_page].stale = true;
	rx->arm_queued = false;
	return r;
}

/*
 * A new canary at each chunk's start and at the metadata block, queued:
 * the next wait (the next frame's checks) sees them written.  Where they
 * cannot be written the page is left stale: its next frame is not
 * checked but counted as overrun.
 */
static void page_arm(struct roce_rx *rx, uint32_t page)
{
	uint64_t c = canary_next(&rx->canary_state);
	uint64_t n = chunks(rx, rx->cfg.frame_size);

	rx->page[page].canary = c;
	for (uint64_t i = 0; i < n; i++)
		rx->scratch[i] = c;
	rx->page[page].stale =
		rx->io->put(rx->io_user, page_off(rx, page), rx->cfg.payload,
			    rx->scratch, sizeof(c), n) < 0 ||
		rx->io->put(rx->io_user, page_off(rx, page) +
			    roce_rx_meta_offset(rx->cfg.frame_size), 0, &c,
			    sizeof(c), 1) < 0;
	rx->arm_page = page;
	rx->arm_queued = true;
}

/*
 * What a page holds before its frame is checked, in one wait: its
 * metadata into @meta, and into rx->before the first bytes of as many
 * chunks as a whole frame has (the metadata tells later how many count).
 */
static void page_read(struct roce_rx *rx, uint32_t page, unsigned char *meta,
		      bool *ret_meta_ok, bool *ret_starts_ok)
{
	*ret_meta_ok = meta_get(rx, page, meta) == 0;
	*ret_starts_ok = chunk_starts(rx, page, chunks(rx, rx->cfg.frame_size),
				      rx->before) == 0;
	if (io_wait(rx) < 0)
		*ret_meta_ok = *ret_starts_ok = false;
}

size_t roce_rx_io_staging(const struct roce_rx_cfg *cfg)
{
	uint64_t n = cfg->payload ? cfg_chunks(cfg, cfg->frame_size) : 0;

	/* A page's canaries, then a page's metadata and chunk starts; alignment. */
	return (size_t)(2 * (n + 1) * sizeof(uint64_t)) + ROCE_META_SIZE + 4 * 64;
}

int roce_rx_init(struct roce_rx *rx, const struct roce_rx_cfg *cfg,
		 unsigned char *landing)
{
	memset(rx, 0, sizeof(*rx));
	if (!cfg->payload || cfg->payload % 8 || !cfg->layout.pages ||
	    cfg->layout.stride < roce_rx_meta_offset(cfg->frame_size) + ROCE_META_SIZE)
		return -EINVAL;
	rx->cfg = *cfg;
	rx->landing = landing;
	rx->io = cfg->io ? cfg->io : &host_io;
	rx->io_user = cfg->io ? cfg->io_user : landing;
	rx->page = calloc(cfg->layout.pages, sizeof(*rx->page));
	rx->scratch = calloc(chunks(rx, cfg->frame_size) + 1, sizeof(uint64_t));
	rx->before = calloc(chunks(rx, cfg->frame_size) + 1, sizeof(uint64_t));
	if (!rx->page || !rx->scratch || !rx->before) {
		roce_rx_free(rx);
		return -ENOMEM;
	}
	if (getrandom(&rx->canary_state, sizeof(rx->canary_state), 0) !=
	    sizeof(rx->canary_state))
		rx->canary_state = (uintptr_t)rx ^ 0x5bd1e995u;
	roce_rx_restart(rx);
	return 0;
}

void roce_rx_free(struct roce_rx *rx)
{
	free(rx->page);
	free(rx->scratch);
	free(rx->before);
	rx->page = NULL;
	rx->scratch = rx->before = NULL;
}

void roce_rx_restart(struct roce_rx *rx)
{
	rx->synced = false;
	rx->numbers.valid = false;
	rx->wc_n = 0;
	for (uint32_t p = 0; p < rx->cfg.layout.pages; p++) {
		page_arm(rx, p);
		io_wait(rx);
	}
}

bool roce_rx_release(struct roce_rx *rx, struct net_slot *ret_slot)
{
	bool had = rx->have_slot;

	if (had)
		*ret_slot = rx->slot;
	rx->have_slot = false;
	return had;
}

/*
 * The PSN accounting of a frame whose immediate had PSN @psn and which
 * carried @bytes: 0 when it follows the last, -1 for a frame from the
 * past (late or replayed).  A gap is packets lost before the frame (a
 * lost immediate shows so): counted, the frame's own packets are not.
 */
static int frame_psn(struct roce_rx *rx, uint32_t psn, uint64_t bytes)
{
	uint32_t first = (psn - (uint32_t)chunks(rx, bytes)) & ROCE_PSN_MASK;
	int32_t d = 0;

	if (rx->synced) {
		d = roce_psn_diff(first, rx->expect_psn);
		if (d < -ROCE_PSN_RESYNC_BEHIND) {
			/* The sender started over: follow it from this frame. */
			rx->cnt.psn_resyncs++;
			roce_frame_number_restart(&rx->numbers);
			d = 0;
		} else if (d < 0) {
			rx->cnt.late_packets++;
			return -1;
		}
		rx->cnt.lost_packets += (uint64_t)d;
	}
	rx->synced = true;
	rx->expect_psn = (psn + 1) & ROCE_PSN_MASK;
	return 0;
}

/*
 * Chunks of the frame whose packet never came: they hold the canary.
 * What the chunks start with stays in rx->before, for overrun().
 */
static uint64_t missing_chunks(struct roce_rx *rx, uint32_t page,
			       bool starts_ok, uint64_t bytes)
{
	uint64_t n = chunks(rx, bytes), lost = 0;

	if (!starts_ok)
		return n;	/* unreadable: none of it is vouched for */
	for (uint64_t i = 0; i < n; i++)
		lost += rx->before[i] == rx->page[page].canary;
	return lost;
}

/* What frame_meta() found. */
enum { META_OK, META_TORN, META_LAPPED };

/*
 * The checks of a frame's immediate @imm against its metadata in @page,
 * and its place in the sender's sequence: META_TORN when the frame is not
 * the sender's next, META_LAPPED when the page holds a newer frame (the
 * sender came back to it before fpgad took this one); *ret_meta its
 * metadata, parsed from @raw, its bytes as read (@raw_ok: they could be).
 */
static int frame_meta(struct roce_rx *rx, uint32_t page, uint32_t imm,
		      const unsigned char *raw, bool raw_ok,
		      struct roce_meta *ret_meta, uint64_t *ret_seq)
{
	uint32_t ahead;
	uint64_t v;

	if (!raw_ok) {
		rx->cnt.bad_packets++;
		return META_TORN;
	}
	memcpy(&v, raw, sizeof(v));
	if (v == rx->page[page].canary) {
		rx->cnt.bad_packets++;	/* an immediate with no metadata */
		return META_TORN;
	}
	roce_meta_parse(raw, ret_meta);
	ahead = (ret_meta->psn - roce_imm_psn(imm)) & 0xfffffu;
	if (ahead && ahead < 0x80000u) {
		/* This frame's packets are lost in the count: start over. */
		rx->synced = false;
		return META_LAPPED;
	}
	if (ahead || !ret_meta->bytes_written ||
	    ret_meta->bytes_written > rx->cfg.frame_size) {
		rx->cnt.bad_packets++;
		return META_TORN;
	}
	if (frame_psn(rx, ret_meta->psn & ROCE_PSN_MASK, ret_meta->bytes_written) < 0 ||
	    !roce_frame_number(&rx->numbers, ret_meta->frame_number, ret_seq))
		return META_TORN;
	roce_frame_number_take(&rx->numbers, *ret_seq);
	return META_OK;
}

/*
 * Whether the sender may be back at completion @i's page: a completion
 * polled after it is for the same page, or pages - 1 frames ahead of it.
 * Polls what the NIC completed since, to see.
 */
static bool lapped(struct roce_rx *rx, const struct roce_rx_ops *ops,
		   void *user, unsigned i, uint32_t page)
{
	int n = ops->poll(user, rx->wc + rx->wc_n, ROCE_RX_BATCH - rx->wc_n);

	if (n > 0)
		rx->wc_n += (unsigned)n;
	for (unsigned j = i + 1; j < rx->wc_n; j++)
		if (rx->wc[j].has_imm && roce_imm_page(rx->wc[j].imm) == page)
			return true;
	return rx->wc_n - i - 1 >= rx->cfg.layout.pages - 1;
}

/*
 * After the copy: the page changed since it was checked (its metadata, or
 * a chunk's first bytes), or the sender may be back at it.  The landing
 * page is compared with itself, not with the slot, which may be GPU memory.
 */
static bool overrun(struct roce_rx *rx, const struct roce_rx_ops *ops,
		    void *user, unsigned i, uint32_t page, uint64_t bytes,
		    const unsigned char *meta_before)
{
	unsigned char meta[ROCE_META_SIZE];
	uint64_t n = chunks(rx, bytes);
	bool lap = lapped(rx, ops, user, i, page);
	bool unread = meta_get(rx, page, meta) < 0;

	unread |= chunk_starts(rx, page, n, rx->scratch) < 0;
	unread |= io_wait(rx) < 0;	/* the copy too */
	return lap || unread || memcmp(meta, meta_before, ROCE_META_SIZE) ||
	       memcmp(rx->scratch, rx->before, n * sizeof(uint64_t));
}

/* Completion @i: a good frame copied and handed on (1), or counted (0). */
static int frame_end(struct roce_rx *rx, const struct roce_rx_ops *ops,
		     void *user, unsigned i, uint64_t now_ns)
{
	const struct roce_wc *wc = &rx->wc[i];
	uint32_t page = roce_imm_page(wc->imm);
	unsigned char meta_before[ROCE_META_SIZE];
	struct net_frame_done d = { 0 };
	struct roce_meta m;
	bool meta_ok, starts_ok;
	uint64_t lost;
	int good = 0, r;

	if (wc->status || !wc->has_imm || page >= rx->cfg.layout.pages) {
		rx->cnt.bad_packets++;
		return 0;
	}
	rx->cnt.packets++;
	page_read(rx, page, meta_before, &meta_ok, &starts_ok);
	r = frame_meta(rx, page, wc->imm, meta_before, meta_ok, &m, &d.seq);
	if (r == META_TORN) {
		rx->cnt.incomplete_frames++;
		goto rearm;
	}
	/* Lapped before: the page had no new canaries, nothing to check. */
	if (r == META_LAPPED || rx->page[page].stale) {
		rx->cnt.overrun_frames++;
		goto rearm;
	}
	lost = missing_chunks(rx, page, starts_ok, m.bytes_written);
	if (lost) {
		rx->cnt.lost_packets += lost;
		rx->cnt.incomplete_frames++;
		goto rearm;
	}
	if (!rx->have_slot && ops->take(user, &rx->slot) == 0)
		rx->have_slot = true;
	if (!rx->have_slot) {
		rx->cnt.no_slot_frames++;
		goto rearm;
	}
	if (rx->io->copy_out(rx->io_user, rx->slot.base, page_off(rx, page),
			     m.bytes_written) < 0 ||
	    overrun(rx, ops, user, i, page, m.bytes_written, meta_before)) {
		rx->cnt.overrun_frames++;
		goto rearm;
	}
	d.cookie = rx->slot.cookie;
	d.length = m.bytes_written;
	d.t_start_ns = d.t_end_ns = now_ns;
	roce_meta_times(&m, &d.t_sender_start_ns, &d.t_sender_end_ns);
	rx->have_slot = false;
	rx->cnt.frames++;
	rx->cnt.bytes += m.bytes_written;
	ops->done(user, &d);
	good = 1;
rearm:
	/*
	 * New canaries, unless the sender may be writing the page again:
	 * they would tear its next frame.  Then that frame cannot be
	 * checked, and is counted as overrun when it comes.
	 */
	if (lapped(rx, ops, user, i, page))
		rx->page[page].stale = true;
	else
		page_arm(rx, page);
	return good;
}

int roce_rx_drain(struct roce_rx *rx, const struct roce_rx_ops *ops,
		  void *user, uint64_t now_ns)
{
	int n, frames = 0, r;

	n = ops->poll(user, rx->wc + rx->wc_n, ROCE_RX_BATCH - rx->wc_n);
	if (n < 0)
		return n;
	rx->wc_n += (unsigned)n;
	for (unsigned i = 0; i < rx->wc_n; i++)
		frames += frame_end(rx, ops, user, i, now_ns);
	r = rx->wc_n ? ops->post_recv(user, rx->wc_n) : 0;
	rx->wc_n = 0;
	return r < 0 ? r : frames;
}
