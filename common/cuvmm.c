// SPDX-License-Identifier: MIT
/* cuvmm.c - the ring export's choice and names (cuvmm.h); no GPU needed. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cuvmm.h"

const char *gpu_export_name(enum gpu_export e)
{
	return e == GPU_EXPORT_FD ? "fd" : e == GPU_EXPORT_HOST ? "host" : "ipc";
}

int gpu_export_parse(const char *s, enum gpu_export *ret)
{
	if (!s || !s[0] || !strcmp(s, "ipc"))
		*ret = GPU_EXPORT_IPC;
	else if (!strcmp(s, "fd"))
		*ret = GPU_EXPORT_FD;
	else if (!strcmp(s, "host"))
		*ret = GPU_EXPORT_HOST;
	else
		return -EINVAL;
	return 0;
}

int gpu_export_choose(const struct cuvmm_caps *caps, const char *force,
		      enum gpu_export *ret, char *why, size_t whylen)
{
	const char *lacks = !caps->vmm ? "virtual memory management" :
			    !caps->posix_fd ? "POSIX file descriptor handles" :
			    !caps->rdma ? "GPUDirect RDMA on VMM memory" : NULL;
	enum gpu_export want;

	snprintf(why, whylen, "%s", "");
	if (force && force[0]) {
		if (gpu_export_parse(force, &want) < 0 || want == GPU_EXPORT_HOST) {
			snprintf(why, whylen, "%s=%s: want fd or ipc",
				 GPU_EXPORT_ENV, force);
			return -EINVAL;
		}
		if (want == GPU_EXPORT_FD && lacks) {
			snprintf(why, whylen, "%s=fd: the GPU has no %s",
				 GPU_EXPORT_ENV, lacks);
			return -EOPNOTSUPP;
		}
		if (want == GPU_EXPORT_IPC)
			snprintf(why, whylen, "%s=ipc", GPU_EXPORT_ENV);
		*ret = want;
		return 0;
	}
	if (lacks)
		snprintf(why, whylen, "the GPU has no %s", lacks);
	*ret = lacks ? GPU_EXPORT_IPC : GPU_EXPORT_FD;
	return 0;
}

size_t cuvmm_round(size_t size, size_t granule)
{
	if (!granule || size > (size_t)-1 - (granule - 1))
		return 0;
	return (size + granule - 1) & ~(granule - 1);
}
