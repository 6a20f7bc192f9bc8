// SPDX-License-Identifier: MIT
/*
 * old_frame_wait URL CHANNEL N - a program as one built against the
 * fpgad.h before struct fpgad_frame had the sender's times, linked with
 * libfpgad.so: it binds fpgad_frame_wait@FPGAD_0 and hands it a frame of
 * that layout (up to lost), followed by guard bytes.  It takes N frames
 * of a sim channel, checks each (sim frame format, in order, its data at
 * its slot) and that nothing past its frame was written, then asks the
 * channel's stats through fpgad_channel_stats@FPGAD_0 (struct
 * fpgad_channel_stats before net_landing, guard bytes after it) and
 * checks them the same way, and prints "ok N".  Exit 0 when all were, 1
 * when one was not, 2 on an error.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpgad.h"
#include "fpgad_simframe.h"

/* struct fpgad_frame of FPGAD_0. */
struct frame_v0 {
	uint64_t seq;
	uint32_t slot;
	uint32_t flags;
	uint64_t length;
	uint64_t t_dma_start_ns;
	uint64_t t_dma_end_ns;
	uint64_t t_publish_ns;
	void *data;
	uint64_t skipped;
	uint64_t lost;
};

int old_frame_wait(fpgad_channel *ch, struct frame_v0 *f, int timeout_ms);
__asm__(".symver old_frame_wait, fpgad_frame_wait@FPGAD_0");

int old_channel_stats(fpgad_client *c, const char *name, void *ret_stats);
__asm__(".symver old_channel_stats, fpgad_channel_stats@FPGAD_0");

#define GUARD 0xa5

/* The stats as FPGAD_0 gave them: 0 when right and nothing past them written. */
static int old_stats(fpgad_client *c, const char *name, uint64_t frames)
{
	struct {
		union {
			unsigned char bytes[offsetof(struct fpgad_channel_stats, net_landing)];
			struct { char state[16]; char mode[16]; uint64_t frames; } head;
		} st;
		unsigned char guard[256];
	} buf;

	memset(&buf, GUARD, sizeof(buf));
	if (old_channel_stats(c, name, &buf.st) < 0)
		return 2;
	for (size_t k = 0; k < sizeof(buf.guard); k++)
		if (buf.guard[k] != GUARD) {
			printf("stats: byte %zu past the old struct written\n", k);
			return 1;
		}
	if (!memchr(buf.st.head.state, 0, sizeof(buf.st.head.state)) ||
	    buf.st.head.frames < frames) {
		printf("stats: state '%.16s', %llu frames: not the channel's\n",
		       buf.st.head.state, (unsigned long long)buf.st.head.frames);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct {
		struct frame_v0 f;
		unsigned char guard[64];
	} buf;
	struct fpgad_channel_info info;
	fpgad_channel *ch;
	fpgad_client *c;
	uint64_t psize, prev = 0;
	void *pattern;
	int n, n_bad;

	if (argc != 4 || (n = atoi(argv[3])) <= 0)
		return 2;
	if (fpgad_connect(argv[1], &c) < 0 ||
	    fpgad_channel_open(c, argv[2], 0, &ch) < 0)
		return 2;
	fpgad_channel_get_info(ch, &info);
	psize = fpgad_simframe_pattern_size(info.frame_size);
	pattern = malloc(psize);
	if (!pattern)
		return 2;
	fpgad_simframe_pattern_fill(pattern, psize);
	for (int i = 0; i < n; i++) {
		memset(&buf, GUARD, sizeof(buf));
		if (old_frame_wait(ch, &buf.f, 5000) < 0)
			return 2;
		for (size_t k = 0; k < sizeof(buf.guard); k++)
			if (buf.guard[k] != GUARD) {
				printf("frame %d: byte %zu past the frame written\n", i, k);
				return 1;
			}
		if (buf.f.data != fpgad_slot_data(ch, buf.f.slot) ||
		    buf.f.length != info.frame_size || (i && buf.f.seq != prev + 1) ||
		    buf.f.t_dma_end_ns > buf.f.t_publish_ns ||
		    fpgad_simframe_check(buf.f.data, buf.f.length, buf.f.seq, pattern,
					 psize, NULL) != FPGAD_SIMFRAME_OK) {
			printf("frame %d: seq %llu slot %u length %llu: not the frame\n", i,
			       (unsigned long long)buf.f.seq, buf.f.slot,
			       (unsigned long long)buf.f.length);
			return 1;
		}
		prev = buf.f.seq;
		/* fpgad_frame_release() reads the slot, at the same place in both. */
		if (fpgad_frame_release(ch, (const struct fpgad_frame *)&buf.f) < 0)
			return 2;
	}
	n_bad = old_stats(c, argv[2], (uint64_t)n);
	if (n_bad)
		return n_bad;
	printf("ok %d\n", n);
	free(pattern);
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	return 0;
}
