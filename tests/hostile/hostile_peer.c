// SPDX-License-Identifier: MIT
/*
 * hostile_peer.c - what a hostile client sends, byte for byte: the hostile
 * tier's peer.  It speaks nng's REQ framing by hand (ipc:// and tcp://),
 * so it controls every request id and every byte, and it sees a
 * connection fpgad drops as a drop, not as a retry.
 *
 *   hostile_peer req URL STEP...       one connection, one line per step
 *   hostile_peer flood HOST PORT N [sp] N tcp connections held until stdin
 *                                      ends (sp: each sends a REQ header)
 *
 * Steps (ID is the request id; NAME may hold "\0" for a NUL byte):
 *   hello:ID  status:ID  open:ID:NAME  shared:ID:NAME  close:ID:NAME
 *   stats:ID:NAME  reset:ID:NAME  size:ID:N (a Hello of exactly N bytes)
 *   hold (wait for stdin to end, keeping the connection and its leases)
 *
 * A step prints "STEP: CODE id=ID body=BODY reply=HASH msg=MESSAGE" (and
 * "channels=NAME:LESSEES:STATE,..." for status, "name=" for a grant), or
 * "STEP: dropped" when fpgad closed the connection; then the peer stops.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fpgad.pb-c.h"

/* The protocol version this peer speaks (Hello in proto/fpgad.proto). */
#define PEER_PROTOCOL 2

#define REPLY_TIMEOUT_MS 5000
#define NAME_PLACEHOLDER '\x01'

struct conn {
	int fd;
	bool ipc;		/* ipc framing has a message-type byte */
	uint32_t next_req;
};

static int dial_ipc(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

static int dial_tcp(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int fd, e;

	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		freeaddrinfo(ai);
		return e;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		e = -errno;
		close(fd);
		freeaddrinfo(ai);
		return e;
	}
	freeaddrinfo(ai);
	return fd;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* 0, or -EPIPE when the connection ended, -ETIMEDOUT. */
static int read_all(int fd, void *buf, size_t len, int timeout_ms)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, timeout_ms) == 0)
			return -ETIMEDOUT;
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* The SP header: REQ (0x30) to fpgad, REP (0x31) back. */
static const uint8_t sp_req[8] = { 0, 'S', 'P', 0, 0x00, 0x30, 0, 0 };

static int conn_open(struct conn *c, const char *url)
{
	uint8_t peer[8];
	int fd;

	memset(c, 0, sizeof(*c));
	c->next_req = 1;
	if (strncmp(url, "ipc://", 6) == 0) {
		c->ipc = true;
		fd = dial_ipc(url + 6);
	} else if (strncmp(url, "tcp://", 6) == 0) {
		char host[256], *colon;

		snprintf(host, sizeof(host), "%s", url + 6);
		colon = strrchr(host, ':');
		if (!colon)
			return -EINVAL;
		*colon = '\0';
		fd = dial_tcp(host, colon + 1);
	} else {
		return -EINVAL;
	}
	if (fd < 0)
		return fd;
	c->fd = fd;
	if (write_all(fd, sp_req, sizeof(sp_req)) < 0 ||
	    read_all(fd, peer, sizeof(peer), REPLY_TIMEOUT_MS) < 0 ||
	    memcmp(peer, "\0SP\0\0\x31\0\0", 8) != 0) {
		close(fd);
		return -EPROTO;
	}
	return 0;
}

static void put_be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* Send @body as one request; 0 and the reply body (malloc'ed), or -EPIPE. */
static int conn_roundtrip(struct conn *c, const uint8_t *body, size_t len,
			  uint8_t **ret_reply, size_t *ret_len)
{
	uint8_t hdr[13], *reply;
	uint32_t id = 0x80000000u | c->next_req++;
	size_t off = c->ipc ? 1 : 0;
	uint64_t rlen;
	int r;

	hdr[0] = 1;
	put_be64(hdr + off, len + 4);
	hdr[off + 8] = (uint8_t)(id >> 24);
	hdr[off + 9] = (uint8_t)(id >> 16);
	hdr[off + 10] = (uint8_t)(id >> 8);
	hdr[off + 11] = (uint8_t)id;
	if (write_all(c->fd, hdr, off + 12) < 0 || write_all(c->fd, body, len) < 0)
		return -EPIPE;
	r = read_all(c->fd, hdr, off + 8, REPLY_TIMEOUT_MS);
	if (r < 0)
		return r;
	rlen = 0;
	for (int i = 0; i < 8; i++)
		rlen = rlen << 8 | hdr[off + i];
	if (rlen < 4 || rlen > (1u << 24))
		return -EPROTO;
	reply = malloc(rlen);
	if (!reply)
		return -ENOMEM;
	r = read_all(c->fd, reply, rlen, REPLY_TIMEOUT_MS);
	if (r < 0) {
		free(reply);
		return r;
	}
	/* Drop the 4-byte request id fpgad echoes. */
	memmove(reply, reply + 4, rlen - 4);
	*ret_reply = reply;
	*ret_len = rlen - 4;
	return 0;
}

static uint64_t fnv1a(const uint8_t *p, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* "c2h0\0x" with "\0" as NUL_PLACEHOLDER, so that pack() keeps it. */
static void unescape_name(const char *in, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; in[i] && o + 1 < len; i++) {
		if (in[i] == '\\' && in[i + 1] == '0') {
			out[o++] = NAME_PLACEHOLDER;
			i++;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
}

/*
 * The placeholders of @name become the NUL bytes it asked for, in the
 * packed bytes: at the name's last occurrence, length byte included, so
 * that an id or a tag that happens to hold the placeholder is left alone.
 */
static void nul_in_name(uint8_t *buf, size_t len, const char *name)
{
	size_t n = strlen(name);
	uint8_t *at = NULL;

	if (!strchr(name, NAME_PLACEHOLDER) || n >= 128)
		return;
	for (size_t i = 0; i + 1 + n <= len; i++)
		if (buf[i] == n && memcmp(buf + i + 1, name, n) == 0)
			at = buf + i + 1;
	for (size_t i = 0; at && i < n; i++)
		if (at[i] == NAME_PLACEHOLDER)
			at[i] = 0;
}

/* A Hello of exactly @want bytes: its software string pads it. */
static uint8_t *sized_hello(uint64_t id, size_t want, size_t *ret_len)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__Hello h = FPGAD__HELLO__INIT;
	uint8_t *buf;
	char *pad;

	pad = malloc(want + 1);
	if (!pad)
		return NULL;
	req.id = id;
	req.body_case = FPGAD__REQUEST__BODY_HELLO;
	req.hello = &h;
	h.version = PEER_PROTOCOL;
	h.min_version = PEER_PROTOCOL;
	for (size_t l = want; ; l--) {
		memset(pad, 'x', l);
		pad[l] = '\0';
		h.software = pad;
		/* The varint of a length can jump a byte: try without min_version. */
		for (int drop = 0; drop < 2; drop++) {
			h.min_version = drop ? 0 : PEER_PROTOCOL;
			if (fpgad__request__get_packed_size(&req) == want)
				goto found;
		}
		if (l == 0)
			break;
	}
	free(pad);
	return NULL;
found:
	buf = malloc(want);
	if (buf)
		fpgad__request__pack(&req, buf);
	free(pad);
	*ret_len = want;
	return buf;
}

/* The bytes of one step's request; NULL for a step that sends nothing. */
static uint8_t *build(const char *kind, uint64_t id, const char *arg,
		      size_t *ret_len)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__Hello h = FPGAD__HELLO__INIT;
	Fpgad__StatusRequest st = FPGAD__STATUS_REQUEST__INIT;
	Fpgad__OpenChannelRequest oc = FPGAD__OPEN_CHANNEL_REQUEST__INIT;
	Fpgad__CloseChannelRequest cc = FPGAD__CLOSE_CHANNEL_REQUEST__INIT;
	Fpgad__ChannelStatsRequest cs = FPGAD__CHANNEL_STATS_REQUEST__INIT;
	Fpgad__ResetChannelRequest rc = FPGAD__RESET_CHANNEL_REQUEST__INIT;
	char name[128];
	uint8_t *buf;
	size_t len;

	if (strcmp(kind, "size") == 0)
		return sized_hello(id, arg ? strtoul(arg, NULL, 0) : 0, ret_len);
	unescape_name(arg ? arg : "", name, sizeof(name));
	req.id = id;
	if (strcmp(kind, "hello") == 0) {
		h.version = PEER_PROTOCOL;
		h.min_version = PEER_PROTOCOL;
		h.software = "hostile_peer";
		req.body_case = FPGAD__REQUEST__BODY_HELLO;
		req.hello = &h;
	} else if (strcmp(kind, "status") == 0) {
		req.body_case = FPGAD__REQUEST__BODY_STATUS;
		req.status = &st;
	} else if (strcmp(kind, "open") == 0 || strcmp(kind, "shared") == 0) {
		oc.name = name;
		oc.shared = kind[0] == 's';
		req.body_case = FPGAD__REQUEST__BODY_OPEN_CHANNEL;
		req.open_channel = &oc;
	} else if (strcmp(kind, "close") == 0) {
		cc.name = name;
		req.body_case = FPGAD__REQUEST__BODY_CLOSE_CHANNEL;
		req.close_channel = &cc;
	} else if (strcmp(kind, "stats") == 0) {
		cs.name = name;
		req.body_case = FPGAD__REQUEST__BODY_CHANNEL_STATS;
		req.channel_stats = &cs;
	} else if (strcmp(kind, "reset") == 0) {
		rc.name = name;
		req.body_case = FPGAD__REQUEST__BODY_RESET_CHANNEL;
		req.reset_channel = &rc;
	} else {
		return NULL;
	}
	len = fpgad__request__get_packed_size(&req);
	buf = malloc(len ? len : 1);
	if (!buf)
		return NULL;
	fpgad__request__pack(&req, buf);
	nul_in_name(buf, len, name);
	*ret_len = len;
	return buf;
}

static const char *body_name(Fpgad__Response__BodyCase b)
{
	switch (b) {
	case FPGAD__RESPONSE__BODY_HELLO: return "hello";
	case FPGAD__RESPONSE__BODY_STATUS: return "status";
	case FPGAD__RESPONSE__BODY_OPEN_CHANNEL: return "open_channel";
	case FPGAD__RESPONSE__BODY_CLOSE_CHANNEL: return "close_channel";
	case FPGAD__RESPONSE__BODY_CHANNEL_STATS: return "channel_stats";
	case FPGAD__RESPONSE__BODY_RESET_CHANNEL: return "reset_channel";
	default: return "none";
	}
}

static void print_reply(const char *step, const uint8_t *buf, size_t len)
{
	Fpgad__Response *resp = fpgad__response__unpack(NULL, len, buf);
	const ProtobufCEnumValue *code;

	if (!resp) {
		printf("%s: garbage (%zu bytes)\n", step, len);
		return;
	}
	code = protobuf_c_enum_descriptor_get_value(&fpgad__status_code__descriptor,
						    (int)resp->code);
	printf("%s: %s id=%llu body=%s reply=%016llx", step,
	       code ? code->name + strlen("STATUS_") : "?",
	       (unsigned long long)resp->id, body_name(resp->body_case),
	       (unsigned long long)fnv1a(buf, len));
	if (resp->body_case == FPGAD__RESPONSE__BODY_OPEN_CHANNEL)
		printf(" name=%s", resp->open_channel->name);
	if (resp->body_case == FPGAD__RESPONSE__BODY_CHANNEL_STATS)
		printf(" state=%s", resp->channel_stats->state);
	if (resp->body_case == FPGAD__RESPONSE__BODY_STATUS) {
		printf(" pid=%u channels=", resp->status->pid);
		for (size_t i = 0; i < resp->status->n_channels; i++) {
			const Fpgad__ChannelSummary *s = resp->status->channels[i];

			printf("%s%s:%u:%s", i ? "," : "", s->name, s->leases, s->state);
		}
	}
	printf(" msg=%s\n", resp->message);
	fpgad__response__free_unpacked(resp, NULL);
}

static void wait_stdin_end(void)
{
	char buf[64];

	while (read(0, buf, sizeof(buf)) > 0)
		;
}

static int cmd_req(const char *url, int argc, char **argv)
{
	struct conn c;
	int r;

	r = conn_open(&c, url);
	if (r < 0) {
		printf("connect: failed (%s)\n", strerror(-r));
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		char step[256], *kind, *id, *arg;
		uint8_t *req, *reply;
		size_t len, rlen;

		if (strcmp(argv[i], "hold") == 0) {
			printf("hold\n");
			fflush(stdout);
			wait_stdin_end();
			continue;
		}
		snprintf(step, sizeof(step), "%s", argv[i]);
		kind = strtok(step, ":");
		id = strtok(NULL, ":");
		arg = strtok(NULL, "");
		req = build(kind, id ? strtoull(id, NULL, 0) : 0, arg, &len);
		if (!req) {
			fprintf(stderr, "hostile_peer: bad step '%s'\n", argv[i]);
			return 2;
		}
		r = conn_roundtrip(&c, req, len, &reply, &rlen);
		free(req);
		if (r == -EPIPE) {
			printf("%s: dropped\n", argv[i]);
			break;
		}
		if (r < 0) {
			printf("%s: failed (%s)\n", argv[i], strerror(-r));
			break;
		}
		print_reply(argv[i], reply, rlen);
		fflush(stdout);
		free(reply);
	}
	close(c.fd);
	return 0;
}

/* A non-blocking connect to @host:@port under way; the fd or -errno. */
static int dial_tcp_start(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int fd, e;

	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		e = -errno;
		freeaddrinfo(ai);
		return e;
	}
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
		e = -errno;
		close(fd);
		freeaddrinfo(ai);
		return e;
	}
	freeaddrinfo(ai);
	return fd;
}

#define FLOOD_CONNECT_MS 3000

/*
 * N connections at once, all started together: "open=K" once K of them
 * are connected (or FLOOD_CONNECT_MS passed); each one fpgad closes
 * afterwards is counted, until stdin ends.
 */
static int cmd_flood(const char *host, const char *port, unsigned n, bool sp)
{
	struct pollfd *fds = calloc(n, sizeof(*fds));
	bool *up = calloc(n, sizeof(*up));
	unsigned started = 0, open_n = 0, closed = 0;
	struct rlimit rl;

	if (!fds || !up)
		return 1;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (unsigned i = 0; i < n; i++) {
		int fd = dial_tcp_start(host, port);

		if (fd < 0) {
			fprintf(stderr, "hostile_peer: connection %u: %s\n", i, strerror(-fd));
			break;
		}
		fds[started].fd = fd;
		fds[started].events = POLLOUT;
		started++;
	}
	/* Wait for the connects; a connected one may send the SP header. */
	for (int waited = 0; open_n < started && waited < FLOOD_CONNECT_MS; waited += 50) {
		if (poll(fds, started, 50) <= 0)
			continue;
		for (unsigned i = 0; i < started; i++) {
			int err = 0;
			socklen_t len = sizeof(err);

			if (up[i] || !(fds[i].revents & (POLLOUT | POLLERR | POLLHUP)))
				continue;
			getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
			if (err) {
				close(fds[i].fd);
				fds[i].fd = -1;
				continue;
			}
			up[i] = true;
			open_n++;
			fds[i].events = POLLIN;
			if (sp)
				(void)!write(fds[i].fd, sp_req, sizeof(sp_req));
		}
	}
	printf("open=%u\n", open_n);
	fflush(stdout);
	/* Hold them; count the ones fpgad ends, until stdin ends. */
	for (;;) {
		struct pollfd in = { .fd = 0, .events = POLLIN };
		char buf[64];

		if (poll(&in, 1, 0) > 0 && read(0, buf, sizeof(buf)) <= 0)
			break;
		if (poll(fds, started, 100) <= 0)
			continue;
		for (unsigned i = 0; i < started; i++) {
			if (fds[i].fd < 0 || !up[i] || !fds[i].revents)
				continue;
			ssize_t got = read(fds[i].fd, buf, sizeof(buf));

			if (got == 0 || (got < 0 && errno != EAGAIN)) {
				close(fds[i].fd);
				fds[i].fd = -1;
				closed++;
			}
		}
	}
	printf("closed=%u\n", closed);
	for (unsigned i = 0; i < started; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	free(up);
	free(fds);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 3 && strcmp(argv[1], "req") == 0)
		return cmd_req(argv[2], argc - 3, argv + 3);
	if (argc >= 5 && strcmp(argv[1], "flood") == 0)
		return cmd_flood(argv[2], argv[3], (unsigned)strtoul(argv[4], NULL, 0),
				 argc > 5 && strcmp(argv[5], "sp") == 0);
	fprintf(stderr, "usage: hostile_peer req URL STEP... | flood HOST PORT N [sp]\n");
	return 2;
}
