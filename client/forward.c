// SPDX-License-Identifier: MIT
/*
 * forward.c - what fpgad-exporter asks of fpgad for the network: the
 * metrics text (fpgad_metrics_get) and the read-only requests of remote
 * peers (fpgad_relay).
 *
 * A remote peer's bytes are decoded here, by the decoder fpgad uses
 * (protocol.c), and only a request that decodes, is within the size and
 * is read-only goes on, packed anew by this library: fpgad never sees a
 * network peer's bytes.  Refusals are answered here, as fpgad would.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "protocol.h"

int fpgad_metrics_get(fpgad_client *c, char **ret_text)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__MetricsRequest body = FPGAD__METRICS_REQUEST__INIT;
	Fpgad__Response *resp;
	char *text;
	int r;

	req.body_case = FPGAD__REQUEST__BODY_METRICS;
	req.metrics = &body;
	r = conn_transact(c, &req, &resp);
	if (r < 0)
		return r;
	r = conn_expect(c, resp, FPGAD__RESPONSE__BODY_METRICS);
	if (r < 0)
		return r;
	text = strdup(resp->metrics->text);
	fpgad__response__free_unpacked(resp, NULL);
	if (!text)
		return -ENOMEM;
	*ret_text = text;
	return 0;
}

/* A refusal of request @id, answered here; @why says it for the log. */
static int refuse(uint64_t id, Fpgad__StatusCode code, char *why,
		  size_t whylen, void **ret_reply, size_t *ret_len,
		  const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static int refuse(uint64_t id, Fpgad__StatusCode code, char *why,
		  size_t whylen, void **ret_reply, size_t *ret_len,
		  const char *fmt, ...)
{
	Fpgad__Response resp = FPGAD__RESPONSE__INIT;
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(why, whylen, "%s", msg);
	resp.id = id;
	resp.code = code;
	resp.message = msg;
	return protocol_encode(&resp, ret_reply, ret_len);
}

int fpgad_relay(fpgad_client *c, const void *request, size_t len,
		size_t max_len, void **ret_reply, size_t *ret_len, char *why,
		size_t whylen)
{
	Fpgad__Request *req;
	Fpgad__Response *resp;
	Fpgad__StatusCode code;
	uint64_t id;
	char err[256];
	int r;

	if (whylen)
		why[0] = '\0';
	if (len > max_len)
		return refuse(protocol_request_id(request, len),
			      FPGAD__STATUS_CODE__STATUS_LIMIT, why, whylen,
			      ret_reply, ret_len,
			      "request of %zu bytes is above max_message (%zu bytes)",
			      len, max_len);
	if (protocol_decode(request, len, &req, &id, &code, err, sizeof(err)) < 0)
		return refuse(id, code, why, whylen, ret_reply, ret_len, "%s", err);
	if (!protocol_read_only(req->body_case)) {
		r = refuse(id, FPGAD__STATUS_CODE__STATUS_DENIED, why, whylen,
			   ret_reply, ret_len,
			   "%s is not allowed on the remote (read-only) listener",
			   protocol_request_name(req->body_case));
		protocol_free(req);
		return r;
	}
	if (!c) {
		protocol_free(req);
		r = refuse(id, FPGAD__STATUS_CODE__STATUS_NO_DEVICE, why, whylen,
			   ret_reply, ret_len,
			   "fpgad does not answer on its local socket (not running?)");
		return r < 0 ? r : -ENOTCONN;
	}
	/* conn_call() gives it an id of this connection's. */
	r = conn_call(c, req, &resp);
	protocol_free(req);
	if (r < 0) {
		int e = r;

		r = refuse(id, FPGAD__STATUS_CODE__STATUS_NO_DEVICE, why, whylen,
			   ret_reply, ret_len, "fpgad does not answer: %s",
			   c->errmsg[0] ? c->errmsg : strerror(-e));
		return r < 0 ? r : e;
	}
	resp->id = id;
	r = protocol_encode(resp, ret_reply, ret_len);
	fpgad__response__free_unpacked(resp, NULL);
	return r;
}
