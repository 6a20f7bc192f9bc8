// SPDX-License-Identifier: MIT
/*
 * hold_frame URL CHANNEL - lease CHANNEL, take one frame, print "held"
 * and wait, holding it, until killed: a process that dies with a lease.
 */
#include <stdio.h>
#include <unistd.h>

#include "fpgad.h"

int main(int argc, char **argv)
{
	struct fpgad_frame f;
	fpgad_channel *ch;
	fpgad_client *c;

	if (argc != 3)
		return 2;
	if (fpgad_connect(argv[1], &c) < 0 ||
	    fpgad_channel_open(c, argv[2], 0, &ch) < 0 ||
	    fpgad_frame_wait(ch, &f, 5000) < 0)
		return 1;
	printf("held %llu\n", (unsigned long long)f.seq);
	fflush(stdout);
	for (;;)
		pause();
}
