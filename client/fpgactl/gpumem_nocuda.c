// SPDX-License-Identifier: MIT
/* gpumem_nocuda.c - fpgactl built without CUDA: no GPU memory of its own. */
#include <errno.h>
#include <stdio.h>

#include "fpgactl.h"

int gpumem_alloc(uint64_t len, void **ret_ptr, char *why, size_t whylen)
{
	(void)len;
	(void)ret_ptr;
	snprintf(why, whylen, "fpgactl was built without CUDA");
	return -ENODEV;
}

void gpumem_free(void *ptr)
{
	(void)ptr;
}
