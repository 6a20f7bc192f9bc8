// SPDX-License-Identifier: MIT
/*
 * test_topology.c - topology.c over fake sysfs trees built in a temporary
 * directory (same switch, several switches, one host bridge, across host
 * bridges and NUMA nodes, ACS on, IOMMU translating, virtual machines, a
 * missing GPU, malformed files) and recorded answers of the kernel's P2P
 * path ioctl: one table of cases, each with its expected class and verdict.
 */
#include <errno.h>
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
#include "topology/topology.h"

static struct fake_sysfs fs;

#define BRIDGE(chain) fake_sysfs_dev(&fs, chain, FAKE_BRIDGE, "0", -1)
#define CARD(chain, numa, group) fake_sysfs_dev(&fs, chain, FAKE_CARD, numa, group)
#define GPU(chain, numa, group) fake_sysfs_dev(&fs, chain, FAKE_H200, numa, group)

static void dev(const char *chain, unsigned vendor, unsigned device,
		unsigned cls, const char *numa, int group)
{
	fake_sysfs_dev(&fs, chain, vendor, device, cls, numa, group);
}

static void group_type(int group, const char *type)
{
	fake_sysfs_group(&fs, group, type);
}

static void dmi(const char *vendor, const char *product)
{
	fake_sysfs_dmi(&fs, vendor, product);
}

static void cpu(bool hypervisor)
{
	fake_sysfs_cpu(&fs, hypervisor);
}

/* A bare-metal host: a server's DMI names, no hypervisor flag. */
static void metal(void)
{
	dmi("Supermicro", "SYS-421GE-TNRT");
	cpu(false);
}

/* --- scenes ------------------------------------------------------------------- */

/* Card and GPU on two downstream ports of one switch. */
static void scene_switch(void)
{
	metal();
	BRIDGE("pci0000:00/0000:00:01.0");
	BRIDGE("pci0000:00/0000:00:01.0/0000:01:00.0");
	BRIDGE("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0");
	BRIDGE("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", "0", 5);
	GPU("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", "0", 6);
	group_type(5, "identity");
	group_type(6, "identity");
}

/* The card behind a second switch below the GPU's switch. */
static void scene_two_switches(void)
{
	metal();
	BRIDGE("pci0000:00/0000:00:01.0");
	BRIDGE("pci0000:00/0000:00:01.0/0000:01:00.0");
	BRIDGE("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0");
	BRIDGE("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0");
	BRIDGE("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/0000:04:00.0");
	BRIDGE("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:00.0/0000:03:00.0/0000:04:00.0/0000:05:00.0",
	     "0", -1);
	GPU("pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:06:00.0", "0", -1);
}

/* Two root ports of one host bridge; the card's IOMMU group translates. */
static void scene_root_ports(const char *type)
{
	metal();
	BRIDGE("pci0000:00/0000:00:01.0");
	BRIDGE("pci0000:00/0000:00:03.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0", "0", type ? 7 : -1);
	GPU("pci0000:00/0000:00:03.0/0000:02:00.0", "0", type ? 8 : -1);
	if (type) {
		group_type(7, type);
		group_type(8, type);
	}
}

static void scene_root_ports_dma(void) { scene_root_ports("DMA-FQ"); }
static void scene_root_ports_plain(void) { scene_root_ports(NULL); }

/* Two host bridges: of one NUMA node (@gpu_numa "0") or of two. */
static void scene_host_bridges(const char *gpu_hb, const char *gpu_numa)
{
	char chain[128];

	metal();
	BRIDGE("pci0000:00/0000:00:01.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0", "0", -1);
	snprintf(chain, sizeof(chain), "pci0000:%s/0000:%s:01.0", gpu_hb, gpu_hb);
	BRIDGE(chain);
	snprintf(chain, sizeof(chain), "pci0000:%s/0000:%s:01.0/0000:%02x:00.0",
		 gpu_hb, gpu_hb, (unsigned)strtoul(gpu_hb, NULL, 16) + 1);
	GPU(chain, gpu_numa, -1);
}

static void scene_node(void) { scene_host_bridges("16", "0"); }
static void scene_sys(void) { scene_host_bridges("80", "1"); }
static void scene_numa_unknown(void) { scene_host_bridges("16", "-1"); }

/* A QEMU guest: DMI, hypervisor flag, Red Hat root ports. */
static void scene_qemu(void)
{
	dmi("QEMU", "Standard PC (Q35 + ICH9, 2009)");
	cpu(true);
	dev("pci0000:00/0000:00:02.0", 0x1b36, 0x000c, 0x060400, "-1", -1);
	dev("pci0000:00/0000:00:03.0", 0x1b36, 0x000c, 0x060400, "-1", -1);
	CARD("pci0000:00/0000:00:02.0/0000:01:00.0", "-1", -1);
	GPU("pci0000:00/0000:00:03.0/0000:02:00.0", "-1", -1);
}

/* A guest that hides itself but for its emulated root port. */
static void scene_qemu_bridge_only(void)
{
	dmi("Dell Inc.", "PowerEdge R760");
	cpu(false);
	dev("pci0000:00/0000:00:02.0", 0x1b36, 0x000c, 0x060400, "0", -1);
	CARD("pci0000:00/0000:00:02.0/0000:01:00.0", "0", -1);
	BRIDGE("pci0000:00/0000:00:03.0");
	GPU("pci0000:00/0000:00:03.0/0000:02:00.0", "0", -1);
}

/* Only the CPU says so. */
static void scene_hypervisor_flag(void)
{
	dmi("Dell Inc.", "PowerEdge R760");
	cpu(true);
	BRIDGE("pci0000:00/0000:00:01.0");
	BRIDGE("pci0000:00/0000:00:03.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0", "0", -1);
	GPU("pci0000:00/0000:00:03.0/0000:02:00.0", "0", -1);
}

static void scene_no_gpu(void)
{
	metal();
	BRIDGE("pci0000:00/0000:00:01.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0", "0", -1);
}

static void scene_no_card(void)
{
	metal();
	BRIDGE("pci0000:00/0000:00:03.0");
	GPU("pci0000:00/0000:00:03.0/0000:02:00.0", "0", -1);
}

/* The same switch, with a NUMA node that is no number. */
static void scene_bad_numa(void)
{
	char path[512];

	scene_switch();
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:04:00.0/numa_node", fs.sysfs);
	fake_sysfs_put(path, "banana\n");
}

/* The same switch, with an empty vendor file and no device file. */
static void scene_bad_ids(void)
{
	char path[512];

	scene_switch();
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:03:00.0/vendor", fs.sysfs);
	fake_sysfs_put(path, "%s", "");
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:03:00.0/device", fs.sysfs);
	assert_int_equal(unlink(path), 0);
}

/* The same switch, the IOMMU group of an unknown type. */
static void scene_bad_iommu_type(void)
{
	scene_switch();
	group_type(5, "weird");
}

/* The same switch, the card's iommu_group pointing at no group. */
static void scene_bad_iommu_link(void)
{
	char path[512];

	metal();
	BRIDGE("pci0000:00/0000:00:01.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0", "0", -1);
	BRIDGE("pci0000:00/0000:00:03.0");
	GPU("pci0000:00/0000:00:03.0/0000:02:00.0", "0", -1);
	snprintf(path, sizeof(path), "%s/devices/pci0000:00/0000:00:01.0/0000:01:00.0/iommu_group",
		 fs.sysfs);
	assert_int_equal(symlink("../../nowhere", path), 0);
}

/* A GPU whose sysfs link leads below no host bridge. */
static void scene_no_host_bridge(void)
{
	char dir[512], link[512];

	metal();
	BRIDGE("pci0000:00/0000:00:01.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0", "0", -1);
	snprintf(dir, sizeof(dir), "%s/devices/platform/odd/0000:04:00.0", fs.sysfs);
	fake_sysfs_mkdirs(dir);
	snprintf(link, sizeof(link), "%s/bus/pci/devices/0000:04:00.0", fs.sysfs);
	assert_int_equal(symlink(dir, link), 0);
}

/* No cpuinfo, no DMI: the host is not known to be a VM. */
static void scene_bare(void)
{
	BRIDGE("pci0000:00/0000:00:01.0");
	BRIDGE("pci0000:00/0000:00:03.0");
	CARD("pci0000:00/0000:00:01.0/0000:01:00.0", "0", -1);
	GPU("pci0000:00/0000:00:03.0/0000:02:00.0", "0", -1);
}

/* --- recorded kernel answers ---------------------------------------------------- */

#define HOP(b, d, f, t, fl) { .domain = 0, .bus = (b), .devfn = (d) << 3 | (f), \
			      .type = FPGAD_P2P_HOP_##t, .flags = (fl) }
#define COMMON FPGAD_P2P_HOP_COMMON
#define ACS FPGAD_P2P_HOP_ACS
#define REDIR (FPGAD_P2P_HOP_ACS | FPGAD_P2P_HOP_REDIRECT)

static const struct fpgad_dma_p2p_path k_switch = {
	.distance = 24, .verdict = FPGAD_P2P_SUPPORTED, .n_hops = 3,
	.hops = { HOP(2, 0, 0, DOWNSTREAM, ACS), HOP(1, 0, 0, UPSTREAM, COMMON),
		  HOP(2, 1, 0, DOWNSTREAM, ACS) },
};

static const struct fpgad_dma_p2p_path k_switch_acs = {
	.distance = 2048,
	.verdict = FPGAD_P2P_SUPPORTED | FPGAD_P2P_ACS_REDIRECT |
		   FPGAD_P2P_VIA_HOST_BRIDGE | FPGAD_P2P_HOST_BRIDGE_OK,
	.n_hops = 3,
	.hops = { HOP(2, 0, 0, DOWNSTREAM, REDIR), HOP(1, 0, 0, UPSTREAM, COMMON),
		  HOP(2, 1, 0, DOWNSTREAM, REDIR) },
};

static const struct fpgad_dma_p2p_path k_switch_acs_refused = {
	.distance = -1,
	.verdict = FPGAD_P2P_ACS_REDIRECT | FPGAD_P2P_VIA_HOST_BRIDGE,
	.n_hops = 3,
	.hops = { HOP(2, 0, 0, DOWNSTREAM, REDIR), HOP(1, 0, 0, UPSTREAM, COMMON),
		  HOP(2, 1, 0, DOWNSTREAM, REDIR) },
};

/* Says the root port is the common bridge: sysfs says the switch. */
static const struct fpgad_dma_p2p_path k_switch_other_common = {
	.distance = 24, .verdict = FPGAD_P2P_SUPPORTED, .n_hops = 1,
	.hops = { HOP(0, 1, 0, ROOT_PORT, COMMON) },
};

static const struct fpgad_dma_p2p_path k_malformed_hops = {
	.distance = 24, .verdict = FPGAD_P2P_SUPPORTED, .n_hops = 99,
};

static const struct fpgad_dma_p2p_path k_malformed_type = {
	.distance = 24, .verdict = FPGAD_P2P_SUPPORTED, .n_hops = 1,
	.hops = { { .type = 9 } },
};

static const struct fpgad_dma_p2p_path k_two_switches = {
	.distance = 40, .verdict = FPGAD_P2P_SUPPORTED, .n_hops = 5,
	.hops = { HOP(4, 0, 0, DOWNSTREAM, 0), HOP(3, 0, 0, UPSTREAM, 0),
		  HOP(2, 0, 0, DOWNSTREAM, 0), HOP(1, 0, 0, UPSTREAM, COMMON),
		  HOP(2, 1, 0, DOWNSTREAM, 0) },
};

static const struct fpgad_dma_p2p_path k_root_ports = {
	.distance = 2048,
	.verdict = FPGAD_P2P_SUPPORTED | FPGAD_P2P_VIA_HOST_BRIDGE |
		   FPGAD_P2P_HOST_BRIDGE_OK,
	.n_hops = 3,
	.hops = { HOP(0, 1, 0, ROOT_PORT, 0), HOP(0, 0, 0, HOST_BRIDGE, 0),
		  HOP(0, 3, 0, ROOT_PORT, 0) },
};

static const struct fpgad_dma_p2p_path k_other_domain_ok = {
	.distance = 2048,
	.verdict = FPGAD_P2P_SUPPORTED | FPGAD_P2P_VIA_HOST_BRIDGE |
		   FPGAD_P2P_HOST_BRIDGE_OK | FPGAD_P2P_OTHER_DOMAIN,
	.n_hops = 2,
	.hops = { HOP(0, 1, 0, ROOT_PORT, 0), HOP(0x16, 1, 0, ROOT_PORT, 0) },
};

static const struct fpgad_dma_p2p_path k_other_domain_refused = {
	.distance = -1,
	.verdict = FPGAD_P2P_VIA_HOST_BRIDGE | FPGAD_P2P_OTHER_DOMAIN,
	.n_hops = 2,
	.hops = { HOP(0, 1, 0, ROOT_PORT, 0), HOP(0x80, 1, 0, ROOT_PORT, 0) },
};

/* The same paths from a kernel without CONFIG_PCI_P2PDMA (Debian's). */
static const struct fpgad_dma_p2p_path k_switch_nowalk = {
	.distance = -1, .verdict = FPGAD_P2P_NO_P2PDMA, .n_hops = 3,
	.hops = { HOP(2, 0, 0, DOWNSTREAM, ACS), HOP(1, 0, 0, UPSTREAM, COMMON),
		  HOP(2, 1, 0, DOWNSTREAM, ACS) },
};

static const struct fpgad_dma_p2p_path k_root_ports_nowalk = {
	.distance = -1,
	.verdict = FPGAD_P2P_NO_P2PDMA | FPGAD_P2P_VIA_HOST_BRIDGE,
	.n_hops = 3,
	.hops = { HOP(0, 1, 0, ROOT_PORT, 0), HOP(0, 0, 0, HOST_BRIDGE, 0),
		  HOP(0, 3, 0, ROOT_PORT, 0) },
};

static const struct fpgad_dma_p2p_path k_other_domain_nowalk = {
	.distance = -1,
	.verdict = FPGAD_P2P_NO_P2PDMA | FPGAD_P2P_VIA_HOST_BRIDGE |
		   FPGAD_P2P_OTHER_DOMAIN,
	.n_hops = 2,
	.hops = { HOP(0, 1, 0, ROOT_PORT, 0), HOP(0x80, 1, 0, ROOT_PORT, 0) },
};

static const struct fpgad_dma_p2p_path k_qemu = {
	.distance = 2048,
	.verdict = FPGAD_P2P_SUPPORTED | FPGAD_P2P_VIA_HOST_BRIDGE |
		   FPGAD_P2P_HOST_BRIDGE_OK,
	.n_hops = 3,
	.hops = { HOP(0, 2, 0, ROOT_PORT, 0), HOP(0, 0, 0, HOST_BRIDGE, 0),
		  HOP(0, 3, 0, ROOT_PORT, 0) },
};

/* --- the table --------------------------------------------------------------------- */

#define NO_KERNEL 1	/* no callback at all, as with the sim backend */

struct topo_case {
	const char *name;
	void (*scene)(void);
	const char *card;
	const char *gpu;
	const struct fpgad_dma_p2p_path *kernel; /* answer, when err is 0 */
	int err;			/* the callback's return, or NO_KERNEL */
	enum topo_class cls;
	enum topo_verdict verdict;
	const char *reason;		/* in the reason */
	const char *warning;		/* in the warning; NULL: no warning */
	const char *host_warning;	/* in the host's warning; NULL: none */
};

#define SW_CARD "0000:03:00.0"
#define SW_GPU "0000:04:00.0"

static const struct topo_case cases[] = {
	{ "same switch", scene_switch, SW_CARD, SW_GPU, &k_switch, 0,
	  TOPO_CLASS_PIX, TOPO_VERDICT_DIRECT,
	  "same switch 0000:01:00.0, ACS off", NULL, NULL },
	{ "same switch, GPU named the way CUDA and nvidia-smi do", scene_switch,
	  SW_CARD, "00000000:04:00.0", &k_switch, 0,
	  TOPO_CLASS_PIX, TOPO_VERDICT_DIRECT, "same switch 0000:01:00.0", NULL, NULL },
	{ "same switch, ACS on", scene_switch, SW_CARD, SW_GPU, &k_switch_acs, 0,
	  TOPO_CLASS_PIX, TOPO_VERDICT_ACS_REDIRECT, "ACS redirect on 0000:02:00.0",
	  NULL, NULL },
	{ "same switch, ACS on, host bridge not whitelisted", scene_switch, SW_CARD,
	  SW_GPU, &k_switch_acs_refused, 0, TOPO_CLASS_PIX, TOPO_VERDICT_UNSUPPORTED,
	  "ACS redirect on 0000:02:00.0 to a host bridge the kernel does not whitelist",
	  NULL, NULL },
	{ "same switch, kernel without CONFIG_PCI_P2PDMA", scene_switch, SW_CARD,
	  SW_GPU, &k_switch_nowalk, 0, TOPO_CLASS_PIX, TOPO_VERDICT_DIRECT,
	  "same switch 0000:01:00.0, ACS off", NULL, NULL },
	{ "same switch, no kernel answer", scene_switch, SW_CARD, SW_GPU, NULL,
	  NO_KERNEL, TOPO_CLASS_PIX, TOPO_VERDICT_UNKNOWN,
	  "same switch 0000:01:00.0, ACS unknown: the card's driver reports no PCI path",
	  NULL, NULL },
	{ "same switch, module without the ioctl", scene_switch, SW_CARD, SW_GPU,
	  NULL, -ENOTTY, TOPO_CLASS_PIX, TOPO_VERDICT_UNKNOWN,
	  "fpgad_dma.ko predates the P2P path ioctl", NULL, NULL },
	{ "same switch, kernel knows no such GPU", scene_switch, SW_CARD, SW_GPU,
	  NULL, -ENODEV, TOPO_CLASS_PIX, TOPO_VERDICT_UNKNOWN,
	  "the kernel knows no PCI device 0000:04:00.0", NULL, NULL },
	{ "same switch, path too long for the kernel", scene_switch, SW_CARD, SW_GPU,
	  NULL, -E2BIG, TOPO_CLASS_PIX, TOPO_VERDICT_UNKNOWN,
	  "more than the kernel reports (16)", NULL, NULL },
	{ "same switch, kernel answer with 99 hops", scene_switch, SW_CARD, SW_GPU,
	  &k_malformed_hops, 0, TOPO_CLASS_PIX, TOPO_VERDICT_UNKNOWN,
	  "malformed (99 hops)", NULL, NULL },
	{ "same switch, kernel answer with a bad hop type", scene_switch, SW_CARD,
	  SW_GPU, &k_malformed_type, 0, TOPO_CLASS_PIX, TOPO_VERDICT_UNKNOWN,
	  "malformed (hop 0 of type 9)", NULL, NULL },
	{ "same switch, kernel and sysfs disagree", scene_switch, SW_CARD, SW_GPU,
	  &k_switch_other_common, 0, TOPO_CLASS_PIX, TOPO_VERDICT_DIRECT,
	  "ACS off", "the kernel's common bridge is 0000:00:01.0, sysfs says 0000:01:00.0",
	  NULL },
	{ "two switches", scene_two_switches, "0000:05:00.0", "0000:06:00.0",
	  &k_two_switches, 0, TOPO_CLASS_PXB, TOPO_VERDICT_DIRECT,
	  "2 switches below 0000:01:00.0, ACS off", NULL, NULL },
	{ "root ports of one host bridge, IOMMU translating", scene_root_ports_dma,
	  "0000:01:00.0", "0000:02:00.0", &k_root_ports, 0, TOPO_CLASS_PHB,
	  TOPO_VERDICT_IOMMU, "through host bridge pci0000:00, IOMMU translating",
	  NULL, NULL },
	{ "root ports of one host bridge, no IOMMU", scene_root_ports_plain,
	  "0000:01:00.0", "0000:02:00.0", &k_root_ports, 0, TOPO_CLASS_PHB,
	  TOPO_VERDICT_HOST_BRIDGE, "through host bridge pci0000:00, through the root complex",
	  NULL, NULL },
	{ "host bridges of one NUMA node", scene_node, "0000:01:00.0", "0000:17:00.0",
	  &k_other_domain_ok, 0, TOPO_CLASS_NODE, TOPO_VERDICT_HOST_BRIDGE,
	  "host bridges pci0000:00 and pci0000:16 of NUMA node 0", NULL, NULL },
	{ "host bridges, NUMA node unknown", scene_numa_unknown, "0000:01:00.0",
	  "0000:17:00.0", &k_other_domain_ok, 0, TOPO_CLASS_NODE,
	  TOPO_VERDICT_HOST_BRIDGE, "NUMA node unknown", NULL, NULL },
	{ "across NUMA nodes", scene_sys, "0000:01:00.0", "0000:81:00.0",
	  &k_other_domain_refused, 0, TOPO_CLASS_SYS, TOPO_VERDICT_UNSUPPORTED,
	  "across NUMA nodes 0 and 1, through a host bridge the kernel does not whitelist",
	  NULL, NULL },
	{ "root ports, kernel without CONFIG_PCI_P2PDMA", scene_root_ports_plain,
	  "0000:01:00.0", "0000:02:00.0", &k_root_ports_nowalk, 0, TOPO_CLASS_PHB,
	  TOPO_VERDICT_HOST_BRIDGE, "through host bridge pci0000:00, through the root complex",
	  NULL, NULL },
	{ "across NUMA nodes, kernel without CONFIG_PCI_P2PDMA", scene_sys,
	  "0000:01:00.0", "0000:81:00.0", &k_other_domain_nowalk, 0, TOPO_CLASS_SYS,
	  TOPO_VERDICT_UNSUPPORTED,
	  "across NUMA nodes 0 and 1, under different host bridges (the kernel has no CONFIG_PCI_P2PDMA to say more)",
	  NULL, NULL },
	{ "QEMU guest", scene_qemu, "0000:01:00.0", "0000:02:00.0", &k_qemu, 0,
	  TOPO_CLASS_PHB, TOPO_VERDICT_VM, "virtual machine (QEMU, DMI 'QEMU Standard PC",
	  NULL, NULL },
	{ "QEMU guest, no kernel answer", scene_qemu, "0000:01:00.0", "0000:02:00.0",
	  NULL, NO_KERNEL, TOPO_CLASS_PHB, TOPO_VERDICT_VM,
	  "the PCI path is emulated, through host bridge pci0000:00", NULL, NULL },
	{ "guest seen only by its emulated root port", scene_qemu_bridge_only,
	  "0000:01:00.0", "0000:02:00.0", &k_qemu, 0, TOPO_CLASS_PHB, TOPO_VERDICT_VM,
	  "virtual machine (QEMU bridge 0000:00:02.0)", NULL, NULL },
	{ "guest seen only by the hypervisor flag", scene_hypervisor_flag,
	  "0000:01:00.0", "0000:02:00.0", &k_root_ports, 0, TOPO_CLASS_PHB,
	  TOPO_VERDICT_VM, "virtual machine (hypervisor flag in cpuinfo)", NULL, NULL },
	{ "GPU missing", scene_no_gpu, "0000:01:00.0", "0000:41:00.0", &k_switch, 0,
	  TOPO_CLASS_UNKNOWN, TOPO_VERDICT_NO_GPU,
	  "GPU 0000:41:00.0 is not on this host's PCI bus", NULL, NULL },
	{ "card missing", scene_no_card, "0000:01:00.0", "0000:02:00.0", &k_switch, 0,
	  TOPO_CLASS_UNKNOWN, TOPO_VERDICT_UNKNOWN,
	  "the card 0000:01:00.0 is not on this host's PCI bus", NULL, NULL },
	{ "NUMA node not a number", scene_bad_numa, SW_CARD, SW_GPU, &k_switch, 0,
	  TOPO_CLASS_PIX, TOPO_VERDICT_DIRECT, "same switch",
	  "0000:04:00.0/numa_node: 'banana' is not a number", NULL },
	{ "vendor empty, device missing", scene_bad_ids, SW_CARD, SW_GPU, &k_switch, 0,
	  TOPO_CLASS_PIX, TOPO_VERDICT_DIRECT, "same switch",
	  "0000:03:00.0/vendor: empty", NULL },
	{ "IOMMU group of an unknown type", scene_bad_iommu_type, SW_CARD, SW_GPU,
	  &k_switch, 0, TOPO_CLASS_PIX, TOPO_VERDICT_DIRECT, "same switch",
	  "iommu_groups/5/type: unknown type 'weird'", NULL },
	{ "iommu_group link to no group", scene_bad_iommu_link, "0000:01:00.0",
	  "0000:02:00.0", &k_root_ports, 0, TOPO_CLASS_PHB, TOPO_VERDICT_HOST_BRIDGE,
	  "through host bridge", "0000:01:00.0/iommu_group: links to 'nowhere', not a group",
	  NULL },
	{ "GPU below no host bridge", scene_no_host_bridge, "0000:01:00.0",
	  "0000:04:00.0", &k_switch, 0, TOPO_CLASS_UNKNOWN, TOPO_VERDICT_DIRECT,
	  "PCI path unknown, ACS off", "0000:04:00.0: its sysfs path is below no PCI host bridge",
	  NULL },
	{ "no cpuinfo, no DMI", scene_bare, "0000:01:00.0", "0000:02:00.0",
	  &k_root_ports, 0, TOPO_CLASS_PHB, TOPO_VERDICT_HOST_BRIDGE,
	  "through host bridge pci0000:00", NULL, "No such file" },
	{ "simulated card", scene_switch, TOPO_SIM, SW_GPU, NULL, NO_KERNEL,
	  TOPO_CLASS_SIM, TOPO_VERDICT_SIMULATED, "simulated card: no PCI path",
	  NULL, NULL },
	{ "simulated card, GPU missing", scene_switch, TOPO_SIM, "0000:41:00.0", NULL,
	  NO_KERNEL, TOPO_CLASS_SIM, TOPO_VERDICT_NO_GPU,
	  "simulated card; GPU 0000:41:00.0 is not on this host's PCI bus", NULL, NULL },
};

/* The recorded answer of the case, checking what the kernel was asked. */
static int kernel_answer(void *user, struct fpgad_dma_p2p_path *path)
{
	const struct topo_case *c = user;
	uint32_t domain;
	uint8_t bus, devfn;

	assert_int_equal(topology_addr_parse(c->gpu, &domain, &bus, &devfn), 0);
	assert_int_equal(path->peer_domain, domain);
	assert_int_equal(path->peer_bus, bus);
	assert_int_equal(path->peer_devfn, devfn);
	assert_int_equal(path->reserved0, 0);
	assert_int_equal(path->n_hops, 0);
	if (c->err) {
		if (c->err == -E2BIG)
			path->n_hops = 20;
		return c->err;
	}
	*path = *c->kernel;
	path->peer_domain = domain;
	path->peer_bus = bus;
	path->peer_devfn = devfn;
	return 0;
}

static void fresh_tree(void)
{
	fake_sysfs_create(&fs);
}

static void drop_tree(void)
{
	fake_sysfs_remove(&fs);
}

static void check_text(const char *what, const char *got, const char *want,
		       const char *name)
{
	if (!want) {
		if (got[0])
			fail_msg("%s: unexpected %s '%s'", name, what, got);
		return;
	}
	if (!strstr(got, want))
		fail_msg("%s: %s '%s' lacks '%s'", name, what, got, want);
}

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct topo_case *c = &cases[i];
		struct topo_source src = {
			.sysfs = fs.sysfs, .cpuinfo = fs.cpuinfo,
			.path = c->err == NO_KERNEL ? NULL : kernel_answer,
			.user = (void *)c,
		};
		struct topo_host host;
		struct topo_pair p;

		fresh_tree();
		c->scene();
		topology_host(&src, &host);
		check_text("host warning", host.warning, c->host_warning, c->name);
		memset(&p, 0xa5, sizeof(p));
		assert_int_equal(topology_pair(&src, &host, c->card, c->gpu, &p), 0);
		if (p.cls != c->cls || p.verdict != c->verdict)
			fail_msg("%s: %s %s (%s), want %s %s", c->name,
				 topology_class_name(p.cls),
				 topology_verdict_name(p.verdict), p.reason,
				 topology_class_name(c->cls),
				 topology_verdict_name(c->verdict));
		check_text("reason", p.reason, c->reason, c->name);
		check_text("warning", p.warning, c->warning, c->name);
		drop_tree();
	}
}

/* What a pair carries besides class and verdict. */
static void test_pair_details(void **state)
{
	struct topo_source src = { .sysfs = fs.sysfs, .cpuinfo = fs.cpuinfo,
				   .path = kernel_answer, .user = (void *)&cases[2] };
	struct topo_host host;
	struct topo_pair p;

	(void)state;
	fresh_tree();
	scene_switch();
	topology_host(&src, &host);
	assert_false(host.vm);
	assert_int_equal(topology_pair(&src, &host, "0000:03:00.0", "0000:04:00.0", &p), 0);
	assert_true(p.card.found);
	assert_int_equal(p.card.vendor, 0x10ee);
	assert_int_equal(p.card.device, 0x9038);
	assert_int_equal(p.gpu.vendor, 0x10de);
	assert_int_equal(p.card.numa_node, 0);
	assert_string_equal(p.card.host_bridge, "pci0000:00");
	assert_int_equal(p.card.n_bridges, 3);
	assert_string_equal(p.card.bridges[0], "0000:00:01.0");
	assert_string_equal(p.card.bridges[2], "0000:02:00.0");
	assert_int_equal(p.card.iommu_group, 5);
	assert_int_equal(p.card.iommu, TOPO_IOMMU_PASSTHROUGH);
	assert_int_equal(p.gpu.iommu_group, 6);
	assert_string_equal(p.common, "0000:01:00.0");
	assert_string_equal(p.acs_bridge, "0000:02:00.0");
	assert_true(p.kernel);
	assert_int_equal(p.distance, 2048);
	assert_true(p.kernel_verdict & FPGAD_P2P_ACS_REDIRECT);
	drop_tree();

	/* QEMU: the host is a VM, with DMI's names. */
	fresh_tree();
	scene_qemu();
	topology_host(&src, &host);
	assert_true(host.vm);
	assert_non_null(strstr(host.vm_why, "QEMU"));
	drop_tree();

	/* EC2 bare metal shares the vendor but is no VM. */
	fresh_tree();
	dmi("Amazon EC2", "p5.48xlarge.metal");
	cpu(false);
	topology_host(&src, &host);
	assert_false(host.vm);
	dmi("Amazon EC2", "p5.48xlarge");
	topology_host(&src, &host);
	assert_true(host.vm);
	drop_tree();
}

static void test_bad_addresses(void **state)
{
	static const char *const bad[] = {
		"", "0000:41:00", "0000:41:20.0", "0000:41:00.8", "zz",
		"0000:41:00.0x", "000000000:41:00.0", "0000:141:00.0", "pci0000:00",
	};
	struct topo_source src = { .sysfs = "/nonexistent" };
	char out[TOPO_ADDR_LEN];
	uint32_t domain;
	uint8_t bus, devfn;
	struct topo_pair p;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (topology_addr_parse(bad[i], &domain, &bus, &devfn) == 0)
			fail_msg("'%s' parsed as a PCI address", bad[i]);
		assert_int_equal(topology_pair(&src, NULL, "0000:01:00.0", bad[i], &p),
				 -EINVAL);
		assert_int_equal(topology_pair(&src, NULL, bad[i], "0000:01:00.0", &p),
				 -EINVAL);
	}
	assert_int_equal(topology_addr_parse("00000000:C1:1f.7", &domain, &bus, &devfn), 0);
	topology_addr_format(domain, bus, devfn, out);
	assert_string_equal(out, "0000:c1:1f.7");
	assert_int_equal(topology_addr_parse("10000:01:00.0", &domain, &bus, &devfn), 0);
	assert_int_equal(domain, 0x10000);

	/* A sysfs root that does not exist: answers, not errors. */
	assert_int_equal(topology_pair(&src, NULL, "0000:01:00.0", "0000:02:00.0", &p), 0);
	assert_int_equal(p.verdict, TOPO_VERDICT_UNKNOWN);
	assert_non_null(strstr(p.reason, "not on this host's PCI bus"));
}

static void test_gpus(void **state)
{
	struct topo_source src = { .sysfs = fs.sysfs };
	char addrs[8][TOPO_ADDR_LEN];
	unsigned n = 99;

	(void)state;
	fresh_tree();
	BRIDGE("pci0000:00/0000:00:01.0");
	dev("pci0000:00/0000:00:01.0/0000:c1:00.0", 0x10de, 0x2335, 0x030200, "1", -1);
	dev("pci0000:00/0000:00:01.0/0000:41:00.0", 0x10de, 0x1eb8, 0x030000, "0", -1);
	dev("pci0000:00/0000:00:01.0/0000:41:00.1", 0x10de, 0x10fa, 0x040300, "0", -1);
	dev("pci0000:00/0000:00:01.0/0000:05:00.0", 0x10de, 0x22a3, 0x068000, "0", -1);
	dev("pci0000:00/0000:00:01.0/0000:02:00.0", 0x1a03, 0x2000, 0x030000, "0", -1);
	dev("pci0000:00/0000:00:01.0/0000:03:00.0", 0x10ee, 0x9038, 0x058000, "0", -1);
	assert_int_equal(topology_gpus(&src, addrs, 8, &n), 0);
	assert_int_equal(n, 2);
	assert_string_equal(addrs[0], "0000:41:00.0");
	assert_string_equal(addrs[1], "0000:c1:00.0");
	assert_int_equal(topology_gpus(&src, addrs, 1, &n), 0);
	assert_int_equal(n, 1);
	drop_tree();

	src.sysfs = "/nonexistent";
	assert_int_equal(topology_gpus(&src, addrs, 8, &n), -ENOENT);
	assert_int_equal(n, 1);
}

/* What the card is: ids, link now and at most, NUMA node, driver, module. */
static void test_inventory(void **state)
{
	struct topo_source src = { .sysfs = fs.sysfs };
	struct topo_inventory inv;
	char warn[192] = "";

	(void)state;
	fresh_tree();
	BRIDGE("pci0000:00/0000:00:01.0");
	CARD("pci0000:00/0000:00:01.0/0000:03:00.0", "1", -1);
	fake_sysfs_inventory(&fs, "0000:03:00.0", 0x10ee, 0x0007, "8.0 GT/s PCIe", 4,
			     "16.0 GT/s PCIe", 8, "fpgad_dma", "0.1.0");
	assert_int_equal(topology_inventory(&src, "0000:03:00.0", &inv, warn, sizeof(warn)), 0);
	assert_string_equal(inv.addr, "0000:03:00.0");
	assert_int_equal(inv.vendor, 0x10ee);
	assert_int_equal(inv.device, 0x9038);
	assert_int_equal(inv.subsystem_vendor, 0x10ee);
	assert_int_equal(inv.subsystem_device, 0x0007);
	assert_int_equal(inv.link_gen, 3);
	assert_int_equal(inv.link_width, 4);
	assert_int_equal(inv.max_link_gen, 4);
	assert_int_equal(inv.max_link_width, 8);
	assert_int_equal(inv.numa_node, 1);
	assert_string_equal(inv.driver, "fpgad_dma");
	assert_string_equal(inv.module_version, "0.1.0");
	assert_false(inv.aer);		/* no AER files: not available */
	assert_string_equal(warn, "");

	/* No link files, no driver: unknown, the first missing file named. */
	CARD("pci0000:00/0000:00:01.0/0000:04:00.0", "-1", -1);
	assert_int_equal(topology_inventory(&src, "0000:04:00.0", &inv, warn, sizeof(warn)), 0);
	assert_int_equal(inv.vendor, 0x10ee);
	assert_int_equal(inv.link_gen, 0);
	assert_int_equal(inv.max_link_width, 0);
	assert_int_equal(inv.numa_node, -1);
	assert_string_equal(inv.driver, "");
	assert_string_equal(inv.module_version, "");
	assert_false(inv.aer);
	assert_non_null(strstr(warn, "0000:04:00.0/subsystem_vendor"));
	drop_tree();
	assert_int_equal(topology_inventory(&src, "sim", &inv, warn, sizeof(warn)), -EINVAL);
	assert_int_equal(topology_link_gen("2.5 GT/s PCIe"), 1);
	assert_int_equal(topology_link_gen("32.0 GT/s PCIe"), 5);
	assert_int_equal(topology_link_gen("Unknown"), 0);
}

/* Rewrite AER file @attr of card 0000:03:00.0 of the tree as @text. */
static void put_aer(const char *attr, const char *text)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:03:00.0/%s", fs.sysfs, attr);
	fake_sysfs_put(path, "%s", text);
}

/* The card's inventory, read again: whether its AER totals were. */
static bool aer_read(struct topo_inventory *inv, char *warn, size_t wlen)
{
	struct topo_source src = { .sysfs = fs.sysfs };

	warn[0] = '\0';
	memset(inv, 0xa5, sizeof(*inv));
	assert_int_equal(topology_inventory(&src, "0000:03:00.0", inv, warn, wlen), 0);
	return inv->aer;
}

/* The AER totals: read as the kernel writes them, else not available. */
static void test_inventory_aer(void **state)
{
	struct topo_inventory inv;
	char warn[192], path[512];

	(void)state;
	fresh_tree();
	BRIDGE("pci0000:00/0000:00:01.0");
	CARD("pci0000:00/0000:00:01.0/0000:03:00.0", "0", -1);
	fake_sysfs_inventory(&fs, "0000:03:00.0", 0x10ee, 0x0007, "8.0 GT/s PCIe", 8,
			     "8.0 GT/s PCIe", 8, "fpgad_dma", "0.1.0");

	/* Normal files, counts past 32 bits. */
	fake_sysfs_aer(&fs, "0000:03:00.0", 5000000000ull, 2, 0);
	assert_true(aer_read(&inv, warn, sizeof(warn)));
	assert_int_equal(inv.aer_correctable, 5000000000ull);
	assert_int_equal(inv.aer_nonfatal, 2);
	assert_int_equal(inv.aer_fatal, 0);
	assert_string_equal(warn, "");

	/* Read afresh: the counts follow the files. */
	fake_sysfs_aer(&fs, "0000:03:00.0", 7, 0, 1);
	assert_true(aer_read(&inv, warn, sizeof(warn)));
	assert_int_equal(inv.aer_correctable, 7);
	assert_int_equal(inv.aer_nonfatal, 0);
	assert_int_equal(inv.aer_fatal, 1);

	/* One file missing: none of the three, and no warning. */
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:03:00.0/aer_dev_fatal", fs.sysfs);
	assert_int_equal(unlink(path), 0);
	assert_false(aer_read(&inv, warn, sizeof(warn)));
	assert_int_equal(inv.aer_correctable, 0);
	assert_int_equal(inv.aer_nonfatal, 0);
	assert_string_equal(warn, "");

	/* Malformed files: not available, the file named; never a wrong number. */
	static const struct { const char *attr, *text; } bad[] = {
		{ "aer_dev_correctable", "RxErr 0\nBadTLP 3\n" },		/* no total */
		{ "aer_dev_correctable", "" },
		{ "aer_dev_correctable", "RxErr 1\nTOTAL_ERR_COR many\n" },
		{ "aer_dev_correctable", "TOTAL_ERR_COR -1\n" },
		{ "aer_dev_correctable", "TOTAL_ERR_COR 12x\n" },
		{ "aer_dev_correctable", "TOTAL_ERR_COR 18446744073709551616\n" },
		{ "aer_dev_correctable", "TOTAL_ERR_COR 1\nTOTAL_ERR_COR 2\n" },
		{ "aer_dev_correctable", "RxErr\nTOTAL_ERR_COR 1\n" },	/* a bad line */
		{ "aer_dev_correctable", "TOTAL_ERR_CORX 1\n" },
		{ "aer_dev_nonfatal", "TOTAL_ERR_COR 0\n" },		/* another total */
		{ "aer_dev_fatal", "TOTAL_ERR_FATAL\n" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fake_sysfs_aer(&fs, "0000:03:00.0", 1, 1, 1);
		put_aer(bad[i].attr, bad[i].text);
		assert_false(aer_read(&inv, warn, sizeof(warn)));
		assert_int_equal(inv.aer_correctable, 0);
		assert_int_equal(inv.aer_nonfatal, 0);
		assert_int_equal(inv.aer_fatal, 0);
		assert_non_null(strstr(warn, bad[i].attr));
		/* The rest of the inventory is read all the same. */
		assert_int_equal(inv.link_gen, 3);
	}

	/* Unreadable (a directory where the file should be): not available. */
	fake_sysfs_aer(&fs, "0000:03:00.0", 1, 1, 1);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/0000:03:00.0/aer_dev_nonfatal", fs.sysfs);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkdir(path, 0755), 0);
	assert_false(aer_read(&inv, warn, sizeof(warn)));
	assert_int_equal(inv.aer_correctable, 0);
	assert_non_null(strstr(warn, "aer_dev_nonfatal"));
	drop_tree();
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(topology_class_name(TOPO_CLASS_PXB), "PXB");
	assert_string_equal(topology_class_name((enum topo_class)99), "unknown");
	assert_string_equal(topology_verdict_name(TOPO_VERDICT_ACS_REDIRECT), "acs-redirect");
	assert_string_equal(topology_iommu_name(TOPO_IOMMU_TRANSLATED), "translated");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_pair_details),
		cmocka_unit_test(test_bad_addresses),
		cmocka_unit_test(test_gpus),
		cmocka_unit_test(test_inventory),
		cmocka_unit_test(test_inventory_aer),
		cmocka_unit_test(test_names),
	};

	return cmocka_run_group_tests_name("topology", tests, NULL, NULL);
}
