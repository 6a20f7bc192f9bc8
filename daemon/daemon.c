// SPDX-License-Identifier: MIT
/*
 * daemon.c - fpgad's life cycle: a forward-only set-up ladder up to
 * READY=1, the loop (signals, watchdog, control hand-off), reload on
 * SIGHUP, and a tear-down that accepts a half-built daemon.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "channel/channel.h"
#include "channel/lease.h"
#include "clock.h"
#include "daemon.h"
#include "device/device.h"
#include "device/source.h"
#include "memory/memory.h"
#include "placement.h"
#include "preflight.h"
#include "requests.h"
#include "log.h"
#include "notify.h"
#include "service/runtime.h"
#include "topology/p2p.h"
#include "xfer/xfer.h"

static void on_connected(void *user, const struct peer *p)
{
	struct daemon *d = user;
	struct session *s;

	/* The listener admitted it; without a record it cannot be served. */
	if (session_get(&d->core.sessions, p, &s) < 0)
		control_close_pipe(d->ctl, p->pipe_id);
}

static void on_disconnected(void *user, uint32_t pipe_id)
{
	struct daemon *d = user;
	struct session *s = session_find(&d->core.sessions, pipe_id);

	if (s) {
		char who[PEER_NAME_MAX];

		log_debug("control: connection %u from %s closed", pipe_id,
			  peer_name(&s->peer, who, sizeof(who)));
		xfer_session_end(d->core.xfer, s);
		for (unsigned i = 0; i < d->core.n_channels; i++)
			lease_close(d->core.channels[i], s, 0);
	}
	session_gone(&d->core.sessions, pipe_id);
}

static void on_request(void *user, struct control_ctx *ctx,
		       const struct peer *p, const void *buf, size_t len)
{
	struct daemon *d = user;

	requests_handle(&d->core, ctx, p, buf, len);
}

static void update_status(struct daemon *d)
{
	unsigned streaming = 0;

	for (unsigned i = 0; i < d->core.n_channels; i++)
		streaming += channel_is_streaming(d->core.channels[i]);
	notify_status("%s: %u channel%s, %u streaming, %u client%s",
		      d->core.dev_name, d->core.n_channels, d->core.n_channels == 1 ? "" : "s",
		      streaming, d->core.sessions.count,
		      d->core.sessions.count == 1 ? "" : "s");
}

static void on_watchdog(uv_timer_t *t)
{
	struct daemon *d = t->data;

	notify_watchdog();
	update_status(d);
}

static void on_signal(uv_signal_t *sig, int signum)
{
	struct daemon *d = sig->data;

	if (signum == SIGHUP) {
		daemon_reload(d);
		return;
	}
	log_info("received %s, stopping", signum == SIGTERM ? "SIGTERM" : "SIGINT");
	notify_stopping();
	uv_stop(&d->loop);
}

static gid_t lookup_group(const char *name)
{
	struct group gr, *res = NULL;
	char buf[4096];

	if (!name[0])
		return (gid_t)-1;
	if (getgrnam_r(name, &gr, buf, sizeof(buf), &res) != 0 || !res) {
		log_warn("control: group '%s' does not exist; the socket keeps fpgad's group",
			 name);
		return (gid_t)-1;
	}
	return res->gr_gid;
}

static int open_device(struct daemon *d)
{
	char where[PATH_MAX + 16], why[PATH_MAX + 128];
	struct device_info info;
	int r;

	d->core.dev_ops = device_ops_for(d->core.cfg.device.backend);
	if (!d->core.dev_ops) {
		log_err("%s: device: backend %s is not built in",
			config_where(&d->core.cfg, CONFIG_DEVICE, 0, "backend", where,
				     sizeof(where)),
			backend_kind_name(d->core.cfg.device.backend));
		return -ENODEV;
	}
	why[0] = 0;
	r = d->core.dev_ops->open(&d->core.cfg, &d->core.dev, why, sizeof(why));
	if (r < 0) {
		/* The xdma backend's own words are about its path, the
		 * simulated card's about the memory it models. */
		if (d->core.cfg.device.backend == BACKEND_XDMA)
			config_where(&d->core.cfg, CONFIG_DEVICE, 0, "path", where, sizeof(where));
		else
			config_where(&d->core.cfg, CONFIG_SIM, 0, "card_memory", where,
				     sizeof(where));
		log_err("%s: device: cannot open %s backend: %s", where,
			d->core.dev_ops->name, why[0] ? why : strerror(-r));
		return r;
	}
	r = d->core.dev_ops->info(d->core.dev, &info);
	if (r < 0) {
		log_err("device: %s: cannot read its info: %s", d->core.dev_ops->name,
			strerror(-r));
		return r;
	}
	snprintf(d->core.dev_name, sizeof(d->core.dev_name), "%s", info.name);
	log_info("device: %s, %u C2H and %u H2C channels", info.name,
		 info.c2h_channels, info.h2c_channels);
	return 0;
}

/* Each channel's engine exists on the card: else name the config line. */
static int check_engines(struct daemon *d)
{
	struct device_info info;
	char err[CONFIG_ERR_LEN] = "";
	int r = d->core.dev_ops->info(d->core.dev, &info);

	if (r < 0)
		return 0;	/* open_device() said it */
	if (!preflight_engines(&d->core.cfg, &info, err, sizeof(err)))
		return 0;
	log_lines(LOG_ERR, "", err);
	return -EINVAL;
}

static int create_channels(struct daemon *d)
{
	char where[PATH_MAX + 16], why[PATH_MAX + 640];
	struct source src;
	int r;

	for (unsigned i = 0; i < d->core.cfg.n_channels; i++) {
		struct config_channel cc = d->core.cfg.channels[i];
		const struct probe_choice *pc = p2p_choice(d->core.p2p, cc.name);

		/* auto measured bounce as the better mode: ask for it. */
		if (pc && pc->mode == MODE_BOUNCE)
			cc.mode = MODE_BOUNCE;
		/*
		 * What a network channel needs of the host, said as
		 * --check-config says it, one line: not the source's own
		 * words and then the channel's about the same failure.
		 */
		why[0] = 0;
		if (preflight_channel(&d->core.cfg, i, why, sizeof(why))) {
			log_err("%s", why);
			return -ENODEV;
		}
		src = cc.source == SOURCE_UDP ? source_udp :
		      cc.source == SOURCE_ROCE ? source_roce :
		      (struct source){ .name = "card", .ops = d->core.dev_ops, .dev = d->core.dev };
		r = channel_create(&d->core.cfg, &cc, &src, &d->core.channels[i], why,
				   sizeof(why));
		if (r < 0) {
			log_err("%s: [channel %s] %s",
				config_where(&d->core.cfg, CONFIG_CHANNEL, i, NULL, where,
					     sizeof(where)),
				d->core.cfg.channels[i].name, why[0] ? why : strerror(-r));
			return r;
		}
		d->core.n_channels++;
		if (pc)
			channel_explain_mode(d->core.channels[i], pc->mode, pc->reason);
	}
	return 0;
}

/*
 * Under MPS, fpgad's copies and its consumers' kernels run side by side on
 * a GPU; without it the GPU time-slices the processes' contexts, which
 * cuts what a consumer doing GPU work gets to a fraction (README: MPS).
 */
static void survey_gpu_sharing(struct daemon *d)
{
	d->core.gpu_sharing = "";
	d->core.gpu_sharing_note = "";
	for (unsigned i = 0; i < d->core.n_channels; i++) {
		int gpu = channel_gpu(d->core.channels[i]);
		bool mps;

		if (gpu < 0)
			continue;
		if (memory_cuda_mps(gpu, &mps) < 0) {
			d->core.gpu_sharing = "unknown";
			d->core.gpu_sharing_note = "the CUDA driver does not say whether MPS serves fpgad";
		} else if (mps) {
			d->core.gpu_sharing = "mps";
			return;
		} else {
			d->core.gpu_sharing = "time-slicing";
			d->core.gpu_sharing_note = "no MPS: consumers' GPU work and fpgad's copies take turns on the GPU; start the MPS control daemon before fpgad (README: MPS)";
		}
	}
	if (d->core.gpu_sharing_note[0])
		log_notice("device: %s", d->core.gpu_sharing_note);
}

int daemon_start(struct daemon *d, const struct config *cfg)
{
	struct handoff_claimer claimer;
	struct control_options opt = { 0 };
	struct control_handlers h = {
		.user = d,
		.connected = on_connected,
		.disconnected = on_disconnected,
		.request = on_request,
	};
	int r;

	d->core.cfg = *cfg;
	d->core.start_ns = clock_now_ns();
	log_level = cfg->daemon.log_level;
	log_limit_init(&d->core.log_bad_request, "control: bad requests");
	log_limit_init(&d->core.log_denied, "control: denied requests");
	log_limit_init(&d->core.log_refused, "control: refused requests");
	d->core.log_limits_init = true;

	/* Before anything in the runtime directory is bound or unlinked. */
	r = runtime_open(cfg->daemon.runtime_dir, &d->rt);
	if (r < 0)
		goto fail;
	fdlimit_raise();

	r = uv_loop_init(&d->loop);
	if (r < 0) {
		log_err("libuv: %s", uv_strerror(r));
		goto fail;
	}
	d->loop_init = true;

	r = open_device(d);
	if (r < 0)
		goto fail;
	r = check_engines(d);
	if (r < 0)
		goto fail;
	r = placement_gpu(&d->core);
	if (r < 0)
		goto fail;
	r = p2p_survey(&d->core.cfg, d->core.dev_ops, d->core.dev, &d->core.p2p);
	if (r < 0)
		goto fail;
	r = placement_threads(&d->core);
	if (r < 0)
		goto fail;
	r = create_channels(d);
	if (r < 0)
		goto fail;
	survey_gpu_sharing(d);
	r = xfer_start(&d->core.cfg, d->core.dev_ops, d->core.dev, &d->core.xfer);
	if (r < 0)
		goto fail;

	snprintf(d->socket_url, sizeof(d->socket_url), "ipc://%s/fpgad.sock",
		 cfg->daemon.runtime_dir);
	opt.local_url = d->socket_url;
	opt.socket_mode = cfg->control.socket_mode;
	opt.socket_gid = lookup_group(cfg->control.group);
	opt.max_message = cfg->control.max_message;
	opt.max_clients = cfg->control.max_clients;
	r = control_start(&d->loop, &opt, &h, &d->ctl);
	if (r < 0)
		goto fail;
	snprintf(d->core.handoff_path, sizeof(d->core.handoff_path), "%s/fpgad.handoff",
		 cfg->daemon.runtime_dir);
	r = handoff_start(&d->loop, d->core.handoff_path, opt.socket_mode,
			  opt.socket_gid, &d->handoff);
	if (r < 0)
		goto fail;
	/* Who holds a token: a channel's leases, or the transfer plane's. */
	for (unsigned i = 0; i < d->core.n_channels && r == 0; i++) {
		lease_claimer(d->core.channels[i], &claimer);
		r = handoff_add_claimer(d->handoff, &claimer);
	}
	if (r == 0) {
		xfer_claimer(d->core.xfer, &claimer);
		r = handoff_add_claimer(d->handoff, &claimer);
	}
	if (r < 0)
		goto fail;

	uv_signal_init(&d->loop, &d->sig_term);
	uv_signal_init(&d->loop, &d->sig_int);
	uv_signal_init(&d->loop, &d->sig_hup);
	uv_timer_init(&d->loop, &d->watchdog);
	d->sig_term.data = d->sig_int.data = d->sig_hup.data = d;
	d->watchdog.data = d;
	d->handles_init = true;
	uv_signal_start(&d->sig_term, on_signal, SIGTERM);
	uv_signal_start(&d->sig_int, on_signal, SIGINT);
	uv_signal_start(&d->sig_hup, on_signal, SIGHUP);

	d->watchdog_usec = notify_watchdog_usec();
	if (d->watchdog_usec) {
		uint64_t ms = d->watchdog_usec / 2000;

		uv_timer_start(&d->watchdog, on_watchdog, ms ? ms : 1, ms ? ms : 1);
	}

	log_info("fpgad %s listening on %s", FPGAD_VERSION, d->socket_url);
	notify_ready();
	update_status(d);
	return 0;
fail:
	daemon_stop(d);
	return r;
}

int daemon_run(struct daemon *d)
{
	uv_run(&d->loop, UV_RUN_DEFAULT);
	return d->exit_code;
}

/* The listeners' connection limits from d->core.cfg, after a reload. */
static void reload_limits(struct daemon *d)
{
	struct control_options opt = {
		.max_clients = d->core.cfg.control.max_clients,
	};

	control_set_limits(d->ctl, &opt);
}

/* What can change without a restart: logging, limits and idle channels. */
static void apply_reload(struct daemon *d, const struct config *n)
{
	/* Applied now (below); every other key waits for the next start. */
	static const char *const live[] = {
		"daemon.log_level", "control.max_clients", "control.max_leases",
		"control.max_pinned", "transfer.max_buffers", "transfer.max_registered",
		NULL,
	};
	struct config *o = &d->core.cfg;
	char changed[1024];

	if (config_changes(o, n, live, changed, sizeof(changed)))
		log_notice("reload: %s: take%s effect at the next start (systemctl restart fpgad)",
			   changed, strchr(changed, ',') ? "" : "s");
	o->daemon.log_level = n->daemon.log_level;
	o->control.max_clients = n->control.max_clients;
	o->control.max_leases = n->control.max_leases;
	o->control.max_pinned = n->control.max_pinned;
	o->transfer.max_buffers = n->transfer.max_buffers;
	o->transfer.max_registered = n->transfer.max_registered;
	log_level = n->daemon.log_level;
	reload_limits(d);
}

void daemon_reload(struct daemon *d)
{
	struct config n;
	char err[CONFIG_ERR_LEN];

	notify_reloading();
	if (!d->core.cfg.path[0]) {
		log_info("reload: running on built-in defaults, no file to re-read");
	} else if (config_load(d->core.cfg.path, &n, err, sizeof(err)) < 0) {
		/* One error a line, as fpgad --check-config prints them. */
		if (strchr(err, '\n')) {
			log_lines(LOG_ERR, "reload: ", err);
			log_err("reload: %s has errors; keeping the running configuration",
				d->core.cfg.path);
		} else {
			log_err("reload: %s; keeping the running configuration", err);
		}
	} else {
		/* A directory the file does not name came from --runtime-dir. */
		if (!config_key_line(&n, CONFIG_DAEMON, 0, "runtime_dir"))
			snprintf(n.daemon.runtime_dir, sizeof(n.daemon.runtime_dir), "%s",
				 d->core.cfg.daemon.runtime_dir);
		apply_reload(d, &n);
		log_info("reload: %s applied", d->core.cfg.path);
	}
	notify_ready();
	update_status(d);
}

static void close_handle(uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, NULL);
}

void daemon_stop(struct daemon *d)
{
	control_stop(d->ctl);
	d->ctl = NULL;
	handoff_stop(d->handoff);
	d->handoff = NULL;
	xfer_stop(d->core.xfer);
	d->core.xfer = NULL;
	/* Leases end first (their lessees are told), then the channels go. */
	for (unsigned i = 0; i < d->core.n_channels; i++) {
		lease_end_all(d->core.channels[i]);
		channel_destroy(d->core.channels[i]);
	}
	d->core.n_channels = 0;
	p2p_free(d->core.p2p);
	d->core.p2p = NULL;
	if (d->core.dev)
		d->core.dev_ops->close(d->core.dev);
	d->core.dev = NULL;
	session_table_clear(&d->core.sessions);
	if (d->handles_init) {
		close_handle((uv_handle_t *)&d->sig_term);
		close_handle((uv_handle_t *)&d->sig_int);
		close_handle((uv_handle_t *)&d->sig_hup);
		close_handle((uv_handle_t *)&d->watchdog);
		d->handles_init = false;
	}
	if (d->loop_init) {
		uv_run(&d->loop, UV_RUN_DEFAULT);
		uv_loop_close(&d->loop);
		d->loop_init = false;
	}
	/* Last: the socket is gone, so the directory can be let go. */
	runtime_close(d->rt);
	d->rt = NULL;
	if (d->core.log_limits_init) {
		log_limit_destroy(&d->core.log_bad_request);
		log_limit_destroy(&d->core.log_denied);
		log_limit_destroy(&d->core.log_refused);
		d->core.log_limits_init = false;
	}
}
