// SPDX-License-Identifier: MIT
/*
 * topology.c - the PCI path between the card and a GPU, read from sysfs
 * and from the kernel module's answer, and the class and verdict of the
 * pair (topology.h says what each means).
 *
 * The tree: /sys/bus/pci/devices/ADDR links to
 * /sys/devices/pciDDDD:BB/<bridge>/.../ADDR; the first pciDDDD:BB is the
 * host bridge, every PCI address between it and the device a bridge above
 * the device.  Below a root port, PCIe bridges come in pairs, a switch's
 * upstream port and one of its downstream ports, which is how switches are
 * counted without reading config space.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topology/topology.h"

#define TOPO_SYSFS "/sys"
#define TOPO_CPUINFO "/proc/cpuinfo"
#define TOPO_VENDOR_NVIDIA 0x10de

static const char *topology_sysfs(const struct topo_source *src)
{
	return src && src->sysfs ? src->sysfs : TOPO_SYSFS;
}

/* Keep the first problem only: it is the one worth reading. */
static void topology_warn(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void topology_warn(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (buf[0])
		return;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

/* --- names and addresses ------------------------------------------------- */

const char *topology_class_name(enum topo_class c)
{
	static const char *const names[] = {
		[TOPO_CLASS_UNKNOWN] = "unknown", [TOPO_CLASS_SIM] = "SIM",
		[TOPO_CLASS_PIX] = "PIX", [TOPO_CLASS_PXB] = "PXB",
		[TOPO_CLASS_PHB] = "PHB", [TOPO_CLASS_NODE] = "NODE",
		[TOPO_CLASS_SYS] = "SYS",
	};

	return (unsigned)c < sizeof(names) / sizeof(names[0]) ? names[c] : "unknown";
}

const char *topology_verdict_name(enum topo_verdict v)
{
	static const char *const names[] = {
		[TOPO_VERDICT_UNKNOWN] = "unknown",
		[TOPO_VERDICT_SIMULATED] = "simulated",
		[TOPO_VERDICT_NO_GPU] = "no-gpu",
		[TOPO_VERDICT_DIRECT] = "direct",
		[TOPO_VERDICT_HOST_BRIDGE] = "host-bridge",
		[TOPO_VERDICT_IOMMU] = "iommu",
		[TOPO_VERDICT_ACS_REDIRECT] = "acs-redirect",
		[TOPO_VERDICT_VM] = "vm",
		[TOPO_VERDICT_UNSUPPORTED] = "unsupported",
	};

	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "unknown";
}

const char *topology_iommu_name(enum topo_iommu i)
{
	static const char *const names[] = {
		[TOPO_IOMMU_NONE] = "none",
		[TOPO_IOMMU_PASSTHROUGH] = "passthrough",
		[TOPO_IOMMU_TRANSLATED] = "translated",
		[TOPO_IOMMU_BLOCKED] = "blocked",
		[TOPO_IOMMU_UNMANAGED] = "unmanaged",
		[TOPO_IOMMU_UNKNOWN] = "unknown",
	};

	return (unsigned)i < sizeof(names) / sizeof(names[0]) ? names[i] : "unknown";
}

/* 1 to @max hex digits at *@s, advancing it; -EINVAL otherwise. */
static int topology_hex(const char **s, unsigned max, uint32_t *ret)
{
	uint32_t v = 0;
	unsigned n;

	for (n = 0; n < max; n++) {
		char c = (*s)[n];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		v = v << 4 | d;
	}
	if (!n)
		return -EINVAL;
	*s += n;
	*ret = v;
	return 0;
}

int topology_addr_parse(const char *s, uint32_t *ret_domain, uint8_t *ret_bus,
			uint8_t *ret_devfn)
{
	uint32_t domain, bus, dev, fn;

	if (!s || topology_hex(&s, 8, &domain) || *s++ != ':' ||
	    topology_hex(&s, 2, &bus) || *s++ != ':' ||
	    topology_hex(&s, 2, &dev) || *s++ != '.' ||
	    topology_hex(&s, 1, &fn) || *s)
		return -EINVAL;
	if (dev > 0x1f || fn > 7)
		return -EINVAL;
	*ret_domain = domain;
	*ret_bus = (uint8_t)bus;
	*ret_devfn = (uint8_t)(dev << 3 | fn);
	return 0;
}

void topology_addr_format(uint32_t domain, uint8_t bus, uint8_t devfn,
			  char out[TOPO_ADDR_LEN])
{
	snprintf(out, TOPO_ADDR_LEN, "%04x:%02x:%02x.%u", domain, bus,
		 (unsigned)(devfn >> 3), (unsigned)(devfn & 7u));
}

/* @s in canonical form into @out; -EINVAL when it is no PCI address. */
static int topology_canon(const char *s, char out[TOPO_ADDR_LEN])
{
	uint32_t domain;
	uint8_t bus, devfn;

	if (topology_addr_parse(s, &domain, &bus, &devfn))
		return -EINVAL;
	topology_addr_format(domain, bus, devfn, out);
	return 0;
}

/* "pciDDDD:BB": a host bridge's directory in /sys/devices. */
static bool topology_is_host_bridge(const char *s)
{
	uint32_t v;

	if (strncmp(s, "pci", 3) || strlen(s) >= TOPO_ADDR_LEN)
		return false;
	s += 3;
	return !topology_hex(&s, 8, &v) && *s++ == ':' &&
	       !topology_hex(&s, 2, &v) && !*s;
}

/* --- reading sysfs ---------------------------------------------------------- */

/* The first line of @path, without its newline. */
static int topology_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int r = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		r = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (r)
		return r;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * Attribute @attr of device @addr as a number (base 16 or 10, the whole
 * line); on failure a warning naming the file, and -errno.
 */
static int topology_attr_num(const struct topo_source *src, const char *addr,
			     const char *attr, int base, long *ret,
			     char *warn, size_t wlen)
{
	char path[PATH_MAX], line[64], *end;
	long v;
	int r;

	if (snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s",
		     topology_sysfs(src), addr, attr) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	r = topology_read_line(path, line, sizeof(line));
	if (r) {
		topology_warn(warn, wlen, "%s/%s: %s", addr, attr,
			      r == -ENODATA ? "empty" : strerror(-r));
		return r;
	}
	errno = 0;
	v = strtol(line, &end, base);
	if (errno || end == line || *end) {
		topology_warn(warn, wlen, "%s/%s: '%.32s' is not a number",
			      addr, attr, line);
		return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* Host bridge and bridges of @e from its resolved sysfs path @real. */
static void topology_read_path(struct topo_end *e, const char *real,
			       char *warn, size_t wlen)
{
	char copy[PATH_MAX], last[TOPO_ADDR_LEN] = "", canon[TOPO_ADDR_LEN];
	char *tok, *save = NULL;
	bool in_tree = false;
	unsigned n = 0;

	snprintf(copy, sizeof(copy), "%s", real);
	for (tok = strtok_r(copy, "/", &save); tok;
	     tok = strtok_r(NULL, "/", &save)) {
		if (!in_tree) {
			if (topology_is_host_bridge(tok)) {
				snprintf(e->host_bridge, sizeof(e->host_bridge),
					 "%s", tok);
				in_tree = true;
			}
			continue;
		}
		/* Anything else (a VMD domain's own host bridge) is skipped. */
		if (topology_canon(tok, canon))
			continue;
		if (last[0]) {
			if (n == TOPO_MAX_BRIDGES) {
				topology_warn(warn, wlen, "%s: more than %d bridges above it",
					      e->addr, TOPO_MAX_BRIDGES);
				e->host_bridge[0] = '\0';
				return;
			}
			memcpy(e->bridges[n++], last, sizeof(last));
		}
		memcpy(last, canon, sizeof(last));
	}
	if (!in_tree) {
		topology_warn(warn, wlen, "%s: its sysfs path is below no PCI host bridge",
			      e->addr);
		return;
	}
	if (strcmp(last, e->addr)) {
		topology_warn(warn, wlen, "%s: its sysfs path ends in '%s'",
			      e->addr, last);
		e->host_bridge[0] = '\0';
		return;
	}
	e->n_bridges = n;
}

static void topology_read_iommu(const struct topo_source *src,
				struct topo_end *e, char *warn, size_t wlen)
{
	char path[PATH_MAX], target[PATH_MAX], type[32], *base, *end;
	ssize_t n;
	long group;
	int r;

	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/iommu_group",
		 topology_sysfs(src), e->addr);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		if (errno != ENOENT)
			topology_warn(warn, wlen, "%s/iommu_group: %s", e->addr,
				      strerror(errno));
		return;
	}
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	errno = 0;
	group = strtol(base, &end, 10);
	if (errno || end == base || *end || group < 0 || group > INT_MAX) {
		e->iommu = TOPO_IOMMU_UNKNOWN;
		topology_warn(warn, wlen, "%s/iommu_group: links to '%.64s', not a group",
			      e->addr, base);
		return;
	}
	e->iommu_group = (int)group;
	snprintf(path, sizeof(path), "%s/kernel/iommu_groups/%ld/type",
		 topology_sysfs(src), group);
	r = topology_read_line(path, type, sizeof(type));
	if (r == 0 && !strcmp(type, "identity")) {
		e->iommu = TOPO_IOMMU_PASSTHROUGH;
	} else if (r == 0 && (!strcmp(type, "DMA") || !strcmp(type, "DMA-FQ"))) {
		e->iommu = TOPO_IOMMU_TRANSLATED;
	} else if (r == 0 && !strcmp(type, "blocked")) {
		e->iommu = TOPO_IOMMU_BLOCKED;
	} else if (r == 0 && !strcmp(type, "unmanaged")) {
		e->iommu = TOPO_IOMMU_UNMANAGED;
	} else {
		e->iommu = TOPO_IOMMU_UNKNOWN;
		if (r)
			topology_warn(warn, wlen, "iommu_groups/%ld/type: %s", group,
				      r == -ENODATA ? "empty" : strerror(-r));
		else
			topology_warn(warn, wlen, "iommu_groups/%ld/type: unknown type '%.32s'",
				      group, type);
	}
}

/* One end: found or not, its path, ids, NUMA node and IOMMU. */
static void topology_read_end(const struct topo_source *src, const char *addr,
			      struct topo_end *e, char *warn, size_t wlen)
{
	char link[PATH_MAX], real[PATH_MAX];
	long v;

	memset(e, 0, sizeof(*e));
	snprintf(e->addr, sizeof(e->addr), "%s", addr);
	e->numa_node = -1;
	e->iommu_group = -1;
	snprintf(link, sizeof(link), "%s/bus/pci/devices/%s", topology_sysfs(src),
		 addr);
	if (!realpath(link, real)) {
		if (errno != ENOENT)
			topology_warn(warn, wlen, "%s: %s", link, strerror(errno));
		return;
	}
	e->found = true;
	topology_read_path(e, real, warn, wlen);
	if (!topology_attr_num(src, addr, "vendor", 16, &v, warn, wlen))
		e->vendor = (uint16_t)v;
	if (!topology_attr_num(src, addr, "device", 16, &v, warn, wlen))
		e->device = (uint16_t)v;
	/* -1 is what sysfs says when the platform gives no node. */
	if (!topology_attr_num(src, addr, "numa_node", 10, &v, warn, wlen))
		e->numa_node = v >= 0 && v < 4096 ? (int)v : -1;
	topology_read_iommu(src, e, warn, wlen);
}

int topology_end(const struct topo_source *src, const char *addr,
		 struct topo_end *ret_end, char *warn, size_t wlen)
{
	char canon[TOPO_ADDR_LEN];
	struct topo_end e;

	if (topology_canon(addr, canon))
		return -EINVAL;
	topology_read_end(src, canon, &e, warn, wlen);
	*ret_end = e;
	return 0;
}

/* --- inventory ------------------------------------------------------------------ */

unsigned topology_link_gen(const char *speed)
{
	static const struct { const char *gts; unsigned gen; } gens[] = {
		{ "2.5 ", 1 }, { "5.0 ", 2 }, { "5 ", 2 }, { "8.0 ", 3 }, { "8 ", 3 },
		{ "16.0 ", 4 }, { "16 ", 4 }, { "32.0 ", 5 }, { "32 ", 5 },
		{ "64.0 ", 6 }, { "64 ", 6 },
	};

	for (size_t i = 0; i < sizeof(gens) / sizeof(gens[0]); i++)
		if (strncmp(speed, gens[i].gts, strlen(gens[i].gts)) == 0)
			return gens[i].gen;
	return 0;
}

/* A sysfs attribute of @addr as text: "" (and a warning) when unreadable. */
static void topology_attr_text(const struct topo_source *src, const char *addr,
			       const char *attr, char *buf, size_t len,
			       char *warn, size_t wlen)
{
	char path[PATH_MAX];
	int r;

	buf[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s",
		     topology_sysfs(src), addr, attr) >= (int)sizeof(path))
		return;
	r = topology_read_line(path, buf, len);
	if (r) {
		buf[0] = '\0';
		topology_warn(warn, wlen, "%s/%s: %s", addr, attr, strerror(-r));
	}
}

/* The last part of the link @attr of @addr ("driver" -> "xdma"), or "". */
static void topology_link_name(const struct topo_source *src, const char *addr,
			       const char *attr, char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s",
		 topology_sysfs(src), addr, attr);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	snprintf(buf, len, "%.*s", (int)len - 1,
		 strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
}

/*
 * The count of line @key ("TOTAL_ERR_COR") of AER file @attr of @addr,
 * each of whose lines must be "NAME COUNT": 0, -ENOENT when there is no
 * such file (no warning), or -EINVAL (with a warning) when it is
 * malformed: a line of another form, no @key line or two of them.
 */
static int topology_aer_total(const struct topo_source *src, const char *addr,
			      const char *attr, const char *key, uint64_t *ret,
			      char *warn, size_t wlen)
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0, klen = strlen(key);
	unsigned found = 0;
	uint64_t total = 0;
	int r = 0;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/bus/pci/devices/%s/%s",
		     topology_sysfs(src), addr, attr) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		if (r != -ENOENT)
			topology_warn(warn, wlen, "%s/%s: %s", addr, attr, strerror(-r));
		return r;
	}
	while (r == 0 && getline(&line, &cap, f) > 0) {
		char *sp = strchr(line, ' '), *end;
		unsigned long long v;

		line[strcspn(line, "\n")] = '\0';
		if (!sp || sp == line || !sp[1] || sp[1] < '0' || sp[1] > '9') {
			r = -EINVAL;
			break;
		}
		errno = 0;
		v = strtoull(sp + 1, &end, 10);
		if (errno || *end) {
			r = -EINVAL;
			break;
		}
		if ((size_t)(sp - line) == klen && !strncmp(line, key, klen)) {
			total = v;
			found++;
		}
	}
	if (r == 0 && ferror(f))
		r = -EIO;
	free(line);
	fclose(f);
	if (r == 0 && found != 1)
		r = -EINVAL;
	if (r == -EIO)
		topology_warn(warn, wlen, "%s/%s: %s", addr, attr, strerror(EIO));
	else if (r)
		topology_warn(warn, wlen, "%s/%s: not \"NAME COUNT\" lines with one %s",
			      addr, attr, key);
	if (r == 0)
		*ret = total;
	return r;
}

/* The three AER totals, all or none. */
static void topology_read_aer(const struct topo_source *src, struct topo_inventory *inv,
			      char *warn, size_t wlen)
{
	uint64_t cor, nonfatal, fatal;

	if (topology_aer_total(src, inv->addr, "aer_dev_correctable", "TOTAL_ERR_COR",
			       &cor, warn, wlen) ||
	    topology_aer_total(src, inv->addr, "aer_dev_nonfatal", "TOTAL_ERR_NONFATAL",
			       &nonfatal, warn, wlen) ||
	    topology_aer_total(src, inv->addr, "aer_dev_fatal", "TOTAL_ERR_FATAL",
			       &fatal, warn, wlen))
		return;
	inv->aer = true;
	inv->aer_correctable = cor;
	inv->aer_nonfatal = nonfatal;
	inv->aer_fatal = fatal;
}

int topology_inventory(const struct topo_source *src, const char *addr,
		       struct topo_inventory *ret_inv, char *warn, size_t wlen)
{
	struct topo_inventory inv = { .numa_node = -1 };
	char line[64], module[64], path[PATH_MAX];
	long v;

	if (topology_canon(addr, inv.addr))
		return -EINVAL;
	if (topology_attr_num(src, inv.addr, "vendor", 16, &v, warn, wlen) == 0)
		inv.vendor = (uint16_t)v;
	if (topology_attr_num(src, inv.addr, "device", 16, &v, warn, wlen) == 0)
		inv.device = (uint16_t)v;
	if (topology_attr_num(src, inv.addr, "subsystem_vendor", 16, &v, warn, wlen) == 0)
		inv.subsystem_vendor = (uint16_t)v;
	if (topology_attr_num(src, inv.addr, "subsystem_device", 16, &v, warn, wlen) == 0)
		inv.subsystem_device = (uint16_t)v;
	if (topology_attr_num(src, inv.addr, "numa_node", 10, &v, warn, wlen) == 0)
		inv.numa_node = v < 0 ? -1 : (int)v;
	topology_attr_text(src, inv.addr, "current_link_speed", line, sizeof(line), warn, wlen);
	inv.link_gen = topology_link_gen(line);
	topology_attr_text(src, inv.addr, "max_link_speed", line, sizeof(line), warn, wlen);
	inv.max_link_gen = topology_link_gen(line);
	if (topology_attr_num(src, inv.addr, "current_link_width", 10, &v, warn, wlen) == 0)
		inv.link_width = (unsigned)v;
	if (topology_attr_num(src, inv.addr, "max_link_width", 10, &v, warn, wlen) == 0)
		inv.max_link_width = (unsigned)v;
	topology_link_name(src, inv.addr, "driver", inv.driver, sizeof(inv.driver));
	/* The module's version, where it declares one (MODULE_VERSION). */
	topology_link_name(src, inv.addr, "driver/module", module, sizeof(module));
	if (module[0] &&
	    snprintf(path, sizeof(path), "%s/module/%s/version", topology_sysfs(src),
		     module) < (int)sizeof(path) &&
	    topology_read_line(path, line, sizeof(line)) == 0)
		snprintf(inv.module_version, sizeof(inv.module_version), "%.*s",
			 (int)sizeof(inv.module_version) - 1, line);
	topology_read_aer(src, &inv, warn, wlen);
	*ret_inv = inv;
	return 0;
}

/* --- the host: virtual machine or not ---------------------------------------- */

static bool topology_cpuinfo_hypervisor(const char *path, char *warn, size_t wlen)
{
	char *line = NULL, *save = NULL, *tok;
	bool found = false, seen = false;
	size_t cap = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		topology_warn(warn, wlen, "%s: %s", path, strerror(errno));
		return false;
	}
	while (!seen && getline(&line, &cap, f) > 0) {
		char *colon;

		if (strncmp(line, "flags", 5) || !(colon = strchr(line, ':')))
			continue;
		seen = true;
		for (tok = strtok_r(colon + 1, " \t\n", &save); tok;
		     tok = strtok_r(NULL, " \t\n", &save))
			if (!strcmp(tok, "hypervisor"))
				found = true;
	}
	free(line);
	fclose(f);
	return found;
}

/* DMI names of hypervisors: the vendor or product string contains @token. */
static const struct {
	bool product;
	const char *token;
	const char *name;
} topology_dmi_vms[] = {
	{ false, "QEMU", "QEMU" },
	{ true, "KVM", "KVM" },
	{ false, "VMware", "VMware" },
	{ true, "Virtual Machine", "Hyper-V" },
	{ false, "Xen", "Xen" },
	{ true, "HVM domU", "Xen" },
	{ false, "innotek", "VirtualBox" },
	{ true, "VirtualBox", "VirtualBox" },
	{ false, "Parallels", "Parallels" },
	{ false, "Bochs", "Bochs" },
	{ true, "Google Compute Engine", "Google Compute Engine" },
	{ false, "OpenStack", "OpenStack" },
	{ false, "Amazon EC2", "Amazon EC2" },
};

void topology_host(const struct topo_source *src, struct topo_host *ret_host)
{
	char path[PATH_MAX], vendor[96] = "", product[96] = "";
	struct topo_host h;
	const char *hit = NULL;

	memset(&h, 0, sizeof(h));
	snprintf(path, sizeof(path), "%s/class/dmi/id/sys_vendor",
		 topology_sysfs(src));
	topology_read_line(path, vendor, sizeof(vendor));
	snprintf(path, sizeof(path), "%s/class/dmi/id/product_name",
		 topology_sysfs(src));
	topology_read_line(path, product, sizeof(product));
	for (size_t i = 0; i < sizeof(topology_dmi_vms) / sizeof(topology_dmi_vms[0]); i++) {
		const char *field = topology_dmi_vms[i].product ? product : vendor;

		if (!strstr(field, topology_dmi_vms[i].token))
			continue;
		/* EC2's bare-metal instances share the vendor string. */
		if (!strcmp(topology_dmi_vms[i].token, "Amazon EC2") &&
		    strstr(product, ".metal"))
			continue;
		hit = topology_dmi_vms[i].name;
		break;
	}
	if (hit) {
		h.vm = true;
		snprintf(h.vm_why, sizeof(h.vm_why), "%s, DMI '%.32s %.32s'", hit,
			 vendor, product);
	} else if (topology_cpuinfo_hypervisor(src && src->cpuinfo ? src->cpuinfo :
					       TOPO_CPUINFO, h.warning,
					       sizeof(h.warning))) {
		h.vm = true;
		snprintf(h.vm_why, sizeof(h.vm_why), "hypervisor flag in cpuinfo");
	}
	*ret_host = h;
}

/* Vendors whose PCI bridges exist only in emulation. */
static const struct {
	uint16_t vendor;
	const char *name;
} topology_virtual_vendors[] = {
	{ 0x1b36, "QEMU" },
	{ 0x15ad, "VMware" },
	{ 0x1414, "Hyper-V" },
	{ 0x5853, "Xen" },
};

/* The first emulated bridge above @e, described in @why. */
static bool topology_emulated_bridge(const struct topo_source *src,
				     const struct topo_end *e, char *why,
				     size_t len)
{
	char ignore[8] = "";

	for (unsigned i = 0; i < e->n_bridges; i++) {
		long v;

		ignore[0] = '\0';
		if (topology_attr_num(src, e->bridges[i], "vendor", 16, &v,
				      ignore, sizeof(ignore)))
			continue;
		for (size_t k = 0; k < sizeof(topology_virtual_vendors) /
				       sizeof(topology_virtual_vendors[0]); k++) {
			if (v == topology_virtual_vendors[k].vendor) {
				snprintf(why, len, "%s bridge %s",
					 topology_virtual_vendors[k].name,
					 e->bridges[i]);
				return true;
			}
		}
	}
	return false;
}

/* --- class ----------------------------------------------------------------------- */

/*
 * Switches a path crosses, from the bridges below the common prefix of
 * length @k on each side and the common bridge itself.  Index 0 is the
 * root port; below it odd indices are upstream ports and each even one is
 * a downstream port of the switch just above it.
 */
static unsigned topology_switches(const struct topo_end *a,
				  const struct topo_end *b, unsigned k)
{
	const struct topo_end *side[2] = { a, b };
	unsigned count = 0, common = 0;

	if (k >= 2) {
		common = (k - 1) % 2 ? k - 1 : k - 2;
		count = 1;
	}
	for (unsigned s = 0; s < 2; s++) {
		unsigned prev = 0;

		for (unsigned i = k; i < side[s]->n_bridges; i++) {
			unsigned id = i % 2 ? i : i - 1;

			if (id == common || id == prev)
				continue;
			prev = id;
			count++;
		}
	}
	return count;
}

/* The class of the pair and, in @path, the path in words. */
static enum topo_class topology_classify(struct topo_pair *p, char *path,
					 size_t len)
{
	const struct topo_end *a = &p->card, *b = &p->gpu;
	unsigned k = 0, n;

	if (!a->host_bridge[0] || !b->host_bridge[0]) {
		snprintf(path, len, "PCI path unknown");
		return TOPO_CLASS_UNKNOWN;
	}
	if (strcmp(a->host_bridge, b->host_bridge)) {
		if (a->numa_node >= 0 && b->numa_node >= 0 &&
		    a->numa_node != b->numa_node) {
			snprintf(path, len, "across NUMA nodes %d and %d",
				 a->numa_node, b->numa_node);
			return TOPO_CLASS_SYS;
		}
		if (a->numa_node == b->numa_node && a->numa_node >= 0)
			snprintf(path, len, "host bridges %s and %s of NUMA node %d",
				 a->host_bridge, b->host_bridge, a->numa_node);
		else
			snprintf(path, len, "host bridges %s and %s, NUMA node unknown",
				 a->host_bridge, b->host_bridge);
		return TOPO_CLASS_NODE;
	}
	while (k < a->n_bridges && k < b->n_bridges &&
	       !strcmp(a->bridges[k], b->bridges[k]))
		k++;
	if (!k) {
		snprintf(path, len, "through host bridge %s", a->host_bridge);
		return TOPO_CLASS_PHB;
	}
	memcpy(p->common, a->bridges[k - 1], sizeof(p->common));
	n = topology_switches(a, b, k);
	if (n > 1) {
		snprintf(path, len, "%u switches below %s", n, p->common);
		return TOPO_CLASS_PXB;
	}
	if (k == 1)
		snprintf(path, len, "below root port %s", p->common);
	else
		snprintf(path, len, "same switch %s", p->common);
	return TOPO_CLASS_PIX;
}

/* --- the kernel's answer ------------------------------------------------------------- */

/* 0 and a checked answer, else -errno and in @why what went wrong. */
static int topology_ask_kernel(const struct topo_source *src, const char *gpu,
			       struct fpgad_dma_p2p_path *p, char *why, size_t len)
{
	int r;

	memset(p, 0, sizeof(*p));
	if (!src || !src->path) {
		snprintf(why, len, "the card's driver reports no PCI path");
		return -EOPNOTSUPP;
	}
	if (topology_addr_parse(gpu, &p->peer_domain, &p->peer_bus, &p->peer_devfn))
		return -EINVAL;
	r = src->path(src->user, p);
	switch (r) {
	case 0:
		break;
	case -ENOTTY:
		snprintf(why, len, "fpgad_dma.ko predates the P2P path ioctl: update it");
		return r;
	case -ENODEV:
		snprintf(why, len, "the kernel knows no PCI device %s", gpu);
		return r;
	case -E2BIG:
		snprintf(why, len, "the path has %u bridges, more than the kernel reports (%d)",
			 p->n_hops, FPGAD_P2P_MAX_HOPS);
		return r;
	default:
		snprintf(why, len, "FPGAD_DMA_IOC_P2P_PATH: %s", strerror(r < 0 ? -r : EIO));
		return r < 0 ? r : -EIO;
	}
	if (p->n_hops > FPGAD_P2P_MAX_HOPS) {
		snprintf(why, len, "the kernel's answer is malformed (%u hops)", p->n_hops);
		return -EBADMSG;
	}
	for (unsigned i = 0; i < p->n_hops; i++) {
		if (p->hops[i].type < FPGAD_P2P_HOP_ROOT_PORT ||
		    p->hops[i].type > FPGAD_P2P_HOP_HOST_BRIDGE) {
			snprintf(why, len, "the kernel's answer is malformed (hop %u of type %u)",
				 i, p->hops[i].type);
			return -EBADMSG;
		}
	}
	return 0;
}

static void topology_hop_addr(const struct fpgad_dma_p2p_hop *h,
			      char out[TOPO_ADDR_LEN])
{
	topology_addr_format(h->domain, h->bus, h->devfn, out);
}

/* The verdict from a kernel answer, with @path (the path in words). */
static void topology_judge(struct topo_pair *p, const struct fpgad_dma_p2p_path *k,
			   const char *path, const char *vm_why)
{
	bool no_walk = k->verdict & FPGAD_P2P_NO_P2PDMA;
	/*
	 * A kernel without CONFIG_PCI_P2PDMA answers nothing about support:
	 * judge by the path, except across host bridges, where peer-to-peer
	 * is only as good as a whitelist nobody could consult.
	 */
	bool supported = no_walk ? !(k->verdict & FPGAD_P2P_OTHER_DOMAIN) :
			 (k->verdict & FPGAD_P2P_SUPPORTED) && k->distance >= 0;
	bool translated = p->card.iommu == TOPO_IOMMU_TRANSLATED;
	char common[TOPO_ADDR_LEN] = "";

	p->kernel = true;
	p->distance = k->distance;
	p->kernel_verdict = k->verdict;
	for (unsigned i = 0; i < k->n_hops; i++) {
		if ((k->hops[i].flags & FPGAD_P2P_HOP_REDIRECT) && !p->acs_bridge[0])
			topology_hop_addr(&k->hops[i], p->acs_bridge);
		if (k->hops[i].flags & FPGAD_P2P_HOP_COMMON)
			topology_hop_addr(&k->hops[i], common);
	}
	if (common[0] && p->common[0] && strcmp(common, p->common))
		topology_warn(p->warning, sizeof(p->warning),
			      "the kernel's common bridge is %s, sysfs says %s",
			      common, p->common);
	if ((k->verdict & FPGAD_P2P_ACS_REDIRECT) && !p->acs_bridge[0])
		snprintf(p->acs_bridge, sizeof(p->acs_bridge), "?");

	if (!supported) {
		p->verdict = TOPO_VERDICT_UNSUPPORTED;
		if (no_walk)
			snprintf(p->reason, sizeof(p->reason),
				 "%s, under different host bridges (the kernel has no CONFIG_PCI_P2PDMA to say more)",
				 path);
		else if (p->acs_bridge[0] && !(k->verdict & FPGAD_P2P_HOST_BRIDGE_OK))
			snprintf(p->reason, sizeof(p->reason),
				 "%s, ACS redirect on %s to a host bridge the kernel does not whitelist",
				 path, p->acs_bridge);
		else if ((k->verdict & FPGAD_P2P_VIA_HOST_BRIDGE) &&
			 !(k->verdict & FPGAD_P2P_HOST_BRIDGE_OK))
			snprintf(p->reason, sizeof(p->reason),
				 "%s, through a host bridge the kernel does not whitelist",
				 path);
		else
			snprintf(p->reason, sizeof(p->reason),
				 "%s, the kernel would not map peer-to-peer (distance %d)",
				 path, (int)k->distance);
	} else if (p->vm) {
		p->verdict = TOPO_VERDICT_VM;
		snprintf(p->reason, sizeof(p->reason),
			 "virtual machine (%s): the PCI path is emulated, %s",
			 vm_why, path);
	} else if (p->acs_bridge[0]) {
		p->verdict = TOPO_VERDICT_ACS_REDIRECT;
		snprintf(p->reason, sizeof(p->reason), "ACS redirect on %s%s",
			 p->acs_bridge, translated ? ", IOMMU translating" : "");
	} else if (k->verdict & FPGAD_P2P_VIA_HOST_BRIDGE) {
		p->verdict = translated ? TOPO_VERDICT_IOMMU : TOPO_VERDICT_HOST_BRIDGE;
		snprintf(p->reason, sizeof(p->reason), "%s, %s", path,
			 translated ? "IOMMU translating" : "through the root complex");
	} else {
		p->verdict = TOPO_VERDICT_DIRECT;
		snprintf(p->reason, sizeof(p->reason), "%s, ACS off", path);
	}
}

int topology_pair(const struct topo_source *src, const struct topo_host *host,
		  const char *card, const char *gpu, struct topo_pair *ret_pair)
{
	char card_addr[TOPO_ADDR_LEN], gpu_addr[TOPO_ADDR_LEN];
	char path[96], why[128], vm_why[96] = "";
	struct fpgad_dma_p2p_path k;
	struct topo_pair *p;
	bool sim;

	sim = card && !strcmp(card, TOPO_SIM);
	if (!card || !gpu || (!sim && topology_canon(card, card_addr)) ||
	    topology_canon(gpu, gpu_addr))
		return -EINVAL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;

	topology_read_end(src, gpu_addr, &p->gpu, p->warning, sizeof(p->warning));
	if (sim) {
		p->card.numa_node = -1;
		p->card.iommu_group = -1;
		p->cls = TOPO_CLASS_SIM;
		p->verdict = p->gpu.found ? TOPO_VERDICT_SIMULATED : TOPO_VERDICT_NO_GPU;
		if (p->gpu.found)
			snprintf(p->reason, sizeof(p->reason),
				 "simulated card: no PCI path");
		else
			snprintf(p->reason, sizeof(p->reason),
				 "simulated card; GPU %s is not on this host's PCI bus",
				 gpu_addr);
		goto out;
	}
	topology_read_end(src, card_addr, &p->card, p->warning, sizeof(p->warning));
	if (!p->card.found) {
		p->verdict = TOPO_VERDICT_UNKNOWN;
		snprintf(p->reason, sizeof(p->reason),
			 "the card %s is not on this host's PCI bus", card_addr);
		goto out;
	}
	if (!p->gpu.found) {
		p->verdict = TOPO_VERDICT_NO_GPU;
		snprintf(p->reason, sizeof(p->reason),
			 "GPU %s is not on this host's PCI bus", gpu_addr);
		goto out;
	}
	p->cls = topology_classify(p, path, sizeof(path));
	if (host && host->vm) {
		p->vm = true;
		snprintf(vm_why, sizeof(vm_why), "%s", host->vm_why);
	} else if (topology_emulated_bridge(src, &p->card, vm_why, sizeof(vm_why)) ||
		   topology_emulated_bridge(src, &p->gpu, vm_why, sizeof(vm_why))) {
		p->vm = true;
	}
	if (topology_ask_kernel(src, gpu_addr, &k, why, sizeof(why)) == 0) {
		topology_judge(p, &k, path, vm_why);
	} else if (p->vm) {
		p->verdict = TOPO_VERDICT_VM;
		snprintf(p->reason, sizeof(p->reason),
			 "virtual machine (%s): the PCI path is emulated, %s",
			 vm_why, path);
	} else {
		p->verdict = TOPO_VERDICT_UNKNOWN;
		snprintf(p->reason, sizeof(p->reason), "%s, ACS unknown: %s", path, why);
	}
out:
	*ret_pair = *p;
	free(p);
	return 0;
}

/* --- the GPUs ----------------------------------------------------------------------------- */

static int topology_addr_cmp(const void *x, const void *y)
{
	uint32_t da, db;
	uint8_t ba, bb, fa, fb;

	/* Both parse: only canonical addresses are stored. */
	topology_addr_parse(x, &da, &ba, &fa);
	topology_addr_parse(y, &db, &bb, &fb);
	if (da != db)
		return da < db ? -1 : 1;
	if (ba != bb)
		return ba < bb ? -1 : 1;
	return fa < fb ? -1 : fa > fb;
}

int topology_gpus(const struct topo_source *src, char (*ret_addrs)[TOPO_ADDR_LEN],
		  unsigned max, unsigned *ret_n)
{
	char path[PATH_MAX], canon[TOPO_ADDR_LEN], ignore[8];
	struct dirent *de;
	unsigned n = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/bus/pci/devices", topology_sysfs(src));
	dir = opendir(path);
	if (!dir)
		return -errno;
	while ((de = readdir(dir)) && n < max) {
		long vendor, cls;

		if (topology_canon(de->d_name, canon))
			continue;
		ignore[0] = '\0';
		if (topology_attr_num(src, de->d_name, "vendor", 16, &vendor,
				      ignore, sizeof(ignore)) ||
		    topology_attr_num(src, de->d_name, "class", 16, &cls,
				      ignore, sizeof(ignore)))
			continue;
		/* Display controllers: VGA (0x0300) and 3D (0x0302). */
		if (vendor != TOPO_VENDOR_NVIDIA ||
		    ((cls >> 8) != 0x0300 && (cls >> 8) != 0x0302))
			continue;
		memcpy(ret_addrs[n++], canon, sizeof(canon));
	}
	closedir(dir);
	qsort(ret_addrs, n, sizeof(ret_addrs[0]), topology_addr_cmp);
	*ret_n = n;
	return 0;
}
