// SPDX-License-Identifier: MIT
/*
 * cmd_all.c - fpgactl --all COMMAND: the command against the fpgad of every
 * card of this host (one per card, fpgad@NAME.service, each with its
 * socket under the runtime root; fpgad_cards_get()).  status: one row per
 * card, every card asked at once (cmd_hosts.c).  Another command: a
 * "card NAME" heading before each card's output; with --json, one array
 * of the command's objects, each with "instance" (the card's name) added.  Exit status 1 when
 * no card runs or any card failed.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fpgactl.h"

/* Every card's URL into @urls, in the list's order; 0 or -errno. */
static int card_urls(const struct fpgad_card_list *l, char **urls)
{
	for (uint32_t i = 0; i < l->n_cards; i++) {
		char url[PATH_MAX + 8];
		int r = fpgad_card_url(l->names[i], url, sizeof(url));

		if (r < 0)
			return r;
		urls[i] = strdup(url);
		if (!urls[i])
			return -ENOMEM;
	}
	return 0;
}

/* @cmd on one card; its JSON object, if any, gets "instance". */
static int run_on_card(fpgactl_run_fn run, const struct fpgactl_opts *o,
		       const char *name, const char *url, bool first)
{
	struct fpgactl_opts co = *o;
	size_t before = json_array_size(fpgactl_json_sink);
	fpgad_client *c;
	char why[256];
	int r;

	co.url = url;
	if (!o->json)
		printf("%scard %s (%s)\n", first ? "" : "\n", name, url);
	r = fpgad_connect(url, &c);
	if (r < 0) {
		fprintf(stderr, "fpgactl: card %s: cannot reach fpgad at %s: %s\n", name, url,
			fpgactl_connect_error(url, r, why, sizeof(why)));
		return 1;
	}
	fpgad_set_timeout(c, o->timeout_ms);
	r = run(c, &co);
	fpgad_disconnect(c);
	if (fpgactl_json_sink && json_array_size(fpgactl_json_sink) > before) {
		json_t *obj = json_array_get(fpgactl_json_sink, before);

		if (json_is_object(obj))
			json_object_set_new(obj, "instance", json_string(name));
	}
	return r;
}

int fpgactl_all(fpgactl_run_fn run, int (*run_hosts)(const struct fpgactl_opts *o),
		const struct fpgactl_opts *o)
{
	struct fpgactl_opts ho = *o;
	struct fpgad_card_list *l;
	char **urls;
	int r, rc = 0;

	r = fpgad_cards_get(&l);
	if (r < 0)
		return fpgactl_fail(NULL, "--all: cannot list the cards", r);
	if (!l->n_cards) {
		fprintf(stderr, "fpgactl: --all: no card's fpgad runs (no NAME/fpgad.sock under %s)\n",
			getenv("FPGAD_RUNTIME_ROOT") && getenv("FPGAD_RUNTIME_ROOT")[0] ?
			getenv("FPGAD_RUNTIME_ROOT") : FPGAD_RUNTIME_ROOT);
		fpgad_cards_free(l);
		return 1;
	}
	urls = calloc(l->n_cards, sizeof(*urls));
	r = urls ? card_urls(l, urls) : -ENOMEM;
	if (r < 0) {
		rc = fpgactl_fail(NULL, "--all", r);
		goto out;
	}
	if (run_hosts) {
		ho.urls = (const char *const *)urls;
		ho.labels = (const char *const *)l->names;
		ho.n_urls = l->n_cards;
		rc = run_hosts(&ho);
		goto out;
	}
	fpgactl_json_sink = o->json ? json_array() : NULL;
	for (uint32_t i = 0; i < l->n_cards; i++)
		rc |= run_on_card(run, o, l->names[i], urls[i], i == 0) ? 1 : 0;
	if (fpgactl_json_sink) {
		json_t *all = fpgactl_json_sink;

		fpgactl_json_sink = NULL;
		fpgactl_print_json(all);
	}
out:
	for (uint32_t i = 0; urls && i < l->n_cards; i++)
		free(urls[i]);
	free(urls);
	fpgad_cards_free(l);
	return rc;
}
