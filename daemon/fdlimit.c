// SPDX-License-Identifier: MIT
/*
 * fdlimit.c - fpgad's descriptor budget (fdlimit.h) and the accept guard.
 *
 * nng accepts connections on its own threads, and an idle tcp peer holds a
 * descriptor for the 10 s nng waits for its protocol header, before any
 * pipe event could refuse it: a flood of idle peers would take every
 * descriptor and the local socket could accept nobody.  So the guard sits
 * where the descriptor is made.  fpgad defines accept() and accept4(),
 * which nng calls (fpgad's own definitions come before libc's), makes the
 * system call itself and closes a tcp connection at once when its
 * descriptor number is at or above the ceiling.  The kernel hands out the
 * lowest free number, so a descriptor numbered N means N descriptors are
 * open below it: remote connections never hold more than the ceiling, and
 * the reserve above it stays free for local connections, the rings and
 * the device.  Local (AF_UNIX) connections pass untouched.
 *
 * The hook has no context to carry state, so the ceiling and the refusal
 * log's bucket are this file's own process-wide values: the one
 * exception to "the only global is the log level".
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fdlimit.h"
#include "log.h"
#include "peer.h"

static atomic_ulong ceiling = ULONG_MAX;
static struct log_limit refusals = LOG_LIMIT_INIT("control: descriptor refusals");

static unsigned long nr_open(void)
{
	unsigned long v = 1024 * 1024;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 1024 * 1024;
		fclose(f);
	}
	return v;
}

unsigned long fdlimit_raise(void)
{
	struct rlimit rl;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 1024;
	want = rl.rlim_max;
	if (want == RLIM_INFINITY || want > nr_open())
		want = nr_open();
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rlim_t was = rl.rlim_cur;

		rl.rlim_cur = want;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0) {
			log_info("descriptors: RLIMIT_NOFILE raised from %llu to %llu",
				 (unsigned long long)was, (unsigned long long)want);
		} else {
			log_warn("descriptors: cannot raise RLIMIT_NOFILE from %llu to %llu: %s",
				 (unsigned long long)was, (unsigned long long)want,
				 strerror(errno));
			rl.rlim_cur = was;
		}
	}
	return rl.rlim_cur == RLIM_INFINITY ? nr_open() : (unsigned long)rl.rlim_cur;
}

void fdlimit_plan(const struct config *cfg, unsigned long nofile,
		  struct fd_budget *ret_budget)
{
	const struct config_control *c = &cfg->control;
	unsigned leases = c->max_leases < cfg->n_channels ? c->max_leases :
							    cfg->n_channels;
	struct fd_budget b = { .nofile = nofile };

	b.reserve = FDLIMIT_BASE +
		    (unsigned long)c->max_clients * (1 + FDLIMIT_PER_LEASE * leases) +
		    FDLIMIT_PER_CHANNEL * (unsigned long)cfg->n_channels;
	b.ceiling = nofile > b.reserve ? nofile - b.reserve : 0;
	b.remote_clients = c->max_remote_clients;
	if (b.remote_clients > b.ceiling)
		b.remote_clients = (unsigned)b.ceiling;
	*ret_budget = b;
}

void fdlimit_guard(unsigned long c)
{
	atomic_store(&ceiling, c);
}

bool fdlimit_guard_in_effect(void)
{
	return dlsym(RTLD_DEFAULT, "accept") == (void *)accept &&
	       dlsym(RTLD_DEFAULT, "accept4") == (void *)accept4;
}

/* The accepted descriptor @fd is tcp and above the ceiling: close it. */
static bool refuse(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char name[PEER_NAME_MAX];

	if ((unsigned long)fd < atomic_load_explicit(&ceiling, memory_order_relaxed))
		return false;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return false;
	len = sizeof(ss);
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    peer_format_addr((struct sockaddr *)&ss, "tcp", name, sizeof(name)) < 0)
		snprintf(name, sizeof(name), "a tcp peer");
	close(fd);
	log_limited(&refusals, LOG_WARNING,
		    "control: refusing %s: descriptors from %lu up are kept for local clients, the rings and the device",
		    name, atomic_load(&ceiling));
	return true;
}

/* Default visibility: the Makefile exports these two for libnng to find. */
__attribute__((visibility("default")))
int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int nfd = (int)syscall(SYS_accept4, fd, addr, len, flags);

	if (nfd >= 0 && refuse(nfd)) {
		/* What nng does with a peer that hung up: skip, accept the next. */
		errno = ECONNABORTED;
		return -1;
	}
	return nfd;
}

__attribute__((visibility("default")))
int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return accept4(fd, addr, len, 0);
}
