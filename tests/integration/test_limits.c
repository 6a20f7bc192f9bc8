// SPDX-License-Identifier: MIT
/*
 * test_limits.c - what a few tcp peers can hold of fpgad-exporter's remote
 * and metrics listeners: connections from one address are bounded
 * (--remote-max-per-address, --metrics-max-per-address), connections
 * that stay idle are closed (--remote-idle-timeout-ms,
 * --metrics-idle-timeout-ms) and so are requests sent too slowly, a byte
 * at a time (--request-timeout-ms), so that a newcomer is served.  Peers take addresses of their own in 127.0.0.0/8
 * (every one of them is loopback), the newcomer connects from 127.0.0.1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fpgad.h"
#include "harness.h"

#define PEERS 16
/* Long enough for the newcomer to be served, however loaded the host. */
#define SERVED_WITHIN_MS 10000

/* A tcp connection to 127.0.0.1:@port from 127.0.0.@from. */
static int connect_from(int from, int port)
{
	struct sockaddr_in src = { .sin_family = AF_INET }, dst = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 5 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	src.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t)from);
	dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	dst.sin_port = htons((uint16_t)port);
	assert_int_equal(bind(fd, (struct sockaddr *)&src, sizeof(src)), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&dst, sizeof(dst)), 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/*
 * A REQ peer that says its SP header, takes the listener's, then sends
 * nothing: a connection that stays idle.  One over a limit is closed as
 * it is accepted, before any header: that is for the caller to see.
 */
static int idle_req_peer(int from, int port)
{
	static const unsigned char req0[8] = { 0, 'S', 'P', 0, 0, 48, 0, 0 };
	unsigned char rep0[8];
	int fd = connect_from(from, port);

	if (send(fd, req0, sizeof(req0), MSG_NOSIGNAL) == (ssize_t)sizeof(req0) &&
	    read(fd, rep0, sizeof(rep0)) == (ssize_t)sizeof(rep0))
		assert_memory_equal(rep0, "\0SP\0\0\x31\0\0", 8);
	return fd;
}

/* Whether fpgad closed @fd (EOF or reset) within @ms. */
static bool closed_within(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = ms % 1000 * 1000 };
	char b;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return read(fd, &b, 1) <= 0 && errno != EAGAIN;
}

/* Status over @url from 127.0.0.1, retried until it works or @ms passed. */
static bool remote_status_within(const char *url, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;
	struct fpgad_status *s;
	fpgad_client *c;
	int r = -1;

	do {
		if (fpgad_connect(url, &c) == 0) {
			r = fpgad_status_get(c, &s);
			if (r == 0)
				fpgad_status_free(s);
			fpgad_disconnect(c);
		}
		if (r != 0)
			usleep(100000);
	} while (r != 0 && harness_now_ms() < end);
	return r == 0;
}

/* GET /metrics from 127.0.0.1: its status code, or -1 when refused. */
static int scrape_code(int port)
{
	static const char req[] = "GET /metrics HTTP/1.1\r\nHost: fpgad\r\nConnection: close\r\n\r\n";
	char head[64] = "";
	int fd = connect_from(1, port), code = -1;

	if (write(fd, req, sizeof(req) - 1) == (ssize_t)sizeof(req) - 1 &&
	    read(fd, head, sizeof(head) - 1) > 0 && sscanf(head, "HTTP/1.1 %d", &code) != 1)
		code = -1;
	close(fd);
	return code;
}

static bool scrape_within(int port, int ms)
{
	uint64_t end = harness_now_ms() + (uint64_t)ms;

	do {
		if (scrape_code(port) == 200)
			return true;
		usleep(100000);
	} while (harness_now_ms() < end);
	return false;
}

static void start_remote(struct fpgad_proc *p, const char *extra, char *url, size_t len)
{
	char conf[256];

	snprintf(conf, sizeof(conf), "[exporter]\nargs = --remote tcp://127.0.0.1:0 %s\n", extra);
	harness_start_ok(p, conf, NULL);
	snprintf(url, len, "tcp://127.0.0.1:%d", harness_remote_port(p));
}

/*
 * 16 idle peers from one address take max_remote_per_address (4) places,
 * not all 16 of max_remote_clients: a newcomer's Status is served at once.
 */
static void test_remote_per_address(void **state)
{
	struct fpgad_proc p;
	char url[64];
	int fd[PEERS], port;

	(void)state;
	start_remote(&p, "--remote-idle-timeout-ms 0", url, sizeof(url));
	port = harness_remote_port(&p);
	for (int i = 0; i < PEERS; i++)
		fd[i] = idle_req_peer(2, port);
	/* The fifth on is closed at once. */
	assert_true(closed_within(fd[PEERS - 1], 5000));
	assert_true(remote_status_within(url, SERVED_WITHIN_MS));
	assert_true(harness_log_contains(&p, "connections from its address already (--remote-max-per-address 4)"));
	for (int i = 0; i < PEERS; i++)
		close(fd[i]);
	harness_stop_ok(&p);
}

/*
 * 16 idle peers from 16 addresses fill max_remote_clients (beside one
 * client that keeps asking); they are closed after remote_idle_timeout_ms
 * without a request, and a newcomer is served.  The client that asks all
 * along is never closed.
 */
static void test_remote_idle_timeout(void **state)
{
	struct fpgad_status *s;
	struct fpgad_proc p;
	fpgad_client *busy;
	char url[64];
	int fd[PEERS], port;

	(void)state;
	start_remote(&p, "--remote-idle-timeout-ms 1000", url, sizeof(url));
	port = harness_remote_port(&p);
	assert_int_equal(fpgad_connect(url, &busy), 0);
	/* It asks between peers, then every 100 ms for 2.5 timeouts. */
	for (int i = 0; i < PEERS + 25; i++) {
		if (i < PEERS)
			fd[i] = idle_req_peer(2 + i, port);
		else
			usleep(100000);
		assert_int_equal(fpgad_status_get(busy, &s), 0);
		fpgad_status_free(s);
	}
	assert_true(closed_within(fd[0], 5000));
	assert_false(harness_log_contains(&p, "remote: closing tcp 127.0.0.1:"));
	assert_true(remote_status_within(url, SERVED_WITHIN_MS));
	assert_true(harness_log_contains(&p, "nothing answered for 1000 ms"));
	fpgad_disconnect(busy);
	for (int i = 0; i < PEERS; i++)
		close(fd[i]);
	harness_stop_ok(&p);
}

static void start_metrics(struct fpgad_proc *p, const char *extra)
{
	char conf[256];

	snprintf(conf, sizeof(conf), "[exporter]\nargs = --metrics http://127.0.0.1:0/metrics %s\n", extra);
	harness_start_ok(p, conf, NULL);
}

static int metrics_port(const struct fpgad_proc *p)
{
	return harness_metrics_port(p);
}

/*
 * 8 connections from one address (the default max_clients) hold
 * max_per_address (2) places: a scraper elsewhere is served at once.
 */
static void test_metrics_per_address(void **state)
{
	struct fpgad_proc p;
	int fd[8], port;

	(void)state;
	start_metrics(&p, "--metrics-idle-timeout-ms 0");
	port = metrics_port(&p);
	for (int i = 0; i < 8; i++)
		fd[i] = connect_from(2, port);
	assert_true(closed_within(fd[7], 5000));
	assert_true(scrape_within(port, SERVED_WITHIN_MS));
	assert_true(harness_log_contains(&p, "connections from its address already (--metrics-max-per-address 2)"));
	for (int i = 0; i < 8; i++)
		close(fd[i]);
	harness_stop_ok(&p);
}

/*
 * Drip @len bytes of @text into @fd, a byte every 200 ms: whether the peer closed the
 * connection before all of it was sent.
 */
static bool dropped_while_dripping(int fd, const char *text, size_t len)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 200000 };
	char b;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (const char *p = text; p < text + len; p++) {
		if (send(fd, p, 1, MSG_NOSIGNAL) != 1)
			return true;
		if (read(fd, &b, 1) == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			return true;
	}
	return false;
}

/*
 * 8 slow-header scrapers from 8 addresses (a byte every 200 ms) fill
 * max_clients; each is dropped once its header is not whole within
 * --request-timeout-ms (600), well before it would finish, however long
 * the idle timeout, and a scraper is served again.
 */
static void test_metrics_slow_headers(void **state)
{
	static const char drip[] = "GET /metrics HTTP/1.1\r\nHost: fpgad\r\nUser-Agent: a-slow-one\r\n\r\n";
	struct fpgad_proc p;
	int fd[8], port;

	(void)state;
	start_metrics(&p, "--metrics-idle-timeout-ms 60000 --request-timeout-ms 600");
	port = metrics_port(&p);
	for (int i = 0; i < 8; i++) {
		fd[i] = connect_from(2 + i, port);
		assert_int_equal(write(fd[i], "G", 1), 1);
	}
	assert_true(dropped_while_dripping(fd[0], drip + 1, sizeof(drip) - 2));
	assert_true(scrape_within(port, SERVED_WITHIN_MS));
	assert_true(harness_log_contains(&p, "a request header not whole within 600 ms"));
	for (int i = 0; i < 8; i++)
		close(fd[i]);
	harness_stop_ok(&p);
}

/*
 * A remote request sent a byte at a time (after the SP header) is
 * dropped once it is not whole and answered within --request-timeout-ms,
 * however long the idle timeout.
 */
static void test_remote_slow_request(void **state)
{
	static const unsigned char req0[8] = { 0, 'S', 'P', 0, 0, 48, 0, 0 };
	/* A 40-byte message: its length, then what never all comes. */
	static const char body[] = "\0\0\0\0\0\0\0\x28" "0123456789012345678901234567890123456789";
	struct fpgad_proc p;
	unsigned char rep0[8];
	char url[64];
	int fd, port;

	(void)state;
	start_remote(&p, "--remote-idle-timeout-ms 60000 --request-timeout-ms 600", url, sizeof(url));
	port = harness_remote_port(&p);
	fd = connect_from(2, port);
	assert_int_equal(write(fd, req0, sizeof(req0)), (ssize_t)sizeof(req0));
	assert_int_equal(read(fd, rep0, sizeof(rep0)), (ssize_t)sizeof(rep0));
	assert_true(dropped_while_dripping(fd, body, sizeof(body) - 1));
	assert_true(harness_log_contains(&p, "a request not complete or not answered for 600 ms"));
	assert_true(remote_status_within(url, SERVED_WITHIN_MS));
	close(fd);
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remote_per_address),
		cmocka_unit_test(test_remote_idle_timeout),
		cmocka_unit_test(test_metrics_per_address),
		cmocka_unit_test(test_metrics_slow_headers),
		cmocka_unit_test(test_remote_slow_request),
	};

	return cmocka_run_group_tests_name("integration-limits", tests, NULL, NULL);
}
