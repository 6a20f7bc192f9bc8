/* SPDX-License-Identifier: MIT */
/*
 * placement.h - where a card's work runs (placement.c): the GPU of the
 * channels with gpu = nearest, and the CPUs and memory of the card's NUMA
 * node for its threads (numa = auto).  Both are said in status.
 */
#ifndef FPGAD_PLACEMENT_H
#define FPGAD_PLACEMENT_H

#include "core.h"

/*
 * Resolve gpu = nearest ([device] and each channel) to the PCI address of
 * the GPU nearest to the card, into d->cfg; d->gpu_choice says which and
 * why.  Before the channels are surveyed and made.
 */
int placement_gpu(struct core *d);

/*
 * numa = auto: the calling thread, and so every thread it starts from
 * here on (streaming, transfers), on the CPUs of the card's node, its
 * memory preferred there; d->numa_placed says so.  A card on no node, or
 * on one whose CPUs this process may not use, runs anywhere (said); a
 * node [sim] numa_node names that the host lacks fails the start.
 */
int placement_threads(struct core *d);

#endif
