// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpgad_conftest.c - the probes of Kbuild's conftest step (see Kbuild):
 * each section is compiled on its own, with -DFPGAD_CONFTEST_<NAME> and
 * the module's own flags, against the target kernel's headers; the ones
 * that compile become FPGAD_HAVE_<NAME> in the generated fpgad_conftest.h.
 * A probe asks for the interface itself, so a distribution's backport
 * (RHEL 9.4's one-argument class_create() on 5.14) is seen as what it is,
 * whatever the kernel's version says.  Never part of the module.
 */

/* class_create(name): 6.4 dropped the owner argument. */
#ifdef FPGAD_CONFTEST_CLASS_CREATE_NAME
#include <linux/device.h>

struct class *fpgad_conftest(void);
struct class *fpgad_conftest(void)
{
	return class_create("fpgad_conftest");
}
#endif

/*
 * dma_buf_attach_ops.invalidate_mappings: the importer's callback when the
 * exporter moves the buffer, move_notify before it was renamed.
 */
#ifdef FPGAD_CONFTEST_DMA_BUF_INVALIDATE_MAPPINGS
#include <linux/dma-buf.h>

void fpgad_conftest(struct dma_buf_attachment *attach);
void fpgad_conftest(struct dma_buf_attachment *attach)
{
}

extern const struct dma_buf_attach_ops fpgad_conftest_ops;
const struct dma_buf_attach_ops fpgad_conftest_ops = {
	.invalidate_mappings = fpgad_conftest,
};
#endif
