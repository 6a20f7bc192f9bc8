/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the futex system call, in the two forms fpgad uses: shared
 * (words in memory mapped by two processes, the frame plane) and private
 * (words inside one process, the sim's engines).
 */
#ifndef FPGAD_COMMON_FUTEX_H
#define FPGAD_COMMON_FUTEX_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Sleep while *@word holds @val, until the CLOCK_MONOTONIC @deadline_ns
 * (0 = none).  Returns 0 (woken, or the word had changed: -EAGAIN is
 * folded into 0), -ETIMEDOUT or -EINTR.
 */
int futex_wait(uint32_t *word, uint32_t val, uint64_t deadline_ns,
	       bool shared);
/* Wake every sleeper on @word. */
void futex_wake(uint32_t *word, bool shared);

#endif
