/* SPDX-License-Identifier: MIT */
/*
 * gpu_verify.h - verify sim frames in place in GPU memory.
 *
 * A CUDA kernel checks one frame where the card wrote it: the header
 * (magic, header size, checksum, length, sequence number) and every
 * payload word against fpgad_simframe_payload_word(seq, i).  Its result
 * is one 64-bit word per frame in device memory: GPU_VERIFY_OK, or the
 * offset of the first bad byte (0 is a valid offset: the magic).
 *
 * A verifier keeps up to @depth frames in flight on one stream, so a
 * consumer may hold that many frames while the GPU checks them.  Frame
 * @n uses entry n % depth: submit frame n, and before submitting frame
 * n + depth, wait for frame n.  One verifier is used by one thread.
 *
 * Functions return 0 or a negative errno; gpu_verify_errmsg() gives the
 * CUDA runtime's words for the last failure (of any verifier, for NULL:
 * also what made gpu_verifier_create() fail).
 */
#ifndef FPGAD_GPU_VERIFY_H
#define FPGAD_GPU_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GPU_VERIFY_OK UINT64_MAX

struct gpu_verifier;

int gpu_verifier_create(int gpu, unsigned depth, struct gpu_verifier **ret_v);
void gpu_verifier_destroy(struct gpu_verifier *v);

/* Queue the check of frame @n: @length bytes at device pointer @frame. */
int gpu_verifier_submit(struct gpu_verifier *v, uint64_t n, const void *frame,
			uint64_t length, uint64_t seq);
/* Wait for frame @n's check; *@ret_result is GPU_VERIFY_OK or a bad offset. */
int gpu_verifier_wait(struct gpu_verifier *v, uint64_t n, uint64_t *ret_result);

/*
 * Checks counted on the GPU, for a consumer that never waits per frame
 * (stream-ordered release): submit_tally queues one kernel per frame,
 * tally waits for all of them and reads the counts.  Not mixed with
 * gpu_verifier_submit on one verifier.
 */
struct gpu_verify_tally {
	unsigned long long checked;		/* frames checked */
	unsigned long long bad;			/* of which bad */
	unsigned long long first_bad_seq;	/* the first bad one */
	unsigned long long first_bad_offset;	/* its first bad byte */
};
int gpu_verifier_submit_tally(struct gpu_verifier *v, const void *frame,
			      uint64_t length, uint64_t seq);
int gpu_verifier_tally(struct gpu_verifier *v, struct gpu_verify_tally *ret_tally);

const char *gpu_verify_errmsg(const struct gpu_verifier *v);

/*
 * The checker checked, on device 0: a good frame passes, a changed payload
 * byte and a wrong frame number are found at their offsets, by both ways.
 * 0, or a negative errno with what went wrong in @why.
 */
int gpu_verify_selftest(char *why, size_t whylen);

/* The verifier's CUDA stream (a cudaStream_t): work queued after a check. */
void *gpu_verifier_stream(const struct gpu_verifier *v);

/*
 * Queue on @stream a kernel that writes frame @seq of the sim frame format
 * (@length bytes, from @source) at device pointer @dst: a producer of h2c
 * frames in GPU memory.
 */
int gpu_fill_frame(void *stream, void *dst, uint64_t length, uint64_t seq,
		   uint32_t source);

#ifdef __cplusplus
}
#endif

#endif
