// SPDX-License-Identifier: MIT
/* notify.c - sd_notify wrappers. */
#include <stdarg.h>
#include <stdio.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "notify.h"

void notify_ready(void)
{
	sd_notify(0, "READY=1");
}

void notify_reloading(void)
{
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%llu",
		   (unsigned long long)(clock_now_ns() / 1000u));
}

void notify_stopping(void)
{
	sd_notify(0, "STOPPING=1");
}

void notify_watchdog(void)
{
	sd_notify(0, "WATCHDOG=1");
}

void notify_status(const char *fmt, ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sd_notifyf(0, "STATUS=%s", line);
}

uint64_t notify_watchdog_usec(void)
{
	uint64_t usec = 0;
	int r = sd_watchdog_enabled(0, &usec);

	if (r < 0) {
		log_warn("notify: ignoring WATCHDOG_USEC: invalid");
		return 0;
	}
	return r > 0 ? usec : 0;
}
