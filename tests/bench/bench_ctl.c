// SPDX-License-Identifier: MIT
/*
 * bench_ctl.c - control-plane round trips from PROCS client processes at
 * once, for SECONDS; one JSON line with the aggregate rate and the
 * per-request latency percentiles.
 *
 *   bench_ctl status URL PROCS SECONDS
 *	fpgad's Status request through libfpgad (fpgad_status_get)
 *   bench_ctl echo DIR PROCS SECONDS
 *	the baseline: a bare nng REQ/REP echo over ipc://DIR/echo.sock, the
 *	replier a process of its own answering one request at a time (as
 *	fpgad's loop thread does), ECHO_REQ bytes asked, ECHO_REP answered
 *
 * Each client connects, then waits at a barrier; the window opens for all
 * at once.  nng is used only after fork().
 */
#include <errno.h>
#include <inttypes.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_util.h"
#include "fpgad.h"

#define MAX_PROCS 256
#define MAX_SAMPLES 65536
#define ECHO_REQ 16
#define ECHO_REP 512

struct slot {
	int status;
	uint64_t requests;
	uint64_t n_lat;
	uint64_t lat_ns[MAX_SAMPLES];
};

struct shared {
	uint64_t t_go_ns;
	struct slot s[MAX_PROCS];
};

static bool echo_mode;

struct conn {
	fpgad_client *c;
	nng_socket sock;
	bool open;
};

static int conn_open(const char *url, struct conn *k)
{
	int r;

	if (!echo_mode)
		return fpgad_connect(url, &k->c);
	r = nng_req0_open(&k->sock);
	if (r)
		return -EIO;
	k->open = true;
	r = nng_dial(k->sock, url, NULL, 0);
	return r ? -ECONNREFUSED : 0;
}

static void conn_close(struct conn *k)
{
	fpgad_disconnect(k->c);
	if (k->open)
		nng_close(k->sock);
}

static int round_trip(struct conn *k)
{
	struct fpgad_status *st;
	char req[ECHO_REQ] = "status?";
	void *rep = NULL;
	size_t len = 0;
	int r;

	if (!echo_mode) {
		r = fpgad_status_get(k->c, &st);
		if (r == 0)
			fpgad_status_free(st);
		return r;
	}
	r = nng_send(k->sock, req, sizeof(req), 0);
	if (r == 0)
		r = nng_recv(k->sock, &rep, &len, NNG_FLAG_ALLOC);
	if (r)
		return -EIO;
	nng_free(rep, len);
	return len == ECHO_REP ? 0 : -EPROTO;
}

static int client_main(const char *url, double secs, struct shared *sh,
		       struct slot *s, int ready_fd, int go_fd)
{
	struct conn k = { 0 };
	uint64_t end, t0, t1;
	char b = 'r';
	int r;

	r = conn_open(url, &k);
	if (r < 0)
		fprintf(stderr, "bench_ctl: connect %s: %s\n", url, strerror(-r));
	else if (write(ready_fd, &b, 1) != 1 || read(go_fd, &b, 1) != 0)
		r = -EPIPE;
	if (r == 0) {
		end = sh->t_go_ns + (uint64_t)(secs * 1e9);
		do {
			t0 = bench_now_ns();
			r = round_trip(&k);
			t1 = bench_now_ns();
			if (r < 0) {
				fprintf(stderr, "bench_ctl: request %" PRIu64 ": %s\n",
					s->requests, strerror(-r));
				break;
			}
			s->requests++;
			if (s->n_lat < MAX_SAMPLES)
				s->lat_ns[s->n_lat++] = t1 - t0;
		} while (t1 < end);
	}
	s->status = r;
	conn_close(&k);
	return r < 0 ? 1 : 0;
}

/* The echo replier: answer every request with ECHO_REP bytes. */
static int echo_server(const char *url, int ready_fd)
{
	static char rep[ECHO_REP];
	nng_socket sock;
	void *req;
	size_t len;
	char b = 'r';
	int r;

	r = nng_rep0_open(&sock);
	if (r == 0)
		r = nng_listen(sock, url, NULL, 0);
	if (r) {
		fprintf(stderr, "bench_ctl: echo listen %s: %s\n", url, nng_strerror(r));
		return 1;
	}
	if (write(ready_fd, &b, 1) != 1)
		return 1;
	close(ready_fd);
	for (;;) {
		r = nng_recv(sock, &req, &len, NNG_FLAG_ALLOC);
		if (r)
			break;
		nng_free(req, len);
		r = nng_send(sock, rep, sizeof(rep), 0);
		if (r)
			break;
	}
	nng_close(sock);
	return 0;
}

int main(int argc, char **argv)
{
	static uint64_t lat[MAX_PROCS * 4096];
	int ready[2] = { -1, -1 }, go[2] = { -1, -1 }, status, code = 1;
	pid_t pids[MAX_PROCS] = { 0 }, server = 0;
	uint64_t requests = 0, n_lat = 0;
	char url[300];
	struct shared *sh = NULL;
	unsigned procs, i;
	double secs;
	char b;

	if (argc != 5 || (strcmp(argv[1], "status") && strcmp(argv[1], "echo")) ||
	    (procs = (unsigned)atoi(argv[3])) == 0 || procs > MAX_PROCS ||
	    (secs = atof(argv[4])) <= 0) {
		fprintf(stderr, "usage: bench_ctl status URL PROCS SECONDS\n"
				"       bench_ctl echo DIR PROCS SECONDS\n");
		return 2;
	}
	echo_mode = !strcmp(argv[1], "echo");
	if (echo_mode)
		snprintf(url, sizeof(url), "ipc://%s/echo.sock", argv[2]);
	else
		snprintf(url, sizeof(url), "%s", argv[2]);
	sh = bench_shared_alloc(sizeof(*sh));
	if (!sh || pipe(ready) < 0 || pipe(go) < 0) {
		fprintf(stderr, "bench_ctl: set-up: %s\n", strerror(errno));
		goto out;
	}
	fflush(stdout);
	if (echo_mode) {
		server = fork();
		if (server < 0)
			goto out;
		if (server == 0) {
			close(go[0]);
			close(go[1]);
			close(ready[0]);
			_exit(echo_server(url, ready[1]));
		}
		if (read(ready[0], &b, 1) != 1) {
			fprintf(stderr, "bench_ctl: the echo server did not start\n");
			goto out;
		}
	}
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			fprintf(stderr, "bench_ctl: fork: %s\n", strerror(errno));
			goto out;
		}
		if (pids[i] == 0) {
			close(ready[0]);
			close(go[1]);
			_exit(client_main(url, secs, sh, &sh->s[i], ready[1], go[0]));
		}
	}
	close(ready[1]);
	ready[1] = -1;
	close(go[0]);
	go[0] = -1;
	for (i = 0; i < procs; i++) {
		if (read(ready[0], &b, 1) != 1) {
			fprintf(stderr, "bench_ctl: a client failed to connect\n");
			goto out;
		}
	}
	sh->t_go_ns = bench_now_ns();
	close(go[1]);
	go[1] = -1;
	code = 0;
out:
	if (go[1] >= 0)
		close(go[1]);
	for (i = 0; i < procs; i++) {
		if (pids[i] <= 0)
			continue;
		if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status))
			code = 1;
	}
	if (server > 0) {
		kill(server, SIGTERM);
		waitpid(server, NULL, 0);
	}
	if (!code) {
		for (i = 0; i < procs; i++) {
			uint64_t n = sh->s[i].n_lat < 4096 ? sh->s[i].n_lat : 4096;

			requests += sh->s[i].requests;
			/* Every client's first 4096 round trips. */
			memcpy(lat + n_lat, sh->s[i].lat_ns, n * sizeof(*lat));
			n_lat += n;
		}
		bench_sort(lat, n_lat);
		printf("{\"bench\":\"ctl\",\"kind\":\"%s\",\"procs\":%u,\"seconds\":%.3f,"
		       "\"requests\":%" PRIu64 ",\"rps\":%.1f,\"lat_p50_us\":%.1f,"
		       "\"lat_p99_us\":%.1f,\"lat_max_us\":%.1f}\n",
		       echo_mode ? "nng echo" : "fpgad Status", procs, secs, requests,
		       (double)requests / secs, bench_pct_us(lat, n_lat, 0.5),
		       bench_pct_us(lat, n_lat, 0.99), bench_pct_us(lat, n_lat, 1.0));
	}
	for (i = 0; i < 2; i++) {
		if (ready[i] >= 0)
			close(ready[i]);
		if (go[i] >= 0)
			close(go[i]);
	}
	bench_shared_free(sh, sizeof(*sh));
	return code;
}
