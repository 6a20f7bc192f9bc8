/* SPDX-License-Identifier: MIT */
/*
 * log.h - logging to stderr with <N> priority prefixes for the journal.
 * The only global in fpgad is the log level.
 *
 * What a peer can cause at will (bad requests, refused connections) is
 * logged through a struct log_limit, one per kind of message: a token
 * bucket that lets LOG_LIMIT_BURST lines through at once and then one per
 * LOG_LIMIT_INTERVAL_MS, and says how many it held back ("N similar
 * messages suppressed") before the next line it lets through.
 */
#ifndef FPGAD_LOG_H
#define FPGAD_LOG_H

#include <pthread.h>
#include <stdint.h>
#include <syslog.h>

extern int log_level;

void log_msg(int prio, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* log_msg() each line of @text (one message a line), after @prefix. */
void log_lines(int prio, const char *prefix, const char *text);

#define LOG_LIMIT_BURST 10
#define LOG_LIMIT_INTERVAL_MS 1000

struct log_limit {
	pthread_mutex_t lock;
	const char *kind;		/* "bad requests": names the kind */
	uint64_t last_ns;		/* CLOCK_MONOTONIC of the last call */
	uint64_t credit_ns;		/* a line costs LOG_LIMIT_INTERVAL_MS */
	uint64_t suppressed;		/* held back since the last line */
};

#define LOG_LIMIT_INIT(k) { .lock = PTHREAD_MUTEX_INITIALIZER, .kind = (k) }

void log_limit_init(struct log_limit *ll, const char *kind);
void log_limit_destroy(struct log_limit *ll);
/* log_msg() through @ll's bucket; any thread. */
void log_limited(struct log_limit *ll, int prio, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
