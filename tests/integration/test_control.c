// SPDX-License-Identifier: MIT
/*
 * test_control.c - the control plane end to end: real fpgad processes,
 * libfpgad, fpgactl, raw malformed and oversize bytes, and the sd_notify
 * sequence through a fake NOTIFY_SOCKET.
 */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <jansson.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "client_internal.h"
#include "fpgad.h"
#include "fpgad.pb-c.h"
#include "harness.h"

static json_t *fpgactl_json(const struct fpgad_proc *p, const char *args, int *ret_rc)
{
	char cmd[512], out[65536];
	json_error_t jerr;
	json_t *j;

	snprintf(cmd, sizeof(cmd), "%s --url %s --json %s", harness_bin("fpgactl"),
		 p->url, args);
	*ret_rc = harness_run(cmd, out, sizeof(out));
	j = json_loads(out, 0, &jerr);
	if (!j && *ret_rc == 0)
		fail_msg("fpgactl --json %s printed invalid JSON: %s\n%s", args,
			 jerr.text, out);
	return j;
}

static void test_fpgactl_json_status(void **state)
{
	struct fpgad_proc p;
	json_t *j, *ch;
	int rc;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	j = fpgactl_json(&p, "status", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(json_string_value(json_object_get(j, "version")),
			    fpgad_version());
	assert_int_equal(json_integer_value(json_object_get(j, "pid")), p.pid);
	assert_true(json_is_integer(json_object_get(j, "uptime_ms")));
	assert_non_null(strstr(json_string_value(json_object_get(j, "backend")), "sim"));
	ch = json_array_get(json_object_get(j, "channels"), 0);
	assert_string_equal(json_string_value(json_object_get(ch, "name")), "c2h0");
	assert_string_equal(json_string_value(json_object_get(ch, "direction")), "c2h");
	assert_string_equal(json_string_value(json_object_get(ch, "state")), "idle");
	json_decref(j);

	j = fpgactl_json(&p, "version", &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(json_string_value(json_object_get(j, "client")),
			    fpgad_version());
	json_decref(j);

	/* fpgactl is the only client and lists itself. */
	j = fpgactl_json(&p, "clients", &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(json_array_size(json_object_get(j, "clients")), 1);
	assert_int_equal(json_integer_value(json_object_get(
		json_array_get(json_object_get(j, "clients"), 0), "uid")), getuid());
	json_decref(j);
	harness_stop_ok(&p);
}

static void test_socket_mode(void **state)
{
	struct fpgad_proc p;
	char path[256];
	struct stat st;

	(void)state;
	harness_start_ok(&p, "[control]\nsocket_mode = 0660\ngroup = \n", NULL);
	snprintf(path, sizeof(path), "%s/fpgad.sock", p.dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0660);
	harness_stop_ok(&p);
}

static void test_libfpgad_queries(void **state)
{
	struct fpgad_client_list *l;
	struct fpgad_status *s;
	struct fpgad_proc p;
	fpgad_client *c;
	bool me = false;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_string_equal(fpgad_server_software(c), "fpgad " FPGAD_VERSION_STRING);
	assert_int_equal(fpgad_status_get(c, &s), 0);
	assert_int_equal(s->pid, p.pid);
	assert_int_equal(s->clients, 1);
	assert_int_equal(s->n_channels, 1);
	assert_string_equal(s->channels[0].name, "c2h0");
	fpgad_status_free(s);
	assert_int_equal(fpgad_clients_get(c, &l), 0);
	for (uint32_t i = 0; i < l->n_clients; i++)
		me |= l->clients[i].pid == (uint32_t)getpid();
	assert_true(me);
	fpgad_clients_free(l);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

static int raw(fpgad_client *c, const void *buf, size_t len, char *msg)
{
	int code = -1;

	assert_int_equal(conn_raw_request(c, buf, len, &code, msg, 256), 0);
	return code;
}

static void test_malformed_then_good(void **state)
{
	static const uint8_t junk[] = { 0xde, 0xad, 0xbe, 0xef, 0xff, 0xff };
	static const uint8_t future[] = { 0x08, 0x05, 0x9a, 0x06, 0x00 };
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__Hello h = FPGAD__HELLO__INIT;
	Fpgad__ChannelStatsRequest cs = FPGAD__CHANNEL_STATS_REQUEST__INIT;
	struct fpgad_status *s;
	struct fpgad_proc p;
	uint8_t buf[128];
	fpgad_client *c;
	char msg[256];

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);

	assert_int_equal(raw(c, junk, sizeof(junk), msg),
			 FPGAD__STATUS_CODE__STATUS_BAD_REQUEST);
	assert_non_null(strstr(msg, "malformed request"));
	assert_int_equal(raw(c, "", 0, msg), FPGAD__STATUS_CODE__STATUS_UNKNOWN_REQUEST);
	assert_int_equal(raw(c, future, sizeof(future), msg),
			 FPGAD__STATUS_CODE__STATUS_UNKNOWN_REQUEST);

	/* Versions that do not overlap are refused by name. */
	h.version = 99;
	h.min_version = 99;
	req.body_case = FPGAD__REQUEST__BODY_HELLO;
	req.hello = &h;
	assert_int_equal(raw(c, buf, fpgad__request__pack(&req, buf), msg),
			 FPGAD__STATUS_CODE__STATUS_VERSION);
	assert_non_null(strstr(msg, "protocol versions do not overlap"));

	cs.name = "no/such";
	req.body_case = FPGAD__REQUEST__BODY_CHANNEL_STATS;
	req.channel_stats = &cs;
	assert_int_equal(raw(c, buf, fpgad__request__pack(&req, buf), msg),
			 FPGAD__STATUS_CODE__STATUS_BAD_REQUEST);
	assert_non_null(strstr(msg, "invalid channel name"));

	/* Still served, on the same connection. */
	assert_int_equal(fpgad_status_get(c, &s), 0);
	assert_int_equal(s->pid, p.pid);
	fpgad_status_free(s);
	fpgad_disconnect(c);
	assert_true(harness_log_contains(&p, "malformed request"));
	harness_stop_ok(&p);
}

/*
 * Speak nng's IPC framing by hand (SP header for REQ, then one message
 * header announcing @len bytes): the raw bytes a hostile peer would send.
 */
static int raw_ipc_connect(const struct fpgad_proc *p)
{
	static const uint8_t sp_req[8] = { 0, 'S', 'P', 0, 0x00, 0x30, 0, 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	uint8_t peer[8];
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%.90s/fpgad.sock", p->dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(write(fd, sp_req, sizeof(sp_req)), (ssize_t)sizeof(sp_req));
	assert_int_equal(read(fd, peer, sizeof(peer)), (ssize_t)sizeof(peer));
	assert_memory_equal(peer, "\0SP\0\0\x31\0\0", 8);	/* REP */
	return fd;
}

static void test_oversize_then_good(void **state)
{
	uint8_t hdr[9] = { 1 }, chunk[4096] = { 0 };
	uint64_t len = 256 * 1024;
	struct fpgad_status *s;
	struct fpgad_proc p;
	struct timeval tv = { .tv_sec = 5 };
	fpgad_client *c;
	ssize_t n = 1;
	int fd;

	(void)state;
	harness_start_ok(&p, "[control]\nmax_message = 64K\n", NULL);
	fd = raw_ipc_connect(&p);
	for (int i = 0; i < 8; i++)
		hdr[1 + i] = (uint8_t)(len >> (56 - 8 * i));
	assert_int_equal(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
	/* fpgad closes the connection instead of reading 256 KiB. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (int i = 0; i < 64 && n > 0; i++)
		n = write(fd, chunk, sizeof(chunk));
	n = read(fd, chunk, sizeof(chunk));
	assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
	close(fd);

	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_status_get(c, &s), 0);
	fpgad_status_free(s);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

static void test_notify_sequence(void **state)
{
	uint64_t last = 0, t, worst = 0;
	unsigned pings = 0;
	struct fpgad_proc p;
	char buf[1024];
	int status;

	(void)state;
	/* WATCHDOG_USEC=300 ms: fpgad must ping every 150 ms. */
	harness_start_ok(&p, NULL, "WATCHDOG_USEC=300000");
	assert_int_equal(harness_notify_expect(&p, "STATUS=", 2000), 0);
	for (uint64_t end = harness_now_ms() + 1500; harness_now_ms() < end;) {
		if (harness_notify_next(&p, buf, sizeof(buf), 400) < 0)
			fail_msg("no WATCHDOG=1 within 400 ms");
		if (!strstr(buf, "WATCHDOG=1"))
			continue;
		t = harness_now_ms();
		if (last && t - last > worst)
			worst = t - last;
		last = t;
		pings++;
	}
	/* Half the period asked for; never the whole period. */
	assert_true(pings >= 5);
	assert_true(worst < 300);

	kill(p.pid, SIGHUP);
	for (;;) {
		assert_true(harness_notify_next(&p, buf, sizeof(buf), 2000) > 0);
		if (strstr(buf, "RELOADING=1"))
			break;
	}
	assert_non_null(strstr(buf, "MONOTONIC_USEC="));
	assert_int_equal(harness_notify_expect(&p, "READY=1", 2000), 0);

	kill(p.pid, SIGTERM);
	assert_int_equal(harness_notify_expect(&p, "STOPPING=1", 2000), 0);
	status = harness_wait_exit(&p, 5000);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	harness_stop(&p);
}

/* Write @text over fpgad's configuration, SIGHUP it, until READY=1 again. */
static void reload_with(struct fpgad_proc *p, const char *text)
{
	FILE *f = fopen(p->conf, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	kill(p->pid, SIGHUP);
	assert_int_equal(harness_notify_expect(p, "RELOADING=1", 2000), 0);
	assert_int_equal(harness_notify_expect(p, "READY=1", 2000), 0);
}

/* A reload names each key that waits for the next start, not the live ones. */
static void test_reload_names_what_waits(void **state)
{
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, "[daemon]\nlog_level = info\n[channel c2h0]\nmemory = host\nslots = 4\n", NULL);
	reload_with(&p, "[daemon]\nlog_level = debug\n[channel c2h0]\nmemory = host\nslots = 6\n");
	assert_true(harness_wait_log(&p, "applied", 2000));
	assert_true(harness_log_contains(&p, "reload: [channel c2h0] slots: takes effect at the next start"));
	assert_false(harness_log_contains(&p, "log_level: take"));
	harness_stop_ok(&p);
}

static void test_reload_keeps_good_config(void **state)
{
	struct fpgad_status *s;
	struct fpgad_proc p;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, "[daemon]\nlog_level = info\n", NULL);
	reload_with(&p, "[daemon]\nlog_level = info\nno_such_key = 1\nlog_lvel = debug\n");
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_status_get(c, &s), 0);
	fpgad_status_free(s);
	fpgad_disconnect(c);
	/* Every error, as --check-config reports them, then the verdict. */
	assert_true(harness_log_contains(&p, "reload: "));
	assert_true(harness_log_contains(&p, "fpgad.conf:3: unknown key 'no_such_key' in [daemon]"));
	assert_true(harness_log_contains(&p, "fpgad.conf:4: unknown key 'log_lvel' in [daemon]; did you mean log_level?"));
	assert_true(harness_log_contains(&p, "fpgad.conf has errors; keeping the running configuration"));
	harness_stop_ok(&p);
}

/* status: what the simulated card models, its link as the link model. */
static void test_status_card_inventory(void **state)
{
	char cmd[512], out[8192];
	struct fpgad_status *s;
	struct fpgad_proc p;
	fpgad_client *c;
	json_t *j, *card;
	int rc;

	(void)state;
	harness_start_ok(&p, "[sim]\nlink = gen4x8\n", NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_status_get(c, &s), 0);
	assert_string_equal(s->card.pci_address, "");
	assert_int_equal(s->card.link_gen, 4);
	assert_int_equal(s->card.link_width, 8);
	assert_int_equal(s->card.max_link_gen, 4);
	assert_int_equal(s->card.max_link_width, 8);
	assert_int_equal(s->card.numa_node, -1);
	assert_non_null(strstr(s->card.simulates, "link PCIe Gen4 x8"));
	assert_false(s->card.aer);	/* the sim has no AER counters */
	fpgad_status_free(s);
	fpgad_disconnect(c);

	j = fpgactl_json(&p, "status", &rc);
	assert_int_equal(rc, 0);
	card = json_object_get(j, "card");
	assert_true(json_is_object(card));
	assert_true(json_is_null(json_object_get(card, "pci_address")));
	assert_true(json_is_null(json_object_get(card, "vendor_id")));
	assert_int_equal(json_integer_value(json_object_get(card, "link_gen")), 4);
	assert_int_equal(json_integer_value(json_object_get(card, "max_link_width")), 8);
	assert_non_null(strstr(json_string_value(json_object_get(card, "simulates")),
			       "2048 MiB of card memory"));
	/* Not available: there, and null (0 would be a count). */
	for (const char *const *k = (const char *const[]){ "aer_correctable",
			"aer_nonfatal", "aer_fatal", NULL }; *k; k++) {
		assert_non_null(json_object_get(card, *k));
		assert_true(json_is_null(json_object_get(card, *k)));
	}
	json_decref(j);

	snprintf(cmd, sizeof(cmd), "%s --url %s status", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	if (!strstr(out, "\ncard:     simulated: a DMA card with "))
		fail_msg("no card line in:\n%s", out);
	harness_stop_ok(&p);
}

/* A failed connect to @url says @what (libfpgad's words), returning @err. */
static void expect_connect_error(const char *url, int err, const char *what)
{
	fpgad_client *c = NULL;

	assert_int_equal(fpgad_connect(url, &c), err);
	if (!strstr(fpgad_errmsg(NULL), what))
		fail_msg("connect %s: got '%s', want '%s'", url, fpgad_errmsg(NULL), what);
}

/* Connecting wrong: each error says what to do, not only errno's words. */
static void test_connect_errors_say_what_to_do(void **state)
{
	char dir[] = "/tmp/fpgad-test-down.XXXXXX", url[64];

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(url, sizeof(url), "ipc://%s/fpgad.sock", dir);
	expect_connect_error(url, -ECONNREFUSED, "is fpgad running? (systemctl status fpgad)");
	rmdir(dir);
	expect_connect_error("/tmp/x.sock", -EINVAL, "use ipc:///tmp/x.sock");
	expect_connect_error("tcp://127.0.0.1", -EINVAL, "missing :PORT");
	expect_connect_error("tcp://[::1]", -EINVAL, "missing :PORT");
}

/*
 * A user outside the socket's group is told to join it, by name: fpgactl
 * as nobody where this test is root (root is let in anyway), else with
 * the socket's permissions taken away.
 */
static void test_not_in_group_says_which(void **state)
{
	char cmd[768], out[4096], want[256];
	struct fpgad_proc p;
	struct group *gr;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	gr = getgrgid(getgid());
	assert_non_null(gr);
	/*
	 * Without its configured group (fpga) the socket keeps fpgad's: root's
	 * is no group to join, so the hint says to create the missing one.
	 */
	if (gr->gr_gid == 0)
		snprintf(want, sizeof(want), "permission denied: the socket's group is %s, so fpgad's group (fpga by default) is missing: sudo groupadd --system fpga",
			 gr->gr_name);
	else
		snprintf(want, sizeof(want), "permission denied: add %s to group %s",
			 getuid() == 0 ? "nobody" : getpwuid(getuid())->pw_name, gr->gr_name);
	if (getuid() == 0) {
		assert_int_equal(chmod(p.dir, 0711), 0);
		snprintf(cmd, sizeof(cmd), "setpriv --reuid=65534 --regid=65534 --clear-groups "
			 "%s --url %s status 2>&1", harness_bin("fpgactl"), p.url);
	} else {
		assert_int_equal(chmod(p.url + 6, 0), 0);
		snprintf(cmd, sizeof(cmd), "%s --url %s status 2>&1", harness_bin("fpgactl"),
			 p.url);
	}
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	if (!strstr(out, want))
		fail_msg("got '%s', want '%s'", out, want);
	harness_stop_ok(&p);
}

/* An unknown channel: the answer lists the ones there are. */
static void test_unknown_channel_lists_them(void **state)
{
	struct fpgad_proc p;
	fpgad_channel *ch;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, "[channel c2h0]\nslots = 2\nslot_size = 64K\nframe_size = 64K\n"
			 "memory = host\n[channel h2c0]\ndirection = h2c\nslots = 2\n"
			 "slot_size = 64K\nframe_size = 64K\nmemory = host\n", NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "c2h1", 0, &ch), -ENOENT);
	if (!strstr(fpgad_errmsg(c), "no channel named 'c2h1'; channels: c2h0 h2c0"))
		fail_msg("got '%s'", fpgad_errmsg(c));
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* Without an NVIDIA driver, status says so and that rings are in host memory. */
static void test_no_driver_says_host_memory_only(void **state)
{
	struct fpgad_status *s;
	struct fpgad_proc p;
	fpgad_client *c;
	void *lib = dlopen("libcuda.so.1", RTLD_LAZY);

	(void)state;
	if (lib) {
		dlclose(lib);
		print_message("skipped: an NVIDIA driver is installed here (libcuda.so.1 loads)\n");
		skip();
	}
	harness_start_ok(&p, NULL, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_status_get(c, &s), 0);
	if (strstr(s->mode_reason, "built without CUDA")) {
		fpgad_status_free(s);
		fpgad_disconnect(c);
		harness_stop_ok(&p);
		print_message("skipped: fpgad is built without CUDA\n");
		skip();
	}
	if (strcmp(s->mode_reason, "no NVIDIA driver (libcuda.so.1 not found): host memory only"))
		fail_msg("status mode_reason: '%s'", s->mode_reason);
	fpgad_status_free(s);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* fpgad --check-config FILE: the output and exit status of `cmd`. */
/* fpgad --check-config on @text, and -tFILE the same: its exit status. */
static int check_config(const char *text, char *out, size_t len)
{
	char path[] = "/tmp/fpgad-check-config.XXXXXX", cmd[512], again[8192];
	int fd = mkstemp(path), rc;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "%s --check-config %s 2>&1", harness_bin("fpgad"), path);
	rc = harness_run(cmd, out, len);
	snprintf(cmd, sizeof(cmd), "%s -t%s 2>&1", harness_bin("fpgad"), path);
	assert_int_equal(harness_run(cmd, again, sizeof(again)), rc);
	assert_string_equal(again, out);
	unlink(path);
	return rc;
}

/* Every error of a file, each at its line, the nearest key; exit 1. */
static void test_check_config(void **state)
{
	struct group *gr = getgrgid(getgid());
	char out[8192], text[512];

	(void)state;
	assert_int_equal(check_config("[daemon]\nlog_level = loud\n"
				      "[channel a]\nslotz = 4\nmode = fast\n"
				      "not ini at all\n"
				      "[channel b]\nslot_size = 5000\nengine = 1\n",
				      out, sizeof(out)), 1);
	if (!strstr(out, ":2: log_level: 'loud'") ||
	    !strstr(out, ":4: unknown key 'slotz' in [channel a]; did you mean slots?") ||
	    !strstr(out, ":5: mode: 'fast'") || !strstr(out, ":6: syntax error") ||
	    !strstr(out, ":8: [channel b] slot_size 5000 is not a positive multiple") ||
	    !strstr(out, "5 errors"))
		fail_msg("want all five errors, got: %s", out);

	/* The host: rings larger than memory are an error; a group that is
	 * not there a warning, as it is for fpgad (the socket keeps fpgad's). */
	assert_int_equal(check_config("[control]\ngroup = fpgad-no-such-group\n"
				      "[channel a]\nslots = 4096\nslot_size = 2G\n",
				      out, sizeof(out)), 1);
	if (!strstr(out, ":2: warning: [control] group 'fpgad-no-such-group' does not exist") ||
	    !strstr(out, ":4: [channel a] ring of 4096 slots") || !strstr(out, "1 error"))
		fail_msg("want the ring refused and the group warned about, got: %s", out);
	assert_int_equal(check_config("[control]\ngroup = fpgad-no-such-group\n",
				      out, sizeof(out)), 0);
	if (!strstr(out, "does not exist: the socket keeps fpgad's group") ||
	    !strstr(out, "configuration OK"))
		fail_msg("a missing group alone is a warning, got: %s", out);

	/* A good file, with a group this process has. */
	assert_non_null(gr);
	snprintf(text, sizeof(text), "[control]\ngroup = %s\n[channel a]\nslots = 4\n",
		 gr->gr_name);
	if (check_config(text, out, sizeof(out)) != 0 || !strstr(out, "configuration OK"))
		fail_msg("a good file was refused: %s", out);
}

static void test_bad_config_stops_start(void **state)
{
	struct fpgad_proc p;
	int r, status;

	(void)state;
	r = harness_start(&p, "[channel c2h0]\nslots = 1\n", NULL);
	assert_int_not_equal(r, 0);
	status = harness_wait_exit(&p, 5000);
	assert_true(WIFEXITED(status));
	assert_int_not_equal(WEXITSTATUS(status), 0);
	assert_true(harness_log_contains(&p, "fpgad.conf:2: slots: '1' is not a whole number from 2"));
	harness_stop(&p);
}

/* A device or memory that cannot be had stops fpgad at start, by name. */
static void test_unavailable_device_stops_start(void **state)
{
	struct fpgad_proc p;
	int status;

	(void)state;
	assert_int_not_equal(harness_start(&p, "[device]\nbackend = xdma\n"
					   "path = /nonexistent/fpgad9\n", NULL), 0);
	status = harness_wait_exit(&p, 5000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	assert_true(harness_log_contains(&p, "/nonexistent/fpgad9: No such file or directory"));
	/* One line: the config line, the backend and its own words. */
	assert_true(harness_log_contains(&p, ":3: device: cannot open xdma backend: xdma: "));
	assert_int_equal(harness_log_count(&p, "<3>"), 1);
	harness_stop(&p);

	if (harness_start(&p, "[channel a]\nmemory = cuda\n", NULL) == 0) {
		/* A GPU answered here: nothing to refuse. */
		harness_stop_ok(&p);
		return;
	}
	status = harness_wait_exit(&p, 5000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	/* Said once, where it is decided, with the line that asks for it. */
	assert_true(harness_log_contains(&p, ":1: [channel a] memory = cuda, but"));
	assert_int_equal(harness_log_count(&p, "memory = cuda"), 1);
	assert_int_equal(harness_log_count(&p, "<3>"), 1);
	harness_stop(&p);
}

/*
 * What start refuses, --check-config refuses, with the same one line: the
 * start logs it once (no second line from the channel or the source) and
 * the checker prints it for the same file.
 */
static void test_check_config_agrees_with_start(void **state)
{
	static const struct {
		const char *conf, *what;
		int line;
	} cases[] = {
		/* 192.0.2.0/24 is TEST-NET-1: never an address of this host. */
		{ "[channel n]\nsource = udp\nlisten = 192.0.2.7:0\nsender = 192.0.2.8\n"
		  "sender_control = none\nmemory = host\n",
		  "[channel n] listen: 192.0.2.7:0 is not an address of this host", 3 },
		{ "[channel r]\nsource = roce\nlisten = 127.0.0.1\nsender = 127.0.0.2\n"
		  "sender_qpn = 0x11\nsender_control = none\nmemory = host\n"
		  "rdma_device = fpgad-no-such-rdma0\n",
		  "no RDMA device fpgad-no-such-rdma0", 8 },
		{ "[device]\ngpu = -1\n[channel c]\nslots = 4\n",
		  "[device] gpu: '-1' is not a GPU index", 2 },
		{ "[channel c]\nslots = 4\nqueue_depth = 8\nmemory = host\n",
		  "[channel c] queue_depth 8 is above slots (4)", 3 },
		{ "[channel c]\nengine = 20\nmemory = host\n",
		  "[channel c] engine 20: the card (sim) has 16 c2h engines (0-15)", 2 },
		{ "[channel h]\ndirection = h2c\nmode = bounce\n",
		  "[channel h] mode bounce serves c2h only", 3 },
		{ "[sim]\ncard_memory = 1M\n[transfer]\ncard_regions = 1024\n",
		  "[transfer] card_regions = 1024: regions of the card's 1048576 bytes of memory would be below 4096 bytes", 4 },
		{ "[sim]\ncard_memory = 2048G\n", "2199023255552", 2 },
		/* A character device, but not a card: opened as start opens it. */
		{ "[device]\nbackend = xdma\npath = /dev/null\n",
		  "device: cannot open xdma backend: xdma: /dev/null: VERSION: ", 3 },
	};
	char cmd[512], out[8192], want[96];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fpgad_proc p;
		char *line;
		int status, rc;

		if (harness_start(&p, cases[i].conf, NULL) == 0)
			fail_msg("fpgad started with: %s", cases[i].conf);
		status = harness_wait_exit(&p, 5000);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
		/* A build without libibverbs refuses roce at its source line. */
		if (harness_log_contains(&p, "built without RoCE")) {
			harness_stop(&p);
			continue;
		}
		snprintf(want, sizeof(want), "fpgad.conf:%d: ", cases[i].line);
		if (!harness_log_contains(&p, want) || !harness_log_contains(&p, cases[i].what) ||
		    harness_log_count(&p, "<3>") != 1) {
			snprintf(cmd, sizeof(cmd), "cat %s", p.log);
			harness_run(cmd, out, sizeof(out));
			fail_msg("start: want one error line '%s...%s', got:\n%s", want,
				 cases[i].what, out);
		}
		assert_false(harness_log_contains(&p, "DMA engine"));
		assert_false(harness_log_contains(&p, "cannot open its"));
		/* The checker, on the same file: the same line, one error. */
		snprintf(cmd, sizeof(cmd), "%s --check-config %s 2>&1", harness_bin("fpgad"), p.conf);
		rc = harness_run(cmd, out, sizeof(out));
		line = strstr(out, want);
		if (rc != 1 || !line || !strstr(line, cases[i].what) || !strstr(out, ": 1 error\n"))
			fail_msg("--check-config: want exit 1 and '%s...%s' alone, got %d:\n%s",
				 want, cases[i].what, rc, out);
		harness_stop(&p);
	}
}

/*
 * The sim's fault injection is FPGAD_SIM_FAULTS, not fpgad.conf: an old
 * key is refused at its line naming the variable, by start and by the
 * checker; a bad value of the variable stops start and fails the checker,
 * naming it; a good one passes both.
 */
static void test_sim_faults_env(void **state)
{
	static const char bad_what[] = "environment FPGAD_SIM_FAULTS='error=x': error: 'x' is not a whole number";
	char cmd[512], out[8192];
	struct fpgad_proc p;
	int status;

	(void)state;
	assert_int_not_equal(harness_start(&p, "[sim]\nfault_error = 1\n", NULL), 0);
	status = harness_wait_exit(&p, 5000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	assert_true(harness_log_contains(&p, "fpgad.conf:2: [sim] fault_error moved to the environment variable FPGAD_SIM_FAULTS=error=N"));
	harness_stop(&p);
	assert_int_equal(check_config("[sim]\nfault_hang = 3\n", out, sizeof(out)), 1);
	if (!strstr(out, ":2: [sim] fault_hang moved to the environment variable FPGAD_SIM_FAULTS=hang=N: fault injection is a test knob") ||
	    !strstr(out, ": 1 error\n"))
		fail_msg("--check-config of an old fault key said:\n%s", out);

	assert_int_not_equal(harness_start(&p, "[channel c]\nmemory = host\n",
					   "FPGAD_SIM_FAULTS=error=x"), 0);
	status = harness_wait_exit(&p, 5000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	if (!harness_log_contains(&p, bad_what)) {
		snprintf(cmd, sizeof(cmd), "cat %s", p.log);
		harness_run(cmd, out, sizeof(out));
		fail_msg("start with a bad FPGAD_SIM_FAULTS said:\n%s", out);
	}
	snprintf(cmd, sizeof(cmd), "FPGAD_SIM_FAULTS=error=x %s --check-config %s 2>&1",
		 harness_bin("fpgad"), p.conf);
	if (harness_run(cmd, out, sizeof(out)) != 1 || !strstr(out, bad_what) ||
	    !strstr(out, ": 1 error\n"))
		fail_msg("--check-config with a bad FPGAD_SIM_FAULTS said:\n%s", out);
	snprintf(cmd, sizeof(cmd), "FPGAD_SIM_FAULTS=error=5,seed=3 %s --check-config %s 2>&1",
		 harness_bin("fpgad"), p.conf);
	if (harness_run(cmd, out, sizeof(out)) != 0 || !strstr(out, "configuration OK"))
		fail_msg("--check-config with a good FPGAD_SIM_FAULTS said:\n%s", out);
	harness_stop(&p);
}

static void test_remote_listener_is_read_only(void **state)
{
	struct fpgad_client_list *l;
	struct fpgad_status *s;
	struct fpgad_proc p;
	char conf[128], url[64];
	fpgad_client *c;

	(void)state;
	snprintf(conf, sizeof(conf), "[exporter]\nargs = --remote tcp://127.0.0.1:0\n");
	harness_start_ok(&p, conf, NULL);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", harness_remote_port(&p));
	assert_int_equal(fpgad_connect(url, &c), 0);
	assert_int_equal(fpgad_status_get(c, &s), 0);
	assert_int_equal(s->pid, p.pid);
	fpgad_status_free(s);
	assert_int_equal(fpgad_clients_get(c, &l), -EACCES);
	assert_non_null(strstr(fpgad_errmsg(c), "not allowed on the remote (read-only) listener"));
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * A host name with an IPv6 address first and an IPv4 one after, as
 * localhost has on a stock Debian, reaches a listener on the IPv4 one:
 * libfpgad tries each address (nng alone dials only the first).  The name
 * lives in an /etc/hosts of fpgactl's own mount namespace.
 */
static void test_remote_name_tries_each_address(void **state)
{
	char conf[128], hosts[300], cmd[1024], out[4096];
	struct fpgad_proc p;
	FILE *f;
	int rc;

	(void)state;
	if (geteuid() != 0) {
		print_message("skipped: needs root (an /etc/hosts in a mount namespace)\n");
		skip();
	}
	snprintf(conf, sizeof(conf), "[exporter]\nargs = --remote tcp://127.0.0.1:0\n");
	harness_start_ok(&p, conf, NULL);
	snprintf(hosts, sizeof(hosts), "%s/hosts", p.dir);
	f = fopen(hosts, "w");
	assert_non_null(f);
	fprintf(f, "::1 fpgad-both.test\n127.0.0.1 fpgad-both.test\n");
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "unshare -m sh -c 'mount --bind %s /etc/hosts || exit 77; "
		 "getent ahosts fpgad-both.test | head -n 1 | grep -q \"^::1 \" || exit 78; "
		 "%s --url tcp://fpgad-both.test:%d status' 2>&1",
		 hosts, harness_bin("fpgactl"), harness_remote_port(&p));
	rc = harness_run(cmd, out, sizeof(out));
	harness_stop_ok(&p);
	if (rc == 77 || rc == 78) {
		print_message("skipped: %s\n", rc == 77 ? "no mount namespace here" :
			      "the name's IPv6 address does not come first here");
		skip();
	}
	if (rc != 0)
		fail_msg("fpgactl --url tcp://fpgad-both.test:PORT status: exit %d:\n%s", rc, out);
	assert_non_null(strstr(out, "fpgad"));
}

/* The remote listener over TLS: the client verifies fpgad's certificate. */
static void test_remote_tls(void **state)
{
	char dir[] = "/tmp/fpgad-tls.XXXXXX", cmd[1024], conf[512], url[64];
	struct fpgad_status *s;
	struct fpgad_proc p;
	fpgad_client *c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && for n in ca other; do openssl req -x509 -newkey rsa:2048 -nodes "
		 "-days 1 -subj /CN=localhost -addext subjectAltName=DNS:localhost "
		 "-keyout $n.key -out $n.crt >/dev/null 2>&1 || exit 1; done && "
		 "cat ca.crt ca.key > fpgad.pem", dir);
	if (system(cmd) != 0) {
		print_message("skipped: openssl cannot make a test certificate\n");
		skip();
	}
	snprintf(conf, sizeof(conf), "[exporter]\nargs = --remote tls+tcp://127.0.0.1:0 "
		 "--tls-cert-key %s/fpgad.pem\n", dir);
	harness_start_ok(&p, conf, NULL);
	snprintf(url, sizeof(url), "tls+tcp://localhost:%d",
		 harness_bound_port(&p, "remote status on tls+tcp://127.0.0.1:"));

	unsetenv("FPGAD_TLS_CA");
	assert_int_equal(fpgad_connect(url, &c), -EINVAL);
	snprintf(cmd, sizeof(cmd), "%s/other.crt", dir);
	setenv("FPGAD_TLS_CA", cmd, 1);
	/* A certificate from another CA is refused. */
	assert_true(fpgad_connect(url, &c) < 0);
	snprintf(cmd, sizeof(cmd), "%s/ca.crt", dir);
	setenv("FPGAD_TLS_CA", cmd, 1);
	assert_int_equal(fpgad_connect(url, &c), 0);
	assert_int_equal(fpgad_status_get(c, &s), 0);
	assert_int_equal(s->pid, p.pid);
	fpgad_status_free(s);
	fpgad_disconnect(c);
	unsetenv("FPGAD_TLS_CA");
	harness_stop_ok(&p);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_max_clients(void **state)
{
	fpgad_client *a, *b, *c;
	struct fpgad_proc p;

	(void)state;
	harness_start_ok(&p, "[control]\nmax_clients = 2\n", NULL);
	assert_int_equal(fpgad_connect(p.url, &a), 0);
	assert_int_equal(fpgad_connect(p.url, &b), 0);
	/* Over the limit: closed at once (not a timeout), and said so. */
	assert_int_equal(fpgad_connect(p.url, &c), -EUSERS);
	assert_true(harness_log_contains(&p, "refusing pid "));
	assert_true(harness_log_contains(&p, "2 connections on the local listener already (max_clients 2)"));
	fpgad_disconnect(b);
	/* A freed place is usable again, once fpgad has seen it freed. */
	assert_true(harness_wait_log(&p, " closed", 5000));
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	fpgad_disconnect(c);
	fpgad_disconnect(a);
	harness_stop_ok(&p);
}

static void test_fpgactl_errors(void **state)
{
	char cmd[256], out[1024];

	(void)state;
	snprintf(cmd, sizeof(cmd), "%s --url ipc:///nonexistent/fpgad.sock status 2>&1",
		 harness_bin("fpgactl"));
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "fpgactl: cannot reach fpgad at ipc:///nonexistent/fpgad.sock"));
	assert_null(strchr(strchr(out, '\n') + 1, '\n'));
	snprintf(cmd, sizeof(cmd), "%s frobnicate 2>&1", harness_bin("fpgactl"));
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "unknown command 'frobnicate'"));
}

/* Channels of the fpgactl tests: c2h frames that flow while leased. */
#define TWO_CHANNELS "[channel cam]\nmemory = host\nslot_size = 64K\nframe_size = 16K\n" \
	"frame_rate = 1000\n[channel out]\ndirection = h2c\nmemory = host\nslots = 4\n" \
	"slot_size = 64K\nframe_size = 64K\n"

/* One plain line of watch: TIME CHANNEL state=S frames=N fps=F ... */
struct watch_line {
	char channel[32], state[16];
	unsigned long long frames, drops, errors;
	double fps, gbps;
	char latency[32];
};

static int parse_watch_line(const char *line, struct watch_line *w)
{
	char when[32];

	return sscanf(line, "%31s %31s state=%15s frames=%llu fps=%lf gbps=%lf drops=%llu errors=%llu publish_latency_us=%31s",
		      when, w->channel, w->state, &w->frames, &w->fps, &w->gbps,
		      &w->drops, &w->errors, w->latency) == 9 ? 0 : -1;
}

/*
 * watch -n 2 through a pipe: two intervals, one plain line per channel
 * each, the counters moving while a lessee holds the c2h channel.
 */
static void test_fpgactl_watch(void **state)
{
	struct watch_line w[4];
	struct fpgad_proc p;
	fpgad_channel *ch;
	struct fpgad_frame f;
	char cmd[512], out[4096], *line, *save = NULL;
	unsigned n = 0;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_channel_open(c, "cam", 0, &ch), 0);
	/* Frames flow: the stream publishes whether or not they are taken. */
	assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
	assert_int_equal(fpgad_frame_release(ch, &f), 0);

	snprintf(cmd, sizeof(cmd), "%s --url %s watch -n 2 | cat", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		assert_true(n < 4);
		if (parse_watch_line(line, &w[n]) < 0)
			fail_msg("not a watch line: '%s'", line);
		n++;
	}
	/* Every channel, in fpgad's order, each interval. */
	assert_int_equal(n, 4);
	assert_string_equal(w[0].channel, "cam");
	assert_string_equal(w[1].channel, "out");
	assert_string_equal(w[2].channel, "cam");
	assert_string_equal(w[3].channel, "out");
	assert_string_equal(w[0].state, "streaming");
	assert_string_equal(w[1].state, "idle");
	assert_true(w[2].frames > w[0].frames);
	assert_true(w[0].fps > 100 && w[2].fps > 100);
	assert_true(w[2].gbps > 0);
	assert_string_not_equal(w[2].latency, "-");
	assert_true(atof(w[2].latency) > 0);
	assert_int_equal(w[3].frames, 0);
	assert_string_equal(w[3].latency, "-");

	/* Named channels only; --json: one object per line. */
	snprintf(cmd, sizeof(cmd), "%s --url %s watch cam -n 1 --json", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	{
		json_error_t jerr;
		json_t *j = json_loads(out, 0, &jerr);

		if (!j)
			fail_msg("watch --json printed '%s': %s", out, jerr.text);
		assert_string_equal(json_string_value(json_object_get(j, "channel")), "cam");
		assert_true(json_integer_value(json_object_get(j, "frames")) > 0);
		assert_true(json_real_value(json_object_get(j, "fps")) > 0);
		assert_true(json_is_real(json_object_get(j, "publish_latency_us")));
		json_decref(j);
	}
	snprintf(cmd, sizeof(cmd), "%s --url %s watch nosuch -n 1 2>&1", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	assert_non_null(strstr(out, "no channel named 'nosuch'"));
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* channels: one line per configured channel; --json the same fields. */
static void test_fpgactl_channels(void **state)
{
	char cmd[512], out[4096], name[32], dir[8], mem[8], mode[16], st[16];
	unsigned leases, slots;
	unsigned long long frame, slot_size;
	struct fpgad_proc p;
	json_t *j, *chans;
	int rc;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	snprintf(cmd, sizeof(cmd), "%s --url %s channels", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	assert_int_equal(strncmp(out, "CHANNEL ", 8), 0);
	assert_int_equal(sscanf(strchr(out, '\n') + 1, "%31s %7s %7s %15s %15s %u %llu %u %llu",
				name, dir, mem, mode, st, &leases, &frame, &slots, &slot_size), 9);
	assert_string_equal(name, "cam");
	assert_string_equal(dir, "c2h");
	assert_string_equal(mem, "host");
	assert_string_equal(mode, "host");
	assert_string_equal(st, "idle");
	assert_int_equal(leases, 0);
	assert_int_equal(frame, 16384);
	assert_int_equal(slots, 8);
	assert_int_equal(slot_size, 65536);
	assert_non_null(strstr(out, "\nout "));
	assert_non_null(strstr(strstr(out, "\nout "), " h2c "));

	j = fpgactl_json(&p, "channels", &rc);
	assert_int_equal(rc, 0);
	chans = json_object_get(j, "channels");
	assert_int_equal(json_array_size(chans), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(chans, 1), "name")), "out");
	assert_string_equal(json_string_value(json_object_get(json_array_get(chans, 1), "direction")), "h2c");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(chans, 1), "slots")), 4);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(chans, 0), "frame_size")), 16384);
	json_decref(j);
	harness_stop_ok(&p);
}

/* status with several --url: one row per host, the dead one said so. */
static void test_fpgactl_status_hosts(void **state)
{
	const char *dead = "ipc:///nonexistent/fpgad.sock";
	char cmd[768], out[8192], *row;
	struct fpgad_proc p;
	json_error_t jerr;
	json_t *j, *e;

	(void)state;
	harness_start_ok(&p, TWO_CHANNELS, NULL);
	snprintf(cmd, sizeof(cmd), "%s --url %s --url %s status", harness_bin("fpgactl"),
		 p.url, dead);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	assert_int_equal(strncmp(out, "HOST ", 5), 0);
	row = strstr(out, p.url);
	assert_non_null(row);
	assert_non_null(strstr(row, " " FPGAD_VERSION_STRING " "));
	assert_non_null(strstr(row, " sim "));
	row = strstr(out, dead);
	assert_non_null(row);
	assert_non_null(strstr(row, "unreachable: Connection refused: is fpgad running? (systemctl status fpgad)\n"));
	assert_true(strstr(out, p.url) < row);	/* in the order given */

	snprintf(cmd, sizeof(cmd), "%s --url %s --url %s --json status", harness_bin("fpgactl"),
		 dead, p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("status --json printed '%s': %s", out, jerr.text);
	assert_true(json_is_array(j));
	assert_int_equal(json_array_size(j), 2);
	e = json_array_get(j, 0);
	assert_string_equal(json_string_value(json_object_get(e, "url")), dead);
	assert_false(json_is_true(json_object_get(e, "reachable")));
	assert_string_equal(json_string_value(json_object_get(e, "error")),
			    "Connection refused: is fpgad running? (systemctl status fpgad)");
	e = json_array_get(j, 1);
	assert_true(json_is_true(json_object_get(e, "reachable")));
	assert_int_equal(json_integer_value(json_object_get(e, "pid")), p.pid);
	assert_int_equal(json_array_size(json_object_get(e, "channels")), 2);
	json_decref(j);

	/* Every host answers: exit 0. */
	snprintf(cmd, sizeof(cmd), "%s --url %s --url %s status", harness_bin("fpgactl"),
		 p.url, p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	assert_null(strstr(out, "unreachable"));
	/* Several --url are for status only. */
	snprintf(cmd, sizeof(cmd), "%s --url %s --url %s clients 2>&1", harness_bin("fpgactl"),
		 p.url, p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 2);
	assert_non_null(strstr(out, "clients takes one --url; several are for status"));
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fpgactl_json_status),
		cmocka_unit_test(test_socket_mode),
		cmocka_unit_test(test_libfpgad_queries),
		cmocka_unit_test(test_malformed_then_good),
		cmocka_unit_test(test_oversize_then_good),
		cmocka_unit_test(test_notify_sequence),
		cmocka_unit_test(test_reload_names_what_waits),
		cmocka_unit_test(test_reload_keeps_good_config),
		cmocka_unit_test(test_check_config),
		cmocka_unit_test(test_status_card_inventory),
		cmocka_unit_test(test_connect_errors_say_what_to_do),
		cmocka_unit_test(test_not_in_group_says_which),
		cmocka_unit_test(test_unknown_channel_lists_them),
		cmocka_unit_test(test_no_driver_says_host_memory_only),
		cmocka_unit_test(test_bad_config_stops_start),
		cmocka_unit_test(test_unavailable_device_stops_start),
		cmocka_unit_test(test_check_config_agrees_with_start),
		cmocka_unit_test(test_sim_faults_env),
		cmocka_unit_test(test_remote_listener_is_read_only),
		cmocka_unit_test(test_remote_name_tries_each_address),
		cmocka_unit_test(test_remote_tls),
		cmocka_unit_test(test_max_clients),
		cmocka_unit_test(test_fpgactl_errors),
		cmocka_unit_test(test_fpgactl_watch),
		cmocka_unit_test(test_fpgactl_channels),
		cmocka_unit_test(test_fpgactl_status_hosts),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("integration-control", tests, NULL, NULL);
}
