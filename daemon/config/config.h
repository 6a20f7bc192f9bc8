/* SPDX-License-Identifier: MIT */
/*
 * config.h - fpgad configuration: the parsed form of fpgad.conf.
 *
 * Every key is documented in systemd/fpgad.conf.  config_load() fills a
 * struct config from defaults and an INI file; bad keys or values fail
 * with "file:line: what is wrong", one line per error, every error of the
 * file, and leave *ret_cfg untouched.  The
 * file must be a regular file; a key set twice in a section, or a channel
 * declared twice, is an error naming both lines.  struct config keeps the
 * line of every key it read, so that a check made later (at start, against
 * the device) can name it too: config_where().
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
/* Ring slots are multiples of this, and the memory backends align them to it. */
#define MEMORY_SLOT_ALIGN 4096u
enum transfer_mode { MODE_AUTO, MODE_GPUDIRECT, MODE_BOUNCE, MODE_HOST };
enum ring_policy { POLICY_BLOCK, POLICY_DROP_OLDEST };
enum integrity { INTEGRITY_NONE, INTEGRITY_CRC32C };
enum pacing { PACING_HYBRID, PACING_WAIT };
/* Where a channel's frames come from: the card, or a network sender. */
enum source_kind { SOURCE_CARD, SOURCE_UDP, SOURCE_ROCE };
#define CONFIG_ROCE_PORT 4791		/* RoCE v2's UDP port */
/* How mode = auto picks between gpudirect and bounce. */
enum auto_choice { AUTO_MEASURE, AUTO_FIRST };
enum numa_policy { NUMA_AUTO, NUMA_OFF };

struct config_daemon {
	int log_level;			/* syslog priority, LOG_ERR..LOG_DEBUG */
	char runtime_dir[PATH_MAX];	/* the control and handoff sockets */
};

struct config_control {
	char group[64];			/* group owning the local socket */
	unsigned socket_mode;		/* permission bits of the socket */
	uint64_t max_message;		/* NNG_OPT_RECVMAXSZ */
	unsigned max_clients;		/* local connections at once */
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
	char numa_node[16];		/* the node modelled: a number, or "none" */
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
	unsigned card_regions;		/* card memory split into this many
					   regions, one per queue; 0 = one
					   address space for all */
};

struct config_device {
	enum backend_kind backend;
	char path[PATH_MAX];		/* xdma: /dev/fpgadN */
	char gpu[32];			/* CUDA device: index or PCI bus id */
	unsigned dma_timeout_ms;
	enum auto_choice auto_choice;	/* measure, or the first mode that works */
	unsigned probe_ms;		/* per mode and channel, at most; 0 = none */
	enum numa_policy numa;		/* threads and rings on the card's node */
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
	enum pacing pacing;		/* how the stream waits for the card */
	char gpu[32];			/* "" = [device] gpu */
	/* source = udp: a network-attached FPGA (daemon/device/net/net.h). */
	enum source_kind source;
	char listen[64];		/* local ADDRESS:PORT, port 0 = any */
	char sender[64];		/* the sender's ADDRESS[:PORT] */
	unsigned mtu;			/* the sender's, for its payload size */
	unsigned qpn;			/* the QP number the sender writes to */
	unsigned rkey;			/* 0 = a new random key for each ring */
	int icrc;			/* check RoCE's iCRC: 1 (yes) or 0 */
	int gro;			/* UDP GRO on the socket: 1 (yes) or 0 */
	char sender_control[64];	/* ADDRESS:PORT, "none", "" = sender:8192 */
	/* source = roce (daemon/device/net/net.h): listen is an ADDRESS. */
	char rdma_device[64];		/* ibverbs device, "" = the first with
					   a RoCE v2 GID for listen */
	unsigned sender_qpn;		/* the sender's QP number */
};

enum config_section {
	CONFIG_DAEMON, CONFIG_CONTROL, CONFIG_DEVICE, CONFIG_SIM, CONFIG_TRANSFER,
	CONFIG_CHANNEL,
};
#define CONFIG_SECTIONS CONFIG_CHANNEL	/* the ones that are not a channel */
#define CONFIG_MAX_KEYS 32		/* per section */

/* Where the file said what: line numbers, 0 = not in the file. */
struct config_lines {
	unsigned section[CONFIG_SECTIONS];
	unsigned key[CONFIG_SECTIONS][CONFIG_MAX_KEYS];
	unsigned channel[CONFIG_MAX_CHANNELS];
	unsigned channel_key[CONFIG_MAX_CHANNELS][CONFIG_MAX_KEYS];
};

struct config {
	char path[PATH_MAX];		/* file it came from, "" = defaults */
	struct config_lines lines;
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

/* Errors of one file kept for the report; more are counted. */
#define CONFIG_MAX_ERRORS 32
/* Room for a report of every kept error. */
#define CONFIG_ERR_LEN 8192

/*
 * Parse @path over the defaults.  On error returns a negative errno and
 * writes every error found into @err, one "file:line: what is wrong" a
 * line, in file order (an unknown key suggests the nearest known one).
 */
int config_load(const char *path, struct config *ret_cfg, char *err,
		size_t errlen);

/* Append one line to a report of errors in @err (a line that does not fit
 * is left out whole). */
void config_error_append(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

const struct config_channel *config_channel_find(const struct config *cfg,
						 const char *name);

/*
 * The keys whose values differ between @a and @b ("[sim] seed, [channel
 * c2h0] slots"), leaving out @skip (a NULL-ended list of "section.key"),
 * and channels only one of them has ("[channel x] added"); "" when none.
 * Returns how many were named.
 */
unsigned config_changes(const struct config *a, const struct config *b,
			const char *const *skip, char *buf, size_t len);

/*
 * Where @key of @section (of channel @channel, for CONFIG_CHANNEL) came
 * from, for a message: "FILE:LINE" (the key's line, else its section's),
 * "FILE" when the file does not mention it, "built-in defaults" without a
 * file.  Returns @buf.
 */
const char *config_where(const struct config *cfg, enum config_section section,
			 unsigned channel, const char *key, char *buf, size_t len);

/* The line where the file sets @key (as config_where()), 0 if it does not. */
unsigned config_key_line(const struct config *cfg, enum config_section section,
			 unsigned channel, const char *key);

const char *backend_kind_name(enum backend_kind k);
const char *direction_name(enum direction d);
const char *memory_kind_name(enum memory_kind k);
const char *transfer_mode_name(enum transfer_mode m);
const char *ring_policy_name(enum ring_policy p);
const char *integrity_name(enum integrity i);
const char *auto_choice_name(enum auto_choice c);
const char *source_kind_name(enum source_kind s);

struct sockaddr_storage;
/*
 * A numeric IPv4 address or [IPv6 address], with :PORT (required when
 * @need_port, else optional; 0 when absent).  0 or -EINVAL.
 */
int config_parse_endpoint(const char *s, bool need_port,
			  struct sockaddr_storage *ret_addr);

/* An endpoint's port (host order). */
unsigned config_endpoint_port(const struct sockaddr_storage *a);

/* Two endpoints config_parse_endpoint() made: the same address and port. */
bool config_endpoint_same(const struct sockaddr_storage *a,
			  const struct sockaddr_storage *b);

#endif
