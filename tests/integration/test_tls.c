// SPDX-License-Identifier: MIT
/*
 * test_tls.c - the remote listener over TLS as an operator meets it: a
 * certificate for the host's address, a server-name override, and one
 * clear cause for each refusal (unknown CA, name or address mismatch,
 * expired, not yet valid, TLS on one side only), with certificates that
 * openssl makes for the suite.
 */
#include <errno.h>
#include <mbedtls/version.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fpgad.h"
#include "harness.h"

/* mbed TLS 3.5 and later match IP addresses in certificates themselves. */
#define TLS_MATCHES_ADDRESSES (MBEDTLS_VERSION_NUMBER >= 0x03050000)

static char dir[] = "/tmp/fpgad-tls.XXXXXX";

/* Make the CAs and the certificates. */
static int setup(void **state)
{
	char cmd[4096];

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "set -e; cd %s; exec >openssl.log 2>&1\n"
		 "for ca in ca other; do\n"
		 "  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=fpgad-test-$ca "
		 "    -keyout $ca.key -out $ca.crt\n"
		 "done\n"
		 "printf '[ca]\\ndefault_ca = d\\n[d]\\ndatabase = index.txt\\nnew_certs_dir = .\\n"
		 "serial = serial\\ndefault_md = sha256\\npolicy = p\\ncopy_extensions = copy\\n"
		 "[p]\\ncommonName = supplied\\n' > ca.cnf\n"
		 ": > index.txt; echo 01 > serial\n"
		 /* cert NAME SAN START END */
		 "cert() {\n"
		 "  openssl req -newkey rsa:2048 -nodes -subj /CN=$1 -addext subjectAltName=$2 "
		 "    -keyout $1.key -out $1.csr\n"
		 "  openssl ca -batch -notext -config ca.cnf -cert ca.crt -keyfile ca.key "
		 "    -startdate $3 -enddate $4 -in $1.csr -out $1.crt\n"
		 "  cat $1.crt $1.key > $1.pem\n"
		 "}\n"
		 "cert ip IP:127.0.0.1 20200101000000Z 20990101000000Z\n"
		 "cert both DNS:fpgad.test,IP:127.0.0.1 20200101000000Z 20990101000000Z\n"
		 "cert expired DNS:localhost,IP:127.0.0.1 20200101000000Z 20200201000000Z\n"
		 "cert future DNS:localhost,IP:127.0.0.1 20980101000000Z 20990101000000Z\n",
		 dir);
	if (system(cmd) != 0) {
		print_message("openssl cannot make the test certificates (%s/openssl.log)\n", dir);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	char cmd[256];

	(void)state;
	unsetenv("FPGAD_TLS_CA");
	unsetenv("FPGAD_TLS_SERVER_NAME");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Start fpgad with a remote listener: tls+tcp with @cert, or plain tcp. */
static int start(struct fpgad_proc *p, const char *cert)
{
	char conf[512];
	if (cert)
		snprintf(conf, sizeof(conf),
			 "[exporter]\nargs = --remote tls+tcp://127.0.0.1:0 --tls-cert-key %s/%s.pem\n",
			 dir, cert);
	else
		snprintf(conf, sizeof(conf), "[exporter]\nargs = --remote tcp://127.0.0.1:0\n");
	harness_start_ok(p, conf, NULL);
	return harness_bound_port(p, cert ? "remote status on tls+tcp://127.0.0.1:" : "remote status on tcp://127.0.0.1:");
}

static void set_ca(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s.crt", dir, name);
	setenv("FPGAD_TLS_CA", path, 1);
}

/* Connect to @url: 0 and a working status, or the errno; the message. */
static int try_connect(const char *url, char *why, size_t len)
{
	struct fpgad_status *s;
	fpgad_client *c;
	int r = fpgad_connect(url, &c);

	snprintf(why, len, "%s", fpgad_errmsg(NULL));
	if (r < 0)
		return r;
	assert_string_equal(fpgad_errmsg(NULL), "");
	r = fpgad_status_get(c, &s);
	if (r == 0)
		fpgad_status_free(s);
	fpgad_disconnect(c);
	return r;
}

#define assert_contains(hay, needle) do { \
	if (!strstr((hay), (needle))) \
		fail_msg("'%s' does not contain '%s'", (hay), (needle)); \
} while (0)

/* A certificate for 127.0.0.1 only, reached at tls+tcp://127.0.0.1. */
static void test_address_certificate(void **state)
{
	char url[64], why[256];
	struct fpgad_proc p;
	int r;

	(void)state;
	snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%d", start(&p, "ip"));
	set_ca("ca");
	r = try_connect(url, why, sizeof(why));
	if (TLS_MATCHES_ADDRESSES) {
		assert_int_equal(r, 0);
	} else {
		/* Not an "Input/output error": the cause and the way out. */
		assert_int_equal(r, -EACCES);
		assert_contains(why, "certificate is for IP:127.0.0.1");
		assert_contains(why, "cannot verify an address");
		assert_contains(why, "FPGAD_TLS_SERVER_NAME");
		assert_contains(why, "it holds none");
	}
	harness_stop_ok(&p);
}

/* By address, verified under the DNS name the certificate also holds. */
static void test_server_name_override(void **state)
{
	char url[64], why[256];
	struct fpgad_proc p;

	(void)state;
	snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%d", start(&p, "both"));
	set_ca("ca");
	setenv("FPGAD_TLS_SERVER_NAME", "fpgad.test", 1);
	assert_int_equal(try_connect(url, why, sizeof(why)), 0);
	setenv("FPGAD_TLS_SERVER_NAME", "other.test", 1);
	assert_int_equal(try_connect(url, why, sizeof(why)), -EACCES);
	assert_contains(why, "is for DNS:fpgad.test, IP:127.0.0.1, not other.test (FPGAD_TLS_SERVER_NAME)");
	setenv("FPGAD_TLS_SERVER_NAME", "bad name", 1);
	assert_int_equal(try_connect(url, why, sizeof(why)), -EINVAL);
	assert_contains(why, "FPGAD_TLS_SERVER_NAME: 'bad name' is not a host name");
	unsetenv("FPGAD_TLS_SERVER_NAME");
	harness_stop_ok(&p);
}

static void test_unknown_ca(void **state)
{
	char url[64], why[256];
	struct fpgad_proc p;

	(void)state;
	snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%d", start(&p, "both"));
	set_ca("other");
	setenv("FPGAD_TLS_SERVER_NAME", "fpgad.test", 1);
	assert_int_equal(try_connect(url, why, sizeof(why)), -EACCES);
	assert_contains(why, "unknown CA: fpgad's certificate is signed by 'CN=fpgad-test-ca', which is not in FPGAD_TLS_CA=");
	unsetenv("FPGAD_TLS_SERVER_NAME");
	harness_stop_ok(&p);
}

static void test_name_mismatch(void **state)
{
	char url[64], why[256];
	struct fpgad_proc p;

	(void)state;
	snprintf(url, sizeof(url), "tls+tcp://localhost:%d", start(&p, "ip"));
	set_ca("ca");
	assert_int_equal(try_connect(url, why, sizeof(why)), -EACCES);
	assert_contains(why, "fpgad's certificate is for IP:127.0.0.1, not localhost");
	harness_stop_ok(&p);
}

static void test_expired_and_not_yet_valid(void **state)
{
	char url[64], why[256];
	struct fpgad_proc p, q;

	(void)state;
	snprintf(url, sizeof(url), "tls+tcp://localhost:%d", start(&p, "expired"));
	set_ca("ca");
	assert_int_equal(try_connect(url, why, sizeof(why)), -EACCES);
	assert_contains(why, "fpgad's certificate expired on 2020-02-01 00:00:00 UTC");
	harness_stop_ok(&p);
	snprintf(url, sizeof(url), "tls+tcp://localhost:%d", start(&q, "future"));
	assert_int_equal(try_connect(url, why, sizeof(why)), -EACCES);
	assert_contains(why, "fpgad's certificate is not valid before 2098-01-01 00:00:00 UTC");
	harness_stop_ok(&q);
}

/* TLS on one side only, either way round. */
static void test_tls_on_one_side(void **state)
{
	char url[64], why[256];
	struct fpgad_proc p, q;
	int port;

	(void)state;
	port = start(&p, "both");
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", port);
	assert_int_equal(try_connect(url, why, sizeof(why)), -EPROTO);
	assert_contains(why, "fpgad listens there with TLS: use tls+tcp://127.0.0.1:");
	harness_stop_ok(&p);

	port = start(&q, NULL);
	snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%d", port);
	set_ca("ca");
	assert_int_equal(try_connect(url, why, sizeof(why)), -EPROTO);
	assert_contains(why, "fpgad listens there without TLS: use tcp://127.0.0.1:");
	harness_stop_ok(&q);
}

static void test_ca_file(void **state)
{
	char url[64], why[256];
	struct fpgad_proc p;

	(void)state;
	snprintf(url, sizeof(url), "tls+tcp://127.0.0.1:%d", start(&p, "both"));
	unsetenv("FPGAD_TLS_CA");
	assert_int_equal(try_connect(url, why, sizeof(why)), -EINVAL);
	assert_contains(why, "set FPGAD_TLS_CA to the CA file");
	setenv("FPGAD_TLS_CA", "/nonexistent/ca.crt", 1);
	assert_int_equal(try_connect(url, why, sizeof(why)), -EINVAL);
	assert_contains(why, "FPGAD_TLS_CA=/nonexistent/ca.crt: no such file");
	harness_stop_ok(&p);
}

/* fpgactl prints the cause on one line and exits 1. */
static void test_fpgactl_says_why(void **state)
{
	char cmd[512], out[1024];
	struct fpgad_proc p;

	(void)state;
	snprintf(cmd, sizeof(cmd),
		 "FPGAD_TLS_CA=%s/other.crt %s --url tls+tcp://127.0.0.1:%d status 2>&1",
		 dir, harness_bin("fpgactl"), start(&p, "both"));
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	assert_contains(out, "fpgactl: cannot reach fpgad at tls+tcp://127.0.0.1:");
	assert_contains(out, ": unknown CA: ");
	assert_null(strchr(strchr(out, '\n') + 1, '\n'));
	harness_stop_ok(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_address_certificate),
		cmocka_unit_test(test_server_name_override),
		cmocka_unit_test(test_unknown_ca),
		cmocka_unit_test(test_name_mismatch),
		cmocka_unit_test(test_expired_and_not_yet_valid),
		cmocka_unit_test(test_tls_on_one_side),
		cmocka_unit_test(test_ca_file),
		cmocka_unit_test(test_fpgactl_says_why),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests_name("integration-tls", tests, setup, teardown);
}
