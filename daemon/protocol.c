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
