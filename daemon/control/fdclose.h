/* SPDX-License-Identifier: MIT */
/*
 * fdclose.h - closing a descriptor a client gave fpgad, without blocking.
 *
 * The last close() of a TCP socket with SO_LINGER {1, N} and unsent data
 * sleeps up to N seconds, and so does the last close() of a unix socket
 * with such a socket queued in it (the queued descriptor is released by
 * the closing thread).  A client can hand fpgad either, so every
 * descriptor that came from a client, and every socket a client could
 * have written descriptors into, is closed here: a socket's linger is
 * turned off, a unix socket is shut down (nothing more can arrive) and
 * drained, and the descriptors drained from it are closed the same way.
 */
#ifndef FPGAD_FDCLOSE_H
#define FPGAD_FDCLOSE_H

/* Close @fd (ignored when negative) as above; never blocks. */
void fdclose_untrusted(int fd);

#endif
