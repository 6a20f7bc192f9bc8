// SPDX-License-Identifier: MIT
/*
 * bench_xfer.c - card memory transfers against the raw copy of the same
 * size and direction, measured in the same run, one JSON line each:
 *
 *   bench_xfer [OPTIONS] URL MODE SIZE
 *	MODE host (a host buffer; raw: memcpy), gpudirect or bounce (a
 *	cudaMalloc'ed buffer in that mode; raw: cudaMemcpyAsync between
 *	pinned host memory and the GPU).  For read (card -> buffer) and
 *	write: latency of --lat synchronous transfers one after the other
 *	(p50, p99), and bandwidth with --depth transfers in flight (the
 *	asynchronous form) for --seconds.
 *   bench_xfer --batch N [OPTIONS] URL MODE SIZE
 *	fpgad_xfer_batch() of N reads of SIZE, back to back for --seconds,
 *	against N raw copies and a wait, back to back; and where a batch's
 *	time goes (p50): from the call until fpgad took its first entry
 *	(take), from there until its last completion (span: fpgad and the
 *	card at work), and from there until the call returned (return).
 *   bench_xfer probe
 *	exit 0 when a GPU answers, else 77
 *
 * Options: --seconds S (1), --depth D (8), --lat N (2000), --poll-us US
 * (libfpgad's busy-poll, fpgad_xfer_set_poll; without it, libfpgad's
 * default: the JSON lines say "poll_us":-1), --interval-us US (start a
 * latency transfer every US, not back to back), --daemon-pid P (fpgad's
 * CPU per latency transfer, per thread name, as bench_stream prints it;
 * with it, and always, this client's CPU and its sleeps per transfer).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef FPGAD_CUDA
#include <cuda_runtime_api.h>
#endif

#include "bench_util.h"
#include "fpgad.h"
#include "gpu_probe.h"

#define MAX_DEPTH 64u
#define MAX_BATCH 256u
#define MAX_LAT (1u << 20)

struct opts {
	double seconds;
	unsigned depth;
	unsigned lat;
	int poll_us;		/* -1: libfpgad's default */
	unsigned batch;
	unsigned interval_us;	/* latency transfers: one every interval */
	pid_t daemon_pid;
	const char *url;
	const char *mode;
	uint64_t size;
};

struct result {
	double p50, p99, gbps;
	double cpu_us;		/* this client's CPU per transfer */
	double sleeps;		/* its voluntary context switches per transfer */
	char daemon[1024];	/* fpgad's CPU us per transfer, per thread */
};

/* The raw copy of one size and direction, and fpgad's way of doing it. */
struct path {
	bool gpu;
	unsigned char *host;		/* pinned (GPU) or plain: the "card" side */
	unsigned char *dev;		/* GPU: the buffer; host: memcpy target */
	uint64_t len;			/* depth * size */
#ifdef FPGAD_CUDA
	cudaStream_t st[MAX_DEPTH];
	cudaEvent_t ev[MAX_DEPTH];
#endif
};

static int fail(fpgad_client *c, const char *what, int r)
{
	fprintf(stderr, "bench_xfer: %s: %s (%s)\n", what, strerror(-r),
		c ? fpgad_errmsg(c) : "");
	return 1;
}

static void percentiles(uint64_t *ns, size_t n, struct result *res)
{
	bench_sort(ns, n);
	res->p50 = bench_pct_us(ns, n, 0.50);
	res->p99 = bench_pct_us(ns, n, 0.99);
}

/* --- raw copies ------------------------------------------------------------- */

#ifdef FPGAD_CUDA
static int cuda_fail(const char *what, cudaError_t e)
{
	fprintf(stderr, "bench_xfer: %s: %s\n", what, cudaGetErrorString(e));
	return 1;
}

static int raw_gpu_setup(struct path *p, unsigned depth)
{
	cudaError_t e = cudaMallocHost((void **)&p->host, p->len);

	if (e == cudaSuccess)
		e = cudaMalloc((void **)&p->dev, p->len);
	for (unsigned i = 0; e == cudaSuccess && i < depth; i++) {
		e = cudaStreamCreateWithFlags(&p->st[i], cudaStreamNonBlocking);
		if (e == cudaSuccess)
			e = cudaEventCreateWithFlags(&p->ev[i],
						     cudaEventDisableTiming);
	}
	if (e != cudaSuccess)
		return cuda_fail("set-up", e);
	memset(p->host, 0x5a, p->len);
	return 0;
}

/* One copy @k of @size bytes on stream @k: card side -> buffer for a read. */
static cudaError_t raw_gpu_copy(struct path *p, bool read, unsigned k,
				uint64_t size)
{
	cudaError_t e = read ?
		cudaMemcpyAsync(p->dev + k * size, p->host + k * size, size,
				cudaMemcpyHostToDevice, p->st[k]) :
		cudaMemcpyAsync(p->host + k * size, p->dev + k * size, size,
				cudaMemcpyDeviceToHost, p->st[k]);

	return e == cudaSuccess ? cudaEventRecord(p->ev[k], p->st[k]) : e;
}

static int raw_gpu(struct path *p, const struct opts *o, bool read,
		   struct result *lat, struct result *bw)
{
	static uint64_t ns[MAX_LAT];
	uint64_t t0, t1, end, n = 0, done = 0;
	cudaError_t e;

	for (unsigned i = 0; i < o->lat; i++) {
		t0 = bench_now_ns();
		e = raw_gpu_copy(p, read, 0, o->size);
		if (e == cudaSuccess)
			e = cudaStreamSynchronize(p->st[0]);
		if (e != cudaSuccess)
			return cuda_fail("cudaMemcpyAsync", e);
		ns[i] = bench_now_ns() - t0;
	}
	percentiles(ns, o->lat, lat);
	t0 = bench_now_ns();
	end = t0 + (uint64_t)(o->seconds * 1e9);
	t1 = t0;
	for (;;) {
		unsigned k = (unsigned)(n % o->depth);

		if (n >= o->depth) {
			e = cudaEventSynchronize(p->ev[k]);
			if (e != cudaSuccess)
				return cuda_fail("cudaEventSynchronize", e);
			done++;
			t1 = bench_now_ns();
			if (t1 >= end)
				break;
		}
		e = raw_gpu_copy(p, read, k, o->size);
		if (e != cudaSuccess)
			return cuda_fail("cudaMemcpyAsync", e);
		n++;
	}
	cudaDeviceSynchronize();
	bw->gbps = (double)(done * o->size) / ((double)(t1 - t0) / 1e9) / 1e9;
	return 0;
}

/* @n copies of @size bytes at once, then a wait for all: ns. */
static int raw_gpu_batch(struct path *p, unsigned n, uint64_t size,
			 uint64_t *ret_ns)
{
	uint64_t t0 = bench_now_ns();
	cudaError_t e = cudaSuccess;

	for (unsigned i = 0; i < n && e == cudaSuccess; i++)
		e = cudaMemcpyAsync(p->dev + i * size, p->host + i * size, size,
				    cudaMemcpyHostToDevice, p->st[0]);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(p->st[0]);
	if (e != cudaSuccess)
		return cuda_fail("cudaMemcpyAsync", e);
	*ret_ns = bench_now_ns() - t0;
	return 0;
}

static void raw_gpu_free(struct path *p)
{
	for (unsigned i = 0; i < MAX_DEPTH; i++) {
		if (p->ev[i])
			cudaEventDestroy(p->ev[i]);
		if (p->st[i])
			cudaStreamDestroy(p->st[i]);
	}
	cudaFree(p->dev);
	cudaFreeHost(p->host);
}

#else
static int raw_gpu_setup(struct path *p, unsigned depth)
{
	(void)p;
	(void)depth;
	fprintf(stderr, "bench_xfer: built without CUDA\n");
	return 77;
}

static int raw_gpu(struct path *p, const struct opts *o, bool read,
		   struct result *lat, struct result *bw)
{
	(void)p;
	(void)o;
	(void)read;
	(void)lat;
	(void)bw;
	return 77;
}

static int raw_gpu_batch(struct path *p, unsigned n, uint64_t size,
			 uint64_t *ret_ns)
{
	(void)p;
	(void)n;
	(void)size;
	(void)ret_ns;
	return 77;
}

static void raw_gpu_free(struct path *p)
{
	(void)p;
}

#endif

static int raw_host_setup(struct path *p)
{
	p->host = aligned_alloc(4096, p->len);
	p->dev = aligned_alloc(4096, p->len);
	if (!p->host || !p->dev)
		return 1;
	memset(p->host, 0x5a, p->len);
	memset(p->dev, 0, p->len);
	return 0;
}

/* memcpy: what the sim card does for a transfer into host memory. */
static void raw_host(struct path *p, const struct opts *o, bool read,
		     struct result *lat, struct result *bw)
{
	static uint64_t ns[MAX_LAT];
	unsigned char *from = read ? p->host : p->dev;
	unsigned char *to = read ? p->dev : p->host;
	uint64_t t0, t1, end, n = 0;

	for (unsigned i = 0; i < o->lat; i++) {
		t0 = bench_now_ns();
		memcpy(to, from, o->size);
		__asm__ volatile("" : : "r"(to) : "memory");
		ns[i] = bench_now_ns() - t0;
	}
	percentiles(ns, o->lat, lat);
	t0 = bench_now_ns();
	end = t0 + (uint64_t)(o->seconds * 1e9);
	do {
		uint64_t k = n % o->depth;

		memcpy(to + k * o->size, from + k * o->size, o->size);
		__asm__ volatile("" : : "r"(to) : "memory");
		n++;
		t1 = bench_now_ns();
	} while (t1 < end);
	bw->gbps = (double)(n * o->size) / ((double)(t1 - t0) / 1e9) / 1e9;
}

static void raw_host_batch(struct path *p, unsigned n, uint64_t size,
			   uint64_t *ret_ns)
{
	uint64_t t0 = bench_now_ns();

	for (unsigned i = 0; i < n; i++)
		memcpy(p->dev + i * size, p->host + i * size, size);
	__asm__ volatile("" : : "r"(p->dev) : "memory");
	*ret_ns = bench_now_ns() - t0;
}

/* --- fpgad ------------------------------------------------------------------- */

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000u + (uint64_t)tv->tv_usec * 1000u;
}

/*
 * --lat synchronous transfers, back to back or one every --interval-us:
 * their latency, and what they cost this client and fpgad.
 */
static int xfer_lat(fpgad_client *c, fpgad_buffer *b, const struct opts *o,
		    bool read, struct result *lat)
{
	static uint64_t ns[MAX_LAT];
	static struct bench_cpu c0, c1;
	struct rusage u0, u1;
	bool cpu = o->daemon_pid > 0 && bench_cpu_read(o->daemon_pid, &c0) == 0;
	uint64_t next = bench_now_ns();

	getrusage(RUSAGE_SELF, &u0);
	for (unsigned i = 0; i < o->lat; i++) {
		uint64_t t0;
		int r;

		if (o->interval_us) {
			struct timespec ts;

			next += (uint64_t)o->interval_us * 1000u;
			ts.tv_sec = (time_t)(next / 1000000000u);
			ts.tv_nsec = (long)(next % 1000000000u);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
		t0 = bench_now_ns();
		r = read ? fpgad_read(b, 0, 0, o->size, 10000) :
			   fpgad_write(b, 0, 0, o->size, 10000);
		if (r)
			return fail(c, read ? "read" : "write", r);
		ns[i] = bench_now_ns() - t0;
	}
	getrusage(RUSAGE_SELF, &u1);
	cpu = cpu && bench_cpu_read(o->daemon_pid, &c1) == 0;
	percentiles(ns, o->lat, lat);
	lat->cpu_us = (double)(tv_ns(&u1.ru_utime) + tv_ns(&u1.ru_stime) -
			       tv_ns(&u0.ru_utime) - tv_ns(&u0.ru_stime)) /
		      1e3 / o->lat;
	lat->sleeps = (double)(u1.ru_nvcsw - u0.ru_nvcsw) / o->lat;
	lat->daemon[0] = '\0';
	if (cpu)
		bench_cpu_split(&c0, &c1, o->lat, lat->daemon,
				sizeof(lat->daemon));
	return 0;
}

/* --depth transfers in flight, each resubmitted when it completes. */
static int xfer_bw(fpgad_client *c, fpgad_buffer *b, const struct opts *o,
		   bool read, struct result *bw)
{
	static struct fpgad_xfer x[MAX_DEPTH];
	struct fpgad_xfer *out[MAX_DEPTH];
	uint64_t t0, t1, end, bytes = 0;
	int n;

	for (unsigned i = 0; i < o->depth; i++) {
		memset(&x[i], 0, sizeof(x[i]));
		x[i].op = read ? FPGAD_XFER_READ : FPGAD_XFER_WRITE;
		x[i].buf = b;
		x[i].buf_offset = i * o->size;
		x[i].card_addr = i * o->size;
		x[i].length = o->size;
	}
	t0 = bench_now_ns();
	end = t0 + (uint64_t)(o->seconds * 1e9);
	n = fpgad_xfer_submit(c, x, o->depth);
	if (n != (int)o->depth)
		return fail(c, "submit", n < 0 ? n : -EAGAIN);
	for (;;) {
		n = fpgad_xfer_reap(c, out, o->depth, 10000);
		if (n < 0)
			return fail(c, "reap", n);
		t1 = bench_now_ns();
		for (int k = 0; k < n; k++) {
			if (out[k]->status)
				return fail(c, "transfer", out[k]->status);
			bytes += o->size;
		}
		if (t1 >= end)
			break;
		for (int k = 0; k < n; k++) {
			int r = fpgad_xfer_submit(c, out[k], 1);

			if (r != 1)
				return fail(c, "submit", r < 0 ? r : -EAGAIN);
		}
	}
	/* Let what is still in flight finish before the next run. */
	while (fpgad_xfer_pending(c))
		if (fpgad_xfer_reap(c, out, o->depth, 10000) < 0)
			break;
	bw->gbps = (double)bytes / ((double)(t1 - t0) / 1e9) / 1e9;
	return 0;
}

/*
 * Where a batch's time went, from its completions' timestamps (fpgad's
 * CLOCK_MONOTONIC, as ours): @t0 the call, @t1 its return.
 */
static void batch_split(const struct fpgad_xfer *x, unsigned n, uint64_t t0,
			uint64_t t1, uint64_t *take, uint64_t *span,
			uint64_t *ret)
{
	uint64_t first = UINT64_MAX, last = 0;

	for (unsigned i = 0; i < n; i++) {
		if (x[i].t_start_ns < first)
			first = x[i].t_start_ns;
		if (x[i].t_end_ns > last)
			last = x[i].t_end_ns;
	}
	*take = first > t0 ? first - t0 : 0;
	*span = last > first ? last - first : 0;
	*ret = t1 > last ? t1 - last : 0;
}

static int xfer_batch(fpgad_client *c, fpgad_buffer *b, const struct opts *o,
		      struct path *p, bool gpu)
{
	static struct fpgad_xfer x[MAX_BATCH];
	static uint64_t ns[MAX_LAT], raw_ns[MAX_LAT];
	static uint64_t take[MAX_LAT], span[MAX_LAT], ret[MAX_LAT];
	uint64_t t0, end, n = 0, raw_n = 0, total = 0, raw_total = 0;
	struct result lat, raw;

	for (unsigned i = 0; i < o->batch; i++) {
		memset(&x[i], 0, sizeof(x[i]));
		x[i].op = FPGAD_XFER_READ;
		x[i].buf = b;
		x[i].buf_offset = i * o->size;
		x[i].card_addr = i * o->size;
		x[i].length = o->size;
	}
	end = bench_now_ns() + (uint64_t)(o->seconds * 1e9);
	while (bench_now_ns() < end && n < MAX_LAT) {
		int r;

		t0 = bench_now_ns();
		r = fpgad_xfer_batch(c, x, o->batch, 10000);
		if (r)
			return fail(c, "batch", r);
		ns[n] = bench_now_ns() - t0;
		batch_split(x, o->batch, t0, t0 + ns[n], &take[n], &span[n],
			    &ret[n]);
		total += ns[n++];
	}
	end = bench_now_ns() + (uint64_t)(o->seconds * 1e9);
	while (bench_now_ns() < end && raw_n < MAX_LAT) {
		if (gpu) {
			if (raw_gpu_batch(p, o->batch, o->size, &raw_ns[raw_n]))
				return 1;
		} else {
			raw_host_batch(p, o->batch, o->size, &raw_ns[raw_n]);
		}
		raw_total += raw_ns[raw_n++];
	}
	percentiles(ns, n, &lat);
	percentiles(raw_ns, raw_n, &raw);
	bench_sort(take, n);
	bench_sort(span, n);
	bench_sort(ret, n);
	printf("{\"bench\":\"xfer_batch\",\"mode\":\"%s\",\"size\":%" PRIu64
	       ",\"n\":%u,\"batches\":%" PRIu64 ",\"p50_us\":%.1f,\"p99_us\":%.1f"
	       ",\"gbps\":%.3f,\"raw\":\"%s\",\"raw_p50_us\":%.1f,"
	       "\"raw_p99_us\":%.1f,\"raw_gbps\":%.3f,\"take_p50_us\":%.1f,"
	       "\"span_p50_us\":%.1f,\"return_p50_us\":%.1f}\n", o->mode,
	       o->size, o->batch, n, lat.p50, lat.p99,
	       (double)(n * o->batch * o->size) / ((double)total / 1e9) / 1e9,
	       gpu ? "cudaMemcpyAsync" : "memcpy", raw.p50, raw.p99,
	       (double)(raw_n * o->batch * o->size) /
	       ((double)raw_total / 1e9) / 1e9, bench_pct_us(take, n, 0.5),
	       bench_pct_us(span, n, 0.5), bench_pct_us(ret, n, 0.5));
	return 0;
}

static int run(const struct opts *o)
{
	bool gpu = strcmp(o->mode, "host") != 0;
	unsigned slots = o->batch ? o->batch : o->depth;
	enum fpgad_mode mode = !strcmp(o->mode, "bounce") ? FPGAD_MODE_BOUNCE :
			       FPGAD_MODE_GPUDIRECT;
	struct path p = { .gpu = gpu, .len = slots * o->size };
	struct fpgad_buffer_info info;
	fpgad_client *c = NULL;
	fpgad_buffer *b = NULL;
	int r;

	r = gpu ? raw_gpu_setup(&p, o->depth) : raw_host_setup(&p);
	if (r)
		return r;
	r = fpgad_connect(o->url, &c);
	if (r)
		return fail(NULL, "connect", r);
	if (o->poll_us >= 0)
		fpgad_xfer_set_poll(c, (unsigned)o->poll_us);
	r = gpu ? fpgad_buffer_register(c, p.dev, p.len, 0, &b) :
		  fpgad_buffer_alloc_host(c, p.len, &b);
	if (!r && gpu)
		r = fpgad_buffer_set_mode(b, mode);
	if (r) {
		r = fail(c, "buffer", r);
		goto out;
	}
	fpgad_buffer_get_info(b, &info);
	/* Warm up: card memory and the buffer touched, once each way. */
	r = fpgad_write(b, 0, 0, p.len, 10000);
	if (!r)
		r = fpgad_read(b, 0, 0, p.len, 10000);
	if (r) {
		r = fail(c, "warm-up", r);
		goto out;
	}
	if (o->batch) {
		r = xfer_batch(c, b, o, &p, gpu);
		goto out;
	}
	for (unsigned d = 0; d < 2 && !r; d++) {
		bool read = d == 0;
		struct result lat, bw, rlat, rbw;

		if (gpu)
			r = raw_gpu(&p, o, read, &rlat, &rbw);
		else
			raw_host(&p, o, read, &rlat, &rbw);
		if (!r)
			r = xfer_lat(c, b, o, read, &lat);
		if (!r)
			r = xfer_bw(c, b, o, read, &bw);
		if (r)
			break;
		printf("{\"bench\":\"xfer\",\"mode\":\"%s\",\"mode_reason\":\"%s\","
		       "\"dir\":\"%s\",\"size\":%" PRIu64 ",\"lat_n\":%u,"
		       "\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f,\"gbps\":%.3f,"
		       "\"depth\":%u,\"poll_us\":%d,\"raw\":\"%s\","
		       "\"raw_lat_p50_us\":%.1f,\"raw_lat_p99_us\":%.1f,"
		       "\"raw_gbps\":%.3f,\"interval_us\":%u,"
		       "\"client_cpu_us_per_xfer\":%.2f,"
		       "\"client_sleeps_per_xfer\":%.2f,"
		       "\"daemon_threads\":\"%s\"}\n", o->mode, info.mode_reason,
		       read ? "read" : "write", o->size, o->lat, lat.p50,
		       lat.p99, bw.gbps, o->depth, o->poll_us,
		       gpu ? "cudaMemcpyAsync" : "memcpy", rlat.p50, rlat.p99,
		       rbw.gbps, o->interval_us, lat.cpu_us, lat.sleeps,
		       lat.daemon);
		fflush(stdout);
	}
out:
	fpgad_buffer_unregister(b);
	fpgad_disconnect(c);
	if (gpu) {
		raw_gpu_free(&p);
	} else {
		free(p.host);
		free(p.dev);
	}
	return r;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "depth", required_argument, NULL, 'd' },
		{ "lat", required_argument, NULL, 'l' },
		{ "poll-us", required_argument, NULL, 'p' },
		{ "batch", required_argument, NULL, 'b' },
		{ "interval-us", required_argument, NULL, 'i' },
		{ "daemon-pid", required_argument, NULL, 'D' },
		{ 0 },
	};
	struct opts o = { .seconds = 1, .depth = 8, .lat = 2000, .poll_us = -1 };
	int ch;

	if (argc == 2 && !strcmp(argv[1], "probe"))
		return test_gpu_probe();
	while ((ch = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (ch) {
		case 's': o.seconds = atof(optarg); break;
		case 'd': o.depth = (unsigned)atoi(optarg); break;
		case 'l': o.lat = (unsigned)atoi(optarg); break;
		case 'p': o.poll_us = atoi(optarg) < 0 ? 0 : atoi(optarg); break;
		case 'b': o.batch = (unsigned)atoi(optarg); break;
		case 'i': o.interval_us = (unsigned)atoi(optarg); break;
		case 'D': o.daemon_pid = (pid_t)atoi(optarg); break;
		default: return 2;
		}
	}
	if (argc - optind != 3 || !o.depth || o.depth > MAX_DEPTH ||
	    !o.lat || o.lat > MAX_LAT || o.batch > MAX_BATCH ||
	    (strcmp(argv[optind + 1], "host") &&
	     strcmp(argv[optind + 1], "gpudirect") &&
	     strcmp(argv[optind + 1], "bounce"))) {
		fprintf(stderr, "usage: bench_xfer [--seconds S] [--depth D] "
			"[--lat N] [--poll-us US] [--batch N] [--interval-us US] "
			"[--daemon-pid P] URL "
			"host|gpudirect|bounce SIZE\n       bench_xfer probe\n");
		return 2;
	}
	o.url = argv[optind];
	o.mode = argv[optind + 1];
	o.size = bench_parse_size(argv[optind + 2]);
	if (!o.size)
		return 2;
	return run(&o);
}
