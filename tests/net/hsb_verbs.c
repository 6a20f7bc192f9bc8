// SPDX-License-Identifier: MIT
/*
 * hsb_verbs.c - hsb_sender's RoCE mode (hsb_verbs.h): UC QPs taken
 * INIT -> RTR -> RTS, one RDMA WRITE per packet hsb_tx.h built.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hsb_verbs.h"

#ifndef FPGAD_ROCE

int hsb_verbs_open(const char *dev, const char *from, const char *to,
		   uint32_t dest_qpn, unsigned mtu, unsigned max_wr,
		   void *buf, size_t len, struct hsb_verbs **ret_v)
{
	(void)dev, (void)from, (void)to, (void)dest_qpn, (void)mtu;
	(void)max_wr, (void)buf, (void)len, (void)ret_v;
	fprintf(stderr, "hsb_sender: built without RoCE (ROCE=0): --rdma-dev is not available\n");
	return -EOPNOTSUPP;
}

int hsb_verbs_foreign(struct hsb_verbs *v, const char *from, uint32_t dest_qpn)
{
	(void)v, (void)from, (void)dest_qpn;
	return -EOPNOTSUPP;
}

int hsb_verbs_send(struct hsb_verbs *v, unsigned qp, const uint8_t *pkts,
		   const size_t *lens, const unsigned *order, unsigned n)
{
	(void)v, (void)qp, (void)pkts, (void)lens, (void)order, (void)n;
	return -EOPNOTSUPP;
}

uint32_t hsb_verbs_qpn(const struct hsb_verbs *v) { (void)v; return 0; }
void hsb_verbs_close(struct hsb_verbs *v) { (void)v; }

#else /* FPGAD_ROCE */

#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <stdlib.h>

#include "config/config.h"
#include "device/net/roce_verbs.h"
#include "device/net/roce_wire.h"

struct hsb_verbs {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_mr *mr;
	union ibv_gid to;		/* the receiver's GID */
	struct sockaddr_storage to_addr;
	unsigned mtu, max_wr;
	unsigned pending[2];		/* unsignaled WRITEs since the last wait */
};

static int addr(const char *s, struct sockaddr_storage *ret)
{
	if (config_parse_endpoint(s, false, ret) < 0) {
		fprintf(stderr, "hsb_sender: '%s' is not an address\n", s);
		return -EINVAL;
	}
	return 0;
}

/* A UC QP from @src to @dest_qpn at the receiver, ready to send. */
static int make_qp(struct hsb_verbs *v, unsigned i, const struct ibv_gid_entry *src,
		   uint32_t dest_qpn)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = v->cq, .recv_cq = v->cq, .qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = v->max_wr, .max_send_sge = 1,
			 .max_recv_wr = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = (uint8_t)src->port_num,
		.qp_access_flags = 0,
	};
	int r;

	if (v->qp[i])
		ibv_destroy_qp(v->qp[i]);
	v->qp[i] = ibv_create_qp(v->pd, &qa);
	if (!v->qp[i])
		return -errno;
	r = ibv_modify_qp(v->qp[i], &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (r)
		return -r;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)roce_verbs_path_mtu(v->mtu);
	a.dest_qp_num = dest_qpn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = (uint8_t)src->port_num;
	a.ah_attr.grh.sgid_index = (uint8_t)src->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.dgid = v->to;
	r = ibv_modify_qp(v->qp[i], &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	if (r)
		return -r;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return -ibv_modify_qp(v->qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

int hsb_verbs_open(const char *dev, const char *from, const char *to,
		   uint32_t dest_qpn, unsigned mtu, unsigned max_wr,
		   void *buf, size_t len, struct hsb_verbs **ret_v)
{
	struct sockaddr_storage src;
	struct ibv_gid_entry e;
	struct hsb_verbs *v;
	char why[256];
	int r;

	v = calloc(1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v->mtu = mtu;
	v->max_wr = max_wr;
	r = addr(from, &src);
	if (!r)
		r = addr(to, &v->to_addr);
	if (r)
		goto fail;
	r = roce_verbs_find(dev ? dev : "", &src, &v->ctx, &e, why, sizeof(why));
	if (r < 0) {
		fprintf(stderr, "hsb_sender: %s\n", why);
		goto fail;
	}
	roce_verbs_addr_gid(&v->to_addr, &v->to);
	v->pd = ibv_alloc_pd(v->ctx);
	v->cq = v->pd ? ibv_create_cq(v->ctx, (int)(2 * max_wr + 2), NULL, NULL, 0) : NULL;
	v->mr = v->cq ? ibv_reg_mr(v->pd, buf, len, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!v->mr) {
		r = -errno;
		fprintf(stderr, "hsb_sender: PD, CQ or MR: %s\n", strerror(errno));
		goto fail;
	}
	r = make_qp(v, 0, &e, dest_qpn);
	if (r < 0) {
		fprintf(stderr, "hsb_sender: UC QP to QPN 0x%x: %s\n", dest_qpn, strerror(-r));
		goto fail;
	}
	*ret_v = v;
	return 0;
fail:
	hsb_verbs_close(v);
	return r;
}

int hsb_verbs_foreign(struct hsb_verbs *v, const char *from, uint32_t dest_qpn)
{
	struct sockaddr_storage src;
	struct ibv_gid_entry e;
	int r = addr(from, &src);

	if (r)
		return r;
	if (roce_verbs_gid_entry(v->ctx, &src, &e) < 0) {
		fprintf(stderr, "hsb_sender: %s has no RoCE v2 GID on %s\n", from,
			ibv_get_device_name(v->ctx->device));
		return -ENOENT;
	}
	r = make_qp(v, 1, &e, dest_qpn);
	if (r < 0)
		fprintf(stderr, "hsb_sender: foreign QP: %s\n", strerror(-r));
	return r;
}

/* Wait for the signaled last WRITE of a batch: the packets may be reused. */
static int wait_sent(struct hsb_verbs *v)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(v->cq, 1, &wc)) == 0)
		;
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "hsb_sender: send completion: %s\n",
			n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
		return -EIO;
	}
	return 0;
}

int hsb_verbs_send(struct hsb_verbs *v, unsigned qp, const uint8_t *pkts,
		   const size_t *lens, const unsigned *order, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct roce_pkt p;
		struct ibv_sge sge;
		struct ibv_send_wr wr = { 0 }, *bad;
		int r;

		if (roce_parse(pkts + (size_t)order[i] * ROCE_MAX_PACKET,
			       lens[order[i]], &p) < 0)
			return -EINVAL;
		sge = (struct ibv_sge){ .addr = (uintptr_t)p.payload,
					.length = p.dma_len, .lkey = v->mr->lkey };
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = p.opcode == ROCE_OP_UC_WRITE_ONLY_IMM ?
				    IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
		wr.imm_data = htonl(p.imm);
		wr.wr.rdma.remote_addr = p.va;
		wr.wr.rdma.rkey = p.rkey;
		/* The batch's last is signaled, and one in max_wr / 2. */
		if (i == n - 1 || ++v->pending[qp] >= v->max_wr / 2) {
			wr.send_flags = IBV_SEND_SIGNALED;
			v->pending[qp] = 0;
		}
		r = ibv_post_send(v->qp[qp], &wr, &bad);
		if (r) {
			fprintf(stderr, "hsb_sender: post: %s\n", strerror(r));
			return -r;
		}
		if (wr.send_flags && wait_sent(v) < 0)
			return -EIO;
	}
	return 0;
}

uint32_t hsb_verbs_qpn(const struct hsb_verbs *v)
{
	return v->qp[0]->qp_num;
}

void hsb_verbs_close(struct hsb_verbs *v)
{
	if (!v)
		return;
	for (unsigned i = 0; i < 2; i++)
		if (v->qp[i])
			ibv_destroy_qp(v->qp[i]);
	if (v->mr)
		ibv_dereg_mr(v->mr);
	if (v->cq)
		ibv_destroy_cq(v->cq);
	if (v->pd)
		ibv_dealloc_pd(v->pd);
	if (v->ctx)
		ibv_close_device(v->ctx);
	free(v);
}

#endif /* FPGAD_ROCE */
