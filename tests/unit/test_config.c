// SPDX-License-Identifier: MIT
/* test_config.c - fpgad.conf parsing: defaults, every key, every error. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <errno.h>

#include <cmocka.h>

#include "config/config.h"

static char path[64];

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int load(const char *text, struct config *cfg, char *err, size_t len)
{
	write_file(text);
	return config_load(path, cfg, err, len);
}

/* Whether one line of @err is "path:LINE: ..." containing @what. */
static bool has_error(const char *err, int line, const char *what)
{
	char prefix[96];

	snprintf(prefix, sizeof(prefix), "%s:%d: ", path, line);
	for (const char *p = err; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		size_t n = strcspn(p, "\n");
		const char *w = strstr(p, what);

		if (strncmp(p, prefix, strlen(prefix)) == 0 && w && w + strlen(what) <= p + n)
			return true;
	}
	return false;
}

/* A bad file must fail with a line "path:LINE: ..." containing @what. */
static void expect_error(const char *text, int line, const char *what)
{
	struct config cfg;
	char err[CONFIG_ERR_LEN];

	memset(&cfg, 0xa5, sizeof(cfg));
	assert_int_not_equal(load(text, &cfg, err, sizeof(err)), 0);
	if (!has_error(err, line, what))
		fail_msg("got '%s', want a line '%s:%d: ...%s...'", err, path, line, what);
	/* Untouched on failure. */
	assert_int_equal(((unsigned char *)&cfg)[0], 0xa5);
}

static int setup(void **state)
{
	int fd;

	(void)state;
	snprintf(path, sizeof(path), "/tmp/fpgad-test-config.XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

static void test_defaults(void **state)
{
	struct config cfg;

	(void)state;
	config_defaults(&cfg);
	assert_int_equal(cfg.n_channels, 1);
	assert_string_equal(cfg.channels[0].name, "c2h0");
	assert_int_equal(cfg.channels[0].direction, DIR_C2H);
	assert_int_equal(cfg.device.backend, BACKEND_SIM);
	assert_string_equal(cfg.daemon.runtime_dir, "/run/fpgad");
	assert_string_equal(cfg.control.group, "fpga");
	assert_int_equal(cfg.control.socket_mode, 0660);
	assert_int_equal(cfg.channels[0].slot_size % 4096, 0);
}

static void test_empty_file_is_defaults(void **state)
{
	struct config cfg, def;
	char err[256];

	(void)state;
	assert_int_equal(load("; nothing\n", &cfg, err, sizeof(err)), 0);
	config_defaults(&def);
	assert_int_equal(cfg.n_channels, 1);
	assert_string_equal(cfg.channels[0].name, def.channels[0].name);
	assert_string_equal(cfg.path, path);
}

static void test_every_key(void **state)
{
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load(
		"[daemon]\nlog_level = debug\nruntime_dir = /tmp/x\n"
		"[control]\ngroup = video\nsocket_mode = 0600\n"
		"max_message = 128K\n"
		"max_clients = 5\nmax_leases = 3\nmax_pinned = 1G\n"
		"[device]\nbackend = xdma\npath = /dev/fpgad3\ngpu = 0000:41:00.0\n"
		"dma_timeout_ms = 250\nauto_choice = first\n"
		"probe_ms = 50\n"
		"[sim]\ncard_memory = 4G\nlink = gen4x16\n"
		"[transfer]\nengines = 2\nqueue_entries = 64\nmax_length = 64M\n"
		"max_buffers = 9\nmax_registered = 2G\nbounce_slots = 4\n"
		"poll_us = 30\n"
		"[channel cam0]\ndirection = c2h\nengine = 1\nslots = 16\n"
		"slot_size = 2M\nframe_size = 1048576\nframe_rate = 120\n"
		"queue_depth = 8\npoll_us = 250\nmemory = cuda\nmode = bounce\npolicy = block\n"
		"gpu = 1\nintegrity = crc32c\npacing = wait\n"
		"[channel out0]\ndirection = h2c\nmemory = host\nmode = host\n",
		&cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.daemon.log_level, 7);
	assert_string_equal(cfg.daemon.runtime_dir, "/tmp/x");
	assert_string_equal(cfg.control.group, "video");
	assert_int_equal(cfg.control.socket_mode, 0600);
	assert_int_equal(cfg.control.max_message, 128 * 1024);
	assert_int_equal(cfg.control.max_clients, 5);
	assert_int_equal(cfg.control.max_leases, 3);
	assert_int_equal(cfg.control.max_pinned, 1ull << 30);
	assert_int_equal(cfg.device.backend, BACKEND_XDMA);
	assert_string_equal(cfg.device.path, "/dev/fpgad3");
	assert_string_equal(cfg.device.gpu, "0000:41:00.0");
	assert_int_equal(cfg.device.dma_timeout_ms, 250);
	assert_int_equal(cfg.device.auto_choice, AUTO_FIRST);
	assert_int_equal(cfg.device.probe_ms, 50);
	assert_int_equal(cfg.sim.card_memory, 4ull << 30);
	assert_int_equal(cfg.sim.link.gen, 4);
	assert_int_equal(cfg.sim.link.width, 16);
	assert_int_equal(cfg.transfer.engines, 2);
	assert_int_equal(cfg.transfer.queue_entries, 64);
	assert_int_equal(cfg.transfer.max_length, 64ull << 20);
	assert_int_equal(cfg.transfer.max_buffers, 9);
	assert_int_equal(cfg.transfer.max_registered, 2ull << 30);
	assert_int_equal(cfg.transfer.bounce_slots, 4);
	assert_int_equal(cfg.transfer.poll_us, 30);
	assert_int_equal(cfg.n_channels, 2);
	assert_string_equal(cfg.channels[0].name, "cam0");
	assert_int_equal(cfg.channels[0].engine, 1);
	assert_int_equal(cfg.channels[0].slots, 16);
	assert_int_equal(cfg.channels[0].slot_size, 2u << 20);
	assert_int_equal(cfg.channels[0].frame_size, 1u << 20);
	assert_int_equal(cfg.channels[0].frame_rate, 120);
	assert_int_equal(cfg.channels[0].queue_depth, 8);
	assert_int_equal(cfg.channels[0].poll_us, 250);
	assert_int_equal(cfg.channels[0].memory, MEMORY_CUDA);
	assert_int_equal(cfg.channels[0].mode, MODE_BOUNCE);
	assert_int_equal(cfg.channels[0].policy, POLICY_BLOCK);
	assert_int_equal(cfg.channels[0].integrity, INTEGRITY_CRC32C);
	assert_int_equal(cfg.channels[0].pacing, PACING_WAIT);
	assert_int_equal(cfg.channels[1].integrity, INTEGRITY_NONE);
	assert_int_equal(cfg.channels[1].pacing, PACING_HYBRID);
	assert_string_equal(cfg.channels[0].gpu, "1");
	assert_string_equal(cfg.channels[1].name, "out0");
	assert_int_equal(cfg.channels[1].direction, DIR_H2C);
	assert_non_null(config_channel_find(&cfg, "out0"));
	assert_null(config_channel_find(&cfg, "nope"));
}

/* Every error of a file is reported, each at its line, in file order. */
static void test_every_error(void **state)
{
	static const char text[] =
		"[daemon]\n"
		"log_level = loud\n"		/* 2 */
		"this line is not ini\n"		/* 3 */
		"[channel a]\n"
		"slotz = 4\n"			/* 5 */
		"mode = fast\n"			/* 6 */
		"[channel a]\n"			/* 7 */
		"slots = 4\n"			/* 8: of the refused header */
		"[chanel b]\n"			/* 9: said once, at its header */
		"x = 1\n"
		"y = 2\n"
		"[sim]\n"
		"link = gen9x8\n"		/* 13 */
		"also not ini\n";		/* 14 */
	struct config cfg;
	char err[CONFIG_ERR_LEN];
	unsigned lines = 1;

	(void)state;
	assert_int_equal(load(text, &cfg, err, sizeof(err)), -EINVAL);
	assert_true(has_error(err, 2, "log_level: 'loud'"));
	assert_true(has_error(err, 3, "syntax error"));
	assert_true(has_error(err, 5, "unknown key 'slotz' in [channel a]; did you mean slots?"));
	assert_true(has_error(err, 6, "mode: 'fast'"));
	assert_true(has_error(err, 7, "declared twice"));
	assert_true(has_error(err, 9, "unknown section [chanel b]; did you mean [channel NAME]?"));
	assert_true(has_error(err, 13, "link: 'gen9x8'"));
	assert_true(has_error(err, 14, "syntax error"));
	for (const char *p = err; (p = strchr(p, '\n')); p++)
		lines++;
	if (lines != 8)
		fail_msg("want 8 errors, one a line, got %u:\n%s", lines, err);
	/* In file order. */
	assert_true(strstr(err, ":2: ") < strstr(err, ":3: "));
	assert_true(strstr(err, ":13: ") < strstr(err, ":14: "));
}

/* An unknown key or section names the nearest known one, if one is near. */
static void test_suggestion(void **state)
{
	struct config cfg;
	char err[CONFIG_ERR_LEN];

	(void)state;
	expect_error("[channel a]\nslotz = 4\n", 2, "did you mean slots?");
	expect_error("[channel a]\nFrame_Sise = 4K\n", 2, "did you mean frame_size?");
	expect_error("[control]\nmax_client = 4\n", 2, "did you mean max_clients?");
	expect_error("[devise]\nbackend = sim\n", 1, "did you mean [device]?");
	assert_int_equal(load("[daemon]\nwhatever = 1\n", &cfg, err, sizeof(err)), -EINVAL);
	assert_null(strstr(err, "did you mean"));
}

static void test_link_unlimited(void **state)
{
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(load("[sim]\nlink = unlimited\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.sim.link.gen, 0);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("[daemon]\nbogus = 1\n", 2, "unknown key 'bogus' in [daemon]");
	/* At the header's line, with keys or without. */
	expect_error("[nope]\nx = 1\n", 1, "unknown section [nope]");
	expect_error("[daemon]\n\n[frobnicator]\n", 3, "unknown section [frobnicator]");
	expect_error("\n\n[channel a]\nslots = 1\n", 4, "slots: '1' is not a whole number from 2");
	expect_error("[channel a]\nslots = many\n", 2, "slots");
	expect_error("[channel a]\nslot_size = 12Q\n", 2, "slot_size: '12Q' is not a size");
	expect_error("[channel a]\nslot_size = -4K\n", 2, "is not a size");
	expect_error("[channel a]\nmode = fast\n", 2,
		     "mode: 'fast' is not one of auto, gpudirect, bounce, host");
	expect_error("[channel a]\npolicy = newest\n", 2, "block, drop-oldest");
	expect_error("[channel a]\nintegrity = md5\n", 2, "none, crc32c");
	expect_error("[channel a]\nintegrity = crc32c\nintegrity = none\n", 3, "integrity");
	expect_error("[channel a]\npacing = spin\n", 2, "hybrid, wait");
	expect_error("[sim]\nlink = gen9x8\n", 2, "link: 'gen9x8'");
	expect_error("[sim]\nlink = gen3x3\n", 2, "link: 'gen3x3'");
	expect_error("[control]\nsocket_mode = 660\n", 2, "octal mode");
	expect_error("[daemon]\nlog_level = loud\n", 2, "log_level");
	expect_error("[device]\nauto_choice = fastest\n", 2,
		     "auto_choice: 'fastest' is not one of measure, first");
	expect_error("[device]\nprobe_ms = 20000\n", 2,
		     "probe_ms: '20000' is not a whole number from 0 to 10000");
	expect_error("[device]\nprobe_ms = 10\nprobe_bytes = 64M\n", 3,
		     "[device] probe_bytes is no longer a key: the burst auto measures is bounded by [device] probe_ms, and by 256 MiB per mode; remove the line");
	expect_error("[transfer]\n\nqueue_entries = 100\n", 3,
		     "queue_entries: '100' is not a power of two from 8 to 2048");
	expect_error("[transfer]\nqueue_entries = 4096\n", 2, "power of two");
	expect_error("[transfer]\nengines = 9\n", 2,
		     "engines: '9' is not a whole number from 0 to 8");
	expect_error("[transfer]\nmax_length = 0\n", 2, "max_length");
	expect_error("[channel a b]\nslots = 4\n", 1, "a channel name is");
	expect_error("this is not ini\n", 1, "syntax error");
	/* Cross-key checks name the line of the key they are about... */
	expect_error("[channel a]\nslots = 4\n\n[channel b]\nslot_size = 5000\n", 5,
		     "[channel b] slot_size 5000 is not a positive multiple of 4096");
	expect_error("[channel a]\nslot_size = 64K\nframe_size = 1M\n", 3,
		     "frame_size 1048576 must be from 64 bytes to slot_size");
	expect_error("[channel a]\nframe_size = 1M\nslot_size = 64K\n", 2,
		     "frame_size 1048576 must be from 64 bytes to slot_size");
	expect_error("[channel a]\nmemory = host\nmode = gpudirect\n", 3,
		     "needs GPU memory");
	expect_error("[channel a]\nmemory = cuda\nmode = host\n", 3,
		     "mode host needs host memory");
	expect_error("[channel a]\n\n[channel b]\nengine = 0\n", 4,
		     "engine 0 already used by channel a");
	/* ...or of the channel's section when the file does not set it. */
	expect_error("[channel a]\n[channel b]\nslots = 4\n", 2,
		     "engine 0 already used by channel a");
	/* frame_size against slot_size: the one of the two the file sets. */
	expect_error("[channel a]\nslots = 4\nslot_size = 64K\n", 3,
		     "frame_size 1048576 must be from 64 bytes");
	expect_error("[daemon]\nlog_level = info\nruntime_dir = run/fpgad\n", 3,
		     "runtime_dir must be an absolute path");
}

/*
 * Inline comments after a blank, ';' or '#', end a value; a line that is
 * a comment stays one; a '#' inside a value (no blank before) is kept.
 */
static void test_inline_comments(void **state)
{
	struct config cfg;
	char err[1024];

	(void)state;
	if (load("[channel n]  # a network channel\nsource = roce    # RoCE v2\n"
		 "listen = 10.1.2.3 ; fpgad's address\nsender = 10.1.2.4\t# the FPGA\n"
		 "rdma_device = mlx5_0  # the NIC\nmtu = 4096 # path MTU\n"
		 "sender_qpn = 0x12 ; from the sender\n"
		 "slot_size = 64K\nframe_size = 60000\n"
		 "# mtu = 1024\n; mtu = 2048\n[daemon]\nruntime_dir = /tmp/a#b\n",
		 &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(cfg.channels[0].source, SOURCE_ROCE);
	assert_string_equal(cfg.channels[0].listen, "10.1.2.3");
	assert_string_equal(cfg.channels[0].sender, "10.1.2.4");
	assert_string_equal(cfg.channels[0].rdma_device, "mlx5_0");
	assert_int_equal(cfg.channels[0].mtu, 4096);
	assert_int_equal(cfg.channels[0].sender_qpn, 0x12);
	assert_string_equal(cfg.daemon.runtime_dir, "/tmp/a#b");
}

/*
 * A refused value is one error at its line: the default it leaves behind
 * is not refused again there by a later check.
 */
static void test_one_cause_a_line(void **state)
{
	struct config cfg;
	char err[1024];

	(void)state;
	expect_error("[channel n]\nsource = roce\nlisten = 10.1.2.3\nsender = 10.1.2.4\n"
		     "slot_size = 64K\nframe_size = 60000\nsender_qpn = 5\nmtu = 9000x\n", 8,
		     "mtu: '9000x' is not a whole number from 256 to 9216");
	assert_int_not_equal(load("[channel n]\nsource = roce\nlisten = 10.1.2.3\n"
				  "sender = 10.1.2.4\nslot_size = 64K\nframe_size = 60000\n"
				  "sender_qpn = 5\nmtu = 9000x\n", &cfg, err, sizeof(err)), 0);
	assert_null(strstr(err, "not a RoCE path MTU"));
	assert_null(strchr(err, '\n'));
}

/* Whether @err has exactly @n lines. */
static void expect_lines(const char *err, unsigned n)
{
	unsigned got = *err ? 1 : 0;

	for (const char *p = strchr(err, '\n'); p; p = strchr(p + 1, '\n'))
		got++;
	if (got != n)
		fail_msg("want %u error lines, got %u: '%s'", n, got, err);
}

/* queue_depth above slots: refused at queue_depth's line, as start must. */
static void test_queue_depth_above_slots(void **state)
{
	struct config cfg;
	char err[CONFIG_ERR_LEN];

	(void)state;
	expect_error("[channel c]\nslots = 4\nqueue_depth = 8\n", 3,
		     "queue_depth 8 is above slots (4)");
	/* queue_depth not in the file: its default (4) is cut to slots. */
	assert_int_equal(load("[channel c]\nslots = 2\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.channels[0].queue_depth, 2);
	assert_int_equal(load("[channel c]\nslots = 4\nqueue_depth = 4\n", &cfg, err,
			      sizeof(err)), 0);
}

/* gpu: an index, a PCI bus id or nearest; -1 is none of them. */
static void test_gpu_forms(void **state)
{
	static const char *const good[] = { "0", "3", "0000:41:00.0", "41:00.0", "nearest" };
	static const char *const bad[] = { "-1", "gpu0", "0x1", "41:00", "1234567" };
	struct config cfg;
	char text[128], err[CONFIG_ERR_LEN];

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(text, sizeof(text), "[device]\ngpu = %s\n[channel c]\ngpu = %s\n",
			 good[i], good[i]);
		if (load(text, &cfg, err, sizeof(err)) < 0)
			fail_msg("gpu = %s: %s", good[i], err);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "[device]\ngpu = %s\n", bad[i]);
		expect_error(text, 2, "[device] gpu: '");
		snprintf(text, sizeof(text), "[channel c]\ngpu = %s\n", bad[i]);
		expect_error(text, 2, "[channel c] gpu: '");
	}
	expect_error("[device]\ngpu = -1\n", 2, "is not a GPU index (0, 1, ...)");
}

/* A rule start applies with the file's values: h2c bounce, [sim] numa_node. */
static void test_start_rules(void **state)
{
	(void)state;
	expect_error("[channel h]\ndirection = h2c\nmode = bounce\n", 3,
		     "mode bounce serves c2h only");
	expect_error("[sim]\nnuma_node = zero\n", 2, "[sim] numa_node: 'zero' is not a node number or none");
	expect_error("[sim]\nnuma_node = -1\n", 2, "[sim] numa_node: '-1'");
}

/*
 * A value refused keeps its default, which no rule across keys judges
 * again on another line: one line per cause.
 */
/* @text fails with one line only, "path:LINE: ...@what...". */
static void expect_one_error(const char *text, int line, const char *what)
{
	struct config cfg;
	char err[CONFIG_ERR_LEN];

	assert_int_not_equal(load(text, &cfg, err, sizeof(err)), 0);
	if (!has_error(err, line, what))
		fail_msg("got '%s', want a line '%s:%d: ...%s...'", err, path, line, what);
	expect_lines(err, 1);
}

static void test_no_cascade(void **state)
{
	(void)state;
	/* source refused: its listen and sender are not "for a network source". */
	expect_one_error("[channel a]\nsource = udpp\nlisten = 127.0.0.1:0\nsender = 127.0.0.2\n",
			 2, "source: 'udpp' is not one of card, udp, roce");
	/* slot_size refused: frame_size is not measured against 1M. */
	expect_one_error("[channel a]\nslot_size = 5x\nframe_size = 2M\n", 2, "slot_size: '5x'");
	/* slots refused: queue_depth is not measured against the default. */
	expect_one_error("[channel a]\nslots = 1\nqueue_depth = 16\n", 2, "slots: '1'");
	/* engine refused: its default 0 is not "already used" by another. */
	expect_one_error("[channel a]\n[channel b]\nengine = 99\n", 3, "engine: '99'");
	/* mode refused on an h2c channel: no bounce rule on its default. */
	expect_one_error("[channel a]\ndirection = h2c\nmode = bounc\n", 3, "mode: 'bounc'");
	/* direction refused: a udp channel is not told it must be c2h. */
	expect_one_error("[channel a]\ndirection = up\nsource = udp\nlisten = 127.0.0.1:0\n"
			 "sender = 127.0.0.2\n", 2, "direction: 'up'");
}

/* source = udp: a network channel's keys, set and refused with their line. */
static void test_net_source(void **state)
{
	const char *net = "[channel n]\nsource = udp\nslot_size = 64K\nframe_size = 60000\n";
	char text[512], err[512];
	struct config cfg;

	(void)state;
	snprintf(text, sizeof(text), "%slisten = 10.1.2.3:4791\nsender = 10.1.2.4\n"
		 "mtu = 9000\nqpn = 0x123\nrkey = 0xbeef\n"
		 "[channel c]\nengine = 0\n", net);
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(cfg.channels[0].source, SOURCE_UDP);
	assert_string_equal(cfg.channels[0].listen, "10.1.2.3:4791");
	assert_string_equal(cfg.channels[0].sender, "10.1.2.4");
	assert_int_equal(cfg.channels[0].mtu, 9000);
	assert_int_equal(cfg.channels[0].qpn, 0x123);
	assert_int_equal(cfg.channels[0].rkey, 0xbeef);
	/* iCRC checked and GRO on unless said; the sender told at port 8192. */
	assert_int_equal(cfg.channels[0].icrc, 1);
	assert_int_equal(cfg.channels[0].gro, 1);
	assert_string_equal(cfg.channels[0].sender_control, "");
	/* A card channel beside it may take engine 0: the network takes none. */
	assert_int_equal(cfg.channels[1].source, SOURCE_CARD);
	assert_string_equal(source_kind_name(SOURCE_UDP), "udp");

	expect_error("[channel a]\nsource = tcp\n", 2, "source: 'tcp' is not one of card, udp, roce");
	expect_error("[channel a]\nsender = 10.0.0.1\n", 2,
		     "[channel a] sender is for a network source (source = udp or roce)");
	expect_error("[channel a]\nsource = udp\nlisten = 10.0.0.1:1\nsender = 10.0.0.2\nmtu = 100\n", 5,
		     "mtu: '100' is not a whole number from 256 to 9216");
	expect_error("[channel a]\nsource = udp\nqpn = 0x1000000\n", 3, "qpn");
	expect_error("[channel a]\nsource = udp\ndirection = h2c\nlisten = 10.0.0.1:1\nsender = 10.0.0.2\n", 2,
		     "a network source sends to the host: direction must be c2h");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\n", net);
	expect_error(text, 5, "listen: '10.0.0.1' is not ADDRESS:PORT");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1:70000\nsender = 10.0.0.2\n", net);
	expect_error(text, 5, "is not ADDRESS:PORT");
	snprintf(text, sizeof(text), "%slisten = [::1]:5\n", net);
	expect_error(text, 1, "sender: '' is not the sender's ADDRESS");
	snprintf(text, sizeof(text), "%slisten = [::1]:5\nsender = host.example\n", net);
	expect_error(text, 6, "sender: 'host.example' is not the sender's ADDRESS");
	snprintf(text, sizeof(text), "%slisten = [::1]:0\nsender = [fe80::1]:99\n", net);
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	snprintf(text, sizeof(text), "%slisten = [::1]:0\nsender = [::1]\nicrc = no\ngro = no\n"
		 "sender_control = none\n", net);
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(cfg.channels[0].icrc, 0);
	assert_int_equal(cfg.channels[0].gro, 0);
	assert_string_equal(cfg.channels[0].sender_control, "none");
	snprintf(text, sizeof(text), "%slisten = [::1]:0\nsender = [::1]\nicrc = maybe\n", net);
	expect_error(text, 7, "icrc: 'maybe' is not one of no, yes");
	snprintf(text, sizeof(text), "%slisten = [::1]:0\nsender = [::1]\nsender_control = fpga1\n", net);
	expect_error(text, 7, "sender_control: 'fpga1' is not ADDRESS:PORT (numeric) or none");
	expect_error("[channel a]\nicrc = no\n", 2,
		     "[channel a] icrc is for a network source (source = udp or roce)");
}

/*
 * udp channels on one ADDRESS:PORT share it, told apart by qpn: the same
 * qpn (the default's too) is refused naming both channels, distinct ones
 * load; port 0 (any free port) and other addresses share nothing.
 */
static void test_shared_port(void **state)
{
	const char *a = "[channel a]\nsource = udp\nlisten = 10.0.0.1:5000\nsender = 10.0.0.2\n";
	char text[512], err[CONFIG_ERR_LEN];
	struct config cfg;

	(void)state;
	snprintf(text, sizeof(text), "%s[channel b]\nsource = udp\nlisten = 10.0.0.1:5000\n"
		 "sender = 10.0.0.3\n", a);
	expect_error(text, 5, "[channel b] qpn 0x100: channel a listens on 10.0.0.1:5000 with the same qpn");
	snprintf(text, sizeof(text), "%sqpn = 0x200\n[channel b]\nsource = udp\n"
		 "listen = 10.0.0.1:5000\nsender = 10.0.0.3\nqpn = 0x200\n", a);
	expect_error(text, 10, "[channel b] qpn 0x200: channel a listens on 10.0.0.1:5000 with the same qpn");
	snprintf(text, sizeof(text), "%s[channel b]\nsource = udp\nlisten = 10.0.0.1:5000\n"
		 "sender = 10.0.0.3\nqpn = 0x101\ngro = no\n", a);
	expect_error(text, 10, "[channel b] gro: channel a listens on 10.0.0.1:5000 with gro = yes");
	snprintf(text, sizeof(text), "%s[channel b]\nsource = udp\nlisten = 10.0.0.1:5000\n"
		 "sender = 10.0.0.2\nqpn = 0x101\n", a);
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(cfg.channels[0].qpn, 0x100);
	assert_int_equal(cfg.channels[1].qpn, 0x101);
	/* Port 0 is a free port each, another address another socket. */
	snprintf(text, sizeof(text), "[channel a]\nsource = udp\nlisten = 10.0.0.1:0\nsender = 10.0.0.2\n"
		 "[channel b]\nsource = udp\nlisten = 10.0.0.1:0\nsender = 10.0.0.2\n"
		 "[channel c]\nsource = udp\nlisten = 10.0.0.4:5000\nsender = 10.0.0.2\n"
		 "[channel d]\nsource = udp\nlisten = 10.0.0.1:5001\nsender = 10.0.0.2\n");
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
}

/* source = roce: the keys it takes, its defaults, and each bad value refused. */
static void test_roce_source(void **state)
{
	const char *roce = "[channel r]\nsource = roce\nslot_size = 64K\nframe_size = 60000\n";
	char text[512], err[512];
	struct config cfg;

	(void)state;
	snprintf(text, sizeof(text), "%slisten = 10.1.2.3\nsender = 10.1.2.4\nsender_qpn = 0x11\n"
		 "rdma_device = rxe0\n", roce);
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(cfg.channels[0].source, SOURCE_ROCE);
	assert_string_equal(source_kind_name(SOURCE_ROCE), "roce");
	assert_string_equal(cfg.channels[0].rdma_device, "rxe0");
	assert_int_equal(cfg.channels[0].sender_qpn, 0x11);
	assert_int_equal(cfg.channels[0].mtu, 4096);
	/* Port 4791 may be written; IPv6; a smaller path MTU. */
	snprintf(text, sizeof(text), "%slisten = [fd00::1]:4791\nsender = [fd00::2]\nsender_qpn = 7\nmtu = 1024\n",
		 roce);
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_int_equal(cfg.channels[0].mtu, 1024);
	assert_string_equal(cfg.channels[0].rdma_device, "");
	/* The sender is told its target as a UDP sender is: sender_control. */
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 2\nsender_control = 10.0.0.9:8192\n", roce);
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_string_equal(cfg.channels[0].sender_control, "10.0.0.9:8192");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 2\nsender_control = none\n", roce);
	if (load(text, &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	assert_string_equal(cfg.channels[0].sender_control, "none");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 2\nsender_control = fpga1\n", roce);
	expect_error(text, 8, "sender_control: 'fpga1' is not ADDRESS:PORT (numeric) or none");

	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\n", roce);
	expect_error(text, 1, "sender_qpn: the sender's QP number is needed with source = roce");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 0\n", roce);
	expect_error(text, 7, "sender_qpn: '0' is not a whole number from 1 to 16777215");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 0x1000000\n", roce);
	expect_error(text, 7, "sender_qpn");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 2\nqpn = 0x10\n", roce);
	expect_error(text, 8, "qpn: fpgad's QP number is the NIC's with source = roce");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 2\nrkey = 5\n", roce);
	expect_error(text, 8, "rkey: the NIC makes a new R_Key for each ring");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 2\nmtu = 1500\n", roce);
	expect_error(text, 8, "mtu: 1500 is not a RoCE path MTU (256, 512, 1024, 2048 or 4096)");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1:5000\nsender = 10.0.0.2\nsender_qpn = 2\n", roce);
	expect_error(text, 5, "listen: '10.0.0.1:5000' is not a local ADDRESS");
	snprintf(text, sizeof(text), "%ssender = 10.0.0.2\nsender_qpn = 2\n", roce);
	expect_error(text, 1, "listen: '' is not a local ADDRESS");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = peer\nsender_qpn = 2\n", roce);
	expect_error(text, 6, "sender: 'peer' is not the sender's ADDRESS");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2:99\nsender_qpn = 2\n", roce);
	expect_error(text, 6, "sender: '10.0.0.2:99' is not the sender's ADDRESS");
	/* The roce keys are refused elsewhere. */
	expect_error("[channel a]\nsource = udp\nlisten = 10.0.0.1:1\nsender = 10.0.0.2\nsender_qpn = 3\n", 5,
		     "[channel a] sender_qpn is for source = roce");
	expect_error("[channel a]\nrdma_device = mlx5_0\n", 2,
		     "[channel a] rdma_device is for a network source (source = udp or roce)");
	/* And the UDP path's are refused for roce: the NIC checks the iCRC. */
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 2\nicrc = no\n", roce);
	expect_error(text, 8, "[channel r] icrc is for source = udp");
	snprintf(text, sizeof(text), "%slisten = 10.0.0.1\nsender = 10.0.0.2\nsender_qpn = 2\ngro = yes\n", roce);
	expect_error(text, 8, "[channel r] gro is for source = udp");
}

/*
 * The network listeners' keys moved to fpgad-exporter: each is refused at
 * its line, saying where it went, and nothing else is reported for it.
 */
static void test_moved_to_exporter(void **state)
{
	static const struct {
		const char *text, *what;
		int line;
	} moved[] = {
		{ "[control]\ngroup = x\nremote = tcp://0.0.0.0:7710\n",
		  "[control] remote moved to fpgad-exporter --remote URL", 3 },
		{ "[control]\ntls_cert_key = /etc/fpgad/tls.pem\n",
		  "[control] tls_cert_key moved to fpgad-exporter --tls-cert-key FILE", 2 },
		{ "[control]\nmax_remote_clients = 9\n",
		  "[control] max_remote_clients moved to fpgad-exporter --remote-max-clients N", 2 },
		{ "[control]\nmax_remote_per_address = 6\n",
		  "moved to fpgad-exporter --remote-max-per-address N", 2 },
		{ "[control]\nremote_idle_timeout_ms = 1500\n",
		  "moved to fpgad-exporter --remote-idle-timeout-ms MS", 2 },
		{ "[daemon]\nlog_level = info\n[metrics]\nlisten = http://0.0.0.0:9110/metrics\nmax_clients = 2\n",
		  "[metrics] moved to fpgad-exporter --metrics URL", 3 },
	};
	struct config cfg;
	char err[2048];

	(void)state;
	for (size_t i = 0; i < sizeof(moved) / sizeof(moved[0]); i++) {
		expect_error(moved[i].text, moved[i].line, moved[i].what);
		assert_int_not_equal(load(moved[i].text, &cfg, err, sizeof(err)), 0);
		assert_non_null(strstr(err, "fpgad-exporter(8)"));
		/* One cause, one line: the keys under [metrics] add nothing. */
		assert_null(strchr(err, '\n'));
	}
}

/*
 * The sim's fault injection left fpgad.conf for the environment: each old
 * key is refused at its line, naming the variable and the form to give.
 */
static void test_sim_faults_moved(void **state)
{
	static const char *const kinds[] = { "timeout", "error", "corrupt", "hang", "seed" };
	struct config cfg;
	char text[128], what[160], err[2048];

	(void)state;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(text, sizeof(text), "[sim]\nlink = gen3x8\n%s%s = 5\n",
			 strcmp(kinds[i], "seed") ? "fault_" : "", kinds[i]);
		snprintf(what, sizeof(what), "[sim] %s%s moved to the environment variable FPGAD_SIM_FAULTS=%s=N",
			 strcmp(kinds[i], "seed") ? "fault_" : "", kinds[i], kinds[i]);
		expect_error(text, 3, what);
		assert_int_not_equal(load(text, &cfg, err, sizeof(err)), 0);
		assert_non_null(strstr(err, "test knob"));
		assert_non_null(strstr(err, "fpgad(8)"));
		assert_null(strchr(err, '\n'));
	}
}

/* A key set twice, or a channel declared twice, names both lines. */
static void test_duplicates(void **state)
{
	(void)state;
	expect_error("[channel c2h0]\nslots = 4\n[channel c2h1]\nengine = 1\n"
		     "[channel c2h0]\nslots = 16\n", 5,
		     "[channel c2h0] is declared twice: first at line 1, again here");
	/* An empty second declaration is still a second one. */
	expect_error("[channel a]\n[channel a]\n", 2,
		     "[channel a] is declared twice: first at line 1");
	expect_error("[daemon]\nlog_level = info\n\nlog_level = debug\n", 4,
		     "[daemon] log_level is set twice: first at line 2, again here");
	expect_error("[channel a]\nslots = 4\nengine = 1\nslots = 8\n", 4,
		     "[channel a] slots is set twice: first at line 2");
	/* Across two [control] sections it is the same section's key. */
	expect_error("[control]\nmax_clients = 4\n[daemon]\n[control]\nmax_clients = 5\n", 5,
		     "[control] max_clients is set twice: first at line 2");
}

/* Only a regular file is a configuration file. */
static void test_not_a_regular_file(void **state)
{
	char dir[] = "/tmp/fpgad-test-config-dir.XXXXXX", fifo[64];
	struct config cfg;
	char err[512];

	(void)state;
	assert_non_null(mkdtemp(dir));
	memset(&cfg, 0xa5, sizeof(cfg));
	assert_int_equal(config_load(dir, &cfg, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory, not a configuration file"));
	assert_int_equal(((unsigned char *)&cfg)[0], 0xa5);
	/* A FIFO would block the start: refused without reading it. */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(config_load(fifo, &cfg, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not a regular file, not a configuration file"));
	assert_int_equal(config_load("/dev/null", &cfg, err, sizeof(err)), -EINVAL);
	unlink(fifo);
	rmdir(dir);
}

/* config_where() names the line of a key for checks made after loading. */
static void test_where(void **state)
{
	struct config cfg;
	char err[256], buf[128], want[128];

	(void)state;
	config_defaults(&cfg);
	assert_string_equal(config_where(&cfg, CONFIG_CHANNEL, 0, "engine", buf,
					 sizeof(buf)), "built-in defaults");
	assert_int_equal(load("[device]\nbackend = sim\n\n[channel a]\nslots = 4\n"
			      "[channel b]\n\nengine = 40\n", &cfg, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s:8", path);
	assert_string_equal(config_where(&cfg, CONFIG_CHANNEL, 1, "engine", buf,
					 sizeof(buf)), want);
	/* Not in the file: the channel's section line. */
	snprintf(want, sizeof(want), "%s:4", path);
	assert_string_equal(config_where(&cfg, CONFIG_CHANNEL, 0, "engine", buf,
					 sizeof(buf)), want);
	assert_string_equal(config_where(&cfg, CONFIG_CHANNEL, 0, NULL, buf,
					 sizeof(buf)), want);
	snprintf(want, sizeof(want), "%s:2", path);
	assert_string_equal(config_where(&cfg, CONFIG_DEVICE, 0, "backend", buf,
					 sizeof(buf)), want);
	snprintf(want, sizeof(want), "%s:1", path);
	assert_string_equal(config_where(&cfg, CONFIG_DEVICE, 0, "path", buf,
					 sizeof(buf)), want);
	/* A section the file does not have: the file. */
	assert_string_equal(config_where(&cfg, CONFIG_SIM, 0, "seed", buf,
					 sizeof(buf)), path);
	assert_int_equal(load("[daemon]\n[transfer]\nmax_buffers = 2\nengines = 1\n",
			      &cfg, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "%s:4", path);
	assert_string_equal(config_where(&cfg, CONFIG_TRANSFER, 0, "engines", buf,
					 sizeof(buf)), want);
}

static void test_missing_file(void **state)
{
	struct config cfg;
	char err[256];

	(void)state;
	assert_int_equal(config_load("/nonexistent/fpgad.conf", &cfg, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/fpgad.conf: No such file"));
}

/* The documented example states every default: keep the two in step. */
static void test_example_config_is_defaults(void **state)
{
	struct config cfg, def;
	char err[256];

	(void)state;
	if (config_load("systemd/fpgad.conf", &cfg, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	/* Every section is there, not only its defaults. */
	for (unsigned i = 0; i < CONFIG_SECTIONS; i++)
		if (!cfg.lines.section[i])
			fail_msg("systemd/fpgad.conf has no section %u of enum config_section", i);
	config_defaults(&def);
	memset(cfg.path, 0, sizeof(cfg.path));
	memset(&cfg.lines, 0, sizeof(cfg.lines));
	assert_memory_equal(&cfg, &def, sizeof(cfg));
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(transfer_mode_name(MODE_GPUDIRECT), "gpudirect");
	assert_string_equal(ring_policy_name(POLICY_DROP_OLDEST), "drop-oldest");
	assert_string_equal(memory_kind_name(MEMORY_CUDA), "cuda");
	assert_string_equal(direction_name(DIR_H2C), "h2c");
	assert_string_equal(backend_kind_name(BACKEND_XDMA), "xdma");
	assert_string_equal(auto_choice_name(AUTO_FIRST), "first");
}

/* What a reload names: the keys that differ, less those applied live. */
static void test_changes(void **state)
{
	static const char *const live[] = { "daemon.log_level", NULL };
	struct config *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	char err[CONFIG_ERR_LEN], out[512];

	(void)state;
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(load("[channel cam]\nslots = 4\n[sim]\ncard_memory = 1G\n", a, err, sizeof(err)), 0);
	assert_int_equal(load("[channel cam]\nslots = 4\n[sim]\ncard_memory = 1G\n", b, err, sizeof(err)), 0);
	assert_int_equal(config_changes(a, b, NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(load("[daemon]\nlog_level = debug\n[channel cam]\nslots = 8\n"
			      "[sim]\ncard_memory = 2G\n[channel two]\nengine = 1\n", b, err, sizeof(err)), 0);
	assert_int_equal(config_changes(a, b, live, out, sizeof(out)), 3);
	assert_string_equal(out, "[sim] card_memory, [channel cam] slots, [channel two] added");
	assert_int_equal(config_changes(a, b, NULL, out, sizeof(out)), 4);
	assert_non_null(strstr(out, "[daemon] log_level"));
	assert_int_equal(config_changes(b, a, live, out, sizeof(out)), 3);
	assert_non_null(strstr(out, "[channel two] removed"));
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_empty_file_is_defaults),
		cmocka_unit_test(test_every_key),
		cmocka_unit_test(test_link_unlimited),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_net_source),
		cmocka_unit_test(test_roce_source),
		cmocka_unit_test(test_shared_port),
		cmocka_unit_test(test_moved_to_exporter),
		cmocka_unit_test(test_sim_faults_moved),
		cmocka_unit_test(test_inline_comments),
		cmocka_unit_test(test_one_cause_a_line),
		cmocka_unit_test(test_duplicates),
		cmocka_unit_test(test_not_a_regular_file),
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_example_config_is_defaults),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_every_error),
		cmocka_unit_test(test_suggestion),
		cmocka_unit_test(test_queue_depth_above_slots),
		cmocka_unit_test(test_gpu_forms),
		cmocka_unit_test(test_start_rules),
		cmocka_unit_test(test_no_cascade),
		cmocka_unit_test(test_changes),
	};

	return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
