// SPDX-License-Identifier: MIT
/* harness.c - real fpgad processes for the integration tests. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <stdbool.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "harness.h"

/* TEST=PATTERN runs only the tests whose names match (cmocka's wildcards). */
__attribute__((constructor)) static void harness_filter(void)
{
	const char *t = getenv("TEST");

	if (t && t[0])
		cmocka_set_test_filter(t);
}

uint64_t harness_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

const char *harness_bin(const char *name)
{
	static char path[256];
	const char *b = getenv("BUILD");

	snprintf(path, sizeof(path), "%s/%s", b && b[0] ? b : "build", name);
	return path;
}

static int notify_socket(struct fpgad_proc *p, char *path, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if ((size_t)snprintf(path, len, "%s/notify.sock", p->dir) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	p->notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->notify_fd < 0)
		return -errno;
	if (bind(p->notify_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return 0;
}

/* fpgad processes a failed test left behind: killed when the suite ends. */
#define HARNESS_MAX_PROCS 64
static pid_t started[HARNESS_MAX_PROCS];

static void kill_leftovers(void)
{
	for (unsigned i = 0; i < HARNESS_MAX_PROCS; i++)
		if (started[i] > 0 && kill(started[i], SIGKILL) == 0)
			waitpid(started[i], NULL, 0);
}

/* @pid is running (@add) or has been reaped (!@add). */
static void track(pid_t pid, bool add)
{
	static bool registered;

	if (add && !registered && atexit(kill_leftovers) == 0)
		registered = true;
	for (unsigned i = 0; i < HARNESS_MAX_PROCS; i++) {
		if (started[i] == (add ? 0 : pid)) {
			started[i] = add ? pid : 0;
			return;
		}
	}
}

/*
 * Start fpgad in @p's directory (the log is appended to), with p->env;
 * READY=1.
 */
static int launch(struct fpgad_proc *p)
{
	char npath[256], bin[256];

	snprintf(npath, sizeof(npath), "%s/notify.sock", p->dir);
	snprintf(bin, sizeof(bin), "%s", harness_bin("fpgad"));
	p->pid = fork();
	if (p->pid < 0)
		return -errno;
	if (p->pid == 0) {
		int fd = open(p->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		/* Nothing of the test's output stays open in fpgad. */
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		setenv("NOTIFY_SOCKET", npath, 1);
		if (p->env[0])
			putenv(p->env);
		if (p->has_conf)
			execl(bin, "fpgad", "-v", "-c", p->conf, "--runtime-dir",
			      p->dir, (char *)NULL);
		else
			execl(bin, "fpgad", "-v", "--runtime-dir", p->dir, (char *)NULL);
		_exit(127);
	}
	track(p->pid, true);
	return harness_notify_expect(p, "READY=1", 5000);
}

/*
 * Take an [exporter] section out of @config (what fpgad gets is written
 * to @f): its "args = " value into p->exporter_args.
 */
static void split_exporter(struct fpgad_proc *p, const char *config, FILE *f)
{
	const char *sec = strstr(config, "[exporter]\n"), *end, *args;

	if (!sec) {
		fputs(config, f);
		return;
	}
	fwrite(config, 1, (size_t)(sec - config), f);
	end = strstr(sec + 1, "\n[");
	args = strstr(sec, "args = ");
	if (args && (!end || args < end))
		snprintf(p->exporter_args, sizeof(p->exporter_args), "%.*s",
			 (int)strcspn(args + 7, "\n"), args + 7);
	if (end)
		fputs(end + 1, f);
}

int harness_exporter_start(struct fpgad_proc *p)
{
	char cmd[1024];
	unsigned before = harness_log_count(p, "fpgad-exporter " FPGAD_VERSION " serving");

	snprintf(cmd, sizeof(cmd), "exec '%s' -v -u '%s' %s",
		 harness_bin("fpgad-exporter"), p->url, p->exporter_args);
	p->exporter_pid = fork();
	if (p->exporter_pid < 0)
		return -errno;
	if (p->exporter_pid == 0) {
		int fd = open(p->log, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		unsetenv("NOTIFY_SOCKET");
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	track(p->exporter_pid, true);
	for (uint64_t end = harness_now_ms() + 5000; harness_now_ms() < end; usleep(10000))
		if (harness_log_count(p, "fpgad-exporter " FPGAD_VERSION " serving") > before)
			return 0;
	return -ETIMEDOUT;
}

int harness_exporter_stop(struct fpgad_proc *p)
{
	int status = -1;

	if (p->exporter_pid <= 0)
		return -1;
	kill(p->exporter_pid, SIGTERM);
	for (uint64_t end = harness_now_ms() + 10000; harness_now_ms() < end; usleep(5000)) {
		if (waitpid(p->exporter_pid, &status, WNOHANG) == p->exporter_pid) {
			track(p->exporter_pid, false);
			p->exporter_pid = 0;
			return status;
		}
	}
	kill(p->exporter_pid, SIGKILL);
	waitpid(p->exporter_pid, NULL, 0);
	track(p->exporter_pid, false);
	p->exporter_pid = 0;
	return -1;
}

int harness_start(struct fpgad_proc *p, const char *config, const char *env)
{
	char npath[256];
	FILE *f;
	int r;

	memset(p, 0, sizeof(*p));
	p->notify_fd = -1;
	snprintf(p->dir, sizeof(p->dir), "/tmp/fpgad-it.XXXXXX");
	if (!mkdtemp(p->dir))
		return -errno;
	snprintf(p->url, sizeof(p->url), "ipc://%s/fpgad.sock", p->dir);
	snprintf(p->conf, sizeof(p->conf), "%s/fpgad.conf", p->dir);
	snprintf(p->log, sizeof(p->log), "%s/fpgad.log", p->dir);
	r = notify_socket(p, npath, sizeof(npath));
	if (r < 0)
		return r;
	if (config) {
		f = fopen(p->conf, "w");
		if (!f)
			return -errno;
		split_exporter(p, config, f);
		fclose(f);
		p->has_conf = true;
	}
	if (env && strlen(env) >= sizeof(p->env))
		return -ENAMETOOLONG;
	snprintf(p->env, sizeof(p->env), "%s", env ? env : "");
	r = launch(p);
	if (r < 0 || !p->exporter_args[0])
		return r;
	return harness_exporter_start(p);
}

int harness_restart(struct fpgad_proc *p, int sig)
{
	if (p->pid > 0) {
		kill(p->pid, sig);
		if (harness_wait_exit(p, 10000) < 0)
			return -ETIMEDOUT;
	}
	return launch(p);	/* with the environment it started with */
}

int harness_wait_exit(struct fpgad_proc *p, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;
	int status;

	if (p->pid <= 0)
		return -1;
	do {
		pid_t r = waitpid(p->pid, &status, WNOHANG);

		if (r == p->pid) {
			track(p->pid, false);
			p->pid = 0;
			return status;
		}
		usleep(5000);
	} while (harness_now_ms() < end);
	return -1;
}

int harness_stop(struct fpgad_proc *p)
{
	char cmd[300];
	int status = -1;

	harness_exporter_stop(p);
	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		status = harness_wait_exit(p, 10000);
		if (status < 0) {
			kill(p->pid, SIGKILL);
			waitpid(p->pid, NULL, 0);
			track(p->pid, false);
			p->pid = 0;
		}
	}
	if (p->notify_fd >= 0)
		close(p->notify_fd);
	p->notify_fd = -1;
	if (getenv("KEEP_LOGS")) {
		fprintf(stderr, "fpgad log kept in %s\n", p->log);
		return status;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", p->dir);
	if (p->dir[0] && system(cmd) != 0)
		fprintf(stderr, "harness: cannot remove %s\n", p->dir);
	return status;
}

int harness_notify_next(struct fpgad_proc *p, char *buf, size_t len, int ms)
{
	struct pollfd pfd = { .fd = p->notify_fd, .events = POLLIN };
	ssize_t n;

	if (poll(&pfd, 1, ms) <= 0)
		return -1;
	n = recv(p->notify_fd, buf, len - 1, 0);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

int harness_notify_expect(struct fpgad_proc *p, const char *what, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;
	char buf[1024];

	while (harness_now_ms() < end) {
		int left = (int)(end - harness_now_ms());

		if (harness_notify_next(p, buf, sizeof(buf), left) < 0)
			break;
		if (strstr(buf, what))
			return 0;
	}
	return -ETIMEDOUT;
}

int harness_run(const char *cmdline, char *out, size_t len)
{
	FILE *f = popen(cmdline, "r");
	size_t n = 0;
	int status;

	if (!f)
		return -1;
	if (out && len) {
		n = fread(out, 1, len - 1, f);
		out[n] = '\0';
	} else {
		char sink[4096];

		while (fread(sink, 1, sizeof(sink), f) > 0)
			;
	}
	status = pclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool harness_log_contains(const struct fpgad_proc *p, const char *what)
{
	return harness_log_count(p, what) > 0;
}

bool harness_wait_log(const struct fpgad_proc *p, const char *what, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;

	while (!harness_log_contains(p, what)) {
		if (harness_now_ms() >= end)
			return false;
		usleep(10000);
	}
	return true;
}

unsigned harness_log_count(const struct fpgad_proc *p, const char *what)
{
	char line[4096];
	FILE *f = fopen(p->log, "r");
	unsigned n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

int harness_bound_port(const struct fpgad_proc *p, const char *before)
{
	FILE *f = fopen(p->log, "r");
	char line[1024], *at;
	int port = -1;

	while (f && fgets(line, sizeof(line), f))
		if ((at = strstr(line, before)))
			port = atoi(at + strlen(before));
	if (f)
		fclose(f);
	if (port <= 0)
		fail_msg("no port after '%s' in fpgad's log %s", before, p->log);
	return port;
}

int harness_remote_port(const struct fpgad_proc *p)
{
	return harness_bound_port(p, "remote status on tcp://127.0.0.1:");
}

void harness_start_ok(struct fpgad_proc *p, const char *config, const char *env)
{
	int r = harness_start(p, config, env);

	if (r < 0)
		fail_msg("fpgad did not become ready: %s (log %s)", strerror(-r), p->log);
}

void harness_stop_ok(struct fpgad_proc *p)
{
	int status = harness_stop(p);

	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

void harness_conf_channels(char *conf, size_t len, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		snprintf(conf + strlen(conf), len - strlen(conf),
			 "[channel c%u]\nengine = %u\nslots = 2\nslot_size = 4K\n"
			 "frame_size = 4K\nmemory = host\n", i, i);
}

/* --- the metrics listener ------------------------------------------------------ */

int harness_metrics_port(const struct fpgad_proc *p)
{
	return harness_bound_port(p, "metrics on http://127.0.0.1:");
}

int harness_tcp_connect(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

int harness_http(int port, const char *method, const char *path, char *out,
		 size_t len)
{
	char req[256];
	size_t got = 0;
	ssize_t n;
	int fd = harness_tcp_connect(port), code;

	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		 "Connection: close\r\n\r\n", method, path, port);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	while (got < len - 1 && (n = read(fd, out + got, len - 1 - got)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fd);
	if (sscanf(out, "HTTP/1.1 %d ", &code) != 1)
		return -1;
	return code;
}

char *harness_scrape(int port, char *out, size_t len)
{
	char *body;

	assert_int_equal(harness_http(port, "GET", "/metrics", out, len), 200);
	assert_non_null(strstr(out, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	body = strstr(out, "\r\n\r\n");
	assert_non_null(body);
	return body + 4;
}

double harness_sample(const char *text, const char *series)
{
	char want[256];
	const char *p;

	snprintf(want, sizeof(want), "\n%s ", series);
	p = strstr(text, want);
	if (!p)
		fail_msg("no sample %s in:\n%s", series, text);
	return strtod(p + strlen(want), NULL);
}
