// SPDX-License-Identifier: MIT
/*
 * test_topo.c - fpgactl topo against real fpgad processes on the simulated
 * card: over a fake host tree (FPGAD_TEST_SYSROOT: two NVIDIA GPUs on two
 * NUMA nodes, devices that are no GPUs, a configured GPU that is absent;
 * gpu = nearest and numa = auto there), over the host's own /sys, and on
 * the read-only remote listener.
 */
#include <errno.h>
#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "../fake_sysfs.h"
#include "fpgad.h"
#include "harness.h"

static struct fake_sysfs fs;

/* Two H200s on two NUMA nodes, a Xilinx card, the GPU's audio function. */
static void build_host(void)
{
	fake_sysfs_create(&fs);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0", FAKE_BRIDGE, "0", -1);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0/0000:01:00.0", FAKE_H200, "0", 3);
	fake_sysfs_group(&fs, 3, "identity");
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0/0000:01:00.1", 0x10de, 0x22e8,
		       0x040300, "0", 3);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:02.0", FAKE_BRIDGE, "0", -1);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:02.0/0000:02:00.0", FAKE_CARD, "0", -1);
	fake_sysfs_dev(&fs, "pci0000:80/0000:80:01.0", FAKE_BRIDGE, "1", -1);
	fake_sysfs_dev(&fs, "pci0000:80/0000:80:01.0/0000:81:00.0", FAKE_H200, "1", -1);
	fake_sysfs_dmi(&fs, "Supermicro", "SYS-821GE-TNHR");
	fake_sysfs_cpu(&fs, false);
}

static json_t *topo_json(const char *url, int *ret_rc)
{
	char cmd[512], out[65536];
	json_error_t jerr;
	json_t *j;

	snprintf(cmd, sizeof(cmd), "%s --url %s --json topo", harness_bin("fpgactl"), url);
	*ret_rc = harness_run(cmd, out, sizeof(out));
	j = json_loads(out, 0, &jerr);
	if (!j)
		fail_msg("fpgactl --json topo printed invalid JSON: %s\n%s", jerr.text, out);
	return j;
}

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_string(v))
		fail_msg("no string '%s'", key);
	return json_string_value(v);
}

static void test_fake_host(void **state)
{
	static char env[128];
	char out[16384], cmd[512];
	struct fpgad_proc p;
	json_t *j, *gpus, *g, *ch;
	int rc;

	(void)state;
	build_host();
	snprintf(env, sizeof(env), "FPGAD_TEST_SYSROOT=%s", fs.root);
	/* A GPU configured by address that the host does not have. */
	harness_start_ok(&p, "[device]\ngpu = 0000:C1:00.0\n", env);
	assert_true(harness_log_contains(&p, "a setting for tests"));

	j = topo_json(p.url, &rc);
	assert_int_equal(rc, 0);
	assert_string_equal(str(j, "card"), "sim");
	assert_true(json_is_true(json_object_get(j, "simulated")));
	assert_false(json_is_true(json_object_get(j, "vm")));
	assert_string_equal(str(json_object_get(j, "card_end"), "address"), "");
	assert_non_null(strstr(str(j, "sysfs"), fs.root));
	assert_string_equal(str(j, "warning"), "");

	gpus = json_object_get(j, "gpus");
	assert_int_equal(json_array_size(gpus), 3);
	g = json_array_get(gpus, 0);
	assert_string_equal(str(g, "address"), "0000:01:00.0");
	assert_true(json_is_true(json_object_get(g, "found")));
	assert_int_equal(json_integer_value(json_object_get(g, "numa_node")), 0);
	assert_string_equal(str(g, "host_bridge"), "pci0000:00");
	assert_string_equal(str(g, "root_port"), "0000:00:01.0");
	assert_int_equal(json_integer_value(json_object_get(g, "iommu_group")), 3);
	assert_string_equal(str(g, "iommu"), "passthrough");
	assert_string_equal(str(g, "class"), "SIM");
	assert_string_equal(str(g, "verdict"), "simulated");
	assert_string_equal(str(g, "reason"), "simulated card: no PCI path");
	assert_true(json_is_null(json_object_get(g, "distance")));
	g = json_array_get(gpus, 1);
	assert_string_equal(str(g, "address"), "0000:81:00.0");
	assert_int_equal(json_integer_value(json_object_get(g, "numa_node")), 1);
	assert_string_equal(str(g, "iommu"), "none");
	assert_string_equal(str(g, "verdict"), "simulated");
	g = json_array_get(gpus, 2);
	assert_string_equal(str(g, "address"), "0000:c1:00.0");
	assert_false(json_is_true(json_object_get(g, "found")));
	assert_string_equal(str(g, "verdict"), "no-gpu");
	assert_non_null(strstr(str(g, "reason"), "0000:c1:00.0 is not on this host's PCI bus"));

	ch = json_array_get(json_object_get(j, "channels"), 0);
	assert_string_equal(str(ch, "name"), "c2h0");
	assert_string_equal(str(ch, "mode"), "host");
	assert_string_equal(str(ch, "gpu"), "");
	assert_true(json_is_null(json_object_get(ch, "gpudirect_bps")));
	assert_true(json_is_null(json_object_get(ch, "bounce_bps")));
	json_decref(j);

	/* The matrix, as people read it. */
	snprintf(cmd, sizeof(cmd), "%s --url %s topo", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "card   sim (simulated: no PCI path)"));
	assert_non_null(strstr(out, "host   bare metal"));
	assert_non_null(strstr(out, " GPU0     GPU1     GPU2     NUMA"));
	assert_non_null(strstr(out, "card     SIM      SIM      SIM      -"));
	assert_non_null(strstr(out, "GPU2   0000:c1:00.0"));
	assert_non_null(strstr(out, "no-gpu"));
	harness_stop_ok(&p);
	fake_sysfs_remove(&fs);
}

/* A sysfs root that is not there: answers with a note, fpgad carries on. */
static void test_missing_root(void **state)
{
	static char env[] = "FPGAD_TEST_SYSROOT=/nonexistent/fpgad-root";
	struct fpgad_topology *t;
	struct fpgad_proc p;
	fpgad_client *c;

	(void)state;
	harness_start_ok(&p, NULL, env);
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	assert_int_equal(fpgad_topology_get(c, &t), 0);
	assert_true(t->simulated);
	assert_int_equal(t->n_gpus, 0);
	assert_non_null(strstr(t->warning, "No such file or directory"));
	assert_int_equal(t->n_channels, 1);
	fpgad_topology_free(t);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/* The host's own tree: whatever it holds, the sim card says it is one. */
static void test_own_host(void **state)
{
	struct fpgad_proc p;
	json_t *j, *gpus;
	int rc;

	(void)state;
	harness_start_ok(&p, NULL, NULL);
	j = topo_json(p.url, &rc);
	assert_int_equal(rc, 0);
	assert_true(json_is_true(json_object_get(j, "simulated")));
	assert_string_equal(str(j, "sysfs"), "");
	gpus = json_object_get(j, "gpus");
	for (size_t i = 0; i < json_array_size(gpus); i++) {
		assert_string_equal(str(json_array_get(gpus, i), "class"), "SIM");
		assert_string_equal(str(json_array_get(gpus, i), "verdict"), "simulated");
	}
	if (!json_array_size(gpus))
		print_message("no NVIDIA GPU on this host: its own topology has no pairs\n");
	json_decref(j);
	harness_stop_ok(&p);
}

/* Read-only, so the remote listener serves it. */
static void test_remote(void **state)
{
	struct fpgad_topology *t;
	struct fpgad_proc p;
	char conf[128], url[64];
	fpgad_client *c;

	(void)state;
	snprintf(conf, sizeof(conf), "[exporter]\nargs = --remote tcp://127.0.0.1:0\n");
	harness_start_ok(&p, conf, NULL);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", harness_remote_port(&p));
	assert_int_equal(fpgad_connect(url, &c), 0);
	assert_int_equal(fpgad_topology_get(c, &t), 0);
	assert_string_equal(t->card, "sim");
	fpgad_topology_free(t);
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

/*
 * Probe: refused, with the reason, for a channel it cannot serve; refused
 * on the remote listener; never a change to the channel.  (A probe that
 * measures and switches needs a GPU: tests/gpu/run.sh.)
 */
static void test_probe_refusals(void **state)
{
	struct fpgad_probe pr;
	struct fpgad_proc p;
	char conf[256], url[64];
	fpgad_client *c, *rc;

	(void)state;
	snprintf(conf, sizeof(conf),
		 "[exporter]\nargs = --remote tcp://127.0.0.1:0\n[channel a]\n[channel b]\nengine = 1\nmode = bounce\n");
	harness_start_ok(&p, conf, NULL);
	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", harness_remote_port(&p));
	assert_int_equal(fpgad_connect(p.url, &c), 0);
	/* No such channel. */
	assert_int_equal(fpgad_channel_probe(c, "nosuch", &pr), -ENOENT);
	/* A mode the configuration sets: nothing to choose. */
	assert_int_equal(fpgad_channel_probe(c, "b", &pr), -EINVAL);
	assert_non_null(strstr(fpgad_errmsg(c), "its mode is set in the configuration"));
	/* mode = auto, but in host memory (no GPU here, or memory = host). */
	if (fpgad_channel_probe(c, "a", &pr) == -EINVAL)
		assert_non_null(strstr(fpgad_errmsg(c), "host memory: there is no mode to choose"));
	/* Not a name at all. */
	assert_int_equal(fpgad_channel_probe(c, "a\x01", &pr), -EINVAL);
	/* The remote listener is read-only. */
	assert_int_equal(fpgad_connect(url, &rc), 0);
	assert_int_equal(fpgad_channel_probe(rc, "a", &pr), -EACCES);
	fpgad_disconnect(rc);
	/* Nothing changed: the channels still stream. */
	{
		fpgad_channel *ch;
		struct fpgad_frame f;

		assert_int_equal(fpgad_channel_open(c, "b", 0, &ch), 0);
		assert_int_equal(fpgad_frame_wait(ch, &f, 5000), 0);
		assert_int_equal(fpgad_frame_release(ch, &f), 0);
		assert_int_equal(fpgad_channel_close(ch), 0);
	}
	fpgad_disconnect(c);
	harness_stop_ok(&p);
}

#define MEM_ANYWHERE "node 1: threads on CPUs 0; memory anywhere (set_mempolicy: "

/* Node @n's CPUs in the fake tree: CPU 0, which every host has. */
static void node_cpus(int n)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/devices/system/node/node%d/cpulist", fs.sysfs, n);
	fake_sysfs_put(path, "0\n");
}

/* Status of @p's fpgad: fails the test when it does not answer. */
static struct fpgad_status *status_of(const struct fpgad_proc *p)
{
	struct fpgad_status *s;
	fpgad_client *c;

	assert_int_equal(fpgad_connect(p->url, &c), 0);
	assert_int_equal(fpgad_status_get(c, &s), 0);
	fpgad_disconnect(c);
	return s;
}

/*
 * gpu = nearest and numa = auto over the fake host (a GPU on each of two
 * nodes): the simulated card modelled on node 1 gets node 1's GPU and
 * node 1's CPUs, on node 0 node 0's, and status says which and why.
 */
static void test_nearest_gpu_and_numa(void **state)
{
	static char env[128];
	struct fpgad_status *s;
	struct fpgad_proc p;
	char out[4096], cmd[512];
	int status;

	(void)state;
	build_host();
	node_cpus(0);
	node_cpus(1);
	snprintf(env, sizeof(env), "FPGAD_TEST_SYSROOT=%s", fs.root);
	harness_start_ok(&p, "[device]\ngpu = nearest\n[sim]\nnuma_node = 1\n"
			 "[channel c]\nmemory = host\n", env);
	s = status_of(&p);
	assert_string_equal(s->gpu_choice,
			    "nearest: GPU 1 (0000:81:00.0), on node 1 like the simulated card (NODE)");
	/* The memory policy is the real kernel's: node 1 may not exist here. */
	if (strcmp(s->numa, "node 1: threads on CPUs 0, memory preferred there") &&
	    strncmp(s->numa, MEM_ANYWHERE, strlen(MEM_ANYWHERE)))
		fail_msg("numa: '%s'", s->numa);
	fpgad_status_free(s);
	snprintf(cmd, sizeof(cmd), "%s --url %s status", harness_bin("fpgactl"), p.url);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 0);
	assert_non_null(strstr(out, "\nnuma:     node 1: threads on CPUs 0"));
	assert_non_null(strstr(out, "\nchoice:   nearest: GPU 1 (0000:81:00.0)"));
	harness_stop_ok(&p);

	/* A channel's own gpu = nearest; numa = off places nothing. */
	harness_start_ok(&p, "[device]\nnuma = off\n[sim]\nnuma_node = 0\n"
			 "[channel c]\nmemory = host\ngpu = nearest\n", env);
	s = status_of(&p);
	assert_non_null(strstr(s->gpu_choice, "GPU 0 (0000:01:00.0), on node 0"));
	assert_string_equal(s->numa, "off");
	fpgad_status_free(s);
	harness_stop_ok(&p);

	/* A node the host lacks stops the start, by name. */
	assert_int_not_equal(harness_start(&p, "[sim]\nnuma_node = 5\n", env), 0);
	status = harness_wait_exit(&p, 5000);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	assert_true(harness_log_contains(&p, "fpgad.conf:2: numa: [sim] numa_node = 5: its CPUs cannot be used"));
	assert_int_equal(harness_log_count(&p, "<3>"), 1);
	/* --check-config on the same host refuses it with the same line. */
	snprintf(cmd, sizeof(cmd), "%s %s --check-config %s 2>&1", env, harness_bin("fpgad"),
		 p.conf);
	assert_int_equal(harness_run(cmd, out, sizeof(out)), 1);
	if (!strstr(out, "fpgad.conf:2: numa: [sim] numa_node = 5: its CPUs cannot be used"))
		fail_msg("--check-config: want numa_node = 5 refused at its line, got: %s", out);
	harness_stop(&p);
	assert_int_not_equal(harness_start(&p, "[sim]\nnuma_node = one\n", env), 0);
	harness_wait_exit(&p, 5000);
	assert_true(harness_log_contains(&p, "[sim] numa_node: 'one' is not a node number or none"));
	harness_stop(&p);
	fake_sysfs_remove(&fs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fake_host),
		cmocka_unit_test(test_missing_root),
		cmocka_unit_test(test_own_host),
		cmocka_unit_test(test_remote),
		cmocka_unit_test(test_probe_refusals),
		cmocka_unit_test(test_nearest_gpu_and_numa),
	};

	return cmocka_run_group_tests_name("topo", tests, NULL, NULL);
}
