/* SPDX-License-Identifier: MIT */
/*
 * wait.h - one thread sleeps on a word until what it checks holds; other
 * threads wake it when they make it hold, or kick it to return early.
 * The one wait-and-wake protocol of fpgad and libfpgad: the frame plane
 * and the transfer queue (words in memory two processes map: @shared),
 * the sim's completion rings and the network sources' (words in one
 * process).
 *
 * The sleeper announces itself in *@waiting, looks at its check once
 * more, and sleeps on the futex *@word; a waker changes its state, then,
 * only if a sleeper announced itself, bumps *@word and wakes it.  Every
 * step is sequentially consistent, so a wake between the sleeper's check
 * and its sleep is never lost (the bumped word makes the futex return at
 * once), and a waker with nobody asleep makes no system call.
 */
#ifndef FPGAD_COMMON_WAIT_H
#define FPGAD_COMMON_WAIT_H

#include <stdbool.h>
#include <stdint.h>

/* The waker's half, after the change the sleeper checks for. */
void wait_wake(uint32_t *waiting, uint32_t *word, bool shared);
/*
 * Set *@kicked (which the sleeper's check looks at) and wake the sleeper,
 * to make its wait_until() return early.
 */
void wait_kick(uint32_t *kicked, uint32_t *waiting, uint32_t *word, bool shared);
/*
 * The sleeper's half: repeat until @check(@arg) is not 0 (> 0: 0 is
 * returned; < 0: that error is returned), @timeout_ms passes (-1 =
 * forever, 0 = look once; -ETIMEDOUT) or a signal comes (-EINTR).
 */
int wait_until(uint32_t *waiting, uint32_t *word,
	       int (*check)(const void *arg), const void *arg, int timeout_ms,
	       bool shared);

#endif
