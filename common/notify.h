/* SPDX-License-Identifier: MIT */
/*
 * notify.h - the service manager protocol (sd_notify), in one place.
 * Every call is a no-op when fpgad does not run under systemd.
 */
#ifndef FPGAD_NOTIFY_H
#define FPGAD_NOTIFY_H

#include <stdint.h>

void notify_ready(void);
void notify_reloading(void);
void notify_stopping(void);
void notify_watchdog(void);
void notify_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The watchdog period asked for by the service manager, 0 = none. */
uint64_t notify_watchdog_usec(void);

#endif
