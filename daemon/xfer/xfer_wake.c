// SPDX-License-Identifier: MIT
/*
 * xfer_wake.c - how the transfer thread is woken (xfer_impl.h): the
 * descriptors it watches (a queue's doorbell, an engine's completions, the
 * loop thread's eventfd) and the loop thread's poke.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include "log.h"
#include "xfer/xfer_impl.h"

void xfer_poke(struct xfer *x)
{
	if (eventfd_write(x->wake_fd, 1) < 0)
		log_warn("transfer: cannot wake the transfer thread: %s",
			 strerror(errno));
}

int xfer_epoll_add(struct xfer *x, int fd, bool drain)
{
	struct epoll_event ev = {
		.events = EPOLLIN,
		.data.u64 = (uint64_t)(drain ? XFER_EV_DRAIN : XFER_EV_POLL) <<
			    32 | (uint32_t)fd,
	};

	return epoll_ctl(x->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}
