// SPDX-License-Identifier: MIT
/*
 * fuzz_frame_ring.c - libFuzzer: the shared descriptor ring as a client
 * maps it, with every byte chosen by the fuzzer (a broken or hostile
 * producer): validate, attach, claim, release must never crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame_consumer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_consumer *c;
	struct frame_ring_frame f;
	void *mem;

	if (size > (1u << 20))
		return 0;
	mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
	if (!mem)
		return 0;
	memcpy(mem, data, size);
	if (frame_ring_validate(mem, size) == 0 &&
	    frame_consumer_attach(mem, size, &c) == 0) {
		for (int i = 0; i < 64; i++) {
			int r = frame_consumer_claim(c, &f);

			if (r == 0)
				frame_consumer_release(c, &f);
			else if (r != -EPROTO)
				break;
		}
		frame_consumer_free(c);
	}
	free(mem);
	return 0;
}
