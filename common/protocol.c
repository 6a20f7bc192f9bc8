// SPDX-License-Identifier: MIT
/*
 * protocol.c - decode and check untrusted requests; encode responses.
 *
 * protobuf-c keeps a string only up to its first NUL byte ("c2h0\0x"
 * would name c2h0), so before anything reads a request its bytes are
 * walked once with the schema's field descriptors: every string field, at
 * any depth, must be free of NUL.  The walk follows the descriptors, so a
 * field added to the schema later is covered without a change here.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "names.h"

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
	case FPGAD__REQUEST__BODY_TOPOLOGY: return "Topology";
	case FPGAD__REQUEST__BODY_PROBE: return "Probe";
	case FPGAD__REQUEST__BODY_OPEN_XFER_QUEUE: return "OpenXferQueue";
	case FPGAD__REQUEST__BODY_REGISTER_BUFFER: return "RegisterBuffer";
	case FPGAD__REQUEST__BODY_UNREGISTER_BUFFER: return "UnregisterBuffer";
	case FPGAD__REQUEST__BODY_SET_BUFFER_MODE: return "SetBufferMode";
	case FPGAD__REQUEST__BODY_METRICS: return "Metrics";
	default: return "unknown";
	}
}

bool protocol_read_only(Fpgad__Request__BodyCase body)
{
	switch (body) {
	case FPGAD__REQUEST__BODY_HELLO:
	case FPGAD__REQUEST__BODY_STATUS:
	case FPGAD__REQUEST__BODY_CHANNEL_STATS:
	case FPGAD__REQUEST__BODY_TOPOLOGY:
		return true;
	default:
		return false;
	}
}

static const char *channel_name_of(const Fpgad__Request *req)
{
	switch (req->body_case) {
	case FPGAD__REQUEST__BODY_OPEN_CHANNEL: return req->open_channel->name;
	case FPGAD__REQUEST__BODY_CLOSE_CHANNEL: return req->close_channel->name;
	case FPGAD__REQUEST__BODY_CHANNEL_STATS: return req->channel_stats->name;
	case FPGAD__REQUEST__BODY_RESET_CHANNEL: return req->reset_channel->name;
	case FPGAD__REQUEST__BODY_PROBE: return req->probe->name;
	default: return NULL;
	}
}

/* Deeper than any message of the schema: the walk stops there. */
#define WALK_MAX_DEPTH 8

static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *ret)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t b = *(*p)++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*ret = v;
			return true;
		}
	}
	return false;
}

/*
 * Walk the wire bytes @p..@end of a message of type @desc; -EINVAL with
 * the dotted path of the first string field holding a NUL in @path,
 * -EBADMSG on bytes that are not a message.
 */
static int walk_strings(const ProtobufCMessageDescriptor *desc,
			const uint8_t *p, const uint8_t *end, unsigned depth,
			char *path, size_t pathlen)
{
	size_t base = strlen(path);
	uint64_t tag, n;

	if (depth > WALK_MAX_DEPTH)
		return -EBADMSG;
	while (p < end) {
		const ProtobufCFieldDescriptor *f;

		if (!read_varint(&p, end, &tag))
			return -EBADMSG;
		switch (tag & 7) {
		case 0:	/* varint */
			if (!read_varint(&p, end, &n))
				return -EBADMSG;
			continue;
		case 1:	/* 64-bit */
			if (end - p < 8)
				return -EBADMSG;
			p += 8;
			continue;
		case 5:	/* 32-bit */
			if (end - p < 4)
				return -EBADMSG;
			p += 4;
			continue;
		case 2:	/* length-delimited */
			break;
		default:
			return -EBADMSG;
		}
		if (!read_varint(&p, end, &n) || n > (uint64_t)(end - p))
			return -EBADMSG;
		f = tag >> 3 <= UINT32_MAX ?
			protobuf_c_message_descriptor_get_field(desc, (unsigned)(tag >> 3)) :
			NULL;
		if (f && (f->type == PROTOBUF_C_TYPE_STRING ||
			  f->type == PROTOBUF_C_TYPE_MESSAGE)) {
			snprintf(path + base, pathlen - base, "%s%s", base ? "." : "",
				 f->name);
			if (f->type == PROTOBUF_C_TYPE_STRING && memchr(p, 0, n))
				return -EINVAL;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
				int r = walk_strings(f->descriptor, p, p + n,
						     depth + 1, path, pathlen);

				if (r < 0)
					return r;
			}
			path[base] = '\0';
		}
		p += n;
	}
	return 0;
}

int protocol_decode(const void *buf, size_t len, Fpgad__Request **ret_req,
		    uint64_t *ret_id, Fpgad__StatusCode *ret_code, char *err,
		    size_t errlen)
{
	Fpgad__Request *req;
	const char *name;
	char path[128] = "";
	int r;

	*ret_id = 0;
	req = fpgad__request__unpack(NULL, len, buf);
	if (!req) {
		*ret_id = protocol_request_id(buf, len);
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
	r = walk_strings(&fpgad__request__descriptor, buf, (const uint8_t *)buf + len,
			 0, path, sizeof(path));
	if (r < 0) {
		*ret_code = FPGAD__STATUS_CODE__STATUS_BAD_REQUEST;
		if (r == -EINVAL)
			snprintf(err, errlen, "%s: string field %s contains a NUL byte",
				 protocol_request_name(req->body_case), path);
		else
			snprintf(err, errlen, "%s: malformed request",
				 protocol_request_name(req->body_case));
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
	case -EPROTO: return FPGAD__STATUS_CODE__STATUS_VERSION;
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

uint64_t protocol_request_id(const void *buf, size_t len)
{
	const uint8_t *p = buf, *end = p + len;
	uint64_t tag, v;

	while (p < end && read_varint(&p, end, &tag)) {
		switch (tag & 7) {
		case 0:
			if (!read_varint(&p, end, &v))
				return 0;
			if (tag >> 3 == 1)
				return v;
			break;
		case 1:
			if (end - p < 8)
				return 0;
			p += 8;
			break;
		case 5:
			if (end - p < 4)
				return 0;
			p += 4;
			break;
		case 2:
			if (!read_varint(&p, end, &v) || v > (uint64_t)(end - p))
				return 0;
			p += v;
			break;
		default:
			return 0;
		}
	}
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
