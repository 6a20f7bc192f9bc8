// SPDX-License-Identifier: MIT
/* bench_util.c - see bench_util.h. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

void bench_sort(uint64_t *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_u64);
}

double bench_pct_us(const uint64_t *v, size_t n, double p)
{
	if (!n)
		return 0;
	return (double)v[(size_t)(p * (double)(n - 1) + 0.5)] / 1000.0;
}

uint64_t bench_parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	switch (*end) {
	case 'K': case 'k': v <<= 10; end++; break;
	case 'M': case 'm': v <<= 20; end++; break;
	case 'G': case 'g': v <<= 30; end++; break;
	default: break;
	}
	return *end || end == s ? 0 : v;
}

void *bench_shared_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void bench_shared_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

/* utime + stime of a /proc stat file, and the name between the parens. */
static int read_stat(const char *path, uint64_t *ret_ticks, char *comm,
		     size_t commlen)
{
	char buf[1024], *open_p, *close_p, *tok, *save = NULL;
	unsigned long long ut = 0, st = 0;
	FILE *f = fopen(path, "r");
	size_t n;
	int i;

	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return -EPROTO;
	if (comm)
		snprintf(comm, commlen, "%.*s", (int)(close_p - open_p - 1),
			 open_p + 1);
	/* After ") ": field 3 (state) is token 0, utime (14) token 11. */
	tok = strtok_r(close_p + 2, " ", &save);
	for (i = 0; tok && i <= 12; i++) {
		if (i == 11)
			ut = strtoull(tok, NULL, 10);
		else if (i == 12)
			st = strtoull(tok, NULL, 10);
		tok = strtok_r(NULL, " ", &save);
	}
	if (i <= 12)
		return -EPROTO;
	*ret_ticks = ut + st;
	return 0;
}

static uint64_t read_schedstat(pid_t pid, int tid)
{
	unsigned long long ns = 0;
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)pid, tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

int bench_cpu_read(pid_t pid, struct bench_cpu *ret)
{
	char path[96];
	struct dirent *de;
	DIR *d;
	int r;

	memset(ret, 0, sizeof(*ret));
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	r = read_stat(path, &ret->ticks, NULL, 0);
	if (r < 0)
		return r;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && ret->n < BENCH_MAX_THREADS) {
		struct bench_thread *t = &ret->t[ret->n];

		if (de->d_name[0] == '.')
			continue;
		t->tid = atoi(de->d_name);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
			 t->tid);
		if (read_stat(path, &t->ticks, t->comm, sizeof(t->comm)) < 0)
			continue;	/* the thread ended meanwhile */
		t->run_ns = read_schedstat(pid, t->tid);
		ret->n++;
	}
	closedir(d);
	return 0;
}

struct group {
	char comm[20];
	unsigned threads;
	uint64_t ticks, run_ns;
};

void bench_cpu_split(const struct bench_cpu *a, const struct bench_cpu *b,
		     uint64_t frames, char *buf, size_t len)
{
	static struct group g[BENCH_MAX_THREADS];
	double tick_ns = 1e9 / (double)sysconf(_SC_CLK_TCK);
	unsigned ng = 0, i, j, k;
	size_t off = 0;

	for (i = 0; i < b->n; i++) {
		const struct bench_thread *t = &b->t[i];
		uint64_t ticks = t->ticks, run = t->run_ns;

		for (j = 0; j < a->n; j++) {
			if (a->t[j].tid == t->tid) {
				ticks -= a->t[j].ticks;
				run -= a->t[j].run_ns;
				break;
			}
		}
		for (k = 0; k < ng; k++)
			if (!strcmp(g[k].comm, t->comm))
				break;
		if (k == ng) {
			memset(&g[k], 0, sizeof(g[k]));
			snprintf(g[k].comm, sizeof(g[k].comm), "%s", t->comm);
			ng++;
		}
		g[k].threads++;
		g[k].ticks += ticks;
		g[k].run_ns += run;
	}
	buf[0] = '\0';
	for (k = 0; k < ng && frames; k++) {
		/* schedstat is ns-exact; ticks are 10 ms apart. */
		double ns = g[k].run_ns ? (double)g[k].run_ns :
			    (double)g[k].ticks * tick_ns;
		int n;

		if (ns / (double)frames < 0.005e3)
			continue;	/* under 5 ns a frame: idle */
		n = snprintf(buf + off, len - off, "%s%s(x%u)=%.2f",
			     off ? " " : "", g[k].comm, g[k].threads,
			     ns / (double)frames / 1e3);
		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
}

int64_t bench_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %lld", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -EPROTO : kb;
}
