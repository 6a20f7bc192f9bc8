// SPDX-License-Identifier: MIT
/*
 * client.c - libfpgad's connection: an nng REQ socket, the Hello exchange,
 * one request/reply round trip at a time, and the read-only queries.
 */
#include <errno.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "dial.h"

const char *fpgad_version(void)
{
	return FPGAD_VERSION;
}

const char *fpgad_default_url(void)
{
	const char *env = getenv("FPGAD_URL");

	return env && env[0] ? env : FPGAD_DEFAULT_URL;
}

void client_log(const fpgad_client *c, int level, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!c->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->log(c->log_user, level, msg);
}

/* The one place nng error codes become errno values in the library. */
int client_nng_errno(int e)
{
	switch (e) {
	case 0: return 0;
	case NNG_ENOMEM: return -ENOMEM;
	case NNG_EINVAL: case NNG_EADDRINVAL: return -EINVAL;
	case NNG_ETIMEDOUT: return -ETIMEDOUT;
	case NNG_ECONNREFUSED: case NNG_ENOENT: return -ECONNREFUSED;
	case NNG_ECLOSED: case NNG_ECONNRESET: case NNG_ECONNSHUT: return -ECONNRESET;
	case NNG_EPERM: return -EACCES;
	case NNG_EMSGSIZE: return -EMSGSIZE;
	case NNG_ENOTSUP: return -EOPNOTSUPP;
	default: return -EIO;
	}
}

static int code_errno(Fpgad__StatusCode code)
{
	switch (code) {
	case FPGAD__STATUS_CODE__STATUS_OK: return 0;
	case FPGAD__STATUS_CODE__STATUS_BAD_REQUEST: return -EINVAL;
	case FPGAD__STATUS_CODE__STATUS_UNKNOWN_REQUEST: return -EOPNOTSUPP;
	case FPGAD__STATUS_CODE__STATUS_VERSION: return -EPROTO;
	case FPGAD__STATUS_CODE__STATUS_DENIED: return -EACCES;
	case FPGAD__STATUS_CODE__STATUS_NOT_FOUND: return -ENOENT;
	case FPGAD__STATUS_CODE__STATUS_BUSY: return -EBUSY;
	case FPGAD__STATUS_CODE__STATUS_LIMIT: return -ENOSPC;
	case FPGAD__STATUS_CODE__STATUS_NO_DEVICE: return -ENODEV;
	case FPGAD__STATUS_CODE__STATUS_FAILED: return -EIO;
	default: return -EIO;
	}
}

static void set_errmsg(fpgad_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_errmsg(fpgad_client *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
}

static int roundtrip(fpgad_client *c, const void *buf, size_t len,
		     nng_msg **ret_msg)
{
	nng_msg *msg;
	int rv;

	rv = nng_msg_alloc(&msg, len);
	if (rv)
		goto fail;
	memcpy(nng_msg_body(msg), buf, len);
	rv = nng_sendmsg(c->sock, msg, 0);
	if (rv) {
		nng_msg_free(msg);
		goto fail;
	}
	rv = nng_recvmsg(c->sock, &msg, 0);
	if (rv)
		goto fail;
	*ret_msg = msg;
	return 0;
fail:
	set_errmsg(c, "control socket: %s", nng_strerror(rv));
	client_log(c, FPGAD_LOG_ERR, "%s", c->errmsg);
	return client_nng_errno(rv);
}

int client_transact(fpgad_client *c, Fpgad__Request *req,
		    Fpgad__Response **ret_resp)
{
	Fpgad__Response *resp;
	uint8_t stackbuf[512];
	size_t len;
	void *buf;
	nng_msg *msg;
	int r;

	req->id = ++c->next_id;
	len = fpgad__request__get_packed_size(req);
	buf = len <= sizeof(stackbuf) ? stackbuf : malloc(len);
	if (!buf)
		return -ENOMEM;
	fpgad__request__pack(req, buf);
	r = roundtrip(c, buf, len, &msg);
	if (buf != stackbuf)
		free(buf);
	if (r < 0)
		return r;
	resp = fpgad__response__unpack(NULL, nng_msg_len(msg), nng_msg_body(msg));
	nng_msg_free(msg);
	if (!resp) {
		set_errmsg(c, "fpgad sent a reply that is not a fpgad.Response");
		return -EBADMSG;
	}
	if (resp->id != req->id) {
		set_errmsg(c, "fpgad answered request %llu, expected %llu",
			   (unsigned long long)resp->id,
			   (unsigned long long)req->id);
		fpgad__response__free_unpacked(resp, NULL);
		return -EBADMSG;
	}
	if (resp->code != FPGAD__STATUS_CODE__STATUS_OK) {
		set_errmsg(c, "%s", resp->message);
		client_log(c, FPGAD_LOG_WARN, "fpgad: %s", resp->message);
		r = code_errno(resp->code);
		fpgad__response__free_unpacked(resp, NULL);
		return r;
	}
	*ret_resp = resp;
	c->errmsg[0] = '\0';
	return 0;
}

/* Check that the reply carries the body asked for. */
int client_expect(fpgad_client *c, Fpgad__Response *resp,
		  Fpgad__Response__BodyCase body)
{
	if (resp->body_case == body)
		return 0;
	set_errmsg(c, "fpgad sent a reply of another type (%d, expected %d)",
		   (int)resp->body_case, (int)body);
	fpgad__response__free_unpacked(resp, NULL);
	return -EBADMSG;
}

int fpgad_raw_request(fpgad_client *c, const void *buf, size_t len,
		      int *ret_code, char *msg, size_t msglen)
{
	Fpgad__Response *resp;
	nng_msg *m;
	int r;

	r = roundtrip(c, buf, len, &m);
	if (r < 0)
		return r;
	resp = fpgad__response__unpack(NULL, nng_msg_len(m), nng_msg_body(m));
	nng_msg_free(m);
	if (!resp)
		return -EBADMSG;
	*ret_code = resp->code;
	if (msg)
		snprintf(msg, msglen, "%s", resp->message);
	fpgad__response__free_unpacked(resp, NULL);
	return 0;
}

static int hello(fpgad_client *c)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__Hello h = FPGAD__HELLO__INIT;
	Fpgad__Response *resp;
	int r;

	h.version = FPGAD_PROTOCOL_VERSION;
	h.min_version = FPGAD_PROTOCOL_MIN_VERSION;
	h.software = "libfpgad " FPGAD_VERSION;
	req.body_case = FPGAD__REQUEST__BODY_HELLO;
	req.hello = &h;
	r = client_transact(c, &req, &resp);
	if (r < 0)
		return r;
	r = client_expect(c, resp, FPGAD__RESPONSE__BODY_HELLO);
	if (r < 0)
		return r;
	snprintf(c->server, sizeof(c->server), "%s", resp->hello->software);
	fpgad__response__free_unpacked(resp, NULL);
	return 0;
}

/*
 * tls+tcp:// verifies fpgad's certificate against $FPGAD_TLS_CA, under
 * $FPGAD_TLS_SERVER_NAME when set; a failure is explained (dial.c).
 */
static int dial(fpgad_client *c)
{
	nng_dialer d;
	int rv, r;

	client_dial_begin();
	if (strncmp(c->url, "tls+", 4) != 0) {
		rv = nng_dial(c->sock, c->url, NULL, 0);
		goto out;
	}
	rv = nng_dialer_create(&d, c->sock, c->url);
	if (rv == 0) {
		r = client_dial_tls_setup(c, d, getenv("FPGAD_TLS_CA"));
		if (r < 0)
			return r;
		rv = nng_dialer_start(d, 0);
	}
out:
	return rv ? client_dial_failed(c, rv) : 0;
}

int fpgad_connect(const char *url, fpgad_client **ret_client)
{
	fpgad_client *c;
	int rv, r;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->url, sizeof(c->url), "%s", url ? url : fpgad_default_url());
	c->timeout_ms = 5000;
	rv = nng_req0_open(&c->sock);
	if (rv) {
		free(c);
		return client_nng_errno(rv);
	}
	nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO, c->timeout_ms);
	nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, c->timeout_ms);
	r = dial(c);
	if (r < 0)
		goto fail;
	r = hello(c);
	if (r < 0)
		goto fail;
	*ret_client = c;
	return 0;
fail:
	nng_close(c->sock);
	free(c);
	return r;
}

void fpgad_disconnect(fpgad_client *c)
{
	if (!c)
		return;
	client_channels_close_all(c);
	nng_close(c->sock);
	free(c);
}

void fpgad_set_timeout(fpgad_client *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms;
	nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO, timeout_ms);
	nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, timeout_ms);
}

void fpgad_set_log(fpgad_client *c, fpgad_log_fn fn, void *user)
{
	c->log = fn;
	c->log_user = user;
}

const char *fpgad_errmsg(const fpgad_client *c)
{
	return c ? c->errmsg : client_dial_errmsg();
}

const char *fpgad_server_software(const fpgad_client *c)
{
	return c->server;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

#define COPY(dst, src) copy_str(dst, sizeof(dst), src)

int fpgad_status_get(fpgad_client *c, struct fpgad_status **ret_status)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__StatusRequest body = FPGAD__STATUS_REQUEST__INIT;
	Fpgad__StatusReply *sr;
	Fpgad__Response *resp;
	struct fpgad_status *s;
	int r;

	req.body_case = FPGAD__REQUEST__BODY_STATUS;
	req.status = &body;
	r = client_transact(c, &req, &resp);
	if (r < 0)
		return r;
	r = client_expect(c, resp, FPGAD__RESPONSE__BODY_STATUS);
	if (r < 0)
		return r;
	sr = resp->status;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->channels = calloc(sr->n_channels + 1, sizeof(*s->channels)))) {
		free(s);
		fpgad__response__free_unpacked(resp, NULL);
		return -ENOMEM;
	}
	COPY(s->version, sr->version);
	s->uptime_ms = sr->uptime_ms;
	COPY(s->backend, sr->backend);
	COPY(s->mode, sr->mode);
	COPY(s->mode_reason, sr->mode_reason);
	s->clients = sr->clients;
	s->pid = sr->pid;
	s->n_channels = (uint32_t)sr->n_channels;
	for (size_t i = 0; i < sr->n_channels; i++) {
		const Fpgad__ChannelSummary *in = sr->channels[i];
		struct fpgad_channel_summary *o = &s->channels[i];

		COPY(o->name, in->name);
		COPY(o->direction, in->direction);
		COPY(o->state, in->state);
		COPY(o->memory, in->memory);
		COPY(o->mode, in->mode);
		o->slots = in->slots;
		o->slot_size = in->slot_size;
		o->frame_size = in->frame_size;
		o->frames = in->frames;
		o->drops = in->drops;
		o->lessees = in->lessees;
	}
	fpgad__response__free_unpacked(resp, NULL);
	*ret_status = s;
	return 0;
}

void fpgad_status_free(struct fpgad_status *s)
{
	if (!s)
		return;
	free(s->channels);
	free(s);
}

int fpgad_clients_get(fpgad_client *c, struct fpgad_client_list **ret_list)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__ListClientsRequest body = FPGAD__LIST_CLIENTS_REQUEST__INIT;
	Fpgad__ListClientsReply *lr;
	Fpgad__Response *resp;
	struct fpgad_client_list *l;
	int r;

	req.body_case = FPGAD__REQUEST__BODY_LIST_CLIENTS;
	req.list_clients = &body;
	r = client_transact(c, &req, &resp);
	if (r < 0)
		return r;
	r = client_expect(c, resp, FPGAD__RESPONSE__BODY_LIST_CLIENTS);
	if (r < 0)
		return r;
	lr = resp->list_clients;
	l = calloc(1, sizeof(*l));
	if (!l || !(l->clients = calloc(lr->n_clients + 1, sizeof(*l->clients)))) {
		free(l);
		fpgad__response__free_unpacked(resp, NULL);
		return -ENOMEM;
	}
	l->n_clients = (uint32_t)lr->n_clients;
	for (size_t i = 0; i < lr->n_clients; i++) {
		const Fpgad__ClientInfo *in = lr->clients[i];
		struct fpgad_client_info *o = &l->clients[i];

		o->pid = in->pid;
		o->uid = in->uid;
		o->gid = in->gid;
		o->connected_ms = in->connected_ms;
		o->remote = in->remote;
		for (size_t k = 0; k < in->n_leases && k < 16; k++)
			COPY(o->leases[o->n_leases++], in->leases[k]);
	}
	fpgad__response__free_unpacked(resp, NULL);
	*ret_list = l;
	return 0;
}

void fpgad_clients_free(struct fpgad_client_list *l)
{
	if (!l)
		return;
	free(l->clients);
	free(l);
}
