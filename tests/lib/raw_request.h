/* SPDX-License-Identifier: MIT */
/*
 * raw_request.h - one control request sent as its protobuf bytes, for
 * test peers that speak fpgad.proto without libfpgad.
 */
#ifndef FPGAD_TEST_RAW_REQUEST_H
#define FPGAD_TEST_RAW_REQUEST_H

#include <nng/nng.h>

#include "fpgad.pb-c.h"

/* @req over REQ socket @s; the reply (the caller frees it), or NULL. */
Fpgad__Response *raw_transact(nng_socket s, Fpgad__Request *req);

#endif
