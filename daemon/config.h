/* SPDX-License-Identifier: MIT */
/*
 * config.h - fpgad configuration: the parsed form of fpgad.conf.
 *
 * Every key is documented in systemd/fpgad.conf.  config_load() fills a
 * struct config from defaults and an INI file; a bad key or value fails
 * with "file:line: what is wrong" and leaves *ret_cfg untouched.
 */
#ifndef FPGAD_CONFIG_H
#define FPGAD_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "names.h"

#define CONFIG_MAX_CHANNELS 16
#define CONFIG_NAME_MAX NAME_MAX_CHANNEL

enum backend_kind { BACKEND_SIM, BACKEND_XDMA };
enum direction { DIR_C2H, DIR_H2C };
enum memory_kind { MEMORY_AUTO, MEMORY_CUDA, MEMORY_HOST };
enum transfer_mode { MODE_AUTO, MODE_GPUDIRECT, MODE_BOUNCE, MODE_HOST };
enum ring_policy { POLICY_BLOCK, POLICY_DROP_OLDEST };
enum integrity { INTEGRITY_NONE, INTEGRITY_CRC32C };

struct config_daemon {
	int log_level;			/* syslog priority, LOG_ERR..LOG_DEBUG */
	char runtime_dir[PATH_MAX];	/* socket and shared-memory names */
};

struct config_control {
	char group[64];			/* group owning the local socket */
	unsigned socket_mode;		/* permission bits of the socket */
	char remote[256];		/* read-only status listener URL, "" = off */
	char tls_cert_key[PATH_MAX];	/* tls+tcp: PEM file, certificate and key */
	uint64_t max_message;		/* NNG_OPT_RECVMAXSZ */
	unsigned max_clients;		/* connections at once */
	unsigned max_leases;		/* leases per client */
	uint64_t max_pinned;		/* ring bytes per client */
};

/* PCIe link model of the simulated card; gen == 0 means unlimited. */
struct link_model {
	unsigned gen;
	unsigned width;
};

struct config_sim {
	uint64_t card_memory;		/* modelled card address space, bytes */
	struct link_model link;
	unsigned seed;
	/* Fault injection: one fault in every N transfers, 0 = never. */
	unsigned fault_timeout;
	unsigned fault_error;
	unsigned fault_corrupt;
	unsigned fault_hang;
};

/* Card memory transfers for clients (fpgad_xfer.h). */
struct config_transfer {
	unsigned engines;		/* memory engines per direction, 0 = off */
	unsigned queue_entries;		/* submission entries per connection */
	uint64_t max_length;		/* longest transfer */
	unsigned max_buffers;		/* buffers per connection */
	uint64_t max_registered;	/* bytes registered per connection */
	unsigned bounce_slots;		/* pinned staging parts for bounce mode */
	unsigned poll_us;		/* the transfer thread spins this long
					   for work before it sleeps */
};

struct config_device {
	enum backend_kind backend;
	char path[PATH_MAX];		/* xdma: /dev/fpgadN */
	char gpu[32];			/* CUDA device: index or PCI bus id */
	unsigned dma_timeout_ms;
};

struct config_channel {
	char name[CONFIG_NAME_MAX];
	enum direction direction;
	unsigned engine;		/* card DMA channel index */
	unsigned slots;
	uint64_t slot_size;
	uint64_t frame_size;
	unsigned frame_rate;		/* frames per second, 0 = link speed */
	unsigned queue_depth;		/* transfers in flight on the card */
	unsigned poll_us;		/* spin this long for a completion before
					   sleeping, 0 = sleep at once */
	enum memory_kind memory;
	enum transfer_mode mode;
	enum ring_policy policy;
	enum integrity integrity;	/* check each frame's CRC in fpgad */
	char gpu[32];			/* "" = [device] gpu */
};

struct config {
	char path[PATH_MAX];		/* file it came from, "" = defaults */
	struct config_daemon daemon;
	struct config_control control;
	struct config_device device;
	struct config_sim sim;
	struct config_transfer transfer;
	unsigned n_channels;
	struct config_channel channels[CONFIG_MAX_CHANNELS];
};

/* Fill *cfg with the built-in defaults: one C2H channel "c2h0" on sim. */
void config_defaults(struct config *cfg);

/*
 * Parse @path over the defaults.  On error returns a negative errno and
 * writes a one-line "file:line: what is wrong" into @err.
 */
int config_load(const char *path, struct config *ret_cfg, char *err,
		size_t errlen);

const struct config_channel *config_channel_find(const struct config *cfg,
						 const char *name);

const char *backend_kind_name(enum backend_kind k);
const char *direction_name(enum direction d);
const char *memory_kind_name(enum memory_kind k);
const char *transfer_mode_name(enum transfer_mode m);
const char *ring_policy_name(enum ring_policy p);
const char *integrity_name(enum integrity i);

#endif
