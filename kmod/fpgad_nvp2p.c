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
 * The page table and its mapping belong to whoever takes them out of @pt
 * and @map under @lock first: fpgad_nvp2p_release() (which then calls
 * nvidia_p2p_put_pages, without @lock: put_pages waits for a callback in
 * flight, and the callback takes @lock) or the free callback (which frees
 * them itself, as the API requires).  @in_callback tells release that the
 * callback has begun and may still use the pin: release waits for it to
 * end before anything is freed.
 */
struct fpgad_nvp2p {
	struct fpgad_pin *pin;
	struct pci_dev *pdev;
	u64 gpu_addr;
	struct mutex lock;		/* pt, map, in_callback */
	nvidia_p2p_page_table_t *pt;
	nvidia_p2p_dma_mapping_t *map;
	bool in_callback;
	wait_queue_head_t wq;		/* in_callback cleared */
	struct sg_table table;
};

/* Take the page table and mapping (NULL: someone did); from the callback. */
static nvidia_p2p_page_table_t *fpgad_nvp2p_take(struct fpgad_nvp2p *p,
						nvidia_p2p_dma_mapping_t **ret_map,
						bool callback)
{
	nvidia_p2p_page_table_t *pt;

	mutex_lock(&p->lock);
	if (callback)
		p->in_callback = true;
	pt = p->pt;
	*ret_map = p->map;
	p->pt = NULL;
	p->map = NULL;
	mutex_unlock(&p->lock);
	return pt;
}

static void fpgad_nvp2p_free(void *data)
{
	struct fpgad_nvp2p *p = data;
	nvidia_p2p_dma_mapping_t *map;
	nvidia_p2p_page_table_t *pt = fpgad_nvp2p_take(p, &map, true);

	if (pt) {
		/* Still ours: release has not begun, the pin is alive. */
		pr_warn("GPU memory at %llx freed under a pin\n", p->gpu_addr);
		fpgad_pin_revoke(p->pin);
		if (map)
			nvidia_p2p_free_dma_mapping(map);
		nvidia_p2p_free_page_table(pt);
	}
	mutex_lock(&p->lock);
	p->in_callback = false;
	mutex_unlock(&p->lock);
	wake_up_all(&p->wq);
}

static bool fpgad_nvp2p_idle(struct fpgad_nvp2p *p)
{
	bool idle;

	mutex_lock(&p->lock);
	idle = !p->in_callback;
	mutex_unlock(&p->lock);
	return idle;
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
	nvidia_p2p_page_table_t *pt = fpgad_nvp2p_take(p, &map, false);

	if (pt) {
		if (map)
			nvidia_p2p_dma_unmap_pages(p->pdev, pt, map);
		/* Returns once a callback that raced with us has ended. */
		nvidia_p2p_put_pages(0, 0, p->gpu_addr, pt);
	}
	/* The callback took them: it may still be revoking this pin. */
	wait_event(p->wq, fpgad_nvp2p_idle(p));
	sg_free_table(&p->table);
	mutex_destroy(&p->lock);
	kfree(p);
}

int fpgad_pin_nvp2p(struct fpgad_dev *fdev, u64 gpu_addr, u64 length,
		    struct fpgad_pin **ret_pin)
{
	struct fpgad_nvp2p *p;
	struct fpgad_pin *pin;
	struct scatterlist *sg;
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
	mutex_init(&p->lock);
	init_waitqueue_head(&p->wq);

	ret = nvidia_p2p_get_pages(0, 0, gpu_addr, length, &p->pt,
				   fpgad_nvp2p_free, p);
	if (ret) {
		dev_err(&fdev->pdev->dev, "nvidia_p2p_get_pages: %d\n", ret);
		goto err_free;
	}
	ret = -EINVAL;
	page = fpgad_nvp2p_page_bytes(p->pt);
	if (!NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p->pt) || !page) {
		dev_err(&fdev->pdev->dev, "unsupported nv-p2p page table\n");
		goto err_put;
	}
	ret = nvidia_p2p_dma_map_pages(fdev->pdev, p->pt, &p->map);
	if (ret) {
		dev_err(&fdev->pdev->dev, "nvidia_p2p_dma_map_pages: %d\n", ret);
		goto err_put;
	}
	ret = sg_alloc_table(&p->table, p->map->entries, GFP_KERNEL);
	if (ret)
		goto err_unmap;
	for_each_sgtable_sg(&p->table, sg, i) {
		sg_dma_address(sg) = p->map->dma_addresses[i];
		sg_dma_len(sg) = page;
	}
	p->table.nents = p->map->entries;

	pin->sgt = &p->table;
	pin->base = 0;
	pin->nvp2p.priv = p;
	fpgad_pin_account(pin, 1);
	*ret_pin = pin;
	return 0;

err_unmap:
	nvidia_p2p_dma_unmap_pages(fdev->pdev, p->pt, p->map);
err_put:
	nvidia_p2p_put_pages(0, 0, gpu_addr, p->pt);
err_free:
	kfree(p);
err_pin:
	kfree(pin);
	return ret;
}
