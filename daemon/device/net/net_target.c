// SPDX-License-Identifier: MIT
/*
 * net_target.c - the request that tells a network sender its target, and
 * its acknowledgement (net_target.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netpacket/packet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "clock.h"
#include "config/config.h"
#include "device/net/net_target.h"
#include "log.h"

static const uint32_t reg_addr[NET_TARGET_REGS] = {
	[NET_REG_VP_MASK_OFF] = NET_TARGET_HIF + 0x0c,
	[NET_REG_PACKET_SIZE] = NET_TARGET_HIF + 0x04,
	[NET_REG_BUFFER_LENGTH] = NET_TARGET_VP + 0x18,
	[NET_REG_HOST_MAC_LOW] = NET_TARGET_VP + 0x20,
	[NET_REG_HOST_MAC_HIGH] = NET_TARGET_VP + 0x24,
	[NET_REG_HOST_IP] = NET_TARGET_VP + 0x28,
	[NET_REG_HOST_UDP_PORT] = NET_TARGET_VP + 0x2c,
	[NET_REG_QP] = NET_TARGET_VP + 0x00,
	[NET_REG_RKEY] = NET_TARGET_VP + 0x04,
	[NET_REG_PAGE_LSB] = NET_TARGET_VP + 0x08,
	[NET_REG_PAGE_MSB] = NET_TARGET_VP + 0x0c,
	[NET_REG_PAGE_INC] = NET_TARGET_VP + 0x10,
	[NET_REG_MAX_BUFF] = NET_TARGET_VP + 0x14,
	[NET_REG_VP_MASK_ON] = NET_TARGET_HIF + 0x0c,
};

uint32_t net_target_reg_addr(unsigned r)
{
	return r < NET_TARGET_REGS ? reg_addr[r] : 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void net_target_request(const struct net_target *t, uint16_t seq,
		     uint8_t out[NET_TARGET_REQUEST])
{
	const uint8_t *m = t->host_mac;
	uint32_t v[NET_TARGET_REGS] = {
		[NET_REG_VP_MASK_OFF] = 0,
		[NET_REG_PACKET_SIZE] = t->payload / ROCE_PAYLOAD_UNIT,
		[NET_REG_BUFFER_LENGTH] = t->frame_size,
		[NET_REG_HOST_MAC_LOW] = (uint32_t)m[2] << 24 | (uint32_t)m[3] << 16 |
					 (uint32_t)m[4] << 8 | m[5],
		[NET_REG_HOST_MAC_HIGH] = (uint32_t)m[0] << 8 | m[1],
		[NET_REG_HOST_IP] = t->host_ip,
		[NET_REG_HOST_UDP_PORT] = t->host_port,
		[NET_REG_QP] = t->qpn,
		[NET_REG_RKEY] = t->rkey,
		[NET_REG_PAGE_LSB] = (uint32_t)t->layout.base,
		[NET_REG_PAGE_MSB] = (uint32_t)(t->layout.base >> 32),
		[NET_REG_PAGE_INC] = (uint32_t)(t->layout.stride / ROCE_PAYLOAD_UNIT),
		[NET_REG_MAX_BUFF] = t->layout.pages - 1,
		[NET_REG_VP_MASK_ON] = 1,
	};

	out[0] = NET_TARGET_WRITE_BLOCK;
	out[1] = NET_TARGET_FLAG_ACK;
	out[2] = (uint8_t)(seq >> 8);
	out[3] = (uint8_t)seq;
	out[4] = out[5] = 0;
	for (unsigned r = 0; r < NET_TARGET_REGS; r++) {
		put32(out + NET_TARGET_HDR + 8 * r, reg_addr[r]);
		put32(out + NET_TARGET_HDR + 8 * r + 4, v[r]);
	}
}

int net_target_reply(const uint8_t *buf, size_t len, uint16_t seq,
		  uint8_t *ret_status)
{
	if (len < NET_TARGET_REPLY_MIN ||
	    buf[0] != (NET_TARGET_WRITE_BLOCK | NET_TARGET_REPLY) ||
	    ((uint16_t)buf[2] << 8 | buf[3]) != seq)
		return -EAGAIN;
	*ret_status = buf[4];
	return buf[4] ? -EPROTO : 0;
}

/* --- the exchange, on the channel's socket ------------------------------ */

const char *net_endpoint_name(const struct sockaddr_storage *a, char *buf,
			      size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port;

	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)a;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	} else {
		const struct sockaddr_in *in = (const void *)a;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	}
	return buf;
}

void net_local_interface(const struct sockaddr_storage *a, char *ret, size_t len)
{
	struct ifaddrs *all, *i;

	snprintf(ret, len, "?");
	if ((a->ss_family == AF_INET &&
	     ((const struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY)) ||
	    (a->ss_family == AF_INET6 &&
	     IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)a)->sin6_addr))) {
		snprintf(ret, len, "any");
		return;
	}
	if (getifaddrs(&all) < 0)
		return;
	for (i = all; i; i = i->ifa_next) {
		const struct sockaddr *ia = i->ifa_addr;

		if (!ia || ia->sa_family != a->ss_family)
			continue;
		if (ia->sa_family == AF_INET ?
		    ((const struct sockaddr_in *)(const void *)ia)->sin_addr.s_addr ==
		    ((const struct sockaddr_in *)a)->sin_addr.s_addr :
		    !memcmp(&((const struct sockaddr_in6 *)(const void *)ia)->sin6_addr,
			    &((const struct sockaddr_in6 *)a)->sin6_addr, 16)) {
			snprintf(ret, len, "%s", i->ifa_name);
			break;
		}
	}
	freeifaddrs(all);
}

/* The MAC address of interface @name (zeros when it has none). */
static void local_mac(const char *name, uint8_t mac[6])
{
	struct ifaddrs *all, *i;

	memset(mac, 0, 6);
	if (getifaddrs(&all) < 0)
		return;
	for (i = all; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET &&
		    !strcmp(i->ifa_name, name))
			memcpy(mac, ((struct sockaddr_ll *)(void *)i->ifa_addr)->sll_addr, 6);
	freeifaddrs(all);
}

int net_target_open(struct net_target_ctl *c, const char *chan, const char *sender_control,
		 const struct sockaddr_storage *sender,
		 const struct sockaddr_storage *local, pthread_mutex_t *lock,
		 struct source_counters *cnt)
{
	struct sockaddr_storage to, from;
	socklen_t len = sizeof(from);
	struct sockaddr_in *in = (void *)&to;
	char ifname[16];
	int r;

	*c = (struct net_target_ctl){ .fd = -1, .chan = chan, .lock = lock, .cnt = cnt,
			       .wake_fd = -1 };
	snprintf(c->where, sizeof(c->where), "none");
	if (!strcmp(sender_control, "none"))
		return 0;
	if (sender_control[0]) {
		if (config_parse_endpoint(sender_control, true, &to) < 0)
			return -EINVAL;	/* config_load() refused it already */
	} else {
		to = *sender;
		in->sin_port = htons(NET_TARGET_PORT);
	}
	/* HSB's registers hold an IPv4 host address. */
	if (to.ss_family != AF_INET || local->ss_family != AF_INET) {
		log_notice("net: %s: the sender is not told its target over IPv6: configure it by hand (fpgactl stats shows the target)",
			   chan);
		return 0;
	}
	net_endpoint_name(&to, c->where, sizeof(c->where));
	c->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&to, sizeof(*in)) < 0 ||
	    getsockname(c->fd, (struct sockaddr *)&from, &len) < 0) {
		r = -errno;
		log_err("net: %s: the socket to the sender's control port %s: %s",
			chan, c->where, strerror(-r));
		return r;
	}
	/* Where it writes: the bound address, or the one towards it. */
	if (((const struct sockaddr_in *)local)->sin_addr.s_addr != htonl(INADDR_ANY))
		from = *local;
	c->target.host_ip = ntohl(((struct sockaddr_in *)&from)->sin_addr.s_addr);
	net_local_interface(&from, ifname, sizeof(ifname));
	local_mac(ifname, c->target.host_mac);
	c->target.host_port = ntohs(((const struct sockaddr_in *)local)->sin_port);
	return 0;
}

/* The control thread: sends, retries and reads replies until stopped. */
static void *ctl_main(void *arg)
{
	struct net_target_ctl *c = arg;
	struct pollfd p[2] = {
		{ .fd = c->wake_fd, .events = POLLIN },
		{ .fd = c->fd, .events = POLLIN },
	};
	uint64_t v;
	bool stop;

	for (;;) {
		pthread_mutex_lock(c->lock);
		stop = c->stop;
		pthread_mutex_unlock(c->lock);
		if (stop)
			break;
		net_target_step(c, clock_now_ns());
		if (poll(p, 2, net_target_timeout(c, clock_now_ns())) < 0 && errno != EINTR) {
			log_err("net: %s: control: poll: %s; the sender is no longer told its target",
				c->chan, strerror(errno));
			break;
		}
		if ((p[0].revents & POLLIN) && read(c->wake_fd, &v, sizeof(v)) < 0)
			log_debug("net: %s: control wake: %s", c->chan, strerror(errno));
		if (p[1].revents)
			net_target_replies(c);
	}
	return NULL;
}

/* Wake the control thread (a new ring, or stop). */
void net_target_wake(struct net_target_ctl *c)
{
	if (c->wake_fd >= 0 && eventfd_write(c->wake_fd, 1) < 0)
		log_warn("net: %s: cannot wake the control thread: %s", c->chan,
			 strerror(errno));
}

int net_target_start(struct net_target_ctl *c)
{
	int r;

	if (c->fd < 0)
		return 0;
	c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (c->wake_fd < 0) {
		r = -errno;
		log_err("net: %s: control: eventfd: %s", c->chan, strerror(-r));
		return r;
	}
	r = pthread_create(&c->thread, NULL, ctl_main, c);
	if (r) {
		log_err("net: %s: cannot start the control thread: %s", c->chan,
			strerror(r));
		return -r;
	}
	c->started = true;
	return 0;
}

void net_target_close(struct net_target_ctl *c)
{
	if (c->started) {
		pthread_mutex_lock(c->lock);
		c->stop = true;
		pthread_mutex_unlock(c->lock);
		net_target_wake(c);
		pthread_join(c->thread, NULL);
		c->started = false;
	}
	if (c->wake_fd >= 0)
		close(c->wake_fd);
	c->wake_fd = -1;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void net_target_new_ring(struct net_target_ctl *c, uint32_t rkey)
{
	c->target.rkey = rkey;
	c->pending = c->fd >= 0;
	c->armed = false;
	if (c->pending && !c->gated)
		net_target_wake(c);
}

bool net_target_armed(struct net_target_ctl *c)
{
	if (!c->gated || !c->pending || c->armed)
		return false;
	c->armed = true;
	return true;
}

/* The request under way was not acknowledged (*lock held). */
static void ctl_failed(struct net_target_ctl *c, const char *when)
{
	c->busy = false;
	c->cnt->control_failures++;
	log_warn("net: %s: the sender at %s did not acknowledge its target (R_Key 0x%08x) %s: it writes elsewhere until configured (fpgactl stats shows the target; sender_control says where fpgad sends it)",
		 c->chan, c->where, c->rkey, when);
}

void net_target_step(struct net_target_ctl *c, uint64_t now)
{
	if (c->fd < 0)
		return;
	pthread_mutex_lock(c->lock);
	/* One not acknowledged when a new ring goes out: it failed too. */
	if (c->pending && (!c->gated || c->armed) && c->busy)
		ctl_failed(c, "before the next ring");
	if (c->pending && (!c->gated || c->armed)) {
		c->pending = false;
		c->busy = true;
		c->seq++;
		c->tries = 0;
		c->next_ns = now;
		c->rkey = c->target.rkey;
		net_target_request(&c->target, c->seq, c->req);
	}
	if (c->busy && now >= c->next_ns && c->tries == NET_TARGET_TRIES)
		ctl_failed(c, "after its retries");
	pthread_mutex_unlock(c->lock);
	if (!c->busy || now < c->next_ns)
		return;
	/* Lost or refused on the way: the next try says it again. */
	if (send(c->fd, c->req, sizeof(c->req), 0) < 0)
		log_debug("net: %s: to the sender's control port: %s", c->chan,
			  strerror(errno));
	c->tries++;
	c->next_ns = now + (uint64_t)NET_TARGET_RETRY_MS * 1000000u;
}

void net_target_replies(struct net_target_ctl *c)
{
	uint8_t buf[512], status;
	ssize_t n;

	while ((n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT)) >= 0 ||
	       errno == ECONNREFUSED) {
		int r;

		if (n < 0 || !c->busy)
			continue;
		r = net_target_reply(buf, (size_t)n, c->seq, &status);
		if (r == -EAGAIN)
			continue;
		pthread_mutex_lock(c->lock);
		c->busy = false;
		if (r == 0) {
			c->cnt->control_acks++;
			log_info("net: %s: the sender at %s took its target: R_Key 0x%08x",
				 c->chan, c->where, c->rkey);
		} else {
			c->cnt->control_failures++;
			log_warn("net: %s: the sender at %s refused its target (status 0x%02x)",
				 c->chan, c->where, status);
		}
		pthread_mutex_unlock(c->lock);
	}
}

int net_target_timeout(const struct net_target_ctl *c, uint64_t now)
{
	if (c->fd < 0 || !c->busy)
		return -1;
	return c->next_ns <= now ? 0 :
	       (int)((c->next_ns - now + 999999) / 1000000);
}
