/* SPDX-License-Identifier: MIT */
/*
 * kshim_test.h - what the engine-model test uses to play the rest of the
 * system around fpgad_dma.ko: plug in a modelled XDMA card, open its
 * character device and call the file operations, read sysfs attributes,
 * set module parameters, export dma-bufs and GPU memory and take them
 * away, and look at what the DMA and interrupt paths saw.
 */
#ifndef KSHIM_TEST_H
#define KSHIM_TEST_H

#include "kshim.h"
#include "xdma_model.h"

struct kshim_pci_config {
	struct xm_config xm;
	u16 vendor, device;
	int dma_bar;			/* BAR of the XDMA registers; a 4 KiB
					 * user BAR sits at 0 when this is not 0 */
	unsigned int irq_modes;		/* PCI_IRQ_* the platform gives */
	unsigned int msix_vectors;
	u8 intx_pin;			/* 1 = INTA .. 4 = INTD, 0 = none */
	int link_gen, link_width;	/* 0 = not PCI Express */
	bool no_reset;			/* function reset not available */
};

/* Fills @cfg with a Gen2 x4 card, 1 H2C + 1 C2H, MSI-X, 1 MiB memory. */
void kshim_pci_defaults(struct kshim_pci_config *cfg);

/* Plug a card in; the registered driver probes it.  NULL: out of memory. */
struct kshim_pci *kshim_pci_add(const struct kshim_pci_config *cfg);
/* 0 when the driver's probe accepted it, else probe's error. */
int kshim_pci_probe_result(const struct kshim_pci *ks);
/* Unplug: the driver's remove() runs if it is bound. */
void kshim_pci_remove(struct kshim_pci *ks);
struct xm *kshim_pci_model(struct kshim_pci *ks);
struct pci_dev *kshim_pci_dev(struct kshim_pci *ks);
bool kshim_pci_master(const struct kshim_pci *ks);
unsigned int kshim_pci_resets(const struct kshim_pci *ks);
u16 kshim_pci_command(const struct kshim_pci *ks);

/*
 * Bridges and endpoints for the path tests, on @parent's secondary bus
 * (each function gets a bus number of its own for what is below it), or
 * on bus 0 of @domain when @parent is NULL.  The card sits at 0000:00:01.0
 * until kshim_pci_set_parent() moves it behind a bridge.
 */
struct pci_dev *kshim_bridge_add(struct pci_dev *parent, int domain,
				 unsigned int devfn, int pcie_type,
				 u16 acs_cap, u16 acs_ctrl);
struct pci_dev *kshim_endpoint_add(struct pci_dev *parent, int domain,
				   unsigned int devfn);
void kshim_pci_set_parent(struct kshim_pci *ks, struct pci_dev *parent);
void kshim_set_acs(struct pci_dev *dev, u16 acs_cap, u16 acs_ctrl);
/* Drops every bridge and endpoint; the card goes back to bus 0. */
void kshim_topology_clear(void);
/* What pci_p2pdma_distance_many() answers (the Debian kernel: -1). */
void kshim_set_p2pdma_distance(int distance);

/* The character device by name ("fpgad0"); the file operations. */
struct kshim_file;
int kshim_open(const char *name, struct kshim_file **ret_file);
long kshim_ioctl(struct kshim_file *f, unsigned int cmd, void *arg);
ssize_t kshim_read(struct kshim_file *f, void *buf, size_t n, bool nonblock);
__poll_t kshim_poll(struct kshim_file *f);
void kshim_close(struct kshim_file *f);
bool kshim_cdev_exists(const char *name);

/* What the lock checker (klockdep.c) reported; forget: a fresh graph. */
u64 kshim_lock_violations(void);
const char *kshim_lock_last_violation(void);
void kshim_lock_forget(void);

/* Whether the caller has CAP_SYS_ADMIN and CAP_IPC_LOCK (default: yes). */
void kshim_set_admin(bool admin);
/* The caller's RLIMIT_MEMLOCK (default: unlimited) and its locked_vm. */
void kshim_set_memlock(unsigned long bytes);
long kshim_locked_vm(void);

/*
 * A debugfs file by its path below the debugfs root ("fpgad_dma/0000:00:01.0/regs"):
 * its show() into @buf; -ENOENT when there is no such file.
 */
int kshim_debugfs_read(const char *path, char *buf, size_t size);
unsigned int kshim_debugfs_entries(void);

/* A sysfs attribute of device @name as a number; -1 when absent. */
long long kshim_sysfs(const char *name, const char *attr);

/* Messages the module logged ("err", "warn", "info"). */
bool kshim_log_has(const char *needle);
void kshim_log_clear(void);
unsigned int kshim_warnings(void);	/* WARN_ON hits */

/* DMA outside any live mapping: refused and counted. */
u64 kshim_dma_violations(void);
const char *kshim_dma_last_violation(void);
/*
 * Streaming mappings made from now on go through bounce buffers, as under
 * swiotlb (kshim.c says what each call copies); the dma_sync_* calls made.
 */
void kshim_dma_bounce(bool on);
u64 kshim_dma_syncs(void);
/* Live DMA mappings (coherent, sg tables, dma-bufs, nv-p2p). */
unsigned int kshim_dma_mappings(void);

struct kshim_irq_stats {
	u64 handled;		/* handler calls that returned IRQ_HANDLED */
	u64 unhandled;		/* ... IRQ_NONE */
	u64 misrouted;		/* vectors or lines no handler listens on */
};
void kshim_irq_stats(struct kshim_irq_stats *ret);
/* Call every handler of the card's vector @nr now, as a shared line would. */
int kshim_irq_fire(struct kshim_pci *ks, unsigned int nr);

/* A dma-buf over @mem; returns the fd that names it to PIN_DMABUF. */
int kshim_dmabuf_new(void *mem, size_t size);
/* The exporter moves the buffer: move_notify, then the old mapping dies. */
void kshim_dmabuf_move(int fd);
/* The test's own reference goes; the buffer is gone with the last. */
void kshim_dmabuf_put(int fd);
unsigned int kshim_dmabuf_attachments(void);

/* GPU memory at @gpu_addr for PIN_NVP2P, backed by @mem. */
void kshim_gpu_mem(u64 gpu_addr, void *mem, size_t size);
/* The GPU memory is freed: the free callbacks run, the mappings die. */
void kshim_gpu_free(u64 gpu_addr);
/*
 * Hold the next free callback at its @n-th point of @kind (from 1: after
 * its n-th mutex unlock, before its n-th wake-up); wait until it is held
 * there (false: it never got there within @ms); let it go on.
 */
void kshim_gpu_pause_at(enum kshim_point_kind kind, unsigned int n);
bool kshim_gpu_wait_paused(unsigned int ms);
void kshim_gpu_resume(void);
/* Where kshim_gpu_free_during() fires the free callback inside PIN_NVP2P. */
enum kshim_nvp2p_step {
	KSHIM_NVP2P_NONE,
	KSHIM_NVP2P_GOT_PAGES,		/* get_pages has registered it, returns */
	KSHIM_NVP2P_MAP,		/* dma_map_pages begins */
	KSHIM_NVP2P_MAPPED,		/* dma_map_pages has mapped, returns */
};

/*
 * The next PIN_NVP2P has its memory freed (the free callback fired from
 * another thread, set-up waiting for it to return) at @step; blocked: a
 * callback so fired did not return within 2 s.
 */
void kshim_gpu_free_during(enum kshim_nvp2p_step step);
bool kshim_gpu_callback_blocked(void);

#endif /* KSHIM_TEST_H */
