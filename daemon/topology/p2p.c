// SPDX-License-Identifier: MIT
/*
 * p2p.c - peer-to-peer on this host (p2p.h): the start-time survey of the
 * channels (topology, a probe per mode, auto's choice) and the Topology
 * reply.
 *
 * A probe borrows the channel's DMA engine before the channel exists and
 * gives it back closed: its GPU memory is a ring of 2 x queue_depth slots
 * on the channel's GPU, pinned as gpudirect pins it (a dma-buf, else the
 * device pointer); bounce adds pinned host staging and a CUDA copy engine
 * as the second stage.  Without a GPU (or a build without CUDA) no channel
 * is in GPU memory and there is nothing to choose.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memory/copy.h"
#include "memory/memory.h"
#include "log.h"
#include "topology/p2p.h"
#include "topology/topology.h"

#define P2P_MAX_GPUS 64
#define P2P_PROBE_SLOTS_MAX 64u
/* The burst's bytes per mode, at most: [device] probe_ms bounds its time. */
#define P2P_PROBE_MAX_BYTES (256ull << 20)

struct p2p_record {
	char name[CONFIG_NAME_MAX];
	char gpu[TOPO_ADDR_LEN];	/* its GPU's PCI address, "" unknown */
	struct probe_rates rates;
	bool chosen;
	struct probe_choice choice;
};

struct p2p {
	const struct device_ops *ops;
	struct device *dev;
	char card[TOPO_ADDR_LEN];	/* PCI address, or TOPO_SIM */
	char card_name[64];
	bool test_root;			/* read below $FPGAD_TEST_SYSROOT */
	char sysfs[PATH_MAX];
	char cpuinfo[PATH_MAX];
	unsigned n;
	struct p2p_record rec[CONFIG_MAX_CHANNELS];
	unsigned n_cfg_gpus;		/* GPUs configured by PCI address */
	char cfg_gpus[CONFIG_MAX_CHANNELS + 1][TOPO_ADDR_LEN];
};

struct p2p_answer {
	Fpgad__TopologyReply reply;
	Fpgad__TopologyEnd card_end;
	struct topo_end card;
	struct topo_host host;
	char warning[192];
	struct topo_pair *pairs;
	Fpgad__TopologyPair *gpus;
	Fpgad__TopologyPair **gpu_ptrs;
	Fpgad__TopologyEnd *gpu_ends;
	Fpgad__TopologyChannel *chans;
	Fpgad__TopologyChannel **chan_ptrs;
};

static int p2p_kernel_path(void *user, struct fpgad_dma_p2p_path *path)
{
	const struct p2p *p = user;

	return p->ops->p2p_path(p->dev, path);
}

static void p2p_source(const struct p2p *p, struct topo_source *ret_src)
{
	memset(ret_src, 0, sizeof(*ret_src));
	ret_src->sysfs = p->sysfs;
	ret_src->cpuinfo = p->cpuinfo;
	if (p->ops->p2p_path && strcmp(p->card, TOPO_SIM)) {
		ret_src->path = p2p_kernel_path;
		ret_src->user = (void *)p;
	}
}

/* @addr in canonical form; false when it is no PCI address (an ordinal). */
static bool p2p_canon(const char *addr, char out[TOPO_ADDR_LEN])
{
	uint32_t domain;
	uint8_t bus, devfn;

	if (topology_addr_parse(addr, &domain, &bus, &devfn))
		return false;
	topology_addr_format(domain, bus, devfn, out);
	return true;
}

/* Add @addr to @list once, in canonical form; other strings are not GPUs. */
static void p2p_add_gpu(char (*list)[TOPO_ADDR_LEN], unsigned *n, unsigned max,
			const char *addr)
{
	char canon[TOPO_ADDR_LEN];

	if (!p2p_canon(addr, canon))
		return;
	for (unsigned i = 0; i < *n; i++)
		if (!strcmp(list[i], canon))
			return;
	if (*n < max)
		memcpy(list[(*n)++], canon, sizeof(canon));
}

/* --- probes ------------------------------------------------------------------ */

/* As the channel pins its ring for gpudirect: a dma-buf, else by address. */
static void p2p_probe_gpudirect(const struct p2p *p, struct device_queue *q,
				struct mem_region *mem,
				const struct probe_params *params,
				struct probe_rates *rates)
{
	struct probe_result res;
	uint64_t handle;
	int r;

	r = device_pin_region(p->ops, q, &memory_cuda_ops, mem, &handle);
	if (r == 0) {
		r = probe_run(p->ops, q, handle, params, NULL, &res);
		p->ops->unpin(q, handle);
	}
	if (r) {
		rates->gpudirect_err = r;
		log_notice("p2p: gpudirect probe: %s", strerror(-r));
		return;
	}
	rates->gpudirect = res.bytes_per_s;
}

/* Bounce's second stage: the copy from host staging into the GPU slot. */
struct p2p_bounce {
	struct copy_engine *ce;
	char *staging;
	char *gpu;
	uint64_t stride;
};

static int p2p_bounce_start(void *user, unsigned slot, uint64_t length)
{
	struct p2p_bounce *b = user;
	uint64_t off = (uint64_t)slot * b->stride;

	return copy_submit(b->ce, b->gpu + off, b->staging + off, length,
			   COPY_H2D, slot);
}

static int p2p_bounce_finish(void *user, bool block, unsigned *ret_slot)
{
	struct p2p_bounce *b = user;
	struct copy_done done;
	int r;

	r = copy_reap(b->ce, block, &done);
	if (r <= 0)
		return r;
	*ret_slot = (unsigned)done.cookie;
	return done.status ? done.status : 1;
}

static void p2p_probe_bounce(const struct p2p *p, struct device_queue *q,
			     struct mem_region *mem,
			     const struct probe_params *params,
			     struct probe_rates *rates)
{
	size_t len = (size_t)params->slots * params->stride;
	struct p2p_bounce b = { .gpu = mem->dev, .stride = params->stride };
	struct probe_stage stage = {
		.user = &b, .start = p2p_bounce_start, .finish = p2p_bounce_finish,
	};
	struct dev_region reg = { .kind = DEV_REGION_HOST, .fd = -1, .length = len };
	struct probe_result res;
	void *staging = NULL;
	uint64_t handle = 0;
	int r;

	r = copy_host_alloc(len, &staging);
	if (r)
		goto out;
	b.staging = staging;
	reg.addr = staging;
	r = p->ops->pin(q, &reg, &handle);
	if (r)
		goto out;
	r = copy_open(mem->gpu, params->slots, &b.ce);
	if (r == 0)
		r = probe_run(p->ops, q, handle, params, &stage, &res);
	copy_close(b.ce);
	p->ops->unpin(q, handle);
out:
	copy_host_free(staging);
	if (r) {
		rates->bounce_err = r;
		log_notice("p2p: bounce probe: %s", strerror(-r));
		return;
	}
	rates->bounce = res.bytes_per_s;
}

/*
 * Topology, probes and choice for one c2h channel in GPU memory, on @use_q
 * (the channel's own queue, idle) or on a queue of its engine opened here.
 */
static void p2p_measure(struct p2p *p, const struct config *cfg,
			const struct config_channel *cc,
			const struct topo_host *host,
			const struct device_info *info, struct p2p_record *rec,
			struct device_queue *use_q)
{
	const char *gpu = cc->gpu[0] ? cc->gpu : cfg->device.gpu;
	struct probe_params params = { 0 };
	struct mem_region *mem = NULL;
	struct device_queue *q = NULL;
	struct topo_source src;
	struct topo_pair topo;
	bool have_topo;
	char why[160];
	int ordinal, r;

	/*
	 * No GPU: the channel runs in host memory, nothing to choose; nor on
	 * an integrated GPU, whose ring the card writes where the GPU reads.
	 */
	if (memory_cuda_probe(gpu, &ordinal, why, sizeof(why)) < 0 ||
	    memory_cuda_integrated(ordinal))
		return;
	params.depth = cc->queue_depth;
	if (info->max_inflight && params.depth > info->max_inflight)
		params.depth = info->max_inflight;
	params.slots = 2 * params.depth < P2P_PROBE_SLOTS_MAX ?
		       2 * params.depth : P2P_PROBE_SLOTS_MAX;
	params.length = cc->frame_size;
	params.stride = cc->slot_size;
	params.max_bytes = P2P_PROBE_MAX_BYTES;
	params.max_ms = cfg->device.probe_ms;
	params.timeout_ms = cfg->device.dma_timeout_ms;

	r = memory_cuda_ops.alloc((size_t)params.slots * params.stride, gpu,
				  cc->name, 0, &mem);
	if (r < 0) {
		rec->rates.gpudirect_err = rec->rates.bounce_err = r;
		return;
	}
	p2p_source(p, &src);
	have_topo = p2p_canon(mem->gpu_bus_id, rec->gpu) &&
		    topology_pair(&src, host, p->card, rec->gpu, &topo) == 0;

	if (params.max_ms && use_q) {
		p2p_probe_gpudirect(p, use_q, mem, &params, &rec->rates);
		p2p_probe_bounce(p, use_q, mem, &params, &rec->rates);
	} else if (params.max_ms) {
		struct config_channel pc = *cc;

		/* As fast as the link goes: a paced source measures nothing. */
		pc.frame_rate = 0;
		r = p->ops->queue_open(p->dev, &pc, &q);
		if (r < 0) {
			rec->rates.gpudirect_err = rec->rates.bounce_err = r;
		} else {
			p2p_probe_gpudirect(p, q, mem, &params, &rec->rates);
			p2p_probe_bounce(p, q, mem, &params, &rec->rates);
			p->ops->queue_close(q);
		}
	}
	memory_cuda_ops.free(mem);

	if (probe_choose(cfg->device.auto_choice, have_topo ? &topo : NULL,
			 &rec->rates, &rec->choice) == 0) {
		rec->chosen = true;
		log_info("channel %s: auto: %s", cc->name, rec->choice.reason);
	}
}

void p2p_card(const struct p2p *p, struct p2p_card *ret_card)
{
	struct p2p_card c = { .inv.numa_node = -1 };
	struct device_info info;
	struct topo_source src;

	if (strcmp(p->card, TOPO_SIM)) {
		p2p_source(p, &src);
		topology_inventory(&src, p->card, &c.inv, c.warning, sizeof(c.warning));
	} else if (p->ops->info(p->dev, &info) == 0) {
		char link[32] = "unlimited";

		/* The sim's link model is its link, current and maximum. */
		c.inv.link_gen = c.inv.max_link_gen = info.link_gen;
		c.inv.link_width = c.inv.max_link_width = info.link_width;
		if (info.link_gen)
			snprintf(link, sizeof(link), "PCIe Gen%u x%u", info.link_gen,
				 info.link_width);
		snprintf(c.simulates, sizeof(c.simulates),
			 "a DMA card with %u C2H and %u H2C engines, %llu MiB of card memory, link %s",
			 info.c2h_channels, info.h2c_channels,
			 (unsigned long long)(info.card_memory >> 20), link);
	}
	*ret_card = c;
}

int p2p_survey(const struct config *cfg, const struct device_ops *ops,
	       struct device *dev, struct p2p **ret_p2p)
{
	const char *root = getenv(P2P_TEST_ROOT_ENV);
	struct device_info info;
	struct topo_source src;
	struct topo_host host;
	struct p2p *p;
	int r;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ops = ops;
	p->dev = dev;
	r = ops->info(dev, &info);
	if (r < 0) {
		free(p);
		return r;
	}
	snprintf(p->card_name, sizeof(p->card_name), "%s", info.name);
	snprintf(p->card, sizeof(p->card), "%s",
		 info.pci_addr[0] ? info.pci_addr : TOPO_SIM);
	if (root && root[0]) {
		p->test_root = true;
		snprintf(p->sysfs, sizeof(p->sysfs), "%.*s/sys", PATH_MAX - 8, root);
		snprintf(p->cpuinfo, sizeof(p->cpuinfo), "%.*s/proc/cpuinfo",
			 PATH_MAX - 16, root);
		log_warn("p2p: reading the PCI tree below %s ($%s), not /sys: "
			 "a setting for tests", root, P2P_TEST_ROOT_ENV);
	} else {
		snprintf(p->sysfs, sizeof(p->sysfs), "/sys");
		snprintf(p->cpuinfo, sizeof(p->cpuinfo), "/proc/cpuinfo");
	}
	p2p_add_gpu(p->cfg_gpus, &p->n_cfg_gpus, CONFIG_MAX_CHANNELS + 1,
		    cfg->device.gpu);
	for (unsigned i = 0; i < cfg->n_channels; i++)
		p2p_add_gpu(p->cfg_gpus, &p->n_cfg_gpus, CONFIG_MAX_CHANNELS + 1,
			    cfg->channels[i].gpu);

	p2p_source(p, &src);
	topology_host(&src, &host);
	for (unsigned i = 0; i < cfg->n_channels; i++) {
		const struct config_channel *cc = &cfg->channels[i];
		struct p2p_record *rec = &p->rec[p->n++];

		snprintf(rec->name, sizeof(rec->name), "%s", cc->name);
		if (cc->direction != DIR_C2H || cc->mode != MODE_AUTO ||
		    cc->source != SOURCE_CARD ||
		    cc->memory == MEMORY_HOST || cfg->device.auto_choice == AUTO_FIRST)
			continue;
		p2p_measure(p, cfg, cc, &host, &info, rec, NULL);
	}
	*ret_p2p = p;
	return 0;
}

void p2p_free(struct p2p *p)
{
	free(p);
}

static const struct p2p_record *p2p_record(const struct p2p *p, const char *name)
{
	for (unsigned i = 0; p && i < p->n; i++)
		if (!strcmp(p->rec[i].name, name))
			return &p->rec[i];
	return NULL;
}

const struct probe_choice *p2p_choice(const struct p2p *p, const char *name)
{
	const struct p2p_record *rec = p2p_record(p, name);

	return rec && rec->chosen ? &rec->choice : NULL;
}

int p2p_reprobe(struct p2p *p, const struct config *cfg,
		const struct config_channel *cc, struct device_queue *q,
		const struct probe_choice **ret_choice,
		const struct probe_rates **ret_rates)
{
	struct p2p_record *rec = (struct p2p_record *)p2p_record(p, cc->name);
	struct device_info info;
	struct topo_source src;
	struct topo_host host;
	int r;

	if (!rec)
		return -ENOENT;
	r = p->ops->info(p->dev, &info);
	if (r < 0)
		return r;
	p2p_source(p, &src);
	topology_host(&src, &host);
	memset(&rec->rates, 0, sizeof(rec->rates));
	rec->chosen = false;
	p2p_measure(p, cfg, cc, &host, &info, rec, q);
	if (!rec->chosen)
		return rec->rates.gpudirect_err ? rec->rates.gpudirect_err : -EIO;
	*ret_choice = &rec->choice;
	*ret_rates = &rec->rates;
	return 0;
}

/* --- the Topology reply ------------------------------------------------------------ */

static void p2p_end(const struct topo_end *e, Fpgad__TopologyEnd *o)
{
	fpgad__topology_end__init(o);
	o->address = (char *)e->addr;
	o->found = e->found;
	o->numa_node = e->numa_node;
	o->host_bridge = (char *)e->host_bridge;
	o->root_port = e->n_bridges ? (char *)e->bridges[0] : "";
	o->iommu_group = e->iommu_group;
	o->iommu = (char *)topology_iommu_name(e->iommu);
}

static void p2p_pair(const struct topo_pair *t, Fpgad__TopologyEnd *end,
		     Fpgad__TopologyPair *o)
{
	fpgad__topology_pair__init(o);
	p2p_end(&t->gpu, end);
	o->gpu = end;
	o->path_class = (char *)topology_class_name(t->cls);
	o->verdict = (char *)topology_verdict_name(t->verdict);
	o->reason = (char *)t->reason;
	o->common_bridge = (char *)t->common;
	o->acs_bridge = (char *)t->acs_bridge;
	o->kernel = t->kernel;
	o->distance = t->kernel ? t->distance : 0;
	o->warning = (char *)t->warning;
}

static int p2p_gpu_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

int p2p_topology(const struct p2p *p, const struct p2p_channel_view *chs,
		 unsigned n_chs, struct p2p_answer **ret_answer)
{
	char (*gpus)[TOPO_ADDR_LEN] = NULL;
	Fpgad__TopologyReply *o;
	struct topo_source src;
	struct p2p_answer *a;
	unsigned n = 0, k = 0;
	int r;

	a = calloc(1, sizeof(*a));
	gpus = calloc(P2P_MAX_GPUS, sizeof(*gpus));
	if (!a || !gpus)
		goto oom;
	p2p_source(p, &src);
	topology_host(&src, &a->host);
	snprintf(a->warning, sizeof(a->warning), "%s", a->host.warning);

	/* Every NVIDIA GPU of the host, and any GPU a channel names. */
	r = topology_gpus(&src, gpus, P2P_MAX_GPUS, &n);
	if (r < 0 && !a->warning[0])
		snprintf(a->warning, sizeof(a->warning), "%.100s/bus/pci/devices: %s",
			 p->sysfs, strerror(-r));
	for (unsigned i = 0; i < p->n_cfg_gpus; i++)
		p2p_add_gpu(gpus, &n, P2P_MAX_GPUS, p->cfg_gpus[i]);
	for (unsigned i = 0; i < p->n; i++)
		p2p_add_gpu(gpus, &n, P2P_MAX_GPUS, p->rec[i].gpu);
	for (unsigned i = 0; i < n_chs; i++)
		p2p_add_gpu(gpus, &n, P2P_MAX_GPUS, chs[i].gpu);
	qsort(gpus, n, sizeof(gpus[0]), p2p_gpu_cmp);

	a->pairs = calloc(n + 1, sizeof(*a->pairs));
	a->gpus = calloc(n + 1, sizeof(*a->gpus));
	a->gpu_ptrs = calloc(n + 1, sizeof(*a->gpu_ptrs));
	a->gpu_ends = calloc(n + 1, sizeof(*a->gpu_ends));
	a->chans = calloc(n_chs + 1, sizeof(*a->chans));
	a->chan_ptrs = calloc(n_chs + 1, sizeof(*a->chan_ptrs));
	if (!a->pairs || !a->gpus || !a->gpu_ptrs || !a->gpu_ends || !a->chans ||
	    !a->chan_ptrs)
		goto oom;
	for (unsigned i = 0; i < n; i++) {
		if (topology_pair(&src, &a->host, p->card, gpus[i], &a->pairs[k]))
			continue;
		p2p_pair(&a->pairs[k], &a->gpu_ends[k], &a->gpus[k]);
		a->gpu_ptrs[k] = &a->gpus[k];
		k++;
	}

	o = &a->reply;
	fpgad__topology_reply__init(o);
	o->card = (char *)p->card_name;
	o->simulated = !strcmp(p->card, TOPO_SIM);
	if (o->simulated) {
		a->card.numa_node = -1;
		a->card.iommu_group = -1;
	} else {
		topology_end(&src, p->card, &a->card, a->warning, sizeof(a->warning));
	}
	p2p_end(&a->card, &a->card_end);
	o->card_end = &a->card_end;
	o->vm = a->host.vm;
	o->vm_reason = a->host.vm_why;
	o->n_gpus = k;
	o->gpus = a->gpu_ptrs;
	for (unsigned i = 0; i < n_chs; i++) {
		const struct p2p_record *rec = p2p_record(p, chs[i].name);
		Fpgad__TopologyChannel *c = &a->chans[i];

		fpgad__topology_channel__init(c);
		c->name = (char *)chs[i].name;
		c->gpu = (char *)chs[i].gpu;
		c->mode = (char *)chs[i].mode;
		c->mode_reason = (char *)chs[i].mode_reason;
		c->integrated = chs[i].integrated;
		if (rec) {
			c->gpudirect_bps = rec->rates.gpudirect;
			c->bounce_bps = rec->rates.bounce;
		}
		a->chan_ptrs[i] = c;
	}
	o->n_channels = n_chs;
	o->channels = a->chan_ptrs;
	o->sysfs = p->test_root ? (char *)p->sysfs : "";
	o->warning = a->warning;
	free(gpus);
	*ret_answer = a;
	return 0;
oom:
	free(gpus);
	p2p_answer_free(a);
	return -ENOMEM;
}

Fpgad__TopologyReply *p2p_answer_reply(struct p2p_answer *a)
{
	return &a->reply;
}

void p2p_answer_free(struct p2p_answer *a)
{
	if (!a)
		return;
	free(a->pairs);
	free(a->gpus);
	free(a->gpu_ptrs);
	free(a->gpu_ends);
	free(a->chans);
	free(a->chan_ptrs);
	free(a);
}
