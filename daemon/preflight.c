// SPDX-License-Identifier: MIT
/*
 * preflight.c - the checks `fpgad --check-config` makes against the host
 * (preflight.h), each reported at the configuration line it is about.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <netinet/in.h>
#include <unistd.h>

#include "device/device.h"
#include "device/net/net_target.h"
#include "device/net/roce_verbs.h"
#include "device/sim/sim.h"
#include "memory/memory.h"
#include "log.h"
#include "preflight.h"
#include "topology/p2p.h"
#include "topology/place.h"
#include "xfer/xfer_impl.h"

/*
 * The socket's group: fpgad starts without it (the socket keeps fpgad's
 * group, so only root connects), so the checker warns, as fpgad does,
 * and counts no error: the built-in defaults pass on a fresh host.
 */
static unsigned check_group(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16], buf[4096];
	struct group gr, *res = NULL;
	int r;

	(void)err;
	(void)len;
	if (!cfg->control.group[0])
		return 0;
	r = getgrnam_r(cfg->control.group, &gr, buf, sizeof(buf), &res);
	if (r == 0 && res)
		return 0;
	log_warn("%s: warning: [control] group '%s' does not exist: the socket keeps fpgad's group and only root can connect (create it: groupadd --system %s)",
		 config_where(cfg, CONFIG_CONTROL, 0, "group", where, sizeof(where)),
		 cfg->control.group, cfg->control.group);
	return 0;
}

static unsigned check_card_engines(const struct config *cfg, char *err, size_t len);

static unsigned check_device_node(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16];
	struct stat st;

	if (cfg->device.backend != BACKEND_XDMA)
		return check_card_engines(cfg, err, len);
	config_where(cfg, CONFIG_DEVICE, 0, "path", where, sizeof(where));
	if (stat(cfg->device.path, &st) < 0) {
		config_error_append(err, len, "%s: [device] path %s: %s (is fpgad_dma.ko loaded? modprobe fpgad_dma)",
				    where, cfg->device.path, strerror(errno));
		return 1;
	}
	if (!S_ISCHR(st.st_mode)) {
		config_error_append(err, len, "%s: [device] path %s is not a character device",
				    where, cfg->device.path);
		return 1;
	}
	return check_card_engines(cfg, err, len);
}

/* Whether @ch must have a GPU: it asks for one by memory or mode. */
static bool channel_needs_gpu(const struct config_channel *ch)
{
	return ch->memory == MEMORY_CUDA || ch->mode == MODE_GPUDIRECT ||
	       ch->mode == MODE_BOUNCE;
}

/*
 * Each GPU a channel needs answers; so does one the file names for a
 * channel of memory = auto, on a host with GPUs (without any, such a
 * channel runs on host memory).
 */
static unsigned check_gpus(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16], why[256];
	unsigned found = 0;
	int ordinal;
	bool any_gpu = memory_cuda_probe(NULL, &ordinal, NULL, 0) == 0;

	for (unsigned i = 0; i < cfg->n_channels; i++) {
		const struct config_channel *ch = &cfg->channels[i];
		const char *gpu = ch->gpu[0] ? ch->gpu : cfg->device.gpu;
		bool named = ch->gpu[0] || config_key_line(cfg, CONFIG_DEVICE, 0, "gpu");

		if (ch->memory == MEMORY_HOST ||
		    (!channel_needs_gpu(ch) && !(named && any_gpu)))
			continue;
		if (memory_cuda_probe(gpu, &ordinal, why, sizeof(why)) == 0)
			continue;
		if (ch->gpu[0])
			config_where(cfg, CONFIG_CHANNEL, i, "gpu", where, sizeof(where));
		else if (channel_needs_gpu(ch))
			config_where(cfg, CONFIG_CHANNEL, i,
				     ch->memory == MEMORY_CUDA ? "memory" : "mode",
				     where, sizeof(where));
		else
			config_where(cfg, CONFIG_DEVICE, 0, "gpu", where, sizeof(where));
		config_error_append(err, len, "%s: [channel %s] needs GPU %s: %s",
				    where, ch->name, gpu, why);
		found++;
	}
	return found;
}

/* The rings, all together, fit in the host's memory. */
static unsigned check_ring_memory(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16];
	unsigned long long total = 0, ram;
	struct sysinfo si;

	if (sysinfo(&si) < 0)
		return 0;
	ram = (unsigned long long)si.totalram * si.mem_unit;
	for (unsigned i = 0; i < cfg->n_channels; i++) {
		const struct config_channel *ch = &cfg->channels[i];
		unsigned long long ring = (unsigned long long)ch->slots * ch->slot_size;

		total += ring;
		if (total <= ram)
			continue;
		config_error_append(err, len, "%s: [channel %s] ring of %u slots of %llu bytes: the rings need %llu MiB, the host has %llu MiB of memory",
				    config_where(cfg, CONFIG_CHANNEL, i, "slots", where, sizeof(where)),
				    ch->name, ch->slots, (unsigned long long)ch->slot_size,
				    total >> 20, ram >> 20);
		return 1;
	}
	return 0;
}

unsigned preflight_engines(const struct config *cfg, const struct device_info *info,
			   char *err, size_t len)
{
	char where[PATH_MAX + 16];
	unsigned found = 0;

	for (unsigned i = 0; i < cfg->n_channels; i++) {
		const struct config_channel *ch = &cfg->channels[i];
		unsigned n = ch->direction == DIR_C2H ? info->c2h_channels :
							info->h2c_channels;

		if (ch->source != SOURCE_CARD || ch->engine < n)
			continue;
		config_error_append(err, len, "%s: [channel %s] engine %u: the card (%s) has %u %s engine%s (0-%u); pick one of those",
				    config_where(cfg, CONFIG_CHANNEL, i, "engine", where, sizeof(where)),
				    ch->name, ch->engine, info->name, n,
				    direction_name(ch->direction), n == 1 ? "" : "s",
				    n ? n - 1 : 0);
		found++;
	}
	return found;
}

/*
 * The card's engines, as start finds them (check_engines()): the
 * simulated card's are fixed; a real card is opened, as fpgad opens it,
 * and asked.  Called once its device node is there.
 */
static unsigned check_card_engines(const struct config *cfg, char *err, size_t len)
{
	const struct device_ops *ops = device_ops_for(cfg->device.backend);
	struct device_info info = { .c2h_channels = SIM_ENGINES, .h2c_channels = SIM_ENGINES };
	char where[PATH_MAX + 16], why[PATH_MAX + 128] = "";
	struct device *dev = NULL;
	unsigned found;
	int r;

	if (cfg->device.backend == BACKEND_SIM) {
		snprintf(info.name, sizeof(info.name), "sim");
		return preflight_engines(cfg, &info, err, len);
	}
	if (!ops)
		return 0;	/* start says it is not built in: the same below */
	r = ops->open(cfg, &dev, why, sizeof(why));
	if (r < 0) {
		config_error_append(err, len, "%s: device: cannot open %s backend: %s",
				    config_where(cfg, CONFIG_DEVICE, 0, "path", where, sizeof(where)),
				    ops->name, why[0] ? why : strerror(-r));
		return 1;
	}
	found = ops->info(dev, &info) == 0 ? preflight_engines(cfg, &info, err, len) : 0;
	ops->close(dev);
	return found;
}

/*
 * The simulated card's memory: what it models at most, and, cut into
 * [transfer] card_regions, regions of at least a GPU page each
 * (xfer_regions()).
 */
static unsigned check_sim_card(const struct config *cfg, char *err, size_t len)
{
	char where[PATH_MAX + 16];
	uint64_t size;
	unsigned n = cfg->transfer.card_regions;

	if (cfg->device.backend != BACKEND_SIM)
		return 0;
	size = sim_round_up(cfg->sim.card_memory ? cfg->sim.card_memory :
			    SIM_DEFAULT_CARD_MEMORY, SIM_PAGE);
	if (size > SIM_CARD_MAX) {
		config_error_append(err, len, "%s: [sim] card_memory %llu: the simulated card models up to %llu bytes (1T); set less",
				    config_where(cfg, CONFIG_SIM, 0, "card_memory", where, sizeof(where)),
				    (unsigned long long)cfg->sim.card_memory, SIM_CARD_MAX);
		return 1;
	}
	if (n && size / n < XFER_GPU_ALIGN) {
		config_error_append(err, len, "%s: [transfer] card_regions = %u: regions of the card's %llu bytes of memory would be below %u bytes; set card_regions to %llu or less, or raise [sim] card_memory",
				    config_where(cfg, CONFIG_TRANSFER, 0, "card_regions", where, sizeof(where)),
				    n, (unsigned long long)size, XFER_GPU_ALIGN,
				    (unsigned long long)(size / XFER_GPU_ALIGN));
		return 1;
	}
	return 0;
}

/*
 * source = udp: listen's address is one of this host's (port 0 here: the
 * port is taken at start, and a running fpgad may hold it now).
 */
static unsigned check_udp_listen(const struct config *cfg, unsigned i,
				 char *err, size_t len)
{
	const struct config_channel *ch = &cfg->channels[i];
	char where[PATH_MAX + 16];
	struct sockaddr_storage a;
	int fd, e;

	config_where(cfg, CONFIG_CHANNEL, i, "listen", where, sizeof(where));
	if (config_parse_endpoint(ch->listen, true, &a) < 0)
		return 0;	/* config_load() refused it */
	if (a.ss_family == AF_INET)
		((struct sockaddr_in *)&a)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&a)->sin6_port = 0;
	fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		config_error_append(err, len, "%s: [channel %s] source = udp: cannot make a UDP socket (%s): a network channel needs the network; under fpgad.service install the drop-in fpgad-remote.conf (fpgad(8), NETWORK CHANNELS)",
				    where, ch->name, strerror(e));
		return 1;
	}
	if (bind(fd, (const struct sockaddr *)&a, a.ss_family == AF_INET6 ?
		 sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) < 0) {
		e = errno;
		close(fd);
		if (e == EADDRNOTAVAIL)
			config_error_append(err, len, "%s: [channel %s] listen: %s is not an address of this host (%s): listen on one that ip -brief address lists, or 0.0.0.0 for all; under fpgad.service the unit has no network without the drop-in fpgad-remote.conf (fpgad(8), NETWORK CHANNELS)",
					    where, ch->name, ch->listen, strerror(e));
		else
			config_error_append(err, len, "%s: [channel %s] listen: cannot bind %s (%s)",
					    where, ch->name, ch->listen, strerror(e));
		return 1;
	}
	close(fd);
	return 0;
}

/*
 * A network channel's sender_control (else the sender's port 8192): fpgad
 * tells the sender its target there over IPv4, on a socket connected at
 * start (net_target_open()); a connect that fails here fails there.
 */
static unsigned check_sender_control(const struct config *cfg, unsigned i,
				     char *err, size_t len)
{
	const struct config_channel *ch = &cfg->channels[i];
	const char *key = ch->sender_control[0] ? "sender_control" : "sender";
	char where[PATH_MAX + 16];
	struct sockaddr_storage to;
	int fd, e = 0;

	if (strcmp(ch->sender_control, "none") == 0)
		return 0;
	if (ch->sender_control[0] ?
	    config_parse_endpoint(ch->sender_control, true, &to) < 0 :
	    config_parse_endpoint(ch->sender, false, &to) < 0)
		return 0;	/* config_load() refused it */
	if (to.ss_family != AF_INET)
		return 0;	/* not told over IPv6: fpgad says so and goes on */
	if (!ch->sender_control[0])
		((struct sockaddr_in *)&to)->sin_port = htons(NET_TARGET_PORT);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)&to, sizeof(struct sockaddr_in)) < 0)
		e = errno;
	if (fd >= 0)
		close(fd);
	if (!e)
		return 0;
	config_error_append(err, len, "%s: [channel %s] %s: cannot reach the sender's control port %s (%s): give sender_control an ADDRESS:PORT this host has a route to, or sender_control = none to configure the sender by hand",
			    config_where(cfg, CONFIG_CHANNEL, i, key, where, sizeof(where)),
			    ch->name, key, ch->sender_control[0] ? ch->sender_control : ch->sender,
			    strerror(e));
	return 1;
}

/* source = roce: an RDMA device, the one named if any, has listen's GID. */
static unsigned check_roce_device(const struct config *cfg, unsigned i,
				  char *err, size_t len)
{
	const struct config_channel *ch = &cfg->channels[i];
	char where[PATH_MAX + 16], why[512] = "";
	struct sockaddr_storage a;
	const char *key = "source";

	if (config_parse_endpoint(ch->listen, false, &a) < 0)
		return 0;	/* config_load() refused it */
	if (roce_verbs_check(ch->rdma_device, &a, why, sizeof(why)) == 0)
		return 0;
	if (strncmp(why, "rdma_device: ", 13) == 0)
		key = "rdma_device";
	else if (strncmp(why, "listen: ", 8) == 0)
		key = "listen";
	config_error_append(err, len, "%s: [channel %s] %s",
			    config_where(cfg, CONFIG_CHANNEL, i, key, where, sizeof(where)),
			    ch->name, why);
	return 1;
}

void preflight_numa_error(const struct config *cfg, int node, int r, char *err,
			  size_t len)
{
	char where[PATH_MAX + 16];

	config_error_append(err, len, "%s: numa: [sim] numa_node = %d: its CPUs cannot be used (%s): name a node this host has and fpgad may run on (ls /sys/devices/system/node), or none",
			    config_where(cfg, CONFIG_SIM, 0, "numa_node", where, sizeof(where)),
			    node, strerror(-r));
}

/*
 * The node [sim] numa_node models: fpgad's threads go to its CPUs at
 * start (placement_threads()), so this process tries the same.
 */
static unsigned check_sim_numa(const struct config *cfg, char *err, size_t len)
{
	const char *root = getenv(P2P_TEST_ROOT_ENV);
	struct topo_source src = { 0 };
	char sysfs[PATH_MAX], what[256];
	int node, r;

	if (cfg->device.backend != BACKEND_SIM || cfg->device.numa == NUMA_OFF ||
	    strcmp(cfg->sim.numa_node, "none") == 0)
		return 0;
	if (root && root[0]) {
		snprintf(sysfs, sizeof(sysfs), "%.*s/sys", PATH_MAX - 8, root);
		src.sysfs = sysfs;
	}
	node = atoi(cfg->sim.numa_node);	/* config_load() checked it */
	r = place_on_node(&src, node, what, sizeof(what));
	if (r == 0)
		return 0;
	preflight_numa_error(cfg, node, r, err, len);
	return 1;
}

/* The test knob SIM_FAULTS_ENV, as the simulated card reads it at open. */
static unsigned check_sim_faults(const struct config *cfg, char *err, size_t len)
{
	struct sim_faults f;
	char why[512];

	if (cfg->device.backend != BACKEND_SIM ||
	    sim_faults_from_env(&f, why, sizeof(why)) == 0)
		return 0;
	config_error_append(err, len, "fpgad: %s; unset it or fix it", why);
	return 1;
}

unsigned preflight_channel(const struct config *cfg, unsigned i, char *err,
			   size_t len)
{
	/* One line per channel: what fails first at start. */
	switch (cfg->channels[i].source) {
	case SOURCE_UDP:
		return check_udp_listen(cfg, i, err, len) ?:
		       check_sender_control(cfg, i, err, len);
	case SOURCE_ROCE:
		return check_roce_device(cfg, i, err, len) ?:
		       check_sender_control(cfg, i, err, len);
	default:
		return 0;
	}
}

unsigned preflight_check(const struct config *cfg, char *err, size_t len)
{
	unsigned n = check_group(cfg, err, len) + check_device_node(cfg, err, len) +
		     check_sim_card(cfg, err, len) +
		     check_sim_numa(cfg, err, len) +
		     check_sim_faults(cfg, err, len) +
		     check_gpus(cfg, err, len) +
		     check_ring_memory(cfg, err, len);

	for (unsigned i = 0; i < cfg->n_channels; i++)
		n += preflight_channel(cfg, i, err, len);
	return n;
}
