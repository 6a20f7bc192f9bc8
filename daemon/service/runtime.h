/* SPDX-License-Identifier: MIT */
/*
 * runtime.h - the runtime directory (where fpgad.sock lives) and the lock
 * that lets one fpgad at a time own it.
 *
 * runtime_open() creates the directory when it is missing and takes an
 * exclusive flock on DIR/fpgad.lock (which then holds fpgad's pid) before
 * anything in the directory is bound or unlinked; while another fpgad
 * holds it the start is refused, naming that fpgad's pid.
 * runtime_close() removes the lock file and, when fpgad created the
 * directory, the directory once it is empty: a refused start leaves
 * nothing behind.
 */
#ifndef FPGAD_RUNTIME_H
#define FPGAD_RUNTIME_H

#define RUNTIME_LOCK_FILE "fpgad.lock"

struct runtime;

/* 0, or -EBUSY (another fpgad owns @dir) or another -errno; logged. */
int runtime_open(const char *dir, struct runtime **ret_rt);
/* Accepts NULL. */
void runtime_close(struct runtime *rt);

#endif
