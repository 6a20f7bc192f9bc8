// SPDX-License-Identifier: MIT
/*
 * dial.c - reaching fpgad: the TLS settings of a tls+tcp:// dialer, and
 * the cause of a failed connection in words an operator can act on.
 *
 * nng reports a failed TLS handshake as one error code, whatever went
 * wrong.  When a dial fails at the handshake, a diagnosis connection made
 * here with mbed TLS (nng's TLS engine on Debian) finds out why: a plain
 * tcp:// listener where TLS was asked for or the reverse, a certificate
 * signed by a CA not in $FPGAD_TLS_CA, expired or not yet valid, or made
 * out for another name or address.  The diagnosis verifies nothing on its
 * own behalf: it only explains a refusal; the connection that is used is
 * always nng's, verified by nng.
 *
 * Addresses: the name nng verifies is the URL's host, or
 * $FPGAD_TLS_SERVER_NAME when set.  mbed TLS before 3.5 matches names
 * only, never the IP addresses of a certificate; with such a library, a
 * certificate for an address is reached by the address with
 * $FPGAD_TLS_SERVER_NAME naming a DNS name that the certificate holds,
 * and the error says so.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/oid.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>
#if MBEDTLS_VERSION_MAJOR >= 3
#include <psa/crypto.h>
#endif
#include <nng/nng.h>
#include <nng/supplemental/tls/tls.h>
#include <grp.h>
#include <netdb.h>
#include <poll.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client_internal.h"
#include "dial.h"
#include "errmap.h"

/* subjectAltName GeneralName tags (RFC 5280): dNSName, iPAddress. */
#define SAN_DNS 2
#define SAN_IP 7

#define DIAGNOSIS_TIMEOUT_MS 2000
#define SP_PEEK_MS 300

/* Why the calling thread's last fpgad_connect() failed in dial(). */
static _Thread_local char dial_error[256];

const char *client_dial_errmsg(void)
{
	return dial_error;
}

static void dial_fail_msg(fpgad_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void dial_fail_msg(fpgad_client *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	snprintf(dial_error, sizeof(dial_error), "%s", c->errmsg);
}

void client_dial_begin(void)
{
	dial_error[0] = '\0';
}

void client_dial_set_errmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(dial_error, sizeof(dial_error), fmt, ap);
	va_end(ap);
}

/* $FPGAD_TLS_SERVER_NAME, when set: "" when unset, NULL when invalid. */
static const char *server_name_env(void)
{
	const char *s = getenv("FPGAD_TLS_SERVER_NAME");

	if (!s || !s[0])
		return "";
	if (strlen(s) > 253 || strpbrk(s, " \t\r\n/"))
		return NULL;
	return s;
}

int client_dial_tls_setup(fpgad_client *c, nng_dialer d, const char *ca,
			  const char *host)
{
	const char *name = server_name_env();
	int rv;

	if (!ca || !ca[0]) {
		dial_fail_msg(c, "%s: set FPGAD_TLS_CA to the CA file that signed fpgad's certificate",
			      c->url);
		return -EINVAL;
	}
	if (!name) {
		dial_fail_msg(c, "FPGAD_TLS_SERVER_NAME: '%s' is not a host name",
			      getenv("FPGAD_TLS_SERVER_NAME"));
		return -EINVAL;
	}
	rv = nng_dialer_set_string(d, NNG_OPT_TLS_CA_FILE, ca);
	if (rv) {
		dial_fail_msg(c, "FPGAD_TLS_CA=%s: %s", ca,
			      rv == NNG_ENOENT ? "no such file" :
			      rv == NNG_EPERM ? "permission denied" :
			      "not a PEM file of CA certificates");
		return -EINVAL;
	}
	if (!name[0])
		name = host ? host : "";
	if (name[0]) {
		rv = nng_dialer_set_string(d, NNG_OPT_TLS_SERVER_NAME, name);
		if (rv) {
			dial_fail_msg(c, "FPGAD_TLS_SERVER_NAME=%s: %s", name,
				      nng_strerror(rv));
			return errmap_nng(rv);
		}
	}
	return 0;
}

/* --- the URL ------------------------------------------------------------- */

struct endpoint {
	bool tls;
	char host[256];		/* without brackets */
	char port[8];
};

static int parse_url(const char *url, struct endpoint *ret)
{
	struct endpoint ep = { 0 };
	const char *p, *end;
	size_t n;

	if (strncmp(url, "tls+tcp://", 10) == 0) {
		ep.tls = true;
		p = url + 10;
	} else if (strncmp(url, "tcp://", 6) == 0) {
		p = url + 6;
	} else {
		return -EINVAL;
	}
	if (*p == '[') {
		end = strchr(++p, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		n = (size_t)(end - p);
		end++;
	} else {
		end = strrchr(p, ':');
		if (!end)
			return -EINVAL;
		n = (size_t)(end - p);
	}
	if (!n || n >= sizeof(ep.host) || strlen(end + 1) >= sizeof(ep.port) ||
	    !end[1] || strchr(end + 1, '/'))
		return -EINVAL;
	memcpy(ep.host, p, n);
	snprintf(ep.port, sizeof(ep.port), "%s", end + 1);
	*ret = ep;
	return 0;
}

static size_t parse_ip(const char *name, unsigned char ret[16]);

size_t client_dial_addresses(const char *url, char (*out)[CLIENT_URL_MAX],
			     size_t max, char *name, size_t namelen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res, *ai;
	unsigned char ip[16];
	struct endpoint ep;
	size_t n = 0;

	name[0] = '\0';
	if (parse_url(url, &ep) < 0 || parse_ip(ep.host, ip) ||
	    getaddrinfo(ep.host, ep.port, &hints, &res) != 0) {
		snprintf(out[0], CLIENT_URL_MAX, "%s", url);
		return 1;
	}
	for (ai = res; ai && n < max; ai = ai->ai_next) {
		char addr[INET6_ADDRSTRLEN] = "";
		const void *a = ai->ai_family == AF_INET6 ?
			(const void *)&((struct sockaddr_in6 *)ai->ai_addr)->sin6_addr :
			(const void *)&((struct sockaddr_in *)ai->ai_addr)->sin_addr;
		bool seen = false;

		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		inet_ntop(ai->ai_family, a, addr, sizeof(addr));
		snprintf(out[n], CLIENT_URL_MAX, ai->ai_family == AF_INET6 ?
			 "%s[%s]:%s" : "%s%s:%s", ep.tls ? "tls+tcp://" : "tcp://",
			 addr, ep.port);
		for (size_t i = 0; i < n; i++)
			seen = seen || strcmp(out[i], out[n]) == 0;
		n += !seen;
	}
	freeaddrinfo(res);
	if (!n) {
		snprintf(out[0], CLIENT_URL_MAX, "%s", url);
		return 1;
	}
	snprintf(name, namelen, "%s", ep.host);
	return n;
}

/* --- the certificate ------------------------------------------------------ */

/* @name as an IPv4 or IPv6 address: its length in @ret, else 0. */
static size_t parse_ip(const char *name, unsigned char ret[16])
{
	if (inet_pton(AF_INET, name, ret) == 1)
		return 4;
	if (inet_pton(AF_INET6, name, ret) == 1)
		return 16;
	return 0;
}

/* A DNS name against a certificate's name, "*." matching one label. */
static bool dns_match(const char *name, const unsigned char *p, size_t len)
{
	size_t n = strlen(name);
	const char *dot;

	if (len == n && strncasecmp(name, (const char *)p, n) == 0)
		return true;
	if (len > 2 && p[0] == '*' && p[1] == '.') {
		dot = strchr(name, '.');
		return dot && dot != name && strlen(dot) == len - 1 &&
		       strncasecmp(dot, (const char *)p + 1, len - 1) == 0;
	}
	return false;
}

/*
 * Does @crt hold @name (a DNS name or an address)?  Lists what it holds
 * into @held ("DNS:a, IP:b").
 */
static bool cert_holds(const mbedtls_x509_crt *crt, const char *name,
		       char *held, size_t len)
{
	const mbedtls_x509_sequence *san;
	unsigned char ip[16];
	size_t iplen = parse_ip(name, ip);
	bool found = false, any_san = false;
	char text[INET6_ADDRSTRLEN];
	size_t off = 0;

	held[0] = '\0';
	for (san = &crt->subject_alt_names; san && san->buf.p; san = san->next) {
		int type = san->buf.tag & MBEDTLS_ASN1_TAG_VALUE_MASK;
		const unsigned char *p = san->buf.p;
		size_t l = san->buf.len;

		any_san = true;
		if (type == SAN_DNS) {
			found |= !iplen && dns_match(name, p, l);
			off += (size_t)snprintf(held + off, off < len ? len - off : 0,
						"%sDNS:%.*s", off ? ", " : "", (int)l, p);
		} else if (type == SAN_IP && (l == 4 || l == 16)) {
			found |= iplen == l && memcmp(ip, p, l) == 0;
			inet_ntop(l == 4 ? AF_INET : AF_INET6, p, text, sizeof(text));
			off += (size_t)snprintf(held + off, off < len ? len - off : 0,
						"%sIP:%s", off ? ", " : "", text);
		}
	}
	if (any_san)
		return found;
	/* No subjectAltName: the subject's common name is the name. */
	for (const mbedtls_x509_name *dn = &crt->subject; dn; dn = dn->next) {
		if (MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN, &dn->oid) != 0)
			continue;
		snprintf(held, len, "CN:%.*s", (int)dn->val.len, dn->val.p);
		return !iplen && dns_match(name, dn->val.p, dn->val.len);
	}
	return false;
}

static bool cert_has_dns(const mbedtls_x509_crt *crt)
{
	for (const mbedtls_x509_sequence *s = &crt->subject_alt_names;
	     s && s->buf.p; s = s->next)
		if ((s->buf.tag & MBEDTLS_ASN1_TAG_VALUE_MASK) == SAN_DNS)
			return true;
	return false;
}

static void format_time(const mbedtls_x509_time *t, char *buf, size_t len)
{
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d UTC", t->year, t->mon,
		 t->day, t->hour, t->min, t->sec);
}

/* --- the diagnosis -------------------------------------------------------- */

struct diagnosis {
	mbedtls_net_context net;
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt ca;
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
};

static void diagnosis_fini(struct diagnosis *p)
{
	mbedtls_ssl_free(&p->ssl);
	mbedtls_ssl_config_free(&p->conf);
	mbedtls_x509_crt_free(&p->ca);
	mbedtls_ctr_drbg_free(&p->drbg);
	mbedtls_entropy_free(&p->entropy);
	mbedtls_net_free(&p->net);
}

/* Does the peer open with nng's SP header, as a plain tcp:// listener does? */
static bool speaks_sp(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	unsigned char head[4];

	if (poll(&pfd, 1, SP_PEEK_MS) != 1)
		return false;
	return recv(fd, head, sizeof(head), MSG_PEEK) == (ssize_t)sizeof(head) &&
	       memcmp(head, "\0SP\0", 4) == 0;
}

enum diagnosis_result {
	DIAGNOSIS_UNREACHABLE,	/* no TCP connection: nothing to add */
	DIAGNOSIS_PLAIN,		/* a plain (SP over TCP) listener */
	DIAGNOSIS_NOT_TLS,		/* something that fails the TLS handshake */
	DIAGNOSIS_TLS,		/* a TLS handshake completed */
};

/*
 * Connect to @ep and try a TLS handshake that verifies the chain against
 * @ca (NULL: none) but neither fails on it nor checks the name.
 */
static enum diagnosis_result diagnosis_run(struct diagnosis *p,
					   const struct endpoint *ep,
					   const char *ca, int *ret_ca_err)
{
	static const char pers[] = "fpgad-dial-diagnosis";
	int r;

	mbedtls_net_init(&p->net);
	mbedtls_ssl_init(&p->ssl);
	mbedtls_ssl_config_init(&p->conf);
	mbedtls_x509_crt_init(&p->ca);
	mbedtls_entropy_init(&p->entropy);
	mbedtls_ctr_drbg_init(&p->drbg);
	*ret_ca_err = 0;

	if (mbedtls_net_connect(&p->net, ep->host, ep->port, MBEDTLS_NET_PROTO_TCP))
		return DIAGNOSIS_UNREACHABLE;
	if (speaks_sp(p->net.fd))
		return DIAGNOSIS_PLAIN;
	if (ca) {
		r = mbedtls_x509_crt_parse_file(&p->ca, ca);
		if (r < 0) {
			*ret_ca_err = r;
			return DIAGNOSIS_UNREACHABLE;
		}
	}
#if MBEDTLS_VERSION_MAJOR >= 3
	if (psa_crypto_init() != PSA_SUCCESS)
		return DIAGNOSIS_UNREACHABLE;
#endif
	if (mbedtls_ctr_drbg_seed(&p->drbg, mbedtls_entropy_func, &p->entropy,
				  (const unsigned char *)pers, sizeof(pers) - 1) ||
	    mbedtls_ssl_config_defaults(&p->conf, MBEDTLS_SSL_IS_CLIENT,
					MBEDTLS_SSL_TRANSPORT_STREAM,
					MBEDTLS_SSL_PRESET_DEFAULT))
		return DIAGNOSIS_UNREACHABLE;
	mbedtls_ssl_conf_authmode(&p->conf, MBEDTLS_SSL_VERIFY_OPTIONAL);
	mbedtls_ssl_conf_ca_chain(&p->conf, &p->ca, NULL);
	mbedtls_ssl_conf_rng(&p->conf, mbedtls_ctr_drbg_random, &p->drbg);
	mbedtls_ssl_conf_read_timeout(&p->conf, DIAGNOSIS_TIMEOUT_MS);
	if (mbedtls_ssl_setup(&p->ssl, &p->conf))
		return DIAGNOSIS_UNREACHABLE;
	mbedtls_ssl_set_bio(&p->ssl, &p->net, mbedtls_net_send, NULL,
			    mbedtls_net_recv_timeout);
	do {
		r = mbedtls_ssl_handshake(&p->ssl);
	} while (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE);
	return r == 0 ? DIAGNOSIS_TLS : DIAGNOSIS_NOT_TLS;
}

/* Explain a tls+tcp:// dial that nng refused; 0 when nothing was found. */
static int explain_tls(fpgad_client *c, const struct endpoint *ep,
		       const char *ca)
{
	const char *want = server_name_env();
	const mbedtls_x509_crt *crt;
	char held[160], when[32], issuer[128];
	struct diagnosis p;
	uint32_t flags;
	int ca_err, r = 0;

	if (!want || !want[0])
		want = ep->host;
	switch (diagnosis_run(&p, ep, ca, &ca_err)) {
	case DIAGNOSIS_UNREACHABLE:
		if (ca_err) {
			dial_fail_msg(c, "FPGAD_TLS_CA=%s: not a PEM file of CA certificates", ca);
			r = -EINVAL;
		}
		break;
	case DIAGNOSIS_PLAIN:
		dial_fail_msg(c, "%s: fpgad listens there without TLS: use tcp://%s%s%s:%s",
			      c->url, strchr(ep->host, ':') ? "[" : "", ep->host,
			      strchr(ep->host, ':') ? "]" : "", ep->port);
		r = -EPROTO;
		break;
	case DIAGNOSIS_NOT_TLS:
		dial_fail_msg(c, "%s: the TLS handshake failed: the server does not speak TLS, or no protocol version or cipher suite is common",
			      c->url);
		r = -EPROTO;
		break;
	case DIAGNOSIS_TLS:
		crt = mbedtls_ssl_get_peer_cert(&p.ssl);
		flags = mbedtls_ssl_get_verify_result(&p.ssl);
		if (!crt) {
			dial_fail_msg(c, "%s: fpgad presented no certificate", c->url);
			r = -EACCES;
			break;
		}
		if (mbedtls_x509_dn_gets(issuer, sizeof(issuer), &crt->issuer) < 0)
			snprintf(issuer, sizeof(issuer), "?");
		if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED) {
			dial_fail_msg(c, "%s: unknown CA: fpgad's certificate is signed by '%s', which is not in FPGAD_TLS_CA=%s",
				      c->url, issuer, ca);
		} else if (flags & MBEDTLS_X509_BADCERT_EXPIRED) {
			format_time(&crt->valid_to, when, sizeof(when));
			dial_fail_msg(c, "%s: fpgad's certificate expired on %s", c->url, when);
		} else if (flags & MBEDTLS_X509_BADCERT_FUTURE) {
			format_time(&crt->valid_from, when, sizeof(when));
			dial_fail_msg(c, "%s: fpgad's certificate is not valid before %s",
				      c->url, when);
		} else if (!cert_holds(crt, want, held, sizeof(held))) {
			dial_fail_msg(c, "%s: fpgad's certificate is for %s, not %s%s",
				      c->url, held[0] ? held : "no name", want,
				      want == ep->host ? "" : " (FPGAD_TLS_SERVER_NAME)");
		} else if (parse_ip(want, (unsigned char[16]){ 0 }) &&
			   MBEDTLS_VERSION_NUMBER < 0x03050000) {
			dial_fail_msg(c, "%s: fpgad's certificate is for %s, but this TLS library (mbed TLS %s) cannot verify an address; set FPGAD_TLS_SERVER_NAME to a DNS name the certificate holds%s",
				      c->url, held, MBEDTLS_VERSION_STRING,
				      cert_has_dns(crt) ? "" : " (it holds none: add one)");
		} else if (flags) {
			char info[128];

			mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
			info[strcspn(info, "\n")] = '\0';
			dial_fail_msg(c, "%s: fpgad's certificate: %s", c->url, info);
		} else {
			break;
		}
		r = -EACCES;
		break;
	}
	diagnosis_fini(&p);
	return r;
}

/* Explain a tcp:// dial that failed after connecting: a TLS listener? */
static int explain_tcp(fpgad_client *c, const struct endpoint *ep)
{
	struct diagnosis p;
	int ca_err, r = 0;

	if (diagnosis_run(&p, ep, NULL, &ca_err) == DIAGNOSIS_TLS) {
		dial_fail_msg(c, "%s: fpgad listens there with TLS: use tls+tcp://%s%s%s:%s and set FPGAD_TLS_CA",
			      c->url, strchr(ep->host, ':') ? "[" : "", ep->host,
			      strchr(ep->host, ':') ? "]" : "", ep->port);
		r = -EPROTO;
	}
	diagnosis_fini(&p);
	return r;
}

/* --- what to do --------------------------------------------------------- */

#define SYSTEMCTL_HINT "is fpgad running? (systemctl status fpgad)"

/*
 * A URL nng refused: a socket path given bare ("use ipc://PATH"), or a
 * tcp:// address without its port.  0 when neither.
 */
static int explain_url(fpgad_client *c)
{
	const char *host;

	if (!strstr(c->url, "://")) {
		dial_fail_msg(c, "'%s' is not a URL: use ipc://%s for a socket path, or tcp://HOST:PORT",
			      c->url, c->url);
		return -EINVAL;
	}
	host = strncmp(c->url, "tcp://", 6) == 0 ? c->url + 6 :
	       strncmp(c->url, "tls+tcp://", 10) == 0 ? c->url + 10 : NULL;
	if (!host)
		return 0;
	if (host[0] == '[')
		host = strchr(host, ']') ? strchr(host, ']') + 1 : host;
	if (!strchr(host, ':') || host[strlen(host) - 1] == ':') {
		dial_fail_msg(c, "%s: missing :PORT (such as %s:7710)", c->url,
			      c->url[strlen(c->url) - 1] == ':' ?
			      "tcp://HOST" : c->url);
		return -EINVAL;
	}
	return 0;
}

/* Refused at the socket's permissions: whose group lets this user in. */
static int explain_denied(fpgad_client *c, const char *path)
{
	char user[64], group[64], buf[4096];
	struct passwd pw, *pwr = NULL;
	struct group gr, *grr = NULL;
	struct stat st;

	if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &pwr) == 0 && pwr)
		snprintf(user, sizeof(user), "%s", pwr->pw_name);
	else
		snprintf(user, sizeof(user), "%u", (unsigned)geteuid());
	if (stat(path, &st) < 0) {
		dial_fail_msg(c, "%s: permission denied on the way to %s: %s",
			      c->url, path, strerror(errno));
		return -EACCES;
	}
	if (getgrgid_r(st.st_gid, &gr, buf, sizeof(buf), &grr) == 0 && grr)
		snprintf(group, sizeof(group), "%s", grr->gr_name);
	else
		snprintf(group, sizeof(group), "%u", (unsigned)st.st_gid);
	if (st.st_gid == 0)
		/* fpgad fell back to its own group: the configured one is missing. */
		dial_fail_msg(c, "%s: permission denied: the socket's group is %s, so fpgad's group (fpga by default) is missing: sudo groupadd --system fpga, restart fpgad, sudo usermod -aG fpga %s, log in again",
			      c->url, group, user);
	else
		dial_fail_msg(c, "%s: permission denied: add %s to group %s, the socket's group (sudo usermod -aG %s %s, then log in again)",
			      c->url, user, group, group, user);
	return -EACCES;
}

int client_dial_failed(fpgad_client *c, int nng_err)
{
	const char *ca = getenv("FPGAD_TLS_CA");
	const char *ipc = strncmp(c->url, "ipc://", 6) == 0 ? c->url + 6 : NULL;
	struct endpoint ep;
	int r = 0;

	/* Failures before or at the TCP connection speak for themselves. */
	switch (nng_err) {
	case NNG_ECONNREFUSED: case NNG_ENOENT: case NNG_ETIMEDOUT:
	case NNG_EADDRINVAL: case NNG_EUNREACHABLE: case NNG_ENOMEM:
	case NNG_EINVAL: case NNG_ENOTSUP: case NNG_EPERM:
		break;
	default:
		if (parse_url(c->url, &ep) < 0)
			break;
		r = ep.tls ? explain_tls(c, &ep, ca) : explain_tcp(c, &ep);
		break;
	}
	if (r < 0)
		return r;
	switch (nng_err) {
	case NNG_EINVAL: case NNG_ENOTSUP: case NNG_EADDRINVAL:
		r = explain_url(c);
		break;
	case NNG_EPERM:
		if (ipc)
			return explain_denied(c, ipc);
		break;
	case NNG_ENOENT:
		/* ipc: no socket file means nothing listens there. */
		dial_fail_msg(c, "%s: no socket there: " SYSTEMCTL_HINT, c->url);
		return -ECONNREFUSED;
	case NNG_ECONNREFUSED:
		dial_fail_msg(c, "%s: %s: " SYSTEMCTL_HINT "%s", c->url,
			      nng_strerror(nng_err),
			      ipc ? "" : "; from another host it needs [control] remote");
		return -ECONNREFUSED;
	}
	if (r < 0)
		return r;
	dial_fail_msg(c, "%s: %s", c->url, nng_strerror(nng_err));
	return errmap_nng(nng_err);
}
