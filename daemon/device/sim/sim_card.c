// SPDX-License-Identifier: MIT
/*
 * sim_card.c - the sim card's memory: the address space memory queues
 * read and write (sim.h).  It holds user data only; the frame sources and
 * sinks work in memory of their own (sim_frames.c).  Reserved without
 * backing (MAP_NORESERVE): a page is backed when it is first written, and
 * a page never written reads as zeros.  CUDA copies need page-locked host
 * memory to run at full speed, so the chunks of it that GPU transfers
 * touch are page-locked, each once, the first time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "device/sim/sim.h"
#include "memory/copy.h"
#include "log.h"

int sim_card_reserve(struct device *d)
{
	uint64_t chunks = (d->card_size + SIM_CARD_CHUNK - 1) / SIM_CARD_CHUNK;
	void *card;

	d->card_locked = calloc(chunks, 1);
	if (!d->card_locked)
		return -ENOMEM;
	card = mmap(NULL, d->card_size, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (card == MAP_FAILED)
		return -errno;
	d->card = card;
	return 0;
}

void sim_card_release(struct device *d)
{
	uint64_t chunks = (d->card_size + SIM_CARD_CHUNK - 1) / SIM_CARD_CHUNK;

	if (d->card && d->card_locked)
		for (uint64_t i = 0; i < chunks; i++)
			if (d->card_locked[i])
				copy_host_unregister(d->card + i * SIM_CARD_CHUNK);
	if (d->card)
		munmap(d->card, d->card_size);
	free(d->card_locked);
	d->card = NULL;
	d->card_locked = NULL;
}

bool sim_card_contains(const struct device *d, uint64_t addr, uint64_t len)
{
	return addr <= d->card_size && len <= d->card_size - addr;
}

uint64_t sim_card_chunk_left(uint64_t addr)
{
	return SIM_CARD_CHUNK - addr % SIM_CARD_CHUNK;
}

int sim_card_lock(struct device *d, uint64_t addr, uint64_t len)
{
	uint64_t first = addr / SIM_CARD_CHUNK;
	uint64_t last = (addr + len - 1) / SIM_CARD_CHUNK;
	int r = 0;

	if (!len || !sim_card_contains(d, addr, len))
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	for (uint64_t i = first; i <= last && !r; i++) {
		uint64_t at = i * SIM_CARD_CHUNK;
		uint64_t n = d->card_size - at < SIM_CARD_CHUNK ?
			     d->card_size - at : SIM_CARD_CHUNK;

		if (d->card_locked[i])
			continue;
		r = copy_host_register(d->card + at, n);
		if (r)
			log_err("sim: cannot page-lock card memory at 0x%" PRIx64
				" for GPU copies: %s", at, strerror(-r));
		else
			d->card_locked[i] = 1;
	}
	pthread_mutex_unlock(&d->lock);
	return r;
}

/*
 * A chunk that is page-locked for CUDA is zeroed in place; any other is
 * given back to the kernel, which costs nothing and zeroes it as well.
 */
int sim_card_scrub(struct device *d, uint64_t addr, uint64_t len)
{
	if (!sim_card_contains(d, addr, len))
		return -EINVAL;
	pthread_mutex_lock(&d->lock);
	while (len) {
		uint64_t n = sim_card_chunk_left(addr);

		if (n > len)
			n = len;
		if (d->card_locked[addr / SIM_CARD_CHUNK] ||
		    madvise(d->card + addr, n, MADV_DONTNEED) < 0)
			memset(d->card + addr, 0, n);
		addr += n;
		len -= n;
	}
	pthread_mutex_unlock(&d->lock);
	return 0;
}
