// SPDX-License-Identifier: MIT
/*
 * place.c - the GPU nearest to a card and the CPUs of a NUMA node
 * (place.h), over the sysfs tree topology.c reads.
 */
#include <errno.h>
#include <linux/mempolicy.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "topology/place.h"

#define PLACE_RANK_UNKNOWN 100

/* Lower is nearer: the classes in their order, an unknown path last. */
static int class_rank(enum topo_class c)
{
	return c >= TOPO_CLASS_PIX && c <= TOPO_CLASS_SYS ? (int)c : PLACE_RANK_UNKNOWN;
}

static const char *class_words(enum topo_class c)
{
	switch (c) {
	case TOPO_CLASS_PIX: return "same PCIe switch";
	case TOPO_CLASS_PXB: return "same switch tree, below the root port";
	case TOPO_CLASS_PHB: return "same root complex";
	case TOPO_CLASS_NODE: return "same NUMA node, another root complex";
	case TOPO_CLASS_SYS: return "another NUMA node";
	case TOPO_CLASS_SIM: return "simulated card: no PCI path, the first GPU";
	default: return "path unknown";
	}
}

/* The class that ranks @p: the simulated card's by the node it models. */
static enum topo_class pair_class(const struct topo_pair *p, int sim_node)
{
	if (p->cls != TOPO_CLASS_SIM || sim_node < 0)
		return p->cls;
	if (p->gpu.numa_node < 0)
		return TOPO_CLASS_UNKNOWN;
	return p->gpu.numa_node == sim_node ? TOPO_CLASS_NODE : TOPO_CLASS_SYS;
}

int place_nearest_gpu(const struct topo_source *src, const char *card, int sim_node,
		      const char (*gpus)[TOPO_ADDR_LEN], unsigned n,
		      unsigned *ret_index, char *why, size_t wlen)
{
	struct topo_pair *p = malloc(sizeof(*p));
	enum topo_class best_cls = TOPO_CLASS_UNKNOWN;
	struct topo_host host;
	int best = -1, r = 0;

	if (!p)
		return -ENOMEM;
	if (!n) {
		r = -ENODEV;
		goto out;
	}
	topology_host(src, &host);
	for (unsigned i = 0; i < n; i++) {
		r = topology_pair(src, &host, card, gpus[i], p);
		if (r < 0)
			goto out;
		if (best < 0 || class_rank(pair_class(p, sim_node)) < class_rank(best_cls)) {
			best = (int)i;
			best_cls = pair_class(p, sim_node);
		}
	}
	*ret_index = (unsigned)best;
	if (!strcmp(card, TOPO_SIM) && sim_node >= 0)
		snprintf(why, wlen, best_cls == TOPO_CLASS_NODE ?
			 "nearest: GPU %d (%s), on node %d like the simulated card (%s)" :
			 "nearest: GPU %d (%s), the first: none on node %d, the simulated card's (%s)",
			 best, gpus[best], sim_node, topology_class_name(best_cls));
	else
		snprintf(why, wlen, "nearest: GPU %d (%s), %s (%s)", best, gpus[best],
			 class_words(best_cls), topology_class_name(best_cls));
out:
	free(p);
	return r;
}

/* "0-15,32-47" into @ret_cpus. */
static int cpulist_parse(const char *s, cpu_set_t *ret_cpus)
{
	unsigned long a, b;
	char *end;

	CPU_ZERO(ret_cpus);
	while (*s && *s != '\n') {
		errno = 0;
		a = strtoul(s, &end, 10);
		if (end == s || errno)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s || errno || b < a)
				return -EINVAL;
		}
		if (b >= CPU_SETSIZE)
			return -EINVAL;
		for (unsigned long c = a; c <= b; c++)
			CPU_SET(c, ret_cpus);
		s = end;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return CPU_COUNT(ret_cpus) ? 0 : -EINVAL;
}

int place_node_cpus(const struct topo_source *src, int node, cpu_set_t *ret_cpus)
{
	char path[512], line[4096];
	FILE *f;
	int r;

	if (node < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/devices/system/node/node%d/cpulist",
		 src && src->sysfs ? src->sysfs : "/sys", node);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	r = fgets(line, sizeof(line), f) ? cpulist_parse(line, ret_cpus) : -EINVAL;
	fclose(f);
	return r;
}

void place_cpulist_format(const cpu_set_t *cpus, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && off < len; c++) {
		int e = c;

		if (!CPU_ISSET(c, cpus))
			continue;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, cpus))
			e++;
		off += (size_t)snprintf(buf + off, len - off, e > c ? "%s%d-%d" : "%s%d",
					off ? "," : "", c, e);
		c = e;
	}
}

int place_on_node(const struct topo_source *src, int node, char *what, size_t wlen)
{
	unsigned long mask[(1024 + 8 * sizeof(unsigned long) - 1) / (8 * sizeof(unsigned long))] = { 0 };
	const size_t bits = 8 * sizeof(unsigned long);
	char list[256];
	cpu_set_t cpus;
	int r;

	if (node < 0 || node >= 1024)
		return -EINVAL;
	r = place_node_cpus(src, node, &cpus);
	if (r < 0)
		return r;
	r = -pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);
	if (r < 0)
		return r;
	place_cpulist_format(&cpus, list, sizeof(list));
	mask[node / bits] = 1ul << (node % bits);
	if (syscall(SYS_set_mempolicy, MPOL_PREFERRED, mask, 1024 + 1) < 0)
		snprintf(what, wlen, "node %d: threads on CPUs %s; memory anywhere (set_mempolicy: %s)",
			 node, list, strerror(errno));
	else
		snprintf(what, wlen, "node %d: threads on CPUs %s, memory preferred there",
			 node, list);
	return 0;
}
