// SPDX-License-Identifier: MIT
/*
 * cmd_topo.c - fpgactl topo: the card against every GPU of fpgad's host, the
 * way nvidia-smi topo -m shows GPU pairs, with the verdict on
 * peer-to-peer and, for each channel, the mode auto chose and the rates
 * it measured; fpgactl probe: measure an idle channel again.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fpgactl.h"

static const char *const legend[] = {
	"PIX  = through one PCIe switch",
	"PXB  = through several PCIe switches, not the host bridge",
	"PHB  = through the PCIe host bridge (the CPU's root complex)",
	"NODE = between host bridges of one NUMA node",
	"SYS  = across NUMA nodes (the SMP interconnect)",
	"SIM  = the simulated card: no PCI path",
	"direct: peer TLPs turn around in a switch; host-bridge: they cross the",
	"root complex; iommu: ... and the IOMMU translates them; acs-redirect:",
	"ACS sends them up to the root complex; vm: the path is emulated;",
	"unsupported: the kernel would not map it; unknown: ACS not known",
};

/* A NUMA node or IOMMU group, null where there is none (-1). */
static json_t *id_json(int32_t id)
{
	return id >= 0 ? json_integer(id) : json_null();
}

static json_t *end_json(const struct fpgad_topo_end *e)
{
	return json_pack("{s:s, s:b, s:o, s:s, s:s, s:o, s:s}",
			 "address", e->address, "found", e->found,
			 "numa_node", id_json(e->numa_node),
			 "host_bridge", e->host_bridge, "root_port", e->root_port,
			 "iommu_group", id_json(e->iommu_group), "iommu", e->iommu);
}

/* A rate in bytes/s, null when it was not measured. */
static json_t *rate_json(double bps)
{
	return fpgactl_json_num(bps > 0 ? bps : NAN);
}

static void print_json(fpgad_client *cl, const struct fpgad_topology *t)
{
	json_t *gpus = json_array(), *chans = json_array();

	for (uint32_t i = 0; i < t->n_gpus; i++) {
		const struct fpgad_topo_gpu *g = &t->gpus[i];
		json_t *o = end_json(&g->gpu);

		json_object_set_new(o, "index", json_integer(i));
		json_object_set_new(o, "class", json_string(g->path_class));
		json_object_set_new(o, "verdict", json_string(g->verdict));
		json_object_set_new(o, "reason", json_string(g->reason));
		json_object_set_new(o, "common_bridge", json_string(g->common_bridge));
		json_object_set_new(o, "acs_bridge", json_string(g->acs_bridge));
		json_object_set_new(o, "kernel", json_boolean(g->kernel));
		json_object_set_new(o, "distance", g->kernel ?
				    json_integer(g->distance) : json_null());
		json_object_set_new(o, "warning", json_string(g->warning));
		json_array_append_new(gpus, o);
	}
	for (uint32_t i = 0; i < t->n_channels; i++) {
		const struct fpgad_topo_channel *c = &t->channels[i];

		json_array_append_new(chans, json_pack(
			"{s:s, s:s, s:b, s:s, s:s, s:o, s:o}", "name", c->name,
			"gpu", c->gpu, "integrated", c->integrated,
			"mode", c->mode, "mode_reason", c->mode_reason,
			"gpudirect_bps", rate_json(c->gpudirect_bps),
			"bounce_bps", rate_json(c->bounce_bps)));
	}
	fpgactl_net_annotate(cl, chans);
	fpgactl_print_json(json_pack("{s:s, s:b, s:o, s:b, s:s, s:s, s:s, s:o, s:o}",
				     "card", t->card, "simulated", t->simulated,
				     "card_end", end_json(&t->card_end),
				     "vm", t->vm, "vm_reason", t->vm_reason,
				     "sysfs", t->sysfs, "warning", t->warning,
				     "gpus", gpus, "channels", chans));
}

/* "NUMA 0", "NUMA ?" */
static const char *numa_text(int32_t node, char *buf, size_t len)
{
	if (node < 0)
		snprintf(buf, len, "?");
	else
		snprintf(buf, len, "%d", (int)node);
	return buf;
}

static const char *rate_text(double bps, char *buf, size_t len)
{
	if (bps > 0)
		snprintf(buf, len, "%.1f GB/s", bps / 1e9);
	else
		snprintf(buf, len, "-");
	return buf;
}

static void print_text(fpgad_client *cl, const struct fpgad_topology *t)
{
	const struct fpgad_topo_end *ce = &t->card_end;
	char n1[16], n2[16];

	if (t->simulated) {
		printf("card   %s (simulated: no PCI path)\n", t->card);
	} else {
		char group[24] = "";

		if (ce->iommu_group >= 0)
			snprintf(group, sizeof(group), " (group %d)",
				 (int)ce->iommu_group);
		printf("card   %s, NUMA %s, IOMMU %s%s%s\n", t->card,
		       numa_text(ce->numa_node, n1, sizeof(n1)), ce->iommu, group,
		       ce->found ? "" : "; not on this host's PCI bus");
	}
	printf("host   %s%s%s\n", t->vm ? "virtual machine (" : "bare metal",
	       t->vm ? t->vm_reason : "", t->vm ? ")" : "");
	if (t->sysfs[0])
		printf("sysfs  %s (not the host's own)\n", t->sysfs);
	if (t->warning[0])
		printf("note   %s\n", t->warning);

	if (!t->n_gpus) {
		printf("\nno NVIDIA GPU on this host's PCI bus\n");
	} else {
		printf("\n%-8s", "");
		for (uint32_t i = 0; i < t->n_gpus; i++)
			printf(" GPU%-5u", i);
		printf(" NUMA\n%-8s", "card");
		for (uint32_t i = 0; i < t->n_gpus; i++)
			printf(" %-8s", t->gpus[i].path_class);
		printf(" %s\n\n%-6s %-13s %-5s %-12s %-5s %-13s %s\n",
		       t->simulated ? "-" : numa_text(ce->numa_node, n1, sizeof(n1)),
		       "GPU", "ADDRESS", "NUMA", "IOMMU", "CLASS", "VERDICT", "REASON");
		for (uint32_t i = 0; i < t->n_gpus; i++) {
			const struct fpgad_topo_gpu *g = &t->gpus[i];

			printf("GPU%-3u %-13s %-5s %-12s %-5s %-13s %s\n", i,
			       g->gpu.address,
			       numa_text(g->gpu.numa_node, n2, sizeof(n2)),
			       g->gpu.iommu, g->path_class, g->verdict, g->reason);
			if (g->warning[0])
				printf("%-6s note: %s\n", "", g->warning);
		}
	}
	if (t->n_channels) {
		char r1[24], r2[24];

		printf("\n%-12s %-13s %-9s %-10s %-10s %s\n", "CHANNEL", "GPU",
		       "MODE", "GPUDIRECT", "BOUNCE", "WHY");
		for (uint32_t i = 0; i < t->n_channels; i++) {
			const struct fpgad_topo_channel *c = &t->channels[i];

			printf("%-12s %-13s %-9s %-10s %-10s %s\n", c->name,
			       c->gpu[0] ? c->gpu : "-", c->mode,
			       rate_text(c->gpudirect_bps, r1, sizeof(r1)),
			       rate_text(c->bounce_bps, r2, sizeof(r2)),
			       c->mode_reason);
		}
	}
	if (t->n_channels) {
		const char *names[64];
		unsigned n = 0;

		for (uint32_t i = 0; i < t->n_channels && n < 64; i++)
			names[n++] = t->channels[i].name;
		fpgactl_net_table(cl, names, n);
	}
	printf("\nLegend:\n");
	for (size_t i = 0; i < sizeof(legend) / sizeof(legend[0]); i++)
		printf("  %s\n", legend[i]);
}

int fpgactl_topo(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_topology *t;
	int r = fpgad_topology_get(c, &t);

	if (r < 0)
		return fpgactl_fail(c, "topo", r);
	if (o->json)
		print_json(c, t);
	else
		print_text(c, t);
	fpgad_topology_free(t);
	return 0;
}

int fpgactl_probe(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_probe p;
	int r = fpgad_channel_probe(c, o->channel, &p);

	if (r < 0)
		return fpgactl_fail(c, o->channel, r);
	if (o->json) {
		fpgactl_print_json(json_pack("{s:s, s:s, s:s, s:o, s:o, s:b}",
					     "channel", o->channel, "mode", p.mode,
					     "mode_reason", p.mode_reason,
					     "gpudirect_bps", rate_json(p.gpudirect_bps),
					     "bounce_bps", rate_json(p.bounce_bps),
					     "switched", p.switched));
		return 0;
	}
	printf("channel %s: %s%s (%s)\n", o->channel, p.mode,
	       p.switched ? ", switched" : "", p.mode_reason);
	printf("gpudirect  %.1f GB/s\nbounce     %.1f GB/s\n",
	       p.gpudirect_bps / 1e9, p.bounce_bps / 1e9);
	return 0;
}
