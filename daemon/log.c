// SPDX-License-Identifier: MIT
/* log.c - one line per message on stderr, "<prio>text", for journald. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "log.h"

int log_level = LOG_INFO;

void log_msg(int prio, const char *fmt, ...)
{
	char line[1024];
	int saved = errno;
	va_list ap;

	if (prio > log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "<%d>%s\n", prio, line);
	errno = saved;
}
