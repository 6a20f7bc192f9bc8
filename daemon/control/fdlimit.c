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
 * The same place enforces the connection limit of a listener nng offers
 * no hook for (the metrics listener's HTTP server): a connection accepted
 * on its listening socket is counted, and closed at once when the limit
 * is reached.  Open connections are recounted at each accept there: a
 * descriptor accepted earlier still counts while it is the same socket
 * (device and inode), which needs no hook on close.
 *
 * It also bounds what one address and an idle connection can hold there:
 * a connection from an address with max_per_address open already is
 * closed at once, and fdlimit_cap_close_idle() (a loop timer's) shuts
 * down a connection that has had nothing answered for idle_timeout_ms
 * (an idle peer, a slow header, a keep-alive between scrapes), so a few
 * peers cannot hold every place for as long as they like.  For that the
 * guard keeps a duplicate of each descriptor: the socket cannot go while
 * it is held, so shutdown() on the duplicate reaches that connection and
 * no other, whatever nng has closed and the kernel handed out again
 * since.  nng shuts a connection down before it closes it, so the peer
 * sees the end at once; the duplicate is closed at the next count.
 *
 * The hook has no context to carry state, so the ceiling, the capped
 * listener and the refusal logs' buckets are this file's own process-wide
 * values: the one exception to "the only global is the log level".
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/tcp.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

#include "clock.h"
#include "control/fdlimit.h"
#include "control/peer.h"
#include "service/log.h"

static atomic_ulong ceiling = ULONG_MAX;
static struct log_limit refusals = LOG_LIMIT_INIT("control: descriptor refusals");

/* The capped listener and the connections it accepted, under cap.lock. */
static struct {
	pthread_mutex_t lock;
	struct sockaddr_storage addr;	/* its listening socket's address */
	unsigned max;			/* 0: no capped listener */
	unsigned per_address;		/* 0: no limit per address */
	unsigned idle_ms;		/* 0: idle connections stay */
	const char *what, *key;
	unsigned n;
	struct {
		int fd;			/* nng's */
		int dup;		/* ours, for shutdown() */
		dev_t dev;
		ino_t ino;
		uint8_t addr[16];	/* the peer's: IPv6, or IPv4-mapped */
		uint64_t since_ms;	/* accepted, or last shut down */
		bool live;		/* established at the last count */
	} open[FDLIMIT_CAP_MAX];
} cap = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct log_limit cap_refusals = LOG_LIMIT_INIT("connection limit refusals");
static struct log_limit cap_idle = LOG_LIMIT_INIT("idle connections shut down");

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
	unsigned long tcp;

	b.reserve = FDLIMIT_BASE +
		    (unsigned long)c->max_clients * (1 + FDLIMIT_PER_LEASE * leases) +
		    FDLIMIT_PER_CHANNEL * (unsigned long)cfg->n_channels;
	b.ceiling = nofile > b.reserve ? nofile - b.reserve : 0;
	/* The metrics listener's connections are tcp too, with the guard's
	 * duplicate of each. */
	tcp = b.ceiling;
	if (cfg->metrics.listen[0])
		tcp = tcp > 2ul * cfg->metrics.max_clients ?
			      tcp - 2ul * cfg->metrics.max_clients : 0;
	b.remote_clients = c->max_remote_clients;
	if (b.remote_clients > tcp)
		b.remote_clients = (unsigned)tcp;
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

/* "tcp ADDRESS:PORT" of the peer of the tcp socket @fd, for a refusal. */
static void tcp_peer_name(int fd, char *name, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 ||
	    peer_format_addr((struct sockaddr *)&ss, "tcp", name, len) < 0)
		snprintf(name, len, "a tcp peer");
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
	tcp_peer_name(fd, name, sizeof(name));
	close(fd);
	log_limited(&refusals, LOG_WARNING,
		    "control: refusing %s: descriptors from %lu up are kept for local clients, the rings and the device",
		    name, atomic_load(&ceiling));
	return true;
}

void fdlimit_cap(const struct sockaddr *addr, socklen_t len, unsigned max,
		 const char *what, const char *key)
{
	pthread_mutex_lock(&cap.lock);
	memset(&cap.addr, 0, sizeof(cap.addr));
	cap.max = 0;
	cap.per_address = 0;
	cap.idle_ms = 0;
	for (unsigned i = 0; i < cap.n; i++)
		close(cap.open[i].dup);
	cap.n = 0;
	if (addr && len <= sizeof(cap.addr)) {
		memcpy(&cap.addr, addr, len);
		cap.max = max < FDLIMIT_CAP_MAX ? max : FDLIMIT_CAP_MAX;
		cap.what = what;
		cap.key = key;
	}
	pthread_mutex_unlock(&cap.lock);
}

void fdlimit_cap_set(unsigned max, unsigned per_address, unsigned idle_ms)
{
	pthread_mutex_lock(&cap.lock);
	if (cap.max) {
		cap.max = max < FDLIMIT_CAP_MAX ? max : FDLIMIT_CAP_MAX;
		cap.per_address = per_address;
		cap.idle_ms = idle_ms;
	}
	pthread_mutex_unlock(&cap.lock);
}

/* Are @a (from getsockname) and the capped listener's address the same? */
static bool is_capped(const struct sockaddr_storage *a)
{
	const struct sockaddr_storage *b = &cap.addr;

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
 * down, about to be closed, holds no place.
 */
static unsigned cap_recount(void)
{
	unsigned live = 0;
	struct stat st;

	for (unsigned i = 0; i < cap.n;) {
		if (fstat(cap.open[i].fd, &st) == 0 && st.st_dev == cap.open[i].dev &&
		    st.st_ino == cap.open[i].ino) {
			cap.open[i].live = established(cap.open[i].dup);
			live += cap.open[i].live;
			i++;
			continue;
		}
		close(cap.open[i].dup);
		cap.open[i] = cap.open[--cap.n];
	}
	return live;
}

/* The peer address of the tcp socket @fd as 16 bytes; zeros if unknown. */
static void peer_key(int fd, uint8_t key[16])
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0)
		ss.ss_family = AF_UNSPEC;
	peer_addr_key(&ss, key);
}

/* Open connections from the address @key; under cap.lock. */
static unsigned cap_from(const uint8_t key[16])
{
	unsigned n = 0;

	for (unsigned i = 0; i < cap.n; i++)
		n += cap.open[i].live && memcmp(cap.open[i].addr, key, 16) == 0;
	return n;
}

/* Milliseconds since fpgad last sent on @fd, at most @age_ms. */
static uint64_t idle_for(int fd, uint64_t age_ms)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);

	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) < 0)
		return age_ms;
	return ti.tcpi_last_data_sent < age_ms ? ti.tcpi_last_data_sent : age_ms;
}

void fdlimit_cap_close_idle(void)
{
	uint64_t now = clock_now_ns() / 1000000;
	char name[PEER_NAME_MAX];

	pthread_mutex_lock(&cap.lock);
	if (!cap.max || !cap.idle_ms) {
		pthread_mutex_unlock(&cap.lock);
		return;
	}
	cap_recount();
	for (unsigned i = 0; i < cap.n; i++) {
		if (!cap.open[i].live ||
		    idle_for(cap.open[i].dup, now - cap.open[i].since_ms) < cap.idle_ms)
			continue;
		cap.open[i].since_ms = now;
		tcp_peer_name(cap.open[i].dup, name, sizeof(name));
		shutdown(cap.open[i].dup, SHUT_RDWR);
		log_limited(&cap_idle, LOG_NOTICE,
			    "%s: closing %s: nothing answered for %u ms ([%s] idle_timeout_ms)",
			    cap.what, name, cap.idle_ms, cap.what);
	}
	pthread_mutex_unlock(&cap.lock);
}

/*
 * @nfd was accepted on the listening socket @lfd: when that is the capped
 * listener, count it, or close it when the limit is reached.
 */
static bool cap_refuse(int lfd, int nfd)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);
	char name[PEER_NAME_MAX];
	unsigned n, max, from = 0, per_address;
	uint8_t key[16];
	struct stat st;
	int dup = -1;

	pthread_mutex_lock(&cap.lock);
	if (!cap.max || getsockname(lfd, (struct sockaddr *)&ss, &len) < 0 ||
	    !is_capped(&ss)) {
		pthread_mutex_unlock(&cap.lock);
		return false;
	}
	n = cap_recount();
	max = cap.max;
	per_address = cap.per_address;
	peer_key(nfd, key);
	if (per_address)
		from = cap_from(key);
	if (n < max && cap.n < FDLIMIT_CAP_MAX && (!per_address || from < per_address) &&
	    fstat(nfd, &st) == 0 && (dup = fcntl(nfd, F_DUPFD_CLOEXEC, 0)) >= 0) {
		cap.open[cap.n].fd = nfd;
		cap.open[cap.n].dup = dup;
		cap.open[cap.n].dev = st.st_dev;
		cap.open[cap.n].ino = st.st_ino;
		memcpy(cap.open[cap.n].addr, key, 16);
		cap.open[cap.n].since_ms = clock_now_ns() / 1000000;
		cap.open[cap.n].live = true;
		cap.n++;
		pthread_mutex_unlock(&cap.lock);
		return false;
	}
	pthread_mutex_unlock(&cap.lock);
	tcp_peer_name(nfd, name, sizeof(name));
	close(nfd);
	if (n < max && per_address && from >= per_address)
		log_limited(&cap_refusals, LOG_WARNING,
			    "%s: refusing %s: %u connections from its address already ([%s] max_per_address %u)",
			    cap.what, name, from, cap.what, per_address);
	else
		log_limited(&cap_refusals, LOG_WARNING,
			    "%s: refusing %s: %u connections on the %s listener already (%s %u)",
			    cap.what, name, n, cap.what, cap.key, max);
	return true;
}

/* Default visibility: the Makefile exports these two for libnng to find. */
__attribute__((visibility("default")))
int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	int nfd = (int)syscall(SYS_accept4, fd, addr, len, flags);

	if (nfd >= 0 && (refuse(nfd) || cap_refuse(fd, nfd))) {
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
