/* SPDX-License-Identifier: MIT */
/*
 * upstream.h - fpgad-exporter's one connection to fpgad, through libfpgad:
 * made at the first need, shared by the remote listener's workers and the
 * metrics server's scrapes (one round trip at a time), and made anew after
 * fpgad restarts or stops answering.  While fpgad is down a scrape gets
 * fpgad_up 0 and nothing else, and a remote request a reply saying so.
 */
#ifndef FPGAD_EXPORTER_UPSTREAM_H
#define FPGAD_EXPORTER_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>

struct upstream;

/* @url: fpgad's local socket (ipc://...); @timeout_ms per round trip. */
int upstream_new(const char *url, int timeout_ms, struct upstream **ret_up);
void upstream_free(struct upstream *up);
/* fpgad_relay() on the connection (libfpgad's fpgad.h says what it does). */
int upstream_relay(struct upstream *up, const void *req, size_t len,
		   size_t max_len, void **ret_reply, size_t *ret_len, char *why,
		   size_t whylen);
/*
 * The text a scrape gets: fpgad's metrics and fpgad_up 1, or fpgad_up 0
 * alone when fpgad does not answer (*ret_up says which).  malloc'ed.
 */
int upstream_scrape(struct upstream *up, char **ret_text, size_t *ret_len,
		    bool *ret_up);

#endif
