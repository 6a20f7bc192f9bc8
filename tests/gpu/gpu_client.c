// SPDX-License-Identifier: MIT
/*
 * gpu_client.c - a GPU consumer of fpgad frames: lease a channel in GPU
 * memory, take N frames, verify each in place with a CUDA kernel
 * (verify_kernel.cu) on the device pointer libfpgad hands out, release it
 * once its check finished, and print one JSON line:
 *
 *   gpu_client [--shared] [--frames N] [--depth D] [--timeout MS] [--device G] URL CHANNEL
 *   gpu_client --probe
 *   gpu_client --selftest   (the checker itself: a bad byte, a wrong seq)
 *
 * --device G verifies on CUDA device G, chosen before the channel is
 * opened: a ring on another GPU is then reached through peer access
 * (libfpgad maps it on G), or the open fails naming both GPUs.
 *
 * --host-ok accepts a channel in host memory and checks its frames on the
 * CPU instead, so that this program and tests/gpu/run.sh can be exercised
 * on a machine without a GPU (GPU_TEST_HOST=1 tests/gpu/run.sh ...).
 *
 * Exit status: 0 every frame verified, 1 a verify error, a frame flagged
 * bad or a failure, 2 bad usage; --probe: 0 a GPU answers, 77 none.
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

#include "fpgad.h"
#include "fpgad_simframe.h"
#include "gpu_probe.h"
#include "gpu_verify.h"

#define MAX_DEPTH 64u

struct run {
	uint64_t frames, verified, errors, flagged, gaps, first_seq, last_seq;
	uint64_t bytes, t0_ns, t1_ns;
	struct fpgad_frame held[MAX_DEPTH];
	bool cpu;			/* host memory, checked on the CPU */
	bool async;			/* released on the verifier's stream */
	uint64_t cpu_res[MAX_DEPTH];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double tv_us(const struct timeval *tv)
{
	return (double)tv->tv_sec * 1e6 + (double)tv->tv_usec;
}

static int selftest(void)
{
	char why[256] = "";
	int r = gpu_verify_selftest(why, sizeof(why));

	printf("%s%s\n", r ? "the GPU checker is wrong: " : "the GPU checker finds a bad byte and a wrong frame number, waited for and tallied", why);
	return r ? 1 : 0;
}

static void cpu_check(struct run *run, const struct fpgad_frame *f)
{
	uint64_t off = 0;
	int r;

	r = fpgad_simframe_check(f->data, f->length, f->seq, NULL, 0, &off);
	run->cpu_res[run->frames % MAX_DEPTH] = r == FPGAD_SIMFRAME_OK ?
						GPU_VERIFY_OK : off;
}

/* Wait for the check of the frame taken as number @n, then release it. */
static int finish(fpgad_channel *ch, struct gpu_verifier *v, struct run *run,
		  uint64_t n)
{
	struct fpgad_frame *f = &run->held[n % MAX_DEPTH];
	uint64_t res;
	int r = 0;

	if (run->cpu)
		res = run->cpu_res[n % MAX_DEPTH];
	else
		r = gpu_verifier_wait(v, n, &res);
	if (!run->cpu && r < 0) {
		fprintf(stderr, "gpu_client: %s\n", gpu_verify_errmsg(v));
		return r;
	}
	if (res == GPU_VERIFY_OK) {
		run->verified++;
	} else {
		run->errors++;
		if (run->errors <= 5)
			fprintf(stderr, "gpu_client: frame %" PRIu64 ": first bad byte at offset %" PRIu64 "\n",
				f->seq, res);
	}
	if (run->async)
		return 0;	/* released on the stream, behind its check */
	r = fpgad_frame_release(ch, f);
	if (r < 0)
		fprintf(stderr, "gpu_client: release frame %" PRIu64 ": %s\n",
			f->seq, strerror(-r));
	return r;
}

static int take(fpgad_channel *ch, struct gpu_verifier *v, struct run *run,
		uint64_t count, unsigned depth, int timeout_ms)
{
	uint64_t done = 0;
	int r = 0;

	while (run->frames < count) {
		struct fpgad_frame *f = &run->held[run->frames % MAX_DEPTH];

		/* Stream-ordered release: nothing to finish, the ring is the limit. */
		if (!run->async && run->frames - done == depth) {
			r = finish(ch, v, run, done++);
			if (r < 0)
				return r;
		}
		r = fpgad_frame_wait(ch, f, timeout_ms);
		if (r < 0) {
			fprintf(stderr, "gpu_client: after %" PRIu64 " frames: %s\n",
				run->frames, r == -ETIMEDOUT ? "no frame within the timeout" :
				r == -EPIPE ? "the lease ended" : strerror(-r));
			break;
		}
		if (!run->frames) {
			run->t0_ns = now_ns();
			run->first_seq = f->seq;
		} else if (f->seq != run->last_seq + 1) {
			run->gaps++;
		}
		run->last_seq = f->seq;
		run->bytes += f->length;
		if (f->flags & (FPGAD_FRAME_F_ERROR | FPGAD_FRAME_F_TRUNCATED))
			run->flagged++;
		if (run->cpu)
			cpu_check(run, f);
		else if (run->async)	/* counted on the GPU, never waited for */
			r = gpu_verifier_submit_tally(v, f->data, f->length, f->seq);
		else
			r = gpu_verifier_submit(v, run->frames, f->data,
						f->length, f->seq);
		if (r < 0) {
			fprintf(stderr, "gpu_client: %s\n", gpu_verify_errmsg(v));
			fpgad_frame_release(ch, f);
			break;
		}
		if (run->async) {
			/* The slot goes back when the GPU has checked it. */
			r = fpgad_frame_release_async(ch, f,
						      gpu_verifier_stream(v));
			if (r < 0) {
				fprintf(stderr, "gpu_client: release_async: %s\n",
					strerror(-r));
				break;
			}
		}
		run->frames++;
	}
	while (done < run->frames && !run->async) {
		int r2 = finish(ch, v, run, done++);

		if (r2 < 0 && r >= 0)
			r = r2;
	}
	if (run->async) {
		struct gpu_verify_tally t;
		int r2 = gpu_verifier_tally(v, &t);

		if (r2 < 0) {
			fprintf(stderr, "gpu_client: %s\n", gpu_verify_errmsg(v));
			if (r >= 0)
				r = r2;
		} else {
			run->verified = t.checked - t.bad;
			run->errors = t.bad;
			if (t.bad)
				fprintf(stderr, "gpu_client: %llu bad frames, the first %llu with its first bad byte at offset %llu\n",
					t.bad, t.first_bad_seq, t.first_bad_offset);
		}
	}
	run->t1_ns = now_ns();
	return r;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: gpu_client [--shared] [--frames N] [--depth D] [--timeout MS] [--host-ok] [--async] [--device G] URL CHANNEL\n"
		     "       gpu_client --probe\n"
		     "       gpu_client --selftest\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shared", no_argument, NULL, 's' },
		{ "frames", required_argument, NULL, 'n' },
		{ "depth", required_argument, NULL, 'd' },
		{ "timeout", required_argument, NULL, 't' },
		{ "probe", no_argument, NULL, 'p' },
		{ "selftest", no_argument, NULL, 'S' },
		{ "host-ok", no_argument, NULL, 'H' },
		{ "async", no_argument, NULL, 'a' },
		{ "device", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct fpgad_channel_setup setup;
	struct fpgad_channel_info info;
	struct gpu_verifier *v = NULL;
	fpgad_channel *ch = NULL;
	fpgad_client *c = NULL;
	unsigned long long count = 10000;
	unsigned depth = 4, flags = 0;
	int timeout_ms = 5000, device = -1, opt, r, code = 1;
	bool host_ok = false, async = false;
	struct rusage ru0, ru1;
	struct run *run;
	double secs;

	while ((opt = getopt_long(argc, argv, "sn:d:t:ph", opts, NULL)) != -1) {
		switch (opt) {
		case 's': flags |= FPGAD_OPEN_SHARED; break;
		case 'n': count = strtoull(optarg, NULL, 0); break;
		case 'd': depth = (unsigned)strtoul(optarg, NULL, 0); break;
		case 't': timeout_ms = atoi(optarg); break;
		case 'p': return test_gpu_probe();
		case 'S': return selftest();
		case 'H': host_ok = true; break;
		case 'a': async = true; break;
		case 'D': device = atoi(optarg); break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 2 || !count || !depth || depth > MAX_DEPTH) {
		usage(stderr);
		return 2;
	}
	run = calloc(1, sizeof(*run));
	if (!run) {
		fprintf(stderr, "gpu_client: out of memory\n");
		return 1;
	}

	/* The consumer's own GPU first: its context is current at the open. */
	if (device >= 0 && gpu_verifier_create(device, depth, &v) < 0) {
		fprintf(stderr, "gpu_client: GPU %d: %s\n", device, gpu_verify_errmsg(v));
		goto out;
	}
	r = fpgad_connect(argv[optind], &c);
	if (r < 0) {
		fprintf(stderr, "gpu_client: connect %s: %s\n", argv[optind],
			strerror(-r));
		goto out;
	}
	r = fpgad_channel_open(c, argv[optind + 1], flags, &ch);
	if (r < 0) {
		fprintf(stderr, "gpu_client: open %s: %s (%s)\n", argv[optind + 1],
			strerror(-r), fpgad_errmsg(c));
		goto out;
	}
	fpgad_channel_get_info(ch, &info);
	run->cpu = info.memory == FPGAD_MEMORY_HOST && host_ok;
	run->async = async && !run->cpu;
	if (info.memory != FPGAD_MEMORY_CUDA && !run->cpu) {
		fprintf(stderr, "gpu_client: channel %s is in host memory (mode %s), not GPU memory\n",
			info.name, info.mode);
		goto out;
	}
	if (depth > info.slots - 1)
		depth = info.slots > 1 ? info.slots - 1 : 1;
	r = run->cpu || v ? 0 : gpu_verifier_create(info.gpu, depth, &v);
	if (r < 0) {
		fprintf(stderr, "gpu_client: GPU %d: %s\n", info.gpu,
			gpu_verify_errmsg(v));
		goto out;
	}

	fpgad_channel_get_setup(ch, &setup);
	getrusage(RUSAGE_SELF, &ru0);
	r = take(ch, v, run, count, depth, timeout_ms);
	getrusage(RUSAGE_SELF, &ru1);
	secs = run->t1_ns > run->t0_ns ? (double)(run->t1_ns - run->t0_ns) / 1e9 : 0;
	printf("{\"channel\":\"%s\",\"memory\":\"%s\",\"integrated\":%s,\"mode\":\"%s\",\"shared\":%s,"
	       "\"frame_size\":%" PRIu64 ",\"frames\":%" PRIu64 ",\"verified\":%" PRIu64
	       ",\"errors\":%" PRIu64 ",\"flagged\":%" PRIu64 ",\"seq_gaps\":%" PRIu64
	       ",\"first_seq\":%" PRIu64 ",\"last_seq\":%" PRIu64
	       ",\"fps\":%.1f,\"gbps\":%.3f,\"depth\":%u,\"release\":\"%s\""
	       ",\"cpu_us_per_frame\":%.2f,\"export\":\"%s\",\"lease_ms\":%.2f"
	       ",\"cuda_start_ms\":%.2f,\"first_map_ms\":%.3f}\n",
	       info.name, run->cpu ? "host" : "cuda", info.integrated ? "true" : "false",
	       info.mode, flags & FPGAD_OPEN_SHARED ? "true" : "false",
	       info.frame_size, run->frames, run->verified, run->errors,
	       run->flagged, run->gaps, run->first_seq, run->last_seq,
	       secs > 0 ? (double)run->frames / secs : 0.0,
	       secs > 0 ? (double)run->bytes / secs / 1e9 : 0.0, depth,
	       run->async ? "async" : "cpu",
	       run->frames ? (tv_us(&ru1.ru_utime) + tv_us(&ru1.ru_stime) -
			      tv_us(&ru0.ru_utime) - tv_us(&ru0.ru_stime)) /
			     (double)run->frames : 0.0,
	       setup.gpu_export, (double)setup.lease_ns / 1e6,
	       (double)setup.cuda_ns / 1e6, (double)setup.map_ns / 1e6);
	fflush(stdout);
	if (r == 0 && run->frames == count && run->verified == count &&
	    !run->errors && !run->flagged)
		code = 0;
out:
	gpu_verifier_destroy(v);
	if (ch) {
		r = fpgad_channel_close(ch);
		if (r < 0)
			fprintf(stderr, "gpu_client: close: %s\n", strerror(-r));
	}
	fpgad_disconnect(c);
	free(run);
	return code;
}
