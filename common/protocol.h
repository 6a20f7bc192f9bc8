/* SPDX-License-Identifier: MIT */
/*
 * protocol.h - the one place untrusted control bytes are decoded: fpgad's
 * requests from local clients, and fpgad-exporter's from remote peers
 * (through libfpgad's relay, which re-encodes what fpgad then receives).
 *
 * protocol_decode() unpacks a Request and checks every field a handler
 * relies on (a body is set, names are well-formed), so handlers see only
 * valid requests.  Responses are packed by protocol_encode().  The same
 * for the handoff socket's one message each way.
 */
#ifndef FPGAD_PROTOCOL_H
#define FPGAD_PROTOCOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpgad.pb-c.h"

/*
 * Returns 0 and the request, or a negative errno with *ret_code set to the
 * status to answer, *ret_id to the request id when one could be read (else
 * 0) and a message naming what was wrong in @err.  A string field holding
 * a NUL byte, anywhere in the request, is refused (STATUS_BAD_REQUEST).
 */
int protocol_decode(const void *buf, size_t len, Fpgad__Request **ret_req,
		    uint64_t *ret_id, Fpgad__StatusCode *ret_code, char *err,
		    size_t errlen);
void protocol_free(Fpgad__Request *req);
/*
 * The id of the request in @buf without decoding the rest (for a reply to
 * a request refused unread, e.g. above max_message); 0 when none is found.
 */
uint64_t protocol_request_id(const void *buf, size_t len);

/* The status code that answers a negative errno (0 for 0). */
int protocol_status_code(int err);

#define PROTOCOL_TOKEN_SIZE 16
#define PROTOCOL_HANDOFF_MAX 256

/*
 * A HandoffRequest: 0 (STATUS_OK) and its PROTOCOL_TOKEN_SIZE-byte token,
 * or the status code to answer with @err saying what was wrong.
 */
int protocol_decode_handoff(const void *buf, size_t len, uint8_t *ret_token,
			    size_t *ret_len, char *err, size_t errlen);
/* A HandoffReply into @out. */
int protocol_encode_handoff(int code, const char *msg, unsigned n_fds,
			    void *out, size_t outlen, size_t *ret_len);

/* Packs @resp into a malloc'ed buffer. */
int protocol_encode(const Fpgad__Response *resp, void **ret_buf,
		    size_t *ret_len);

const char *protocol_request_name(Fpgad__Request__BodyCase body);
/*
 * The requests a remote peer may send (through fpgad-exporter): Hello,
 * Status, ChannelStats and Topology, which change nothing.
 */
bool protocol_read_only(Fpgad__Request__BodyCase body);

#endif
