// SPDX-License-Identifier: MIT
/*
 * conn.c - libfpgad's control connection underneath the API: one
 * request/reply round trip at a time on the nng REQ socket, fpgad's status
 * codes as errno values, the error message and the log callback.
 */
#include <errno.h>
#include <nng/nng.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "errmap.h"

void conn_log(const fpgad_client *c, int level, const char *fmt, ...)
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

int conn_status_errno(int code)
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

void conn_set_errmsg(fpgad_client *c, const char *fmt, ...)
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
	/* An aio, so that a connection refused during Hello ends the wait. */
	nng_aio_set_timeout(c->aio, c->rt_timeout_ms);
	nng_recv_aio(c->sock, c->aio);
	pthread_mutex_lock(&c->lock);
	if (c->refused)
		nng_aio_cancel(c->aio);
	pthread_mutex_unlock(&c->lock);
	nng_aio_wait(c->aio);
	rv = nng_aio_result(c->aio);
	if (rv)
		goto fail;
	*ret_msg = nng_aio_get_msg(c->aio);
	/* The connection that carried it, and an answer: not stuck (reconnect.c). */
	c->reply_pipe = nng_pipe_id(nng_msg_get_pipe(*ret_msg));
	c->down_since_ns = 0;
	return 0;
fail:
	conn_set_errmsg(c, "control socket: %s", nng_strerror(rv));
	conn_log(c, FPGAD_LOG_ERR, "%s", c->errmsg);
	return errmap_nng(rv);
}

/*
 * The bytes of @req, with a fresh id, or with the id of the unanswered
 * request it repeats (every byte but the id alike).
 */
static int pack_request(fpgad_client *c, Fpgad__Request *req, uint8_t *stackbuf,
			size_t stacklen, void **ret_buf, size_t *ret_len)
{
	size_t len;
	void *buf;

	req->id = c->unanswered ? c->unanswered_id : ++c->next_id;
	for (;;) {
		len = fpgad__request__get_packed_size(req);
		buf = len <= stacklen ? stackbuf : malloc(len);
		if (!buf)
			return -ENOMEM;
		fpgad__request__pack(req, buf);
		if (!c->unanswered || req->id != c->unanswered_id ||
		    (len == c->unanswered_len && !memcmp(buf, c->unanswered, len)))
			break;
		/* Another request: a fresh id. */
		if (buf != stackbuf)
			free(buf);
		req->id = ++c->next_id;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

/*
 * After a round trip of request @id (@buf): keep it when it timed out (@r)
 * for a retry with the same id; forget the kept one once it is answered.
 * Another request answered meanwhile (Hello on a new connection) leaves
 * it kept: its retry must still go with its own id.
 */
static void remember_unanswered(fpgad_client *c, int r, const void *buf,
				size_t len, uint64_t id)
{
	if (r != -ETIMEDOUT) {
		if (c->unanswered && id == c->unanswered_id) {
			free(c->unanswered);
			c->unanswered = NULL;
		}
		return;
	}
	free(c->unanswered);
	c->unanswered = malloc(len);
	if (!c->unanswered)
		return;		/* a retry then goes as a new request */
	memcpy(c->unanswered, buf, len);
	c->unanswered_len = len;
	c->unanswered_id = id;
}

int conn_call(fpgad_client *c, Fpgad__Request *req, Fpgad__Response **ret_resp)
{
	Fpgad__Response *resp;
	uint8_t stackbuf[512];
	size_t len;
	void *buf;
	nng_msg *msg;
	int r;

	r = pack_request(c, req, stackbuf, sizeof(stackbuf), &buf, &len);
	if (r < 0)
		return r;
	r = roundtrip(c, buf, len, &msg);
	remember_unanswered(c, r, buf, len, req->id);
	if (buf != stackbuf)
		free(buf);
	if (r < 0)
		return r;
	resp = fpgad__response__unpack(NULL, nng_msg_len(msg), nng_msg_body(msg));
	nng_msg_free(msg);
	if (!resp) {
		conn_set_errmsg(c, "fpgad sent a reply that is not a fpgad.Response");
		return -EBADMSG;
	}
	if (resp->id != req->id) {
		conn_set_errmsg(c, "fpgad answered request %llu, expected %llu",
			   (unsigned long long)resp->id,
			   (unsigned long long)req->id);
		fpgad__response__free_unpacked(resp, NULL);
		return -EBADMSG;
	}
	*ret_resp = resp;
	return 0;
}

int conn_transact(fpgad_client *c, Fpgad__Request *req,
		  Fpgad__Response **ret_resp)
{
	Fpgad__Response *resp;
	int r;

	r = conn_call(c, req, &resp);
	if (r < 0)
		return r;
	if (resp->code != FPGAD__STATUS_CODE__STATUS_OK) {
		conn_set_errmsg(c, "%s", resp->message);
		conn_log(c, FPGAD_LOG_WARN, "fpgad: %s", resp->message);
		r = conn_status_errno(resp->code);
		fpgad__response__free_unpacked(resp, NULL);
		return r;
	}
	*ret_resp = resp;
	c->errmsg[0] = '\0';
	return 0;
}

/* Check that the reply carries the body asked for. */
int conn_expect(fpgad_client *c, Fpgad__Response *resp,
		Fpgad__Response__BodyCase body)
{
	if (resp->body_case == body)
		return 0;
	conn_set_errmsg(c, "fpgad sent a reply of another type (%d, expected %d)",
		   (int)resp->body_case, (int)body);
	fpgad__response__free_unpacked(resp, NULL);
	return -EBADMSG;
}

int conn_request(fpgad_client *c, Fpgad__Request *req,
		 Fpgad__Response__BodyCase body, Fpgad__Response **ret_resp)
{
	int r = conn_transact(c, req, ret_resp);

	return r ? r : conn_expect(c, *ret_resp, body);
}

int conn_raw_request(fpgad_client *c, const void *buf, size_t len,
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

void conn_copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}
