// SPDX-License-Identifier: MIT
/*
 * cmd_send.c - fpgactl send: lease an h2c channel and hand the card N frames
 * in the sim frame format, then report the rate and what the card made of
 * them (the simulated card's sink verifies each frame it reads).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "fpgactl.h"
#include "fpgad_simframe.h"

/* Fill a buffer with frame @seq and hand it to the card. */
static int send_one(fpgad_channel *ch, const struct fpgad_channel_info *info,
		    const struct fpgactl_opts *o, void *frame,
		    const void *pattern, uint64_t psize, uint64_t seq)
{
	struct fpgad_frame f;
	int r;

	r = fpgad_frame_wait(ch, &f, o->timeout_ms);
	if (r < 0)
		return r;
	fpgad_simframe_fill(frame, info->frame_size, seq, 0, pattern, psize);
	r = fpgad_frame_write(ch, &f, frame, info->frame_size);
	if (r < 0)
		return r;
	return fpgad_frame_submit(ch, &f, info->frame_size);
}

/*
 * Wait until the card has taken @n more frames than @before (5 s at most),
 * looking every millisecond: the rate ends within one of the card's last.
 */
static int settle(fpgad_client *c, const char *name,
		  const struct fpgad_channel_stats *before, uint64_t n,
		  struct fpgad_channel_stats *ret_after)
{
	for (int i = 0; i < 5000; i++) {
		int r = fpgad_channel_stats(c, name, ret_after);

		if (r < 0)
			return r;
		if (ret_after->frames + ret_after->errors + ret_after->drops >=
		    before->frames + before->errors + before->drops + n)
			return 0;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static void report(const struct fpgactl_opts *o,
		   const struct fpgad_channel_info *info, uint64_t n,
		   double secs, uint64_t good, uint64_t bad, uint64_t lost)
{
	double fps = secs > 0 ? (double)n / secs : 0;
	double gbps = secs > 0 ? (double)n * (double)info->frame_size / secs / 1e9 : 0;

	if (o->json) {
		json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:o, s:o}",
				      "channel", info->name, "memory",
				      info->memory == FPGAD_MEMORY_CUDA ? "cuda" : "host",
				      "mode", info->mode, "frames", (json_int_t)n,
				      "card_good", (json_int_t)good,
				      "card_bad", (json_int_t)bad,
				      "lost", (json_int_t)lost,
				      "fps", fpgactl_json_num(secs > 0 ? fps : NAN),
				      "gbps", fpgactl_json_num(secs > 0 ? gbps : NAN));
		fpgactl_print_json(j);
		return;
	}
	printf("channel %s: %s memory, %s\n", info->name,
	       info->memory == FPGAD_MEMORY_CUDA ? "cuda" : "host", info->mode);
	printf("frames     %llu sent, %llu bytes each\n", (unsigned long long)n,
	       (unsigned long long)info->frame_size);
	printf("card       %llu verified, %llu rejected, %llu lost\n",
	       (unsigned long long)good, (unsigned long long)bad,
	       (unsigned long long)lost);
	printf("rate       %.0f frames/s, %.3f GB/s\n", fps, gbps);
}

int fpgactl_send_frames(fpgad_client *c, fpgad_channel *ch,
			const struct fpgactl_opts *o, uint64_t n,
			struct fpgactl_sent *ret_sent)
{
	struct fpgad_channel_stats before, after;
	struct fpgad_channel_info info;
	struct fpgactl_progress bar;
	void *frame = NULL, *pattern = NULL;
	uint64_t psize, t0, i;
	char failed[512];
	int r;

	fpgad_channel_get_info(ch, &info);
	psize = fpgad_simframe_pattern_size(info.frame_size);
	pattern = malloc(psize);
	frame = malloc(info.frame_size);
	if (!pattern || !frame) {
		r = fpgactl_fail(NULL, "send", -ENOMEM);
		goto out;
	}
	fpgad_simframe_pattern_fill(pattern, psize);
	r = fpgad_channel_stats(c, info.name, &before);
	if (r < 0) {
		r = fpgactl_fail(c, "stats", r);
		goto out;
	}
	t0 = clock_now_ns();
	fpgactl_progress_start(&bar, n, false, false);
	for (i = 0; i < n; i++) {
		uint64_t t = clock_now_ns();

		fpgactl_progress_show(&bar, i);
		r = send_one(ch, &info, o, frame, pattern, psize, i);
		if (ret_sent->lat_ns)
			ret_sent->lat_ns[i] = clock_now_ns() - t;
		if (r < 0) {
			fpgactl_progress_end(&bar);
			fprintf(stderr, "fpgactl: send %s: after %llu frames: %s\n",
				info.name, (unsigned long long)i,
				fpgactl_asks(r) && fpgactl_failed(c, info.name, true, failed, sizeof(failed)) ? failed :
				r == -ETIMEDOUT ? "no free buffer within the timeout" :
				r == -EPIPE ? "the lease ended (fpgad stopped or closed it)" :
				strerror(-r));
			r = 1;
			goto out;
		}
	}
	fpgactl_progress_show(&bar, n);
	r = settle(c, info.name, &before, n, &after);
	if (r < 0 && fpgactl_asks(r) && fpgactl_failed(c, info.name, true, failed, sizeof(failed))) {
		fprintf(stderr, "fpgactl: send %s: %s\n", info.name, failed);
		r = 1;
		goto out;
	}
	if (r < 0) {
		r = fpgactl_fail(c, "the card did not take every frame", r);
		goto out;
	}
	ret_sent->secs = (double)(clock_now_ns() - t0) / 1e9;
	ret_sent->good = after.card_good - before.card_good;
	ret_sent->bad = after.card_bad - before.card_bad;
	ret_sent->lost = after.errors + after.drops - before.errors - before.drops;
	r = 0;
out:
	free(frame);
	free(pattern);
	return r;
}

int fpgactl_send(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_channel_info info;
	struct fpgactl_sent sent = { 0 };
	fpgad_channel *ch;
	int code;

	if (fpgactl_lease(c, o->channel, 0, "h2c", &ch, &info))
		return 1;
	code = fpgactl_send_frames(c, ch, o, o->count, &sent);
	if (code == 0) {
		report(o, &info, o->count, sent.secs, sent.good, sent.bad, sent.lost);
		code = sent.bad || sent.lost;
	}
	fpgad_channel_close(ch);
	return code;
}
