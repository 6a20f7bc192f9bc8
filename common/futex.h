/* SPDX-License-Identifier: MIT */
/*
 * futex.h - the futex system call, in the two forms fpgad uses: shared
 * (words in memory mapped by two processes, the frame plane) and private
 * (words inside one process, the sim's engines); and the step of a
 * busy-wait that comes before sleeping.
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

/*
 * One step of a busy-wait that spins before (or instead of) sleeping: the
 * CPU's spin-loop hint (x86's pause, ARM's yield, as the kernel's
 * cpu_relax()), which also keeps the loop a loop for the compiler.
 */
static inline void futex_spin(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
	__asm__ volatile("yield" ::: "memory");
#else
	__asm__ volatile("" ::: "memory");
#endif
}

#endif
