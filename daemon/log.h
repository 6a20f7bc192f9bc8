/* SPDX-License-Identifier: MIT */
/*
 * log.h - logging to stderr with <N> priority prefixes for the journal.
 * The only global in fpgad is the log level.
 */
#ifndef FPGAD_LOG_H
#define FPGAD_LOG_H

#include <syslog.h>

extern int log_level;

void log_msg(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
