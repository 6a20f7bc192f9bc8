// SPDX-License-Identifier: MIT
/*
 * net_consumer.c - a verifying consumer written against fpgad.h alone, for
 * the network tier: lease a channel, say "leased" (the sender may start:
 * the ring and its R_Key are the lessee's now), check every frame against
 * the sim frame format, and stop once no frame came for --idle-ms.
 *
 *   net_consumer URL CHANNEL [--idle-ms MS] [--max-wait-ms MS] [--verify 0]
 *                [--stamp BASE|none]
 *
 * --stamp: every frame must carry the sender's times hsb_sender --stamp
 * BASE sends (start BASE + seq * 1000 ns, end 500 ns later), or none (0,
 * 0); a frame with others counts as bad.
 * Prints one line: frames, good, bad (torn, stale or misnumbered content
 * delivered unflagged), flagged (delivered with FPGAD_FRAME_F_ERROR or
 * TRUNCATED), lost (seq gaps).  Exit 0 when no frame was bad, 1 when one
 * was, 2 on a usage or connection error.
 */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpgad.h"
#include "fpgad_simframe.h"

/* @f against the sim frame format: where it is, or a host copy of a GPU slot. */
static int check(fpgad_channel *ch, const struct fpgad_frame *f,
		 const void *pattern, uint64_t psize)
{
	const void *p;

	if (fpgad_frame_host(ch, f, &p) < 0)
		return -1;
	return fpgad_simframe_check(p, f->length, f->seq, pattern, psize, NULL) ==
	       FPGAD_SIMFRAME_OK ? 0 : -1;
}

/* @f carries the sender's times --stamp says, or says which it carries. */
static bool stamp_ok(const struct fpgad_frame *f, bool none, uint64_t base)
{
	uint64_t start = none ? 0 : base + f->seq * 1000;
	uint64_t end = none ? 0 : start + 500;

	if (f->t_sender_start_ns == start && f->t_sender_end_ns == end)
		return true;
	fprintf(stderr, "net_consumer: frame %" PRIu64 ": sender times %" PRIu64
		" %" PRIu64 ", sent %" PRIu64 " %" PRIu64 "\n", f->seq,
		f->t_sender_start_ns, f->t_sender_end_ns, start, end);
	return false;
}

int main(int argc, char **argv)
{
	int idle_ms = 1000, max_wait_ms = 20000, waited = 0, verify = 1, r;
	bool stamp = false, stamp_none = false;
	uint64_t stamp_base = 0;
	uint64_t frames = 0, good = 0, bad = 0, flagged = 0, lost = 0;
	struct fpgad_channel_info info;
	fpgad_channel *ch = NULL;
	fpgad_client *c = NULL;
	void *pattern;
	uint64_t psize;

	if (argc < 3)
		goto usage;
	for (int i = 3; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--idle-ms"))
			idle_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--max-wait-ms"))
			max_wait_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--verify"))
			verify = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--stamp")) {
			stamp = true;
			stamp_none = !strcmp(argv[i + 1], "none");
			stamp_base = strtoull(argv[i + 1], NULL, 0);
		}
		else
			goto usage;
	}
	r = fpgad_connect(argv[1], &c);
	if (r == 0)
		r = fpgad_channel_open(c, argv[2], 0, &ch);
	if (r < 0) {
		fprintf(stderr, "net_consumer: %s: %s\n", argv[2],
			c ? fpgad_errmsg(c) : strerror(-r));
		fpgad_disconnect(c);
		return 2;
	}
	fpgad_channel_get_info(ch, &info);
	psize = fpgad_simframe_pattern_size(info.frame_size);
	pattern = malloc(psize);
	if (!pattern)
		return 2;
	fpgad_simframe_pattern_fill(pattern, psize);
	printf("leased\n");
	fflush(stdout);

	for (;;) {
		struct fpgad_frame f;

		/* Until the first frame, wait for the sender to start. */
		r = fpgad_frame_wait(ch, &f, 100);
		if (r == -ETIMEDOUT) {
			waited += 100;
			if (waited >= (frames ? idle_ms : max_wait_ms))
				break;
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "net_consumer: wait: %s\n", fpgad_errmsg(c));
			break;
		}
		waited = 0;
		frames++;
		lost += f.lost;
		if (stamp && !stamp_ok(&f, stamp_none, stamp_base))
			bad++;
		else if (f.flags & (FPGAD_FRAME_F_ERROR | FPGAD_FRAME_F_TRUNCATED))
			flagged++;
		else if (!verify || check(ch, &f, pattern, psize) == 0)
			good++;
		else
			bad++;
		fpgad_frame_release(ch, &f);
	}
	printf("frames=%" PRIu64 " good=%" PRIu64 " bad=%" PRIu64 " flagged=%" PRIu64
	       " lost=%" PRIu64 "\n", frames, good, bad, flagged, lost);
	free(pattern);
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	return bad ? 1 : 0;
usage:
	fprintf(stderr, "usage: net_consumer URL CHANNEL [--idle-ms MS] [--max-wait-ms MS] [--verify 0]\n"
		"                    [--stamp BASE|none]\n");
	return 2;
}
