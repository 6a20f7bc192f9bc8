// SPDX-License-Identifier: MIT
/*
 * consumer [N] - the verifying consumer of the container tests: connect to
 * $FPGAD_URL, lease $FPGAD_CHANNEL (what fpgad's CDI device sets), take N
 * frames (100 by default), check each against the simulated card's frame
 * format (header, sequence number, payload) and that the sequence only
 * grows, release it, and print one line:
 *
 *   consumer: c2h0: 100 frames verified (seq 12..140, lost 29) uid 0 pid 1
 *
 * Exit 0 when every frame was good, 1 otherwise (with what was wrong).
 * With $CONSUMER_WAIT_FOR set to a path, it first waits (up to 30 s) for
 * that file to exist: a test's cue, e.g. after restarting fpgad.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fpgad.h"
#include "fpgad_simframe.h"

int main(int argc, char **argv)
{
	const char *name = getenv("FPGAD_CHANNEL");
	struct fpgad_channel_info info;
	struct fpgad_frame f;
	fpgad_channel *ch;
	fpgad_client *c;
	uint64_t psize, first = 0, last = 0, lost = 0, off = 0;
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 100;
	void *pattern;
	int r;

	if (argc > 2 || n <= 0) {
		fprintf(stderr, "usage: consumer [N]   (with FPGAD_URL and FPGAD_CHANNEL set)\n");
		return 2;
	}
	const char *cue = getenv("CONSUMER_WAIT_FOR");
	for (int i = 0; cue && cue[0] && access(cue, F_OK) && i < 3000; i++)
		usleep(10000);
	if (!name || !name[0]) {
		fprintf(stderr, "consumer: FPGAD_CHANNEL is not set\n");
		return 1;
	}
	r = fpgad_connect(NULL, &c);
	if (r < 0) {
		fprintf(stderr, "consumer: connect %s: %s: %s\n", fpgad_default_url(),
			strerror(-r), fpgad_errmsg(NULL));
		return 1;
	}
	r = fpgad_channel_open(c, name, 0, &ch);
	if (r < 0) {
		fprintf(stderr, "consumer: lease %s: %s: %s\n", name, strerror(-r),
			fpgad_errmsg(c));
		return 1;
	}
	fpgad_channel_get_info(ch, &info);
	if (strcmp(info.direction, "c2h")) {
		fprintf(stderr, "consumer: %s: not a c2h channel\n", name);
		return 1;
	}
	psize = fpgad_simframe_pattern_size(info.frame_size);
	pattern = malloc(psize);
	if (!pattern)
		return 1;
	fpgad_simframe_pattern_fill(pattern, psize);
	for (long i = 0; i < n; i++) {
		const void *data;

		r = fpgad_frame_wait(ch, &f, 5000);
		if (r < 0) {
			fprintf(stderr, "consumer: %s: frame %ld: %s\n", name, i, strerror(-r));
			return 1;
		}
		if (i && f.seq <= last) {
			fprintf(stderr, "consumer: %s: seq %llu after %llu\n", name,
				(unsigned long long)f.seq, (unsigned long long)last);
			return 1;
		}
		if (f.flags & FPGAD_FRAME_F_ERROR) {
			fprintf(stderr, "consumer: %s: seq %llu flagged bad by fpgad\n", name,
				(unsigned long long)f.seq);
			return 1;
		}
		r = fpgad_frame_host(ch, &f, &data);
		if (r == 0)
			r = fpgad_simframe_check(data, f.length, f.seq, pattern, psize, &off);
		if (r != 0) {
			fprintf(stderr, "consumer: %s: seq %llu: %s at byte %llu\n", name,
				(unsigned long long)f.seq,
				r < 0 ? strerror(-r) : fpgad_simframe_strerror(r),
				(unsigned long long)off);
			return 1;
		}
		if (!i)
			first = f.seq;
		lost += f.lost;
		last = f.seq;
		fpgad_frame_release(ch, &f);
	}
	printf("consumer: %s: %ld frames verified (seq %llu..%llu, lost %llu) uid %u pid %d\n",
	       name, n, (unsigned long long)first, (unsigned long long)last,
	       (unsigned long long)lost, (unsigned)getuid(), (int)getpid());
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	free(pattern);
	return 0;
}
