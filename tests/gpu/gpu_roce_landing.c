// SPDX-License-Identifier: MIT
/*
 * gpu_roce_landing.c - a RoCE channel's GPU landing ring on a GPU host,
 * every part but the NIC: a stand-in writes an HSB sender's packets into
 * the landing memory fpgad makes (GPU memory with its dma-buf,
 * roce_landing_gpu_alloc) the way a NIC would (each WRITE's payload
 * cudaMemcpy'd at the page and offset its RETH names, a completion with
 * the immediate for each WRITE with Immediate) and hands the completions
 * to roce_rx, through fpgad's own GPU landing io: the checks, the flush
 * where the GPU does not order a third party's writes, the copy on the
 * GPU into a slot of a GPU ring.  Each delivered frame is verified in
 * place by a GPU kernel (gpu_verify.h); frames with a lost packet must
 * not be delivered.  No NIC registers the memory (that needs one:
 * tests/net/bringup.sh).
 *
 * It also times fpgad's step per delivered frame (roce_rx_drain: the
 * checks through small CUDA copies, the flush, the copy into the slot;
 * the verifying kernel left out) against a bare device-to-device copy of
 * the frame in the same run, and sets the step beside the frame's time on
 * a 400 Gbit/s wire: the cost of the copy step against the alternative of
 * no step at all (the sender's page window moved onto free slots).
 *
 *   gpu_roce_landing [--gpu G] [--frames N] [--frame-size BYTES] [--mtu M]
 *
 * Prints "gpu-roce: PASS: ..." lines; exit 0 passed, 1 failed, 77 no GPU.
 */
#include <cuda_runtime_api.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bench/bench_util.h"
#include "../net/hsb_tx.h"
#include "device/net/net.h"
#include "device/net/roce_landing.h"
#include "device/net/roce_rx.h"
#include "fpgad_simframe.h"
#include "gpu_verify.h"
#include "memory/memory.h"

#define SLOTS 8u
#define DROP_EVERY 7u		/* frame k * DROP_EVERY loses a data packet */

struct standin {
	struct mem_region *land, *ring;
	uint64_t slot_size;
	struct roce_wc q[ROCE_RX_BATCH];
	unsigned q_n, next;
	uint64_t delivered, bad;
	uint64_t sending;		/* the frame drained now: the only one */
	uint64_t verify_ns;		/* time in the verifying kernel, in all */
	struct gpu_verifier *ver;
	int failed;
};

static int sp_poll(void *user, struct roce_wc *wc, unsigned max)
{
	struct standin *s = user;
	unsigned n = s->q_n < max ? s->q_n : max;

	/* As device_roce.c: the NIC's writes made visible first. */
	if (n && s->land->rdma_order == RDMA_ORDER_NONE &&
	    memory_flush_rdma_writes(s->land) < 0)
		return -EIO;
	memcpy(wc, s->q, n * sizeof(*wc));
	memmove(s->q, s->q + n, (s->q_n - n) * sizeof(*wc));
	s->q_n -= n;
	return (int)n;
}

static int sp_post_recv(void *user, unsigned n)
{
	(void)user, (void)n;
	return 0;
}

static int sp_take(void *user, struct net_slot *ret_slot)
{
	struct standin *s = user;

	ret_slot->cookie = s->next++ % SLOTS;
	ret_slot->base = (unsigned char *)s->ring->dev + ret_slot->cookie * s->slot_size;
	return 0;
}

/* A frame in its GPU slot: checked there by a kernel. */
static void sp_done(void *user, const struct net_frame_done *d)
{
	struct standin *s = user;
	const void *frame = (unsigned char *)s->ring->dev + d->cookie * s->slot_size;
	uint64_t res = 0, t0 = bench_now_ns();

	if (gpu_verifier_submit(s->ver, 0, frame, d->length, s->sending) < 0 ||
	    gpu_verifier_wait(s->ver, 0, &res) < 0) {
		printf("gpu-roce: FAIL: verify: %s\n", gpu_verify_errmsg(s->ver));
		s->failed = 1;
		return;
	}
	if (res != GPU_VERIFY_OK) {
		printf("gpu-roce: FAIL: frame %llu: byte %llu differs in the GPU slot\n",
		       (unsigned long long)s->sending, (unsigned long long)res);
		s->bad++;
	}
	s->delivered++;
	s->verify_ns += bench_now_ns() - t0;
}

static const struct roce_rx_ops sp_ops = {
	.poll = sp_poll,
	.post_recv = sp_post_recv,
	.take = sp_take,
	.done = sp_done,
};

/* The NIC: each WRITE's payload at the place its RETH names. */
static int nic_apply(struct standin *s, const struct sender_layout *lay,
		     const uint8_t *pkt, size_t len)
{
	struct roce_pkt p;
	uint32_t page;
	uint64_t off;

	if (roce_parse(pkt, len, &p) < 0 ||
	    roce_place(lay, p.va, p.dma_len, &page, &off) < 0)
		return -EINVAL;
	if (cudaMemcpy((unsigned char *)s->land->dev + page * lay->stride + off,
		       p.payload, p.dma_len, cudaMemcpyHostToDevice) != cudaSuccess)
		return -EIO;
	if (p.opcode == ROCE_OP_UC_WRITE_ONLY_IMM && s->q_n < ROCE_RX_BATCH)
		s->q[s->q_n++] = (struct roce_wc){ .has_imm = true, .imm = p.imm };
	return 0;
}

/*
 * The baseline: the frame copied from a landing page into a slot by one
 * cudaMemcpyAsync on the default stream, waited for, as many times as
 * frames were delivered; then the step's and the copy's medians.
 */
static void report_step(struct standin *s, const struct roce_rx_cfg *cfg,
			uint64_t *step_ns, size_t n_step, uint64_t *copy_ns,
			size_t n_copy)
{
	double wire_us = (double)cfg->frame_size * 8 / 400e3;	/* 400 Gbit/s */
	double step, p99, copy;

	for (size_t i = 0; i < n_copy; i++) {
		uint64_t t0 = bench_now_ns();

		if (cudaMemcpyAsync(s->ring->dev, s->land->dev, cfg->frame_size,
				    cudaMemcpyDeviceToDevice, 0) != cudaSuccess ||
		    cudaStreamSynchronize(0) != cudaSuccess) {
			printf("gpu-roce: FAIL: the baseline copy\n");
			s->failed = 1;
			return;
		}
		copy_ns[i] = bench_now_ns() - t0;
	}
	bench_sort(step_ns, n_step);
	bench_sort(copy_ns, n_copy);
	step = bench_pct_us(step_ns, n_step, 0.5);
	p99 = bench_pct_us(step_ns, n_step, 0.99);
	copy = bench_pct_us(copy_ns, n_copy, 0.5);
	printf("gpu-roce: figure: %llu-byte frames: fpgad's step p50 %.1f us (p99 %.1f; checks, flush, copy into the slot), a bare device-to-device copy p50 %.1f us: step / copy %.2f; the frame's time on a 400 Gbit/s wire %.1f us: step / wire %.2f\n",
	       (unsigned long long)cfg->frame_size, step, p99, copy,
	       copy > 0 ? step / copy : 0, wire_us, step / wire_us);
}

int main(int argc, char **argv)
{
	unsigned frames = 64, mtu = 4096;
	uint64_t frame_size = 1u << 20;
	const char *gpu = "0";
	struct standin s = { 0 };
	struct roce_rx_cfg cfg = { 0 };
	struct roce_landing_gpu io = { 0 };
	struct roce_rx rx;
	struct hsb_tx tx;
	unsigned char *frame;
	uint8_t pkt[ROCE_MAX_PACKET];
	char why[256] = "";
	int ordinal, fd = -1, opt, r;
	uint64_t dropped = 0, *step_ns, *copy_ns;
	size_t n_step = 0;

	while ((opt = getopt(argc, argv, "g:n:s:m:")) != -1) {
		switch (opt) {
		case 'g': gpu = optarg; break;
		case 'n': frames = (unsigned)strtoul(optarg, NULL, 0); break;
		case 's': frame_size = strtoull(optarg, NULL, 0); break;
		case 'm': mtu = (unsigned)strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: %s [-g GPU] [-n FRAMES] [-s FRAME_SIZE] [-m MTU]\n",
				argv[0]);
			return 2;
		}
	}
	if (memory_cuda_probe(gpu, &ordinal, why, sizeof(why)) < 0) {
		printf("gpu-roce: SKIP: %s\n", why);
		return 77;
	}
	if (frame_size < FPGAD_SIMFRAME_HDR_SIZE || mtu < 256 || mtu > 4096 || mtu % 8) {
		fprintf(stderr, "gpu-roce: bad frame size or MTU\n");
		return 2;
	}
	net_layout(frame_size, SLOTS, &cfg.layout);
	cfg.payload = mtu;
	cfg.frame_size = frame_size;
	cfg.slot_size = s.slot_size = (frame_size + 4095) / 4096 * 4096;
	cfg.io = &roce_landing_gpu_io;
	r = roce_landing_gpu_alloc((size_t)cfg.layout.pages * cfg.layout.stride, gpu,
				   "roce-landing", &s.land, &fd, why, sizeof(why));
	if (r < 0) {
		printf("gpu-roce: FAIL: GPU landing memory: %s\n", why);
		return 1;
	}
	printf("gpu-roce: PASS: landing ring of %u pages in GPU %s's memory, its dma-buf fd %d (%s)\n",
	       cfg.layout.pages, gpu, fd, memory_rdma_order_rule(s.land->rdma_order));
	cfg.io_user = &io;
	if (roce_landing_gpu_io_open(&io, s.land, roce_rx_io_staging(&cfg)) < 0 ||
	    memory_cuda_ops.alloc(SLOTS * s.slot_size, gpu, "roce-ring", 0, &s.ring) < 0 ||
	    gpu_verifier_create(ordinal, 1, &s.ver) < 0 ||
	    roce_rx_init(&rx, &cfg, s.land->dev) < 0 ||
	    !(frame = malloc(frame_size)) ||
	    !(step_ns = calloc(frames, sizeof(*step_ns))) ||
	    !(copy_ns = calloc(frames, sizeof(*copy_ns)))) {
		printf("gpu-roce: FAIL: set-up: %s\n", gpu_verify_errmsg(NULL));
		return 1;
	}
	tx = (struct hsb_tx){ .qpn = 0x11, .rkey = 0x1234, .lay = cfg.layout,
			      .payload = mtu, .psn = 0xffff00 };
	for (unsigned f = 0; f < frames && !s.failed; f++) {
		uint32_t n = hsb_tx_packets(&tx, frame_size);
		bool drop = f && f % DROP_EVERY == 0;

		fpgad_simframe_fill_part(frame, frame_size, frame_size, f, 0, NULL, 0);
		tx.frame_number = f;
		for (uint32_t i = 0; i < n; i++) {
			size_t len = hsb_tx_packet(&tx, frame, frame_size, i, pkt);

			if (drop && i == n / 2)
				continue;
			if (nic_apply(&s, &cfg.layout, pkt, len) < 0) {
				printf("gpu-roce: FAIL: the stand-in NIC's write of packet %u\n", i);
				return 1;
			}
		}
		dropped += drop;
		tx.psn = (tx.psn + n) & ROCE_PSN_MASK;
		tx.page = (tx.page + 1) % cfg.layout.pages;
		s.sending = f;
		uint64_t before = s.delivered, v0 = s.verify_ns, t0 = bench_now_ns();

		if (roce_rx_drain(&rx, &sp_ops, &s, 0) < 0) {
			printf("gpu-roce: FAIL: drain\n");
			return 1;
		}
		if (s.delivered == before + 1)
			step_ns[n_step++] = bench_now_ns() - t0 - (s.verify_ns - v0);
	}
	if (!s.failed && s.delivered == frames - dropped && !s.bad &&
	    rx.cnt.incomplete_frames == dropped)
		printf("gpu-roce: PASS: %llu frames of %llu bytes verified in place in the GPU ring, %llu with a lost packet not delivered\n",
		       (unsigned long long)s.delivered, (unsigned long long)frame_size,
		       (unsigned long long)dropped);
	else {
		printf("gpu-roce: FAIL: %llu delivered (%llu bad), %llu incomplete; sent %u, %llu with a lost packet\n",
		       (unsigned long long)s.delivered, (unsigned long long)s.bad,
		       (unsigned long long)rx.cnt.incomplete_frames, frames,
		       (unsigned long long)dropped);
		s.failed = 1;
	}
	if (!s.failed && n_step)
		report_step(&s, &cfg, step_ns, n_step, copy_ns, frames);
	roce_rx_free(&rx);
	roce_landing_gpu_io_close(&io);
	free(step_ns);
	free(copy_ns);
	free(frame);
	gpu_verifier_destroy(s.ver);
	memory_cuda_ops.free(s.ring);
	close(fd);
	memory_cuda_ops.free(s.land);
	return s.failed ? 1 : 0;
}
