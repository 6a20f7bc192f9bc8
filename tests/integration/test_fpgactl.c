// SPDX-License-Identifier: MIT
/*
 * test_fpgactl.c - fpgactl as an operator meets it, against real fpgad
 * processes: refusals of the wrong channel direction, watch when fpgad
 * goes away and on a terminal (its header, q to quit), --version and
 * option errors, version --json against status --json, JSON numbers
 * rounded and missing values null, the progress line on a terminal, and
 * bench's sweep (short: -n 3).
 * Terminals are pseudo-terminals of the test's own (forkpty) or script(1).
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <pty.h>
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
#include "harness.h"

/* A c2h channel whose frames flow while leased, and an h2c one. */
#define TWO_CHANNELS "[channel cam]\nmemory = host\nslot_size = 64K\nframe_size = 16K\n" \
	"frame_rate = 1000\n[channel out]\ndirection = h2c\nmemory = host\nslots = 4\n" \
	"slot_size = 64K\nframe_size = 64K\n"

/* fpgactl --url URL ARGS (a shell command line) into @out; its exit status. */
static int fpgactl(const struct fpgad_proc *p, char *out, size_t len,
		   const char *fmt, ...)
{
	char args[512], cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(args, sizeof(args), fmt, ap);
	va_end(ap);
	snprintf(cmd, sizeof(cmd), "%s --url %s %s", harness_bin("fpgactl"),
		 p ? p->url : "ipc:///nonexistent/fpgad.sock", args);
	return harness_run(cmd, out, len);
}

static json_t *parse_json(const char *out)
{
	json_error_t jerr;
	json_t *j = json_loads(out, 0, &jerr);

	if (!j)
		fail_msg("not JSON (%s): %s", jerr.text, out);
	return j;
}

static unsigned count_lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* capture of an h2c channel is refused in one line, as send of a c2h one. */
static void test_capture_h2c_refused(void **state)
{
	struct fpgad_proc p;
	char out[4096];

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "capture out -n 100 2>&1"), 1);
	assert_string_equal(out, "fpgactl: out is a h2c channel: use send\n");
	assert_int_equal(fpgactl(&p, out, sizeof(out), "send cam -n 1 2>&1"), 1);
	assert_string_equal(out, "fpgactl: cam is a c2h channel: use capture\n");
	/* The refused lease was given back: the channel is free. */
	assert_int_equal(fpgactl(&p, out, sizeof(out), "send out -n 2"), 0);
	harness_stop_ok(&p);
}

/*
 * fpgad killed under watch (on a pipe): watch says "fpgad went away" and
 * exits 1, without waiting out --timeout (60 s: the test would take that
 * long and still see "Timed out" instead).
 */
static void test_watch_fpgad_goes_away(void **state)
{
	char cmd[512], line[512], last[512] = "";
	unsigned rows = 0, gone = 0;
	struct fpgad_proc p;
	FILE *f;
	int status;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	snprintf(cmd, sizeof(cmd), "%s --url %s watch -n 100 --timeout 60000 2>&1",
		 harness_bin("fpgactl"), p.url);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	assert_non_null(strstr(line, " c2h0 state="));
	kill(p.pid, SIGKILL);
	assert_true(harness_wait_exit(&p, 10000) >= 0);
	while (fgets(line, sizeof(line), f)) {
		rows += strstr(line, " c2h0 state=") != NULL;
		gone += strstr(line, "fpgad went away") != NULL;
		snprintf(last, sizeof(last), "%s", line);
	}
	status = pclose(f);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	assert_int_equal(gone, 1);
	assert_non_null(strstr(last, "fpgactl: watch: fpgad went away ("));
	assert_non_null(strstr(last, p.url));
	/* At most the row of an interval sampled before the kill. */
	assert_true(rows <= 1);
	harness_stop(&p);
}

/* Read @fd into @buf (appending at *@have) until @what shows; false at @ms. */
static bool read_until(int fd, char *buf, size_t len, size_t *have,
		       const char *what, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	while (!strstr(buf, what)) {
		uint64_t now = harness_now_ms();
		ssize_t n;

		if (now >= end || *have + 1 >= len)
			return false;
		if (poll(&pfd, 1, (int)(end - now)) <= 0)
			continue;
		n = read(fd, buf + *have, len - 1 - *have);
		if (n <= 0)
			return strstr(buf, what) != NULL;
		*have += (size_t)n;
		buf[*have] = '\0';
	}
	return true;
}

/* The exit status of @pid within @ms; -1 (and the child killed) after. */
static int wait_child(pid_t pid, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;
	int status;

	do {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(10000);
	} while (harness_now_ms() < end);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * On a terminal: the header (version, uptime, clients) and q quits, exit
 * 0; fpgad killed under it: "fpgad went away", exit 1.
 */
static void test_watch_terminal(void **state)
{
	static char screen[65536];
	struct fpgad_proc p;
	size_t have = 0;
	int master, status;
	pid_t pid;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	screen[0] = '\0';
	pid = forkpty(&master, NULL, NULL, NULL);
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(harness_bin("fpgactl"), "fpgactl", "--url", p.url, "watch",
		      (char *)NULL);
		_exit(127);
	}
	/* The table's last row: the header and the table (a line each) are in. */
	if (!read_until(master, screen, sizeof(screen), &have, "\ncam ", 10000) ||
	    !strstr(screen, "q quits")) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("no header with 'q quits' on the terminal:\n%s", screen);
	}
	assert_non_null(strstr(screen, "fpgad " FPGAD_VERSION_STRING " (pid "));
	assert_non_null(strstr(screen, "), up "));
	assert_non_null(strstr(screen, " 1 client"));	/* watch itself */
	assert_non_null(strstr(screen, "CHANNEL "));
	assert_non_null(strstr(screen, "\ncam "));
	assert_int_equal(write(master, "q", 1), 1);
	status = wait_child(pid, 10000);
	if (status == -1)
		fail_msg("watch did not quit on q:\n%s", screen);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(master);

	/* fpgad killed under the table: said below it, exit 1. */
	have = 0;
	screen[0] = '\0';
	pid = forkpty(&master, NULL, NULL, NULL);
	assert_true(pid >= 0);
	if (pid == 0) {
		execl(harness_bin("fpgactl"), "fpgactl", "--url", p.url, "watch",
		      "--timeout", "60000", (char *)NULL);
		_exit(127);
	}
	assert_true(read_until(master, screen, sizeof(screen), &have, "q quits", 10000));
	kill(p.pid, SIGKILL);
	assert_true(harness_wait_exit(&p, 10000) >= 0);
	if (!read_until(master, screen, sizeof(screen), &have, "fpgad went away", 30000)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("watch did not say fpgad went away:\n%s", screen);
	}
	status = wait_child(pid, 10000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1);
	close(master);
	harness_stop(&p);
}

/* --version; an unknown option or a missing argument: one line, exit 2. */
static void test_options(void **state)
{
	char out[4096];

	(void)state;
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "--version"), 0);
	if (strncmp(out, "fpgactl " FPGAD_VERSION_STRING "\nbuild: ", 15 + strlen(FPGAD_VERSION_STRING)) ||
	    !strstr(out, "CUDA, control protocol ") || !strstr(out, ", kernel module ABI 0."))
		fail_msg("--version said:\n%s", out);
	assert_int_equal(count_lines(out), 2);
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "--frobnicate status 2>&1"), 2);
	assert_string_equal(out, "fpgactl: unknown option '--frobnicate' (try 'fpgactl --help')\n");
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "status -x 2>&1"), 2);
	assert_string_equal(out, "fpgactl: unknown option '-x' (try 'fpgactl --help')\n");
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "status --timeout 2>&1"), 2);
	assert_string_equal(out, "fpgactl: option '--timeout' needs an argument (try 'fpgactl --help')\n");
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "status --json=yes 2>&1"), 2);
	assert_string_equal(out, "fpgactl: option '--json' takes no argument (try 'fpgactl --help')\n");
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "frobnicate 2>&1"), 2);
	assert_int_equal(count_lines(out), 1);
	assert_non_null(strstr(out, "(try 'fpgactl --help')"));
	/* --help names --version, for the man page and completion checks. */
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "--help"), 0);
	assert_non_null(strstr(out, "--version"));
}

/*
 * With no fpgad to reach, version still says what fpgactl is and how it
 * was built, then that fpgad is not reachable; exit 1.
 */
static void test_version_offline(void **state)
{
	char out[4096], again[4096];
	json_t *j, *build;

	(void)state;
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "--version"), 0);
	assert_int_equal(fpgactl(NULL, again, sizeof(again), "version 2>/dev/null"), 1);
	assert_string_equal(again, out);
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "version 2>&1 >/dev/null"), 1);
	assert_non_null(strstr(out, "fpgactl: cannot reach fpgad at ipc:///nonexistent/fpgad.sock: "));
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "--json version 2>/dev/null"), 1);
	j = parse_json(out);
	assert_string_equal(json_string_value(json_object_get(j, "client")), fpgad_version());
	assert_true(json_is_null(json_object_get(j, "server")));
	build = json_object_get(j, "build");
	assert_true(json_is_boolean(json_object_get(build, "cuda")));
	assert_non_null(strstr(json_string_value(json_object_get(build, "kernel_module_abi")), "0."));
	json_decref(j);
}

/*
 * help and COMMAND --help: fpgactl's usage, or the command's own with the
 * options it takes and no other; an unknown command: exit 2.
 */
static void test_help(void **state)
{
	static char out[16384], all[16384];

	(void)state;
	assert_int_equal(fpgactl(NULL, all, sizeof(all), "--help"), 0);
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "help"), 0);
	assert_string_equal(out, all);
	assert_non_null(strstr(all, "\n  help [COMMAND] "));
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "capture --help"), 0);
	if (strstr(out, "Usage: fpgactl [OPTION]... capture CHANNEL\ntake -n frames") != out)
		fail_msg("capture --help said:\n%s", out);
	assert_non_null(strstr(out, "\n  --verify "));
	assert_non_null(strstr(out, "\n  --timeout MS "));
	assert_null(strstr(out, "--interval"));
	assert_null(strstr(out, "Commands:"));
	assert_int_equal(fpgactl(NULL, all, sizeof(all), "help capture"), 0);
	assert_string_equal(all, out);
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "watch --help"), 0);
	assert_non_null(strstr(out, "\n  --interval MS "));
	assert_null(strstr(out, "--verify"));
	assert_int_equal(fpgactl(NULL, out, sizeof(out), "help nosuch 2>&1"), 2);
	assert_string_equal(out, "fpgactl: unknown command 'nosuch' (try 'fpgactl --help')\n");
}

/*
 * watch --interval MS: -n intervals of MS each, the table's header saying
 * how often; an interval out of range is a usage error.
 */
static void test_watch_interval(void **state)
{
	struct fpgad_proc p;
	char out[65536], cmd[768];

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "watch -n 3 --interval 100 cam"), 0);
	assert_int_equal(count_lines(out), 3);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "watch --interval 5 2>&1"), 2);
	assert_string_equal(out, "fpgactl: --interval: '5' is not a number of ms from 10 to 3600000\n");
	if (system("command -v script >/dev/null 2>&1") == 0) {
		snprintf(cmd, sizeof(cmd), "script -qfec '%s --url %s watch -n 1 --interval 250' /dev/null",
			 harness_bin("fpgactl"), p.url);
		assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
		if (!strstr(out, ", every 0.25 s"))
			fail_msg("watch's header does not say its interval:\n%s", out);
	}
	harness_stop_ok(&p);
}

/*
 * clients names each process and the ring memory its leases pin, in a
 * unit that shows a small ring (cam's 8 slots of 64 KiB: 512 KiB).
 */
static void test_clients(void **state)
{
	struct fpgad_proc p;
	char out[16384], want[64];
	fpgad_channel *ch;
	fpgad_client *c;
	const char *row;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "cam", 0, &ch), 0);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "clients"), 0);
	snprintf(want, sizeof(want), "\n%-8u ", (unsigned)getpid());
	row = strstr(out, want);
	if (!row || !strstr(row, " test_fpgactl ") || !strstr(row, " 512 KiB ") ||
	    !strstr(row, " cam\n"))
		fail_msg("clients shows no row of this process's name and pinned bytes:\n%s", out);
	assert_non_null(strstr(out, " fpgactl "));	/* itself */
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * A channel with integrity = none checks no CRC: stats says "integrity
 * none" and no count of frames that failed one; with integrity = crc32c
 * it counts them.  --json names the setting.
 */
static void test_stats_integrity(void **state)
{
	struct fpgad_proc p;
	char out[16384];
	json_t *j;

	(void)state;
	harness_start_ok(&p, "[channel cam]\nmemory = host\nslot_size = 64K\n"
			 "frame_size = 16K\nintegrity = none\n[channel crc]\n"
			 "memory = host\nslot_size = 64K\nframe_size = 16K\n"
			 "engine = 1\nintegrity = crc32c\n", NULL);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "stats cam"), 0);
	if (strstr(out, "failed their CRC") || !strstr(out, "\nintegrity   none\n"))
		fail_msg("stats of an integrity = none channel said:\n%s", out);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "stats crc"), 0);
	if (!strstr(out, "\nintegrity   0 frames failed their CRC"))
		fail_msg("stats of an integrity = crc32c channel said:\n%s", out);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json stats cam"), 0);
	j = parse_json(out);
	assert_string_equal(json_string_value(json_object_get(j, "integrity")), "none");
	json_decref(j);
	harness_stop_ok(&p);
}

/* version --json names fpgad's version and pid as status --json does. */
static void test_version_json(void **state)
{
	struct fpgad_proc p;
	char out[65536];
	json_t *v, *s, *srv;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json version"), 0);
	v = parse_json(out);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json status"), 0);
	s = parse_json(out);
	assert_string_equal(json_string_value(json_object_get(v, "client")), fpgad_version());
	srv = json_object_get(v, "server");
	assert_true(json_is_object(srv));
	assert_string_equal(json_string_value(json_object_get(srv, "version")),
			    json_string_value(json_object_get(s, "version")));
	assert_int_equal(json_integer_value(json_object_get(srv, "pid")),
			 json_integer_value(json_object_get(s, "pid")));
	assert_string_equal(json_string_value(json_object_get(srv, "software")),
			    "fpgad " FPGAD_VERSION_STRING);
	assert_int_equal(json_integer_value(json_object_get(v, "protocol")),
			 FPGAD_PROTOCOL_VERSION);
	json_decref(v);
	json_decref(s);
	harness_stop_ok(&p);
}

/*
 * status and topo show a network channel's endpoint and its sender's
 * packets beside the card channels, as a table and (--json) as the
 * channel's "net" object, the one stats --json gives; a card channel has
 * none.
 */
static void test_network_rows(void **state)
{
	struct fpgad_proc p;
	char out[65536], listen[64];
	json_t *st, *j, *ch;
	size_t i;

	(void)state;
	harness_start_ok(&p, "[channel cam]\nmemory = host\nslots = 4\n"
			 "[channel net0]\nsource = udp\nlisten = 127.0.0.1:0\n"
			 "sender = 127.0.0.1\nsender_control = none\nmtu = 9000\n"
			 "qpn = 0x4d2\nmemory = host\nslots = 4\nslot_size = 64K\n"
			 "frame_size = 60000\n", NULL);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json stats net0"), 0);
	st = parse_json(out);
	snprintf(listen, sizeof(listen), "%s",
		 json_string_value(json_object_get(json_object_get(st, "net"), "listen")));
	assert_non_null(strstr(listen, "127.0.0.1:"));

	assert_int_equal(fpgactl(&p, out, sizeof(out), "status"), 0);
	assert_non_null(strstr(out, "NETWORK"));
	assert_non_null(strstr(out, "INCOMPLETE"));
	assert_non_null(strstr(out, listen));
	assert_non_null(strstr(out, "0x4d2"));
	assert_int_equal(fpgactl(&p, out, sizeof(out), "topo"), 0);
	assert_non_null(strstr(out, listen));

	for (int topo = 0; topo < 2; topo++) {
		assert_int_equal(fpgactl(&p, out, sizeof(out), topo ? "--json topo" :
					 "--json status"), 0);
		j = parse_json(out);
		json_array_foreach(json_object_get(j, "channels"), i, ch) {
			json_t *net = json_object_get(ch, "net");

			if (strcmp(json_string_value(json_object_get(ch, "name")), "net0")) {
				assert_null(net);
				continue;
			}
			assert_true(json_equal(net, json_object_get(st, "net")));
			assert_string_equal(json_string_value(json_object_get(net, "source")), "udp");
			assert_string_equal(json_string_value(json_object_get(net, "interface")), "lo");
			assert_int_equal(json_integer_value(json_object_get(net, "mtu")), 9000);
		}
		json_decref(j);
	}
	json_decref(st);
	harness_stop_ok(&p);
}

/*
 * The largest count of significant digits of a number with a fraction
 * in @text ("1380000000.0": 3, "0.0004123": 4, "999.9876543": 10).
 */
static int most_digits(const char *text)
{
	int most = 0;

	for (const char *s = text; *s; s++) {
		const char *start = s, *end;
		int n = 0;

		if (!isdigit((unsigned char)*s) || (s > text && (isdigit((unsigned char)s[-1]) ||
								  s[-1] == '.')))
			continue;
		end = s + strspn(s, "0123456789");
		if (*end != '.' || !isdigit((unsigned char)end[1]))
			continue;
		end += 1 + strspn(end + 1, "0123456789");
		while (start < end && (*start == '0' || *start == '.'))
			start++;
		while (end > start && (end[-1] == '0' || end[-1] == '.'))
			end--;
		for (const char *q = start; q < end; q++)
			n += isdigit((unsigned char)*q) != 0;
		if (n > most)
			most = n;
		s = end > s ? end - 1 : s;
	}
	return most;
}

/* Measured numbers in at most 4 significant digits; unknown ones null. */
static void test_json_numbers(void **state)
{
	struct fpgad_proc p;
	char out[65536];
	json_t *j, *end, *setup;

	(void)state;
	assert_int_equal(most_digits("x 1380000000.0, 0.0004123 12"), 4);
	assert_int_equal(most_digits("\"fps\": 999.9876543"), 10);
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json capture cam -n 50"), 0);
	j = parse_json(out);
	assert_true(json_real_value(json_object_get(j, "fps")) > 0);
	assert_true(json_is_real(json_object_get(json_object_get(j, "wakeup_latency_us"), "p50")));
	/* How the lease was set up: a host ring has no GPU export and no GPU map. */
	setup = json_object_get(j, "setup");
	assert_string_equal(json_string_value(json_object_get(setup, "gpu_export")), "");
	assert_true(json_real_value(json_object_get(setup, "lease_ms")) > 0);
	assert_true(json_real_value(json_object_get(setup, "first_map_ms")) == 0);
	if (most_digits(out) > 4)
		fail_msg("capture --json prints more than 4 significant digits:\n%s", out);
	json_decref(j);

	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json send out -n 8"), 0);
	if (most_digits(out) > 4)
		fail_msg("send --json prints more than 4 significant digits:\n%s", out);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json stats cam"), 0);
	if (most_digits(out) > 4)
		fail_msg("stats --json prints more than 4 significant digits:\n%s", out);
	j = parse_json(out);
	assert_true(json_is_null(json_object_get(j, "last_error")));	/* none yet */
	json_decref(j);

	/* The simulated card has no NUMA node and no IOMMU group: null, not -1. */
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json topo"), 0);
	j = parse_json(out);
	end = json_object_get(j, "card_end");
	assert_true(json_is_null(json_object_get(end, "numa_node")));
	assert_true(json_is_null(json_object_get(end, "iommu_group")));
	json_decref(j);
	harness_stop_ok(&p);
}

/*
 * capture -n of 1500 frames at 1000 frames/s runs 1.5 s: on a terminal
 * a progress line with the time left, ending at 1500 of 1500; on a pipe
 * nothing of it.
 */
static void test_progress(void **state)
{
	struct fpgad_proc p;
	char cmd[768], out[65536];

	(void)state;
	if (system("command -v script >/dev/null 2>&1") != 0) {
		print_message("progress line not checked: no script(1)\n");
		skip();
	}
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	snprintf(cmd, sizeof(cmd), "script -qfec '%s --url %s capture cam -n 1500' /dev/null",
		 harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	if (!strstr(out, "] 100% 1500 frames of 1500 frames, ") || !strstr(out, "ETA"))
		fail_msg("no progress line on the terminal:\n%s", out);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "capture cam -n 1500 2>&1"), 0);
	assert_null(strstr(out, "ETA"));
	assert_null(strstr(out, "100%"));
	harness_stop_ok(&p);
}

/*
 * send, validate and bench have the progress line too: send -n 6000 of
 * 64 KiB over the sim's Gen1 x1 link runs about 2 s, validate's and
 * bench's capture of 1500 frames at 1000 frames/s 1.5 s (bench's card
 * memory sweep kept short by 64 KiB of card memory).
 */
static void test_progress_send_validate_bench(void **state)
{
	static const char *const runs[][2] = {
		{ "send out -n 6000", "] 100% 6000 frames of 6000 frames, " },
		{ "validate -n 1500", "] 100% 1500 frames of 1500 frames, " },
		{ "bench -n 1500 cam", "] 100% 1500 frames of 1500 frames, " },
	};
	static char out[1 << 18];
	struct fpgad_proc p;
	char cmd[768];

	(void)state;
	if (system("command -v script >/dev/null 2>&1") != 0) {
		print_message("progress line not checked: no script(1)\n");
		skip();
	}
	harness_start_ok(&p, "[sim]\nlink = gen1x1\ncard_memory = 64K\n" TWO_CHANNELS, NULL);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		int rc;

		snprintf(cmd, sizeof(cmd), "script -qfec '%s --url %s %s' /dev/null",
			 harness_bin("fpgactl"), p.url, runs[i][0]);
		rc = harness_run(cmd, out, sizeof(out));
		/*
		 * validate may FAIL its bandwidth check on a loaded machine
		 * (the sim's link is paced by the CPU): its progress line is
		 * what is checked here.
		 */
		if (rc != 0 && strncmp(runs[i][0], "validate", 8))
			fail_msg("%s: exit %d:\n%s", runs[i][0], rc, out);
		if (!strstr(out, runs[i][1]) || !strstr(out, "ETA"))
			fail_msg("%s: no progress line on the terminal:\n%s", runs[i][0], out);
	}
	harness_stop_ok(&p);
}

/* A c2h channel that never delivers: a network source with no sender. */
#define SILENT_CHANNEL "[channel net0]\nsource = udp\nlisten = 127.0.0.1:0\n" \
	"sender = 127.0.0.1\nsender_control = none\nmemory = host\nslots = 4\n" \
	"slot_size = 64K\nframe_size = 60000\n"

/*
 * validate and bench print each row once measured, not all at the end:
 * what was measured before the silent channel reaches the pipe while they
 * still wait for its first frame (for 10 minutes), then they are killed.
 */
static void test_rows_as_measured(void **state)
{
	static const char *const runs[][2] = {
		{ "validate", "PASS  capture cam " },
		{ "bench", "\nwrite       8 MiB        2 " },
	};
	static char out[1 << 16];
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS SILENT_CHANNEL, NULL);
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		int fds[2], status;
		size_t have = 0;
		pid_t pid;

		assert_int_equal(pipe(fds), 0);
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			dup2(fds[1], STDOUT_FILENO);
			close(fds[0]);
			close(fds[1]);
			execl(harness_bin("fpgactl"), "fpgactl", "--url", p.url, runs[i][0],
			      "-n", "2", "--timeout", "600000", (char *)NULL);
			_exit(127);
		}
		close(fds[1]);
		out[0] = '\0';
		if (!read_until(fds[0], out, sizeof(out), &have, runs[i][1], 30000)) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fail_msg("%s: no '%s' while it waits for net0:\n%s", runs[i][0],
				 runs[i][1], out);
		}
		/* Still waiting for net0's first frame: it had not finished. */
		assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(fds[0]);
	}
	harness_stop_ok(&p);
}

/*
 * Every transfer fails (FPGAD_SIM_FAULTS=error=1): capture and send stop naming
 * the channel FAILED, with its counters and what to do, not the timeout;
 * validate then skips them saying they failed, by no count of processes.
 */
static void test_failed_channel_named(void **state)
{
	static char out[65536];
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, "FPGAD_SIM_FAULTS=error=1");
	assert_int_equal(fpgactl(&p, out, sizeof(out), "capture cam -n 1 --timeout 2000 2>&1"), 1);
	if (strncmp(out, "fpgactl: capture cam: after 0 frames: channel cam is FAILED (", 61) ||
	    !strstr(out, " recoveries): read why in fpgad's log (journalctl -u fpgad), then fpgactl reset cam\n"))
		fail_msg("capture of a FAILED channel said:\n%s", out);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "send out -n 100 --timeout 2000 2>&1"), 1);
	if (strncmp(out, "fpgactl: send out: ", 19) || !strstr(out, "channel out is FAILED (") ||
	    !strstr(out, "then fpgactl reset out\n"))
		fail_msg("send of a FAILED channel said:\n%s", out);

	/* stats names the last error; so does validate's channel check. */
	assert_int_equal(fpgactl(&p, out, sizeof(out), "stats cam"), 0);
	if (!strstr(out, "\nlast error  5 DMA failures in a row, the last: DMA failed ("))
		fail_msg("stats of a FAILED channel said:\n%s", out);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json stats cam"), 0);
	{
		json_t *j = parse_json(out);

		assert_non_null(strstr(json_string_value(json_object_get(j, "last_error")),
				       "DMA failures in a row"));
		json_decref(j);
	}
	assert_int_equal(fpgactl(&p, out, sizeof(out), "validate 2>&1"), 1);
	if (!strstr(out, "FAIL  channel cam          c2h, channel cam is FAILED (5 DMA failures in a row, the last: ") ||
	    !strstr(out, " the channel is FAILED (channel cam above), not tried: fpgactl reset cam first\n") ||
	    !strstr(out, " the channel is FAILED (channel out above), not tried: fpgactl reset out first\n") ||
	    strstr(out, "by 0 processes"))
		fail_msg("validate of FAILED channels said:\n%s", out);
	harness_stop_ok(&p);
}

/*
 * validate over the remote listener (fpgad-exporter, read-only): the
 * checks that lease or transfer are skipped, saying why; nothing fails.
 */
static void test_validate_remote(void **state)
{
	static char out[65536], cmd[512];
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS "[exporter]\nargs = --remote tcp://127.0.0.1:0\n", NULL);
	snprintf(cmd, sizeof(cmd), "%s --url tcp://127.0.0.1:%d validate 2>&1",
		 harness_bin("fpgactl"), harness_remote_port(&p));
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	for (const char *const *c = (const char *const[]){ "capture cam", "send out",
			"card memory", "dma read", "dma write", NULL }; *c; c++) {
		char line[128];

		snprintf(line, sizeof(line), "SKIP  %-20s needs fpgad's local socket: the remote listener is read-only (run validate on fpgad's host)\n", *c);
		if (!strstr(out, line))
			fail_msg("no '%s' over the remote listener:\n%s", line, out);
	}
	assert_non_null(strstr(out, "PASS  channel cam "));
	assert_non_null(strstr(out, "validate: 4 passed, 0 failed, 8 skipped\n"));
	harness_stop_ok(&p);
}

/* The histogram's counts of one bench row add up to its count. */
static void check_bench_row(json_t *row, json_int_t size, json_int_t count)
{
	json_t *hist = json_object_get(row, "histogram"), *lat = json_object_get(row, "latency_us");
	json_int_t sum = 0;
	size_t i;
	json_t *b;

	assert_int_equal(json_integer_value(json_object_get(row, "size")), size);
	assert_int_equal(json_integer_value(json_object_get(row, "count")), count);
	assert_true(json_real_value(json_object_get(row, "gbps")) > 0);
	assert_true(json_real_value(json_object_get(lat, "p50")) <=
		    json_real_value(json_object_get(lat, "p99")));
	json_array_foreach(hist, i, b)
		sum += json_integer_value(json_object_get(b, "count"));
	assert_int_equal(sum, count);
}

/*
 * bench: what it ran on (fpgad, the card and its link, the mode), card
 * memory read and write at every power of two from 4 KiB to 8 MiB, then
 * the c2h channel and the h2c one (sent as fpgactl send does, the card
 * verifying each frame); a leased channel is skipped, said so; the card
 * keeps its bytes.
 */
static void test_bench(void **state)
{
	static unsigned char before[4096], after[4096];
	struct fpgad_proc p;
	static char out[1 << 18];
	json_t *j, *card, *streams;
	fpgad_client *c;
	fpgad_channel *ch;
	unsigned k = 0;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	for (size_t i = 0; i < sizeof(before); i++)
		before[i] = (unsigned char)(i * 7 + 3);
	{
		fpgad_buffer *b;

		assert_int_equal(fpgad_connect(p.url, &c), 0);
		assert_int_equal(fpgad_buffer_alloc_host(c, sizeof(before), &b), 0);
		memcpy(fpgad_buffer_data(b), before, sizeof(before));
		assert_int_equal(fpgad_write(b, 0, 0, sizeof(before), 5000), 0);
		fpgad_buffer_unregister(b);
	}
	assert_int_equal(fpgactl(&p, out, sizeof(out), "--json bench -n 3"), 0);
	j = parse_json(out);
	/* host, then GPU memory in gpudirect and bounce: measured or skipped. */
	assert_int_equal(json_array_size(json_object_get(j, "card_memory")), 3);
	for (size_t m = 0; m < 3; m++) {
		static const char *const modes[] = { "host", "gpudirect", "bounce" };

		card = json_array_get(json_object_get(j, "card_memory"), m);
		assert_string_equal(json_string_value(json_object_get(card, "mode")), modes[m]);
		if (m && json_is_string(json_object_get(card, "skipped"))) {
			print_message("bench %s: skipped (%s)\n", modes[m],
				      json_string_value(json_object_get(card, "skipped")));
			continue;
		}
		assert_int_equal(json_array_size(json_object_get(card, "read")), 12);
		assert_int_equal(json_array_size(json_object_get(card, "write")), 12);
		k = 0;
		for (json_int_t size = 4096; size <= (8 << 20); size *= 2, k++) {
			check_bench_row(json_array_get(json_object_get(card, "read"), k), size, 3);
			check_bench_row(json_array_get(json_object_get(card, "write"), k), size, 3);
		}
	}
	assert_string_equal(json_string_value(json_object_get(j, "card")), "simulated");
	assert_string_equal(json_string_value(json_object_get(j, "link")), "unlimited");
	assert_string_equal(json_string_value(json_object_get(j, "mode")), "host");
	assert_int_equal(json_integer_value(json_object_get(j, "pid")), p.pid);
	streams = json_object_get(j, "streaming");
	assert_int_equal(json_array_size(streams), 2);
	for (size_t i = 0; i < 2; i++) {
		json_t *run = json_array_get(streams, i);

		assert_string_equal(json_string_value(json_object_get(run, "channel")),
				    i ? "out" : "cam");
		assert_string_equal(json_string_value(json_object_get(run, "direction")),
				    i ? "h2c" : "c2h");
		check_bench_row(run, i ? 65536 : 16384, 3);
	}
	/* The h2c row is the card's: every frame verified by its sink. */
	assert_int_equal(json_integer_value(json_object_get(json_array_get(streams, 1), "card_good")), 3);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(streams, 1), "card_bad")), 0);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(streams, 1), "lost")), 0);
	json_decref(j);
	{
		fpgad_buffer *b;

		assert_int_equal(fpgad_buffer_alloc_host(c, sizeof(after), &b), 0);
		assert_int_equal(fpgad_read(b, 0, 0, sizeof(after), 5000), 0);
		memcpy(after, fpgad_buffer_data(b), sizeof(after));
		fpgad_buffer_unregister(b);
		assert_memory_equal(after, before, sizeof(before));
	}

	/* A channel fpgad does not have: refused, before any sweep, naming
	 * what there is. */
	assert_int_equal(fpgactl(&p, out, sizeof(out), "bench -n 3 nosuch 2>&1"), 1);
	assert_non_null(strstr(out, "bench: no channel 'nosuch' (fpgad has cam, out)"));
	assert_null(strstr(out, "card memory"));
	/* The h2c channel named alone: its row, no c2h section. */
	assert_int_equal(fpgactl(&p, out, sizeof(out), "bench -n 3 out 2>&1"), 0);
	if (!strstr(out, "\nstreaming (h2c), as fpgactl send: a free buffer to the frame's submit, the card verifying each\n"
			 "CHANNEL     FRAME   FRAMES      GB/S    P50(us)    P99(us)\nout        64 KiB        3 ") ||
	    !strstr(out, "\nout: the card verified 3, rejected 0, lost 0\n") ||
	    !strstr(out, "latency of out (host) at 64 KiB (us):\n") || strstr(out, "streaming (c2h)"))
		fail_msg("bench out said:\n%s", out);

	/* Leased by another: skipped, and said so; text with its histograms. */
	assert_int_equal(fpgad_channel_open(c, "cam", 0, &ch), 0);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "bench -n 2"), 0);
	assert_non_null(strstr(out, "\nread        4 KiB        2 "));
	assert_non_null(strstr(out, "\nwrite       8 MiB        2 "));
	assert_non_null(strstr(out, "card memory, host (host buffer), one transfer at a time\n"));
	assert_non_null(strstr(out, "latency of read (host) at 8 MiB (us):\n"));
	assert_non_null(strstr(out, "cam: skipped (leased by 1 process)"));
	assert_non_null(strstr(out, "\nout        64 KiB        2 "));
	/* What it ran on, first: fpgad, the card and its link, the mode. */
	if (strncmp(out, "bench: fpgad " FPGAD_VERSION_STRING " (pid ", 19 + strlen(FPGAD_VERSION_STRING)) ||
	    !strstr(out, "\ncard:  simulated: a DMA card ") || !strstr(out, "\nmode:  host"))
		fail_msg("bench does not say what it ran on:\n%s", out);
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * bench's h2c row is what the card made of the frames: with every second
 * transfer corrupted on the way (FPGAD_SIM_FAULTS), half are rejected,
 * said so, and bench fails as fpgactl send does.
 */
static void test_bench_h2c_rejected(void **state)
{
	static char out[1 << 16];
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, "FPGAD_SIM_FAULTS=corrupt=2");
	assert_int_equal(fpgactl(&p, out, sizeof(out), "bench -n 4 out 2>&1"), 1);
	if (!strstr(out, "\nout: the card verified 2, rejected 2, lost 0\n"))
		fail_msg("bench out with corrupted transfers said:\n%s", out);
	harness_stop_ok(&p);
}

/* read of no bytes is refused, saying so, and writes no file. */
static void test_read_zero_length(void **state)
{
	struct fpgad_proc p;
	char out[4096], file[256];

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	snprintf(file, sizeof(file), "%s/zero.bin", p.dir);
	assert_int_equal(fpgactl(&p, out, sizeof(out), "read 0 0 %s 2>&1", file), 2);
	assert_string_equal(out, "fpgactl: read: LEN is 0: nothing to read (give the number of bytes)\n");
	assert_int_equal(access(file, F_OK), -1);
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_h2c_refused),
		cmocka_unit_test(test_watch_fpgad_goes_away),
		cmocka_unit_test(test_watch_terminal),
		cmocka_unit_test(test_options),
		cmocka_unit_test(test_version_json),
		cmocka_unit_test(test_json_numbers),
		cmocka_unit_test(test_progress),
		cmocka_unit_test(test_bench),
		cmocka_unit_test(test_bench_h2c_rejected),
		cmocka_unit_test(test_network_rows),
		cmocka_unit_test(test_read_zero_length),
		cmocka_unit_test(test_progress_send_validate_bench),
		cmocka_unit_test(test_rows_as_measured),
		cmocka_unit_test(test_failed_channel_named),
		cmocka_unit_test(test_validate_remote),
		cmocka_unit_test(test_version_offline),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_watch_interval),
		cmocka_unit_test(test_clients),
		cmocka_unit_test(test_stats_integrity),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("integration-fpgactl", tests, NULL, NULL);
}
