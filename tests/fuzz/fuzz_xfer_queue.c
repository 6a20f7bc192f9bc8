// SPDX-License-Identifier: MIT
/*
 * fuzz_xfer_queue.c - libFuzzer: fpgad's end of a transfer queue
 * (daemon/xfer/xfer_server.c) while a hostile client writes bytes the fuzzer
 * chooses anywhere in the shared queue between fpgad's steps: taking
 * entries, completing them, arming and disarming must never crash, never
 * take more than the completions it can post, and keep its own geometry;
 * then the client's end (client/xfer_queue.c) meets the scribbled queue.
 *
 * Input: a sequence of steps, one byte each, with operands after it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "xfer/xfer_server.h"
#include "xfer_queue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct xfer_server_rules rules = {
	.card_memory = 1u << 20, .max_length = 1u << 20, .part_size = 4096,
	.host_align = 64, .gpu_align = 4096, .max_timeout_ms = 1000,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fpgad_xfer_cqe cqe = { 0 }, out[32];
	struct fpgad_xfer_sqe sqe;
	struct xfer_server *s;
	struct xfer_queue *q;
	unsigned outstanding = 0, taken = 0, done = 0;
	unsigned char *mem;
	size_t len, i = 0;
	int memfd, bell;

	if (xfer_server_create(8, &rules, "fuzz", &s))
		return 0;
	xfer_server_fds(s, &memfd, &bell);
	len = xfer_server_size(s);
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (mem == MAP_FAILED) {
		xfer_server_free(s);
		return 0;
	}
	while (i < size) {
		uint8_t op = data[i++];

		switch (op % 5) {
		case 0:		/* the client writes 8 bytes anywhere */
			if (i + 10 <= size) {
				size_t at = ((size_t)data[i] << 8 | data[i + 1]) % (len - 7);

				memcpy(mem + at, data + i + 2, 8);
				i += 10;
			}
			break;
		case 1:		/* fpgad takes an entry */
			if (xfer_server_take(s, outstanding, &sqe) == 1) {
				outstanding++;
				taken++;
			}
			break;
		case 2:		/* fpgad completes one */
			if (outstanding) {
				cqe.user_data = taken;
				xfer_server_complete(s, &cqe);
				xfer_server_wake(s);
				outstanding--;
				done++;
			}
			break;
		case 3:
			if (!xfer_server_arm(s))
				xfer_server_disarm(s);
			break;
		case 4:
			xfer_server_pending(s);
			xfer_server_raise(s, op >> 3);
			break;
		}
	}
	/* fpgad never owes more completions than the queue holds. */
	if (outstanding > 16)
		abort();
	(void)done;
	if (xfer_queue_attach(mem, len, &q) == 0) {
		xfer_queue_room(q);
		xfer_queue_pop(q, out, 32);
		xfer_queue_events(q);
		xfer_queue_free(q);
	}
	munmap(mem, len);
	xfer_server_free(s);
	return 0;
}
