// SPDX-License-Identifier: MIT
/*
 * test_metrics.c - the Prometheus listener end to end: a real fpgad with
 * [metrics], frames streamed through libfpgad, /metrics scraped over a
 * plain socket (counters move, names and types right, promtool agrees),
 * 404 and 405, bad listen URLs stopping the start at their line, a flood
 * of HTTP connections held to [metrics] max_clients without costing the
 * control listeners a place, and SIGHUP on the limit and the URL.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fpgad.h"
#include "harness.h"

#define BODY_MAX (256 * 1024)

/*
 * The families of every scrape of the simulated card; not
 * fpgad_card_aer_errors_total (counter), only where a card has AER
 * (tests/unit/test_metrics.c has it).
 */
static const char *const families[][2] = {
	{ "fpgad_build_info", "gauge" },
	{ "fpgad_uptime_seconds", "gauge" },
	{ "fpgad_clients", "gauge" },
	{ "fpgad_pinned_bytes", "gauge" },
	{ "fpgad_channel_state", "gauge" },
	{ "fpgad_channel_leases", "gauge" },
	{ "fpgad_channel_frames_total", "counter" },
	{ "fpgad_channel_bytes_total", "counter" },
	{ "fpgad_channel_drops_total", "counter" },
	{ "fpgad_channel_stalls_total", "counter" },
	{ "fpgad_channel_errors_total", "counter" },
	{ "fpgad_channel_recoveries_total", "counter" },
	{ "fpgad_channel_integrity_errors_total", "counter" },
	{ "fpgad_channel_dma_duration_seconds", "histogram" },
	{ "fpgad_channel_publish_latency_seconds", "histogram" },
	{ "fpgad_card_info", "gauge" },
	{ "fpgad_channel_mode", "gauge" },
	{ "process_start_time_seconds", "gauge" },
	{ "process_cpu_seconds_total", "counter" },
	{ "process_resident_memory_bytes", "gauge" },
	{ "process_open_fds", "gauge" },
	{ "process_max_fds", "gauge" },
	{ "fpgad_transfers_total", "counter" },
	{ "fpgad_transfer_bytes_total", "counter" },
	{ "fpgad_transfer_errors_total", "counter" },
	{ "fpgad_transfer_refused_total", "counter" },
	{ "fpgad_transfer_latency_seconds", "histogram" },
};

/* fpgad's config with @extra, and the exporter's --metrics with @args. */
static void config_with_args(char *conf, size_t len, const char *args,
			     const char *extra)
{
	snprintf(conf, len, "[exporter]\nargs = --metrics http://127.0.0.1:0/metrics %s\n%s"
		 "[channel cam]\nmemory = host\nslot_size = 64K\nframe_size = 64K\n"
		 "frame_rate = 4000\n[channel out]\ndirection = h2c\nmemory = host\n"
		 "slot_size = 64K\nframe_size = 64K\n", args, extra);
}

static void config_with_metrics(char *conf, size_t len, const char *extra)
{
	config_with_args(conf, len, "", extra);
}

static void take_frames(fpgad_channel *ch, unsigned n)
{
	struct fpgad_frame f;

	for (unsigned i = 0; i < n; i++) {
		assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
	}
}

#define CAM "{channel=\"cam\",direction=\"c2h\"}"
#define CAM_STATE(s) "fpgad_channel_state{channel=\"cam\",direction=\"c2h\",state=\"" s "\"}"

/* Names and types; the counters move while frames stream, and no further. */
static void test_scrape_moves(void **state)
{
	static char out[BODY_MAX];
	int port;
	double frames, bytes, dma, lat, inf;
	struct fpgad_proc p;
	char conf[512], type[160], *m;
	fpgad_channel *ch;
	fpgad_client *c;

	(void)state;
	config_with_metrics(conf, sizeof(conf), "[sim]\nlink = gen3x8\n");
	harness_start_ok(&p, conf, NULL);
	port = harness_metrics_port(&p);
	m = harness_scrape(port, out, sizeof(out));
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		snprintf(type, sizeof(type), "\n# TYPE %s %s\n", families[i][0], families[i][1]);
		if (!strstr(m - 1, type))
			fail_msg("no '%s' in:\n%s", type + 1, m);
		snprintf(type, sizeof(type), "\n# HELP %s ", families[i][0]);
		assert_non_null(strstr(m - 1, type));
	}
	assert_non_null(strstr(m, "fpgad_build_info{version=\"" FPGAD_VERSION_STRING "\"} 1\n"));
	assert_true(harness_sample(m, CAM_STATE("idle")) == 1);
	assert_true(harness_sample(m, CAM_STATE("streaming")) == 0);
	assert_true(harness_sample(m, "fpgad_channel_frames_total" CAM) == 0);
	/* The one client is the exporter itself. */
	assert_true(harness_sample(m, "fpgad_clients") == 1);
	/* Two rings of 8 x 64 KiB in host memory. */
	assert_true(harness_sample(m, "fpgad_pinned_bytes") == 2 * 8 * 65536);
	/* What the sim models, each channel's mode, this process. */
	assert_non_null(strstr(m, "fpgad_card_info{pci_address=\"\",vendor_id=\"\","));
	assert_non_null(strstr(m, ",link=\"PCIe Gen3 x8\",max_link=\"PCIe Gen3 x8\","));
	assert_non_null(strstr(m, ",simulates=\"a DMA card with "));
	/* The sim has no PCIe AER counts: no such family, not zeros. */
	assert_null(strstr(m, "fpgad_card_aer_errors_total"));
	assert_true(harness_sample(m, "fpgad_channel_mode{channel=\"cam\",direction=\"c2h\",memory=\"host\",mode=\"host\"}") == 1);
	assert_true(harness_sample(m, "process_open_fds") > 3);
	assert_true(harness_sample(m, "process_resident_memory_bytes") > 0);
	assert_true(harness_sample(m, "process_start_time_seconds") > 1.7e9);
	assert_true(harness_sample(m, "fpgad_transfers_total") == 0);

	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "cam", 0, &ch), 0);
	take_frames(ch, 200);
	m = harness_scrape(port, out, sizeof(out));
	assert_true(harness_sample(m, CAM_STATE("streaming")) == 1);
	assert_true(harness_sample(m, CAM_STATE("idle")) == 0);
	assert_true(harness_sample(m, "fpgad_channel_leases" CAM) == 1);
	assert_true(harness_sample(m, "fpgad_clients") == 2);
	frames = harness_sample(m, "fpgad_channel_frames_total" CAM);
	bytes = harness_sample(m, "fpgad_channel_bytes_total" CAM);
	assert_true(frames >= 200);
	assert_true(bytes >= frames * 65536);
	dma = harness_sample(m, "fpgad_channel_dma_duration_seconds_count" CAM);
	lat = harness_sample(m, "fpgad_channel_publish_latency_seconds_count" CAM);
	inf = harness_sample(m, "fpgad_channel_publish_latency_seconds_bucket{channel=\"cam\",direction=\"c2h\",le=\"+Inf\"}");
	assert_true(dma >= 200);
	assert_true(lat >= 200);
	assert_true(inf == lat);
	assert_true(harness_sample(m, "fpgad_channel_publish_latency_seconds_sum" CAM) > 0);
	assert_true(harness_sample(m, "fpgad_channel_dma_duration_seconds_sum" CAM) > 0);
	/* The h2c channel saw none of it. */
	assert_true(harness_sample(m, "fpgad_channel_frames_total{channel=\"out\",direction=\"h2c\"}") == 0);

	take_frames(ch, 100);
	m = harness_scrape(port, out, sizeof(out));
	/* 300 frames taken so far; the ring may run a few ahead of them. */
	assert_true(harness_sample(m, "fpgad_channel_frames_total" CAM) >= 300);
	assert_true(harness_sample(m, "fpgad_channel_frames_total" CAM) > frames);
	assert_true(harness_sample(m, "fpgad_channel_publish_latency_seconds_count" CAM) >= 300);
	assert_true(harness_sample(m, "fpgad_channel_publish_latency_seconds_count" CAM) > lat);
	assert_int_equal(fpgad_channel_close(ch), 0);
	fpgad_disconnect(c);

	/* Idle again: the counters stay where they were. */
	for (int i = 0; i < 100; i++) {
		m = harness_scrape(port, out, sizeof(out));
		if (harness_sample(m, CAM_STATE("idle")) == 1 && harness_sample(m, "fpgad_clients") == 1)
			break;
		usleep(20000);
	}
	assert_true(harness_sample(m, CAM_STATE("idle")) == 1);
	assert_true(harness_sample(m, "fpgad_channel_leases" CAM) == 0);
	frames = harness_sample(m, "fpgad_channel_frames_total" CAM);
	usleep(100000);
	m = harness_scrape(port, out, sizeof(out));
	assert_true(harness_sample(m, "fpgad_channel_frames_total" CAM) == frames);
	assert_true(harness_log_contains(&p, "metrics on http://127.0.0.1:"));
	harness_stop_ok(&p);
}

#define FAKE_POD "0f4c7b0e-2d1a-4c3b-9e8f-7a6b5c4d3e2f"
#define FAKE_CID "3a1b2c3d4e5f60718293a4b5c6d7e8f90123456789abcdef0123456789abcdef"

/*
 * A cgroup laid out as the kubelet's cgroupfs driver lays out a pod's
 * container, in the pids hierarchy (v1) or the unified one (v2); its
 * cgroup.procs into @procs.  False (and why) where none can be made.
 */
static bool fake_pod_cgroup(char *dir, size_t dlen, char *procs, size_t plen)
{
	static const char *const roots[] = { "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified",
					     "/sys/fs/cgroup" };
	char cmd[1024];

	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(dir, dlen, "%s/kubepods/besteffort/pod" FAKE_POD "/" FAKE_CID, roots[i]);
		snprintf(procs, plen, "%s/cgroup.procs", dir);
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s' 2>/dev/null", dir);
		if (system(cmd) == 0 && access(procs, W_OK) == 0)
			return true;
	}
	return false;
}

/*
 * Who a lessee is, in an operator's words: a lessee in a pod's container
 * cgroup is named by its process, container and pod in fpgactl clients,
 * the lease's log line and the per-lease series, which count the frames
 * it was given; its series go when its lease ends.
 */
static void test_lease_identity(void **state)
{
	static char out[BODY_MAX];
	char conf[768], dir[512], procs[600], cmd[1200], res[8192], series[512], *m;
	struct fpgad_proc p;
	int ready[2];
	pid_t child;
	char b;
	FILE *f;

	(void)state;
	if (geteuid() != 0 || !fake_pod_cgroup(dir, sizeof(dir), procs, sizeof(procs))) {
		print_message("skipped: a pod's cgroup needs root and a writable cgroup hierarchy\n");
		skip();
	}
	config_with_metrics(conf, sizeof(conf), "");
	harness_start_ok(&p, conf, NULL);
	assert_int_equal(pipe(ready), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* Into the pod's container, then a lessee holding 4 frames. */
		f = fopen(procs, "w");
		if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f) != 0)
			_exit(2);
		dup2(ready[1], 1);
		execl(harness_bin("itests/hold_frame"), "hold_frame", p.url, "cam", "4",
		      (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	assert_int_equal(read(ready[0], &b, 1), 1);	/* "held" */
	m = harness_scrape(harness_metrics_port(&p), out, sizeof(out));
	snprintf(series, sizeof(series),
		 "fpgad_lease_frames_total{channel=\"cam\",direction=\"c2h\",pid=\"%d\","
		 "process=\"hold_frame\",container=\"" FAKE_CID "\",pod=\"" FAKE_POD "\"}",
		 (int)child);
	if (!(harness_sample(m, series) >= 4))
		fail_msg("no %s >= 4 in the scrape", series);
	/* It holds the 4 it took: at least that far behind. */
	memcpy(series, "fpgad_lease_lag_frames", 22);
	memmove(series + 22, strchr(series, '{'), strlen(strchr(series, '{')) + 1);
	if (!(harness_sample(m, series) >= 4))
		fail_msg("no %s >= 4 in the scrape", series);
	assert_non_null(strstr(m, "\nfpgad_lease_dropped_frames_total{channel=\"cam\""));
	snprintf(cmd, sizeof(cmd), "%s --url %s --json clients", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, res, sizeof(res)), 0);
	assert_non_null(strstr(res, "\"container\": \"" FAKE_CID "\""));
	assert_non_null(strstr(res, "\"pod\": \"" FAKE_POD "\""));
	assert_non_null(strstr(res, "\"process\": \"hold_frame\""));
	assert_true(harness_log_contains(&p, "(uid 0, hold_frame in pod " FAKE_POD ", container 3a1b2c3d4e5f)"));

	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	for (int i = 0; i < 100; i++) {
		m = harness_scrape(harness_metrics_port(&p), out, sizeof(out));
		if (!strstr(m, FAKE_POD))
			break;
		usleep(20000);
	}
	assert_null(strstr(m, FAKE_POD));
	close(ready[0]);
	harness_stop_ok(&p);
	snprintf(cmd, sizeof(cmd), "rmdir '%s' 2>/dev/null", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* promtool, Prometheus' own checker, on what fpgad serves while streaming. */
static void test_promtool(void **state)
{
	static char out[BODY_MAX];
	char conf[512], file[256], cmd[512], res[4096];
	int port, rc;
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;
	FILE *f;

	(void)state;
	if (harness_run("command -v promtool", NULL, 0) != 0) {
		print_message("skipped: promtool is not installed (Debian package prometheus; make deps)\n");
		skip();
	}
	config_with_metrics(conf, sizeof(conf), "");
	harness_start_ok(&p, conf, NULL);
	port = harness_metrics_port(&p);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "cam", 0, &ch), 0);
	take_frames(ch, 50);
	snprintf(file, sizeof(file), "%s/scrape.txt", p.dir);
	f = fopen(file, "w");
	assert_non_null(f);
	fputs(harness_scrape(port, out, sizeof(out)), f);
	fclose(f);
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", file);
	rc = harness_run(cmd, res, sizeof(res));
	if (rc != 0 || res[0])
		fail_msg("promtool check metrics (exit %d):\n%s", rc, res);
	harness_stop_ok(&p);
}

/* A transfer's bucket: bound i is 2^(8 + i) ns, 23 above the last (fpgad(8)). */
static unsigned latency_bucket(uint64_t ns)
{
	unsigned i = 0;

	while (i < 23 && ns > 1ull << (8 + i))
		i++;
	return i;
}

/* One transfer of 4 KiB at @addr: its status; its t_end_ns - t_start_ns. */
static int one_transfer(fpgad_client *c, fpgad_buffer *b, unsigned op,
			uint64_t addr, uint64_t *ret_ns)
{
	struct fpgad_xfer x = { .op = op, .buf = b, .card_addr = addr, .length = 4096 };
	int r = fpgad_xfer_batch(c, &x, 1, 10000);

	if (ret_ns)
		*ret_ns = x.t_end_ns - x.t_start_ns;
	return r;
}

/*
 * @op's latency histogram holds the @n transfers that took @ns each, as
 * their completions said: every bucket, the sum to the nanosecond, the count.
 */
static void check_latency(const char *m, const char *op, const uint64_t *ns,
			  unsigned n)
{
	char series[160];
	uint64_t sum = 0;
	unsigned cum = 0;
	double got;

	for (unsigned b = 0; b < 23; b++) {
		for (unsigned i = 0; i < n; i++)
			cum += latency_bucket(ns[i]) == b;
		snprintf(series, sizeof(series),
			 "fpgad_transfer_latency_seconds_bucket{op=\"%s\",le=\"%.10g\"}",
			 op, (double)(1ull << (8 + b)) / 1e9);
		got = harness_sample(m, series);
		if (got != cum)
			fail_msg("%s %.0f, want %u", series, got, cum);
	}
	snprintf(series, sizeof(series),
		 "fpgad_transfer_latency_seconds_bucket{op=\"%s\",le=\"+Inf\"}", op);
	assert_true(harness_sample(m, series) == n);
	snprintf(series, sizeof(series), "fpgad_transfer_latency_seconds_count{op=\"%s\"}", op);
	assert_true(harness_sample(m, series) == n);
	for (unsigned i = 0; i < n; i++)
		sum += ns[i];
	snprintf(series, sizeof(series), "fpgad_transfer_latency_seconds_sum{op=\"%s\"}", op);
	got = harness_sample(m, series);
	if (llround(got * 1e9) != (long long)sum)
		fail_msg("%s %.9f, want %llu ns", series, got, (unsigned long long)sum);
}

/*
 * Card memory transfers: each one done lands in its op's latency bucket,
 * the one its own t_start_ns and t_end_ns say; a refused one is counted by
 * its rule and not timed.
 */
static void test_transfer_latency(void **state)
{
	static char out[BODY_MAX];
	uint64_t rd[3], wr[2];
	struct fpgad_proc p;
	fpgad_buffer *b;
	fpgad_client *c;
	char *m;

	(void)state;
	harness_start_ok(&p, "[exporter]\nargs = --metrics http://127.0.0.1:0/metrics\n", NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_buffer_alloc_host(c, 65536, &b), 0);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(one_transfer(c, b, FPGAD_XFER_WRITE, i * 4096, &wr[i]), 0);
	for (unsigned i = 0; i < 3; i++)
		assert_int_equal(one_transfer(c, b, FPGAD_XFER_READ, i * 4096, &rd[i]), 0);
	/* Past the end of the sim's 2 GiB. */
	assert_int_equal(one_transfer(c, b, FPGAD_XFER_READ, 2ull << 30, NULL), -EINVAL);
	m = harness_scrape(harness_metrics_port(&p), out, sizeof(out));
	assert_true(harness_sample(m, "fpgad_transfers_total") == 6);
	assert_true(harness_sample(m, "fpgad_transfer_bytes_total") == 5 * 4096);
	assert_true(harness_sample(m, "fpgad_transfer_refused_total{rule=\"card range\"}") == 1);
	assert_true(harness_sample(m, "fpgad_transfer_refused_total{rule=\"zero length\"}") == 0);
	check_latency(m, "read", rd, 3);
	check_latency(m, "write", wr, 2);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * Failed transfers by kind, from the sim's faults on the one write
 * engine: its 2nd and 4th transfers fail (io), the 3rd times out, the 6th
 * hangs until fpgad resets the engine (canceled).  Each is timed all the
 * same.  Every c2h engine drives a channel: a read is refused (engine).
 */
static void test_transfer_failures(void **state)
{
	static const int want[] = { 0, -EIO, -ETIMEDOUT, -EIO, 0, -ECANCELED, 0 };
	static char out[BODY_MAX];
	char conf[4096] = "[exporter]\nargs = --metrics http://127.0.0.1:0/metrics\n"
			  "[device]\ndma_timeout_ms = 50\n";
	uint64_t wr[sizeof(want) / sizeof(want[0])];
	struct fpgad_proc p;
	fpgad_buffer *b;
	fpgad_client *c;
	char *m;

	(void)state;
	harness_conf_channels(conf, sizeof(conf), 16);
	harness_start_ok(&p, conf, "FPGAD_SIM_FAULTS=error=2,timeout=3,hang=6");
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_buffer_alloc_host(c, 65536, &b), 0);
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(one_transfer(c, b, FPGAD_XFER_WRITE, i * 4096, &wr[i]), want[i]);
	assert_int_equal(one_transfer(c, b, FPGAD_XFER_READ, 0, NULL), -EOPNOTSUPP);
	m = harness_scrape(harness_metrics_port(&p), out, sizeof(out));
	assert_true(harness_sample(m, "fpgad_transfer_errors_total{kind=\"io\"}") == 2);
	assert_true(harness_sample(m, "fpgad_transfer_errors_total{kind=\"timeout\"}") == 1);
	assert_true(harness_sample(m, "fpgad_transfer_errors_total{kind=\"canceled\"}") == 1);
	assert_true(harness_sample(m, "fpgad_transfer_errors_total{kind=\"other\"}") == 0);
	assert_true(harness_sample(m, "fpgad_transfer_refused_total{rule=\"engine\"}") == 1);
	assert_true(harness_sample(m, "fpgad_transfer_engine_resets_total") == 1);
	assert_true(harness_sample(m, "fpgad_transfers_total") == 8);
	check_latency(m, "write", wr, sizeof(wr) / sizeof(wr[0]));
	check_latency(m, "read", NULL, 0);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* GET on its path only; HEAD from GET; never the control protocol. */
static void test_http_errors(void **state)
{
	static char out[BODY_MAX];
	int port;
	struct fpgad_proc p;
	char conf[512], url[64];
	fpgad_client *c;

	(void)state;
	config_with_metrics(conf, sizeof(conf), "");
	harness_start_ok(&p, conf, NULL);
	port = harness_metrics_port(&p);
	assert_int_equal(harness_http(port, "GET", "/other", out, sizeof(out)), 404);
	assert_int_equal(harness_http(port, "GET", "/", out, sizeof(out)), 404);
	assert_int_equal(harness_http(port, "GET", "/metrics/x", out, sizeof(out)), 404);
	assert_int_equal(harness_http(port, "POST", "/metrics", out, sizeof(out)), 405);
	assert_int_equal(harness_http(port, "PUT", "/metrics", out, sizeof(out)), 405);
	assert_int_equal(harness_http(port, "DELETE", "/metrics", out, sizeof(out)), 405);
	assert_int_equal(harness_http(port, "HEAD", "/metrics", out, sizeof(out)), 200);
	assert_null(strstr(out, "# TYPE"));
	assert_int_equal(harness_http(port, "GET", "/metrics", out, sizeof(out)), 200);
	assert_non_null(strstr(out, "# TYPE fpgad_channel_frames_total counter"));
	/* The control protocol is not spoken there. */
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
	assert_true(fpgad_connect(url, &c) < 0);
	harness_stop_ok(&p);
}

/* fpgad-exporter with @args until it exits: its status, its output in @log. */
static int run_exporter(const char *args, char *log, size_t len)
{
	char cmd[768];

	snprintf(cmd, sizeof(cmd), "timeout 10 %s -u ipc:///nonexistent/fpgad.sock %s 2>&1",
		 harness_bin("fpgad-exporter"), args);
	return harness_run(cmd, log, len);
}

/* A metrics URL the exporter cannot serve stops its start, saying why. */
static void test_bad_listen(void **state)
{
	static const struct {
		const char *url, *what;
	} bad[] = {
		{ "https://127.0.0.1:9110/metrics", "metrics are served over plain http only" },
		{ "http://127.0.0.1/metrics", "has no port" },
		{ "http://127.0.0.1:99999/metrics", "port '99999' is not a number from 0 to 65535" },
		{ "http://127.0.0.1:9110", "has no path after the port" },
		{ "tcp://127.0.0.1:9110", "is not http://ADDRESS:PORT/PATH" },
	};
	char args[256], want[512], log[8192];
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int held, port;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(args, sizeof(args), "--metrics %s", bad[i].url);
		assert_int_equal(run_exporter(args, log, sizeof(log)), 1);
		snprintf(want, sizeof(want), "--metrics '%s'", bad[i].url);
		if (!strstr(log, want) || !strstr(log, bad[i].what))
			fail_msg("the exporter said '%s', not '%s' ... '%s'", log, want, bad[i].what);
		/* --check says the same. */
		snprintf(args, sizeof(args), "--check --metrics %s", bad[i].url);
		assert_int_equal(run_exporter(args, log, sizeof(log)), 1);
		assert_non_null(strstr(log, bad[i].what));
	}

	/* Well-formed, but the port is taken: said, and no start. */
	held = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(held, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(held, 1), 0);
	assert_int_equal(getsockname(held, (struct sockaddr *)&sa, &sl), 0);
	port = ntohs(sa.sin_port);
	snprintf(args, sizeof(args), "--metrics http://127.0.0.1:%d/metrics", port);
	assert_int_equal(run_exporter(args, log, sizeof(log)), 1);
	snprintf(want, sizeof(want), "metrics: cannot listen on http://127.0.0.1:%d/metrics: address already in use",
		 port);
	if (!strstr(log, want))
		fail_msg("the exporter said '%s', not '%s'", log, want);
	close(held);
	/* Nothing to serve is an error too. */
	assert_int_equal(run_exporter("", log, sizeof(log)), 1);
	assert_non_null(strstr(log, "nothing to serve"));
}

/*
 * Idle HTTP connections beyond [metrics] max_clients are closed as they
 * come (from one address here: no limit per address, which test_limits
 * covers); the local socket and the remote listener keep every place.
 */
static void test_flood(void **state)
{
	static char out[BODY_MAX];
	int port, flood[40];
	fpgad_client *a, *b, *r;
	struct fpgad_status *s;
	struct fpgad_proc p;
	char conf[768], extra[256], url[64], want[128];
	int code = -1;

	(void)state;
	/* Two clients and the exporter's one connection. */
	snprintf(extra, sizeof(extra), "[control]\nmax_clients = 3\n");
	config_with_args(conf, sizeof(conf), "--metrics-max-clients 3 --metrics-max-per-address 0 "
			 "--remote tcp://127.0.0.1:0 --remote-max-clients 1", extra);
	harness_start_ok(&p, conf, NULL);
	port = harness_metrics_port(&p);
	for (unsigned i = 0; i < 40; i++)
		flood[i] = harness_tcp_connect(port);
	usleep(200000);
	/* Three of them hold the places: a scrape is turned away. */
	assert_int_equal(harness_http(port, "GET", "/metrics", out, sizeof(out)), -1);
	snprintf(want, sizeof(want), "3 connections on the metrics listener already (--metrics-max-clients 3)");
	assert_true(harness_log_contains(&p, "metrics: refusing tcp 127.0.0.1:"));
	assert_true(harness_log_contains(&p, want));

	/* Every control place is still there. */
	assert_int_equal(fpgad_connect(p.url, &a), 0);
	assert_int_equal(fpgad_connect(p.url, &b), 0);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", harness_remote_port(&p));
	assert_int_equal(fpgad_connect(url, &r), 0);
	assert_int_equal(fpgad_status_get(r, &s), 0);
	assert_int_equal(s->clients, 3);
	fpgad_status_free(s);
	fpgad_disconnect(r);
	fpgad_disconnect(b);
	fpgad_disconnect(a);

	/* The flood gone, scrapes are served again. */
	for (unsigned i = 0; i < 40; i++)
		close(flood[i]);
	for (int i = 0; i < 100 && code != 200; i++) {
		usleep(20000);
		code = harness_http(port, "GET", "/metrics", out, sizeof(out));
	}
	assert_int_equal(code, 200);
	harness_stop_ok(&p);
}

/*
 * The exporter rides through fpgad's restarts: while fpgad is down a
 * scrape gets fpgad_up 0 and no fpgad series (nothing stale), and a
 * remote Status a reply saying fpgad does not answer; once fpgad is back
 * both are served again, with no restart of the exporter.
 */
static void test_fpgad_restart(void **state)
{
	static char out[BODY_MAX];
	struct fpgad_status *s;
	struct fpgad_proc p;
	char conf[768], url[64], *m;
	fpgad_client *r;
	pid_t exporter;
	int port;

	(void)state;
	config_with_args(conf, sizeof(conf), "--remote tcp://127.0.0.1:0", "");
	harness_start_ok(&p, conf, NULL);
	exporter = p.exporter_pid;
	port = harness_metrics_port(&p);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", harness_remote_port(&p));
	m = harness_scrape(port, out, sizeof(out));
	assert_true(harness_sample(m, "fpgad_up") == 1);
	assert_non_null(strstr(m, "\nfpgad_channel_frames_total{"));

	kill(p.pid, SIGKILL);
	assert_true(harness_wait_exit(&p, 5000) >= 0);
	m = harness_scrape(port, out, sizeof(out));
	assert_true(harness_sample(m, "fpgad_up") == 0);
	assert_null(strstr(m, "fpgad_channel_"));
	assert_null(strstr(m, "fpgad_build_info"));
	assert_int_equal(fpgad_connect(url, &r), -ENODEV);

	assert_int_equal(harness_restart(&p, SIGTERM), 0);
	m = NULL;
	for (int i = 0; i < 100; i++) {
		m = harness_scrape(port, out, sizeof(out));
		if (harness_sample(m, "fpgad_up") == 1)
			break;
		usleep(50000);
	}
	assert_true(harness_sample(m, "fpgad_up") == 1);
	assert_non_null(strstr(m, "\nfpgad_channel_frames_total{"));
	assert_int_equal(fpgad_connect(url, &r), 0);
	assert_int_equal(fpgad_status_get(r, &s), 0);
	assert_int_equal(s->pid, (uint32_t)p.pid);
	fpgad_status_free(s);
	fpgad_disconnect(r);
	assert_int_equal(p.exporter_pid, exporter);
	assert_true(harness_log_contains(&p, "fpgad answers again"));
	harness_stop_ok(&p);
}

/* The inodes of the inet sockets in /proc/net/@file, in @set (@n of them). */
static unsigned inet_inodes(const char *file, unsigned long *set, unsigned n, unsigned max)
{
	char path[64], line[512];
	unsigned long inode;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/net/%s", file);
	f = fopen(path, "r");
	if (!f)
		return n;
	while (fgets(line, sizeof(line), f) && n < max)
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %lu", &inode) == 1 && inode)
			set[n++] = inode;
	fclose(f);
	return n;
}

/*
 * fpgad listens on no network socket and holds none, whatever the
 * exporter beside it serves: every socket it has is a local one.
 */
static void test_fpgad_has_no_network_socket(void **state)
{
	static unsigned long inet[65536];
	static const char *const files[] = { "tcp", "tcp6", "udp", "udp6", "raw", "raw6" };
	struct fpgad_proc p;
	char conf[768], dir[64], link[512], target[128];
	unsigned n = 0, sockets = 0;
	struct dirent *e;
	DIR *d;

	(void)state;
	config_with_args(conf, sizeof(conf), "--remote tcp://127.0.0.1:0", "");
	harness_start_ok(&p, conf, NULL);
	assert_int_equal(harness_http(harness_metrics_port(&p), "GET", "/metrics", link,
				      sizeof(link)), 200);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		n = inet_inodes(files[i], inet, n, sizeof(inet) / sizeof(inet[0]));
	assert_true(n > 0);	/* the exporter's listeners are there */
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)p.pid);
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d))) {
		unsigned long inode;
		ssize_t len;

		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		len = readlink(link, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		if (sscanf(target, "socket:[%lu]", &inode) != 1)
			continue;
		sockets++;
		for (unsigned i = 0; i < n; i++)
			if (inet[i] == inode)
				fail_msg("fpgad holds an inet socket (inode %lu)", inode);
	}
	closedir(d);
	assert_true(sockets > 0);	/* its local sockets were looked at */
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scrape_moves),
		cmocka_unit_test(test_promtool),
		cmocka_unit_test(test_lease_identity),
		cmocka_unit_test(test_http_errors),
		cmocka_unit_test(test_transfer_latency),
		cmocka_unit_test(test_transfer_failures),
		cmocka_unit_test(test_bad_listen),
		cmocka_unit_test(test_flood),
		cmocka_unit_test(test_fpgad_restart),
		cmocka_unit_test(test_fpgad_has_no_network_socket),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("integration-metrics", tests, NULL, NULL);
}
