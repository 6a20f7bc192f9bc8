// SPDX-License-Identifier: MIT
/*
 * topology.c - libfpgad's Topology query: the card against every GPU of
 * fpgad's host, and what auto chose for each channel.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"

static void topo_end(struct fpgad_topo_end *o, const Fpgad__TopologyEnd *in)
{
	memset(o, 0, sizeof(*o));
	o->numa_node = -1;
	o->iommu_group = -1;
	if (!in)
		return;
	COPY(o->address, in->address);
	o->found = in->found;
	o->numa_node = in->numa_node;
	COPY(o->host_bridge, in->host_bridge);
	COPY(o->root_port, in->root_port);
	o->iommu_group = in->iommu_group;
	COPY(o->iommu, in->iommu);
}

static void topo_gpu(struct fpgad_topo_gpu *o, const Fpgad__TopologyPair *in)
{
	topo_end(&o->gpu, in->gpu);
	COPY(o->path_class, in->path_class);
	COPY(o->verdict, in->verdict);
	COPY(o->reason, in->reason);
	COPY(o->common_bridge, in->common_bridge);
	COPY(o->acs_bridge, in->acs_bridge);
	o->kernel = in->kernel;
	o->distance = in->distance;
	COPY(o->warning, in->warning);
}

static void topo_channel(struct fpgad_topo_channel *o,
			 const Fpgad__TopologyChannel *in)
{
	COPY(o->name, in->name);
	COPY(o->gpu, in->gpu);
	COPY(o->mode, in->mode);
	COPY(o->mode_reason, in->mode_reason);
	o->gpudirect_bps = in->gpudirect_bps;
	o->bounce_bps = in->bounce_bps;
	o->integrated = in->integrated;
}

int fpgad_topology_get(fpgad_client *c, struct fpgad_topology **ret_topo)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__TopologyRequest body = FPGAD__TOPOLOGY_REQUEST__INIT;
	const Fpgad__TopologyReply *tr;
	Fpgad__Response *resp;
	struct fpgad_topology *t;
	int r;

	req.body_case = FPGAD__REQUEST__BODY_TOPOLOGY;
	req.topology = &body;
	r = conn_transact(c, &req, &resp);
	if (r < 0)
		return r;
	r = conn_expect(c, resp, FPGAD__RESPONSE__BODY_TOPOLOGY);
	if (r < 0)
		return r;
	tr = resp->topology;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto oom;
	t->gpus = calloc(tr->n_gpus + 1, sizeof(*t->gpus));
	t->channels = calloc(tr->n_channels + 1, sizeof(*t->channels));
	if (!t->gpus || !t->channels)
		goto oom;
	COPY(t->card, tr->card);
	topo_end(&t->card_end, tr->card_end);
	t->simulated = tr->simulated;
	t->vm = tr->vm;
	COPY(t->vm_reason, tr->vm_reason);
	COPY(t->sysfs, tr->sysfs);
	COPY(t->warning, tr->warning);
	t->n_gpus = (uint32_t)tr->n_gpus;
	for (size_t i = 0; i < tr->n_gpus; i++)
		topo_gpu(&t->gpus[i], tr->gpus[i]);
	t->n_channels = (uint32_t)tr->n_channels;
	for (size_t i = 0; i < tr->n_channels; i++)
		topo_channel(&t->channels[i], tr->channels[i]);
	fpgad__response__free_unpacked(resp, NULL);
	*ret_topo = t;
	return 0;
oom:
	fpgad__response__free_unpacked(resp, NULL);
	fpgad_topology_free(t);
	return -ENOMEM;
}

void fpgad_topology_free(struct fpgad_topology *t)
{
	if (!t)
		return;
	free(t->gpus);
	free(t->channels);
	free(t);
}
