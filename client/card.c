// SPDX-License-Identifier: MIT
/*
 * card.c - naming a card instead of an URL: each card has its own fpgad
 * (the unit fpgad@NAME.service), listening at ROOT/NAME/fpgad.sock, ROOT
 * being $FPGAD_RUNTIME_ROOT or /run/fpgad.  A name is a single path
 * component, so that no name reaches outside the root.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client_internal.h"
#include "dial.h"

#define CARD_NAME_MAX 64
#define CARD_SOCKET "fpgad.sock"

static const char *runtime_root(void)
{
	const char *env = getenv("FPGAD_RUNTIME_ROOT");

	return env && env[0] ? env : FPGAD_RUNTIME_ROOT;
}

static bool card_name_ok(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > CARD_NAME_MAX || name[0] == '.')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-.") == n;
}

/* ROOT/NAME/fpgad.sock into @buf. */
static int card_socket_path(const char *name, char *buf, size_t len)
{
	int n;

	if (!card_name_ok(name))
		return -EINVAL;
	n = snprintf(buf, len, "%s/%s/" CARD_SOCKET, runtime_root(), name);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int fpgad_card_url(const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	int r, n;

	r = card_socket_path(name, path, sizeof(path));
	if (r < 0)
		return r;
	n = snprintf(buf, len, "ipc://%s", path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* A directory entry naming a card whose fpgad has its socket there. */
static int is_card(const struct dirent *d)
{
	char path[PATH_MAX];
	struct stat st;

	return card_socket_path(d->d_name, path, sizeof(path)) == 0 &&
	       stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

void fpgad_cards_free(struct fpgad_card_list *l)
{
	if (!l)
		return;
	for (uint32_t i = 0; i < l->n_cards; i++)
		free(l->names[i]);
	free(l->names);
	free(l);
}

int fpgad_cards_get(struct fpgad_card_list **ret_list)
{
	struct fpgad_card_list *l = calloc(1, sizeof(*l));
	struct dirent **ents = NULL;
	int n, r = 0;

	if (!l)
		return -ENOMEM;
	n = scandir(runtime_root(), &ents, is_card, alphasort);
	if (n < 0) {
		if (errno == ENOENT)
			goto out;
		r = -errno;
		goto fail;
	}
	l->names = calloc((size_t)n + 1, sizeof(*l->names));
	for (int i = 0; i < n; i++) {
		if (l->names && !r) {
			l->names[i] = strdup(ents[i]->d_name);
			r = l->names[i] ? 0 : -ENOMEM;
			l->n_cards += !r;
		}
		free(ents[i]);
	}
	free(ents);
	if (!l->names)
		r = -ENOMEM;
	if (r < 0)
		goto fail;
out:
	*ret_list = l;
	return 0;
fail:
	fpgad_cards_free(l);
	return r;
}

/* "a, b" (the cards that run) or "none", into @buf. */
static void cards_text(char *buf, size_t len)
{
	struct fpgad_card_list *l;
	size_t off = 0;

	snprintf(buf, len, "none");
	if (fpgad_cards_get(&l) < 0)
		return;
	for (uint32_t i = 0; i < l->n_cards && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
					l->names[i]);
	fpgad_cards_free(l);
}

int card_find(const char *name, char *url, size_t len)
{
	char cards[160];
	struct stat st;
	int r;

	r = fpgad_card_url(name, url, len);
	if (r == -EINVAL) {
		client_dial_set_errmsg("card '%s': not a card name (1-%d letters, digits, '_', '-', '.'; not starting with '.')",
				       name ? name : "", CARD_NAME_MAX);
		return r;
	}
	if (r < 0) {
		client_dial_set_errmsg("card '%s': %s/%s: path too long", name,
				       runtime_root(), name);
		return r;
	}
	if (stat(url + strlen("ipc://"), &st) < 0 && errno == ENOENT) {
		cards_text(cards, sizeof(cards));
		client_dial_set_errmsg("card '%s': no fpgad runs for it (no %s; cards under %s: %s)",
				       name, url + strlen("ipc://"), runtime_root(), cards);
		return -ENOENT;
	}
	return 0;
}
