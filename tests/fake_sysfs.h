/* SPDX-License-Identifier: MIT */
/*
 * fake_sysfs.h - recorded host trees for the topology tests of the unit
 * and integration tiers: a temporary directory holding sys/ (PCI devices
 * with their bus links, IOMMU groups, DMI names) and proc/cpuinfo, the
 * layout fpgad reads below $FPGAD_TEST_SYSROOT.  Failures abort the test
 * through CMocka's assertions.
 */
#ifndef FPGAD_FAKE_SYSFS_H
#define FPGAD_FAKE_SYSFS_H

#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fake_sysfs {
	char root[64];		/* the temporary directory */
	char sysfs[128];	/* root/sys */
	char cpuinfo[128];	/* root/proc/cpuinfo */
};

static inline void fake_sysfs_mkdirs(const char *path)
{
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
	mkdir(buf, 0755);
}

/* Write a file, making its directory. */
static inline void fake_sysfs_put(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline void fake_sysfs_put(const char *path, const char *fmt, ...)
{
	char dir[512];
	va_list ap;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	fake_sysfs_mkdirs(dir);
	f = fopen(path, "w");
	assert_non_null(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fclose(f);
}

static inline void fake_sysfs_create(struct fake_sysfs *fs)
{
	snprintf(fs->root, sizeof(fs->root), "/tmp/fpgad-sysfs.XXXXXX");
	assert_non_null(mkdtemp(fs->root));
	snprintf(fs->sysfs, sizeof(fs->sysfs), "%s/sys", fs->root);
	snprintf(fs->cpuinfo, sizeof(fs->cpuinfo), "%s/proc/cpuinfo", fs->root);
	fake_sysfs_mkdirs(fs->sysfs);
}

static inline int fake_sysfs_remove_entry(const char *path, const struct stat *st,
					  int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static inline void fake_sysfs_remove(const struct fake_sysfs *fs)
{
	nftw(fs->root, fake_sysfs_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * A PCI device at @chain below sys/devices ("pci0000:00/0000:00:01.0/
 * 0000:01:00.0"), its bus/pci/devices link and, with @group >= 0, its
 * IOMMU group.  @numa NULL: no numa_node file.
 */
static inline void fake_sysfs_dev(const struct fake_sysfs *fs, const char *chain,
				  unsigned vendor, unsigned device, unsigned cls,
				  const char *numa, int group)
{
	char dir[512], link[512], path[600], g[512];
	const char *last = strrchr(chain, '/');

	last = last ? last + 1 : chain;
	snprintf(dir, sizeof(dir), "%s/devices/%s", fs->sysfs, chain);
	fake_sysfs_mkdirs(dir);
	snprintf(path, sizeof(path), "%s/vendor", dir);
	fake_sysfs_put(path, "0x%04x\n", vendor);
	snprintf(path, sizeof(path), "%s/device", dir);
	fake_sysfs_put(path, "0x%04x\n", device);
	snprintf(path, sizeof(path), "%s/class", dir);
	fake_sysfs_put(path, "0x%06x\n", cls);
	if (numa) {
		snprintf(path, sizeof(path), "%s/numa_node", dir);
		fake_sysfs_put(path, "%s\n", numa);
	}
	snprintf(link, sizeof(link), "%s/bus/pci/devices", fs->sysfs);
	fake_sysfs_mkdirs(link);
	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", fs->sysfs, last);
	assert_int_equal(symlink(dir, link), 0);
	if (group >= 0) {
		snprintf(g, sizeof(g), "%s/kernel/iommu_groups/%d", fs->sysfs, group);
		fake_sysfs_mkdirs(g);
		snprintf(path, sizeof(path), "%s/iommu_group", dir);
		assert_int_equal(symlink(g, path), 0);
	}
}

static inline void fake_sysfs_group(const struct fake_sysfs *fs, int group,
				    const char *type)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/kernel/iommu_groups/%d/type", fs->sysfs,
		 group);
	fake_sysfs_put(path, "%s\n", type);
}

static inline void fake_sysfs_dmi(const struct fake_sysfs *fs, const char *vendor,
				  const char *product)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/class/dmi/id/sys_vendor", fs->sysfs);
	fake_sysfs_put(path, "%s\n", vendor);
	snprintf(path, sizeof(path), "%s/class/dmi/id/product_name", fs->sysfs);
	fake_sysfs_put(path, "%s\n", product);
}

static inline void fake_sysfs_cpu(const struct fake_sysfs *fs, bool hypervisor)
{
	fake_sysfs_put(fs->cpuinfo, "processor\t: 0\nvendor_id\t: GenuineIntel\n"
		       "flags\t\t: fpu vme de pse tsc msr%s sse sse2\n\n"
		       "processor\t: 1\nflags\t\t: fpu\n",
		       hypervisor ? " hypervisor" : "");
}

/*
 * What lspci -vv and modinfo read of device @addr (placed by
 * fake_sysfs_dev()): subsystem ids, the link now and at most ("8.0 GT/s
 * PCIe", 8), and with @driver its driver and module, of version
 * @version (NULL: the module declares none).
 */
static inline void fake_sysfs_inventory(const struct fake_sysfs *fs, const char *addr,
					unsigned sub_vendor, unsigned sub_device,
					const char *speed, unsigned width,
					const char *max_speed, unsigned max_width,
					const char *driver, const char *version)
{
	char dev[256], path[512], target[300];

	snprintf(dev, sizeof(dev), "%s/bus/pci/devices/%s", fs->sysfs, addr);
	snprintf(path, sizeof(path), "%s/subsystem_vendor", dev);
	fake_sysfs_put(path, "0x%04x\n", sub_vendor);
	snprintf(path, sizeof(path), "%s/subsystem_device", dev);
	fake_sysfs_put(path, "0x%04x\n", sub_device);
	snprintf(path, sizeof(path), "%s/current_link_speed", dev);
	fake_sysfs_put(path, "%s\n", speed);
	snprintf(path, sizeof(path), "%s/current_link_width", dev);
	fake_sysfs_put(path, "%u\n", width);
	snprintf(path, sizeof(path), "%s/max_link_speed", dev);
	fake_sysfs_put(path, "%s\n", max_speed);
	snprintf(path, sizeof(path), "%s/max_link_width", dev);
	fake_sysfs_put(path, "%u\n", max_width);
	if (!driver)
		return;
	snprintf(target, sizeof(target), "%s/module/%s", fs->sysfs, driver);
	fake_sysfs_mkdirs(target);
	if (version) {
		snprintf(path, sizeof(path), "%s/version", target);
		fake_sysfs_put(path, "%s\n", version);
	}
	snprintf(path, sizeof(path), "%s/bus/pci/drivers/%s", fs->sysfs, driver);
	fake_sysfs_mkdirs(path);
	snprintf(path, sizeof(path), "%s/bus/pci/drivers/%s/module", fs->sysfs, driver);
	assert_int_equal(symlink(target, path), 0);
	snprintf(target, sizeof(target), "%s/bus/pci/drivers/%s", fs->sysfs, driver);
	snprintf(path, sizeof(path), "%s/driver", dev);
	assert_int_equal(symlink(target, path), 0);
}

/*
 * The AER files of device @addr as the kernel writes them: a "NAME COUNT"
 * line per error type, then the total (every error counted as one of the
 * first type).
 */
static inline void fake_sysfs_aer(const struct fake_sysfs *fs, const char *addr,
				  unsigned long long cor, unsigned long long nonfatal,
				  unsigned long long fatal)
{
	static const char uncor[] = "SDES 0\nTLP 0\nFCP 0\nCmpltTO 0\nCmpltAbrt 0\n"
		"UnxCmplt 0\nRxOF 0\nMalfTLP 0\nECRC 0\nUnsupReq 0\nACSViol 0\n"
		"UncorrIntErr 0\nBlockedTLP 0\nAtomicOpBlocked 0\nTLPBlockedErr 0\n"
		"PoisonTLPBlocked 0\n";
	char path[512];

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/aer_dev_correctable",
		 fs->sysfs, addr);
	fake_sysfs_put(path, "RxErr %llu\nBadTLP 0\nBadDLLP 0\nRollover 0\nTimeout 0\n"
		       "NonFatalErr 0\nCorrIntErr 0\nHeaderOF 0\nTOTAL_ERR_COR %llu\n",
		       cor, cor);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/aer_dev_nonfatal",
		 fs->sysfs, addr);
	fake_sysfs_put(path, "Undefined %llu\nDLP 0\n%sTOTAL_ERR_NONFATAL %llu\n",
		       nonfatal, uncor, nonfatal);
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/aer_dev_fatal",
		 fs->sysfs, addr);
	fake_sysfs_put(path, "Undefined 0\nDLP %llu\n%sTOTAL_ERR_FATAL %llu\n",
		       fatal, uncor, fatal);
}

/* Vendor, device and class of the devices the tests place. */
#define FAKE_BRIDGE 0x10b5, 0x8747, 0x060400	/* a PCIe switch port */
#define FAKE_CARD 0x10ee, 0x9038, 0x058000	/* an XDMA card */
#define FAKE_H200 0x10de, 0x2335, 0x030200	/* a 3D controller */

#endif
