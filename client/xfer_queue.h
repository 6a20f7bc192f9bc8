/* SPDX-License-Identifier: MIT */
/*
 * xfer_queue.h - the client's end of the transfer queue (the ABI is
 * include/fpgad_xfer.h; what both ends share is common/xfer_ring.h).
 *
 * The client checks the queue's geometry before it trusts it, pushes
 * submission entries, tells fpgad (the doorbell, only when fpgad sleeps),
 * takes completions and sleeps until one comes.  It keeps its own copy of
 * the positions it writes and checks those fpgad writes.
 *
 * One thread at a time.  Functions return 0 (or a count) or a negative
 * errno; ret_* are written only on success.
 */
#ifndef FPGAD_XFER_QUEUE_H
#define FPGAD_XFER_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spin.h"
#include "xfer_ring.h"

struct xfer_queue;

/* Check the queue mapped at @mem (@len bytes) and attach to it. */
int xfer_queue_attach(void *mem, size_t len, struct xfer_queue **ret_q);
/* Frees the private state, not the mapping; accepts NULL. */
void xfer_queue_free(struct xfer_queue *q);
/* The header: its [I] lines say the rules. */
const struct fpgad_xfer_header *xfer_queue_header(const struct xfer_queue *q);
/* The geometry as checked when attaching. */
const struct xfer_ring_layout *xfer_queue_layout(const struct xfer_queue *q);

/* Free submission entries now; -EPROTO when fpgad's sq_head is nonsense. */
int xfer_queue_room(struct xfer_queue *q);
/* Write the next entry (not visible to fpgad yet; room is checked first). */
void xfer_queue_push(struct xfer_queue *q, const struct fpgad_xfer_sqe *s);
/* Make pushed entries visible: true when fpgad sleeps (ring the doorbell). */
bool xfer_queue_publish(struct xfer_queue *q);
/* Take up to @max completions; -EPROTO when fpgad's cq_tail is nonsense. */
int xfer_queue_pop(struct xfer_queue *q, struct fpgad_xfer_cqe *out,
		   unsigned max);
/* FPGAD_XFER_EVENT_* raised so far. */
uint32_t xfer_queue_events(const struct xfer_queue *q);
/*
 * Wait until a completion or an event comes, at most @timeout_ms (-1 =
 * no limit): 0, -ETIMEDOUT, -EINTR.  With @spin, the adaptive spin
 * (spin.h) first, its window learnt from this queue's earlier waits;
 * without it (the caller busy-polled already), sleep at once.
 */
int xfer_queue_wait(struct xfer_queue *q, int timeout_ms, bool spin);

#endif
