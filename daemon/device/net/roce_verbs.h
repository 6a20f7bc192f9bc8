/* SPDX-License-Identifier: MIT */
/*
 * roce_verbs.h - the little of libibverbs a RoCE channel uses, behind
 * calls that take and give plain values (roce_rx.h's completions), so
 * that everything above it is tested without a NIC.  Built with ROCE=1
 * (the default where libibverbs-dev is installed: linked) or ROCE=dlopen
 * (STATIC=1's default there: the host's libibverbs.so.1 loaded at run
 * time, roce_ibv_dl.h); with ROCE=0 roce_verbs_open() says so and fails.
 *
 *   open      the device (named, or the first whose port has a RoCE v2
 *             GID for the listen address), a PD, a CQ on a completion
 *             channel, one UC QP taken to RTR only (receive-only: path
 *             MTU, the sender's GID and QP number in its address vector,
 *             rq_psn 0) with every receive request posted
 *   reg       registers a landing ring (ibv_reg_mr at iova): a new R_Key;
 *             the one before is deregistered, so its writes fail
 *   reg_dmabuf the same for a dma-buf (ibv_reg_dmabuf_mr: GPU memory)
 *   poll      completions, as roce_wc
 *   post_recv posts receive requests again
 *   arm/event the completion channel: arm before sleeping on fd(), take
 *             and acknowledge an event after it polled readable
 */
#ifndef FPGAD_NET_ROCE_VERBS_H
#define FPGAD_NET_ROCE_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "device/net/roce_rx.h"

struct roce_verbs;

struct roce_verbs_cfg {
	const char *device;		/* "" = find it by listen's GID */
	struct sockaddr_storage listen;	/* picks the RoCE v2 GID */
	struct sockaddr_storage sender;	/* the QP's address vector */
	uint32_t sender_qpn;
	unsigned mtu;			/* path MTU: 256 .. 4096 */
	unsigned recv_depth;		/* receive requests kept posted */
};

/* What stats show. */
struct roce_verbs_info {
	char device[32];
	unsigned port;
	unsigned gid_index;
	char gid[48];
	uint32_t qpn;
	unsigned mtu;			/* the path MTU in use */
};

/*
 * Whether roce_verbs_open() would find its device for @listen: the RDMA
 * device named @device (any when "") is there and has a RoCE v2 GID for
 * @listen.  Opens nothing that stays open.  0, or -errno with why in @why,
 * which begins with the key it is about ("rdma_device: ", "listen: ") or
 * with "source = roce: " when it is about the host.
 */
int roce_verbs_check(const char *device, const struct sockaddr_storage *listen,
		     char *why, size_t whylen);

/* 0 or -errno with why in @why. */
int roce_verbs_open(const struct roce_verbs_cfg *cfg, struct roce_verbs **ret_v,
		    char *why, size_t whylen);
void roce_verbs_close(struct roce_verbs *v);
void roce_verbs_info(const struct roce_verbs *v, struct roce_verbs_info *ret_info);

int roce_verbs_reg(struct roce_verbs *v, void *addr, size_t len, uint64_t iova,
		   uint32_t *ret_rkey);
int roce_verbs_reg_dmabuf(struct roce_verbs *v, int fd, size_t len,
			  uint64_t iova, uint32_t *ret_rkey);
int roce_verbs_poll(struct roce_verbs *v, struct roce_wc *wc, unsigned max);
int roce_verbs_post_recv(struct roce_verbs *v, unsigned n);
int roce_verbs_arm(struct roce_verbs *v);
int roce_verbs_fd(const struct roce_verbs *v);
/* After fd() polled readable: 0, or -EAGAIN when no event was there. */
int roce_verbs_event(struct roce_verbs *v);

/*
 * For a sender on the same kind of device (tests/net/hsb_verbs.c), with
 * ROCE=1 only: the device named @device (or the first) whose GID table has
 * a RoCE v2 entry for @addr, open, and that entry; and the entry of
 * another address on it; the verbs path MTU of @mtu bytes.
 */
struct ibv_context;
struct ibv_gid_entry;
int roce_verbs_find(const char *device, const struct sockaddr_storage *addr,
		    struct ibv_context **ret_ctx, struct ibv_gid_entry *ret_entry,
		    char *why, size_t whylen);
int roce_verbs_gid_entry(struct ibv_context *ctx, const struct sockaddr_storage *addr,
			 struct ibv_gid_entry *ret_entry);
int roce_verbs_path_mtu(unsigned mtu);
union ibv_gid;
void roce_verbs_addr_gid(const struct sockaddr_storage *a, union ibv_gid *ret_gid);

#endif
