// SPDX-License-Identifier: MIT
/*
 * test_place.c - place.c over a fake sysfs tree of one host with two cards
 * and four GPUs on two NUMA nodes: on each node a PCIe switch holds a card
 * and a GPU, and a second GPU sits on a root port of its own.  Each card's
 * nearest GPU is the one behind its switch, then the one of its root
 * complex, then one across the nodes; each node's CPUs are its cpulist.
 */
#include <errno.h>
#include <pthread.h>
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
#include "topology/place.h"

static struct fake_sysfs fs;
static struct topo_source src;

#define CARD_A "0000:03:00.0"
#define CARD_B "0000:83:00.0"
static const char gpus[4][TOPO_ADDR_LEN] = {
	"0000:04:00.0",	/* node 0, behind card A's switch */
	"0000:05:00.0",	/* node 0, its own root port */
	"0000:84:00.0",	/* node 1, behind card B's switch */
	"0000:85:00.0",	/* node 1, its own root port */
};

static void bridge(const char *chain, const char *numa)
{
	fake_sysfs_dev(&fs, chain, FAKE_BRIDGE, numa, -1);
}

/*
 * One node's half below host bridge @hb, buses from @bus: root port 01.0
 * to a switch (upstream @bus+1, downstream @bus+2: 00.0 to the card at
 * @bus+3, 01.0 to a GPU at @bus+4), root port 02.0 to a GPU at @bus+5.
 */
static void node(const char *hb, int bus, const char *numa, const char *cpus)
{
	char rp[128], sw[192], c[256], path[512];

	snprintf(rp, sizeof(rp), "%s/0000:%02x:01.0", hb, bus);
	bridge(rp, numa);
	snprintf(sw, sizeof(sw), "%s/0000:%02x:00.0", rp, bus + 1);
	bridge(sw, numa);
	snprintf(c, sizeof(c), "%s/0000:%02x:00.0", sw, bus + 2);
	bridge(c, numa);
	snprintf(c, sizeof(c), "%s/0000:%02x:01.0", sw, bus + 2);
	bridge(c, numa);
	snprintf(c, sizeof(c), "%s/0000:%02x:00.0/0000:%02x:00.0", sw, bus + 2, bus + 3);
	fake_sysfs_dev(&fs, c, FAKE_CARD, numa, -1);
	snprintf(c, sizeof(c), "%s/0000:%02x:01.0/0000:%02x:00.0", sw, bus + 2, bus + 4);
	fake_sysfs_dev(&fs, c, FAKE_H200, numa, -1);
	snprintf(rp, sizeof(rp), "%s/0000:%02x:02.0", hb, bus);
	bridge(rp, numa);
	snprintf(c, sizeof(c), "%s/0000:%02x:00.0", rp, bus + 5);
	fake_sysfs_dev(&fs, c, FAKE_H200, numa, -1);
	snprintf(path, sizeof(path), "%s/devices/system/node/node%s/cpulist", fs.sysfs, numa);
	fake_sysfs_put(path, "%s\n", cpus);
}

static int setup(void **state)
{
	(void)state;
	fake_sysfs_create(&fs);
	fake_sysfs_dmi(&fs, "Supermicro", "SYS-421GE-TNRT");
	fake_sysfs_cpu(&fs, false);
	node("pci0000:00", 0x00, "0", "0-3,8-11");
	node("pci0000:80", 0x80, "1", "4-7,12-15");
	src = (struct topo_source){ .sysfs = fs.sysfs, .cpuinfo = fs.cpuinfo };
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	fake_sysfs_remove(&fs);
	return 0;
}

/* The nearest of @list (indices into gpus) for @card: its index in @list. */
static unsigned nearest(const char *card, const unsigned *list, unsigned n, char *why,
			size_t wlen)
{
	char sub[4][TOPO_ADDR_LEN];
	unsigned idx = 99;

	for (unsigned i = 0; i < n; i++)
		memcpy(sub[i], gpus[list[i]], TOPO_ADDR_LEN);
	assert_int_equal(place_nearest_gpu(&src, card, -1, (const char (*)[TOPO_ADDR_LEN])sub,
					   n, &idx, why, wlen), 0);
	return idx;
}

static void test_same_switch_first(void **state)
{
	static const unsigned all[] = { 0, 1, 2, 3 };
	char why[256];

	(void)state;
	assert_int_equal(nearest(CARD_A, all, 4, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "GPU 0 (0000:04:00.0), same PCIe switch (PIX)"));
	assert_int_equal(nearest(CARD_B, all, 4, why, sizeof(why)), 2);
	assert_non_null(strstr(why, "GPU 2 (0000:84:00.0)"));
}

static void test_same_root_complex_next(void **state)
{
	static const unsigned a[] = { 3, 2, 1 }, b[] = { 0, 1, 3 };
	char why[256];

	(void)state;
	/* Card A without its switch's GPU: the one of its root complex. */
	assert_int_equal(nearest(CARD_A, a, 3, why, sizeof(why)), 2);
	assert_non_null(strstr(why, "(PHB)"));
	assert_int_equal(nearest(CARD_B, b, 3, why, sizeof(why)), 2);
	assert_non_null(strstr(why, "0000:85:00.0"));
}

static void test_other_node_last(void **state)
{
	static const unsigned far[] = { 3, 2 };
	char why[256];

	(void)state;
	/* Both across the nodes: the first listed. */
	assert_int_equal(nearest(CARD_A, far, 2, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "another NUMA node (SYS)"));
}

/* The simulated card: the first GPU of the node it models, else the first. */
static void test_sim_card_by_node(void **state)
{
	char why[256];
	unsigned idx = 99;

	(void)state;
	assert_int_equal(place_nearest_gpu(&src, TOPO_SIM, 1, gpus, 4, &idx, why, sizeof(why)), 0);
	assert_int_equal(idx, 2);
	assert_non_null(strstr(why, "GPU 2 (0000:84:00.0), on node 1 like the simulated card (NODE)"));
	assert_int_equal(place_nearest_gpu(&src, TOPO_SIM, 0, gpus, 4, &idx, why, sizeof(why)), 0);
	assert_int_equal(idx, 0);
	assert_int_equal(place_nearest_gpu(&src, TOPO_SIM, 3, gpus, 4, &idx, why, sizeof(why)), 0);
	assert_int_equal(idx, 0);
	assert_non_null(strstr(why, "the first: none on node 3"));
	assert_int_equal(place_nearest_gpu(&src, TOPO_SIM, -1, gpus + 1, 3, &idx, why,
					   sizeof(why)), 0);
	assert_int_equal(idx, 0);
	assert_non_null(strstr(why, "simulated card: no PCI path"));
}

static void test_no_gpu_and_bad_address(void **state)
{
	char why[64];
	unsigned idx;

	(void)state;
	assert_int_equal(place_nearest_gpu(&src, CARD_A, -1, gpus, 0, &idx, why, sizeof(why)),
			 -ENODEV);
	assert_int_equal(place_nearest_gpu(&src, "not-an-address", -1, gpus, 4, &idx, why,
					   sizeof(why)), -EINVAL);
}

static void test_node_cpus(void **state)
{
	cpu_set_t cpus;
	char list[64];

	(void)state;
	assert_int_equal(place_node_cpus(&src, 1, &cpus), 0);
	assert_int_equal(CPU_COUNT(&cpus), 8);
	assert_true(CPU_ISSET(4, &cpus) && CPU_ISSET(15, &cpus) && !CPU_ISSET(3, &cpus));
	place_cpulist_format(&cpus, list, sizeof(list));
	assert_string_equal(list, "4-7,12-15");
	assert_int_equal(place_node_cpus(&src, 0, &cpus), 0);
	place_cpulist_format(&cpus, list, sizeof(list));
	assert_string_equal(list, "0-3,8-11");
	assert_int_equal(place_node_cpus(&src, 2, &cpus), -ENOENT);
	assert_int_equal(place_node_cpus(&src, -1, &cpus), -ENOENT);
}

static void test_node_cpus_malformed(void **state)
{
	static const char *const bad[] = { "banana\n", "\n", "5-2\n", "1,,x\n", "99999\n" };
	char path[512];
	cpu_set_t cpus;

	(void)state;
	snprintf(path, sizeof(path), "%s/devices/system/node/node7/cpulist", fs.sysfs);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fake_sysfs_put(path, "%s", bad[i]);
		if (place_node_cpus(&src, 7, &cpus) != -EINVAL)
			fail_msg("cpulist '%s' accepted", bad[i]);
	}
}

static void *placed_child(void *arg)
{
	pthread_getaffinity_np(pthread_self(), sizeof(cpu_set_t), arg);
	return NULL;
}

/* On its own thread: place it on node 2 (CPU 0), then start a thread. */
static void *placed(void *arg)
{
	cpu_set_t *ret = arg;
	char what[256];
	pthread_t t;

	assert_int_equal(place_on_node(&src, 2, what, sizeof(what)), 0);
	assert_non_null(strstr(what, "node 2: threads on CPUs 0"));
	/* A thread started after it inherits the node's CPUs. */
	assert_int_equal(pthread_create(&t, NULL, placed_child, ret), 0);
	pthread_join(t, NULL);
	return NULL;
}

static void test_on_node(void **state)
{
	char path[512], what[64];
	cpu_set_t got;
	pthread_t t;

	(void)state;
	snprintf(path, sizeof(path), "%s/devices/system/node/node2/cpulist", fs.sysfs);
	fake_sysfs_put(path, "0\n");
	CPU_ZERO(&got);
	assert_int_equal(pthread_create(&t, NULL, placed, &got), 0);
	pthread_join(t, NULL);
	assert_int_equal(CPU_COUNT(&got), 1);
	assert_true(CPU_ISSET(0, &got));
	assert_int_equal(place_on_node(&src, 5, what, sizeof(what)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_same_switch_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_same_root_complex_next, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_node_last, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sim_card_by_node, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_gpu_and_bad_address, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_cpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_node_cpus_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_on_node, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
