/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fpgad_compat.h - the kernel interfaces fpgad_dma.ko uses that changed
 * between the kernels it builds on.  Each is picked by what the headers
 * provide, never by LINUX_VERSION_CODE: distributions backport interfaces
 * (RHEL 9.4's 5.14 has the one-argument class_create), and a version test
 * picks the wrong spelling there.  What a macro test cannot see (a
 * function's arguments, a structure's member) Kbuild's conftest step
 * compiles a probe for (fpgad_conftest.c); fpgad_conftest.h is its result.
 */
#ifndef FPGAD_COMPAT_H
#define FPGAD_COMPAT_H

#include <linux/device.h>
#include <linux/module.h>
#include <linux/pci.h>

#include <fpgad_conftest.h>

/*
 * 6.4 dropped the owner argument of class_create().  Probed by a call: a
 * backport may be the function of 6.4 or the one-argument macro of the
 * commit before it, so whether class_create is a macro does not tell.
 */
#ifdef FPGAD_HAVE_CLASS_CREATE_NAME
#define fpgad_class_create(name)	class_create(name)
#else
#define fpgad_class_create(name)	class_create(THIS_MODULE, name)
#endif

/* The importer's callback when the exporter moves a dma-buf, renamed. */
#ifdef FPGAD_HAVE_DMA_BUF_INVALIDATE_MAPPINGS
#define FPGAD_DMA_BUF_MOVE_NOTIFY	invalidate_mappings
#else
#define FPGAD_DMA_BUF_MOVE_NOTIFY	move_notify
#endif

/*
 * 6.8 renamed PCI_IRQ_LEGACY to PCI_IRQ_INTX (the old name went in 6.10);
 * a macro, so a backport of it is seen by #ifndef.
 */
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
