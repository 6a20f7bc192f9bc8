// SPDX-License-Identifier: MIT
/*
 * cmd_capture.c - fpgactl capture: lease a channel, take N frames, optionally
 * verify each against the sim frame format, and report throughput, drops,
 * verify errors and wake-up latency (DMA end to this process running).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "fpgactl.h"
#include "fpgad_simframe.h"

#define MAX_SAMPLES (1u << 20)

struct capture {
	uint64_t frames, verified, errors, drops, bytes;
	uint64_t flagged;		/* frames fpgad flagged ERROR */
	uint64_t restarts;		/* fpgad came back (--reconnect) */
	bool fresh;			/* the next frame starts a new sequence */
	uint64_t first_seq, last_seq;
	uint64_t *lat_ns;
	uint64_t n_lat;
	uint64_t t0_ns, t1_ns;
};

static double percentile_us(const struct capture *cap, double p)
{
	return fpgactl_percentile_us(cap->lat_ns, cap->n_lat, p);
}

static int verify(fpgad_channel *ch, const struct fpgad_frame *f,
		  const void *pattern, uint64_t psize, uint64_t *ret_off)
{
	const void *data;
	int r = fpgad_frame_host(ch, f, &data);

	if (r < 0)
		return r;
	return fpgad_simframe_check(data, f->length, f->seq, pattern, psize,
				    ret_off);
}

/*
 * How long the lease took to set up, export beside it: OpenChannel and the
 * handoff, CUDA's start on the ring's GPU, the ring's first map.
 */
static void report_setup(const struct fpgad_channel_setup *su)
{
	printf("setup      lease %.2f ms", (double)su->lease_ns / 1e6);
	if (su->gpu_export[0])
		printf(", CUDA start %.2f ms, first map %.3f ms (export %s)",
		       (double)su->cuda_ns / 1e6, (double)su->map_ns / 1e6,
		       su->gpu_export);
	printf("\n");
}

static void report(const struct fpgactl_opts *o, const struct capture *cap,
		   const struct fpgad_channel_info *info,
		   const struct fpgad_channel_setup *su)
{
	double secs = (double)(cap->t1_ns - cap->t0_ns) / 1e9;
	double fps = secs > 0 ? (double)cap->frames / secs : 0;
	double gbps = secs > 0 ? (double)cap->bytes / secs / 1e9 : 0;

	if (o->json) {
		json_t *j = json_pack(
			"{s:s, s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o, s:{s:o, s:o, s:o},"
			" s:{s:s, s:o, s:o, s:o}}",
			"channel", info->name, "memory",
			info->memory == FPGAD_MEMORY_CUDA ? "cuda" : "host",
			"integrated", info->integrated,
			"mode", info->mode,
			"frames", (json_int_t)cap->frames,
			"verified", (json_int_t)cap->verified,
			"verify_errors", (json_int_t)cap->errors,
			"flagged", (json_int_t)cap->flagged,
			"restarts", (json_int_t)cap->restarts,
			"drops", (json_int_t)cap->drops,
			"fps", fpgactl_json_num(secs > 0 ? fps : NAN),
			"gbps", fpgactl_json_num(secs > 0 ? gbps : NAN),
			"wakeup_latency_us",
			"p50", fpgactl_json_num(cap->n_lat ? percentile_us(cap, 0.50) : NAN),
			"p99", fpgactl_json_num(cap->n_lat ? percentile_us(cap, 0.99) : NAN),
			"max", fpgactl_json_num(cap->n_lat ? percentile_us(cap, 1.0) : NAN),
			"setup", "gpu_export", su->gpu_export,
			"lease_ms", fpgactl_json_num((double)su->lease_ns / 1e6),
			"cuda_start_ms", fpgactl_json_num((double)su->cuda_ns / 1e6),
			"first_map_ms", fpgactl_json_num((double)su->map_ns / 1e6));
		fpgactl_print_json(j);
		return;
	}
	printf("channel %s: %s memory, %s\n", info->name,
	       info->integrated ? "integrated GPU's host" :
	       info->memory == FPGAD_MEMORY_CUDA ? "cuda" : "host", info->mode);
	printf("frames     %llu (seq %llu..%llu), %llu bytes each\n",
	       (unsigned long long)cap->frames,
	       (unsigned long long)cap->first_seq,
	       (unsigned long long)cap->last_seq,
	       (unsigned long long)info->frame_size);
	printf("verified   %llu, errors %llu, flagged by fpgad %llu\n",
	       (unsigned long long)cap->verified,
	       (unsigned long long)cap->errors,
	       (unsigned long long)cap->flagged);
	if (cap->restarts)
		printf("restarts   %llu (fpgad came back; rode through)\n",
		       (unsigned long long)cap->restarts);
	printf("drops      %llu\n", (unsigned long long)cap->drops);
	printf("rate       %.0f frames/s, %.3f GB/s\n", fps, gbps);
	printf("wake-up    p50 %.1f us, p99 %.1f us, max %.1f us (DMA end to fpgactl)\n",
	       percentile_us(cap, 0.50), percentile_us(cap, 0.99),
	       percentile_us(cap, 1.0));
	report_setup(su);
}

static int take(fpgad_channel *ch, const struct fpgactl_opts *o,
		struct capture *cap, const void *pattern, uint64_t psize,
		struct fpgactl_progress *bar)
{
	struct fpgad_frame f;
	uint64_t woke, off = 0;
	int r;

	while (cap->frames < o->count) {
		fpgactl_progress_show(bar, cap->frames);
		r = fpgad_frame_wait(ch, &f, o->timeout_ms);
		woke = clock_now_ns();
		if (r == -ESTALE && o->reconnect) {
			fpgactl_progress_end(bar);
			cap->restarts++;
			cap->fresh = true;
			fprintf(stderr, "fpgactl: fpgad restarted; reconnected to %s after %llu frames\n",
				o->channel, (unsigned long long)cap->frames);
			continue;
		}
		if (r < 0)
			return r;
		if (!cap->frames) {
			cap->t0_ns = woke;
			cap->first_seq = f.seq;
		} else if (cap->fresh) {
			/* A new fpgad counts from 0 again. */
			cap->fresh = false;
		} else if (f.seq > cap->last_seq + 1) {
			cap->drops += f.seq - cap->last_seq - 1;
		} else if (f.seq <= cap->last_seq) {
			cap->errors++;
			fpgactl_progress_end(bar);
			fprintf(stderr, "fpgactl: frame %llu after frame %llu: duplicated or out of order\n",
				(unsigned long long)f.seq,
				(unsigned long long)cap->last_seq);
		}
		cap->last_seq = f.seq;
		cap->frames++;
		cap->bytes += f.length;
		if (cap->n_lat < MAX_SAMPLES && woke > f.t_dma_end_ns)
			cap->lat_ns[cap->n_lat++] = woke - f.t_dma_end_ns;
		if (f.flags & FPGAD_FRAME_F_ERROR)
			cap->flagged++;
		if (o->verify) {
			r = verify(ch, &f, pattern, psize, &off);
			if (r == 0) {
				cap->verified++;
			} else if (!(f.flags & FPGAD_FRAME_F_ERROR)) {
				/* Bad and not flagged: the worst kind. */
				cap->errors++;
				if (cap->errors <= 5) {
					fpgactl_progress_end(bar);
					fprintf(stderr, "fpgactl: frame %llu: %s at byte %llu\n",
						(unsigned long long)f.seq,
						r < -4 ? strerror(-r) :
						fpgad_simframe_strerror(r),
						(unsigned long long)off);
				}
			}
		}
		r = fpgad_frame_release(ch, &f);
		if (r < 0)
			return r;
	}
	cap->t1_ns = clock_now_ns();
	fpgactl_progress_show(bar, cap->frames);
	return 0;
}

int fpgactl_capture(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_channel_setup setup;
	struct fpgad_channel_info info;
	struct fpgactl_progress bar;
	struct capture cap = { 0 };
	void *pattern = NULL;
	uint64_t psize = 0;
	fpgad_channel *ch;
	int r, code = 1;

	fpgad_set_reconnect(c, o->reconnect);
	if (fpgactl_lease(c, o->channel, o->shared ? FPGAD_OPEN_SHARED : 0, "c2h",
			  &ch, &info))
		return 1;
	fpgad_channel_set_newest(ch, o->newest);
	fpgad_channel_set_poll(ch, o->poll_us);
	cap.lat_ns = malloc(MAX_SAMPLES * sizeof(*cap.lat_ns));
	if (o->verify) {
		psize = fpgad_simframe_pattern_size(info.frame_size);
		pattern = malloc(psize);
		if (pattern)
			fpgad_simframe_pattern_fill(pattern, psize);
	}
	if (!cap.lat_ns || (o->verify && !pattern)) {
		fprintf(stderr, "fpgactl: out of memory\n");
		goto out;
	}
	fpgactl_progress_start(&bar, o->count, false, false);
	r = take(ch, o, &cap, pattern, psize, &bar);
	if (r < 0) {
		char failed[512];

		fpgactl_progress_end(&bar);
		fprintf(stderr, "fpgactl: capture %s: after %llu frames: %s\n",
			o->channel, (unsigned long long)cap.frames,
			fpgactl_asks(r) && fpgactl_failed(c, o->channel, true, failed, sizeof(failed)) ? failed :
			r == -ETIMEDOUT ? "no frame within the timeout" :
			r == -EPIPE ? "the lease ended (fpgad stopped or closed it)" :
			strerror(-r));
		goto out;
	}
	fpgactl_sort_ns(cap.lat_ns, cap.n_lat);
	fpgad_channel_get_setup(ch, &setup);
	report(o, &cap, &info, &setup);
	code = cap.errors ? 1 : 0;
out:
	fpgad_channel_close(ch);
	free(pattern);
	free(cap.lat_ns);
	return code;
}
