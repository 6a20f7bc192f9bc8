// SPDX-License-Identifier: MIT
/* protocol.c - decode and check untrusted requests; encode responses. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "protocol.h"

const char *protocol_request_name(Fpgad__Request__BodyCase body)
{
	switch (body) {
	case FPGAD__REQUEST__BODY_HELLO: return "Hello";
	case FPGAD__REQUEST__BODY_STATUS: return "Status";
	case FPGAD__REQUEST__BODY_LIST_CLIENTS: return "ListClients";
	case FPGAD__REQUEST__BODY_OPEN_CHANNEL: return "OpenChannel";
	case FPGAD__REQUEST__BODY_CLOSE_CHANNEL: return "CloseChannel";
	case FPGAD__REQUEST__BODY_CHANNEL_STATS: return "ChannelStats";
	case FPGAD__REQUEST__BODY_RESET_CHANNEL: return "ResetChannel";
	case FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE: return "OpenXferQueue";
	case FPGAD__REQUEST__BODY_REGISTER_BUFFER: return "RegisterBuffer";
	case FPGAD__REQUEST__BODY_UNREGISTER_BUFFER: return "UnregisterBuffer";
	case FPGAD__REQUEST__BODY_SET_BUFFER_MODE: return "SetBufferMode";
	default: return "unknown";
	}
}

static const char *channel_name_of(const Fpgad__Request *req)
{
	switch (req->body_case) {
	case FPGAD__REQUEST__BODY_OPEN_CHANNEL: return req->open_channel->name;
	case FPGAD__REQUEST__BODY_CLOSE_CHANNEL: return req->close_channel->name;
	case FPGAD__REQUEST__BODY_CHANNEL_STATS: return req->channel_stats->name;
	case FPGAD__REQUEST__BODY_RESET_CHANNEL: return req->reset_channel->name;
	default: return NULL;
	}
}

int protocol_decode(const void *buf, size_t len, Fpgad__Request **ret_req,
		    uint64_t *ret_id, Fpgad__StatusCode *ret_code, char *err,
		    size_t errlen)
{
	Fpgad__Request *req;
	const char *name;

	*ret_id = 0;
	req = fpgad__request__unpack(NULL, len, buf);
	if (!req) {
		*ret_code = FPGAD__STATUS_CODE__STATUS_BAD_REQUEST;
		snprintf(err, errlen, "malformed request: %zu bytes that are not a fpgad.Request",
			 len);
		return -EBADMSG;
	}
	*ret_id = req->id;
	if (req->body_case == FPGAD__REQUEST__BODY__NOT_SET) {
		*ret_code = FPGAD__STATUS_CODE__STATUS_UNKNOWN_REQUEST;
		snprintf(err, errlen, "unknown request type (no body this fpgad knows)");
		goto bad;
	}
	name = channel_name_of(req);
	if (name && !name_valid(name)) {
		*ret_code = FPGAD__STATUS_CODE__STATUS_BAD_REQUEST;
		snprintf(err, errlen, "%s: invalid channel name (1-%d letters, digits, '_' or '-')",
			 protocol_request_name(req->body_case), NAME_MAX_CHANNEL - 1);
		goto bad;
	}
	*ret_req = req;
	return 0;
bad:
	fpgad__request__free_unpacked(req, NULL);
	return -EINVAL;
}

int protocol_status_code(int err)
{
	switch (err) {
	case 0: return FPGAD__STATUS_CODE__STATUS_OK;
	case -EBUSY: return FPGAD__STATUS_CODE__STATUS_BUSY;
	case -ENOSPC: return FPGAD__STATUS_CODE__STATUS_LIMIT;
	case -EIO: return FPGAD__STATUS_CODE__STATUS_FAILED;
	case -ENOENT: return FPGAD__STATUS_CODE__STATUS_NOT_FOUND;
	case -EACCES:
	case -EPERM: return FPGAD__STATUS_CODE__STATUS_DENIED;
	case -EALREADY:
	case -EINVAL:
	case -EBADMSG: return FPGAD__STATUS_CODE__STATUS_BAD_REQUEST;
	case -ENODEV: return FPGAD__STATUS_CODE__STATUS_NO_DEVICE;
	default: return FPGAD__STATUS_CODE__STATUS_INTERNAL;
	}
}

int protocol_decode_handoff(const void *buf, size_t len, uint8_t *ret_token,
			    size_t *ret_len, char *err, size_t errlen)
{
	Fpgad__HandoffRequest *req;
	int code = FPGAD__STATUS_CODE__STATUS_BAD_REQUEST;

	if (len > PROTOCOL_HANDOFF_MAX) {
		snprintf(err, errlen, "handoff request of more than %d bytes",
			 PROTOCOL_HANDOFF_MAX);
		return code;
	}
	req = fpgad__handoff_request__unpack(NULL, len, buf);
	if (!req) {
		snprintf(err, errlen, "malformed handoff request: %zu bytes that are not a fpgad.HandoffRequest",
			 len);
		return code;
	}
	if (req->token.len != PROTOCOL_TOKEN_SIZE) {
		snprintf(err, errlen, "handoff token of %zu bytes, not %d",
			 req->token.len, PROTOCOL_TOKEN_SIZE);
	} else {
		memcpy(ret_token, req->token.data, req->token.len);
		*ret_len = req->token.len;
		code = FPGAD__STATUS_CODE__STATUS_OK;
	}
	fpgad__handoff_request__free_unpacked(req, NULL);
	return code;
}

int protocol_encode_handoff(int code, const char *msg, unsigned n_fds,
			    void *out, size_t outlen, size_t *ret_len)
{
	Fpgad__HandoffReply r = FPGAD__HANDOFF_REPLY__INIT;

	r.code = (Fpgad__StatusCode)code;
	r.message = (char *)msg;
	r.n_fds = n_fds;
	if (fpgad__handoff_reply__get_packed_size(&r) > outlen)
		return -EMSGSIZE;
	*ret_len = fpgad__handoff_reply__pack(&r, out);
	return 0;
}

void protocol_free(Fpgad__Request *req)
{
	if (req)
		fpgad__request__free_unpacked(req, NULL);
}

int protocol_encode(const Fpgad__Response *resp, void **ret_buf,
		    size_t *ret_len)
{
	size_t len = fpgad__response__get_packed_size(resp);
	void *buf = malloc(len ? len : 1);

	if (!buf)
		return -ENOMEM;
	fpgad__response__pack(resp, buf);
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}
