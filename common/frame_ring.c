// SPDX-License-Identifier: MIT
/* frame_ring.c - the frame plane's shared rules (see frame_ring.h). */
#include <errno.h>

#include "frame_ring.h"

static const size_t header_size = sizeof(struct fpgad_frames_header);
static const size_t desc_size = sizeof(struct fpgad_frame_desc);

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

size_t frame_ring_size(uint32_t desc_count)
{
	if (!is_pow2(desc_count) || desc_count > FPGAD_FRAMES_MAX_DESCS)
		return 0;
	return header_size + (size_t)desc_count * desc_size;
}

uint32_t frame_ring_desc_count_for(uint32_t slots)
{
	uint32_t n = 1;

	if (slots > FPGAD_FRAMES_MAX_DESCS)
		return 0;
	while (n < slots)
		n <<= 1;
	return n;
}

int frame_ring_validate(const void *mem, size_t len)
{
	const struct fpgad_frames_header *hdr = mem;
	uint64_t need;

	if (!mem || ((uintptr_t)mem % _Alignof(uint64_t)) || len < header_size)
		return -EINVAL;
	switch (atomic_load_explicit(FR_A32(&hdr->magic), memory_order_acquire)) {
	case FPGAD_FRAMES_MAGIC:
		break;
	case 0:
		return -EAGAIN;
	default:
		return -EINVAL;
	}
	if (hdr->version_major != FPGAD_FRAMES_VERSION_MAJOR)
		return -EPROTONOSUPPORT;
	if (hdr->header_size < header_size ||
	    hdr->header_size % FPGAD_FRAMES_LINE ||
	    hdr->desc_size < FPGAD_FRAMES_DESC_MIN_SIZE ||
	    hdr->desc_size % _Alignof(uint64_t))
		return -EINVAL;
	if (!is_pow2(hdr->desc_count) ||
	    hdr->desc_count > FPGAD_FRAMES_MAX_DESCS ||
	    hdr->slot_count == 0 || hdr->desc_count < hdr->slot_count)
		return -EINVAL;
	if (hdr->slot_size == 0 || hdr->frame_size > hdr->slot_size)
		return -EINVAL;
	if (atomic_load_explicit(FR_A64(&hdr->generation),
				 memory_order_relaxed) == 0)
		return -EINVAL;
	/* Both factors are bounded above, so this cannot overflow. */
	need = (uint64_t)hdr->header_size +
	       (uint64_t)hdr->desc_count * hdr->desc_size;
	if (need > len)
		return -EINVAL;
	return 0;
}

