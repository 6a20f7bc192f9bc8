// SPDX-License-Identifier: MIT
/* xfer_ring.c - the transfer plane's shared rules (see xfer_ring.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "xfer_ring.h"

static const size_t header_size = sizeof(struct fpgad_xfer_header);

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static bool entries_ok(uint32_t sq, uint32_t cq)
{
	return is_pow2(sq) && is_pow2(cq) && sq >= FPGAD_XFER_MIN_ENTRIES &&
	       cq >= sq && cq <= FPGAD_XFER_MAX_ENTRIES;
}

int xfer_ring_layout(uint32_t sq_entries, uint32_t cq_entries,
		     struct xfer_ring_layout *ret_layout)
{
	struct xfer_ring_layout l;

	if (!entries_ok(sq_entries, cq_entries))
		return -EINVAL;
	l.sq_entries = sq_entries;
	l.cq_entries = cq_entries;
	l.sqe_size = sizeof(struct fpgad_xfer_sqe);
	l.cqe_size = sizeof(struct fpgad_xfer_cqe);
	l.sq_offset = (uint32_t)header_size;
	l.cq_offset = l.sq_offset +
		      sq_entries * (uint32_t)sizeof(struct fpgad_xfer_sqe);
	l.size = l.cq_offset +
		 (size_t)cq_entries * sizeof(struct fpgad_xfer_cqe);
	*ret_layout = l;
	return 0;
}

int xfer_ring_validate(const void *mem, size_t len,
		       struct xfer_ring_layout *ret_layout)
{
	const struct fpgad_xfer_header *h = mem;
	struct xfer_ring_layout l;
	uint64_t sq_end, cq_end;

	if (!mem || ((uintptr_t)mem % FPGAD_XFER_LINE) || len < header_size)
		return -EINVAL;
	switch (atomic_load_explicit(FR_A32(&h->magic), memory_order_acquire)) {
	case FPGAD_XFER_MAGIC:
		break;
	case 0:
		return -EAGAIN;
	default:
		return -EINVAL;
	}
	if (h->version_major != FPGAD_XFER_VERSION_MAJOR)
		return -EPROTONOSUPPORT;
	if (h->header_size < header_size || h->header_size % FPGAD_XFER_LINE ||
	    h->sqe_size < sizeof(struct fpgad_xfer_sqe) || h->sqe_size % 8 ||
	    h->cqe_size < sizeof(struct fpgad_xfer_cqe) || h->cqe_size % 8 ||
	    h->sqe_size > 4096 || h->cqe_size > 4096)
		return -EINVAL;
	if (!entries_ok(h->sq_entries, h->cq_entries) || !h->generation)
		return -EINVAL;
	if (h->sq_offset < h->header_size || h->cq_offset < h->header_size ||
	    h->sq_offset % FPGAD_XFER_LINE || h->cq_offset % FPGAD_XFER_LINE)
		return -EINVAL;
	/* Read once: what is checked is what is used. */
	l.sq_entries = h->sq_entries;
	l.cq_entries = h->cq_entries;
	l.sq_offset = h->sq_offset;
	l.cq_offset = h->cq_offset;
	l.sqe_size = h->sqe_size;
	l.cqe_size = h->cqe_size;
	l.size = len;
	if (!entries_ok(l.sq_entries, l.cq_entries) ||
	    l.sqe_size < sizeof(struct fpgad_xfer_sqe) ||
	    l.cqe_size < sizeof(struct fpgad_xfer_cqe))
		return -EINVAL;
	/* Each factor is bounded above, so none of this overflows. */
	sq_end = l.sq_offset + (uint64_t)l.sq_entries * l.sqe_size;
	cq_end = l.cq_offset + (uint64_t)l.cq_entries * l.cqe_size;
	if (sq_end > len || cq_end > len ||
	    (l.sq_offset < cq_end && l.cq_offset < sq_end))
		return -EINVAL;
	*ret_layout = l;
	return 0;
}

const char *xfer_rule_name(uint32_t rule)
{
	static const char *const names[FPGAD_XFER_RULE_COUNT] = {
		[FPGAD_XFER_RULE_NONE] = "none",
		[FPGAD_XFER_RULE_OPCODE] = "operation",
		[FPGAD_XFER_RULE_RESERVED] = "reserved fields",
		[FPGAD_XFER_RULE_BUFFER] = "buffer",
		[FPGAD_XFER_RULE_ZERO_LENGTH] = "zero length",
		[FPGAD_XFER_RULE_MAX_LENGTH] = "maximum length",
		[FPGAD_XFER_RULE_CARD_ALIGN] = "card address alignment",
		[FPGAD_XFER_RULE_BUF_ALIGN] = "buffer offset alignment",
		[FPGAD_XFER_RULE_LEN_ALIGN] = "length alignment",
		[FPGAD_XFER_RULE_CARD_RANGE] = "card range",
		[FPGAD_XFER_RULE_BUF_RANGE] = "buffer range",
		[FPGAD_XFER_RULE_TIMEOUT] = "timeout",
		[FPGAD_XFER_RULE_MODE] = "transfer mode",
		[FPGAD_XFER_RULE_ENGINE] = "engine",
	};

	return rule < FPGAD_XFER_RULE_COUNT ? names[rule] : "?";
}

char *xfer_describe(const struct fpgad_xfer_sqe *s,
		    const struct fpgad_xfer_cqe *c, char *buf, size_t len)
{
	const char *name = xfer_rule_name(c->rule);
	unsigned long long lim = c->limit;

	switch (c->rule) {
	case FPGAD_XFER_RULE_NONE:
		if (!c->status)
			snprintf(buf, len, "done");
		else
			snprintf(buf, len, "card: %s at card address 0x%" PRIx64
				 " (after %" PRIu64 " of %" PRIu64 " bytes)",
				 strerror(c->status < 0 ? -c->status : c->status),
				 c->fail_addr, c->length, s->length);
		break;
	case FPGAD_XFER_RULE_OPCODE:
		snprintf(buf, len, "%s: %u is neither read (%u) nor write (%u)",
			 name, s->opcode, FPGAD_XFER_OP_READ,
			 FPGAD_XFER_OP_WRITE);
		break;
	case FPGAD_XFER_RULE_RESERVED:
		snprintf(buf, len, "%s: flags 0x%x or reserved bytes are not "
			 "zero", name, s->flags);
		break;
	case FPGAD_XFER_RULE_BUFFER:
		snprintf(buf, len, "%s: %" PRIu64 " is not a buffer registered "
			 "on this connection", name, s->buffer_id);
		break;
	case FPGAD_XFER_RULE_ZERO_LENGTH:
		snprintf(buf, len, "%s: a transfer moves at least one byte",
			 name);
		break;
	case FPGAD_XFER_RULE_MAX_LENGTH:
		snprintf(buf, len, "%s: %" PRIu64 " bytes is more than the "
			 "%llu a transfer may move", name, s->length, lim);
		break;
	case FPGAD_XFER_RULE_CARD_ALIGN:
		snprintf(buf, len, "%s: card address 0x%" PRIx64 " is not a "
			 "multiple of %llu", name, s->card_addr, lim);
		break;
	case FPGAD_XFER_RULE_BUF_ALIGN:
		snprintf(buf, len, "%s: buffer offset %" PRIu64 " is not a "
			 "multiple of %llu", name, s->buf_offset, lim);
		break;
	case FPGAD_XFER_RULE_LEN_ALIGN:
		snprintf(buf, len, "%s: length %" PRIu64 " is not a multiple "
			 "of %llu", name, s->length, lim);
		break;
	case FPGAD_XFER_RULE_CARD_RANGE:
		snprintf(buf, len, "%s: card address 0x%" PRIx64 " + %" PRIu64
			 " bytes ends past card memory (%llu bytes)", name,
			 s->card_addr, s->length, lim);
		break;
	case FPGAD_XFER_RULE_BUF_RANGE:
		snprintf(buf, len, "%s: buffer offset %" PRIu64 " + %" PRIu64
			 " bytes ends past the buffer (%llu bytes)", name,
			 s->buf_offset, s->length, lim);
		break;
	case FPGAD_XFER_RULE_TIMEOUT:
		snprintf(buf, len, "%s: %u ms is more than %llu ms", name,
			 s->timeout_ms, lim);
		break;
	case FPGAD_XFER_RULE_MODE:
		snprintf(buf, len, "%s: buffer %" PRIu64 " cannot be served in "
			 "its mode now (%s)", name, s->buffer_id,
			 strerror(c->status < 0 ? -c->status : c->status));
		break;
	case FPGAD_XFER_RULE_ENGINE:
		snprintf(buf, len, "%s: no engine of the card serves %s (every "
			 "one drives a channel)", name,
			 s->opcode == FPGAD_XFER_OP_READ ? "reads (c2h)" :
			 "writes (h2c)");
		break;
	default:
		snprintf(buf, len, "rule %u broken (limit %llu)", c->rule, lim);
		break;
	}
	return buf;
}
