// SPDX-License-Identifier: MIT
/*
 * mem_host.c - the host memory backend: ring slots in POSIX shared memory.
 *
 * Each ring is one shared-memory object "/fpgad.<pid>.<hint>.<n>", created
 * exclusively with mode 0600 and mapped by the daemon; the lease holder
 * opens it by name (after grant() made it the owner when fpgad runs as
 * root) and maps it too.  The name stays until free() unlinks it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "memory.h"

/* Names tried before giving up, should stale objects hold the first ones. */
#define MEMORY_HOST_NAME_TRIES 1024u
#define MEMORY_HOST_HINT_MAX 24u

/* Keep the readable part of @hint: letters, digits, '-' and '_'. */
static void memory_host_hint(const char *hint, char *out, size_t len)
{
	size_t i, n = 0;

	for (i = 0; hint && hint[i] && n + 1 < len; i++) {
		char c = hint[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_')
			out[n++] = c;
	}
	if (!n && len > 3)
		n = (size_t)snprintf(out, len, "mem");
	out[n] = '\0';
}

/* Create a fresh object; writes its name and returns the fd. */
static int memory_host_create(const char *hint, char *name, size_t len)
{
	char h[MEMORY_HOST_HINT_MAX + 1];
	unsigned i;

	memory_host_hint(hint, h, sizeof(h));
	for (i = 0; i < MEMORY_HOST_NAME_TRIES; i++) {
		int fd;

		snprintf(name, len, "/fpgad.%ld.%s.%u", (long)getpid(), h, i);
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
			      0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

static void memory_host_free(struct mem_region *r)
{
	if (!r)
		return;
	if (r->host)
		munmap(r->host, r->size);
	if (r->shm_fd >= 0)
		close(r->shm_fd);
	if (r->shm_name[0])
		shm_unlink(r->shm_name);
	free(r);
}

static int memory_host_alloc(size_t size, const char *gpu,
			     const char *name_hint,
			     struct mem_region **ret_region)
{
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
	r->shm_fd = -1;

	ret = memory_host_create(name_hint, r->shm_name, sizeof(r->shm_name));
	if (ret < 0) {
		log_err("memory: cannot create shared memory for %s: %s",
			name_hint ? name_hint : "a ring", strerror(-ret));
		r->shm_name[0] = '\0';
		goto fail;
	}
	r->shm_fd = ret;

	if (ftruncate(r->shm_fd, (off_t)r->size) < 0) {
		ret = -errno;
		log_err("memory: %s: cannot size it to %zu bytes: %s",
			r->shm_name, r->size, strerror(-ret));
		goto fail;
	}
	/* Populate now: page faults belong at setup, not in the data path. */
	map = mmap(NULL, r->size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, r->shm_fd, 0);
	if (map == MAP_FAILED) {
		ret = -errno;
		log_err("memory: %s: cannot map %zu bytes: %s", r->shm_name,
			r->size, strerror(-ret));
		goto fail;
	}
	r->host = map;

	*ret_region = r;
	return 0;

fail:
	memory_host_free(r);
	return ret;
}

static int memory_host_grant(struct mem_region *r, uid_t uid)
{
	uid_t self = geteuid();

	if (!r || r->shm_fd < 0)
		return -EINVAL;
	/* Only root can hand the object over; others share their own uid. */
	if (self != 0 || uid == self)
		return 0;
	if (fchown(r->shm_fd, uid, (gid_t)-1) < 0) {
		int ret = -errno;

		log_err("memory: %s: cannot give it to uid %ld: %s",
			r->shm_name, (long)uid, strerror(-ret));
		return ret;
	}
	return 0;
}

/*
 * Host memory has no dma-buf exporter here.  udmabuf (memfd plus
 * UDMABUF_CREATE) could provide one for PIN_DMABUF later; until then the
 * device pins host rings by address.
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

const struct memory_ops memory_host_ops = {
	.name = "host",
	.alloc = memory_host_alloc,
	.free = memory_host_free,
	.grant = memory_host_grant,
	.export_dmabuf = memory_host_export_dmabuf,
};
