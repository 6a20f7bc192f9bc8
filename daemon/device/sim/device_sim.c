// SPDX-License-Identifier: MIT
/*
 * device_sim.c - the simulated card as a device backend (device.h): the
 * ops table and what runs on the queue user's thread (open, queues, pins,
 * submit, wait, kick, reset).  The model itself is in the other sim_*.c
 * files; sim.h describes it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "device/sim/sim.h"
#include "fpgad_simframe.h"
#include "futex.h"
#include "log.h"
#include "wait.h"

static void sim_close(struct device *d);
static void sim_queue_close(struct device_queue *q);

static int sim_open(const struct config *cfg, struct device **ret_dev,
		    char *err, size_t errlen)
{
	const struct config_sim *s = &cfg->sim;
	struct device *d;
	int r;

	if (!sim_link_valid(&s->link)) {
		snprintf(err, errlen, "sim: link gen%u x%u is not a PCIe link the "
			 "sim models (gen 1-5, width 1-16, or gen 0 for unlimited)",
			 s->link.gen, s->link.width);
		return -EINVAL;
	}

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->sim = *s;
	r = sim_faults_from_env(&d->faults, err, errlen);
	if (r < 0)
		goto fail;
	d->timeout_ms = cfg->device.dma_timeout_ms;
	if (!d->timeout_ms)
		d->timeout_ms = SIM_DEFAULT_TIMEOUT_MS;
	d->card_size = sim_round_up(s->card_memory ? s->card_memory :
				    SIM_DEFAULT_CARD_MEMORY, SIM_PAGE);
	if (d->card_size < s->card_memory || d->card_size > SIM_CARD_MAX) {
		snprintf(err, errlen, "sim: card memory of %" PRIu64 " bytes: the "
			 "sim models up to %llu", s->card_memory, SIM_CARD_MAX);
		r = -EINVAL;
		goto fail;
	}
	r = -pthread_mutex_init(&d->lock, NULL);
	if (r)
		goto fail;
	d->lock_init = true;

	r = sim_card_reserve(d);
	if (r < 0) {
		snprintf(err, errlen, "sim: cannot reserve %" PRIu64 " bytes of "
			 "card memory: %s", d->card_size, strerror(-r));
		goto fail;
	}

	if (s->link.gen)
		log_info("sim: card memory %" PRIu64 " MiB, link gen%u x%u "
			 "(%" PRIu64 " MB/s each way)", d->card_size >> 20,
			 s->link.gen, s->link.width,
			 sim_link_rate(&s->link) / 1000000u);
	else
		log_info("sim: card memory %" PRIu64 " MiB, link unlimited",
			 d->card_size >> 20);
	if (d->faults.timeout || d->faults.error || d->faults.corrupt ||
	    d->faults.hang)
		log_notice("sim: fault injection (" SIM_FAULTS_ENV "): one in "
			   "timeout %u, error %u, corrupt %u, hang %u transfers "
			   "(0 = never)", d->faults.timeout, d->faults.error,
			   d->faults.corrupt, d->faults.hang);
	*ret_dev = d;
	return 0;

fail:
	sim_close(d);
	return r;
}

static void sim_close(struct device *d)
{
	unsigned dir, i;

	if (!d)
		return;
	for (dir = 0; dir < 2; dir++)
		for (i = 0; i < SIM_ENGINES; i++)
			sim_queue_close(d->queues[dir][i]);
	sim_card_release(d);
	if (d->lock_init)
		pthread_mutex_destroy(&d->lock);
	free(d);
}

static int sim_info(struct device *d, struct device_info *ret_info)
{
	struct device_info info;

	memset(&info, 0, sizeof(info));
	snprintf(info.name, sizeof(info.name), "sim");
	info.c2h_channels = SIM_ENGINES;
	info.h2c_channels = SIM_ENGINES;
	info.link_gen = d->sim.link.gen;
	info.link_width = d->sim.link.gen ? d->sim.link.width : 0;
	info.card_memory = d->card_size;
	info.align = SIM_ALIGN;
	info.max_inflight = SIM_MAX_INFLIGHT;
	info.max_transfer = SIM_XFER_MAX_LEN;
	info.xfer_align = SIM_XFER_ALIGN;
	*ret_info = info;
	return 0;
}

/* Take engine @q->engine of its direction, lay out memory, start the engine. */
static int sim_queue_start(struct device *d, struct device_queue *q)
{
	char name[16];
	int r;

	pthread_mutex_lock(&d->lock);
	if (d->queues[q->dir][q->engine]) {
		pthread_mutex_unlock(&d->lock);
		log_err("sim: %s: %s engine %u is already open", q->ch.name,
			q->dir == DIR_C2H ? "c2h" : "h2c", q->engine);
		return -EBUSY;
	}
	d->queues[q->dir][q->engine] = q;
	pthread_mutex_unlock(&d->lock);

	r = sim_frames_memory(q);
	if (!r)
		r = sim_crc_prepare(q);
	if (r)
		return r;

	r = -pthread_create(&q->thread, NULL, sim_engine_main, q);
	if (r) {
		log_err("sim: %s: cannot start the engine thread: %s",
			q->ch.name, strerror(-r));
		return r;
	}
	q->thread_started = true;
	snprintf(name, sizeof(name), "sim-%s%s%u", q->mem ? "m" : "",
		 q->dir == DIR_C2H ? "c2h" : "h2c", q->engine);
	pthread_setname_np(q->thread, name);
	return 0;
}

static int sim_queue_alloc(struct device *d, enum direction dir,
			   unsigned engine, unsigned n_pins,
			   struct device_queue **ret_q)
{
	struct device_queue *q;

	q = aligned_alloc(64, sim_round_up(sizeof(*q), 64));
	if (!q)
		return -ENOMEM;
	memset(q, 0, sizeof(*q));
	q->pins = calloc(n_pins, sizeof(*q->pins));
	if (!q->pins) {
		free(q);
		return -ENOMEM;
	}
	q->n_pins = n_pins;
	q->dev = d;
	q->dir = dir;
	q->engine = engine;
	atomic_init(&q->cfd, -1);
	*ret_q = q;
	return 0;
}

static int sim_queue_open(struct device *d, const struct config_channel *ch,
			  struct device_queue **ret_q)
{
	struct device_queue *q;
	int r;

	if (ch->direction != DIR_C2H && ch->direction != DIR_H2C)
		return -EINVAL;
	if (ch->engine >= SIM_ENGINES) {
		log_err("sim: %s: engine %u: the sim has %u per direction",
			ch->name, ch->engine, SIM_ENGINES);
		return -EINVAL;
	}
	if (ch->direction == DIR_C2H && ch->frame_size &&
	    ch->frame_size < FPGAD_SIMFRAME_HDR_SIZE) {
		log_err("sim: %s: frame size %" PRIu64 " is below the %u-byte "
			"frame header", ch->name, ch->frame_size,
			FPGAD_SIMFRAME_HDR_SIZE);
		return -EINVAL;
	}

	r = sim_queue_alloc(d, ch->direction, ch->engine, SIM_MAX_PINS, &q);
	if (r)
		return r;
	q->ch = *ch;
	q->depth = ch->queue_depth ? ch->queue_depth : SIM_DEFAULT_DEPTH;
	if (q->depth > SIM_MAX_INFLIGHT)
		q->depth = SIM_MAX_INFLIGHT;
	q->frame_size = q->dir == DIR_C2H ? ch->frame_size : 0;
	q->max_len = ch->slot_size > ch->frame_size ? ch->slot_size :
		     ch->frame_size;
	if (!q->max_len)
		q->max_len = SIM_DEFAULT_MAX_LEN;

	r = sim_queue_start(d, q);
	if (r) {
		sim_queue_close(q);
		return r;
	}
	*ret_q = q;
	return 0;
}

static int sim_mem_queue_open(struct device *d, enum direction dir,
			      unsigned engine, unsigned poll_us,
			      struct device_queue **ret_q)
{
	struct device_queue *q;
	int r;

	if ((dir != DIR_C2H && dir != DIR_H2C) || engine >= SIM_ENGINES)
		return -EINVAL;
	r = sim_queue_alloc(d, dir, engine, SIM_XFER_MAX_PINS, &q);
	if (r)
		return r;
	q->mem = true;
	snprintf(q->ch.name, sizeof(q->ch.name), "mem-%s%u",
		 dir == DIR_C2H ? "c2h" : "h2c", engine);
	q->ch.direction = dir;
	q->ch.engine = engine;
	q->depth = SIM_XFER_DEPTH;
	q->max_len = SIM_XFER_MAX_LEN;
	q->poll_ns = (uint64_t)poll_us * 1000u;

	r = sim_queue_start(d, q);
	if (r) {
		sim_queue_close(q);
		return r;
	}
	*ret_q = q;
	return 0;
}

static void sim_queue_close(struct device_queue *q)
{
	struct device *d;
	int cfd;

	if (!q)
		return;
	d = q->dev;
	if (q->thread_started) {
		atomic_store(&q->stop, 1);
		sim_engine_poke(q);
		pthread_join(q->thread, NULL);
	}
	sim_gpu_detach(q);
	sim_frames_memory_free(q);
	pthread_mutex_lock(&d->lock);
	if (d->queues[q->dir][q->engine] == q)
		d->queues[q->dir][q->engine] = NULL;
	pthread_mutex_unlock(&d->lock);
	cfd = atomic_load(&q->cfd);
	if (cfd >= 0)
		close(cfd);
	free(q->crc_tab);
	free(q->pins);
	free(q);
}

static struct sim_pin *sim_pin_find(struct device_queue *q, uint64_t handle,
				    uint32_t *ret_idx)
{
	uint64_t idx = (handle & 0xffffffffu) - 1;

	if (idx >= q->n_pins || !q->pins[idx].used ||
	    q->pins[idx].gen != (uint32_t)(handle >> 32))
		return NULL;
	*ret_idx = (uint32_t)idx;
	return &q->pins[idx];
}

static int sim_pin(struct device_queue *q, const struct dev_region *r,
		   uint64_t *ret_handle)
{
	struct sim_pin *p;
	unsigned i;

	if (!r->addr || !r->length || (uintptr_t)r->addr % SIM_ALIGN)
		return -EINVAL;
	switch (r->kind) {
	case DEV_REGION_HOST:
		break;
	case DEV_REGION_CUDA: {
		int ret = sim_gpu_attach(q, r->gpu);

		if (ret)
			return ret;
		break;
	}
	case DEV_REGION_DMABUF:
		/* Callers fall back to pinning by address: not an error. */
		log_debug("sim: %s: the sim cannot import a dma-buf; pin the "
			  "memory by address", q->ch.name);
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}

	for (i = 0; i < q->n_pins; i++)
		if (!q->pins[i].used)
			break;
	if (i == q->n_pins)
		return -ENOSPC;
	p = &q->pins[i];
	p->used = true;
	p->gen++;
	p->r = *r;
	p->inflight = 0;
	*ret_handle = (uint64_t)p->gen << 32 | (i + 1);
	return 0;
}

static int sim_unpin(struct device_queue *q, uint64_t handle)
{
	struct sim_pin *p;
	uint32_t idx;

	p = sim_pin_find(q, handle, &idx);
	if (!p)
		return -EINVAL;
	if (p->inflight)
		return -EBUSY;
	p->used = false;
	return 0;
}

static int sim_submit(struct device_queue *q, const struct dev_xfer *x)
{
	struct sim_sqe *e;
	struct sim_pin *p;
	uint32_t idx, head;

	p = sim_pin_find(q, x->handle, &idx);
	if (!p || !x->length || x->offset > p->r.length ||
	    x->length > p->r.length - x->offset)
		return -EINVAL;
	if (q->mem) {
		if (x->length > q->max_len || x->offset % SIM_XFER_ALIGN ||
		    x->length % SIM_XFER_ALIGN ||
		    x->card_addr % SIM_XFER_ALIGN ||
		    !sim_card_contains(q->dev, x->card_addr, x->length))
			return -EINVAL;
	} else if (x->offset % SIM_ALIGN ||
		   (x->length > q->max_len &&
		    (q->dir == DIR_H2C || !q->frame_size)) ||
		   (q->dir == DIR_C2H && !q->frame_size &&
		    x->length < FPGAD_SIMFRAME_HDR_SIZE)) {
		return -EINVAL;
	}
	if (q->submitted - q->reaped >= SIM_MAX_INFLIGHT)
		return -EAGAIN;

	head = atomic_load_explicit(&q->sq_head, memory_order_relaxed);
	e = &q->sq[head % SIM_MAX_INFLIGHT];
	e->x = *x;
	e->addr = (unsigned char *)p->r.addr + x->offset;
	e->kind = p->r.kind;
	e->pin = idx;
	atomic_store(&q->sq_head, head + 1);
	q->submitted++;
	p->inflight++;
	sim_count(&q->st.submitted, 1);

	if (atomic_load(&q->eng_sleep) == SIM_SLEEP_WORK) {
		atomic_fetch_add(&q->eng_word, 1);
		futex_wake((uint32_t *)&q->eng_word, false);
	}
	return 0;
}

static unsigned sim_cq_pop(struct device_queue *q, struct dev_completion *out,
			   unsigned max)
{
	uint32_t tail = atomic_load_explicit(&q->cq_tail, memory_order_relaxed);
	uint32_t head = atomic_load_explicit(&q->cq_head, memory_order_acquire);
	unsigned n = 0;

	while (tail != head && n < max) {
		const struct sim_cqe *c = &q->cq[tail % SIM_MAX_INFLIGHT];

		out[n++] = c->c;
		q->pins[c->pin].inflight--;
		q->reaped++;
		tail++;
	}
	atomic_store_explicit(&q->cq_tail, tail, memory_order_release);
	return n;
}

/* wait_until()'s check: a completion to take, or a kick. */
static int sim_cq_ready(const void *arg)
{
	struct device_queue *q = (struct device_queue *)arg;

	return atomic_load(&q->cq_head) != atomic_load(&q->cq_tail) ||
	       atomic_load(&q->kicked);
}

static int sim_wait(struct device_queue *q, struct dev_completion *out,
		    unsigned max, int timeout_ms)
{
	uint64_t deadline = timeout_ms > 0 ? clock_deadline_ns(timeout_ms) : 0;
	unsigned n;

	if (!max)
		return 0;
	if (!out)
		return -EINVAL;
	/* The completion descriptor was written: it is read now. */
	if (atomic_load(&q->cfd_fired)) {
		uint64_t v;

		atomic_store(&q->cfd_fired, 0);
		if (read(atomic_load(&q->cfd), &v, sizeof(v)) < 0 &&
		    errno != EAGAIN)
			log_warn("sim: %s: completion descriptor: %s",
				 q->ch.name, strerror(errno));
	}
	for (;;) {
		n = sim_cq_pop(q, out, max);
		if (n)
			return (int)n;
		if (atomic_exchange(&q->kicked, 0) || !timeout_ms)
			return 0;
		if (wait_until((uint32_t *)&q->cq_sleep, (uint32_t *)&q->cq_word,
			       sim_cq_ready, q, clock_ms_left(deadline), false) == -ETIMEDOUT)
			return (int)sim_cq_pop(q, out, max);
	}
}

/*
 * The poller of the completion descriptor is about to sleep: the engine
 * writes it at the next completion.  1 when a completion came in
 * meanwhile: look again.
 */
static int sim_arm_completion(struct device_queue *q)
{
	if (atomic_load(&q->cfd) < 0)
		return 0;
	atomic_store(&q->cfd_armed, 1);
	if (atomic_load(&q->cq_head) == atomic_load(&q->cq_tail))
		return 0;
	atomic_store(&q->cfd_armed, 0);
	return 1;
}

static int sim_completion_fd(struct device_queue *q)
{
	int fd = atomic_load(&q->cfd);

	if (fd >= 0)
		return fd;
	fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	atomic_store(&q->cfd, fd);
	return fd;
}

static void sim_kick(struct device_queue *q)
{
	wait_kick((uint32_t *)&q->kicked, (uint32_t *)&q->cq_sleep,
		  (uint32_t *)&q->cq_word, false);
}

static int sim_reset(struct device_queue *q)
{
	uint32_t req = atomic_fetch_add(&q->reset_req, 1) + 1;
	uint32_t ack;

	sim_engine_poke(q);
	while ((ack = atomic_load(&q->reset_ack)) != req)
		futex_wait((uint32_t *)&q->reset_ack, ack, 0, false);
	log_debug("sim: %s: engine reset", q->ch.name);
	return 0;
}

int sim_queue_stats(struct device_queue *q, struct sim_queue_stats *ret_stats)
{
	struct sim_queue_stats s;

	if (!q)
		return -EINVAL;
	memset(&s, 0, sizeof(s));
	s.submitted = atomic_load(&q->st.submitted);
	s.completed = atomic_load(&q->st.completed);
	s.bytes = atomic_load(&q->st.bytes);
	s.frames = atomic_load(&q->st.frames);
	s.overruns = atomic_load(&q->st.overruns);
	s.sink_good = atomic_load(&q->st.sink_good);
	s.sink_bad = atomic_load(&q->st.sink_bad);
	s.sink_last_error = atomic_load(&q->st.sink_last_error);
	s.sink_last_offset = atomic_load(&q->st.sink_last_offset);
	s.fault_timeout = atomic_load(&q->st.fault_timeout);
	s.fault_error = atomic_load(&q->st.fault_error);
	s.fault_corrupt = atomic_load(&q->st.fault_corrupt);
	s.fault_hang = atomic_load(&q->st.fault_hang);
	s.timeouts = atomic_load(&q->st.timeouts);
	s.canceled = atomic_load(&q->st.canceled);
	*ret_stats = s;
	return 0;
}

static int sim_sink_counts(struct device_queue *q, uint64_t *ret_good,
			   uint64_t *ret_bad)
{
	*ret_good = atomic_load(&q->st.sink_good);
	*ret_bad = atomic_load(&q->st.sink_bad);
	return 0;
}

const struct device_ops device_sim_ops = {
	.name = "sim",
	.open = sim_open,
	.close = sim_close,
	.info = sim_info,
	.queue_open = sim_queue_open,
	.queue_close = sim_queue_close,
	.pin = sim_pin,
	.unpin = sim_unpin,
	.submit = sim_submit,
	.wait = sim_wait,
	.kick = sim_kick,
	.reset = sim_reset,
	.sink_counts = sim_sink_counts,
	.mem_queue_open = sim_mem_queue_open,
	.completion_fd = sim_completion_fd,
	.arm_completion = sim_arm_completion,
	.scrub = sim_card_scrub,
};
