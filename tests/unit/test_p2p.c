// SPDX-License-Identifier: MIT
/*
 * test_p2p.c - p2p.c, fpgad's side of the topology: a fake card backend
 * that answers the P2P path ioctl with a recorded answer over a recorded
 * host tree ($FPGAD_TEST_SYSROOT); the Topology reply it builds (the card's
 * end, every GPU of the tree and every GPU configured by address, in
 * order, what the kernel was asked), the simulated card, and no choice
 * where auto has nothing to choose.
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

#include "../fake_sysfs.h"
#include "topology/p2p.h"

static struct fake_sysfs fs;

/* The fake backend: a card at 0000:03:00.0 and what the kernel was asked. */
struct device {
	const char *pci_addr;
	unsigned asked;
	uint8_t peer_bus[8];
};

static struct device card;

static int fake_info(struct device *d, struct device_info *ret_info)
{
	memset(ret_info, 0, sizeof(*ret_info));
	snprintf(ret_info->name, sizeof(ret_info->name), "xdma 10ee:9038 %s",
		 d->pci_addr[0] ? d->pci_addr : "-");
	snprintf(ret_info->pci_addr, sizeof(ret_info->pci_addr), "%s", d->pci_addr);
	return 0;
}

/* Below one switch, as in test_topology.c's "same switch". */
static int fake_p2p_path(struct device *d, struct fpgad_dma_p2p_path *path)
{
	assert_int_equal(path->n_hops, 0);
	if (d->asked < sizeof(d->peer_bus))
		d->peer_bus[d->asked] = path->peer_bus;
	d->asked++;
	path->distance = 24;
	path->verdict = FPGAD_P2P_SUPPORTED;
	path->n_hops = 1;
	path->hops[0].bus = 1;
	path->hops[0].type = FPGAD_P2P_HOP_UPSTREAM;
	path->hops[0].flags = FPGAD_P2P_HOP_COMMON;
	return 0;
}

static const struct device_ops fake_ops = {
	.name = "fake", .info = fake_info, .p2p_path = fake_p2p_path,
};

static const struct device_ops fake_sim_ops = {
	.name = "fake-sim", .info = fake_info,
};

static int setup(void **state)
{
	(void)state;
	fake_sysfs_create(&fs);
	fake_sysfs_dmi(&fs, "Supermicro", "SYS-421GE-TNRT");
	fake_sysfs_cpu(&fs, false);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0", FAKE_BRIDGE, "0", -1);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0/0000:01:00.0", FAKE_BRIDGE, "0", -1);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0",
		       FAKE_BRIDGE, "0", -1);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0",
		       FAKE_BRIDGE, "0", -1);
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0",
		       FAKE_CARD, "0", 5);
	fake_sysfs_group(&fs, 5, "identity");
	fake_sysfs_dev(&fs, "pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0",
		       FAKE_H200, "0", 6);
	fake_sysfs_group(&fs, 6, "identity");
	fake_sysfs_dev(&fs, "pci0000:80/0000:80:01.0", FAKE_BRIDGE, "1", -1);
	fake_sysfs_dev(&fs, "pci0000:80/0000:80:01.0/0000:81:00.0", FAKE_H200, "1", -1);
	assert_int_equal(setenv(P2P_TEST_ROOT_ENV, fs.root, 1), 0);
	memset(&card, 0, sizeof(card));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv(P2P_TEST_ROOT_ENV);
	fake_sysfs_remove(&fs);
	return 0;
}

/* Channels in host memory (no GPU to probe) naming GPUs two ways. */
static void config(struct config *cfg)
{
	config_defaults(cfg);
	snprintf(cfg->device.gpu, sizeof(cfg->device.gpu), "0000:41:00.0");
	cfg->channels[0].memory = MEMORY_HOST;
	cfg->channels[0].mode = MODE_HOST;
	snprintf(cfg->channels[0].gpu, sizeof(cfg->channels[0].gpu), "1");
}

static void test_card(void **state)
{
	const struct p2p_channel_view view = {
		.name = "c2h0", .gpu = "", .mode = "host", .mode_reason = "memory = host",
	};
	const Fpgad__TopologyReply *r;
	const Fpgad__TopologyPair *g;
	struct p2p_answer *a;
	struct config cfg;
	struct p2p *p;

	(void)state;
	card.pci_addr = "0000:03:00.0";
	config(&cfg);
	assert_int_equal(p2p_survey(&cfg, &fake_ops, &card, &p), 0);
	assert_null(p2p_choice(p, "c2h0"));
	assert_null(p2p_choice(p, "nonesuch"));
	assert_int_equal(p2p_topology(p, &view, 1, &a), 0);
	r = p2p_answer_reply(a);

	assert_string_equal(r->card, "xdma 10ee:9038 0000:03:00.0");
	assert_false(r->simulated);
	assert_false(r->vm);
	assert_non_null(strstr(r->sysfs, fs.root));
	assert_string_equal(r->warning, "");
	assert_string_equal(r->card_end->address, "0000:03:00.0");
	assert_true(r->card_end->found);
	assert_int_equal(r->card_end->numa_node, 0);
	assert_string_equal(r->card_end->root_port, "0000:00:01.0");
	assert_int_equal(r->card_end->iommu_group, 5);
	assert_string_equal(r->card_end->iommu, "passthrough");

	/* The tree's two GPUs and the one configured by address, in order. */
	assert_int_equal(r->n_gpus, 3);
	g = r->gpus[0];
	assert_string_equal(g->gpu->address, "0000:04:00.0");
	assert_string_equal(g->path_class, "PIX");
	assert_string_equal(g->verdict, "direct");
	assert_string_equal(g->reason, "same switch 0000:01:00.0, ACS off");
	assert_string_equal(g->common_bridge, "0000:01:00.0");
	assert_true(g->kernel);
	assert_int_equal(g->distance, 24);
	g = r->gpus[1];
	assert_string_equal(g->gpu->address, "0000:41:00.0");
	assert_string_equal(g->verdict, "no-gpu");
	assert_false(g->gpu->found);
	g = r->gpus[2];
	assert_string_equal(g->gpu->address, "0000:81:00.0");
	assert_string_equal(g->path_class, "SYS");
	assert_int_equal(g->gpu->numa_node, 1);
	assert_string_equal(g->gpu->iommu, "none");
	/* The kernel was asked about the GPUs on the bus, by address. */
	assert_int_equal(card.asked, 2);
	assert_int_equal(card.peer_bus[0], 0x04);
	assert_int_equal(card.peer_bus[1], 0x81);

	assert_int_equal(r->n_channels, 1);
	assert_string_equal(r->channels[0]->name, "c2h0");
	assert_string_equal(r->channels[0]->mode_reason, "memory = host");
	assert_true(r->channels[0]->gpudirect_bps == 0);
	assert_true(r->channels[0]->bounce_bps == 0);
	p2p_answer_free(a);
	p2p_free(p);
}

/* The card's AER totals, read at each p2p_card(): they grow between calls. */
static void test_card_aer(void **state)
{
	struct p2p_card c;
	struct config cfg;
	struct p2p *p;

	(void)state;
	card.pci_addr = "0000:03:00.0";
	config(&cfg);
	assert_int_equal(p2p_survey(&cfg, &fake_ops, &card, &p), 0);
	p2p_card(p, &c);
	assert_false(c.inv.aer);		/* no AER files yet */

	fake_sysfs_aer(&fs, "0000:03:00.0", 3, 0, 0);
	p2p_card(p, &c);
	assert_true(c.inv.aer);
	assert_int_equal(c.inv.aer_correctable, 3);
	assert_int_equal(c.inv.aer_nonfatal, 0);
	assert_int_equal(c.inv.aer_fatal, 0);

	fake_sysfs_aer(&fs, "0000:03:00.0", 9, 1, 2);
	p2p_card(p, &c);
	assert_true(c.inv.aer);
	assert_int_equal(c.inv.aer_correctable, 9);
	assert_int_equal(c.inv.aer_nonfatal, 1);
	assert_int_equal(c.inv.aer_fatal, 2);
	p2p_free(p);

	/* The simulated card has none, whatever the tree holds. */
	card.pci_addr = "";
	assert_int_equal(p2p_survey(&cfg, &fake_sim_ops, &card, &p), 0);
	p2p_card(p, &c);
	assert_false(c.inv.aer);
	assert_int_equal(c.inv.aer_correctable, 0);
	p2p_free(p);
}

/* No PCI path: every pair says so, and the kernel is never asked. */
static void test_simulated(void **state)
{
	const Fpgad__TopologyReply *r;
	struct p2p_answer *a;
	struct config cfg;
	struct p2p *p;

	(void)state;
	card.pci_addr = "";
	config(&cfg);
	assert_int_equal(p2p_survey(&cfg, &fake_sim_ops, &card, &p), 0);
	assert_int_equal(p2p_topology(p, NULL, 0, &a), 0);
	r = p2p_answer_reply(a);
	assert_true(r->simulated);
	assert_string_equal(r->card_end->address, "");
	assert_int_equal(r->card_end->numa_node, -1);
	assert_int_equal(r->n_gpus, 3);
	for (size_t i = 0; i < r->n_gpus; i++)
		assert_string_equal(r->gpus[i]->path_class, "SIM");
	assert_string_equal(r->gpus[0]->verdict, "simulated");
	assert_string_equal(r->gpus[1]->verdict, "no-gpu");
	assert_int_equal(r->n_channels, 0);
	assert_int_equal(card.asked, 0);
	p2p_answer_free(a);
	p2p_free(p);
	p2p_free(NULL);
	p2p_answer_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_card, setup, teardown),
		cmocka_unit_test_setup_teardown(test_card_aer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_simulated, setup, teardown),
	};

	return cmocka_run_group_tests_name("p2p", tests, NULL, NULL);
}
