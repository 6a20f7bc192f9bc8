/* SPDX-License-Identifier: MIT */
/*
 * place.h - placing a card's work near it: the GPU nearest to the card
 * (gpu = nearest) and the CPUs of the card's NUMA node (numa = auto),
 * both from the sysfs tree topology.h reads.
 */
#ifndef FPGAD_TOPOLOGY_PLACE_H
#define FPGAD_TOPOLOGY_PLACE_H

#include <sched.h>
#include <stddef.h>

#include "topology/topology.h"

/*
 * Of the @n GPUs @gpus (PCI addresses), the index of the one nearest to
 * card @card (a PCI address or TOPO_SIM): the lowest class, PIX (same
 * switch) before PXB, PHB (same root complex), NODE (same NUMA node) and
 * SYS; an unknown path last; the lowest index among equals.  The
 * simulated card has no PCI path: with @sim_node >= 0 (the node it
 * models) a GPU of that node counts as NODE and the others as SYS.  @why
 * gets the choice in one line, naming the GPU and the path.  -ENODEV
 * when @n is 0, -EINVAL for an address that is not one.
 */
int place_nearest_gpu(const struct topo_source *src, const char *card, int sim_node,
		      const char (*gpus)[TOPO_ADDR_LEN], unsigned n,
		      unsigned *ret_index, char *why, size_t wlen);

/*
 * The CPUs of NUMA node @node (sys/devices/system/node/nodeN/cpulist, as
 * "0-15,32-47"): 0, -ENOENT when the node has no such file, -EINVAL when
 * it is malformed or names no CPU.
 */
int place_node_cpus(const struct topo_source *src, int node, cpu_set_t *ret_cpus);

/*
 * Run the calling thread, and every thread it starts from now on, on the
 * CPUs of node @node, and prefer that node's memory for what they
 * allocate and touch (set_mempolicy MPOL_PREFERRED: never a failure when
 * the node is full).  @what gets what was done, in one line.  -errno when
 * the node's CPUs are unknown or the affinity cannot be set; a memory
 * policy the kernel refuses is said in @what, not a failure.
 */
int place_on_node(const struct topo_source *src, int node, char *what, size_t wlen);

/* @cpus as a cpulist ("0-15,32-47") into @buf. */
void place_cpulist_format(const cpu_set_t *cpus, char *buf, size_t len);

#endif
