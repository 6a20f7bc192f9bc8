// SPDX-License-Identifier: MIT
/*
 * client.c - libfpgad's connection API: connect (dial, Hello), disconnect,
 * settings, and the read-only queries Status and ListClients.
 */
#include <errno.h>
#include <limits.h>
#include <nng/nng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "clock.h"
#include "dial.h"
#include "errmap.h"

const char *fpgad_version(void)
{
	return FPGAD_VERSION;
}

/* $FPGAD_CARD when set and $FPGAD_URL is not: the card to connect to. */
static const char *env_card(void)
{
	const char *url = getenv("FPGAD_URL"), *card = getenv("FPGAD_CARD");

	return (!url || !url[0]) && card && card[0] ? card : NULL;
}

const char *fpgad_default_url(void)
{
	static _Thread_local char card_url[PATH_MAX + 8];
	const char *env = getenv("FPGAD_URL"), *card = env_card();

	if (card)
		return fpgad_card_url(card, card_url, sizeof(card_url)) < 0 ? "" : card_url;
	return env && env[0] ? env : FPGAD_DEFAULT_URL;
}

static void client_free(fpgad_client *c)
{
	reconnect_close(c);
	nng_aio_free(c->aio);
	free(c->unanswered);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/*
 * A Hello round trip lasts at most this long while connecting: a
 * connection that carries no answer for so long may be one a stopped
 * listener holds (fpgad then listens anew: control.c), so the next try
 * goes on a new socket, until the client's timeout.
 */
#define CONNECT_TRY_MS 1500
/*
 * A connection closed before any answer: fpgad at its connection limit,
 * or a stopped listener closed under it; a refusal this many times in a
 * row is the limit.
 */
#define CONNECT_REFUSALS 3

static int connect_hello(fpgad_client *c)
{
	uint64_t deadline = clock_deadline_ns(c->timeout_ms);
	unsigned refusals = 0;
	bool refused;
	int r;

	for (;;) {
		uint64_t now = clock_now_ns();
		int left = (int)((deadline > now ? deadline - now : 0) / CLOCK_NS_PER_MS);

		reconnect_set_timeouts(c, left < CONNECT_TRY_MS ? left + 1 : CONNECT_TRY_MS);
		r = session_hello(c);
		pthread_mutex_lock(&c->lock);
		refused = c->refused;
		if (refused && r < 0 && ++refusals < CONNECT_REFUSALS && left > 0)
			c->refused = false;	/* the dialer brings the next */
		pthread_mutex_unlock(&c->lock);
		if (refused && r < 0 && refusals < CONNECT_REFUSALS && left > 0)
			continue;
		if (r != -ETIMEDOUT || refused || left <= CONNECT_TRY_MS)
			break;
		/* Its connection closed by this side: no refusal by fpgad. */
		reconnect_close(c);
		pthread_mutex_lock(&c->lock);
		c->refused = false;
		pthread_mutex_unlock(&c->lock);
		r = reconnect_open(c, false);
		if (r < 0)
			break;
	}
	reconnect_set_timeouts(c, c->timeout_ms);
	return r;
}

int fpgad_connect(const char *url, fpgad_client **ret_client)
{
	fpgad_client *c;
	int rv, r;

	if (!url && env_card())
		return fpgad_connect_card(env_card(), ret_client);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	snprintf(c->url, sizeof(c->url), "%s", url ? url : fpgad_default_url());
	c->timeout_ms = 5000;
	pthread_mutex_init(&c->lock, NULL);
	c->connecting = true;
	rv = nng_aio_alloc(&c->aio, NULL, NULL);
	if (rv) {
		pthread_mutex_destroy(&c->lock);
		free(c);
		return errmap_nng(rv);
	}
	/* The socket and its dialer: fpgad must answer now. */
	r = reconnect_open(c, true);
	if (r < 0)
		goto fail;
	r = connect_hello(c);
	pthread_mutex_lock(&c->lock);
	c->connecting = false;
	if (r < 0 && c->refused) {
		conn_set_errmsg(c, "%s: fpgad closed the connection without answering: it is at its connection limit",
				c->url);
		r = -EUSERS;
	}
	c->refused = false;
	pthread_mutex_unlock(&c->lock);
	if (r < 0)
		goto fail;
	*ret_client = c;
	return 0;
fail:
	client_free(c);
	return r;
}

int fpgad_connect_card(const char *name, fpgad_client **ret_client)
{
	char url[PATH_MAX + 8];
	int r = card_find(name, url, sizeof(url));

	return r < 0 ? r : fpgad_connect(url, ret_client);
}

void fpgad_disconnect(fpgad_client *c)
{
	if (!c)
		return;
	attach_close_all(c);
	buffer_close_all(c);
	xfer_close(c);
	client_free(c);
}

void fpgad_set_timeout(fpgad_client *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms;
	reconnect_set_timeouts(c, timeout_ms);
}

void fpgad_set_reconnect(fpgad_client *c, bool reconnect)
{
	c->reconnect = reconnect;
}

void fpgad_set_log(fpgad_client *c, fpgad_log_fn fn, void *user)
{
	c->log = fn;
	c->log_user = user;
}

const char *fpgad_errmsg(const fpgad_client *c)
{
	return c ? c->errmsg : client_dial_errmsg();
}

const char *fpgad_server_software(const fpgad_client *c)
{
	return c->server;
}

int fpgad_status_get(fpgad_client *c, struct fpgad_status **ret_status)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__StatusRequest body = FPGAD__STATUS_REQUEST__INIT;
	Fpgad__StatusReply *sr;
	Fpgad__Response *resp;
	struct fpgad_status *s;
	int r;

	req.body_case = FPGAD__REQUEST__BODY_STATUS;
	req.status = &body;
	r = conn_transact(c, &req, &resp);
	if (r < 0)
		return r;
	r = conn_expect(c, resp, FPGAD__RESPONSE__BODY_STATUS);
	if (r < 0)
		return r;
	sr = resp->status;
	s = calloc(1, sizeof(*s));
	if (!s || !(s->channels = calloc(sr->n_channels + 1, sizeof(*s->channels)))) {
		free(s);
		fpgad__response__free_unpacked(resp, NULL);
		return -ENOMEM;
	}
	COPY(s->version, sr->version);
	s->uptime_ms = sr->uptime_ms;
	COPY(s->backend, sr->backend);
	COPY(s->mode, sr->mode);
	COPY(s->mode_reason, sr->mode_reason);
	s->clients = sr->clients;
	s->pid = sr->pid;
	COPY(s->gpu_sharing, sr->gpu_sharing);
	COPY(s->gpu_sharing_note, sr->gpu_sharing_note);
	s->card_memory = sr->card_memory;
	COPY(s->transfer_engines, sr->transfer_engines);
	s->transfer_queues = sr->transfer_queues;
	s->transfer_buffers = sr->transfer_buffers;
	s->transfer_registered = sr->transfer_registered;
	s->transfers = sr->transfers;
	s->transfer_bytes = sr->transfer_bytes;
	s->transfer_errors = sr->transfer_errors;
	s->transfer_refused = sr->transfer_refused;
	COPY(s->numa, sr->numa);
	COPY(s->gpu_choice, sr->gpu_choice);
	if (sr->card) {
		const Fpgad__CardInventory *ci = sr->card;

		COPY(s->card.pci_address, ci->pci_address);
		s->card.vendor_id = (uint16_t)ci->vendor_id;
		s->card.device_id = (uint16_t)ci->device_id;
		s->card.subsystem_vendor_id = (uint16_t)ci->subsystem_vendor_id;
		s->card.subsystem_device_id = (uint16_t)ci->subsystem_device_id;
		s->card.link_gen = ci->link_gen;
		s->card.link_width = ci->link_width;
		s->card.max_link_gen = ci->max_link_gen;
		s->card.max_link_width = ci->max_link_width;
		s->card.numa_node = ci->numa_node;
		COPY(s->card.driver, ci->driver);
		COPY(s->card.module_version, ci->module_version);
		COPY(s->card.simulates, ci->simulates);
		if (ci->aer) {
			s->card.aer = true;
			s->card.aer_correctable = ci->aer->correctable;
			s->card.aer_nonfatal = ci->aer->nonfatal;
			s->card.aer_fatal = ci->aer->fatal;
		}
	} else {
		s->card.numa_node = -1;	/* an older fpgad */
	}
	s->n_channels = (uint32_t)sr->n_channels;
	for (size_t i = 0; i < sr->n_channels; i++) {
		const Fpgad__ChannelSummary *in = sr->channels[i];
		struct fpgad_channel_summary *o = &s->channels[i];

		COPY(o->name, in->name);
		COPY(o->direction, in->direction);
		COPY(o->state, in->state);
		COPY(o->memory, in->memory);
		COPY(o->mode, in->mode);
		o->slots = in->slots;
		o->slot_size = in->slot_size;
		o->frame_size = in->frame_size;
		o->frames = in->frames;
		o->drops = in->drops;
		o->leases = in->leases;
		COPY(o->source, in->source);
		o->integrated = in->integrated;
	}
	fpgad__response__free_unpacked(resp, NULL);
	*ret_status = s;
	return 0;
}

void fpgad_status_free(struct fpgad_status *s)
{
	if (!s)
		return;
	free(s->channels);
	free(s);
}

int fpgad_clients_get(fpgad_client *c, struct fpgad_client_list **ret_list)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__ListClientsRequest body = FPGAD__LIST_CLIENTS_REQUEST__INIT;
	Fpgad__ListClientsReply *lr;
	Fpgad__Response *resp;
	struct fpgad_client_list *l;
	int r;

	req.body_case = FPGAD__REQUEST__BODY_LIST_CLIENTS;
	req.list_clients = &body;
	r = conn_transact(c, &req, &resp);
	if (r < 0)
		return r;
	r = conn_expect(c, resp, FPGAD__RESPONSE__BODY_LIST_CLIENTS);
	if (r < 0)
		return r;
	lr = resp->list_clients;
	l = calloc(1, sizeof(*l));
	if (!l || !(l->clients = calloc(lr->n_clients + 1, sizeof(*l->clients)))) {
		free(l);
		fpgad__response__free_unpacked(resp, NULL);
		return -ENOMEM;
	}
	l->n_clients = (uint32_t)lr->n_clients;
	for (size_t i = 0; i < lr->n_clients; i++) {
		const Fpgad__ClientInfo *in = lr->clients[i];
		struct fpgad_client_info *o = &l->clients[i];

		o->pid = in->pid;
		o->uid = in->uid;
		o->gid = in->gid;
		o->connected_ms = in->connected_ms;
		o->remote = in->remote;
		o->buffers = in->buffers;
		o->registered = in->registered;
		COPY(o->process, in->process);
		COPY(o->container, in->container_id);
		COPY(o->pod, in->pod_uid);
		o->pinned = in->pinned;
		for (size_t k = 0; k < in->n_leases && k < 16; k++)
			COPY(o->leases[o->n_leases++], in->leases[k]);
	}
	fpgad__response__free_unpacked(resp, NULL);
	*ret_list = l;
	return 0;
}

void fpgad_clients_free(struct fpgad_client_list *l)
{
	if (!l)
		return;
	free(l->clients);
	free(l);
}
