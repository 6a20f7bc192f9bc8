// SPDX-License-Identifier: MIT
/*
 * log.c - one line per message on stderr, "<prio>text", for journald, and
 * the token buckets that keep what peers can cause at will from flooding
 * the journal (log.h).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"

int log_level = LOG_INFO;

static void log_line(int prio, const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "<%d>%s\n", prio, line);
}

void log_msg(int prio, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (prio > log_level)
		return;
	va_start(ap, fmt);
	log_line(prio, fmt, ap);
	va_end(ap);
	errno = saved;
}

void log_lines(int prio, const char *prefix, const char *text)
{
	for (const char *p = text; *p;) {
		int n = (int)strcspn(p, "\n");

		log_msg(prio, "%s%.*s", prefix, n, p);
		p += n + (p[n] == '\n');
	}
}

void log_limit_init(struct log_limit *ll, const char *kind)
{
	*ll = (struct log_limit){ .kind = kind };
	pthread_mutex_init(&ll->lock, NULL);
}

void log_limit_destroy(struct log_limit *ll)
{
	if (ll)
		pthread_mutex_destroy(&ll->lock);
}

void log_limited(struct log_limit *ll, int prio, const char *fmt, ...)
{
	const uint64_t cost = LOG_LIMIT_INTERVAL_MS * CLOCK_NS_PER_MS;
	uint64_t now = clock_now_ns(), held = 0;
	int saved = errno;
	bool pass = false;
	va_list ap;

	if (prio > log_level)
		return;
	pthread_mutex_lock(&ll->lock);
	/* Credit accrues with time, up to a burst; a fresh bucket is full. */
	ll->credit_ns += now - ll->last_ns;
	if (ll->credit_ns > LOG_LIMIT_BURST * cost)
		ll->credit_ns = LOG_LIMIT_BURST * cost;
	ll->last_ns = now;
	if (ll->credit_ns >= cost) {
		ll->credit_ns -= cost;
		held = ll->suppressed;
		ll->suppressed = 0;
		pass = true;
	} else {
		ll->suppressed++;
	}
	pthread_mutex_unlock(&ll->lock);
	if (!pass)
		return;
	if (held)
		log_msg(prio, "%s: %llu similar messages suppressed", ll->kind,
			(unsigned long long)held);
	va_start(ap, fmt);
	log_line(prio, fmt, ap);
	va_end(ap);
	errno = saved;
}
