// SPDX-License-Identifier: MIT
/*
 * owner.c - last-owner tracking of a registered buffer (fpgad.h,
 * fpgad_buffer_wrote): who wrote it last (the card, a GPU kernel, the
 * host), where its current bytes are (GPU memory, the host view, both),
 * and so which copy, if any, a view needs before it is read.  A buffer in
 * host memory is its own view: it never needs a copy.
 */
#include "client_internal.h"

void owner_init(struct owner *o, bool one_place)
{
	o->one_place = one_place;
	o->valid = OWNER_DEVICE | (one_place ? OWNER_HOST : 0);
	o->writer = 0;
}

void owner_wrote(struct owner *o, enum fpgad_writer who)
{
	o->writer = who;
	if (o->one_place)
		return;
	o->valid = who == FPGAD_WRITER_HOST ? OWNER_HOST : OWNER_DEVICE;
}

enum owner_copy owner_need(const struct owner *o, unsigned where)
{
	if (o->valid & where)
		return OWNER_NO_COPY;
	return where == OWNER_HOST ? OWNER_TO_HOST : OWNER_TO_DEVICE;
}

void owner_copied(struct owner *o, enum owner_copy copy)
{
	if (copy == OWNER_TO_HOST)
		o->valid |= OWNER_HOST;
	else if (copy == OWNER_TO_DEVICE)
		o->valid |= OWNER_DEVICE;
}
