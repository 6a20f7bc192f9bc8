/* SPDX-License-Identifier: MIT */
/*
 * raw_request.h - one control request sent as its protobuf bytes, and
 * the handoff that follows OpenChannel, for test peers that speak
 * fpgad.proto without libfpgad.
 */
#ifndef FPGAD_TEST_RAW_REQUEST_H
#define FPGAD_TEST_RAW_REQUEST_H

#include <nng/nng.h>

#include "fpgad.pb-c.h"

/* @req over REQ socket @s; the reply (the caller frees it), or NULL. */
Fpgad__Response *raw_transact(nng_socket s, Fpgad__Request *req);

/*
 * The handoff of @token on fpgad's socket @path, as a lessee makes it: up
 * to @max descriptors into @fds (@ret_n of them) and the connection, kept,
 * in @ret_sock; -errno (-EACCES: fpgad refused it).
 */
int raw_handoff(const char *path, const ProtobufCBinaryData *token, int *fds,
		unsigned max, unsigned *ret_n, int *ret_sock);

#endif
