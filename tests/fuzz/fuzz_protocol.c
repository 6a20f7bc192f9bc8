// SPDX-License-Identifier: MIT
/*
 * fuzz_protocol.c - libFuzzer: protocol_decode() (with its walk of every
 * string field) and protocol_request_id() on arbitrary bytes.
 */
#include <stddef.h>
#include <stdint.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Fpgad__Request *req = NULL;
	Fpgad__StatusCode code;
	uint64_t id;
	char err[256];

	(void)protocol_request_id(data, size);
	if (protocol_decode(data, size, &req, &id, &code, err, sizeof(err)) == 0) {
		/* Everything a handler may touch must be there. */
		if (req->body_case == FPGAD__REQUEST__BODY__NOT_SET)
			__builtin_trap();
		protocol_free(req);
	}
	return 0;
}
