/* SPDX-License-Identifier: MIT */
/*
 * What Kbuild's conftest step (kmod/Kbuild) finds in the shim's kernel:
 * class_create() is the one-argument function (kshim.h), the dma-buf
 * importer's callback is still move_notify.
 */
#define FPGAD_HAVE_CLASS_CREATE_NAME 1
