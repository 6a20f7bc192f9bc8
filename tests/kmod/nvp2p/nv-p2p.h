/* SPDX-License-Identifier: MIT */
/*
 * nv-p2p.h - compile-only declarations of the part of NVIDIA's
 * peer-to-peer API that fpgad_nvp2p.c uses, with the names, shapes and
 * version numbers of the NVIDIA driver's own header, so that the
 * PIN_NVP2P path builds with -Werror against every kernel (and for arm64)
 * where no NVIDIA driver source is installed.  kmod/kmod.mk builds with
 * NVIDIA_SRC= pointing here and a Module.symvers that names the symbols
 * as nvidia.ko's; such a module is never loaded.  A real build points
 * NVIDIA_SRC= at the driver's source instead (README).
 */
#ifndef FPGAD_NV_P2P_BUILD_H
#define FPGAD_NV_P2P_BUILD_H

#include <linux/types.h>

struct pci_dev;

/* Major version: the upper 16 bits; a driver accepts a newer minor. */
#define NVIDIA_P2P_MAJOR_VERSION(v)	(((v) & 0xffff0000u) >> 16)
#define NVIDIA_P2P_MINOR_VERSION(v)	((v) & 0x0000ffffu)
#define NVIDIA_P2P_VERSION_COMPATIBLE(p, v) \
	(NVIDIA_P2P_MAJOR_VERSION((p)->version) == NVIDIA_P2P_MAJOR_VERSION(v) && \
	 NVIDIA_P2P_MINOR_VERSION((p)->version) >= NVIDIA_P2P_MINOR_VERSION(v))

enum nvidia_p2p_page_size_type {
	NVIDIA_P2P_PAGE_SIZE_4KB = 0,
	NVIDIA_P2P_PAGE_SIZE_64KB,
	NVIDIA_P2P_PAGE_SIZE_128KB,
	NVIDIA_P2P_PAGE_SIZE_COUNT
};

typedef struct nvidia_p2p_page {
	u64 physical_address;
	union nvidia_p2p_request_registers {
		struct {
			u32 wreqmb_h;
			u32 rreqmb_h;
			u32 rreqmb_0;
			u32 reserved[3];
		} fermi;
	} registers;
} nvidia_p2p_page_t;

#define NVIDIA_P2P_PAGE_TABLE_VERSION	0x00010002
#define NVIDIA_P2P_PAGE_TABLE_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_PAGE_TABLE_VERSION)

typedef struct nvidia_p2p_page_table {
	u32 version;
	u32 page_size;		/* enum nvidia_p2p_page_size_type */
	struct nvidia_p2p_page **pages;
	u32 entries;
	u8 *gpu_uuid;
} nvidia_p2p_page_table_t;

#define NVIDIA_P2P_DMA_MAPPING_VERSION	0x00020003
#define NVIDIA_P2P_DMA_MAPPING_VERSION_COMPATIBLE(p) \
	NVIDIA_P2P_VERSION_COMPATIBLE(p, NVIDIA_P2P_DMA_MAPPING_VERSION)

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

#endif /* FPGAD_NV_P2P_BUILD_H */
