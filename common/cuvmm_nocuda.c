// SPDX-License-Identifier: MIT
/* cuvmm_nocuda.c - VMM rings in a build without CUDA (cuvmm.h): none. */
#include <errno.h>
#include <stdio.h>

#include "cuvmm.h"

static int nocuda(char *why, size_t whylen)
{
	snprintf(why, whylen, "built without CUDA");
	return -ENODEV;
}

int cuvmm_caps(int ordinal, struct cuvmm_caps *ret, char *why, size_t whylen)
{
	(void)ordinal;
	(void)ret;
	return nocuda(why, whylen);
}

int cuvmm_granule(int ordinal, size_t *ret, char *why, size_t whylen)
{
	(void)ordinal;
	(void)ret;
	return nocuda(why, whylen);
}

int cuvmm_alloc(int ordinal, size_t size, struct cuvmm *ret, int *ret_fd,
		char *why, size_t whylen)
{
	(void)ordinal;
	(void)size;
	(void)ret;
	(void)ret_fd;
	return nocuda(why, whylen);
}

int cuvmm_import(int fd, size_t size, int owner, int user, struct cuvmm *ret,
		 char *why, size_t whylen)
{
	(void)fd;
	(void)size;
	(void)owner;
	(void)user;
	(void)ret;
	return nocuda(why, whylen);
}

void cuvmm_free(struct cuvmm *m)
{
	(void)m;
}
