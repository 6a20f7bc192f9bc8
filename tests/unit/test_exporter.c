// SPDX-License-Identifier: MIT
/*
 * test_exporter.c - fpgad-exporter's parts that need no fpgad: the
 * metrics URL check (http.c) and the relay's refusals (libfpgad's
 * forward.c), which decide without reaching fpgad.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <cmocka.h>

#include "fpgad.h"
#include "fpgad.pb-c.h"
#include "http.h"

/* --metrics URL: http://ADDRESS:PORT/PATH, or the error says why not. */
static void test_metrics_url(void **state)
{
	static const struct {
		const char *url, *what;
	} bad[] = {
		{ "https://0.0.0.0:9110/metrics", "served over plain http only" },
		{ "tcp://0.0.0.0:9110", "is not http://ADDRESS:PORT/PATH" },
		{ "0.0.0.0:9110/metrics", "is not http://ADDRESS:PORT/PATH" },
		{ "http://:9110/metrics", "has no address" },
		{ "http://user@host:9110/metrics", "'user@host' is not an IPv4 address" },
		{ "http://[::1:9110/metrics", "the address in [] is not an IPv6 address" },
		{ "http://[fe80::zz]:9110/metrics", "the address in [] is not an IPv6 address" },
		{ "http://127.0.0.1/metrics", "has no port" },
		{ "http://127.0.0.1:/metrics", "has no port" },
		{ "http://127.0.0.1:65536/metrics", "port '65536' is not a number from 0 to 65535" },
		{ "http://127.0.0.1:91x/metrics", "port '91x' is not a number" },
		{ "http://127.0.0.1:9110", "has no path after the port" },
		{ "http://127.0.0.1:9110/metrics?x=1", "a path holds letters, digits and" },
		{ "http://127.0.0.1:9110/met rics", "a path holds letters, digits and" },
	};
	static const char *const good[] = {
		"http://0.0.0.0:9110/metrics", "http://[::]:1/", "http://localhost:65535/m-1.x_~",
		"http://[fe80::1]:9110/metrics", "http://127.0.0.1:0/metrics",
	};
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(http_check_url(bad[i].url, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bad[i].what))
			fail_msg("%s: got '%s', want '%s'", bad[i].url, err, bad[i].what);
		assert_non_null(strstr(err, "--metrics"));
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (http_check_url(good[i], err, sizeof(err)) < 0)
			fail_msg("%s: %s", good[i], err);
}

/* Relay @req (packed) with no connection; the decoded reply. */
static Fpgad__Response *relay(const void *buf, size_t len, size_t max,
			      char *why, size_t whylen, int *ret_r)
{
	Fpgad__Response *resp;
	void *reply = NULL;
	size_t rlen = 0;

	*ret_r = fpgad_relay(NULL, buf, len, max, &reply, &rlen, why, whylen);
	assert_non_null(reply);
	resp = fpgad__response__unpack(NULL, rlen, reply);
	free(reply);
	assert_non_null(resp);
	return resp;
}

static size_t pack(Fpgad__Request *req, uint8_t *buf)
{
	return fpgad__request__pack(req, buf);
}

/*
 * What a remote peer may not do is refused with the status fpgad would
 * give, its own request id, and a reason; what it may do is refused only
 * for want of fpgad.
 */
static void test_relay_refusals(void **state)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__OpenChannelRequest open = FPGAD__OPEN_CHANNEL_REQUEST__INIT;
	Fpgad__StatusRequest st = FPGAD__STATUS_REQUEST__INIT;
	Fpgad__ChannelStatsRequest cs = FPGAD__CHANNEL_STATS_REQUEST__INIT;
	Fpgad__MetricsRequest mr = FPGAD__METRICS_REQUEST__INIT;
	Fpgad__Response *resp;
	uint8_t buf[512];
	char why[256];
	size_t len;
	int r;

	(void)state;
	/* A mutating request. */
	req.id = 77;
	req.body_case = FPGAD__REQUEST__BODY_OPEN_CHANNEL;
	open.name = "c2h0";
	req.open_channel = &open;
	len = pack(&req, buf);
	resp = relay(buf, len, 65536, why, sizeof(why), &r);
	assert_int_equal(r, 0);
	assert_int_equal(resp->id, 77);
	assert_int_equal(resp->code, FPGAD__STATUS_CODE__STATUS_DENIED);
	assert_string_equal(resp->message,
			    "OpenChannel is not allowed on the remote (read-only) listener");
	assert_string_equal(why, resp->message);
	fpgad__response__free_unpacked(resp, NULL);

	/* Metrics is the exporter's own question, not a remote peer's. */
	req.id = 78;
	req.body_case = FPGAD__REQUEST__BODY_METRICS;
	req.metrics = &mr;
	len = pack(&req, buf);
	resp = relay(buf, len, 65536, why, sizeof(why), &r);
	assert_int_equal(resp->code, FPGAD__STATUS_CODE__STATUS_DENIED);
	fpgad__response__free_unpacked(resp, NULL);

	/* Malformed bytes, and an invalid channel name: as fpgad says. */
	resp = relay("\xff\xff\xff", 3, 65536, why, sizeof(why), &r);
	assert_int_equal(resp->code, FPGAD__STATUS_CODE__STATUS_BAD_REQUEST);
	assert_non_null(strstr(resp->message, "malformed request"));
	fpgad__response__free_unpacked(resp, NULL);
	req.id = 79;
	req.body_case = FPGAD__REQUEST__BODY_CHANNEL_STATS;
	cs.name = "../etc";
	req.channel_stats = &cs;
	len = pack(&req, buf);
	resp = relay(buf, len, 65536, why, sizeof(why), &r);
	assert_int_equal(resp->id, 79);
	assert_int_equal(resp->code, FPGAD__STATUS_CODE__STATUS_BAD_REQUEST);
	assert_non_null(strstr(resp->message, "invalid channel name"));
	fpgad__response__free_unpacked(resp, NULL);

	/* Above the size limit: refused unread, with the id it carries. */
	req.id = 80;
	req.body_case = FPGAD__REQUEST__BODY_STATUS;
	req.status = &st;
	len = pack(&req, buf);
	resp = relay(buf, len, len - 1, why, sizeof(why), &r);
	assert_int_equal(resp->id, 80);
	assert_int_equal(resp->code, FPGAD__STATUS_CODE__STATUS_LIMIT);
	fpgad__response__free_unpacked(resp, NULL);

	/* A read-only request with no fpgad: said so, and the errno. */
	resp = relay(buf, len, 65536, why, sizeof(why), &r);
	assert_int_equal(r, -ENOTCONN);
	assert_int_equal(resp->id, 80);
	assert_int_equal(resp->code, FPGAD__STATUS_CODE__STATUS_NO_DEVICE);
	assert_non_null(strstr(resp->message, "fpgad does not answer"));
	fpgad__response__free_unpacked(resp, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metrics_url),
		cmocka_unit_test(test_relay_refusals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
