// SPDX-License-Identifier: MIT
/*
 * bench_stream.c - consumers of fpgad channels, one process per channel,
 * started together; prints one JSON line for the whole run.
 *
 *   bench_stream [options] URL CHANNEL[,CHANNEL...]
 *     --seconds S     measure for S seconds (default 2), or
 *     --frames N      measure N frames per channel
 *     --warmup N      frames taken and released before measuring (32)
 *     --verify KIND   none (default), cpu (fpgad_frame_host and
 *                     fpgad_simframe_check) or gpu (the CUDA kernel of
 *                     tests/gpu, in place)
 *     --depth D       frames held while the GPU checks them (4)
 *     --poll-us US    busy-poll for a frame US microseconds before sleeping
 *     --daemon-pid P  also report fpgad's CPU time per frame, per thread
 *                     name, and its VmRSS at the end of the window
 *
 * Each worker connects, leases its channel, takes the warm-up frames, then
 * waits at a barrier; the window opens for all at once.  Wake-up latency
 * is the time from the frame's DMA end (t_dma_end_ns) to the return of
 * fpgad_frame_wait(), both CLOCK_MONOTONIC.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "fpgad.h"
#include "fpgad_simframe.h"
#ifdef FPGAD_CUDA
#include "../gpu/gpu_verify.h"
#endif

#define MAX_CHANNELS 16
#define MAX_SAMPLES 65536
#define MAX_DEPTH 64

enum verify { VERIFY_NONE, VERIFY_CPU, VERIFY_GPU };

struct opts {
	const char *url;
	char *names[MAX_CHANNELS];
	unsigned n;
	double seconds;
	uint64_t frames, warmup;
	enum verify verify;
	unsigned depth;
	unsigned poll_us;	/* busy-poll before sleeping in frame_wait */
	bool async;		/* --verify gpu: release on the verifier's stream */
	pid_t daemon_pid;
};

struct result {
	int status;			/* 0, or a negative errno */
	char memory[8];
	char mode[16];
	uint64_t frame_size;
	uint64_t frames, bytes, gaps, errors, verified, flagged;
	uint64_t next_seq;
	uint64_t t_first_ns, t_last_ns;
	uint64_t client_cpu_ns;		/* this consumer's CPU in the window */
	uint64_t n_lat;
	uint64_t lat_ns[MAX_SAMPLES];
};

struct shared {
	uint64_t t_go_ns;		/* the window opens */
	struct result r[MAX_CHANNELS];
};

struct worker {
	const struct opts *o;
	struct result *res;
	fpgad_channel *ch;
	struct fpgad_frame held[MAX_DEPTH];
	void *pattern;
	uint64_t psize;
#ifdef FPGAD_CUDA
	struct gpu_verifier *gv;
#endif
};

static int check_cpu(struct worker *w, const struct fpgad_frame *f)
{
	const void *data;
	uint64_t off;
	int r;

	r = fpgad_frame_host(w->ch, f, &data);
	if (r < 0)
		return r;
	r = fpgad_simframe_check(data, f->length, f->seq, w->pattern, w->psize,
				 &off);
	if (r == FPGAD_SIMFRAME_OK)
		w->res->verified++;
	else
		w->res->errors++;
	return 0;
}

/* Frame number @n (of this window) is done with: its check, then release. */
static int finish(struct worker *w, uint64_t n)
{
	struct fpgad_frame *f = &w->held[n % MAX_DEPTH];

#ifdef FPGAD_CUDA
	if (w->o->verify == VERIFY_GPU) {
		uint64_t res;
		int r = gpu_verifier_wait(w->gv, n, &res);

		if (r < 0) {
			fprintf(stderr, "bench_stream: %s\n", gpu_verify_errmsg(w->gv));
			return r;
		}
		if (res == GPU_VERIFY_OK)
			w->res->verified++;
		else
			w->res->errors++;
	}
#endif
	return fpgad_frame_release(w->ch, f);
}

static int take_one(struct worker *w, uint64_t n, bool measure)
{
	struct fpgad_frame *f = &w->held[n % MAX_DEPTH];
	struct result *res = w->res;
	uint64_t woke;
	int r;

	r = fpgad_frame_wait(w->ch, f, 10000);
	woke = bench_now_ns();
	if (r < 0)
		return r;
	if (!measure)
		return 0;
	if (res->frames && f->seq != res->next_seq)
		res->gaps++;
	res->next_seq = f->seq + 1;
	res->frames++;
	res->bytes += f->length;
	if (f->flags & (FPGAD_FRAME_F_ERROR | FPGAD_FRAME_F_TRUNCATED))
		res->flagged++;
	if (res->n_lat < MAX_SAMPLES && woke > f->t_dma_end_ns)
		res->lat_ns[res->n_lat++] = woke - f->t_dma_end_ns;
	switch (w->o->verify) {
	case VERIFY_CPU:
		return check_cpu(w, f);
#ifdef FPGAD_CUDA
	case VERIFY_GPU:
		/*
		 * Stream-ordered: the slot goes back behind its check, which
		 * is counted on the GPU; this thread never waits for it.
		 */
		r = w->o->async ?
			gpu_verifier_submit_tally(w->gv, f->data, f->length, f->seq) :
			gpu_verifier_submit(w->gv, n, f->data, f->length, f->seq);
		if (r < 0) {
			fprintf(stderr, "bench_stream: %s\n", gpu_verify_errmsg(w->gv));
			return r;
		}
		if (w->o->async)
			r = fpgad_frame_release_async(w->ch, f,
						      gpu_verifier_stream(w->gv));
		return r;
#endif
	default:
		return 0;
	}
}

static int window(struct worker *w, volatile struct shared *sh)
{
	const struct opts *o = w->o;
	uint64_t n = 0, done = 0, end, t = 0;
	unsigned depth = o->verify == VERIFY_GPU ? o->depth : 1;
	int r = 0;

	/* Stream-ordered release: nothing to finish, the ring is the limit. */
	if (o->async)
		depth = UINT_MAX;

	end = sh->t_go_ns + (uint64_t)(o->seconds * 1e9);
	for (;;) {
		if (n - done == depth) {
			r = finish(w, done++);
			if (r < 0)
				break;
		}
		t = bench_now_ns();
		if (o->frames ? n >= o->frames : t >= end)
			break;
		r = take_one(w, n, true);
		if (r < 0)
			break;
		n++;
		if (o->verify != VERIFY_GPU) {
			r = finish(w, done++);
			if (r < 0)
				break;
		}
	}
	while (done < n && !o->async) {
		int r2 = finish(w, done++);

		if (r2 < 0 && !r)
			r = r2;
	}
#ifdef FPGAD_CUDA
	if (o->async) {
		struct gpu_verify_tally tl;
		int r2 = gpu_verifier_tally(w->gv, &tl);

		if (r2 < 0) {
			fprintf(stderr, "bench_stream: %s\n", gpu_verify_errmsg(w->gv));
			if (!r)
				r = r2;
		} else {
			w->res->verified += tl.checked - tl.bad;
			w->res->errors += tl.bad;
		}
	}
#endif
	w->res->t_first_ns = sh->t_go_ns;
	w->res->t_last_ns = o->frames ? bench_now_ns() : t;
	return r;
}

static int worker_main(const struct opts *o, unsigned idx,
		       volatile struct shared *sh, int ready_fd, int go_fd,
		       int end_fd)
{
	struct worker w = { .o = o, .res = (struct result *)&sh->r[idx] };
	struct fpgad_channel_info info;
	fpgad_client *c = NULL;
	char b = 'r';
	int r;

	r = fpgad_connect(o->url, &c);
	if (r < 0) {
		fprintf(stderr, "bench_stream: connect %s: %s\n", o->url, strerror(-r));
		goto out;
	}
	r = fpgad_channel_open(c, o->names[idx], 0, &w.ch);
	if (r < 0) {
		fprintf(stderr, "bench_stream: open %s: %s (%s)\n", o->names[idx],
			strerror(-r), fpgad_errmsg(c));
		goto out;
	}
	fpgad_channel_get_info(w.ch, &info);
	fpgad_channel_set_poll(w.ch, o->poll_us);
	snprintf(w.res->memory, sizeof(w.res->memory), "%s",
		 info.memory == FPGAD_MEMORY_CUDA ? "cuda" : "host");
	snprintf(w.res->mode, sizeof(w.res->mode), "%s", info.mode);
	w.res->frame_size = info.frame_size;
	if (o->verify == VERIFY_CPU) {
		w.psize = fpgad_simframe_pattern_size(info.frame_size);
		w.pattern = malloc(w.psize);
		if (!w.pattern) {
			r = -ENOMEM;
			goto out;
		}
		fpgad_simframe_pattern_fill(w.pattern, w.psize);
	}
	if (o->verify == VERIFY_GPU) {
#ifdef FPGAD_CUDA
		if (info.memory != FPGAD_MEMORY_CUDA) {
			fprintf(stderr, "bench_stream: --verify gpu: %s is in host memory\n",
				info.name);
			r = -EINVAL;
			goto out;
		}
		r = gpu_verifier_create(info.gpu, o->depth, &w.gv);
		if (r < 0) {
			fprintf(stderr, "bench_stream: %s\n", gpu_verify_errmsg(NULL));
			goto out;
		}
#else
		fprintf(stderr, "bench_stream: --verify gpu: built without CUDA\n");
		r = -ENODEV;
		goto out;
#endif
	}
	for (uint64_t i = 0; i < o->warmup; i++) {
		r = take_one(&w, 0, false);
		if (r == 0)
			r = fpgad_frame_release(w.ch, &w.held[0]);
		if (r < 0) {
			fprintf(stderr, "bench_stream: %s: warm-up: %s\n",
				o->names[idx], strerror(-r));
			goto out;
		}
	}
	/* Ready; the window opens when the parent closes the go pipe. */
	if (write(ready_fd, &b, 1) != 1 || read(go_fd, &b, 1) != 0) {
		r = -EPIPE;
		goto out;
	}
	{
		struct rusage u0, u1;

		getrusage(RUSAGE_SELF, &u0);
		r = window(&w, sh);
		getrusage(RUSAGE_SELF, &u1);
		w.res->client_cpu_ns =
			(uint64_t)(u1.ru_utime.tv_sec - u0.ru_utime.tv_sec +
				   u1.ru_stime.tv_sec - u0.ru_stime.tv_sec) * 1000000000ull +
			(uint64_t)((u1.ru_utime.tv_usec - u0.ru_utime.tv_usec +
				    u1.ru_stime.tv_usec - u0.ru_stime.tv_usec) * 1000);
	}
	if (r < 0)
		fprintf(stderr, "bench_stream: %s: after %" PRIu64 " frames: %s\n",
			o->names[idx], w.res->frames, strerror(-r));
out:
	w.res->status = r;
	/* Done measuring: the parent reads fpgad's counters now. */
	b = 'd';
	if (write(ready_fd, &b, 1) != 1)
		r = -EPIPE;
	/*
	 * Keep the lease (and so fpgad's streaming thread, whose counters
	 * die with it) until the parent has read them: it closes end_fd.
	 */
	if (read(end_fd, &b, 1) < 0)
		r = -EPIPE;
#ifdef FPGAD_CUDA
	gpu_verifier_destroy(w.gv);
#endif
	if (w.ch)
		fpgad_channel_close(w.ch);
	fpgad_disconnect(c);
	free(w.pattern);
	return r < 0 ? 1 : 0;
}

/* Read one byte from each of @n workers. */
static int gather(int fd, unsigned n)
{
	char b;

	for (unsigned i = 0; i < n; i++)
		if (read(fd, &b, 1) != 1)
			return -EPIPE;
	return 0;
}

static void print_result(const struct opts *o, struct shared *sh,
			 const struct bench_cpu *c0, const struct bench_cpu *c1,
			 int64_t rss_kb)
{
	static uint64_t lat[MAX_CHANNELS * MAX_SAMPLES];
	static const char *const vnames[] = { "none", "cpu", "gpu" };
	uint64_t frames = 0, bytes = 0, gaps = 0, errors = 0, verified = 0;
	uint64_t flagged = 0, n_lat = 0, span = 0, client_ns = 0;
	char split[1024] = "";
	double secs, tick_us = 1e6 / (double)sysconf(_SC_CLK_TCK);

	for (unsigned i = 0; i < o->n; i++) {
		struct result *r = &sh->r[i];

		frames += r->frames;
		bytes += r->bytes;
		gaps += r->gaps;
		errors += r->errors;
		verified += r->verified;
		flagged += r->flagged;
		client_ns += r->client_cpu_ns;
		if (r->t_last_ns - r->t_first_ns > span)
			span = r->t_last_ns - r->t_first_ns;
		memcpy(lat + n_lat, r->lat_ns, r->n_lat * sizeof(*lat));
		n_lat += r->n_lat;
	}
	bench_sort(lat, n_lat);
	secs = (double)span / 1e9;
	printf("{\"bench\":\"stream\",\"channels\":%u,\"memory\":\"%s\",\"mode\":\"%s\","
	       "\"frame_size\":%" PRIu64 ",\"verify\":\"%s\",\"seconds\":%.3f,"
	       "\"frames\":%" PRIu64 ",\"fps\":%.1f,\"gbps\":%.3f,\"gaps\":%" PRIu64
	       ",\"errors\":%" PRIu64 ",\"verified\":%" PRIu64 ",\"flagged\":%" PRIu64
	       ",\"lat_n\":%" PRIu64 ",\"lat_p50_us\":%.1f,\"lat_p99_us\":%.1f,"
	       "\"lat_max_us\":%.1f,\"release\":\"%s\",\"client_cpu_us_per_frame\":%.2f",
	       o->n, sh->r[0].memory, sh->r[0].mode, sh->r[0].frame_size,
	       vnames[o->verify], secs, frames, secs > 0 ? (double)frames / secs : 0,
	       secs > 0 ? (double)bytes / secs / 1e9 : 0, gaps, errors, verified,
	       flagged, n_lat, bench_pct_us(lat, n_lat, 0.5),
	       bench_pct_us(lat, n_lat, 0.99), bench_pct_us(lat, n_lat, 1.0),
	       o->async ? "async" : "cpu",
	       frames ? (double)client_ns / 1e3 / (double)frames : 0.0);
	if (c0 && c1 && frames) {
		uint64_t run = 0;

		for (unsigned i = 0; i < c1->n; i++) {
			uint64_t before = 0;

			for (unsigned j = 0; j < c0->n; j++)
				if (c0->t[j].tid == c1->t[i].tid)
					before = c0->t[j].run_ns;
			run += c1->t[i].run_ns - before;
		}
		if (!run)	/* no schedstat: clock ticks it is */
			run = (uint64_t)((double)(c1->ticks - c0->ticks) *
					 tick_us * 1e3);
		bench_cpu_split(c0, c1, frames, split, sizeof(split));
		printf(",\"daemon_cpu_ticks\":%" PRIu64 ",\"daemon_cpu_us_per_frame\":%.2f,"
		       "\"daemon_run_us_per_frame\":%.2f,\"daemon_threads\":\"%s\","
		       "\"daemon_rss_kb\":%" PRId64,
		       c1->ticks - c0->ticks,
		       (double)(c1->ticks - c0->ticks) * tick_us / (double)frames,
		       (double)run / 1e3 / (double)frames, split, rss_kb);
	}
	printf("}\n");
	fflush(stdout);
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lopts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "frames", required_argument, NULL, 'n' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "verify", required_argument, NULL, 'v' },
		{ "depth", required_argument, NULL, 'd' },
		{ "poll-us", required_argument, NULL, 'P' },
		{ "async", no_argument, NULL, 'a' },
		{ "daemon-pid", required_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	char *save = NULL, *tok;
	int opt;

	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		switch (opt) {
		case 's': o->seconds = atof(optarg); break;
		case 'n': o->frames = strtoull(optarg, NULL, 0); break;
		case 'w': o->warmup = strtoull(optarg, NULL, 0); break;
		case 'd': o->depth = (unsigned)atoi(optarg); break;
		case 'P': o->poll_us = (unsigned)atoi(optarg); break;
		case 'a': o->async = true; break;
		case 'p': o->daemon_pid = (pid_t)atoi(optarg); break;
		case 'v':
			if (!strcmp(optarg, "none"))
				o->verify = VERIFY_NONE;
			else if (!strcmp(optarg, "cpu"))
				o->verify = VERIFY_CPU;
			else if (!strcmp(optarg, "gpu"))
				o->verify = VERIFY_GPU;
			else
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	if (argc - optind != 2 || !o->depth || o->depth > MAX_DEPTH / 2 ||
	    (!o->frames && o->seconds <= 0) ||
	    (o->async && o->verify != VERIFY_GPU))
		return -EINVAL;
	o->url = argv[optind];
	for (tok = strtok_r(argv[optind + 1], ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (o->n == MAX_CHANNELS)
			return -EINVAL;
		o->names[o->n++] = tok;
	}
	return o->n ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct opts o = { .seconds = 2, .warmup = 32, .depth = 4 };
	static struct bench_cpu c0, c1;
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, end[2] = { -1, -1 };
	pid_t pids[MAX_CHANNELS] = { 0 };
	struct shared *sh;
	int64_t rss = -1;
	int code = 1, status;
	bool cpu = false;
	unsigned i;

	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: bench_stream [--seconds S | --frames N] [--warmup N] "
				"[--verify none|cpu|gpu] [--depth D] [--async] [--poll-us US] [--daemon-pid PID] "
				"URL CHANNEL[,CHANNEL...]\n");
		return 2;
	}
	sh = bench_shared_alloc(sizeof(*sh));
	if (!sh || pipe(ready) < 0 || pipe(go) < 0 || pipe(end) < 0) {
		fprintf(stderr, "bench_stream: set-up: %s\n", strerror(errno));
		goto out;
	}
	fflush(stdout);
	for (i = 0; i < o.n; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "bench_stream: fork: %s\n", strerror(errno));
			goto out;
		}
		if (pids[i] == 0) {
			close(ready[0]);
			close(go[1]);
			close(end[1]);
			_exit(worker_main(&o, i, sh, ready[1], go[0], end[0]));
		}
	}
	close(ready[1]);
	ready[1] = -1;
	close(go[0]);
	go[0] = -1;
	close(end[0]);
	end[0] = -1;
	if (gather(ready[0], o.n) < 0) {
		fprintf(stderr, "bench_stream: a worker failed to start\n");
		goto out;
	}
	if (o.daemon_pid > 0)
		cpu = bench_cpu_read(o.daemon_pid, &c0) == 0;
	sh->t_go_ns = bench_now_ns();
	close(go[1]);
	go[1] = -1;
	if (gather(ready[0], o.n) == 0 && o.daemon_pid > 0) {
		cpu = cpu && bench_cpu_read(o.daemon_pid, &c1) == 0;
		rss = bench_rss_kb(o.daemon_pid);
	}
	code = 0;
out:
	if (go[1] >= 0)
		close(go[1]);
	if (end[1] >= 0)
		close(end[1]);
	end[1] = -1;
	for (i = 0; i < o.n; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) || sh->r[i].status < 0)
			code = 1;
	}
	if (!code)
		print_result(&o, sh, cpu ? &c0 : NULL, cpu ? &c1 : NULL, rss);
	for (i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]);
		if (end[i] >= 0)
			close(end[i]);
	}
	bench_shared_free(sh, sizeof(*sh));
	return code;
}
