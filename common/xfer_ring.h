/* SPDX-License-Identifier: MIT */
/*
 * xfer_ring.h - what both ends of the transfer plane share (the ABI itself
 * is include/fpgad_xfer.h): the queue's layout and size, the check
 * a client makes before it trusts a mapped queue, the names of the rules
 * an entry can break and the message that explains a refusal.  The server
 * end is daemon/xfer/xfer_server.c, the client end client/xfer_queue.c; the
 * wake-ups are the frame plane's (frame_ring_wake, frame_ring_sleep).
 */
#ifndef FPGAD_COMMON_XFER_RING_H
#define FPGAD_COMMON_XFER_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpgad_xfer.h"
#include "frame_ring.h"

/*
 * Where a queue's parts are.  Each end keeps its own copy and never reads
 * the geometry from the shared header again: the other side may scribble
 * on it.
 */
struct xfer_ring_layout {
	uint32_t sq_entries;
	uint32_t cq_entries;
	uint32_t sq_offset;
	uint32_t cq_offset;
	uint32_t sqe_size;
	uint32_t cqe_size;
	size_t size;		/* bytes of the whole queue */
};

/*
 * The layout of a queue of @sq_entries submission and @cq_entries
 * completion entries (powers of two, cq >= sq, within the ABI's bounds):
 * 0, or -EINVAL.
 */
int xfer_ring_layout(uint32_t sq_entries, uint32_t cq_entries,
		     struct xfer_ring_layout *ret_layout);

/*
 * Check a mapped queue: magic, major version, sizes, geometry, and that
 * everything lies within @len; its layout into *@ret_layout.  -EINVAL
 * (malformed), -EPROTONOSUPPORT (another major version), -EAGAIN (not
 * initialised yet: magic 0).
 */
int xfer_ring_validate(const void *mem, size_t len,
		       struct xfer_ring_layout *ret_layout);

/* Entry @pos of the queue at @mem laid out as @l. */
static inline struct fpgad_xfer_sqe *xfer_ring_sqe(void *mem,
		const struct xfer_ring_layout *l, uint32_t pos)
{
	return (struct fpgad_xfer_sqe *)((char *)mem + l->sq_offset +
		(size_t)(pos & (l->sq_entries - 1)) * l->sqe_size);
}

static inline struct fpgad_xfer_cqe *xfer_ring_cqe(void *mem,
		const struct xfer_ring_layout *l, uint32_t pos)
{
	return (struct fpgad_xfer_cqe *)((char *)mem + l->cq_offset +
		(size_t)(pos & (l->cq_entries - 1)) * l->cqe_size);
}

/* A rule's short name ("card alignment"), "?" for an unknown one. */
const char *xfer_rule_name(uint32_t rule);

/*
 * One line saying why @sqe was refused or failed, from its completion
 * @cqe: "card range: 0x7ffff000 + 8192 bytes ends past card memory
 * (2147483648 bytes)", "card: Input/output error at card address
 * 0x100000 (after 1048576 bytes)".  Returns @buf.
 */
char *xfer_describe(const struct fpgad_xfer_sqe *sqe,
		    const struct fpgad_xfer_cqe *cqe, char *buf, size_t len);

#endif
