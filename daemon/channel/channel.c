// SPDX-License-Identifier: MIT
/*
 * channel.c - a configured DMA channel: its ring memory (allocated and
 * pinned once, at start, in the memory and transfer mode that work), its
 * leases, its counters.  The streaming thread is stream.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel/channel_impl.h"
#include "log.h"

const char *channel_state_name(enum channel_state st)
{
	static const char *const names[] = {
		"idle", "streaming", "recovering", "failed",
	};
	return names[st];
}

/* --- set-up: memory, transfer mode, pinning ------------------------------ */

/* auto: GPU memory when a GPU answers, else host, saying why. */
static int choose_memory(struct channel *ch, char *err, size_t errlen)
{
	char why[160];
	int ordinal, r;

	if (ch->cfg.memory == MEMORY_HOST) {
		ch->memory = MEMORY_HOST;
		snprintf(ch->reason, sizeof(ch->reason), "memory = host");
		return 0;
	}
	r = memory_cuda_probe(ch->cfg.gpu, &ordinal, why, sizeof(why));
	if (r == 0) {
		ch->memory = MEMORY_CUDA;
		return 0;
	}
	if (ch->cfg.memory == MEMORY_CUDA) {
		snprintf(err, errlen, "memory = cuda, but %s", why);
		return r;
	}
	ch->memory = MEMORY_HOST;
	snprintf(ch->reason, sizeof(ch->reason), "%s: host memory only", why);
	log_notice("channel %s: host memory (%s)", ch->cfg.name, ch->reason);
	return 0;
}

static int pin_host(struct channel *ch, void *addr)
{
	struct dev_region reg = {
		.kind = DEV_REGION_HOST,
		.addr = addr,
		.fd = -1,
		.length = ch->mem->size,
	};

	return ch->ops->pin(ch->q, &reg, &ch->pin);
}

/* What lessees may do with the ring: read it (c2h) or fill it (h2c). */
static unsigned ring_flags(const struct channel *ch)
{
	return ch->cfg.direction == DIR_C2H ? MEMORY_LESSEE_READS : 0;
}

/* The card's pin on the ring (not in bounce mode: that pins staging). */
static int pin_ring(struct channel *ch)
{
	return device_pin_region(ch->ops, ch->q, ch->mops, ch->mem, &ch->pin);
}

/*
 * A ring of its own for each new lessee: a process that leased the channel
 * before keeps whatever it mapped (a host mapping, a CUDA IPC mapping), so
 * it must not be where the card writes next.  The card is idle (no lease,
 * no stream) when this runs.
 */
int channel_renew_ring(struct channel *ch)
{
	struct mem_region *old = ch->mem, *fresh;
	uint64_t old_pin = ch->pin;
	bool bounce = ch->mode == MODE_BOUNCE;
	/*
	 * A network sender's R_Key belongs to the pin: in bounce mode the
	 * staging is pinned anew too, so that a sender still writing for the
	 * lessee before is refused, not copied into the new lessee's ring.
	 */
	bool repin = !bounce || ch->src.sender_paced;
	int r;

	r = ch->mops->alloc(old->size, ch->cfg.gpu, ch->cfg.name,
			    ring_flags(ch), &fresh);
	if (r < 0)
		return r;
	ch->mem = fresh;
	r = !repin ? 0 : bounce ? pin_host(ch, ch->staging) : pin_ring(ch);
	if (r < 0) {
		ch->mem = old;
		ch->pin = old_pin;
		ch->mops->free(fresh);
		return r;
	}
	if (repin)
		ch->ops->unpin(ch->q, old_pin);
	ch->mops->free(old);
	return 0;
}

static int setup_bounce(struct channel *ch)
{
	int r;

	r = copy_host_alloc(ch->mem->size, &ch->staging);
	if (r < 0)
		return r;
	ch->pending = calloc(ch->cfg.slots, sizeof(*ch->pending));
	if (!ch->pending)
		return -ENOMEM;
	r = copy_open(ch->mem->gpu, ch->cfg.queue_depth, &ch->ce);
	if (r < 0)
		return r;
	return pin_host(ch, ch->staging);
}

/* Bounce's staging and copy engine, gone (or never made). */
static void drop_bounce(struct channel *ch)
{
	copy_close(ch->ce);
	ch->ce = NULL;
	copy_host_free(ch->staging);
	ch->staging = NULL;
	free(ch->pending);
	ch->pending = NULL;
}

static int choose_mode(struct channel *ch, char *err, size_t errlen)
{
	int r;

	if (ch->memory == MEMORY_HOST) {
		ch->mode = MODE_HOST;
		return pin_host(ch, ch->mem->host);
	}
	if (ch->cfg.mode != MODE_BOUNCE) {
		r = pin_ring(ch);
		if (r == 0) {
			ch->mode = MODE_GPUDIRECT;
			if (ch->mem->integrated)
				snprintf(ch->reason, sizeof(ch->reason), "%s",
					 memory_integrated_rule);
			else if (ch->cfg.source != SOURCE_CARD)
				/* RoCE with its landing ring in GPU memory. */
				snprintf(ch->reason, sizeof(ch->reason),
					 "the NIC writes a landing ring in GPU memory, copied on the GPU into the slot; %s",
					 memory_rdma_order_rule(ch->mem->rdma_order));
			else
				snprintf(ch->reason, sizeof(ch->reason),
					 "card DMA straight into GPU memory; %s",
					 memory_rdma_order_rule(ch->mem->rdma_order));
			return 0;
		}
		if (ch->cfg.mode == MODE_GPUDIRECT) {
			snprintf(err, errlen, "mode = gpudirect, but the card cannot pin GPU memory: %s",
				 strerror(-r));
			return r;
		}
		snprintf(ch->reason, sizeof(ch->reason),
			 "gpudirect unavailable (%s): bounce through host memory",
			 strerror(-r));
		log_notice("channel %s: %s", ch->cfg.name, ch->reason);
	} else {
		snprintf(ch->reason, sizeof(ch->reason), "mode = bounce");
	}
	if (ch->cfg.direction == DIR_H2C) {
		snprintf(err, errlen, "h2c in GPU memory needs gpudirect; bounce serves c2h only");
		return -EOPNOTSUPP;
	}
	ch->mode = MODE_BOUNCE;
	r = setup_bounce(ch);
	if (r < 0)
		snprintf(err, errlen, "bounce set-up: %s", strerror(-r));
	return r;
}

int channel_create(const struct config *cfg, const struct config_channel *cc,
		   const struct source *src, struct channel **ret_ch, char *err,
		   size_t errlen)
{
	struct channel *ch;
	int r;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return -ENOMEM;
	if (cc->direction == DIR_H2C) {
		ch->h2c = calloc(cc->slots, 1);
		ch->h2c_fill = calloc(cc->slots, sizeof(*ch->h2c_fill));
		if (!ch->h2c || !ch->h2c_fill) {
			free(ch->h2c);
			free(ch->h2c_fill);
			free(ch);
			return -ENOMEM;
		}
	}
	ch->cfg = *cc;
	if (!ch->cfg.gpu[0])
		snprintf(ch->cfg.gpu, sizeof(ch->cfg.gpu), "%s", cfg->device.gpu);
	ch->dma_timeout_ms = cfg->device.dma_timeout_ms;
	ch->src = *src;
	ch->ops = src->ops;
	ch->dev = src->dev;
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->cond, NULL);

	r = choose_memory(ch, err, errlen);
	if (r < 0)
		goto fail;
	ch->mops = memory_ops_for(ch->memory);
	r = ch->mops->alloc((size_t)cc->slots * cc->slot_size, ch->cfg.gpu,
			    cc->name, ring_flags(ch), &ch->mem);
	if (r < 0) {
		snprintf(err, errlen, "cannot allocate %u x %llu bytes of %s memory: %s",
			 cc->slots, (unsigned long long)cc->slot_size,
			 memory_kind_name(ch->memory), strerror(-r));
		goto fail;
	}
	{
		/* The source sees where the ring is, auto resolved. */
		struct config_channel qc = ch->cfg;

		qc.memory = ch->memory;
		r = ch->ops->queue_open(ch->dev, &qc, &ch->q);
	}
	if (r < 0) {
		if (src->dev)
			snprintf(err, errlen, "cannot open DMA engine %u: %s",
				 cc->engine, strerror(-r));
		else
			snprintf(err, errlen, "cannot open its %s source: %s",
				 src->name, strerror(-r));
		goto fail;
	}
	r = choose_mode(ch, err, errlen);
	if (r < 0)
		goto fail;
	r = channel_renew_slots(ch);
	if (r < 0) {
		snprintf(err, errlen, "%s", strerror(-r));
		goto fail;
	}
	log_info("channel %s: %u slots of %llu bytes in %s memory, %s (%s)",
		 cc->name, cc->slots, (unsigned long long)cc->slot_size,
		 memory_kind_name(ch->memory), transfer_mode_name(ch->mode),
		 ch->reason);
	*ret_ch = ch;
	return 0;
fail:
	channel_destroy(ch);
	return r;
}

int channel_renew_slots(struct channel *ch)
{
	struct slots_stats rs;
	struct slots *fresh;
	int r;

	r = slots_create(ch->cfg.slots, &fresh);
	if (r < 0)
		return r;
	if (ch->slots) {
		slots_get_stats(ch->slots, &rs);
		ch->acc.drops += rs.drops;
		ch->acc.stalls += rs.stalls;
		slots_destroy(ch->slots);
	}
	ch->slots = fresh;
	/* A new stream: what was skipped while none ran is nobody's loss. */
	ch->drops_seen = 0;
	ch->seq_known = false;
	if (ch->h2c)
		memset(ch->h2c, H2C_FREE, ch->cfg.slots);
	return 0;
}

void channel_destroy(struct channel *ch)
{
	if (!ch)
		return;
	/* Its leases ended first (lease_end_all), which stopped its stream. */
	if (ch->q) {
		if (ch->pin)
			ch->ops->unpin(ch->q, ch->pin);
		ch->ops->queue_close(ch->q);
	}
	drop_bounce(ch);
	if (ch->mem)
		ch->mops->free(ch->mem);
	slots_destroy(ch->slots);
	free(ch->h2c);
	free(ch->h2c_fill);
	pthread_cond_destroy(&ch->cond);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}

uint64_t channel_ring_bytes(const struct channel *ch)
{
	return (uint64_t)ch->cfg.slots * ch->cfg.slot_size;
}

uint64_t channel_pinned_bytes(struct channel *ch)
{
	uint64_t ring = channel_ring_bytes(ch);
	bool bounce;

	pthread_mutex_lock(&ch->lock);
	bounce = ch->mode == MODE_BOUNCE;
	pthread_mutex_unlock(&ch->lock);
	return bounce ? 2 * ring : ring;
}

/* An idle channel in GPU memory from gpudirect to bounce or back. */
static int switch_mode(struct channel *ch, enum transfer_mode mode)
{
	uint64_t old_pin = ch->pin;
	int r;

	if (mode == MODE_BOUNCE) {
		ch->pin = 0;
		r = setup_bounce(ch);
	} else {
		r = pin_ring(ch);
	}
	if (r < 0) {
		if (mode == MODE_BOUNCE) {
			if (ch->pin)
				ch->ops->unpin(ch->q, ch->pin);
			drop_bounce(ch);
		}
		ch->pin = old_pin;
		return r;
	}
	ch->ops->unpin(ch->q, old_pin);
	if (mode == MODE_GPUDIRECT)
		drop_bounce(ch);
	pthread_mutex_lock(&ch->lock);
	ch->mode = mode;
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

int channel_probe(struct channel *ch, channel_measure_fn measure, void *user,
		  bool *ret_switched, char *err, size_t errlen)
{
	enum transfer_mode mode;
	char reason[sizeof(ch->reason)];
	bool busy;
	int r;

	if (ch->cfg.source != SOURCE_CARD) {
		snprintf(err, errlen, "channel %s is a network source: its landing ring decides how frames reach a GPU (bounce, or gpudirect from a GPU landing ring), there is no mode to choose",
			 ch->cfg.name);
		return -EINVAL;
	}
	if (ch->memory != MEMORY_CUDA || ch->cfg.direction != DIR_C2H) {
		snprintf(err, errlen, "channel %s is %s in %s memory: there is no mode to choose",
			 ch->cfg.name, direction_name(ch->cfg.direction),
			 memory_kind_name(ch->memory));
		return -EINVAL;
	}
	if (ch->mem->integrated) {
		snprintf(err, errlen, "channel %s is on an integrated GPU: the card writes the host memory the GPU reads, there is no mode to choose",
			 ch->cfg.name);
		return -EINVAL;
	}
	pthread_mutex_lock(&ch->lock);
	busy = ch->leases || ch->running;
	pthread_mutex_unlock(&ch->lock);
	if (busy) {
		snprintf(err, errlen, "channel %s is leased: a probe needs its DMA engine idle (fpgactl clients says who holds it)",
			 ch->cfg.name);
		return -EBUSY;
	}
	/* Idle, and only this thread leases: the engine is the probe's. */
	r = measure(user, ch->q, &mode, reason, sizeof(reason));
	if (r < 0) {
		snprintf(err, errlen, "channel %s: the probe found no mode: %s",
			 ch->cfg.name, strerror(-r));
		return r;
	}
	*ret_switched = mode != ch->mode;
	if (*ret_switched) {
		r = switch_mode(ch, mode);
		if (r < 0) {
			snprintf(err, errlen, "channel %s: cannot switch to %s: %s; it stays in %s",
				 ch->cfg.name, transfer_mode_name(mode), strerror(-r),
				 transfer_mode_name(ch->mode));
			return r;
		}
	}
	pthread_mutex_lock(&ch->lock);
	if (ch->mode == MODE_GPUDIRECT)
		snprintf(ch->reason, sizeof(ch->reason), "%.80s; %s", reason,
			 memory_rdma_order_rule(ch->mem->rdma_order));
	else
		snprintf(ch->reason, sizeof(ch->reason), "%s", reason);
	pthread_mutex_unlock(&ch->lock);
	return 0;
}

int channel_reset(struct channel *ch, char *err, size_t errlen)
{
	pthread_mutex_lock(&ch->lock);
	if (ch->state != CHANNEL_FAILED) {
		snprintf(err, errlen, "channel %s is %s, not failed: nothing to reset",
			 ch->cfg.name, channel_state_name(ch->state));
		pthread_mutex_unlock(&ch->lock);
		return -EALREADY;
	}
	/* The engine was stopped and reset when it failed; arm it again. */
	ch->failures = 0;
	ch->state = ch->running ? CHANNEL_STREAMING : CHANNEL_IDLE;
	pthread_mutex_unlock(&ch->lock);
	if (ch->running)
		ch->ops->kick(ch->q);
	log_notice("channel %s: reset, %s", ch->cfg.name,
		   ch->running ? "streaming again" : "idle");
	return 0;
}

enum channel_state channel_state(struct channel *ch)
{
	enum channel_state st;

	pthread_mutex_lock(&ch->lock);
	st = ch->state;
	pthread_mutex_unlock(&ch->lock);
	return st;
}

const struct config_channel *channel_config(const struct channel *ch)
{
	return &ch->cfg;
}

void channel_get_stats(struct channel *ch, struct channel_stats *ret_stats)
{
	struct slots_stats rs;

	pthread_mutex_lock(&ch->lock);
	*ret_stats = ch->stats;
	slots_get_stats(ch->slots, &rs);
	/* h2c counts the frames the card lost itself; c2h, its rings. */
	ret_stats->drops = ch->stats.drops + ch->acc.drops + rs.drops;
	ret_stats->stalls = ch->acc.stalls + rs.stalls;
	ret_stats->state = ch->state;
	ret_stats->memory = ch->memory;
	ret_stats->integrated = ch->mem->integrated;
	ret_stats->mode = ch->mode;
	ret_stats->leases = ch->n_leases;
	pthread_mutex_unlock(&ch->lock);
	if (ch->ops->sink_counts && ch->cfg.direction == DIR_H2C)
		ch->ops->sink_counts(ch->q, &ret_stats->card_good,
				     &ret_stats->card_bad);
	{
		struct source_stats ns;

		ret_stats->network = channel_source_stats(ch, &ns) == 0;
		if (ret_stats->network)
			ret_stats->net = ns.cnt;
	}
}

int channel_source_stats(struct channel *ch, struct source_stats *ret_stats)
{
	if (!ch->src.stats)
		return -ENODEV;
	return ch->src.stats(ch->q, ret_stats);
}

bool channel_is_streaming(struct channel *ch)
{
	return ch->running;
}

const char *channel_mode_reason(const struct channel *ch)
{
	return ch->reason;
}

void channel_explain_mode(struct channel *ch, enum transfer_mode mode,
			  const char *reason)
{
	if (ch->mode != mode)
		return;
	snprintf(ch->reason, sizeof(ch->reason), "%s", reason);
}

int channel_gpu(const struct channel *ch)
{
	return ch->memory == MEMORY_CUDA ? ch->mem->gpu : -1;
}

const char *channel_gpu_bus_id(const struct channel *ch)
{
	return ch->memory == MEMORY_CUDA ? ch->mem->gpu_bus_id : "";
}
