// SPDX-License-Identifier: MIT
/*
 * raw_request.c - one control request sent as its protobuf bytes
 * (raw_request.h).
 */
#include <stdint.h>

#include "raw_request.h"

Fpgad__Response *raw_transact(nng_socket s, Fpgad__Request *req)
{
	Fpgad__Response *resp;
	uint8_t buf[512];
	nng_msg *m;
	size_t len;

	if (fpgad__request__get_packed_size(req) > sizeof(buf))
		return NULL;
	len = fpgad__request__pack(req, buf);
	if (nng_send(s, buf, len, 0) != 0 || nng_recvmsg(s, &m, 0) != 0)
		return NULL;
	resp = fpgad__response__unpack(NULL, nng_msg_len(m), nng_msg_body(m));
	nng_msg_free(m);
	return resp;
}
