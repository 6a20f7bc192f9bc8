/* SPDX-License-Identifier: MIT */
/*
 * fdlimit.h - fpgad's file descriptors: RLIMIT_NOFILE raised to its hard
 * limit at start.  fpgad listens on local sockets only (control and
 * handoff), so every descriptor serves a local client, a ring or the
 * device, each bounded by its own configured limit.
 */
#ifndef FPGAD_FDLIMIT_H
#define FPGAD_FDLIMIT_H

/*
 * Raise the soft RLIMIT_NOFILE to the hard limit (capped at
 * fs.nr_open); returns the soft limit in force (logged when raised).
 */
unsigned long fdlimit_raise(void);

#endif
