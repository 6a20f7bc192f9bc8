/* SPDX-License-Identifier: MIT */
/*
 * topology.h - where the card and a GPU sit on the PCI tree, and whether
 * peer-to-peer DMA between them is worth trying.
 *
 * Two sources, because fpgad runs without privileges:
 *   sysfs   the PCI tree (the parents of each device's sysfs path), the
 *           NUMA node of each end, its IOMMU group and the group's type,
 *           DMI names and the vendor of every bridge (emulated root ports);
 *           /proc/cpuinfo's hypervisor flag;
 *   kernel  fpgad_dma.ko's FPGAD_DMA_IOC_P2P_PATH: the path as the
 *           kernel's pci_p2pdma_distance() walks it, with the ACS control
 *           bits of every bridge (config space past 64 bytes needs
 *           CAP_SYS_ADMIN), through a callback so that tests feed recorded
 *           answers.
 *
 * A pair gets a class, as nvidia-smi topo -m gives one for two GPUs:
 *   PIX   through one PCIe switch (or a single bridge)
 *   PXB   through several switches, not through the host bridge
 *   PHB   through the host bridge (root complex) both sit under
 *   NODE  between host bridges of one NUMA node
 *   SYS   across NUMA nodes (the SMP interconnect)
 * and a verdict on peer-to-peer, with a one-line reason.  Every missing or
 * malformed file gives an answer (unknown, with a warning naming the
 * file), never an error.
 */
#ifndef FPGAD_TOPOLOGY_H
#define FPGAD_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fpgad_dma.h"

#define TOPO_ADDR_LEN 16	/* "0000:16:00.0", "pci0000:00", NUL included */
#define TOPO_MAX_BRIDGES 16	/* above one device */
#define TOPO_SIM "sim"		/* the card address of the simulated card */

enum topo_class {
	TOPO_CLASS_UNKNOWN,	/* an end is missing or its path unreadable */
	TOPO_CLASS_SIM,		/* the simulated card: no PCI path */
	TOPO_CLASS_PIX,
	TOPO_CLASS_PXB,
	TOPO_CLASS_PHB,
	TOPO_CLASS_NODE,
	TOPO_CLASS_SYS,
};

enum topo_verdict {
	TOPO_VERDICT_UNKNOWN,		/* no kernel answer: ACS unknown */
	TOPO_VERDICT_SIMULATED,		/* the simulated card */
	TOPO_VERDICT_NO_GPU,		/* the GPU is not on this host's PCI bus */
	TOPO_VERDICT_DIRECT,		/* peer TLPs turn around in a switch */
	TOPO_VERDICT_HOST_BRIDGE,	/* they cross the root complex, which
					   the kernel allows */
	TOPO_VERDICT_IOMMU,		/* ... and the IOMMU translates each */
	TOPO_VERDICT_ACS_REDIRECT,	/* ACS sends them up to the root complex */
	TOPO_VERDICT_VM,		/* a virtual machine: the tree is emulated */
	TOPO_VERDICT_UNSUPPORTED,	/* the kernel would not map it */
};

enum topo_iommu {
	TOPO_IOMMU_NONE,		/* no IOMMU group: no IOMMU, or it is off */
	TOPO_IOMMU_PASSTHROUGH,		/* type identity */
	TOPO_IOMMU_TRANSLATED,		/* type DMA or DMA-FQ */
	TOPO_IOMMU_BLOCKED,		/* type blocked */
	TOPO_IOMMU_UNMANAGED,		/* a user-space driver owns it (VFIO) */
	TOPO_IOMMU_UNKNOWN,		/* a group whose type cannot be read */
};

/* One end of a pair, as sysfs shows it. */
struct topo_end {
	char addr[TOPO_ADDR_LEN];	/* "0000:16:00.0" */
	bool found;			/* sysfs has it */
	uint16_t vendor;		/* 0: unreadable */
	uint16_t device;
	int numa_node;			/* -1: none or unknown */
	char host_bridge[TOPO_ADDR_LEN]; /* "pci0000:00", "" unknown */
	unsigned n_bridges;		/* bridges above it, top down */
	char bridges[TOPO_MAX_BRIDGES][TOPO_ADDR_LEN];
	int iommu_group;		/* -1: none */
	enum topo_iommu iommu;
};

/* What holds for every pair on the host. */
struct topo_host {
	bool vm;
	char vm_why[96];		/* "hypervisor flag in /proc/cpuinfo" */
	char warning[160];		/* a file that could not be read, "" none */
};

struct topo_pair {
	struct topo_end card;
	struct topo_end gpu;
	enum topo_class cls;
	enum topo_verdict verdict;
	char common[TOPO_ADDR_LEN];	/* lowest bridge above both, "" none */
	char acs_bridge[TOPO_ADDR_LEN];	/* first bridge redirecting, "" none */
	bool vm;			/* the host or a bridge on the path */
	bool kernel;			/* the kernel answered */
	int32_t distance;		/* its pci_p2pdma_distance() */
	uint32_t kernel_verdict;	/* its FPGAD_P2P_* bits */
	char reason[256];		/* one line: the path and the verdict's cause */
	char warning[192];		/* the first thing unreadable, "" none */
};

/*
 * The kernel's answer for the peer in @path (peer_* set, the rest zero):
 * 0 or a negative errno (-ENOTTY: the module predates the ioctl).
 */
typedef int (*topo_path_fn)(void *user, struct fpgad_dma_p2p_path *path);

struct topo_source {
	const char *sysfs;		/* NULL: "/sys" */
	const char *cpuinfo;		/* NULL: "/proc/cpuinfo" */
	topo_path_fn path;		/* NULL: no kernel answer */
	void *user;
};

/*
 * One end as sysfs shows it: 0 (not found is an answer: ret_end->found),
 * -EINVAL for a bad address.  The first file that could not be read is
 * named in @warn unless @warn already says something.
 */
int topology_end(const struct topo_source *src, const char *addr,
		 struct topo_end *ret_end, char *warn, size_t wlen);

/* The host's facts (VM or not); never fails. */
void topology_host(const struct topo_source *src, struct topo_host *ret_host);

/*
 * Class and verdict of card @card (a PCI address, or TOPO_SIM) and GPU
 * @gpu (a PCI address: "0000:41:00.0", "00000000:41:00.0", any case).
 * -EINVAL for an address that is neither; every other problem is an
 * answer in *ret_pair.
 */
int topology_pair(const struct topo_source *src, const struct topo_host *host,
		  const char *card, const char *gpu, struct topo_pair *ret_pair);

/*
 * The NVIDIA GPUs (display or 3D controllers of vendor 10de) sysfs lists,
 * in address order; at most @max, with *ret_n the number found.  Fails
 * (-errno) only when the device directory cannot be read.
 */
int topology_gpus(const struct topo_source *src, char (*ret_addrs)[TOPO_ADDR_LEN],
		  unsigned max, unsigned *ret_n);

/* What a card is, as lspci -vv and modinfo tell it: fpgactl status. */
struct topo_inventory {
	char addr[TOPO_ADDR_LEN];	/* "0000:01:00.0" */
	uint16_t vendor;		/* 0: unreadable */
	uint16_t device;
	uint16_t subsystem_vendor;
	uint16_t subsystem_device;
	unsigned link_gen;		/* negotiated, 0: unknown */
	unsigned link_width;
	unsigned max_link_gen;		/* what card and slot can do */
	unsigned max_link_width;
	int numa_node;			/* -1: none or unknown */
	char driver[32];		/* bound driver, "" none */
	char module_version[32];	/* its module's version, "" unknown */
	/*
	 * PCIe AER: the TOTAL_ERR_ lines of aer_dev_correctable,
	 * aer_dev_nonfatal and aer_dev_fatal, since boot as the kernel counts
	 * them; set only with aer.
	 */
	bool aer;			/* all three were read */
	uint64_t aer_correctable;
	uint64_t aer_nonfatal;
	uint64_t aer_fatal;
};

/*
 * Card @addr's identity, PCIe link (current_link_speed/width and the
 * max_ ones), NUMA node, driver and AER totals from sysfs: 0, or -EINVAL
 * for a bad address.  What cannot be read stays 0 or "", the first such
 * file named in @warn.  The AER totals are read only when all three files
 * are there and well formed ("NAME COUNT" lines, one of them TOTAL_ERR_);
 * a missing file (no AER capability, a kernel without CONFIG_PCIEAER) is
 * no warning, a malformed one is.
 */
int topology_inventory(const struct topo_source *src, const char *addr,
		       struct topo_inventory *ret_inv, char *warn, size_t wlen);

/* A PCIe link speed as sysfs writes it ("8.0 GT/s PCIe") as a generation, 0 unknown. */
unsigned topology_link_gen(const char *speed);

/* "0000:16:00.0" (domain up to 8 hex digits, any case) into its parts. */
int topology_addr_parse(const char *s, uint32_t *ret_domain, uint8_t *ret_bus,
			uint8_t *ret_devfn);
/* The canonical form, "%04x:%02x:%02x.%u". */
void topology_addr_format(uint32_t domain, uint8_t bus, uint8_t devfn,
			  char out[TOPO_ADDR_LEN]);

const char *topology_class_name(enum topo_class c);	/* "PIX", ... */
const char *topology_verdict_name(enum topo_verdict v);	/* "direct", ... */
const char *topology_iommu_name(enum topo_iommu i);	/* "passthrough", ... */

#endif
