// SPDX-License-Identifier: MIT
/*
 * hold_frame URL CHANNEL [N [shared]] - lease CHANNEL (a shared-read
 * lease with "shared"), take N frames (1 by default), print "held" and
 * wait, holding them, until killed: a process that dies with a lease and
 * its frames.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fpgad.h"

int main(int argc, char **argv)
{
	struct fpgad_frame f;
	fpgad_channel *ch;
	fpgad_client *c;
	int n = argc >= 4 ? atoi(argv[3]) : 1;
	unsigned flags = argc == 5 && !strcmp(argv[4], "shared") ? FPGAD_OPEN_SHARED : 0;

	if (argc < 3 || argc > 5)
		return 2;
	if (fpgad_connect(argv[1], &c) < 0 ||
	    fpgad_channel_open(c, argv[2], flags, &ch) < 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (fpgad_frame_wait(ch, &f, 5000) < 0)
			return 1;
	printf("held %llu\n", (unsigned long long)f.seq);
	fflush(stdout);
	for (;;)
		pause();
}
