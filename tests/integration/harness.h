/* SPDX-License-Identifier: MIT */
/*
 * harness.h - start real fpgad processes for integration tests: each in a
 * temporary runtime directory, with a fake NOTIFY_SOCKET that records what
 * fpgad tells the service manager.
 */
#ifndef FPGAD_TEST_HARNESS_H
#define FPGAD_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct fpgad_proc {
	pid_t pid;
	char dir[128];		/* runtime directory */
	char url[192];		/* ipc://DIR/fpgad.sock */
	char conf[192];		/* DIR/fpgad.conf */
	char log[192];		/* DIR/fpgad.log: fpgad's stderr */
	int notify_fd;		/* our end of NOTIFY_SOCKET */
	bool has_conf;		/* started with -c conf */
	char env[256];		/* NAME=VALUE given at start, kept for restarts */
	/* fpgad-exporter beside it, when the config had an [exporter] section. */
	pid_t exporter_pid;
	char exporter_args[512];	/* its options but -u, from "args = " */
};

/* Path of a built program: $BUILD/NAME (BUILD defaults to "build"). */
const char *harness_bin(const char *name);

/*
 * Start fpgad with @config (NULL = no -c) and extra environment @env
 * ("WATCHDOG_USEC=200000", "FPGAD_SIM_FAULTS=error=1" or NULL); waits for
 * READY=1 (5 s at most).
 */
int harness_start(struct fpgad_proc *p, const char *config, const char *env);
/* The same, failing the test (with fpgad's log) when it does not start. */
void harness_start_ok(struct fpgad_proc *p, const char *config, const char *env);
/*
 * Stop fpgad with @sig (SIGKILL: it dies) and start it again in the same
 * runtime directory with the same configuration and environment; waits
 * for READY=1.
 */
int harness_restart(struct fpgad_proc *p, int sig);
/* SIGTERM, wait; returns the exit status (or -1). Removes the directory. */
int harness_stop(struct fpgad_proc *p);
/* The same, failing the test unless fpgad exits 0. */
void harness_stop_ok(struct fpgad_proc *p);
/* Wait up to @ms for the process to exit; its status, or -1. */
int harness_wait_exit(struct fpgad_proc *p, int ms);

/* Next sd_notify datagram within @ms into @buf; its length or -1. */
int harness_notify_next(struct fpgad_proc *p, char *buf, size_t len, int ms);
/* Wait for a datagram containing @what; 0 when seen. */
int harness_notify_expect(struct fpgad_proc *p, const char *what, int ms);

/* Run a command line, capture stdout into @out; returns its exit status. */
int harness_run(const char *cmdline, char *out, size_t len);

/* Does fpgad's log contain @what? */
bool harness_log_contains(const struct fpgad_proc *p, const char *what);
/* Until fpgad's log holds @what, at most @ms: whether it came. */
bool harness_wait_log(const struct fpgad_proc *p, const char *what, int ms);
/* How many lines of fpgad's log hold @what. */
unsigned harness_log_count(const struct fpgad_proc *p, const char *what);

/*
 * The port fpgad logged right after @before, its last start's (a listener
 * configured with port 0 binds one the kernel picks); fails the test when
 * the log has none.  "metrics: serving http://127.0.0.1:" for the metrics
 * listener; harness_remote_port() for remote = tcp://127.0.0.1:0.
 */
int harness_bound_port(const struct fpgad_proc *p, const char *before);
/*
 * The config given to harness_start() may end with a section
 *   [exporter]
 *   args = --remote tcp://127.0.0.1:0 --metrics http://127.0.0.1:0/metrics
 * which fpgad never sees: fpgad-exporter is started with those options and
 * -u fpgad's socket once fpgad is ready, logging into fpgad's log, and
 * stopped with it.  harness_restart() restarts fpgad alone.
 */
int harness_remote_port(const struct fpgad_proc *p);
/* Start (again) the exporter with p->exporter_args; ready when it says so. */
int harness_exporter_start(struct fpgad_proc *p);
/* SIGTERM the exporter; its exit status, -1 if none ran. */
int harness_exporter_stop(struct fpgad_proc *p);

/*
 * Append to @conf (of @len bytes) @n small c2h channels c0, c1, ... on
 * engines 0, 1, ...: the sim's 16 leave no c2h engine for transfers.
 */
void harness_conf_channels(char *conf, size_t len, unsigned n);

/*
 * The metrics listener of a fpgad whose [metrics] listen asks for
 * http://127.0.0.1:0/metrics: the port it bound (from its log).
 */
int harness_metrics_port(const struct fpgad_proc *p);
/* A TCP connection to 127.0.0.1:@port, reads timing out after 5 s. */
int harness_tcp_connect(int port);
/*
 * One HTTP/1.1 request on a connection of its own: the status code, or -1
 * when the connection closed without an answer.  @out gets the whole
 * response (head and body), NUL-terminated.
 */
int harness_http(int port, const char *method, const char *path, char *out,
		 size_t len);
/* GET /metrics, failing the test unless served; its body, within @out. */
char *harness_scrape(int port, char *out, size_t len);
/* The value of the sample @series ("name{labels}"); fails when absent. */
double harness_sample(const char *text, const char *series);

uint64_t harness_now_ms(void);

#endif
