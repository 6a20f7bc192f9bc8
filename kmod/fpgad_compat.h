/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fpgad_compat.h - the kernel interfaces fpgad_dma.ko uses that changed
 * between the kernels it builds on (Debian 12's 6.1 and its backported
 * 6.12, Ubuntu's 6.8): one spelling each, picked by LINUX_VERSION_CODE.
 */
#ifndef FPGAD_COMPAT_H
#define FPGAD_COMPAT_H

#include <linux/version.h>

/* 6.4 dropped the owner argument of class_create(). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 4, 0)
#define fpgad_class_create(name)	class_create(THIS_MODULE, name)
#else
#define fpgad_class_create(name)	class_create(name)
#endif

/* 6.8 renamed PCI_IRQ_LEGACY to PCI_IRQ_INTX (the old name went in 6.10). */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 8, 0)
#define PCI_IRQ_INTX			PCI_IRQ_LEGACY
#endif

/*
 * 6.12 removed no_llseek: a file that stream_open() opened has no
 * FMODE_LSEEK and lseek() fails with ESPIPE without it.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 12, 0)
#define FPGAD_NO_LLSEEK			.llseek = no_llseek,
#else
#define FPGAD_NO_LLSEEK
#endif

/* 6.13 takes the symbol namespace as a string. */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#define FPGAD_IMPORT_NS_DMA_BUF		MODULE_IMPORT_NS(DMA_BUF)
#else
#define FPGAD_IMPORT_NS_DMA_BUF		MODULE_IMPORT_NS("DMA_BUF")
#endif

#endif /* FPGAD_COMPAT_H */
