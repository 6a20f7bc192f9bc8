// SPDX-License-Identifier: MIT
/*
 * buffer.c - buffers registered for card transfers (fpgad.h): host memory
 * the library makes (a sealed memfd, mapped here and handed to fpgad over
 * the handoff socket), CUDA device memory (exported with IPC, opened by
 * fpgad), their transfer mode, and their views: the host view of a GPU
 * buffer is copied only when it is stale (owner.c).  The registration on
 * the connection is xfer_ctx.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client_internal.h"

/* Register @b on @c and keep it in @c's list, or free it. */
static int buffer_add(fpgad_client *c, fpgad_buffer *b, fpgad_buffer **ret_buf)
{
	struct xfer_ctx *xf;
	int r;

	b->c = c;
	r = xfer_ready(c, &xf);
	if (r == 0)
		r = xfer_ctx_register(c, b);
	if (r) {
		b->c = NULL;
		fpgad_buffer_unregister(b);
		return r;
	}
	b->next = xf->buffers;
	xf->buffers = b;
	*ret_buf = b;
	return 0;
}

static fpgad_buffer *buffer_new(enum fpgad_memory memory, uint64_t length)
{
	fpgad_buffer *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->memory = memory;
	b->length = length;
	b->memfd = -1;
	b->mode = FPGAD_MODE_AUTO;
	b->info.memory = memory;
	b->info.length = length;
	b->info.gpu = -1;
	owner_init(&b->owner, memory == FPGAD_MEMORY_HOST);
	return b;
}

int fpgad_buffer_alloc_host(fpgad_client *c, uint64_t length,
			    fpgad_buffer **ret_buf)
{
	long page = sysconf(_SC_PAGESIZE);
	uint64_t len;
	fpgad_buffer *b;
	void *map;
	int fd;

	if (!length || page <= 0 || length > (uint64_t)INT64_MAX - (uint64_t)page) {
		conn_set_errmsg(c, "a host buffer of %llu bytes",
				(unsigned long long)length);
		return -EINVAL;
	}
	len = (length + (uint64_t)page - 1) / (uint64_t)page * (uint64_t)page;
	fd = memfd_create("fpgad-buffer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	/*
	 * Allocated in full (fpgad refuses a sparse buffer: its pages are
	 * charged to this process, not to fpgad) and sealed: fpgad's
	 * mapping of it can never lose a page.
	 */
	if (ftruncate(fd, (off_t)len) < 0 ||
	    (errno = posix_fallocate(fd, 0, (off_t)len)) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		int e = -errno;

		close(fd);
		return e;
	}
	b = buffer_new(FPGAD_MEMORY_HOST, len);
	if (!b) {
		munmap(map, len);
		close(fd);
		return -ENOMEM;
	}
	b->data = map;
	b->memfd = fd;
	return buffer_add(c, b, ret_buf);
}

int fpgad_buffer_register(fpgad_client *c, void *ptr, uint64_t length,
			  unsigned flags, fpgad_buffer **ret_buf)
{
	char why[192] = "";
	fpgad_buffer *b;
	int gpu = -1, r;

	if (flags || !ptr || !length) {
		conn_set_errmsg(c, "fpgad_buffer_register: %s", flags ?
				"flags must be 0" : "no memory named");
		return -EINVAL;
	}
	r = gpu_pointer(ptr, &gpu, why, sizeof(why));
	if (r < 0) {
		conn_set_errmsg(c, "memory at %p: %s", ptr, why);
		return r;
	}
	if (r == 0) {
		conn_set_errmsg(c, "memory at %p is host memory, which fpgad "
				"cannot reach: use fpgad_buffer_alloc_host()", ptr);
		return -EINVAL;
	}
	b = buffer_new(FPGAD_MEMORY_CUDA, length);
	if (!b)
		return -ENOMEM;
	b->data = ptr;
	b->info.gpu = gpu;
	r = gpu_export(ptr, gpu, b->ipc_handle, &b->ipc_offset, b->gpu_bus_id,
		       sizeof(b->gpu_bus_id), why, sizeof(why));
	if (r) {
		conn_set_errmsg(c, "GPU memory at %p: %s", ptr, why);
		free(b);
		return r;
	}
	return buffer_add(c, b, ret_buf);
}

int fpgad_buffer_unregister(fpgad_buffer *b)
{
	fpgad_client *c;
	int r = 0;

	if (!b)
		return 0;
	c = b->c;
	if (b->pending) {
		conn_set_errmsg(c, "buffer %llu: %u transfers not reaped yet",
				(unsigned long long)b->id, b->pending);
		return -EBUSY;
	}
	if (c && c->xf) {
		for (fpgad_buffer **pp = &c->xf->buffers; *pp;
		     pp = &(*pp)->next) {
			if (*pp == b) {
				*pp = b->next;
				break;
			}
		}
		if (b->id)
			r = xfer_ctx_unregister(c, b->id);
	}
	if (b->memory == FPGAD_MEMORY_HOST && b->data)
		munmap(b->data, b->length);
	if (b->memfd >= 0)
		close(b->memfd);
	gpu_host_free(b->host);
	free(b);
	return r;
}

void buffer_close_all(fpgad_client *c)
{
	struct xfer_ctx *xf = c->xf;

	while (xf && xf->buffers) {
		fpgad_buffer *b = xf->buffers;

		/* The registrations end with the connection. */
		b->pending = 0;
		xf->buffers = b->next;
		b->next = NULL;
		b->c = NULL;
		fpgad_buffer_unregister(b);
	}
}

void *fpgad_buffer_data(const fpgad_buffer *b)
{
	return b->data;
}

void fpgad_buffer_get_info(const fpgad_buffer *b,
			   struct fpgad_buffer_info *ret_info)
{
	*ret_info = b->info;
}

int fpgad_buffer_set_mode(fpgad_buffer *b, enum fpgad_mode mode)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__SetBufferModeRequest body = FPGAD__SET_BUFFER_MODE_REQUEST__INIT;
	Fpgad__Response *resp;
	struct xfer_ctx *xf;
	int r;

	if (!b->c || (unsigned)mode > FPGAD_MODE_HOST)
		return -EINVAL;
	r = xfer_ready(b->c, &xf);
	if (r)
		return r;
	body.buffer_id = b->id;
	body.mode = (char *)xfer_mode_name(mode);
	req.body_case = FPGAD__REQUEST__BODY_SET_BUFFER_MODE;
	req.set_buffer_mode = &body;
	r = conn_request(b->c, &req, FPGAD__RESPONSE__BODY_SET_BUFFER_MODE, &resp);
	if (r)
		return r;
	b->mode = mode;
	b->info.mode = xfer_mode_of(resp->set_buffer_mode->mode);
	snprintf(b->info.mode_reason, sizeof(b->info.mode_reason), "%s",
		 resp->set_buffer_mode->mode_reason);
	fpgad__response__free_unpacked(resp, NULL);
	return 0;
}

/* --- views ----------------------------------------------------------------- */

int fpgad_buffer_host(fpgad_buffer *b, void **ret_ptr)
{
	int r;

	if (b->memory == FPGAD_MEMORY_HOST) {
		*ret_ptr = b->data;
		return 0;
	}
	if (!b->host) {
		r = gpu_host_alloc(b->length, &b->host);
		if (r) {
			b->host = NULL;
			return r;
		}
	}
	if (owner_need(&b->owner, OWNER_HOST) == OWNER_TO_HOST) {
		r = gpu_to_host(b->host, b->data, b->length);
		if (r)
			return r;
		owner_copied(&b->owner, OWNER_TO_HOST);
		b->copies++;
	}
	*ret_ptr = b->host;
	return 0;
}

void fpgad_buffer_wrote(fpgad_buffer *b, enum fpgad_writer who)
{
	if (who == FPGAD_WRITER_HOST && b->memory == FPGAD_MEMORY_CUDA &&
	    !b->host)
		return;	/* there is no host view to have written */
	owner_wrote(&b->owner, who);
}

enum fpgad_writer fpgad_buffer_last_writer(const fpgad_buffer *b)
{
	return (enum fpgad_writer)b->owner.writer;
}

uint64_t fpgad_buffer_copies(const fpgad_buffer *b)
{
	return b->copies;
}
