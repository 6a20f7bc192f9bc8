# SPDX-License-Identifier: MIT
#
# model.mk - the engine-model tier (included by kmod/kmod.mk).
#
#   make kmod-model   build fpgad_dma.ko's sources in user space against
#                     the kernel shim (tests/kmod/model/kshim.[ch]) and the
#                     XDMA engine model (tests/kmod/model/xdma_model.c),
#                     with ASan and UBSan, and run the CMocka suite
#
# No kernel headers, QEMU or card needed: part of make check everywhere.

KMODEL_DIR := tests/kmod/model
KMODEL_OUT := $(BUILD)/kmod-model
KMODEL_BIN := $(KMODEL_OUT)/test_xdma_model
# The module's files, all but the edu-only engine's register access run here.
KMODEL_KSRC := $(filter-out %.mod.c,$(wildcard kmod/*.c))
KMODEL_SRC := $(KMODEL_DIR)/test_xdma_model.c $(KMODEL_DIR)/kshim.c \
	$(KMODEL_DIR)/klockdep.c $(KMODEL_DIR)/xdma_model.c
# Every <linux/...> header the module includes becomes a one-line file that
# includes kshim.h; one missing here fails the build with its name.
KMODEL_LINUX_H := atomic.h capability.h cdev.h debugfs.h compiler.h delay.h device.h dma-buf.h \
	dma-mapping.h dma-resv.h fs.h idr.h interrupt.h \
	io-64-nonatomic-lo-hi.h ioctl.h jiffies.h kernel.h list.h lockdep.h log2.h math64.h mm.h \
	module.h mutex.h pci.h pci-p2pdma.h poll.h scatterlist.h seq_file.h \
	refcount.h sched/mm.h sched/signal.h slab.h spinlock.h stddef.h timekeeping.h types.h \
	uaccess.h version.h wait.h workqueue.h xarray.h
KMODEL_STUBS := $(addprefix $(KMODEL_OUT)/include/linux/,$(KMODEL_LINUX_H))
KMODEL_CFLAGS := -std=gnu11 -O1 -g $(WARN) -Wno-unused-parameter \
	-fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all -D_GNU_SOURCE -DFPGAD_NVP2P \
	-DCONFIG_PCI_P2PDMA=1 \
	-DKBUILD_MODNAME='"fpgad_dma"' -I$(KMODEL_OUT)/include \
	-I$(KMODEL_DIR) -Ikmod

.PHONY: kmod-model

$(KMODEL_STUBS):
	$(Q)mkdir -p $(dir $@)
	$(Q)echo '#include "kshim.h"' > $@

$(KMODEL_BIN): $(KMODEL_SRC) $(KMODEL_KSRC) $(wildcard $(KMODEL_DIR)/*.h) \
		$(wildcard kmod/*.h) kmod/uapi/fpgad_dma.h | $(KMODEL_STUBS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(KMODEL_CFLAGS) -o $@ $(KMODEL_SRC) $(KMODEL_KSRC) \
		-lcmocka -lpthread

kmod-model: $(KMODEL_BIN)
	@echo "== $(KMODEL_BIN)"
	$(Q)$(KMODEL_BIN)

