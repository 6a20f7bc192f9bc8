// SPDX-License-Identifier: MIT
/*
 * test_restart.c - what a client sees when fpgad dies or restarts, and
 * every fault kind of the sim with a verifying consumer: -EPIPE promptly
 * whatever the timeout, no handle touching a lease it did not open,
 * riding through a restart with fpgad_set_reconnect(), nothing left
 * behind, a hung engine recovered, corrupt frames flagged, FAILED and
 * repeated RESET events reported once each.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
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

/* A slow source: a waiter really sleeps. */
#define SLOW "[channel slow]\nslots = 4\nslot_size = 64K\nframe_size = 64K\n" \
	"memory = host\nframe_rate = 2\n"
#define FAST "[channel c]\nengine = 1\nslots = 8\nslot_size = 64K\n" \
	"frame_size = 64K\nmemory = host\n"

struct waiter {
	fpgad_channel *ch;
	int result;
	uint64_t returned_ms;
};

static void *wait_forever(void *arg)
{
	struct waiter *w = arg;
	struct fpgad_frame f;
	int r;

	do {
		r = fpgad_frame_wait(w->ch, &f, -1);
		if (r == 0)
			fpgad_frame_release(w->ch, &f);
	} while (r == 0);
	w->result = r;
	w->returned_ms = harness_now_ms();
	return NULL;
}

/* kill -9 of fpgad wakes a consumer asleep with no timeout: -EPIPE. */
static void test_kill9_wakes_waiter(void **state)
{
	struct fpgad_proc p;
	struct waiter w = { 0 };
	fpgad_client *c;
	pthread_t th;
	uint64_t killed;

	(void)state;
	harness_start_ok(&p, SLOW, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "slow", 0, &w.ch), 0);
	assert_int_equal(pthread_create(&th, NULL, wait_forever, &w), 0);
	usleep(200000);
	killed = harness_now_ms();
	kill(p.pid, SIGKILL);
	/* Without the fix this join never returns: the suite's alarm fires. */
	alarm(20);
	assert_int_equal(pthread_join(th, NULL), 0);
	alarm(0);
	assert_int_equal(w.result, -EPIPE);
	print_message("      -EPIPE %llu ms after kill -9\n",
		      (unsigned long long)(w.returned_ms - killed));
	/* Again at once, and every call on the dead channel is safe. */
	{
		struct fpgad_frame f = { .slot = 0 };

		assert_int_equal(fpgad_frame_wait(w.ch, &f, 1000), -EPIPE);
		assert_int_equal(fpgad_frame_release(w.ch, &f), -EINVAL);
	}
	fpgad_channel_close(w.ch);
	fpgad_disconnect(c);
	harness_wait_exit(&p, 1000);
	harness_stop(&p);
}

/* No ring outlives fpgad: nothing of it in /dev/shm, before or after. */
static void test_nothing_left_behind(void **state)
{
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;
	struct dirent *e;
	pid_t pid;
	DIR *d;

	(void)state;
	harness_start_ok(&p, FAST, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "c", 0, &ch), 0);
	pid = p.pid;
	kill(p.pid, SIGKILL);
	harness_wait_exit(&p, 5000);
	d = opendir("/dev/shm");
	if (d) {
		char mine[32];

		/* Names fpgad once used: "fpgad.<pid>.<channel>...". */
		snprintf(mine, sizeof(mine), "fpgad.%d.", (int)pid);
		while ((e = readdir(d)))
			assert_null(strstr(e->d_name, mine));
		closedir(d);
	}
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	harness_stop(&p);
}

/* A handle that outlived its lease cannot end the lease that followed. */
static void test_old_handle_cannot_end_new_lease(void **state)
{
	struct fpgad_status *st;
	struct fpgad_proc p;
	fpgad_channel *old, *ch;
	struct fpgad_frame f;
	fpgad_client *c;
	int r;

	(void)state;
	harness_start_ok(&p, FAST, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "c", 0, &old), 0);
	assert_int_equal(harness_restart(&p, SIGKILL), 0);
	/* The same connection redials the new fpgad by itself. */
	for (int i = 0; i < 100; i++) {
		r = fpgad_channel_open(c, "c", 0, &ch);
		if (r == 0)
			break;
		usleep(50000);
	}
	if (r)
		fail_msg("open after restart: %s: %s", strerror(-r), fpgad_errmsg(c));
	/* Frames published before the kill may still be taken; then EPIPE. */
	while ((r = fpgad_frame_wait(old, &f, 1000)) == 0)
		fpgad_frame_release(old, &f);
	assert_int_equal(r, -EPIPE);
	fpgad_channel_close(old);
	/* The new lease is intact: it still streams and is still leased. */
	assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
	assert_int_equal(fpgad_frame_release(ch, &f), 0);
	assert_int_equal(fpgad_status_get(c, &st), 0);
	assert_int_equal(st->channels[0].leases, 1);
	fpgad_status_free(st);
	assert_int_equal(fpgad_channel_close(ch), 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* With reconnect on, a consumer rides through a restart: -ESTALE once. */
static void ride_through(int sig)
{
	struct fpgad_proc p;
	struct fpgad_frame f;
	fpgad_channel *ch;
	fpgad_client *c;
	unsigned stale = 0, before = 0, after = 0;
	int r;

	harness_start_ok(&p, FAST, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	fpgad_set_reconnect(c, true);
	assert_int_equal(fpgad_channel_open(c, "c", 0, &ch), 0);
	while (before < 100) {
		assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
		before++;
	}
	assert_int_equal(harness_restart(&p, sig), 0);
	while (after < 100) {
		r = fpgad_frame_wait(ch, &f, 10000);
		if (r == -ESTALE) {
			stale++;
			continue;
		}
		assert_int_equal(r, 0);
		/* Once back, every frame is a good frame of the new fpgad. */
		if (stale) {
			after++;
			assert_int_equal(f.length, 64 * 1024);
		}
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
	}
	assert_int_equal(stale, 1);
	assert_int_equal(fpgad_channel_close(ch), 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

static void test_reconnect_after_kill9(void **state)
{
	(void)state;
	ride_through(SIGKILL);
}

static void test_reconnect_after_stop(void **state)
{
	(void)state;
	ride_through(SIGTERM);
}

/*
 * A consumer that only polls (timeout 0) rides through a restart too,
 * though each poll leaves fpgad a millisecond: an OpenChannel whose reply
 * came too late is asked again (and answered from fpgad's cache) by the
 * next poll, never refused as "already open".
 */
static void test_reconnect_polling(void **state)
{
	struct fpgad_proc p;
	struct fpgad_frame f;
	fpgad_channel *ch;
	fpgad_client *c;
	unsigned stale = 0, timeouts = 0;
	uint64_t end;
	int r;

	(void)state;
	/* 512 MiB of fresh ring for each lease: slower than a millisecond. */
	harness_start_ok(&p, "[channel big]\nslots = 64\nslot_size = 8M\n"
			 "frame_size = 64K\nmemory = host\n", NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	fpgad_set_reconnect(c, true);
	assert_int_equal(fpgad_channel_open(c, "big", 0, &ch), 0);
	assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
	assert_int_equal(fpgad_frame_release(ch, &f), 0);
	assert_int_equal(harness_restart(&p, SIGKILL), 0);
	end = harness_now_ms() + 20000;
	for (;;) {
		if (harness_now_ms() > end)
			fail_msg("no frame within 20 s after the restart: %u timeouts, %s",
				 timeouts, fpgad_errmsg(c));
		r = fpgad_frame_wait(ch, &f, 0);
		if (r == -ETIMEDOUT) {
			timeouts++;
			usleep(1000);
			continue;
		}
		if (r == -ESTALE) {
			stale++;
			continue;
		}
		if (r)
			fail_msg("wait(0) after the restart: %s: %s", strerror(-r),
				 fpgad_errmsg(c));
		if (stale)
			break;
		/* A frame of the old ring, published before the kill. */
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
	}
	assert_int_equal(stale, 1);
	assert_int_equal(fpgad_frame_release(ch, &f), 0);
	print_message("      back after %u polls that timed out\n", timeouts);
	assert_int_equal(fpgad_channel_close(ch), 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* fpgactl capture rides through a restart with --reconnect. */
static void test_capture_reconnects(void **state)
{
	char cmd[512], out[4096];
	struct fpgad_proc p;
	FILE *f;

	(void)state;
	harness_start_ok(&p, "[channel c]\nslots = 8\nslot_size = 64K\n"
			 "frame_size = 64K\nmemory = host\nframe_rate = 400\n",
			 NULL);
	snprintf(cmd, sizeof(cmd), "%s --url %s capture c -n 1200 --verify --reconnect 2>&1",
		 harness_bin("fpgactl"), p.url);
	f = popen(cmd, "r");
	assert_non_null(f);
	usleep(1000000);
	assert_int_equal(harness_restart(&p, SIGKILL), 0);
	out[fread(out, 1, sizeof(out) - 1, f)] = '\0';
	assert_int_equal(WEXITSTATUS(pclose(f)), 0);
	assert_non_null(strstr(out, "reconnected"));
	harness_stop_ok(&p);
}

/* Verify @n frames of @name; counts flagged and bad frames. */
static void consume(fpgad_client *c, const char *name, unsigned n,
		    unsigned *ret_bad, unsigned *ret_flagged,
		    unsigned *ret_gaps)
{
	struct fpgad_frame f;
	fpgad_channel *ch;
	uint64_t psize = fpgad_simframe_pattern_size(64 * 1024), off, last = 0;
	void *pattern = malloc(psize);

	assert_non_null(pattern);
	fpgad_simframe_pattern_fill(pattern, psize);
	assert_int_equal(fpgad_channel_open(c, name, 0, &ch), 0);
	*ret_bad = *ret_flagged = *ret_gaps = 0;
	for (unsigned i = 0; i < n; i++) {
		int bad, v;

		assert_int_equal(fpgad_frame_wait(ch, &f, 10000), 0);
		bad = fpgad_simframe_check(f.data, f.length, f.seq, pattern,
					   psize, &off) != 0;
		v = fpgad_frame_verify(ch, &f);
		/* Every bad frame is flagged, and only those. */
		assert_int_equal(bad, !!(f.flags & FPGAD_FRAME_F_ERROR));
		assert_int_equal(v, bad ? -EBADMSG : 0);
		/* Never a duplicate, never out of order. */
		if (i)
			assert_true(f.seq > last);
		*ret_gaps += i && f.seq != last + 1;
		last = f.seq;
		*ret_bad += bad;
		*ret_flagged += !!(f.flags & FPGAD_FRAME_F_ERROR);
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
	}
	assert_int_equal(fpgad_channel_close(ch), 0);
	free(pattern);
}

/*
 * Silent corruption on the card (FPGAD_SIM_FAULTS) is caught by the
 * frame's CRC, and still after fpgad is killed and started again: the
 * restart keeps the environment.
 */
static void test_corruption_flagged(void **state)
{
	struct fpgad_channel_stats st;
	unsigned bad, flagged, gaps;
	struct fpgad_proc p;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, "[channel c]\nslots = 8\nslot_size = 64K\nframe_size = 64K\n"
			 "memory = host\npolicy = block\nintegrity = crc32c\n",
			 "FPGAD_SIM_FAULTS=corrupt=17");
	for (int run = 0; run < 2; run++) {
		assert_int_equal(fpgad_connect(p.url, &c), 0);
		consume(c, "c", 3000, &bad, &flagged, &gaps);
		assert_true(bad > 100);
		assert_int_equal(flagged, bad);
		assert_int_equal(gaps, 0);
		assert_int_equal(fpgad_channel_stats(c, "c", &st), 0);
		assert_true(st.integrity_errors >= bad);
		print_message("      %s: %u of 3000 frames corrupted on the card, all flagged\n",
			      run ? "after a restart" : "first start", bad);
		fpgad_disconnect(c);
		if (!run)
			assert_int_equal(harness_restart(&p, SIGKILL), 0);
	}
	harness_stop_ok(&p);
}

/* A hung engine is reset by fpgad and streaming goes on. */
static void test_hang_recovered(void **state)
{
	struct fpgad_channel_stats st;
	unsigned bad, flagged, gaps;
	struct fpgad_proc p;
	fpgad_client *c;
	uint64_t t0, t1;

	(void)state;
	harness_start_ok(&p, "[device]\ndma_timeout_ms = 200\n"
			 "[channel c]\nslots = 8\nslot_size = 64K\nframe_size = 64K\n"
			 "memory = host\npolicy = block\nintegrity = crc32c\n",
			 "FPGAD_SIM_FAULTS=hang=150");
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	t0 = harness_now_ms();
	consume(c, "c", 1000, &bad, &flagged, &gaps);
	t1 = harness_now_ms();
	assert_int_equal(bad, 0);
	assert_int_equal(fpgad_channel_stats(c, "c", &st), 0);
	assert_true(st.recoveries >= 2);
	assert_string_not_equal(st.state, "failed");
	print_message("      %llu recoveries from hangs in %llu ms (timeout 200 ms)\n",
		      (unsigned long long)st.recoveries,
		      (unsigned long long)(t1 - t0));
	assert_true(harness_log_contains(&p, "none back for"));
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * An OpenChannel whose reply comes too late: fpgad granted it.  Asking
 * again gets that grant (from fpgad's reply cache), not "already open",
 * and the lease works; a different request in between asks afresh.
 */
static void test_open_after_reply_timeout(void **state)
{
	struct fpgad_proc p;
	struct fpgad_frame f;
	fpgad_channel *ch;
	fpgad_client *c;
	int r = -ETIMEDOUT;

	(void)state;
	/* 512 MiB of ring to allocate up front: slower than 1 ms. */
	harness_start_ok(&p, "[channel big]\nslots = 64\nslot_size = 8M\n"
			 "frame_size = 64K\nmemory = host\n", NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	fpgad_set_timeout(c, 1);
	for (int i = 0; i < 20 && r == -ETIMEDOUT; i++)
		r = fpgad_channel_open(c, "big", 0, &ch);
	if (r == 0)
		skip();		/* fpgad answered within 1 ms every time */
	assert_int_equal(r, -ETIMEDOUT);
	fpgad_set_timeout(c, 10000);
	r = fpgad_channel_open(c, "big", 0, &ch);
	if (r)
		fail_msg("open after a reply timeout: %s: %s", strerror(-r),
			 fpgad_errmsg(c));
	assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
	assert_int_equal(fpgad_frame_release(ch, &f), 0);
	assert_int_equal(fpgad_channel_close(ch), 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* Each kind of injected fault: only good or flagged frames get through. */
static void test_every_fault_kind(void **state)
{
	static const char *const faults[] = {
		"FPGAD_SIM_FAULTS=timeout=53", "FPGAD_SIM_FAULTS=error=41",
		"FPGAD_SIM_FAULTS=corrupt=29", "FPGAD_SIM_FAULTS=hang=97",
	};
	unsigned bad, flagged, gaps;

	(void)state;
	for (unsigned i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		struct fpgad_proc p;
		fpgad_client *c;
		char conf[512];

		snprintf(conf, sizeof(conf),
			 "[device]\ndma_timeout_ms = 150\n"
			 "[channel c]\nslots = 8\nslot_size = 64K\nframe_size = 64K\n"
			 "memory = host\npolicy = block\nintegrity = crc32c\n");
		harness_start_ok(&p, conf, faults[i]);
		assert_int_equal(fpgad_connect(p.url, &c), 0);
		consume(c, "c", 600, &bad, &flagged, &gaps);
		assert_int_equal(flagged, bad);
		print_message("      %-28s 600 frames: %u flagged, %u gaps\n",
			      faults[i], flagged, gaps);
		fpgad_disconnect(c);
		harness_stop_ok(&p);
	}
}

/* FAILED reaches the lessee; each reset after it is reported once. */
static void test_failed_and_reset_events(void **state)
{
	struct fpgad_proc p;
	struct fpgad_frame f;
	fpgad_channel *ch;
	fpgad_client *c, *admin;
	uint32_t ev = 0;

	(void)state;
	harness_start_ok(&p, FAST, "FPGAD_SIM_FAULTS=error=1");
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_connect(p.url, &admin), 0);
	assert_int_equal(fpgad_channel_open(c, "c", 0, &ch), 0);
	for (int i = 0; i < 100 && !(ev & FPGAD_EVENT_FAILED); i++) {
		assert_int_equal(fpgad_frame_wait(ch, &f, 50), -ETIMEDOUT);
		ev |= fpgad_channel_events(ch);
	}
	assert_true(ev & FPGAD_EVENT_FAILED);
	assert_true(ev & FPGAD_EVENT_RESET);
	/* Read: nothing new until something happens again. */
	assert_int_equal(fpgad_frame_wait(ch, &f, 100), -ETIMEDOUT);
	assert_int_equal(fpgad_channel_events(ch), 0);
	/* A reset: the channel fails again, and both events come again. */
	assert_int_equal(fpgad_channel_reset(admin, "c"), 0);
	ev = 0;
	for (int i = 0; i < 100 && !(ev & FPGAD_EVENT_FAILED); i++) {
		fpgad_frame_wait(ch, &f, 50);
		ev |= fpgad_channel_events(ch);
	}
	assert_true(ev & FPGAD_EVENT_FAILED);
	assert_true(ev & FPGAD_EVENT_RESET);
	fpgad_channel_close(ch);
	fpgad_disconnect(admin);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * drop-oldest under a slow reader: DROPPED_BEFORE on exactly the frames
 * after a gap, with the gap's size; for two shared readers, each as it
 * saw its own sequence.
 */
static void test_dropped_before_exact(void **state)
{
	struct fpgad_proc p;
	fpgad_channel *slow, *fast;
	fpgad_client *c1, *c2;

	(void)state;
	harness_start_ok(&p, "[channel c]\nslots = 8\nslot_size = 64K\n"
			 "frame_size = 64K\nmemory = host\npolicy = drop-oldest\n"
			 "frame_rate = 4000\n", NULL);
	assert_int_equal(fpgad_connect(p.url, &c1), 0);
	assert_int_equal(fpgad_connect(p.url, &c2), 0);
	assert_int_equal(fpgad_channel_open(c1, "c", FPGAD_OPEN_SHARED, &slow), 0);
	assert_int_equal(fpgad_channel_open(c2, "c", FPGAD_OPEN_SHARED, &fast), 0);
	for (int k = 0; k < 2; k++) {
		fpgad_channel *ch = k ? fast : slow;
		uint64_t last = 0, lost = 0, missing = 0;
		unsigned gaps = 0, flagged = 0;
		struct fpgad_frame f;

		for (unsigned i = 0; i < 400; i++) {
			assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
			if (i && f.seq != last + 1) {
				gaps++;
				missing += f.seq - last - 1;
			}
			if (f.flags & FPGAD_FRAME_F_DROPPED_BEFORE) {
				flagged++;
				assert_true(i > 0);
				assert_int_equal(f.lost, f.seq - last - 1);
			} else {
				assert_int_equal(f.lost, 0);
			}
			lost += f.lost;
			last = f.seq;
			if (!k)
				usleep(1000);	/* the slow one falls behind */
			assert_int_equal(fpgad_frame_release(ch, &f), 0);
		}
		assert_int_equal(flagged, gaps);
		assert_int_equal(lost, missing);
		if (!k)
			assert_true(gaps > 0);
		print_message("      %s reader: %u gaps, %llu frames lost, all flagged\n",
			      k ? "fast" : "slow", gaps, (unsigned long long)missing);
	}
	fpgad_channel_close(slow);
	fpgad_channel_close(fast);
	fpgad_disconnect(c1);
	fpgad_disconnect(c2);
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kill9_wakes_waiter),
		cmocka_unit_test(test_nothing_left_behind),
		cmocka_unit_test(test_old_handle_cannot_end_new_lease),
		cmocka_unit_test(test_reconnect_after_kill9),
		cmocka_unit_test(test_reconnect_after_stop),
		cmocka_unit_test(test_reconnect_polling),
		cmocka_unit_test(test_capture_reconnects),
		cmocka_unit_test(test_corruption_flagged),
		cmocka_unit_test(test_hang_recovered),
		cmocka_unit_test(test_every_fault_kind),
		cmocka_unit_test(test_open_after_reply_timeout),
		cmocka_unit_test(test_failed_and_reset_events),
		cmocka_unit_test(test_dropped_before_exact),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
