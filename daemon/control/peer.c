// SPDX-License-Identifier: MIT
/* peer.c - naming a control peer in logs (peer.h). */
#include <stdio.h>

#include "control/peer.h"

const char *peer_name(const struct peer *p, char *buf, size_t len)
{
	if (p->creds)
		snprintf(buf, len, "pid %d uid %u", (int)p->pid, (unsigned)p->uid);
	else
		snprintf(buf, len, "local peer (no credentials)");
	return buf;
}
