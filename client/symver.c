// SPDX-License-Identifier: MIT
/*
 * symver.c - libfpgad.so's older versions of functions whose interface
 * changed (client/libfpgad.map), for the programs linked against them.
 * The shared library only: a program linked with libfpgad.a was built
 * with this fpgad.h.
 */
#include <stddef.h>
#include <string.h>

#include "fpgad.h"

/* struct fpgad_frame of version FPGAD_0: up to and with lost. */
#define FPGAD_FRAME_V0_SIZE offsetof(struct fpgad_frame, t_sender_start_ns)
_Static_assert(FPGAD_FRAME_V0_SIZE == offsetof(struct fpgad_frame, lost) + 8,
	       "the sender's times follow lost");

/*
 * fpgad_frame_wait@FPGAD_0: for programs built against fpgad.h before
 * struct fpgad_frame had the sender's times.  Their frame ends at lost,
 * and nothing past it is written.
 */
FPGAD_EXPORT int fpgad__frame_wait_v0(fpgad_channel *ch,
				      struct fpgad_frame *ret_frame,
				      int timeout_ms);
__asm__(".symver fpgad__frame_wait_v0, fpgad_frame_wait@FPGAD_0");
int fpgad__frame_wait_v0(fpgad_channel *ch, struct fpgad_frame *ret_frame,
			 int timeout_ms)
{
	struct fpgad_frame f;
	int r = fpgad_frame_wait(ch, &f, timeout_ms);

	if (r == 0)
		memcpy(ret_frame, &f, FPGAD_FRAME_V0_SIZE);
	return r;
}

/* struct fpgad_channel_stats before net_landing: its whole size then. */
#define FPGAD_CHANNEL_STATS_V0_SIZE offsetof(struct fpgad_channel_stats, net_landing)
_Static_assert(FPGAD_CHANNEL_STATS_V0_SIZE ==
	       offsetof(struct fpgad_channel_stats, integrity) + 8 &&
	       FPGAD_CHANNEL_STATS_V0_SIZE % _Alignof(struct fpgad_channel_stats) == 0,
	       "net_landing follows integrity, where the struct ended");

/*
 * fpgad_channel_stats@FPGAD_0: for programs built against fpgad.h before
 * struct fpgad_channel_stats had net_landing; nothing past it is written.
 */
FPGAD_EXPORT int fpgad__channel_stats_v0(fpgad_client *c, const char *name,
					 struct fpgad_channel_stats *ret_stats);
__asm__(".symver fpgad__channel_stats_v0, fpgad_channel_stats@FPGAD_0");
int fpgad__channel_stats_v0(fpgad_client *c, const char *name,
			    struct fpgad_channel_stats *ret_stats)
{
	struct fpgad_channel_stats st;
	int r = fpgad_channel_stats(c, name, &st);

	if (r == 0)
		memcpy(ret_stats, &st, FPGAD_CHANNEL_STATS_V0_SIZE);
	return r;
}
