// SPDX-License-Identifier: MIT
/* test_protocol.c - request decoding and checking, response encoding. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "protocol.h"

static size_t pack(const Fpgad__Request *req, uint8_t *buf)
{
	return fpgad__request__pack(req, buf);
}

static int decode(const uint8_t *buf, size_t len, Fpgad__Request **req,
		  Fpgad__StatusCode *code, char *err)
{
	uint64_t id;

	return protocol_decode(buf, len, req, &id, code, err, 256);
}

static void test_hello_round_trip(void **state)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT, *out;
	Fpgad__Hello h = FPGAD__HELLO__INIT;
	Fpgad__StatusCode code;
	uint8_t buf[256];
	char err[256];
	size_t len;

	(void)state;
	h.version = 1;
	h.min_version = 1;
	h.software = "test";
	req.id = 42;
	req.body_case = FPGAD__REQUEST__BODY_HELLO;
	req.hello = &h;
	len = pack(&req, buf);
	assert_int_equal(decode(buf, len, &out, &code, err), 0);
	assert_int_equal(out->id, 42);
	assert_int_equal(out->body_case, FPGAD__REQUEST__BODY_HELLO);
	assert_int_equal(out->hello->version, 1);
	assert_string_equal(out->hello->software, "test");
	protocol_free(out);
}

static void test_garbage_is_bad_request(void **state)
{
	static const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01 };
	Fpgad__Request *out = NULL;
	Fpgad__StatusCode code = 0;
	char err[256];

	(void)state;
	assert_int_equal(decode(junk, sizeof(junk), &out, &code, err), -EBADMSG);
	assert_null(out);
	assert_int_equal(code, FPGAD__STATUS_CODE__STATUS_BAD_REQUEST);
	assert_non_null(strstr(err, "malformed request: 6 bytes"));
}

static void test_empty_body_is_unknown(void **state)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT, *out = NULL;
	Fpgad__StatusCode code = 0;
	uint8_t buf[64];
	char err[256];
	size_t len;

	(void)state;
	req.id = 9;
	len = pack(&req, buf);
	assert_int_equal(decode(buf, len, &out, &code, err), -EINVAL);
	assert_null(out);
	assert_int_equal(code, FPGAD__STATUS_CODE__STATUS_UNKNOWN_REQUEST);
	assert_non_null(strstr(err, "unknown request type"));
}

/* A body field number this fpgad does not know is kept as unknown. */
static void test_future_body_is_unknown(void **state)
{
	/* id = 1 (field 1 varint), field 99 length-delimited, empty. */
	static const uint8_t future[] = { 0x08, 0x01, 0x9a, 0x06, 0x00 };
	Fpgad__Request *out = NULL;
	Fpgad__StatusCode code = 0;
	char err[256];

	(void)state;
	assert_int_equal(decode(future, sizeof(future), &out, &code, err), -EINVAL);
	assert_int_equal(code, FPGAD__STATUS_CODE__STATUS_UNKNOWN_REQUEST);
}

static void check_name(const char *name, int want)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT, *out = NULL;
	Fpgad__ChannelStatsRequest cs = FPGAD__CHANNEL_STATS_REQUEST__INIT;
	Fpgad__StatusCode code = 0;
	uint8_t buf[256];
	char err[256];
	size_t len;
	int r;

	cs.name = (char *)name;
	req.body_case = FPGAD__REQUEST__BODY_CHANNEL_STATS;
	req.channel_stats = &cs;
	len = pack(&req, buf);
	r = decode(buf, len, &out, &code, err);
	assert_int_equal(r, want);
	if (r == 0) {
		assert_string_equal(out->channel_stats->name, name);
		protocol_free(out);
	} else {
		assert_int_equal(code, FPGAD__STATUS_CODE__STATUS_BAD_REQUEST);
		assert_non_null(strstr(err, "ChannelStats: invalid channel name"));
	}
}

static void test_channel_names(void **state)
{
	(void)state;
	check_name("c2h0", 0);
	check_name("cam_0-left", 0);
	check_name("", -EINVAL);
	check_name("../etc", -EINVAL);
	check_name("a b", -EINVAL);
	check_name("0123456789012345678901234567890123", -EINVAL);
}

/*
 * @req packed, with the byte '@' of its string field turned into a NUL:
 * protobuf-c would keep what comes before it; protocol_decode() refuses
 * the request and names the field.
 */
static void check_nul(const Fpgad__Request *req, const char *want)
{
	Fpgad__Request *out = NULL;
	Fpgad__StatusCode code = 0;
	uint8_t buf[256];
	char err[256];
	size_t len = pack(req, buf);
	uint8_t *at = memchr(buf, '@', len);

	assert_non_null(at);
	*at = '\0';
	assert_int_equal(decode(buf, len, &out, &code, err), -EINVAL);
	assert_null(out);
	assert_int_equal(code, FPGAD__STATUS_CODE__STATUS_BAD_REQUEST);
	if (strcmp(err, want) != 0)
		fail_msg("got '%s', want '%s'", err, want);
}

static void test_nul_in_strings(void **state)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT, *out;
	Fpgad__OpenChannelRequest oc = FPGAD__OPEN_CHANNEL_REQUEST__INIT;
	Fpgad__CloseChannelRequest cc = FPGAD__CLOSE_CHANNEL_REQUEST__INIT;
	Fpgad__ChannelStatsRequest cs = FPGAD__CHANNEL_STATS_REQUEST__INIT;
	Fpgad__ResetChannelRequest rc = FPGAD__RESET_CHANNEL_REQUEST__INIT;
	Fpgad__Hello h = FPGAD__HELLO__INIT;
	Fpgad__StatusCode code;
	uint8_t buf[256];
	char err[256];

	(void)state;
	req.id = 3;
	req.body_case = FPGAD__REQUEST__BODY_OPEN_CHANNEL;
	req.open_channel = &oc;
	oc.name = "c2h0@x";
	oc.shared = true;
	check_nul(&req, "OpenChannel: string field open_channel.name contains a NUL byte");
	/* Without the NUL the name is refused for what it is, no more. */
	oc.name = "c2h0";
	assert_int_equal(decode(buf, pack(&req, buf), &out, &code, err), 0);
	assert_string_equal(out->open_channel->name, "c2h0");
	protocol_free(out);

	req.body_case = FPGAD__REQUEST__BODY_CLOSE_CHANNEL;
	req.close_channel = &cc;
	cc.name = "c2h0@x";
	check_nul(&req, "CloseChannel: string field close_channel.name contains a NUL byte");
	req.body_case = FPGAD__REQUEST__BODY_CHANNEL_STATS;
	req.channel_stats = &cs;
	cs.name = "@";
	check_nul(&req, "ChannelStats: string field channel_stats.name contains a NUL byte");
	req.body_case = FPGAD__REQUEST__BODY_RESET_CHANNEL;
	req.reset_channel = &rc;
	rc.name = "c2h0@";
	check_nul(&req, "ResetChannel: string field reset_channel.name contains a NUL byte");
	/* Any string field, not only names. */
	req.body_case = FPGAD__REQUEST__BODY_HELLO;
	req.hello = &h;
	h.version = 1;
	h.software = "libfpgad@evil";
	check_nul(&req, "Hello: string field hello.software contains a NUL byte");
}

static void test_request_id(void **state)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__ChannelStatsRequest cs = FPGAD__CHANNEL_STATS_REQUEST__INIT;
	static const uint8_t junk[] = { 0xff, 0xff, 0xff };
	/* field 13 (6 bytes) first, then id = 300 */
	static const uint8_t late_id[] = { 0x6a, 0x04, 0x0a, 0x02, 'a', 'b', 0x08, 0xac, 0x02 };
	uint8_t buf[128];

	(void)state;
	req.id = 1234567;
	req.body_case = FPGAD__REQUEST__BODY_CHANNEL_STATS;
	req.channel_stats = &cs;
	cs.name = "c2h0";
	assert_int_equal(protocol_request_id(buf, pack(&req, buf)), 1234567);
	assert_int_equal(protocol_request_id(late_id, sizeof(late_id)), 300);
	assert_int_equal(protocol_request_id(junk, sizeof(junk)), 0);
	assert_int_equal(protocol_request_id(late_id, 5), 0);
	assert_int_equal(protocol_request_id("", 0), 0);
}

static void test_encode(void **state)
{
	Fpgad__Response resp = FPGAD__RESPONSE__INIT, *back;
	void *buf;
	size_t len;

	(void)state;
	resp.id = 7;
	resp.code = FPGAD__STATUS_CODE__STATUS_BUSY;
	resp.message = "channel c2h0 is leased by pid 12";
	assert_int_equal(protocol_encode(&resp, &buf, &len), 0);
	back = fpgad__response__unpack(NULL, len, buf);
	assert_non_null(back);
	assert_int_equal(back->id, 7);
	assert_int_equal(back->code, FPGAD__STATUS_CODE__STATUS_BUSY);
	assert_string_equal(back->message, resp.message);
	fpgad__response__free_unpacked(back, NULL);
	free(buf);
}

static void test_request_names(void **state)
{
	(void)state;
	assert_string_equal(protocol_request_name(FPGAD__REQUEST__BODY_OPEN_CHANNEL),
			    "OpenChannel");
	assert_string_equal(protocol_request_name(FPGAD__REQUEST__BODY__NOT_SET),
			    "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hello_round_trip),
		cmocka_unit_test(test_garbage_is_bad_request),
		cmocka_unit_test(test_empty_body_is_unknown),
		cmocka_unit_test(test_future_body_is_unknown),
		cmocka_unit_test(test_channel_names),
		cmocka_unit_test(test_nul_in_strings),
		cmocka_unit_test(test_request_id),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_request_names),
	};

	return cmocka_run_group_tests_name("protocol", tests, NULL, NULL);
}
