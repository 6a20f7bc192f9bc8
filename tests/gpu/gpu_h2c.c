// SPDX-License-Identifier: MIT
/*
 * gpu_h2c.c - a GPU producer of h2c frames: lease an h2c channel in GPU
 * memory, fill N buffers with frames of the sim frame format and hand each
 * to the card, then wait until the sim card's sink has checked them all,
 * and print one JSON line:
 *
 *   gpu_h2c --fill write|memcpy|kernel [--frames N] [--timeout MS] URL CHANNEL
 *
 *   write   fpgad_frame_write() from a host buffer, then fpgad_frame_submit()
 *   memcpy  cudaMemcpyAsync from pinned host memory on a stream, then
 *           fpgad_frame_submit_async() on that stream
 *   kernel  a CUDA kernel writes the frame in place, then
 *           fpgad_frame_submit_async() on its stream
 *
 * Exit status: 0 the card verified every frame, 1 it rejected one or a
 * failure, 2 bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "fpgad.h"
#include "fpgad_simframe.h"
#include "gpu_verify.h"

enum fill { FILL_WRITE, FILL_MEMCPY, FILL_KERNEL };

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Fill the empty buffer @f with frame @seq and hand it to the card. */
static int produce(fpgad_channel *ch, const struct fpgad_channel_info *info,
		   enum fill fill, cudaStream_t s, void **pinned,
		   const struct fpgad_frame *f, uint64_t seq)
{
	uint64_t len = info->frame_size;
	int r;

	switch (fill) {
	case FILL_WRITE:
		fpgad_simframe_fill(pinned[0], len, seq, 0, NULL, 0);
		r = fpgad_frame_write(ch, f, pinned[0], len);
		return r < 0 ? r : fpgad_frame_submit(ch, f, len);
	case FILL_MEMCPY:
		/* One pinned buffer per slot: it is free when the slot is. */
		fpgad_simframe_fill(pinned[f->slot], len, seq, 0, NULL, 0);
		if (cudaMemcpyAsync(f->data, pinned[f->slot], len,
				    cudaMemcpyHostToDevice, s) != cudaSuccess)
			return -EIO;
		return fpgad_frame_submit_async(ch, f, len, s);
	case FILL_KERNEL:
		r = gpu_fill_frame(s, f->data, len, seq, 0);
		return r < 0 ? r : fpgad_frame_submit_async(ch, f, len, s);
	}
	return -EINVAL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fill", required_argument, NULL, 'f' },
		{ "frames", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const fills[] = { "write", "memcpy", "kernel" };
	struct fpgad_channel_stats st0, st;
	struct fpgad_channel_info info;
	enum fill fill = FILL_KERNEL;
	unsigned long long count = 2000, n = 0;
	int timeout_ms = 10000, opt, r, code = 1;
	fpgad_channel *ch = NULL;
	fpgad_client *c = NULL;
	void **pinned = NULL;
	cudaStream_t s = NULL;
	uint64_t deadline;

	while ((opt = getopt_long(argc, argv, "f:n:t:", opts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			for (fill = FILL_WRITE; fill <= FILL_KERNEL; fill++)
				if (!strcmp(optarg, fills[fill]))
					break;
			if (fill > FILL_KERNEL)
				goto usage;
			break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 't': timeout_ms = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (argc - optind != 2 || !count)
		goto usage;
	r = fpgad_connect(argv[optind], &c);
	if (r == 0)
		r = fpgad_channel_open(c, argv[optind + 1], 0, &ch);
	if (r < 0) {
		fprintf(stderr, "gpu_h2c: %s: %s (%s)\n", argv[optind + 1],
			strerror(-r), c ? fpgad_errmsg(c) : "");
		goto out;
	}
	fpgad_channel_get_info(ch, &info);
	if (info.memory != FPGAD_MEMORY_CUDA || strcmp(info.direction, "h2c")) {
		fprintf(stderr, "gpu_h2c: %s is not an h2c channel in GPU memory\n",
			info.name);
		goto out;
	}
	pinned = calloc(info.slots, sizeof(*pinned));
	if (!pinned || cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) !=
	    cudaSuccess)
		goto out;
	for (uint32_t i = 0; i < info.slots; i++)
		if (cudaMallocHost(&pinned[i], info.frame_size) != cudaSuccess)
			goto out;
	r = fpgad_channel_stats(c, info.name, &st0);
	if (r < 0)
		goto out;
	for (n = 0; n < count; n++) {
		struct fpgad_frame f;

		r = fpgad_frame_wait(ch, &f, timeout_ms);
		if (r == 0)
			r = produce(ch, &info, fill, s, pinned, &f, n);
		if (r < 0) {
			fprintf(stderr, "gpu_h2c: frame %llu: %s\n", n, strerror(-r));
			goto out;
		}
	}
	cudaStreamSynchronize(s);
	/* The card checks every frame it receives: wait for the last. */
	deadline = now_ms() + (uint64_t)timeout_ms;
	do {
		r = fpgad_channel_stats(c, info.name, &st);
		if (r < 0)
			goto out;
		if (st.card_good + st.card_bad - st0.card_good - st0.card_bad >= count)
			break;
		usleep(10000);
	} while (now_ms() < deadline);
	printf("{\"channel\":\"%s\",\"integrated\":%s,\"fill\":\"%s\",\"frame_size\":%" PRIu64
	       ",\"frames\":%llu,\"card_good\":%" PRIu64 ",\"card_bad\":%" PRIu64 "}\n",
	       info.name, info.integrated ? "true" : "false", fills[fill], info.frame_size, n,
	       st.card_good - st0.card_good, st.card_bad - st0.card_bad);
	code = st.card_bad == st0.card_bad && st.card_good - st0.card_good == count ?
	       0 : 1;
out:
	if (pinned)
		for (uint32_t i = 0; i < info.slots; i++)
			if (pinned[i])
				cudaFreeHost(pinned[i]);
	free(pinned);
	if (s)
		cudaStreamDestroy(s);
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	return code;
usage:
	fprintf(stderr, "usage: gpu_h2c --fill write|memcpy|kernel [--frames N] [--timeout MS] URL CHANNEL\n");
	return 2;
}
