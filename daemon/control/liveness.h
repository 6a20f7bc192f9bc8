/* SPDX-License-Identifier: MIT */
/*
 * liveness.h - is the local listener still accepting?  A client of its
 * own socket, now and then, on the loop.
 *
 * nng 1.5 (Debian 12's) stops a listener for good when a peer closes its
 * end while the SP header exchange is under way: the failed header write
 * (EPIPE) reaches the listener's accept as NNG_ECLOSED, which it takes
 * for its own close (nng issue #1518, fixed in 1.6).  Any process that
 * may connect can do that, and a client killed while connecting does it
 * by accident; fpgad would then serve its open connections and never a
 * new one.  nng offers no way to see it, so fpgad asks: every
 * LIVENESS_EVERY_MS it connects to its own socket and sends its header;
 * a listener whose socket has not taken that connection in within
 * LIVENESS_WAIT_MS is reported dead (control.c listens anew).  fpgad
 * closes its own probe as it is added (it knows its pid), so a probe is
 * never a client.
 */
#ifndef FPGAD_CONTROL_LIVENESS_H
#define FPGAD_CONTROL_LIVENESS_H

#include <uv.h>

#define LIVENESS_EVERY_MS 500
#define LIVENESS_WAIT_MS 1500

struct liveness;

/*
 * Probe the ipc listener at @path from @loop; @dead(@user) runs on the
 * loop when one did not answer in time (the next probe follows, as for
 * a live one).
 */
int liveness_start(uv_loop_t *loop, const char *path,
		   void (*dead)(void *user), void *user,
		   struct liveness **ret);
/* A probe's connection reached the socket (NNG_PIPE_EV_ADD_PRE); any thread. */
void liveness_added(struct liveness *lv);
/* Stops probing (the memory goes once libuv has closed the handles). */
void liveness_stop(struct liveness *lv);

#endif
