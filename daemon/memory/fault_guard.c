// SPDX-License-Identifier: MIT
/*
 * fault_guard.c - memcpy() that a SIGBUS on client memory cannot end
 * (fault_guard.h).
 *
 * One process-wide SIGBUS handler, installed at start; a thread that
 * copies under the guard leaves a jump buffer in a thread-local pointer,
 * and the handler jumps back to it.  SA_NODEFER keeps the signal mask as
 * it was, so sigsetjmp need not save it (no system call per copy).  A
 * SIGBUS with no guard set restores the default action and returns: the
 * faulting instruction runs again and the process ends as it would have.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>

#include "memory/fault_guard.h"
#include "log.h"

static _Thread_local sigjmp_buf *volatile guard_jump;

static void guard_on_sigbus(int sig, siginfo_t *si, void *uc)
{
	sigjmp_buf *j = guard_jump;

	(void)si;
	(void)uc;
	if (j) {
		guard_jump = NULL;
		siglongjmp(*j, 1);
	}
	signal(sig, SIG_DFL);
}

int fault_guard_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = guard_on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) < 0) {
		log_err("fault guard: cannot handle SIGBUS: %s",
			strerror(errno));
		return -errno;
	}
	return 0;
}

int fault_guard_copy(void *dst, const void *src, size_t n)
{
	sigjmp_buf j;

	if (sigsetjmp(j, 0))
		return -EFAULT;
	guard_jump = &j;
	atomic_signal_fence(memory_order_seq_cst);
	memcpy(dst, src, n);
	atomic_signal_fence(memory_order_seq_cst);
	guard_jump = NULL;
	return 0;
}
