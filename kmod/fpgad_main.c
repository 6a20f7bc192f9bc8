// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpgad_main.c - PCI driver, the "fpgad" class and the sysfs counters.
 *
 * Xilinx XDMA cards are bound by device id: the ids= parameter at load time
 * or /sys/bus/pci/drivers/fpgad_dma/new_id afterwards.  QEMU's edu device
 * (1234:11e8) is in the static table so that the module can be exercised
 * under QEMU; there is no MODULE_DEVICE_TABLE, so nothing loads the module
 * automatically.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>

#include "fpgad_compat.h"
#include "fpgad_drv.h"

#define FPGAD_MAX_IDS		16

static unsigned short ids[FPGAD_MAX_IDS];
static int n_ids;
module_param_array(ids, ushort, &n_ids, 0444);
MODULE_PARM_DESC(ids, "Xilinx (vendor 10ee) PCI device ids to bind with the XDMA engine, e.g. ids=0x9038,0x9034");

unsigned int fpgad_timeout_ms = 1000;
module_param_named(timeout_ms, fpgad_timeout_ms, uint, 0644);
MODULE_PARM_DESC(timeout_ms, "Timeout of a transfer submitted with timeout_ms 0 (default 1000)");

unsigned int fpgad_max_inflight = 64;
module_param_named(max_inflight, fpgad_max_inflight, uint, 0444);
MODULE_PARM_DESC(max_inflight, "Transfers one open file may have outstanding (default 64)");

bool fpgad_poll_mode;
module_param_named(poll_mode, fpgad_poll_mode, bool, 0644);
MODULE_PARM_DESC(poll_mode, "XDMA: detect completion by polling the write-back instead of MSI-X/MSI interrupts");

unsigned long long fpgad_card_memory;
module_param_named(card_memory, fpgad_card_memory, ullong, 0444);
MODULE_PARM_DESC(card_memory, "XDMA: bytes of card address space reported by INFO and enforced by SUBMIT (0 = unknown, not enforced)");

static struct class *fpgad_class;
struct dentry *fpgad_debugfs;
static dev_t fpgad_devt;
static DEFINE_IDA(fpgad_ida);

/* --- sysfs counters: /sys/class/fpgad/fpgadN/<name> ------------------------ */

#define FPGAD_COUNTER_ATTR(_name)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct fpgad_dev *fdev = container_of(dev, struct fpgad_dev, dev); \
									\
	return sysfs_emit(buf, "%lld\n",				\
			  (long long)atomic64_read(&fdev->ctr._name));	\
}									\
static DEVICE_ATTR_RO(_name)

FPGAD_COUNTER_ATTR(pins);
FPGAD_COUNTER_ATTR(pinned_bytes);
FPGAD_COUNTER_ATTR(files);
FPGAD_COUNTER_ATTR(inflight);
FPGAD_COUNTER_ATTR(transfers);
FPGAD_COUNTER_ATTR(bytes_h2c);
FPGAD_COUNTER_ATTR(bytes_c2h);
FPGAD_COUNTER_ATTR(timeouts);
FPGAD_COUNTER_ATTR(errors);
FPGAD_COUNTER_ATTR(cancels);
FPGAD_COUNTER_ATTR(resets);
FPGAD_COUNTER_ATTR(wedged);
FPGAD_COUNTER_ATTR(interrupts);

static ssize_t engine_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct fpgad_dev *fdev = container_of(dev, struct fpgad_dev, dev);

	return sysfs_emit(buf, "%s\n", fdev->engine->name);
}
static DEVICE_ATTR_RO(engine);

static struct attribute *fpgad_attrs[] = {
	&dev_attr_engine.attr,
	&dev_attr_pins.attr,
	&dev_attr_pinned_bytes.attr,
	&dev_attr_files.attr,
	&dev_attr_inflight.attr,
	&dev_attr_transfers.attr,
	&dev_attr_bytes_h2c.attr,
	&dev_attr_bytes_c2h.attr,
	&dev_attr_timeouts.attr,
	&dev_attr_errors.attr,
	&dev_attr_cancels.attr,
	&dev_attr_resets.attr,
	&dev_attr_wedged.attr,
	&dev_attr_interrupts.attr,
	NULL,
};
ATTRIBUTE_GROUPS(fpgad);

/* --- PCI driver ---------------------------------------------------------- */

/*
 * Raw bytes per millisecond of the negotiated PCIe link, after line
 * encoding (8b/10b to Gen2, 128b/130b from Gen3); PCIe Gen1 x1 when the
 * link is not known (conventional PCI, a generation past this table).
 */
u64 fpgad_link_rate(struct pci_dev *pdev)
{
	static const u32 lane[] = { 0, 250000, 500000, 984615, 1969231,
				    3938462, 7876923 };
	u32 gen = 1, width = 1;
	u16 lnksta;

	if (pci_is_pcie(pdev) &&
	    !pcie_capability_read_word(pdev, PCI_EXP_LNKSTA, &lnksta)) {
		gen = lnksta & PCI_EXP_LNKSTA_CLS;
		width = (lnksta & PCI_EXP_LNKSTA_NLW) >>
			PCI_EXP_LNKSTA_NLW_SHIFT;
	}
	if (!gen || gen >= ARRAY_SIZE(lane))
		gen = 1;
	if (!width)
		width = 1;
	return (u64)lane[gen] * width;
}

static void fpgad_dev_release(struct device *dev)
{
	struct fpgad_dev *fdev = container_of(dev, struct fpgad_dev, dev);

	if (fdev->minor >= 0)
		ida_free(&fpgad_ida, fdev->minor);
	pci_dev_put(fdev->pdev);
	kfree(fdev);
}

static int fpgad_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct fpgad_dev *fdev;
	int ret;

	fdev = kzalloc(sizeof(*fdev), GFP_KERNEL);
	if (!fdev)
		return -ENOMEM;
	fdev->pdev = pci_dev_get(pdev);
	fdev->engine = id->driver_data == FPGAD_ENGINE_EDU ?
		       &fpgad_engine_edu : &fpgad_engine_xdma;
	mutex_init(&fdev->lock);
	INIT_LIST_HEAD(&fdev->files);
	fdev->minor = -1;

	/* From here on put_device() frees fdev. */
	device_initialize(&fdev->dev);
	fdev->dev.class = fpgad_class;
	fdev->dev.parent = &pdev->dev;
	fdev->dev.groups = fpgad_groups;
	fdev->dev.release = fpgad_dev_release;

	ret = ida_alloc_max(&fpgad_ida, FPGAD_MAX_DEVICES - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_put;
	fdev->minor = ret;
	fdev->dev.devt = MKDEV(MAJOR(fpgad_devt), fdev->minor);
	ret = dev_set_name(&fdev->dev, "fpgad%d", fdev->minor);
	if (ret)
		goto err_put;

	ret = pci_enable_device(pdev);
	if (ret) {
		dev_err(&pdev->dev, "cannot enable: %d\n", ret);
		goto err_put;
	}
	ret = pci_request_regions(pdev, KBUILD_MODNAME);
	if (ret) {
		dev_err(&pdev->dev, "cannot claim BARs: %d\n", ret);
		goto err_disable;
	}
	/*
	 * No bus mastering until the engine has stopped whatever a previous
	 * kernel or a crashed driver left running: such an engine would
	 * resume DMA to stale addresses the moment it is set (kexec and a
	 * driver's remove clear it; firmware or a crash may not).
	 */
	pci_clear_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	if (ret) {
		dev_err(&pdev->dev, "no usable DMA mask: %d\n", ret);
		goto err_regions;
	}

	fdev->link_bytes_per_ms = fpgad_link_rate(pdev);
	fdev->wq = alloc_workqueue("fpgad%d", WQ_UNBOUND | WQ_MEM_RECLAIM, 0,
				   fdev->minor);
	if (!fdev->wq) {
		ret = -ENOMEM;
		goto err_regions;
	}

	ret = fdev->engine->probe(fdev);
	if (ret)
		goto err_wq;
	pci_set_master(pdev);

	pci_set_drvdata(pdev, fdev);
	cdev_init(&fdev->cdev, &fpgad_fops);
	fdev->cdev.owner = THIS_MODULE;
	ret = cdev_device_add(&fdev->cdev, &fdev->dev);
	if (ret) {
		dev_err(&pdev->dev, "cannot add /dev/%s: %d\n",
			dev_name(&fdev->dev), ret);
		goto err_engine;
	}

	dev_info(&pdev->dev, "%s engine, %u H2C + %u C2H channels, /dev/%s\n",
		 fdev->engine->name, fdev->n_h2c, fdev->n_c2h,
		 dev_name(&fdev->dev));
	return 0;

err_engine:
	pci_set_drvdata(pdev, NULL);
	fdev->engine->remove(fdev);
err_wq:
	destroy_workqueue(fdev->wq);
	kfree(fdev->chans);
err_regions:
	pci_clear_master(pdev);
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_put:
	put_device(&fdev->dev);
	return ret;
}

static void fpgad_remove(struct pci_dev *pdev)
{
	struct fpgad_dev *fdev = pci_get_drvdata(pdev);
	struct fpgad_file *file;

	cdev_device_del(&fdev->cdev, &fdev->dev);

	/* Open files keep fdev, but lose their pins and transfers now. */
	mutex_lock(&fdev->lock);
	fdev->dead = true;
	list_for_each_entry(file, &fdev->files, node)
		fpgad_file_teardown(file, -ENODEV);
	mutex_unlock(&fdev->lock);

	destroy_workqueue(fdev->wq);
	/*
	 * A wedged engine may still be writing: no DMA leaves the card from
	 * here on, then the rings and the pins it held can go.
	 */
	pci_clear_master(pdev);
	fdev->engine->remove(fdev);
	fpgad_chans_release_held(fdev);
	kfree(fdev->chans);
	fdev->chans = NULL;
	fdev->nchans = 0;
	memset(fdev->route, 0, sizeof(fdev->route));

	pci_release_regions(pdev);
	pci_disable_device(pdev);
	pci_set_drvdata(pdev, NULL);
	put_device(&fdev->dev);
}

/*
 * No MODULE_DEVICE_TABLE: the module is loaded on purpose, not by udev for
 * QEMU's edu device.
 */
static const struct pci_device_id fpgad_pci_ids[] = {
	{ PCI_DEVICE(0x1234, 0x11e8), .driver_data = FPGAD_ENGINE_EDU },
	{ 0 }
};

static struct pci_driver fpgad_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = fpgad_pci_ids,
	.probe = fpgad_probe,
	.remove = fpgad_remove,
};

static int __init fpgad_init(void)
{
	int ret, i;

	if (!fpgad_max_inflight || fpgad_max_inflight > 65536) {
		pr_err("max_inflight must be 1..65536\n");
		return -EINVAL;
	}

	ret = alloc_chrdev_region(&fpgad_devt, 0, FPGAD_MAX_DEVICES,
				  FPGAD_DMA_CLASS);
	if (ret)
		return ret;

	fpgad_class = fpgad_class_create(FPGAD_DMA_CLASS);
	if (IS_ERR(fpgad_class)) {
		ret = PTR_ERR(fpgad_class);
		goto err_region;
	}

	/* Diagnostics only: its failure is no failure (debugfs's rule). */
	fpgad_debugfs = debugfs_create_dir(KBUILD_MODNAME, NULL);
	ret = pci_register_driver(&fpgad_pci_driver);
	if (ret)
		goto err_class;

	for (i = 0; i < n_ids; i++) {
		ret = pci_add_dynid(&fpgad_pci_driver, PCI_VENDOR_ID_XILINX,
				    ids[i], PCI_ANY_ID, PCI_ANY_ID, 0, 0,
				    FPGAD_ENGINE_XDMA);
		if (ret) {
			pr_err("cannot add device id 10ee:%04x: %d\n",
			       ids[i], ret);
			goto err_driver;
		}
	}
	return 0;

err_driver:
	pci_unregister_driver(&fpgad_pci_driver);
err_class:
	debugfs_remove_recursive(fpgad_debugfs);
	class_destroy(fpgad_class);
err_region:
	unregister_chrdev_region(fpgad_devt, FPGAD_MAX_DEVICES);
	return ret;
}

static void __exit fpgad_exit(void)
{
	pci_unregister_driver(&fpgad_pci_driver);
	debugfs_remove_recursive(fpgad_debugfs);
	class_destroy(fpgad_class);
	unregister_chrdev_region(fpgad_devt, FPGAD_MAX_DEVICES);
	ida_destroy(&fpgad_ida);
}

module_init(fpgad_init);
module_exit(fpgad_exit);

MODULE_DESCRIPTION("fpgad DMA driver for XDMA FPGA cards (GPUDirect via dma-buf)");
MODULE_LICENSE("Dual MIT/GPL");
FPGAD_IMPORT_NS_DMA_BUF;
