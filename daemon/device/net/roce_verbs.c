// SPDX-License-Identifier: MIT
/*
 * roce_verbs.c - a RoCE channel's verbs (roce_verbs.h): one UC QP,
 * receive-only, on a completion channel; the landing ring's registration.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "device/net/roce_verbs.h"

#ifndef FPGAD_ROCE

int roce_verbs_open(const struct roce_verbs_cfg *cfg, struct roce_verbs **ret_v,
		    char *why, size_t whylen)
{
	(void)cfg;
	(void)ret_v;
	snprintf(why, whylen, "source = roce: this fpgad was built without RoCE (ROCE=0: no libibverbs-dev where it was built); use source = udp or a build with libibverbs-dev");
	return -EOPNOTSUPP;
}

int roce_verbs_check(const char *device, const struct sockaddr_storage *listen,
		     char *why, size_t whylen)
{
	(void)device;
	(void)listen;
	snprintf(why, whylen, "source = roce: this fpgad was built without RoCE (ROCE=0: no libibverbs-dev where it was built); use source = udp or a build with libibverbs-dev");
	return -EOPNOTSUPP;
}

void roce_verbs_close(struct roce_verbs *v) { (void)v; }

void roce_verbs_info(const struct roce_verbs *v, struct roce_verbs_info *ret_info)
{
	(void)v;
	memset(ret_info, 0, sizeof(*ret_info));
}

int roce_verbs_reg(struct roce_verbs *v, void *addr, size_t len, uint64_t iova,
		   uint32_t *ret_rkey)
{
	(void)v, (void)addr, (void)len, (void)iova, (void)ret_rkey;
	return -EOPNOTSUPP;
}

int roce_verbs_reg_dmabuf(struct roce_verbs *v, int fd, size_t len,
			  uint64_t iova, uint32_t *ret_rkey)
{
	(void)v, (void)fd, (void)len, (void)iova, (void)ret_rkey;
	return -EOPNOTSUPP;
}

int roce_verbs_poll(struct roce_verbs *v, struct roce_wc *wc, unsigned max)
{
	(void)v, (void)wc, (void)max;
	return -EOPNOTSUPP;
}

int roce_verbs_post_recv(struct roce_verbs *v, unsigned n)
{
	(void)v, (void)n;
	return -EOPNOTSUPP;
}

int roce_verbs_arm(struct roce_verbs *v) { (void)v; return -EOPNOTSUPP; }
int roce_verbs_fd(const struct roce_verbs *v) { (void)v; return -1; }
int roce_verbs_event(struct roce_verbs *v) { (void)v; return -EOPNOTSUPP; }

#else /* FPGAD_ROCE */

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "device/net/roce_ibv_dl.h"

struct roce_verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned depth;
	struct roce_verbs_info info;
};

/* The GID a RoCE v2 port has for @a: IPv4 mapped into IPv6, or IPv6. */
void roce_verbs_addr_gid(const struct sockaddr_storage *a, union ibv_gid *ret_gid)
{
	memset(ret_gid, 0, sizeof(*ret_gid));
	if (a->ss_family == AF_INET6) {
		memcpy(ret_gid->raw, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
		return;
	}
	ret_gid->raw[10] = ret_gid->raw[11] = 0xff;
	memcpy(ret_gid->raw + 12, &((const struct sockaddr_in *)a)->sin_addr, 4);
}

int roce_verbs_path_mtu(unsigned mtu)
{
	switch (mtu) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	default: return IBV_MTU_4096;
	}
}

/* The RoCE v2 entry of @ctx's GID table for @gid: 0, or -ENOENT. */
static int find_gid(struct ibv_context *ctx, const union ibv_gid *gid,
		    struct ibv_gid_entry *ret_entry)
{
	struct ibv_gid_entry e[256];
	ssize_t n = ibv_query_gid_table(ctx, e, 256, 0);

	for (ssize_t i = 0; i < n; i++) {
		if (e[i].gid_type == IBV_GID_TYPE_ROCE_V2 &&
		    !memcmp(e[i].gid.raw, gid->raw, 16)) {
			*ret_entry = e[i];
			return 0;
		}
	}
	return -ENOENT;
}

int roce_verbs_gid_entry(struct ibv_context *ctx, const struct sockaddr_storage *addr,
			 struct ibv_gid_entry *ret_entry)
{
	union ibv_gid gid;

	roce_verbs_addr_gid(addr, &gid);
	return find_gid(ctx, &gid, ret_entry);
}

/* The device named @name, or the first with @addr's GID: its context and entry. */
int roce_verbs_find(const char *name, const struct sockaddr_storage *addr,
		    struct ibv_context **ret_ctx, struct ibv_gid_entry *ret_entry,
		    char *why, size_t whylen)
{
	struct ibv_device **list;
	int n = 0, r = -ENODEV;
	bool named = false;
	union ibv_gid g;
	const union ibv_gid *gid = &g;

	roce_verbs_addr_gid(addr, &g);
	/* ROCE=dlopen: the host's libibverbs, loaded at the first use. */
	if (roce_ibv_load(why, whylen) < 0)
		return -ENODEV;

	list = ibv_get_device_list(&n);
	if ((!list || n == 0) && *name) {
		snprintf(why, whylen, "rdma_device: this host has no RDMA device %s, nor any other (%s): load the NIC's RDMA driver, or rdma_rxe for a software one (rdma link add rxe0 type rxe netdev IFACE, then rdma_device = rxe0); under fpgad.service, /dev/infiniband must be allowed (fpgad(8), NETWORK CHANNELS)",
			 name, list ? "ibv_devices lists none" : strerror(errno));
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	if (!list || n == 0) {
		snprintf(why, whylen, "source = roce: this host has no RDMA device (%s): load an RDMA NIC's driver, or rdma_rxe for a software one (rdma link add rxe0 type rxe netdev IFACE); under fpgad.service, /dev/infiniband must be allowed (fpgad(8), NETWORK CHANNELS)",
			 list ? "ibv_devices lists none" : strerror(errno));
		if (list)
			ibv_free_device_list(list);
		return -ENODEV;
	}
	for (int i = 0; i < n && r < 0; i++) {
		struct ibv_context *ctx;

		if (*name && strcmp(name, ibv_get_device_name(list[i])))
			continue;
		named = true;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			continue;
		if (find_gid(ctx, gid, ret_entry) == 0) {
			*ret_ctx = ctx;
			r = 0;
		} else {
			ibv_close_device(ctx);
		}
	}
	ibv_free_device_list(list);
	if (r == 0)
		return 0;
	if (*name && !named)
		snprintf(why, whylen, "rdma_device: this host has no RDMA device %s: name one that ibv_devices lists, or remove rdma_device to take the first with a RoCE v2 GID for listen", name);
	else
		snprintf(why, whylen, "listen: %s has no RoCE v2 GID for this address: listen on an address of the RDMA device's interface (rdma link, ip addr, and show_gids or /sys/class/infiniband/*/ports/*/gids show them)",
			 *name ? name : "no RDMA device");
	return -ENODEV;
}

int roce_verbs_check(const char *device, const struct sockaddr_storage *listen,
		     char *why, size_t whylen)
{
	struct ibv_context *ctx;
	struct ibv_gid_entry e;
	int r;

	r = roce_verbs_find(device, listen, &ctx, &e, why, whylen);
	if (r == 0)
		ibv_close_device(ctx);
	return r;
}

static int qp_to_rtr(struct roce_verbs *v, const struct roce_verbs_cfg *cfg,
		     const struct ibv_gid_entry *e)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = (uint8_t)e->port_num,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	int r;

	r = ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (r)
		return -r;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)roce_verbs_path_mtu(cfg->mtu);
	a.dest_qp_num = cfg->sender_qpn;
	a.rq_psn = 0;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = (uint8_t)e->port_num;
	a.ah_attr.grh.sgid_index = (uint8_t)e->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	roce_verbs_addr_gid(&cfg->sender, &a.ah_attr.grh.dgid);
	r = ibv_modify_qp(v->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	return -r;
}

/* The port's active MTU, when it is below what the config asks. */
static unsigned port_mtu(struct ibv_context *ctx, unsigned port, unsigned want)
{
	struct ibv_port_attr pa;
	unsigned active;

	if (ibv_query_port(ctx, (uint8_t)port, &pa))
		return want;
	active = 128u << pa.active_mtu;
	return active < want ? active : want;
}

int roce_verbs_open(const struct roce_verbs_cfg *cfg, struct roce_verbs **ret_v,
		    char *why, size_t whylen)
{
	struct ibv_qp_init_attr qa = { 0 };
	struct ibv_gid_entry e;
	struct roce_verbs *v;
	int r, fl;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->depth = cfg->recv_depth;
	r = roce_verbs_find(cfg->device, &cfg->listen, &v->ctx, &e, why, whylen);
	if (r < 0)
		goto fail;
	r = -ENOMEM;
	v->pd = ibv_alloc_pd(v->ctx);
	v->chan = v->pd ? ibv_create_comp_channel(v->ctx) : NULL;
	v->cq = v->chan ? ibv_create_cq(v->ctx, (int)v->depth, v, v->chan, 0) : NULL;
	if (!v->cq) {
		r = errno ? -errno : -ENOMEM;
		snprintf(why, whylen, "%s: cannot make a PD, completion channel and CQ: %s",
			 ibv_get_device_name(v->ctx->device), strerror(-r));
		goto fail;
	}
	fl = fcntl(v->chan->fd, F_GETFL);
	if (fl < 0 || fcntl(v->chan->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(why, whylen, "completion channel: O_NONBLOCK: %s", strerror(-r));
		goto fail;
	}
	qa.send_cq = qa.recv_cq = v->cq;
	qa.qp_type = IBV_QPT_UC;
	qa.cap.max_send_wr = 1;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_wr = v->depth;
	qa.cap.max_recv_sge = 1;
	v->qp = ibv_create_qp(v->pd, &qa);
	if (!v->qp) {
		r = errno ? -errno : -ENOMEM;
		snprintf(why, whylen, "%s: cannot make a UC QP: %s",
			 ibv_get_device_name(v->ctx->device), strerror(-r));
		goto fail;
	}
	snprintf(v->info.device, sizeof(v->info.device), "%s",
		 ibv_get_device_name(v->ctx->device));
	v->info.port = e.port_num;
	v->info.gid_index = e.gid_index;
	inet_ntop(AF_INET6, e.gid.raw, v->info.gid, sizeof(v->info.gid));
	v->info.qpn = v->qp->qp_num;
	v->info.mtu = port_mtu(v->ctx, e.port_num, cfg->mtu);
	{
		struct roce_verbs_cfg c = *cfg;

		c.mtu = v->info.mtu;
		r = qp_to_rtr(v, &c, &e);
	}
	if (r < 0) {
		snprintf(why, whylen, "%s: cannot take the QP to RTR (sender QPN 0x%x): %s",
			 v->info.device, cfg->sender_qpn, strerror(-r));
		goto fail;
	}
	r = roce_verbs_post_recv(v, v->depth);
	if (r < 0) {
		snprintf(why, whylen, "%s: cannot post receive requests: %s",
			 v->info.device, strerror(-r));
		goto fail;
	}
	*ret_v = v;
	return 0;
fail:
	roce_verbs_close(v);
	return r;
}

void roce_verbs_close(struct roce_verbs *v)
{
	if (!v)
		return;
	if (v->qp)
		ibv_destroy_qp(v->qp);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->chan)
		ibv_destroy_comp_channel(v->chan);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	free(v);
}

void roce_verbs_info(const struct roce_verbs *v, struct roce_verbs_info *ret_info)
{
	*ret_info = v->info;
}

/* @mr (NULL: it failed, errno says why) in place of the one before. */
static int mr_replace(struct roce_verbs *v, struct ibv_mr *mr, uint32_t *ret_rkey)
{
	if (!mr)
		return errno ? -errno : -ENOMEM;
	/* The old key goes: a sender still holding it is refused by the NIC. */
	if (v->mr)
		ibv_dereg_mr(v->mr);
	v->mr = mr;
	*ret_rkey = mr->rkey;
	return 0;
}

int roce_verbs_reg(struct roce_verbs *v, void *addr, size_t len, uint64_t iova,
		   uint32_t *ret_rkey)
{
	struct ibv_mr *mr = ibv_reg_mr_iova(v->pd, addr, len, iova,
					    IBV_ACCESS_LOCAL_WRITE |
					    IBV_ACCESS_REMOTE_WRITE);

	return mr_replace(v, mr, ret_rkey);
}

int roce_verbs_reg_dmabuf(struct roce_verbs *v, int fd, size_t len,
			  uint64_t iova, uint32_t *ret_rkey)
{
	struct ibv_mr *mr = ibv_reg_dmabuf_mr(v->pd, 0, len, iova, fd,
					      IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE);

	return mr_replace(v, mr, ret_rkey);
}

int roce_verbs_poll(struct roce_verbs *v, struct roce_wc *out, unsigned max)
{
	struct ibv_wc wc[ROCE_RX_BATCH];
	int n;

	if (max > ROCE_RX_BATCH)
		max = ROCE_RX_BATCH;
	n = ibv_poll_cq(v->cq, (int)max, wc);
	if (n < 0)
		return -EIO;
	for (int i = 0; i < n; i++) {
		out[i].status = wc[i].status == IBV_WC_SUCCESS ? 0 : -EIO;
		out[i].has_imm = wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
				 (wc[i].wc_flags & IBV_WC_WITH_IMM);
		out[i].imm = ntohl(wc[i].imm_data);
	}
	return n;
}

int roce_verbs_post_recv(struct roce_verbs *v, unsigned n)
{
	struct ibv_recv_wr wr = { 0 }, *bad;

	/* A WRITE with Immediate consumes a request but writes nothing to it. */
	for (unsigned i = 0; i < n; i++) {
		int r = ibv_post_recv(v->qp, &wr, &bad);

		if (r)
			return -r;
	}
	return 0;
}

int roce_verbs_arm(struct roce_verbs *v)
{
	return -ibv_req_notify_cq(v->cq, 0);
}

int roce_verbs_fd(const struct roce_verbs *v)
{
	return v->chan->fd;
}

int roce_verbs_event(struct roce_verbs *v)
{
	struct ibv_cq *cq;
	void *ctx;

	if (ibv_get_cq_event(v->chan, &cq, &ctx) < 0)
		return errno == EAGAIN ? -EAGAIN : -errno;
	ibv_ack_cq_events(cq, 1);
	return 0;
}

#endif /* FPGAD_ROCE */
