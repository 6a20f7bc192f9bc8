// SPDX-License-Identifier: MIT
/*
 * test_stream.c - the data plane end to end: real fpgad processes on the
 * simulated card (host memory on this machine), consumer processes that
 * verify every frame, leases, kill -9, policies, faults.
 */
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fpgad.h"
#include "fpgad_frames.h"
#include "fpgad_simframe.h"
#include "harness.h"

#define SMALL_CHANNEL(name, engine, policy) \
	"[channel " name "]\nengine = " #engine "\nslots = 8\nslot_size = 64K\n" \
	"frame_size = 64K\nmemory = host\npolicy = " policy "\n"

struct pattern {
	void *buf;
	uint64_t size;
};

static void pattern_make(struct pattern *p, uint64_t frame_size)
{
	p->size = fpgad_simframe_pattern_size(frame_size);
	p->buf = malloc(p->size);
	assert_non_null(p->buf);
	fpgad_simframe_pattern_fill(p->buf, p->size);
}

static int check_frame(const struct pattern *p, const struct fpgad_frame *f)
{
	uint64_t off;

	return fpgad_simframe_check(f->data, f->length, f->seq, p->buf, p->size,
				    &off);
}

/*
 * A consumer process: fpgactl capture, verifying every frame (and that no
 * frame comes twice or out of order); exits 0 when all were good.  Fork
 * and exec: nng's threads make a forked copy of this process unusable.
 */
static pid_t spawn_consumer(const char *url, const char *channel, bool shared,
			    unsigned n)
{
	char count[16];
	pid_t pid;

	snprintf(count, sizeof(count), "%u", n);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		execl(harness_bin("fpgactl"), "fpgactl", "--url", url, "capture",
		      channel, "-n", count, "--verify", "--timeout", "10000",
		      shared ? "--shared" : NULL, (char *)NULL);
		_exit(127);
	}
	return pid;
}

static void expect_exit0(pid_t pid, const char *what)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s: consumer %s %d", what,
			 WIFEXITED(status) ? "exited with status" : "killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void test_capture_verify_json(void **state)
{
	struct fpgad_proc p;
	char cmd[512], out[8192];
	json_error_t jerr;
	json_t *j;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "%s --url %s capture c2h0 -n 2000 --verify --json",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("invalid JSON: %s\n%s", jerr.text, out);
	assert_int_equal(json_integer_value(json_object_get(j, "frames")), 2000);
	assert_int_equal(json_integer_value(json_object_get(j, "verified")), 2000);
	assert_int_equal(json_integer_value(json_object_get(j, "verify_errors")), 0);
	assert_true(json_is_integer(json_object_get(j, "drops")));
	assert_true(json_real_value(json_object_get(j, "fps")) > 0);
	assert_true(json_real_value(json_object_get(j, "gbps")) > 0);
	assert_true(json_is_real(json_object_get(json_object_get(j, "wakeup_latency_us"), "p99")));
	json_decref(j);
	snprintf(cmd, sizeof(cmd), "%s --url %s stats c2h0 --json",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("invalid JSON: %s\n%s", jerr.text, out);
	assert_true(json_integer_value(json_object_get(j, "frames")) >= 2000);
	assert_true(json_real_value(json_object_get(j, "queued_avg")) >= 1.0);
	assert_string_equal(json_string_value(json_object_get(j, "state")), "idle");
	json_decref(j);
	harness_stop_ok(&p);
}

static void test_several_channels_and_consumers(void **state)
{
	const char *names[] = { "a", "b", "c" };
	struct fpgad_channel_stats st;
	struct fpgad_proc p;
	fpgad_client *c;
	pid_t pids[3];

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("a", 0, "block") SMALL_CHANNEL("b", 1, "block")
			 SMALL_CHANNEL("c", 2, "drop-oldest"), NULL);
	for (int i = 0; i < 3; i++)
		pids[i] = spawn_consumer(p.url, names[i], false, 3000);
	for (int i = 0; i < 3; i++)
		expect_exit0(pids[i], names[i]);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fpgad_channel_stats(c, names[i], &st), 0);
		assert_true(st.frames >= 3000);
		assert_int_equal(st.errors, 0);
	}
	/* Under block nothing is ever dropped. */
	assert_int_equal(fpgad_channel_stats(c, "a", &st), 0);
	assert_int_equal(st.drops, 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

static void test_second_opener_busy(void **state)
{
	fpgad_channel *a, *b;
	fpgad_client *ca, *cb;
	struct fpgad_proc p;
	char want[64];

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	assert_int_equal(fpgad_connect(p.url, &ca), 0);
	assert_int_equal(fpgad_connect(p.url, &cb), 0);
	assert_int_equal(fpgad_channel_open(ca, "c2h0", 0, &a), 0);
	assert_int_equal(fpgad_channel_open(cb, "c2h0", 0, &b), -EBUSY);
	snprintf(want, sizeof(want), "leased exclusively by pid %d", (int)getpid());
	assert_non_null(strstr(fpgad_errmsg(cb), "channel c2h0 is busy"));
	assert_non_null(strstr(fpgad_errmsg(cb), want));
	/* A shared reader cannot join an exclusive lease either. */
	assert_int_equal(fpgad_channel_open(cb, "c2h0", FPGAD_OPEN_SHARED, &b), -EBUSY);
	assert_int_equal(fpgad_channel_close(a), 0);
	assert_int_equal(fpgad_channel_open(cb, "c2h0", 0, &b), 0);
	assert_int_equal(fpgad_channel_close(b), 0);
	fpgad_disconnect(ca);
	fpgad_disconnect(cb);
	harness_stop_ok(&p);
}

static void test_unknown_channel_and_limits(void **state)
{
	fpgad_channel *a, *b;
	struct fpgad_proc p;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, "[control]\nmax_leases = 1\n" SMALL_CHANNEL("a", 0, "block")
			 SMALL_CHANNEL("b", 1, "block"), NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "nope", 0, &a), -ENOENT);
	assert_non_null(strstr(fpgad_errmsg(c), "no channel named 'nope'"));
	assert_int_equal(fpgad_channel_open(c, "bad name!", 0, &a), -EINVAL);
	assert_int_equal(fpgad_channel_open(c, "a", 0, &a), 0);
	assert_int_equal(fpgad_channel_open(c, "b", 0, &b), -ENOSPC);
	assert_non_null(strstr(fpgad_errmsg(c), "max_leases 1"));
	/* Still serving, and the first lease still streams. */
	{
		struct fpgad_frame f;

		assert_int_equal(fpgad_frame_wait(a, &f, 5000), 0);
		assert_int_equal(fpgad_frame_release(a, &f), 0);
	}
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * Start hold_frame on @channel holding @n frames (a shared-read lease when
 * @drain, another reader of it, which takes and releases every frame until
 * hold_frame holds its own), kill -9 it once it holds them, and wait until
 * fpgad has ended its lease.
 */
static void kill_holder(struct fpgad_proc *p, fpgad_client *c,
			const char *channel, const char *n, fpgad_channel *drain)
{
	struct pollfd pfd = { .events = POLLIN };
	struct fpgad_frame f;
	struct fpgad_status *s = NULL;
	int pipefd[2], status;
	char line[64] = "";
	pid_t child;

	assert_int_equal(pipe(pipefd), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		dup2(pipefd[1], 1);
		execl(harness_bin("itests/hold_frame"), "hold_frame", p->url, channel,
		      n, drain ? "shared" : "exclusive", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	pfd.fd = pipefd[0];
	while (drain && poll(&pfd, 1, 0) == 0)
		if (fpgad_frame_wait(drain, &f, 10) == 0)
			assert_int_equal(fpgad_frame_release(drain, &f), 0);
	/* It holds its frames and the lease when it dies. */
	assert_true(read(pipefd[0], line, sizeof(line) - 1) > 0);
	assert_non_null(strstr(line, "held"));
	close(pipefd[0]);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);

	for (int i = 0; i < 100; i++) {
		fpgad_status_free(s);
		assert_int_equal(fpgad_status_get(c, &s), 0);
		if (s->channels[0].leases == (drain ? 1 : 0))
			break;
		usleep(20000);
	}
	assert_int_equal(s->channels[0].leases, drain ? 1 : 0);
	if (!drain)
		assert_string_equal(s->channels[0].state, "idle");
	fpgad_status_free(s);
}

static void test_kill9_releases_lease(void **state)
{
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	kill_holder(&p, c, "c2h0", "1", NULL);
	/* The channel is free and streams for the next process. */
	assert_int_equal(fpgad_channel_open(c, "c2h0", 0, &ch), 0);
	{
		struct fpgad_frame f;

		assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
	}
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * A shared reader killed while it holds every slot of the ring gives every
 * slot back: the reader left can hold all of them again, round after
 * round.  (With no lessee left the stream stops and renews its slots,
 * and drop-oldest takes back a slot nobody released: either would hide a
 * slot that was not returned.)
 */
static void test_dead_lessee_returns_every_slot(void **state)
{
	struct fpgad_frame f[4];
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, "[channel c]\nslots = 4\nslot_size = 64K\nframe_size = 64K\n"
			 "memory = host\npolicy = block\n", NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "c", FPGAD_OPEN_SHARED, &ch), 0);
	kill_holder(&p, c, "c", "4", ch);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 4; i++)
			if (fpgad_frame_wait(ch, &f[i], 5000) != 0)
				fail_msg("round %d: the reader left holds %d of the 4 slots: the dead reader's were not all returned",
					 round, i);
		for (int i = 0; i < 4; i++)
			assert_int_equal(fpgad_frame_release(ch, &f[i]), 0);
	}
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * Under drop-oldest with a fast card, a frame the client holds is never
 * written, however many frames are dropped around it.
 */
static void test_held_slot_never_overwritten(void **state)
{
	struct fpgad_channel_stats st;
	struct fpgad_frame held, f;
	struct fpgad_proc p;
	struct pattern pat;
	fpgad_channel *ch;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, "[channel c]\nslots = 4\nslot_size = 64K\nframe_size = 64K\n"
			 "memory = host\npolicy = drop-oldest\n", NULL);
	pattern_make(&pat, 64 * 1024);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "c", 0, &ch), 0);
	assert_int_equal(fpgad_frame_wait(ch, &held, 5000), 0);
	assert_int_equal(check_frame(&pat, &held), 0);
	for (int round = 0; round < 50; round++) {
		/* Let the card run through the other slots many times. */
		for (int i = 0; i < 40; i++) {
			assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
			assert_int_not_equal(f.slot, held.slot);
			assert_int_equal(check_frame(&pat, &f), 0);
			assert_int_equal(fpgad_frame_release(ch, &f), 0);
		}
		usleep(2000);
		assert_int_equal(check_frame(&pat, &held), 0);
	}
	assert_int_equal(fpgad_channel_stats(c, "c", &st), 0);
	assert_true(st.drops > 0);
	assert_true(st.frames > 2000);
	assert_int_equal(fpgad_frame_release(ch, &held), 0);
	fpgad_disconnect(c);
	free(pat.buf);
	harness_stop_ok(&p);
}

static void test_block_policy_loses_nothing(void **state)
{
	struct fpgad_channel_stats st;
	struct fpgad_frame f;
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;
	uint64_t expect = 0;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("a", 0, "block"), NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "a", 0, &ch), 0);
	for (int i = 0; i < 500; i++) {
		assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
		if (i == 0)
			expect = f.seq;
		/* A slow reader: every frame arrives, in order, no gap. */
		assert_int_equal(f.seq, expect);
		assert_int_equal(f.flags & FPGAD_FRAME_F_DROPPED_BEFORE, 0);
		expect++;
		if (i % 100 == 0)
			usleep(20000);
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
	}
	assert_int_equal(fpgad_channel_stats(c, "a", &st), 0);
	assert_int_equal(st.drops, 0);
	assert_true(st.stalls > 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * The card keeps producing while nobody leases the channel; the frames it
 * produced meanwhile were nobody's: the next lessee's first frame does not
 * say frames were dropped before it, though its seq jumps.
 */
static void test_new_lessee_starts_clean(void **state)
{
	struct fpgad_frame f;
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;
	uint64_t last = 0;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("n", 0, "block") "frame_rate = 2000\n",
			 NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "n", 0, &ch), 0);
	for (int i = 0; i < 20; i++) {
		assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
		last = f.seq;
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
	}
	assert_int_equal(fpgad_channel_close(ch), 0);
	/* 100 ms at 2,000 frames/s: the source moves on by about 200. */
	usleep(100000);
	assert_int_equal(fpgad_channel_open(c, "n", 0, &ch), 0);
	assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
	assert_true(f.seq > last + 1);
	assert_int_equal(f.flags & FPGAD_FRAME_F_DROPPED_BEFORE, 0);
	assert_int_equal(fpgad_frame_release(ch, &f), 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

static void test_shared_readers_see_every_frame(void **state)
{
	struct fpgad_proc p;
	pid_t a, b;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("s", 0, "block"), NULL);
	a = spawn_consumer(p.url, "s", true, 2000);
	b = spawn_consumer(p.url, "s", true, 2000);
	expect_exit0(a, "shared reader a");
	expect_exit0(b, "shared reader b");
	harness_stop_ok(&p);
}

static void test_newest_skips(void **state)
{
	struct fpgad_frame f, g;
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("a", 0, "drop-oldest"), NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "a", 0, &ch), 0);
	fpgad_channel_set_newest(ch, true);
	assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
	assert_int_equal(fpgad_frame_release(ch, &f), 0);
	usleep(50000);
	assert_int_equal(fpgad_frame_wait(ch, &g, 5000), 0);
	/* Older ready frames were released unread. */
	assert_true(g.skipped > 0);
	assert_true(g.seq > f.seq + 1);
	assert_int_equal(fpgad_frame_release(ch, &g), 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

static void test_dma_errors_recover(void **state)
{
	struct fpgad_channel_stats st;
	struct fpgad_proc p;
	fpgad_client *c;
	pid_t pid;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("a", 0, "block"), "FPGAD_SIM_FAULTS=error=97");
	/* Every delivered frame verifies: failed transfers are never published. */
	pid = spawn_consumer(p.url, "a", false, 2000);
	expect_exit0(pid, "consumer under DMA errors");
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_stats(c, "a", &st), 0);
	assert_true(st.errors > 0);
	assert_true(st.recoveries > 0);
	assert_string_equal(st.state, "idle");
	fpgad_disconnect(c);
	assert_true(harness_log_contains(&p, "engine reset, streaming again"));
	harness_stop_ok(&p);
}

/* Busy-poll on both sides changes when threads sleep, not what arrives. */
static void test_busy_poll(void **state)
{
	char cmd[512], out[8192];
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("a", 0, "block") "poll_us = 200\n", NULL);
	snprintf(cmd, sizeof(cmd), "%s --url %s --json capture a -n 1000 --verify --poll-us 200",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\"verified\": 1000,"));
	snprintf(cmd, sizeof(cmd), "%s --url %s capture a --poll-us lots 2>&1",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "--poll-us: 'lots' is not a number"));
	harness_stop_ok(&p);
}

/*
 * A program built against the fpgad.h before struct fpgad_frame had the
 * sender's times, on this libfpgad.so (fpgad_frame_wait@FPGAD_0): it
 * reads every frame right, and nothing past its smaller frame is written.
 */
static void test_old_program_reads_frames(void **state)
{
	char cmd[512], out[512];
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("a", 0, "block"), NULL);
	snprintf(cmd, sizeof(cmd), "%s %s a 200", harness_bin("itests/old_frame_wait"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	assert_string_equal(out, "ok 200\n");
	harness_stop_ok(&p);
}

/* Every transfer fails: the channel gives up, and a reset brings it back. */
static void test_failed_channel_reset(void **state)
{
	char cmd[512], out[8192];
	struct fpgad_channel_stats st;
	struct fpgad_proc p;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("a", 0, "block"), "FPGAD_SIM_FAULTS=error=1");
	snprintf(cmd, sizeof(cmd), "%s --url %s capture a -n 1 --timeout 1000 2>&1",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_stats(c, "a", &st), 0);
	assert_string_equal(st.state, "failed");
	assert_true(harness_log_contains(&p, "DMA failures in a row; channel FAILED"));
	/* Why, in the stats too: the failures and the last one's error. */
	if (!strstr(st.last_error, " DMA failures in a row, the last: DMA failed ("))
		fail_msg("last_error: '%s'", st.last_error);
	snprintf(cmd, sizeof(cmd), "%s --url %s reset a", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	assert_int_equal(fpgad_channel_stats(c, "a", &st), 0);
	assert_string_equal(st.state, "idle");
	/* Nothing to reset now: said so, by name. */
	assert_int_equal(fpgad_channel_reset(c, "a"), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(c), "channel a is idle, not failed"));
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

static void test_corrupt_frames_caught(void **state)
{
	char cmd[512], out[8192];
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, SMALL_CHANNEL("a", 0, "block"), "FPGAD_SIM_FAULTS=corrupt=50");
	snprintf(cmd, sizeof(cmd), "%s --url %s --json capture a -n 500 --verify 2>/dev/null",
		 harness_bin("fpgactl"), p.url);
	/* A verifying client catches the corrupted frames and says so. */
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	assert_null(strstr(out, "\"errors\": 0,"));
	harness_stop_ok(&p);
}

static void test_remote_cannot_open(void **state)
{
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;
	char conf[128], url[64];

	(void)state;
	snprintf(conf, sizeof(conf), "[exporter]\nargs = --remote tcp://127.0.0.1:0\n");
	harness_start_ok(&p, conf, NULL);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", harness_remote_port(&p));
	assert_int_equal(fpgad_connect(url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "c2h0", 0, &ch), -EACCES);
	assert_int_equal(fpgad_channel_reset(c, "c2h0"), -EACCES);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

static void test_daemon_stop_ends_lease(void **state)
{
	struct fpgad_frame f;
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;
	int r;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "c2h0", 0, &ch), 0);
	assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
	assert_int_equal(fpgad_frame_release(ch, &f), 0);
	harness_stop_ok(&p);
	/* The client learns from the frame plane, without a system call. */
	do {
		r = fpgad_frame_wait(ch, &f, 2000);
		if (r == 0)
			fpgad_frame_release(ch, &f);
	} while (r == 0);
	assert_int_equal(r, -EPIPE);
	assert_true(fpgad_channel_events(ch) & FPGAD_EVENT_DAEMON_GONE);
	fpgad_disconnect(c);
}

static void test_h2c_send_verified_by_card(void **state)
{
	char cmd[512], out[8192];
	struct fpgad_proc p;
	json_error_t jerr;
	json_t *j;

	(void)state;
	harness_start_ok(&p, "[channel out]\ndirection = h2c\nslots = 8\nslot_size = 64K\n"
			 "frame_size = 64K\nmemory = host\n", NULL);
	snprintf(cmd, sizeof(cmd), "%s --url %s --json send out -n 3000",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("invalid JSON: %s\n%s", jerr.text, out);
	assert_int_equal(json_integer_value(json_object_get(j, "frames")), 3000);
	assert_int_equal(json_integer_value(json_object_get(j, "card_good")), 3000);
	assert_int_equal(json_integer_value(json_object_get(j, "card_bad")), 0);
	json_decref(j);
	/* capture on an h2c channel is refused by name, and the reverse. */
	snprintf(cmd, sizeof(cmd), "%s --url %s send c2h0 -n 1 2>&1",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "no channel named 'c2h0'"));
	harness_stop_ok(&p);
}

static void test_h2c_corruption_caught_by_card(void **state)
{
	char cmd[512], out[8192];
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, "[channel out]\ndirection = h2c\n"
			 "slots = 8\nslot_size = 64K\nframe_size = 64K\nmemory = host\n",
			 "FPGAD_SIM_FAULTS=corrupt=10");
	snprintf(cmd, sizeof(cmd), "%s --url %s --json send out -n 500",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "\"card_bad\": 50,"));
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_verify_json),
		cmocka_unit_test(test_several_channels_and_consumers),
		cmocka_unit_test(test_second_opener_busy),
		cmocka_unit_test(test_unknown_channel_and_limits),
		cmocka_unit_test(test_kill9_releases_lease),
		cmocka_unit_test(test_dead_lessee_returns_every_slot),
		cmocka_unit_test(test_held_slot_never_overwritten),
		cmocka_unit_test(test_block_policy_loses_nothing),
		cmocka_unit_test(test_new_lessee_starts_clean),
		cmocka_unit_test(test_shared_readers_see_every_frame),
		cmocka_unit_test(test_newest_skips),
		cmocka_unit_test(test_dma_errors_recover),
		cmocka_unit_test(test_busy_poll),
		cmocka_unit_test(test_failed_channel_reset),
		cmocka_unit_test(test_corrupt_frames_caught),
		cmocka_unit_test(test_remote_cannot_open),
		cmocka_unit_test(test_daemon_stop_ends_lease),
		cmocka_unit_test(test_old_program_reads_frames),
		cmocka_unit_test(test_h2c_send_verified_by_card),
		cmocka_unit_test(test_h2c_corruption_caught_by_card),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("integration-stream", tests, NULL, NULL);
}
