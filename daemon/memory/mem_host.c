// SPDX-License-Identifier: MIT
/*
 * mem_host.c - the host memory backend: each ring is a sealed memfd.
 *
 * The memory is allocated in full when the ring is made (fallocate), so a
 * ring that does not fit fails then, with a message, never later with a
 * SIGBUS.  It is mapped by fpgad, then sealed against shrinking and
 * growing (and, for memory the lessee only reads, against new writable
 * mappings): whatever a lessee does with the descriptor it is handed, it
 * cannot make fpgad's mapping fault.  There is no name to squat and
 * nothing is left behind when the last holder of the descriptor dies.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "memory/memory.h"
#include "log.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

static void memory_host_free(struct mem_region *r)
{
	if (!r)
		return;
	if (r->host)
		munmap(r->host, r->size);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

/* Bytes of memory the system could still give, from /proc/meminfo. */
static uint64_t memory_available(void)
{
	FILE *f = fopen("/proc/meminfo", "re");
	unsigned long long kb = 0;
	char line[128];

	if (!f)
		return UINT64_MAX;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb ? (uint64_t)kb * 1024u : UINT64_MAX;
}

static int memory_host_alloc(size_t size, const char *gpu,
			     const char *name_hint, unsigned flags,
			     struct mem_region **ret_region)
{
	unsigned seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	const char *name = name_hint && name_hint[0] ? name_hint : "fpgad";
	struct mem_region *r;
	void *map;
	int ret;

	(void)gpu;
	if (!size || size > SIZE_MAX - MEMORY_SLOT_ALIGN ||
	    size + MEMORY_SLOT_ALIGN - 1 > (size_t)INT64_MAX)
		return -EINVAL;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->kind = MEMORY_HOST;
	r->size = (size + MEMORY_SLOT_ALIGN - 1) / MEMORY_SLOT_ALIGN *
		  MEMORY_SLOT_ALIGN;
	r->gpu = -1;

	r->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0) {
		ret = -errno;
		goto fail;
	}
	if (ftruncate(r->fd, (off_t)r->size) < 0) {
		ret = -errno;
		goto fail;
	}
	/* Every page now: a ring that does not fit is refused here. */
	if (r->size > memory_available()) {
		ret = -ENOMEM;	/* fallocate would wake the OOM killer first */
		goto fail;
	}
	ret = posix_fallocate(r->fd, 0, (off_t)r->size);
	if (ret) {
		ret = -ret;
		goto fail;
	}
	map = mmap(NULL, r->size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, r->fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		goto fail;
	}
	r->host = map;
	/*
	 * After fpgad's own writable mapping, which the seal spares.  A
	 * kernel without F_SEAL_FUTURE_WRITE (before 5.1, or a sandbox's)
	 * gets the other seals: a lessee could then write into frames it
	 * reads, its own and its shared readers' (same uid), never make
	 * fpgad's mapping fault.
	 */
	if ((flags & MEMORY_LESSEE_READS) &&
	    fcntl(r->fd, F_ADD_SEALS, seals | F_SEAL_FUTURE_WRITE) == 0)
		goto sealed;
	if (fcntl(r->fd, F_ADD_SEALS, seals) < 0) {
		ret = -errno;
		goto fail;
	}
sealed:
	*ret_region = r;
	return 0;

fail:
	memory_host_free(r);
	return ret;
}

/*
 * Host memory has no dma-buf exporter here.  udmabuf (the memfd plus
 * UDMABUF_CREATE) could provide one for PIN_DMABUF; until then the device
 * pins host rings by address.
 */
static int memory_host_export_dmabuf(struct mem_region *r, uint64_t offset,
				     uint64_t len, int *ret_fd)
{
	(void)r;
	(void)offset;
	(void)len;
	(void)ret_fd;
	return -EOPNOTSUPP;
}

/*
 * Whether @fd is shmem (a memfd or a tmpfs file): hugetlbfs memory can
 * run out under a mapping and a file on disk can fail to read back, and
 * either raises SIGBUS in whoever touches it.
 */
static int memory_host_check_fs(int fd, char *why, size_t whylen)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0) {
		snprintf(why, whylen, "fstatfs: %s", strerror(errno));
		return -EINVAL;
	}
	if (sf.f_type == HUGETLBFS_MAGIC) {
		snprintf(why, whylen, "hugetlbfs memory is refused: a huge page "
			 "that cannot be allocated would fault under fpgad");
		return -EINVAL;
	}
	if (sf.f_type != TMPFS_MAGIC) {
		snprintf(why, whylen, "not shared memory (filesystem type 0x%llx):"
			 " only a memfd without MFD_HUGETLB is accepted",
			 (unsigned long long)sf.f_type);
		return -EINVAL;
	}
	return 0;
}

/*
 * Whether every page of @st's memfd is allocated: fpgad must not be the
 * one that fills a sparse buffer (the pages would be charged to fpgad's
 * memory cgroup, not the client's).  shmem counts its pages, fallocated
 * or swapped out alike, in st_blocks; SEEK_HOLE would not do, as it
 * counts a fallocated page that was never written as a hole.
 */
static int memory_host_check_allocated(const struct stat *st, char *why,
				       size_t whylen)
{
	if ((uint64_t)st->st_blocks * 512u < (uint64_t)st->st_size) {
		snprintf(why, whylen, "the memfd is sparse (%llu of %lld bytes "
			 "allocated): allocate it in full first (fallocate)",
			 (unsigned long long)st->st_blocks * 512u,
			 (long long)st->st_size);
		return -EINVAL;
	}
	return 0;
}

/*
 * A client's memfd, for card transfers: shmem (no hugetlbfs, no file),
 * sealed against shrinking, and allocated in full, so that what fpgad
 * maps holds pages that are already the client's.  A client can still
 * punch holes later (no seal forbids that and allows writing): the copies
 * that touch it run under fault_guard_copy(), and refilling a hole costs
 * at most the buffer's length, which the client once held itself.
 */
static int memory_host_import(const struct mem_import *imp,
			      struct mem_region **ret_region, char *why,
			      size_t whylen)
{
	struct mem_region *r;
	struct stat st;
	void *map;
	int seals, ret;

	ret = memory_host_check_fs(imp->fd, why, whylen);
	if (ret)
		return ret;
	seals = fcntl(imp->fd, F_GET_SEALS);
	if (seals < 0) {
		snprintf(why, whylen, "not a memfd (F_GET_SEALS: %s)",
			 strerror(errno));
		return -EINVAL;
	}
	if (!(seals & F_SEAL_SHRINK)) {
		snprintf(why, whylen, "the memfd is not sealed against "
			 "shrinking (F_SEAL_SHRINK)");
		return -EINVAL;
	}
	if (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) {
		snprintf(why, whylen, "the memfd is sealed against writing");
		return -EINVAL;
	}
	if (fstat(imp->fd, &st) < 0 || !imp->length ||
	    (uint64_t)st.st_size < imp->length || imp->length > SIZE_MAX) {
		snprintf(why, whylen, "the memfd holds %lld bytes, %llu asked for",
			 (long long)st.st_size, (unsigned long long)imp->length);
		return -EINVAL;
	}
	ret = memory_host_check_allocated(&st, why, whylen);
	if (ret)
		return ret;
	map = mmap(NULL, imp->length, PROT_READ | PROT_WRITE, MAP_SHARED,
		   imp->fd, 0);
	if (map == MAP_FAILED) {
		snprintf(why, whylen, "cannot map the memfd: %s",
			 strerror(errno));
		return -errno;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		munmap(map, imp->length);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	r->kind = MEMORY_HOST;
	r->size = imp->length;
	r->host = map;
	r->gpu = -1;
	r->fd = imp->fd;
	r->imported = true;
	*ret_region = r;
	return 0;
}

const struct memory_ops memory_host_ops = {
	.name = "host",
	.alloc = memory_host_alloc,
	.free = memory_host_free,
	.export_dmabuf = memory_host_export_dmabuf,
	.import = memory_host_import,
};
