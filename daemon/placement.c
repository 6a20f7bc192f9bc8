// SPDX-License-Identifier: MIT
/*
 * placement.c - the card's NUMA node and nearest GPU, applied (placement.h).
 * The card's node is its sysfs numa_node; the simulated card has none,
 * and models the node [sim] numa_node names.  $FPGAD_TEST_SYSROOT stands
 * in for / in tests, as for the topology survey.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement.h"
#include "preflight.h"
#include "log.h"
#include "topology/p2p.h"
#include "topology/place.h"

#define PLACEMENT_MAX_GPUS 64
#define GPU_NEAREST "nearest"

struct card_site {
	char sysfs[PATH_MAX];
	struct topo_source src;
	char card[TOPO_ADDR_LEN];	/* PCI address, or TOPO_SIM */
	int node;			/* -1: none */
};

/* Where the card is: its address and NUMA node; -EINVAL for a bad [sim] numa_node. */
static int card_site(struct core *d, struct card_site *ret)
{
	const char *root = getenv(P2P_TEST_ROOT_ENV);
	struct device_info info;
	struct topo_end *end;
	char warn[160] = "", *e;
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->node = -1;
	if (root && root[0]) {
		snprintf(ret->sysfs, sizeof(ret->sysfs), "%.*s/sys", PATH_MAX - 8, root);
		ret->src.sysfs = ret->sysfs;
	}
	r = d->dev_ops->info(d->dev, &info);
	if (r < 0)
		return r;
	snprintf(ret->card, sizeof(ret->card), "%s", info.pci_addr[0] ? info.pci_addr : TOPO_SIM);
	if (!info.pci_addr[0]) {
		if (!strcmp(d->cfg.sim.numa_node, "none"))
			return 0;
		errno = 0;
		ret->node = (int)strtol(d->cfg.sim.numa_node, &e, 10);
		if (errno || *e || e == d->cfg.sim.numa_node || ret->node < 0) {
			log_err("[sim] numa_node: '%s' is not a node number or none",
				d->cfg.sim.numa_node);
			return -EINVAL;
		}
		return 0;
	}
	end = malloc(sizeof(*end));
	if (!end)
		return -ENOMEM;
	if (topology_end(&ret->src, info.pci_addr, end, warn, sizeof(warn)) == 0)
		ret->node = end->numa_node;
	free(end);
	return 0;
}

/* Every "nearest" among the GPU settings becomes @addr. */
static void replace_nearest(struct config *cfg, const char *addr)
{
	if (!strcmp(cfg->device.gpu, GPU_NEAREST))
		snprintf(cfg->device.gpu, sizeof(cfg->device.gpu), "%s", addr);
	for (unsigned i = 0; i < cfg->n_channels; i++)
		if (!strcmp(cfg->channels[i].gpu, GPU_NEAREST))
			snprintf(cfg->channels[i].gpu, sizeof(cfg->channels[i].gpu), "%s", addr);
}

static bool wants_nearest(const struct config *cfg)
{
	bool any = !strcmp(cfg->device.gpu, GPU_NEAREST);

	for (unsigned i = 0; i < cfg->n_channels; i++)
		any |= !strcmp(cfg->channels[i].gpu, GPU_NEAREST);
	return any;
}

int placement_gpu(struct core *d)
{
	char (*gpus)[TOPO_ADDR_LEN] = NULL;
	struct card_site *site;
	unsigned n = 0, idx = 0;
	int r;

	d->gpu_choice[0] = '\0';
	if (!wants_nearest(&d->cfg))
		return 0;
	site = malloc(sizeof(*site));
	gpus = calloc(PLACEMENT_MAX_GPUS, sizeof(*gpus));
	r = site && gpus ? card_site(d, site) : -ENOMEM;
	if (r == 0)
		r = topology_gpus(&site->src, gpus, PLACEMENT_MAX_GPUS, &n);
	if (r < 0) {
		log_err("gpu = nearest: cannot list the GPUs: %s", strerror(-r));
		goto out;
	}
	if (!n) {
		/* As gpu = 0: memory = auto falls back to host memory. */
		snprintf(d->gpu_choice, sizeof(d->gpu_choice),
			 "nearest: no NVIDIA GPU on this host's PCI bus; GPU 0");
		replace_nearest(&d->cfg, "0");
		goto said;
	}
	r = place_nearest_gpu(&site->src, site->card, site->node,
			      (const char (*)[TOPO_ADDR_LEN])gpus, n, &idx, d->gpu_choice,
			      sizeof(d->gpu_choice));
	if (r < 0) {
		log_err("gpu = nearest: %s: %s", site->card, strerror(-r));
		goto out;
	}
	replace_nearest(&d->cfg, gpus[idx]);
said:
	log_info("gpu: %s", d->gpu_choice);
out:
	free(gpus);
	free(site);
	return r;
}

int placement_threads(struct core *d)
{
	struct card_site *site;
	int r;

	d->numa_placed[0] = '\0';
	if (d->cfg.device.numa == NUMA_OFF) {
		snprintf(d->numa_placed, sizeof(d->numa_placed), "off");
		return 0;
	}
	site = malloc(sizeof(*site));
	if (!site)
		return -ENOMEM;
	r = card_site(d, site);
	if (r < 0 || site->node < 0) {
		/* The simulated card models no node unless told. */
		if (r == 0 && strcmp(site->card, TOPO_SIM))
			snprintf(d->numa_placed, sizeof(d->numa_placed),
				 "the card is on no NUMA node: threads run anywhere");
		goto out;
	}
	r = place_on_node(&site->src, site->node, d->numa_placed, sizeof(d->numa_placed));
	if (r < 0 && !strcmp(site->card, TOPO_SIM)) {
		/* [sim] numa_node names a node this host lacks: the config's error. */
		char err[PATH_MAX + 256] = "";

		preflight_numa_error(&d->cfg, site->node, r, err, sizeof(err));
		log_err("%s", err);
		goto out;
	}
	if (r < 0) {
		/* A real card's node, out of this process's reach (a cpuset). */
		snprintf(d->numa_placed, sizeof(d->numa_placed),
			 "node %d: its CPUs cannot be used (%s): threads run anywhere",
			 site->node, strerror(-r));
		log_warn("numa: %s", d->numa_placed);
		r = 0;
		goto out;
	}
	log_info("numa: %s", d->numa_placed);
out:
	free(site);
	return r;
}
