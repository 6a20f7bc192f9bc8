/* SPDX-License-Identifier: MIT */
/*
 * fpgad_abi.h - the layout checks of fpgad's shared-memory ABIs
 * (fpgad_frames.h, fpgad_xfer.h): each field's offset and each struct's
 * size asserted at compile time, in C11 and C++11 alike, so that a change
 * that moves a field fails to build instead of misreading memory shared
 * with another process.  Compilers older than both check nothing.
 */
#ifndef FPGAD_ABI_H
#define FPGAD_ABI_H

#include <stddef.h>

#if defined(__cplusplus) && __cplusplus >= 201103L
#define FPGAD_ABI_ASSERT(e, m) static_assert(e, m)
#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define FPGAD_ABI_ASSERT(e, m) _Static_assert(e, m)
#else
#define FPGAD_ABI_ASSERT(e, m)
#endif

/* struct @type's @field is at byte @off. */
#define FPGAD_ABI_AT(type, field, off) \
	FPGAD_ABI_ASSERT(offsetof(struct type, field) == (off), \
			 #type "." #field " offset")

#endif
