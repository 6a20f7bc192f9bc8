/* SPDX-License-Identifier: MIT */
/*
 * nv-p2p.h - the part of NVIDIA's peer-to-peer API that fpgad_nvp2p.c
 * uses, with the same names and shapes, backed by kshim.c's fake GPU
 * memory so that the module's PIN_NVP2P path builds and runs in the
 * engine-model test.  kshim_gpu_free() calls the free callback the way the
 * NVIDIA driver does when the memory goes away under a pin.
 */
#ifndef KSHIM_NV_P2P_H
#define KSHIM_NV_P2P_H

#include "kshim.h"

#define NVIDIA_P2P_PAGE_TABLE_VERSION		0x00010002u
#define NVIDIA_P2P_DMA_MAPPING_VERSION		0x00020003u
#define NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p) \
	((p)->version == NVIDIA_P2P_PAGE_TABLE_VERSION)

enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB,
	NVIDIA_P2P_PAGE_SIZE_128KB,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};

typedef struct nvidia_p2p_page {
	u64 physical_address;
} nvidia_p2p_page_t;

typedef struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;
	struct nvidia_p2p_page **pages;
	u32 entries;
	u8 *gpu_uuid;
} nvidia_p2p_page_table_t;

typedef struct nvidia_p2p_dma_mapping {
	u32 version;
	enum nvidia_p2p_page_size_type page_size_type;
	u32 entries;
	u64 *dma_addresses;
	void *private;
	struct pci_dev *pci_dev;
} nvidia_p2p_dma_mapping_t;

int nvidia_p2p_get_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 u64 length, struct nvidia_p2p_page_table **page_table,
			 void (*free_callback)(void *data), void *data);
int nvidia_p2p_put_pages(u64 p2p_token, u32 va_space, u64 virtual_address,
			 struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_free_page_table(struct nvidia_p2p_page_table *page_table);
int nvidia_p2p_dma_map_pages(struct pci_dev *peer,
			     struct nvidia_p2p_page_table *page_table,
			     struct nvidia_p2p_dma_mapping **dma_mapping);
int nvidia_p2p_dma_unmap_pages(struct pci_dev *peer,
			       struct nvidia_p2p_page_table *page_table,
			       struct nvidia_p2p_dma_mapping *dma_mapping);
int nvidia_p2p_free_dma_mapping(struct nvidia_p2p_dma_mapping *dma_mapping);

#endif /* KSHIM_NV_P2P_H */
