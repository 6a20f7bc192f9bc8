// SPDX-License-Identifier: MIT
/*
 * cmd_status.c - fpgactl status, channels, clients and version: fpgad's
 * own records, as a table or (--json) one object with stable field names.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fpgactl.h"
#include "fpgad_dma.h"

/* What this fpgactl was built with: CUDA or not, the ABIs it speaks. */
#ifdef FPGAD_CUDA
#define BUILD_CUDA true
#else
#define BUILD_CUDA false
#endif

static json_t *build_json(void)
{
	char abi[16];

	snprintf(abi, sizeof(abi), "%u.%u", FPGAD_DMA_ABI_MAJOR(FPGAD_DMA_ABI_VERSION),
		 FPGAD_DMA_ABI_MINOR(FPGAD_DMA_ABI_VERSION));
	return json_pack("{s:b, s:s}", "cuda", BUILD_CUDA, "kernel_module_abi", abi);
}

/*
 * fpgactl's version and build, and fpgad's (@c NULL: fpgactl's alone);
 * with --json the daemon's fields carry the names and values
 * `status --json` gives them (version, pid), and server is null without
 * fpgad.
 */
int fpgactl_version(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_status *s = NULL;
	json_t *server = json_null();
	int r;

	if (!o->json) {
		printf("fpgactl %s\nbuild: %s, control protocol %d, kernel module ABI %u.%u\n",
		       fpgad_version(), BUILD_CUDA ? "CUDA" : "no CUDA (host memory only)",
		       FPGAD_PROTOCOL_VERSION, FPGAD_DMA_ABI_MAJOR(FPGAD_DMA_ABI_VERSION),
		       FPGAD_DMA_ABI_MINOR(FPGAD_DMA_ABI_VERSION));
		if (c)
			printf("%s\n", fpgad_server_software(c));
		fflush(stdout);
		return 0;
	}
	if (c) {
		r = fpgad_status_get(c, &s);
		if (r < 0)
			return fpgactl_fail(c, "version", r);
		server = json_pack("{s:s, s:I, s:s}", "version", s->version,
				   "pid", (json_int_t)s->pid,
				   "software", fpgad_server_software(c));
	}
	fpgactl_print_json(json_pack("{s:s, s:i, s:o, s:o}",
				     "client", fpgad_version(),
				     "protocol", FPGAD_PROTOCOL_VERSION,
				     "build", build_json(), "server", server));
	fflush(stdout);
	fpgad_status_free(s);
	return 0;
}

/* One channel of Status as JSON (status, channels). */
static json_t *channel_json(const struct fpgad_channel_summary *ch)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "name", ch->name, "direction", ch->direction,
			 "source", ch->source,
			 "state", ch->state, "memory", ch->memory,
			 "integrated", ch->integrated,
			 "mode", ch->mode, "slots", (json_int_t)ch->slots,
			 "slot_size", (json_int_t)ch->slot_size,
			 "frame_size", (json_int_t)ch->frame_size,
			 "frames", (json_int_t)ch->frames,
			 "drops", (json_int_t)ch->drops,
			 "leases", (json_int_t)ch->leases);
}

/* Every channel of Status, as a JSON array. */
static json_t *channels_json(const struct fpgad_status *s)
{
	json_t *chans = json_array();

	for (uint32_t i = 0; i < s->n_channels; i++)
		json_array_append_new(chans, channel_json(&s->channels[i]));
	return chans;
}

/* An id or count as JSON: null where fpgad could not read it (0). */
static json_t *known_int(uint64_t v)
{
	return v ? json_integer((json_int_t)v) : json_null();
}

static json_t *known_str(const char *s)
{
	return s[0] ? json_string(s) : json_null();
}

/* The card of Status as JSON: identity, link, NUMA node, driver. */
static json_t *card_json(const struct fpgad_card *c)
{
	json_t *j = json_object();

	json_object_set_new(j, "pci_address", known_str(c->pci_address));
	json_object_set_new(j, "vendor_id", known_int(c->vendor_id));
	json_object_set_new(j, "device_id", known_int(c->device_id));
	json_object_set_new(j, "subsystem_vendor_id", known_int(c->subsystem_vendor_id));
	json_object_set_new(j, "subsystem_device_id", known_int(c->subsystem_device_id));
	json_object_set_new(j, "link_gen", known_int(c->link_gen));
	json_object_set_new(j, "link_width", known_int(c->link_width));
	json_object_set_new(j, "max_link_gen", known_int(c->max_link_gen));
	json_object_set_new(j, "max_link_width", known_int(c->max_link_width));
	json_object_set_new(j, "numa_node", c->numa_node >= 0 ?
			    json_integer(c->numa_node) : json_null());
	json_object_set_new(j, "driver", known_str(c->driver));
	json_object_set_new(j, "module_version", known_str(c->module_version));
	json_object_set_new(j, "simulates", known_str(c->simulates));
	/* 0 is a count like any other: null only when not available. */
	json_object_set_new(j, "aer_correctable", c->aer ?
			    json_integer((json_int_t)c->aer_correctable) : json_null());
	json_object_set_new(j, "aer_nonfatal", c->aer ?
			    json_integer((json_int_t)c->aer_nonfatal) : json_null());
	json_object_set_new(j, "aer_fatal", c->aer ?
			    json_integer((json_int_t)c->aer_fatal) : json_null());
	return j;
}

/* "PCIe Gen3 x8", or "unknown". */
const char *fpgactl_link_name(unsigned gen, unsigned width, char *buf, size_t len)
{
	if (gen && width)
		snprintf(buf, len, "PCIe Gen%u x%u", gen, width);
	else
		snprintf(buf, len, "unknown");
	return buf;
}

/* The card lines of status: what it is, its link, where it sits. */
static void print_card(const struct fpgad_card *c)
{
	char now[32], max[32];

	if (c->simulates[0]) {
		printf("card:     simulated: %s\n", c->simulates);
		return;
	}
	printf("card:     %s %04x:%04x (subsystem %04x:%04x), NUMA node %d, driver %s%s%s\n",
	       c->pci_address[0] ? c->pci_address : "?", c->vendor_id, c->device_id,
	       c->subsystem_vendor_id, c->subsystem_device_id, c->numa_node,
	       c->driver[0] ? c->driver : "none", c->module_version[0] ? " " : "",
	       c->module_version);
	fpgactl_link_name(c->link_gen, c->link_width, now, sizeof(now));
	fpgactl_link_name(c->max_link_gen, c->max_link_width, max, sizeof(max));
	printf("link:     %s (capable of %s)%s\n", now, max,
	       c->link_gen < c->max_link_gen || c->link_width < c->max_link_width ?
	       ": below what card and slot can do" : "");
	if (c->aer)
		printf("aer:      %llu correctable, %llu nonfatal, %llu fatal PCIe errors since boot%s\n",
		       (unsigned long long)c->aer_correctable,
		       (unsigned long long)c->aer_nonfatal,
		       (unsigned long long)c->aer_fatal,
		       c->aer_nonfatal || c->aer_fatal ? ": see fpgactl validate" : "");
	else
		printf("aer:      not available (no AER counters in sysfs)\n");
}

/* The MEMORY column: "igpu" for host memory an integrated GPU reads. */
static const char *memory_text(const struct fpgad_channel_summary *ch)
{
	return ch->integrated ? "igpu" : ch->memory;
}

/* What "igpu" means, under a table that shows it. */
static void print_igpu_note(const struct fpgad_status *s)
{
	for (uint32_t i = 0; i < s->n_channels; i++)
		if (s->channels[i].integrated) {
			printf("igpu: an integrated GPU's ring, in host memory the card writes and the GPU reads in place\n");
			return;
		}
}

/* The network channels' table under the channels'. */
static void print_net(fpgad_client *c, const struct fpgad_status *s)
{
	const char *names[64];
	unsigned n = 0;

	for (uint32_t i = 0; i < s->n_channels && n < 64; i++)
		names[n++] = s->channels[i].name;
	fpgactl_net_table(c, names, n);
}

json_t *fpgactl_status_json(const struct fpgad_status *s)
{
	json_t *j = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:I, s:o, s:I, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:s}",
			 "version", s->version,
			 "pid", (json_int_t)s->pid,
			 "uptime_ms", (json_int_t)s->uptime_ms,
			 "backend", s->backend, "mode", s->mode,
			 "mode_reason", s->mode_reason,
			 "gpu_sharing", s->gpu_sharing,
			 "gpu_sharing_note", s->gpu_sharing_note,
			 "clients", (json_int_t)s->clients,
			 "channels", channels_json(s),
			 "card_memory", (json_int_t)s->card_memory,
			 "transfer_engines", s->transfer_engines,
			 "transfer_queues", (json_int_t)s->transfer_queues,
			 "transfer_buffers", (json_int_t)s->transfer_buffers,
			 "transfer_registered", (json_int_t)s->transfer_registered,
			 "transfers", (json_int_t)s->transfers,
			 "transfer_bytes", (json_int_t)s->transfer_bytes,
			 "transfer_errors", (json_int_t)s->transfer_errors,
			 "transfer_refused", (json_int_t)s->transfer_refused,
			 "numa", s->numa, "gpu_choice", s->gpu_choice);

	if (j)
		json_object_set_new(j, "card", card_json(&s->card));
	return j;
}

int fpgactl_status(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_status *s;
	int r = fpgad_status_get(c, &s);

	if (r < 0)
		return fpgactl_fail(c, "status", r);
	if (o->json) {
		json_t *j = fpgactl_status_json(s);

		fpgactl_net_annotate(c, json_object_get(j, "channels"));
		fpgactl_print_json(j);
		fpgad_status_free(s);
		return 0;
	}
	printf("fpgad %s (pid %u), up %.1f s\n", s->version, s->pid,
	       s->uptime_ms / 1000.0);
	printf("backend:  %s\n", s->backend);
	print_card(&s->card);
	printf("mode:     %s%s%s%s\n", s->mode, s->mode_reason[0] ? " (" : "",
	       s->mode_reason, s->mode_reason[0] ? ")" : "");
	if (s->gpu_sharing[0])
		printf("gpu:      %s%s%s%s\n", s->gpu_sharing,
		       s->gpu_sharing_note[0] ? " (" : "", s->gpu_sharing_note,
		       s->gpu_sharing_note[0] ? ")" : "");
	if (s->numa[0])
		printf("numa:     %s\n", s->numa);
	if (s->gpu_choice[0])
		printf("choice:   %s\n", s->gpu_choice);
	printf("clients:  %u\n", s->clients);
	printf("card memory: %llu MiB; transfer engines: %s\n",
	       (unsigned long long)(s->card_memory >> 20), s->transfer_engines);
	printf("transfers: %llu (%llu bytes, %llu failed, %llu refused); "
	       "%u buffers registered (%llu bytes) on %u connections\n\n",
	       (unsigned long long)s->transfers,
	       (unsigned long long)s->transfer_bytes,
	       (unsigned long long)s->transfer_errors,
	       (unsigned long long)s->transfer_refused, s->transfer_buffers,
	       (unsigned long long)s->transfer_registered, s->transfer_queues);
	printf("%-12s %-4s %-10s %-6s %-9s %5s %10s %12s %8s %7s\n", "CHANNEL",
	       "DIR", "STATE", "MEMORY", "MODE", "SLOTS", "FRAME", "FRAMES",
	       "DROPS", "LEASES");
	for (uint32_t i = 0; i < s->n_channels; i++) {
		const struct fpgad_channel_summary *ch = &s->channels[i];

		printf("%-12s %-4s %-10s %-6s %-9s %5u %10llu %12llu %8llu %7u\n",
		       ch->name, ch->direction, ch->state, memory_text(ch), ch->mode,
		       ch->slots, (unsigned long long)ch->frame_size,
		       (unsigned long long)ch->frames,
		       (unsigned long long)ch->drops, ch->leases);
	}
	print_igpu_note(s);
	print_net(c, s);
	fpgad_status_free(s);
	return 0;
}

int fpgactl_channels(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_status *s;
	int r = fpgad_status_get(c, &s);

	if (r < 0)
		return fpgactl_fail(c, "channels", r);
	if (o->json) {
		fpgactl_print_json(json_pack("{s:o}", "channels", channels_json(s)));
		fpgad_status_free(s);
		return 0;
	}
	printf("%-12s %-4s %-6s %-9s %-10s %6s %10s %5s %10s %s\n", "CHANNEL", "DIR",
	       "MEMORY", "MODE", "STATE", "LEASES", "FRAME", "SLOTS", "SLOT_SIZE",
	       "SOURCE");
	for (uint32_t i = 0; i < s->n_channels; i++) {
		const struct fpgad_channel_summary *ch = &s->channels[i];

		printf("%-12s %-4s %-6s %-9s %-10s %6u %10llu %5u %10llu %s\n", ch->name,
		       ch->direction, memory_text(ch), ch->mode, ch->state, ch->leases,
		       (unsigned long long)ch->frame_size, ch->slots,
		       (unsigned long long)ch->slot_size, ch->source);
	}
	print_igpu_note(s);
	fpgad_status_free(s);
	return 0;
}

int fpgactl_clients(fpgad_client *c, const struct fpgactl_opts *o)
{
	struct fpgad_client_list *l;
	int r = fpgad_clients_get(c, &l);

	if (r < 0)
		return fpgactl_fail(c, "clients", r);
	if (o->json) {
		json_t *arr = json_array();

		for (uint32_t i = 0; i < l->n_clients; i++) {
			const struct fpgad_client_info *ci = &l->clients[i];
			json_t *leases = json_array();

			for (uint32_t k = 0; k < ci->n_leases; k++)
				json_array_append_new(leases, json_string(ci->leases[k]));
			json_array_append_new(arr, json_pack(
				"{s:I, s:I, s:I, s:s, s:s, s:s, s:I, s:b, s:o, s:I, s:I, s:I}",
				"pid", (json_int_t)ci->pid, "uid", (json_int_t)ci->uid,
				"gid", (json_int_t)ci->gid, "process", ci->process,
				"container", ci->container, "pod", ci->pod,
				"connected_ms", (json_int_t)ci->connected_ms,
				"remote", ci->remote, "leases", leases,
				"pinned", (json_int_t)ci->pinned,
				"buffers", (json_int_t)ci->buffers,
				"registered", (json_int_t)ci->registered));
		}
		fpgactl_print_json(json_pack("{s:o}", "clients", arr));
		fpgad_clients_free(l);
		return 0;
	}
	printf("%-8s %-6s %-6s %-16s %-20s %-10s %-16s %-12s %s\n", "PID", "UID",
	       "GID", "PROCESS", "CONNECTED", "PINNED", "BUFFERS", "CONTAINER",
	       "LEASES");
	for (uint32_t i = 0; i < l->n_clients; i++) {
		const struct fpgad_client_info *ci = &l->clients[i];
		time_t t = (time_t)(ci->connected_ms / 1000);
		char when[32], leases[256] = "-", bufs[32], pinned[32], where[64];
		struct tm tm;

		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
			 localtime_r(&t, &tm));
		for (uint32_t k = 0; k < ci->n_leases; k++)
			snprintf(leases + (k ? strlen(leases) : 0),
				 sizeof(leases) - (k ? strlen(leases) : 0),
				 "%s%s", k ? "," : "", ci->leases[k]);
		snprintf(bufs, sizeof(bufs), "%u (%s)", ci->buffers,
			 fpgactl_size_text(ci->registered, pinned, sizeof(pinned)));
		fpgactl_size_text(ci->pinned, pinned, sizeof(pinned));
		/* The container's short id; the pod's UID after the leases. */
		snprintf(where, sizeof(where), "%.12s", ci->container[0] ? ci->container : "-");
		printf("%-8u %-6u %-6u %-16s %-20s %-10s %-16s %-12s %s%s%s\n", ci->pid,
		       ci->uid, ci->gid, ci->process[0] ? ci->process : "-", when,
		       pinned, bufs, where, leases, ci->pod[0] ? "  pod " : "", ci->pod);
	}
	fpgad_clients_free(l);
	return 0;
}

