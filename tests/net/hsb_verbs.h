/* SPDX-License-Identifier: MIT */
/*
 * hsb_verbs.h - hsb_sender's RoCE mode: the packets hsb_tx.h builds, sent
 * through rdma-core as an HSB FPGA's RoCE IP sends them: each UC WRITE
 * Only packet as an IBV_WR_RDMA_WRITE of its payload to its address and
 * R_Key, the frame's last as IBV_WR_RDMA_WRITE_WITH_IMM with the
 * metadata block.  The NIC makes the headers (PSNs, QPN, iCRC): those
 * hsb_tx.h wrote are not sent, its PSNs live on in the immediates and the
 * metadata only.  QP 0 sends from --from to the receiver's QP; QP 1 is a
 * foreign sender (another source address or another destination QP).
 * Built with ROCE=1; without it hsb_verbs_open() says so and fails.
 */
#ifndef FPGAD_TESTS_HSB_VERBS_H
#define FPGAD_TESTS_HSB_VERBS_H

#include <stddef.h>
#include <stdint.h>

struct hsb_verbs;

/*
 * A UC QP on RDMA device @dev (NULL: the first with a RoCE v2 GID for
 * @from) from address @from to @to's QP @dest_qpn, path MTU @mtu, room
 * for @max_wr WRITEs in flight; packets live in @buf (@len bytes).
 * 0 or -errno, having said why on stderr.
 */
int hsb_verbs_open(const char *dev, const char *from, const char *to,
		   uint32_t dest_qpn, unsigned mtu, unsigned max_wr,
		   void *buf, size_t len, struct hsb_verbs **ret_v);
/* QP 1: from @from to QP @dest_qpn (made anew at each call). */
int hsb_verbs_foreign(struct hsb_verbs *v, const char *from, uint32_t dest_qpn);
/* Packets @order[0..n) of @pkts (hsb_tx_packet()'s, ROCE_MAX_PACKET apart) on @qp. */
int hsb_verbs_send(struct hsb_verbs *v, unsigned qp, const uint8_t *pkts,
		   const size_t *lens, const unsigned *order, unsigned n);
/* The QP number of QP 0, for the receiver's sender_qpn. */
uint32_t hsb_verbs_qpn(const struct hsb_verbs *v);
void hsb_verbs_close(struct hsb_verbs *v);

#endif
