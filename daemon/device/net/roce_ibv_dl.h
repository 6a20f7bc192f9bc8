/* SPDX-License-Identifier: MIT */
/*
 * roce_ibv_dl.h - libibverbs loaded at run time (ROCE=dlopen, the
 * default of STATIC=1): a static fpgad cannot carry rdma-core's providers,
 * so it takes the host's libibverbs.so.1, and with it the providers of
 * the host's NICs.  roce_ibv_dl.c defines the few ibv_* functions
 * roce_verbs.c calls, each forwarding to the loaded library's.
 */
#ifndef FPGAD_NET_ROCE_IBV_DL_H
#define FPGAD_NET_ROCE_IBV_DL_H

#include <stddef.h>

/*
 * Load libibverbs.so.1 once (later calls give the first's answer): 0, or
 * -ENOENT with why in @why, beginning "source = roce: ".
 */
int roce_ibv_load(char *why, size_t whylen);

#endif
