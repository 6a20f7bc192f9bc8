/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fpgad_compat.h - the kernel interfaces fpgad_dma.ko uses that changed
 * between the kernels it builds on.  Each is picked by what the headers
 * define, not by LINUX_VERSION_CODE: distributions backport interfaces
 * (RHEL 9.4's 5.14 has the one-argument class_create), and a version test
 * would pick the wrong spelling there.
 */
#ifndef FPGAD_COMPAT_H
#define FPGAD_COMPAT_H

#include <linux/device.h>
#include <linux/module.h>
#include <linux/pci.h>

/*
 * 6.4 dropped the owner argument of class_create(), which stopped being a
 * macro over __class_create() and became a function.
 */
#ifdef class_create
#define fpgad_class_create(name)	class_create(THIS_MODULE, name)
#else
#define fpgad_class_create(name)	class_create(name)
#endif

/* 6.8 renamed PCI_IRQ_LEGACY to PCI_IRQ_INTX (the old name went in 6.10). */
#ifndef PCI_IRQ_INTX
#define PCI_IRQ_INTX			PCI_IRQ_LEGACY
#endif

/*
 * The dma-buf symbols are in the DMA_BUF namespace.  MODULE_IMPORT_NS()
 * took an identifier until 6.13 and a string since; both put
 * "import_ns=DMA_BUF" in the module's information, which is what is
 * spelled out here, the same on every kernel.
 */
#define FPGAD_IMPORT_NS_DMA_BUF		MODULE_INFO(import_ns, "DMA_BUF")

#endif /* FPGAD_COMPAT_H */
