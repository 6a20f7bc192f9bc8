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
 * the page table and mapping freed there, as the API requires.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include <nv-p2p.h>

#include "fpgad_drv.h"

#define FPGAD_NVP2P_ALIGN	(64ULL << 10)

struct fpgad_nvp2p {
	struct fpgad_pin *pin;
	u64 gpu_addr;
	struct mutex lock;		/* pt and map against the free callback */
	nvidia_p2p_page_table_t *pt;
	nvidia_p2p_dma_mapping_t *map;
	struct sg_table table;
};

static void fpgad_nvp2p_free(void *data)
{
	struct fpgad_nvp2p *p = data;

	pr_warn("GPU memory at %llx freed under a pin\n", p->gpu_addr);
	fpgad_pin_revoke(p->pin);
	mutex_lock(&p->lock);
	if (p->map)
		nvidia_p2p_free_dma_mapping(p->map);
	p->map = NULL;
	if (p->pt)
		nvidia_p2p_free_page_table(p->pt);
	p->pt = NULL;
	mutex_unlock(&p->lock);
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

int fpgad_nvp2p_pin(struct fpgad_dev *fdev, struct fpgad_pin *pin,
		    u64 gpu_addr, u64 length)
{
	struct fpgad_nvp2p *p;
	struct scatterlist *sg;
	u64 page;
	unsigned int i;
	int ret;

	if (!length || (gpu_addr | length) & (FPGAD_NVP2P_ALIGN - 1) ||
	    gpu_addr + length < gpu_addr)
		return -EINVAL;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->pin = pin;
	p->gpu_addr = gpu_addr;
	mutex_init(&p->lock);

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
	return 0;

err_unmap:
	nvidia_p2p_dma_unmap_pages(fdev->pdev, p->pt, p->map);
err_put:
	nvidia_p2p_put_pages(0, 0, gpu_addr, p->pt);
err_free:
	kfree(p);
	return ret;
}

void fpgad_nvp2p_release(struct fpgad_dev *fdev, struct fpgad_pin *pin)
{
	struct fpgad_nvp2p *p = pin->nvp2p.priv;

	mutex_lock(&p->lock);
	if (p->map)
		nvidia_p2p_dma_unmap_pages(fdev->pdev, p->pt, p->map);
	if (p->pt)
		nvidia_p2p_put_pages(0, 0, p->gpu_addr, p->pt);
	p->map = NULL;
	p->pt = NULL;
	mutex_unlock(&p->lock);
	sg_free_table(&p->table);
	kfree(p);
}
