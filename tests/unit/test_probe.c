// SPDX-License-Identifier: MIT
/*
 * test_probe.c - probe.c: bounded DMA bursts over the simulated card in
 * host memory (bounds, a second stage, injected errors and hangs, bad
 * parameters) and auto's choice between gpudirect and bounce as one table
 * of topology verdicts and measured rates.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/sim/sim.h"
#include "fpgad_simframe.h"
#include "topology/probe.h"

#define SLOT (64u << 10)
#define SLOTS 8u

static const struct device_ops *ops = &device_sim_ops;

struct fixture {
	struct config cfg;
	struct device *dev;
	struct device_queue *q;
	unsigned char *buf;
	uint64_t handle;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	config_defaults(&f->cfg);
	f->cfg.sim.card_memory = 64u << 20;
	f->buf = aligned_alloc(4096, SLOTS * SLOT);
	assert_non_null(f->buf);
	memset(f->buf, 0, SLOTS * SLOT);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	if (f->q) {
		ops->unpin(f->q, f->handle);
		ops->queue_close(f->q);
	}
	ops->close(f->dev);
	free(f->buf);
	free(f);
	return 0;
}

/* The sim with f->cfg's model, one c2h queue, the buffer pinned. */
static void start(struct fixture *f)
{
	struct config_channel ch = {
		.name = "probe", .direction = DIR_C2H, .engine = 0,
		.slots = SLOTS, .slot_size = SLOT, .frame_size = SLOT,
		.queue_depth = 4, .memory = MEMORY_HOST, .mode = MODE_HOST,
	};
	struct dev_region r = {
		.kind = DEV_REGION_HOST, .addr = f->buf, .fd = -1,
		.length = SLOTS * SLOT,
	};

	/* The faults a test set in the environment are this open's only. */
	assert_int_equal(ops->open(&f->cfg, &f->dev, NULL, 0), 0);
	unsetenv(SIM_FAULTS_ENV);
	assert_int_equal(ops->queue_open(f->dev, &ch, &f->q), 0);
	assert_int_equal(ops->pin(f->q, &r, &f->handle), 0);
}

static struct probe_params params(uint64_t max_bytes, unsigned max_ms)
{
	struct probe_params p = {
		.max_bytes = max_bytes, .max_ms = max_ms, .length = SLOT,
		.stride = SLOT, .slots = SLOTS, .depth = 4, .timeout_ms = 200,
	};

	return p;
}

static void test_bytes_bound(void **state)
{
	struct fixture *f = *state;
	struct probe_params p = params(4u << 20, 60000);
	struct sim_queue_stats st;
	struct probe_result res;
	const struct fpgad_simframe_hdr *h;

	start(f);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), 0);
	/* The time bound is generous: the byte bound ends it, exactly. */
	assert_int_equal(res.bytes, 4u << 20);
	assert_int_equal(res.transfers, (4u << 20) / SLOT);
	assert_true(res.ns > 0);
	assert_true(res.bytes_per_s > 0);
	assert_int_equal(sim_queue_stats(f->q, &st), 0);
	assert_int_equal(st.submitted, res.transfers);
	assert_int_equal(st.completed, res.transfers);
	/* The card wrote frames into every place of the pinned region. */
	for (unsigned i = 0; i < SLOTS; i++) {
		h = (const void *)(f->buf + (size_t)i * SLOT);
		assert_true(h->magic == FPGAD_SIMFRAME_MAGIC);
	}
}

static void test_time_bound(void **state)
{
	struct fixture *f = *state;
	struct probe_params p = params(1ull << 40, 50);
	struct sim_queue_stats st;
	struct probe_result res;

	/* 250 MB/s: a TiB cannot go through before the time bound. */
	f->cfg.sim.link.gen = 1;
	f->cfg.sim.link.width = 1;
	start(f);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), 0);
	assert_true(res.bytes > 0);
	assert_true(res.bytes < (1ull << 40));
	assert_int_equal(res.bytes, res.transfers * SLOT);
	/* Nothing left on the card. */
	assert_int_equal(sim_queue_stats(f->q, &st), 0);
	assert_int_equal(st.submitted, st.completed);
}

/* A second stage that finishes in order, counting. */
struct stage_log {
	unsigned fifo[SLOTS];
	unsigned head, tail;
	unsigned starts, finishes;
	uint64_t bytes;
	int fail_at;		/* the finish that fails, 0 = none */
};

static int stage_start(void *user, unsigned slot, uint64_t length)
{
	struct stage_log *l = user;

	assert_true(slot < SLOTS);
	assert_int_equal(length, SLOT);
	assert_true(l->tail - l->head < SLOTS);
	l->fifo[l->tail++ % SLOTS] = slot;
	l->starts++;
	l->bytes += length;
	return 0;
}

static int stage_finish(void *user, bool block, unsigned *ret_slot)
{
	struct stage_log *l = user;

	(void)block;
	assert_true(l->head != l->tail);
	*ret_slot = l->fifo[l->head++ % SLOTS];
	l->finishes++;
	if (l->fail_at && (int)l->finishes == l->fail_at)
		return -EFAULT;
	return 1;
}

static void test_stage(void **state)
{
	struct fixture *f = *state;
	struct probe_params p = params(2u << 20, 60000);
	struct stage_log log = { 0 };
	struct probe_stage stage = {
		.user = &log, .start = stage_start, .finish = stage_finish,
	};
	struct probe_result res;

	start(f);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, &stage, &res), 0);
	assert_int_equal(log.starts, res.transfers);
	assert_int_equal(log.finishes, log.starts);
	assert_int_equal(res.bytes, log.bytes);
	assert_int_equal(res.bytes, 2u << 20);

	/* A failing stage fails the burst, and every stage is taken back. */
	memset(&log, 0, sizeof(log));
	log.fail_at = 3;
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, &stage, &res), -EFAULT);
	assert_int_equal(log.finishes, log.starts);
}

static void test_dma_error(void **state)
{
	struct fixture *f = *state;
	struct probe_params p = params(2u << 20, 60000);
	struct sim_queue_stats st;
	struct probe_result res = { .bytes = 12345 };

	setenv(SIM_FAULTS_ENV, "error=3", 1);
	start(f);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), -EIO);
	assert_int_equal(res.bytes, 12345);	/* untouched on failure */
	assert_int_equal(sim_queue_stats(f->q, &st), 0);
	assert_int_equal(st.submitted, st.completed);
}

static void test_dma_timeout(void **state)
{
	struct fixture *f = *state;
	struct probe_params p = params(2u << 20, 60000);
	struct probe_result res;

	setenv(SIM_FAULTS_ENV, "timeout=2", 1);
	start(f);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), -ETIMEDOUT);
}

/* An engine that never answers: reset, every transfer accounted for. */
static void test_hang(void **state)
{
	struct fixture *f = *state;
	struct probe_params p = params(2u << 20, 60000);
	struct sim_queue_stats st;
	struct probe_result res;

	setenv(SIM_FAULTS_ENV, "hang=1", 1);
	start(f);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), -ETIMEDOUT);
	assert_int_equal(sim_queue_stats(f->q, &st), 0);
	assert_int_equal(st.submitted, st.completed);
	assert_true(st.canceled > 0);
}

static void test_bad_params(void **state)
{
	struct fixture *f = *state;
	struct probe_params p;
	struct probe_stage half = { .start = stage_start };
	struct probe_result res;

	start(f);
	p = params(1u << 20, 100);
	p.length = 0;
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), -EINVAL);
	p = params(1u << 20, 100);
	p.stride = SLOT / 2;
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), -EINVAL);
	p = params(1u << 20, 100);
	p.depth = SLOTS + 1;
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), -EINVAL);
	p = params(1u << 20, 0);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), -EINVAL);
	p = params(0, 100);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, NULL, &res), -EINVAL);
	p = params(1u << 20, 100);
	assert_int_equal(probe_run(ops, f->q, f->handle, &p, &half, &res), -EINVAL);
	assert_int_equal(probe_run(ops, NULL, f->handle, &p, NULL, &res), -EINVAL);
}

/* --- auto's choice ------------------------------------------------------------ */

#define GB 1e9
#define NO_TOPO ((enum topo_verdict)-1)

struct choice_case {
	enum auto_choice how;
	enum topo_verdict verdict;	/* NO_TOPO: topology unknown */
	const char *topo_reason;
	double gd, bo;			/* bytes/s, 0 = not measured */
	int gd_err, bo_err;
	int ret;
	enum transfer_mode mode;
	const char *reason;		/* exact when it starts with '=', else a part */
};

static const struct choice_case choices[] = {
	/* The two lines of the design, word for word. */
	{ AUTO_MEASURE, TOPO_VERDICT_DIRECT, "same switch 0000:16:00.0, ACS off",
	  7.1 * GB, 5.2 * GB, 0, 0, 0, MODE_GPUDIRECT,
	  "=gpudirect: same switch 0000:16:00.0, ACS off, 7.1 GB/s vs bounce 5.2" },
	{ AUTO_MEASURE, TOPO_VERDICT_ACS_REDIRECT, "ACS redirect on 0000:00:01.0",
	  2.9 * GB, 5.4 * GB, 0, 0, 0, MODE_BOUNCE,
	  "=bounce: ACS redirect on 0000:00:01.0, gpudirect 2.9 GB/s vs bounce 5.4" },
	/* Measurement beats the topology's advice, both ways. */
	{ AUTO_MEASURE, TOPO_VERDICT_DIRECT, "same switch 0000:16:00.0, ACS off",
	  3 * GB, 5 * GB, 0, 0, 0, MODE_BOUNCE, "gpudirect 3.0 GB/s vs bounce 5.0" },
	{ AUTO_MEASURE, TOPO_VERDICT_ACS_REDIRECT, "ACS redirect on 0000:00:01.0",
	  6 * GB, 5 * GB, 0, 0, 0, MODE_GPUDIRECT, "6.0 GB/s vs bounce 5.0" },
	{ AUTO_MEASURE, TOPO_VERDICT_DIRECT, "same switch", 5 * GB, 5 * GB, 0, 0, 0,
	  MODE_GPUDIRECT, "5.0 GB/s vs bounce 5.0" },
	/* ... but not a kernel that would not map it. */
	{ AUTO_MEASURE, TOPO_VERDICT_UNSUPPORTED, "across NUMA nodes 0 and 1",
	  9 * GB, 5 * GB, 0, 0, 0, MODE_BOUNCE, "bounce: across NUMA nodes 0 and 1" },
	/* One mode fails. */
	{ AUTO_MEASURE, TOPO_VERDICT_DIRECT, "same switch", 0, 5 * GB, -EOPNOTSUPP, 0,
	  0, MODE_BOUNCE, "gpudirect failed (Operation not supported), bounce 5.0 GB/s" },
	{ AUTO_MEASURE, TOPO_VERDICT_ACS_REDIRECT, "ACS redirect", 4 * GB, 0, 0, -ENOMEM,
	  0, MODE_GPUDIRECT, "gpudirect 4.0 GB/s, bounce failed (Cannot allocate memory)" },
	{ AUTO_MEASURE, TOPO_VERDICT_DIRECT, "same switch", 0, 0, -EIO, -ENOMEM,
	  -ENODEV, MODE_AUTO, NULL },
	/* One mode measured, the other not (its probe was cut short). */
	{ AUTO_MEASURE, TOPO_VERDICT_ACS_REDIRECT, "ACS redirect", 4 * GB, 0, 0, 0, 0,
	  MODE_GPUDIRECT, "gpudirect 4.0 GB/s, bounce not measured" },
	{ AUTO_MEASURE, TOPO_VERDICT_DIRECT, "same switch", 0, 4 * GB, 0, 0, 0,
	  MODE_BOUNCE, "gpudirect not measured, bounce 4.0 GB/s" },
	/* Nothing measured (probe_ms = 0): the topology decides. */
	{ AUTO_MEASURE, TOPO_VERDICT_DIRECT, "same switch 0000:16:00.0, ACS off", 0, 0,
	  0, 0, 0, MODE_GPUDIRECT,
	  "=gpudirect: same switch 0000:16:00.0, ACS off, gpudirect not measured, bounce not measured" },
	{ AUTO_MEASURE, TOPO_VERDICT_HOST_BRIDGE, "through host bridge pci0000:00", 0, 0,
	  0, 0, 0, MODE_GPUDIRECT, "gpudirect: through host bridge" },
	{ AUTO_MEASURE, TOPO_VERDICT_SIMULATED, "simulated card: no PCI path", 0, 0,
	  0, 0, 0, MODE_GPUDIRECT, "gpudirect: simulated card" },
	{ AUTO_MEASURE, TOPO_VERDICT_UNKNOWN, "same switch, ACS unknown", 0, 0, 0, 0, 0,
	  MODE_GPUDIRECT, "gpudirect: same switch, ACS unknown" },
	{ AUTO_MEASURE, NO_TOPO, NULL, 0, 0, 0, 0, 0, MODE_GPUDIRECT,
	  "gpudirect: topology unknown" },
	{ AUTO_MEASURE, TOPO_VERDICT_ACS_REDIRECT, "ACS redirect on 0000:00:01.0", 0, 0,
	  0, 0, 0, MODE_BOUNCE, "bounce: ACS redirect on 0000:00:01.0" },
	{ AUTO_MEASURE, TOPO_VERDICT_IOMMU, "through host bridge pci0000:00, IOMMU translating",
	  0, 0, 0, 0, 0, MODE_BOUNCE, "bounce: through host bridge" },
	{ AUTO_MEASURE, TOPO_VERDICT_VM, "virtual machine (QEMU)", 0, 0, 0, 0, 0,
	  MODE_BOUNCE, "bounce: virtual machine" },
	{ AUTO_MEASURE, TOPO_VERDICT_UNSUPPORTED, "across NUMA nodes 0 and 1", 0, 0, 0, 0,
	  0, MODE_BOUNCE, "bounce: across NUMA nodes" },
	/* The switch back to the first mode that works. */
	{ AUTO_FIRST, TOPO_VERDICT_ACS_REDIRECT, "ACS redirect on 0000:00:01.0",
	  2.9 * GB, 5.4 * GB, 0, 0, 0, MODE_GPUDIRECT,
	  "=gpudirect: the first mode that works (auto_choice = first), 2.9 GB/s vs bounce 5.4" },
	{ AUTO_FIRST, TOPO_VERDICT_DIRECT, "same switch", 0, 0, -EOPNOTSUPP, 0, 0,
	  MODE_BOUNCE, "bounce: the first mode that works" },
};

static void test_choose(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
		const struct choice_case *c = &choices[i];
		struct probe_rates rates = {
			.gpudirect = c->gd, .bounce = c->bo,
			.gpudirect_err = c->gd_err, .bounce_err = c->bo_err,
		};
		struct probe_choice got = { .mode = MODE_AUTO };
		struct topo_pair topo;
		int r;

		memset(&topo, 0, sizeof(topo));
		topo.verdict = c->verdict;
		if (c->topo_reason)
			snprintf(topo.reason, sizeof(topo.reason), "%s", c->topo_reason);
		r = probe_choose(c->how, c->verdict == NO_TOPO ? NULL : &topo, &rates,
				 &got);
		if (r != c->ret || got.mode != c->mode)
			fail_msg("case %zu: %d %s (%s), want %d %s", i, r,
				 transfer_mode_name(got.mode), got.reason, c->ret,
				 transfer_mode_name(c->mode));
		if (!c->reason)
			continue;
		if (c->reason[0] == '=' ? strcmp(got.reason, c->reason + 1) :
		    !strstr(got.reason, c->reason))
			fail_msg("case %zu: reason '%s', want '%s'", i, got.reason,
				 c->reason);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_bytes_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_time_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stage, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dma_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dma_timeout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hang, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_params, setup, teardown),
		cmocka_unit_test(test_choose),
	};

	return cmocka_run_group_tests_name("probe", tests, NULL, NULL);
}
