// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fpgad_nvp2p.c - PIN_NVP2P: GPU memory through NVIDIA's nv-p2p API.
 *
 * Built only with NVIDIA_SRC= (the directory with nv-p2p.h).  The pages of
 * [gpu_addr, gpu_addr + length) are pinned with nvidia_p2p_get_pages and
 * mapped for the card with nvidia_p2p_dma_map_pages; the bus addresses go
 * into an sg table without struct pages, which the engines walk like any
 * other pin.  When the GPU memory is freed under the pin, NVIDIA calls
 * fpgad_nvp2p_free(): the pin turns dead (new transfers fail with ENOLINK),
 * the engine writing it is stopped (fpgad_pin_revoke) and only then are
 * the page table and mapping freed there, as the API requires.  The pin
 * is released (fpgad_nvp2p_release) with no lock held across
 * nvidia_p2p_put_pages, and not before a running callback has ended.
 *
 * The callback may come at any time once nvidia_p2p_get_pages has
 * registered it, set-up included (another thread of the caller's calls
 * cudaFree).  It never waits for set-up: it runs under the NVIDIA driver's
 * locks, which set-up's own nvidia_p2p_* calls take.  While set-up runs,
 * the callback only marks the pin revoked and leaves the page table and
 * mapping to set-up, which frees them the callback's way and fails with
 * ENOLINK; no DMA has used them.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include <nv-p2p.h>

#include "fpgad_drv.h"

#define FPGAD_NVP2P_ALIGN	(64ULL << 10)

/*
 * The page table and its mapping belong to set-up until it has published
 * them in @pt and @map; from then on to whoever takes them out under
 * @lock first: fpgad_nvp2p_release() (which then calls
 * nvidia_p2p_put_pages, without @lock: put_pages waits for a callback in
 * flight, and the callback takes @lock) or the free callback (which frees
 * them itself, as the API requires).
 *
 * @in_callback tells release (and a failing set-up) that the callback has
 * begun and may still use the pin.  It is cleared with release semantics
 * as the callback's last access to this object, and waited for on a wait
 * queue that is not in it: once it reads false, the object can be freed
 * (a mutex or a wait queue inside it could still be touched by the
 * callback after the waiter saw it idle).
 */
struct fpgad_nvp2p {
	struct fpgad_pin *pin;
	struct pci_dev *pdev;
	u64 gpu_addr;
	struct mutex lock;		/* pt, map, setting_up, revoked */
	nvidia_p2p_page_table_t *pt;
	nvidia_p2p_dma_mapping_t *map;
	bool setting_up;		/* set-up owns the page table */
	bool revoked;			/* the callback came during set-up */
	bool in_callback;
	struct sg_table table;
};

/* in_callback cleared, for every pin. */
static DECLARE_WAIT_QUEUE_HEAD(fpgad_nvp2p_wq);

static void fpgad_nvp2p_free(void *data)
{
	struct fpgad_nvp2p *p = data;
	nvidia_p2p_dma_mapping_t *map = NULL;
	nvidia_p2p_page_table_t *pt = NULL;

	mutex_lock(&p->lock);
	p->in_callback = true;
	if (p->setting_up) {
		/* Set-up frees them once it no longer uses them. */
		p->revoked = true;
	} else {
		pt = p->pt;
		map = p->map;
		p->pt = NULL;
		p->map = NULL;
	}
	mutex_unlock(&p->lock);

	if (pt) {
		/* Still ours: release has not begun, the pin is alive. */
		pr_warn("GPU memory at %llx freed under a pin\n", p->gpu_addr);
		fpgad_pin_revoke(p->pin);
		if (map)
			nvidia_p2p_free_dma_mapping(map);
		nvidia_p2p_free_page_table(pt);
	}
	/* The last access to *p: it may be freed from here on. */
	smp_store_release(&p->in_callback, false);
	wake_up_all(&fpgad_nvp2p_wq);
}

static void fpgad_nvp2p_wait_callback(struct fpgad_nvp2p *p)
{
	wait_event(fpgad_nvp2p_wq, !smp_load_acquire(&p->in_callback));
}

static u64 fpgad_nvp2p_page_bytes(const nvidia_p2p_page_table_t *pt)
{
	switch (pt->page_size) {
	case NVIDIA_P2P_PAGE_SIZE_4KB:
		return 4ULL << 10;
	case NVIDIA_P2P_PAGE_SIZE_64KB:
		return 64ULL << 10;
	case NVIDIA_P2P_PAGE_SIZE_128KB:
		return 128ULL << 10;
	default:
		return 0;
	}
}

static void fpgad_nvp2p_release(struct fpgad_pin *pin)
{
	struct fpgad_nvp2p *p = pin->nvp2p.priv;
	nvidia_p2p_dma_mapping_t *map;
	nvidia_p2p_page_table_t *pt;

	mutex_lock(&p->lock);
	pt = p->pt;
	map = p->map;
	p->pt = NULL;
	p->map = NULL;
	mutex_unlock(&p->lock);

	if (pt) {
		if (map)
			nvidia_p2p_dma_unmap_pages(p->pdev, pt, map);
		/* Returns once a callback that raced with us has ended. */
		nvidia_p2p_put_pages(0, 0, p->gpu_addr, pt);
	}
	/* The callback took them: it may still be revoking this pin. */
	fpgad_nvp2p_wait_callback(p);
	sg_free_table(&p->table);
	mutex_destroy(&p->lock);
	kfree(p);
}

/*
 * Set-up is over: true when the callback came meanwhile; otherwise @pt and
 * @map (NULL when set-up failed) are published for release and the
 * callback.
 */
static bool fpgad_nvp2p_setup_done(struct fpgad_nvp2p *p,
				   nvidia_p2p_page_table_t *pt,
				   nvidia_p2p_dma_mapping_t *map)
{
	bool revoked;

	mutex_lock(&p->lock);
	p->setting_up = false;
	revoked = p->revoked;
	if (!revoked) {
		p->pt = pt;
		p->map = map;
	}
	mutex_unlock(&p->lock);
	return revoked;
}

int fpgad_pin_nvp2p(struct fpgad_dev *fdev, u64 gpu_addr, u64 length,
		    struct fpgad_pin **ret_pin)
{
	nvidia_p2p_dma_mapping_t *map = NULL;
	nvidia_p2p_page_table_t *pt = NULL;
	struct fpgad_nvp2p *p;
	struct fpgad_pin *pin;
	struct scatterlist *sg;
	bool table = false;
	u64 page;
	unsigned int i;
	int ret;

	if (!length || (gpu_addr | length) & (FPGAD_NVP2P_ALIGN - 1) ||
	    gpu_addr + length < gpu_addr)
		return -EINVAL;

	pin = fpgad_pin_new(fdev, FPGAD_PIN_NVP2P, length, fpgad_nvp2p_release);
	if (!pin)
		return -ENOMEM;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		ret = -ENOMEM;
		goto err_pin;
	}
	p->pin = pin;
	p->pdev = fdev->pdev;
	p->gpu_addr = gpu_addr;
	p->setting_up = true;
	mutex_init(&p->lock);
	pin->nvp2p.priv = p;

	/* From here on the callback may come (cudaFree in another thread). */
	ret = nvidia_p2p_get_pages(0, 0, gpu_addr, length, &pt,
				   fpgad_nvp2p_free, p);
	if (ret) {
		dev_err(&fdev->pdev->dev, "nvidia_p2p_get_pages: %d\n", ret);
		goto err_free;
	}
	ret = -EINVAL;
	page = fpgad_nvp2p_page_bytes(pt);
	if (!NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(pt) || !page) {
		dev_err(&fdev->pdev->dev, "unsupported nv-p2p page table\n");
		goto err_pages;
	}
	ret = nvidia_p2p_dma_map_pages(fdev->pdev, pt, &map);
	if (ret) {
		dev_err(&fdev->pdev->dev, "nvidia_p2p_dma_map_pages: %d\n", ret);
		map = NULL;
		goto err_pages;
	}
	ret = sg_alloc_table(&p->table, map->entries, GFP_KERNEL);
	if (ret)
		goto err_pages;
	table = true;
	for_each_sgtable_sg(&p->table, sg, i) {
		sg_dma_address(sg) = map->dma_addresses[i];
		sg_dma_len(sg) = page;
	}
	p->table.nents = map->entries;
	pin->sgt = &p->table;
	pin->base = 0;

	if (fpgad_nvp2p_setup_done(p, pt, map)) {
		ret = -ENOLINK;
		goto err_revoked;
	}
	fpgad_pin_account(pin, 1);
	*ret_pin = pin;
	return 0;

err_pages:
	if (!fpgad_nvp2p_setup_done(p, NULL, NULL)) {
		/* No callback came: none will once put_pages returns. */
		if (map)
			nvidia_p2p_dma_unmap_pages(fdev->pdev, pt, map);
		nvidia_p2p_put_pages(0, 0, gpu_addr, pt);
		goto err_wait;
	}
	ret = -ENOLINK;
err_revoked:
	/* The callback came and left them to us: freed its way. */
	dev_warn(&fdev->pdev->dev,
		 "GPU memory at %llx freed while it was being pinned\n",
		 gpu_addr);
	if (map)
		nvidia_p2p_free_dma_mapping(map);
	nvidia_p2p_free_page_table(pt);
err_wait:
	fpgad_nvp2p_wait_callback(p);
	if (table)
		sg_free_table(&p->table);
err_free:
	mutex_destroy(&p->lock);
	kfree(p);
err_pin:
	kfree(pin);
	return ret;
}
