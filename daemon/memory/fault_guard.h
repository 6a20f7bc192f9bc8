/* SPDX-License-Identifier: MIT */
/*
 * fault_guard.h - copies that touch a client's memory and survive it.
 *
 * Memory a client hands fpgad (a transfer buffer's memfd) is checked when
 * it is registered (mem_host.c), but no check rules out every fault: the
 * client can punch a hole that must be refilled under a memory cgroup
 * limit, and a kernel may find other reasons to raise SIGBUS on a page.
 * fault_guard_copy() is memcpy() that turns a SIGBUS on either side into
 * -EFAULT for the calling thread: the transfer fails, fpgad lives.  A
 * SIGBUS anywhere else still ends fpgad as it would have.
 */
#ifndef FPGAD_FAULT_GUARD_H
#define FPGAD_FAULT_GUARD_H

#include <stddef.h>

/*
 * Install the SIGBUS handler (fpgad's main does, before any thread
 * starts): 0 or -errno.  Without it fault_guard_copy() is memcpy().
 */
int fault_guard_init(void);

/* Copy @n bytes from @src to @dst: 0, or -EFAULT if either faulted. */
int fault_guard_copy(void *dst, const void *src, size_t n);

#endif
