// SPDX-License-Identifier: MIT
/*
 * sim_card.c - the sim card's memory: an address space reserved without
 * backing (MAP_NORESERVE), windows of it handed to queues first fit, and
 * the layout of a queue's window (pattern, frame headers, receive
 * buffers).  Only the pages a window uses are ever touched (sim.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "fpgad_simframe.h"
#include "log.h"
#include "sim.h"

int sim_card_reserve(struct device *d)
{
	void *card = mmap(NULL, d->card_size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (card == MAP_FAILED)
		return -errno;
	d->card = card;
	return 0;
}

void sim_card_release(struct device *d)
{
	if (d->card)
		munmap(d->card, d->card_size);
	d->card = NULL;
}

/* First fit; the caller holds d->lock. */
int sim_card_alloc(struct device *d, uint64_t len, uint64_t *ret_start)
{
	uint64_t at = 0;
	unsigned i;

	if (d->n_ext == SIM_MAX_EXTENTS)
		return -ENOMEM;
	for (i = 0; i <= d->n_ext; i++) {
		uint64_t end = i < d->n_ext ? d->ext[i].start : d->card_size;

		if (end - at >= len)
			break;
		at = d->ext[i].start + d->ext[i].len;
	}
	if (i > d->n_ext)
		return -ENOMEM;
	memmove(&d->ext[i + 1], &d->ext[i], (d->n_ext - i) * sizeof(d->ext[0]));
	d->ext[i].start = at;
	d->ext[i].len = len;
	d->n_ext++;
	*ret_start = at;
	return 0;
}

/* Give a window back and drop its pages; the caller holds d->lock. */
void sim_card_free(struct device *d, uint64_t start)
{
	unsigned i;

	for (i = 0; i < d->n_ext; i++) {
		if (d->ext[i].start != start)
			continue;
		madvise(d->card + start, d->ext[i].len, MADV_DONTNEED);
		memmove(&d->ext[i], &d->ext[i + 1],
			(d->n_ext - i - 1) * sizeof(d->ext[0]));
		d->n_ext--;
		return;
	}
}

int sim_card_window(struct device_queue *q)
{
	struct device *d = q->dev;
	uint64_t max_frame, psize, extra, len;
	int r;

	max_frame = q->dir == DIR_C2H && q->frame_size ? q->frame_size :
		    q->max_len;
	psize = fpgad_simframe_pattern_size(max_frame);
	if (q->dir == DIR_C2H) {
		extra = sim_round_up((uint64_t)q->depth * SIM_HDR_STRIDE,
				     SIM_PAGE);
	} else {
		q->rx_stride = sim_round_up(q->max_len, SIM_PAGE);
		extra = q->rx_stride * q->depth;
	}
	len = sim_round_up(psize, SIM_PAGE) + extra;

	pthread_mutex_lock(&d->lock);
	r = sim_card_alloc(d, len, &q->win_start);
	pthread_mutex_unlock(&d->lock);
	if (r) {
		log_err("sim: %s: card memory full: %" PRIu64 " bytes wanted, "
			"%" PRIu64 " in all", q->ch.name, len, d->card_size);
		return r;
	}
	q->win_len = len;
	q->win = d->card + q->win_start;
	q->pattern_size = psize;
	if (q->dir == DIR_C2H) {
		q->hdrs = q->win;
		q->pattern = q->win + extra;
	} else {
		q->pattern = q->win;
		q->rx = q->win + sim_round_up(psize, SIM_PAGE);
	}
	fpgad_simframe_pattern_fill((unsigned char *)q->pattern, psize);
	return 0;
}
