// SPDX-License-Identifier: MIT
/* accept_guard.c - connection limits where nng accepts (accept_guard.h). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "accept_guard.h"
#include "addr.h"
#include "clock.h"
#include "log.h"

/* The guarded listener and the connections it accepted, under g.lock. */
static struct {
	pthread_mutex_t lock;
	struct sockaddr_storage addr;	/* its listening socket's address */
	struct accept_limits lim;	/* lim.max 0: no listener guarded */
	const char *what;
	unsigned n;
	struct {
		int fd;			/* nng's */
		int dup;		/* ours, for shutdown() */
		dev_t dev;
		ino_t ino;
		uint8_t addr[16];	/* the peer's: IPv6, or IPv4-mapped */
		bool live;		/* established at the last count */
	} open[ACCEPT_GUARD_MAX];
} g = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct log_limit refusals = LOG_LIMIT_INIT("connection limit refusals");
static struct log_limit shut = LOG_LIMIT_INIT("slow or idle connections shut down");

void accept_guard(const struct sockaddr *addr, socklen_t len,
		  const struct accept_limits *lim, const char *what)
{
	pthread_mutex_lock(&g.lock);
	memset(&g.addr, 0, sizeof(g.addr));
	memset(&g.lim, 0, sizeof(g.lim));
	for (unsigned i = 0; i < g.n; i++)
		close(g.open[i].dup);
	g.n = 0;
	if (addr && len <= sizeof(g.addr)) {
		memcpy(&g.addr, addr, len);
		g.lim = *lim;
		if (g.lim.max > ACCEPT_GUARD_MAX)
			g.lim.max = ACCEPT_GUARD_MAX;
		g.what = what;
	}
	pthread_mutex_unlock(&g.lock);
}

bool accept_guard_in_effect(void)
{
	return dlsym(RTLD_DEFAULT, "accept") == (void *)accept &&
	       dlsym(RTLD_DEFAULT, "accept4") == (void *)accept4;
}

/* Are @a (from getsockname) and the guarded listener's address the same? */
static bool is_guarded(const struct sockaddr_storage *a)
{
	const struct sockaddr_storage *b = &g.addr;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
	return false;
}

/* Whether the tcp socket @fd is still established (not shut down). */
static bool established(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	return getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0 ||
	       ti.tcpi_state == TCP_ESTABLISHED;
}

/*
 * Forget the connections whose descriptors are no longer their socket
 * (our duplicate keeps that socket, so its number holds another now);
 * returns how many of the others still count: a connection nng shut
 * down, about to be closed, holds no place.  Under g.lock.
 */
static unsigned recount(void)
{
	unsigned live = 0;
	struct stat st;

	for (unsigned i = 0; i < g.n;) {
		if (fstat(g.open[i].fd, &st) == 0 && st.st_dev == g.open[i].dev &&
		    st.st_ino == g.open[i].ino) {
			g.open[i].live = established(g.open[i].dup);
			live += g.open[i].live;
			i++;
			continue;
		}
		close(g.open[i].dup);
		g.open[i] = g.open[--g.n];
	}
	return live;
}

/* Open connections from the address @key; under g.lock. */
static unsigned from_address(const uint8_t key[16])
{
	unsigned n = 0;

	for (unsigned i = 0; i < g.n; i++)
		n += g.open[i].live && memcmp(g.open[i].addr, key, 16) == 0;
	return n;
}

/*
 * Why the connection on @fd is to be shut down now, or NULL: nothing
 * answered for idle_ms, or a request (bytes received after the last
 * answer) unanswered for request_ms.
 */
static const char *overdue(int fd, unsigned *ret_ms)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		return NULL;
	if (g.lim.request_ms && ti.tcpi_last_data_recv < ti.tcpi_last_data_sent &&
	    ti.tcpi_last_data_sent >= g.lim.request_ms) {
		*ret_ms = g.lim.request_ms;
		return "a request not complete or not answered";
	}
	if (g.lim.idle_ms && ti.tcpi_last_data_sent >= g.lim.idle_ms) {
		*ret_ms = g.lim.idle_ms;
		return "nothing answered";
	}
	return NULL;
}

void accept_guard_sweep(void)
{
	char name[ADDR_NAME_MAX];
	const char *why;
	unsigned ms;

	pthread_mutex_lock(&g.lock);
	if (!g.lim.max) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	recount();
	for (unsigned i = 0; i < g.n; i++) {
		if (!g.open[i].live || !(why = overdue(g.open[i].dup, &ms)))
			continue;
		/* Said before it is done: whoever sees the end finds the reason. */
		addr_peer_name(g.open[i].dup, "tcp", name, sizeof(name));
		log_limited(&shut, LOG_NOTICE, "%s: closing %s: %s for %u ms",
			    g.what, name, why, ms);
		shutdown(g.open[i].dup, SHUT_RDWR);
		g.open[i].live = false;
	}
	pthread_mutex_unlock(&g.lock);
}

/*
 * @nfd was accepted on the listening socket @lfd: when that is the
 * guarded listener, count it, or close it when a limit is reached.
 */
static bool refuse(int lfd, int nfd)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);
	char name[ADDR_NAME_MAX];
	unsigned n, max, from = 0, per_address;
	uint8_t key[16];
	struct stat st;
	int dup = -1;

	pthread_mutex_lock(&g.lock);
	if (!g.lim.max || getsockname(lfd, (struct sockaddr *)&ss, &len) < 0 ||
	    !is_guarded(&ss)) {
		pthread_mutex_unlock(&g.lock);
		return false;
	}
	n = recount();
	max = g.lim.max;
	per_address = g.lim.per_address;
	len = sizeof(ss);
	if (getpeername(nfd, (struct sockaddr *)&ss, &len) < 0)
		ss.ss_family = AF_UNSPEC;
	addr_key(&ss, key);
	if (per_address)
		from = from_address(key);
	if (n < max && g.n < ACCEPT_GUARD_MAX && (!per_address || from < per_address) &&
	    fstat(nfd, &st) == 0 && (dup = fcntl(nfd, F_DUPFD_CLOEXEC, 0)) >= 0) {
		g.open[g.n].fd = nfd;
		g.open[g.n].dup = dup;
		g.open[g.n].dev = st.st_dev;
		g.open[g.n].ino = st.st_ino;
		memcpy(g.open[g.n].addr, key, 16);
		g.open[g.n].live = true;
		g.n++;
		pthread_mutex_unlock(&g.lock);
		return false;
	}
	pthread_mutex_unlock(&g.lock);
	addr_peer_name(nfd, "tcp", name, sizeof(name));
	if (n < max && per_address && from >= per_address)
		log_limited(&refusals, LOG_WARNING,
			    "%s: refusing %s: %u connections from its address already (--%s-max-per-address %u)",
			    g.what, name, from, g.what, per_address);
	else
		log_limited(&refusals, LOG_WARNING,
			    "%s: refusing %s: %u connections on the %s listener already (--%s-max-clients %u)",
			    g.what, name, n, g.what, g.what, max);
	close(nfd);
	return true;
}

/* Default visibility: the Makefile exports these two for libnng to find. */
__attribute__((visibility("default")))
int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int nfd = (int)syscall(SYS_accept4, fd, addr, len, flags);

	if (nfd >= 0 && refuse(fd, nfd)) {
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
