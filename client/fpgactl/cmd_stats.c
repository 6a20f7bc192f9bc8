// SPDX-License-Identifier: MIT
/*
 * cmd_stats.c - fpgactl stats CHANNEL and reset CHANNEL: one channel's
 * counters, and clearing a channel that failed.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "fpgactl.h"

int fpgactl_stats(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_channel_stats st;
	int r = fpgad_channel_stats(c, o->channel, &st);

	if (r < 0)
		return fpgactl_fail(c, o->channel, r);
	if (o->json) {
		fpgactl_print_json(json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:I, s:I}",
				     "channel", o->channel, "state", st.state,
				     "mode", st.mode,
				     "frames", (json_int_t)st.frames,
				     "bytes", (json_int_t)st.bytes,
				     "drops", (json_int_t)st.drops,
				     "stalls", (json_int_t)st.stalls,
				     "errors", (json_int_t)st.errors,
				     "recoveries", (json_int_t)st.recoveries,
				     "copies", (json_int_t)st.copies,
				     "dma_ns_total", (json_int_t)st.dma_ns_total,
				     "card_good", (json_int_t)st.card_good,
				     "card_bad", (json_int_t)st.card_bad,
				     "integrity_errors", (json_int_t)st.integrity_errors,
				     "queued_avg", fpgactl_json_num(st.queued_avg),
				     "latency_ns_total", (json_int_t)st.latency_ns_total,
				     "latency_frames", (json_int_t)st.latency_frames));
		return 0;
	}
	printf("channel %s: %s, %s\n", o->channel, st.state, st.mode);
	printf("frames      %llu (%llu bytes)\n", (unsigned long long)st.frames,
	       (unsigned long long)st.bytes);
	printf("drops       %llu\nstalls      %llu\n", (unsigned long long)st.drops,
	       (unsigned long long)st.stalls);
	printf("errors      %llu, %llu recoveries\n", (unsigned long long)st.errors,
	       (unsigned long long)st.recoveries);
	printf("integrity   %llu frames failed their CRC (flagged)\n",
	       (unsigned long long)st.integrity_errors);
	printf("copies      %llu (bounce)\n", (unsigned long long)st.copies);
	printf("dma time    %.3f s in total\n", (double)st.dma_ns_total / 1e9);
	printf("card queue  %.2f transfers on average at each completion\n",
	       st.queued_avg);
	if (st.latency_frames)
		printf("latency     %.1f us on average from DMA end to publication\n",
		       (double)st.latency_ns_total / (double)st.latency_frames / 1e3);
	if (st.card_good || st.card_bad)
		printf("card sink   %llu verified, %llu rejected\n",
		       (unsigned long long)st.card_good,
		       (unsigned long long)st.card_bad);
	return 0;
}

int fpgactl_reset(fpgad_client *c, const struct fpgactl_opts *o)
{
	int r = fpgad_channel_reset(c, o->channel);

	if (r < 0)
		return fpgactl_fail(c, o->channel, r);
	if (o->json)
		fpgactl_print_json(json_pack("{s:s, s:b}", "channel", o->channel,
					     "reset", 1));
	else
		printf("channel %s: reset\n", o->channel);
	return 0;
}

