// SPDX-License-Identifier: MIT
/*
 * test_mem_integrated.c - rings of an integrated GPU without one: the
 * INTEGRATED attribute's rule and its test override, a ring made of host
 * memory through a fake mapper standing in for cudaHostRegister, and the
 * card pinning it as host memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "device/device.h"
#include "memory/memory.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif

static void test_attribute(void **state)
{
	(void)state;
	unsetenv("FPGAD_TEST_GPU_INTEGRATED");
	assert_true(memory_gpu_integrated(1));
	assert_false(memory_gpu_integrated(0));
	/* The driver could not say: a discrete GPU, as before. */
	assert_false(memory_gpu_integrated(-1));
	/* The override takes the integrated path on a discrete GPU, and back. */
	setenv("FPGAD_TEST_GPU_INTEGRATED", "1", 1);
	assert_true(memory_gpu_integrated(0));
	assert_true(memory_gpu_integrated(-1));
	setenv("FPGAD_TEST_GPU_INTEGRATED", "0", 1);
	assert_false(memory_gpu_integrated(1));
	setenv("FPGAD_TEST_GPU_INTEGRATED", "", 1);
	assert_true(memory_gpu_integrated(1));
	unsetenv("FPGAD_TEST_GPU_INTEGRATED");
}

/* The fake mapper: what it was asked, and what it answers. */
static struct {
	int maps, unmaps, fail;
	void *host;
	size_t len;
	int gpu;
	bool mapped;		/* between map and unmap */
} fake;
static char fake_gpu_mem[64];

static int fake_map(void *host, size_t len, int gpu, void **ret_dev)
{
	fake.maps++;
	if (fake.fail)
		return fake.fail;
	fake.host = host;
	fake.len = len;
	fake.gpu = gpu;
	fake.mapped = true;
	*ret_dev = fake_gpu_mem;
	return 0;
}

static void fake_unmap(void *host, int gpu)
{
	fake.unmaps++;
	assert_ptr_equal(host, fake.host);
	assert_int_equal(gpu, fake.gpu);
	/* Unregistered while the mapping is still there. */
	assert_int_equal(msync(host, fake.len, MS_ASYNC), 0);
	fake.mapped = false;
}

static const struct memory_host_mapper fake_mapper = {
	.map = fake_map, .unmap = fake_unmap,
};

static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_ring_is_host_memory(void **state)
{
	struct mem_region *r = NULL;
	void *w;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	assert_int_equal(memory_integrated_alloc(5000, 3, "c2h0", MEMORY_LESSEE_READS,
						 &fake_mapper, &r), 0);
	assert_int_equal(r->kind, MEMORY_CUDA);
	assert_true(r->integrated);
	/* Handed to the lessee as host memory, with no IPC handle or VMM. */
	assert_int_equal(r->gpu_export, GPU_EXPORT_HOST);
	assert_int_equal(r->vmm.va, 0);
	assert_int_equal(r->gpu, 3);
	assert_int_equal(r->size, 8192);
	/* The GPU reads the host mapping, at the address the mapper gave. */
	assert_non_null(r->host);
	assert_int_equal(fake.maps, 1);
	assert_ptr_equal(fake.host, r->host);
	assert_int_equal(fake.len, r->size);
	assert_int_equal(fake.gpu, 3);
	assert_ptr_equal(r->dev, fake_gpu_mem);
	/* A memfd for the lessee, sealed as a host ring is: read-only for it. */
	assert_true(r->fd >= 0);
	assert_true(fcntl(r->fd, F_GET_SEALS) & F_SEAL_SHRINK);
	w = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	assert_true(w == MAP_FAILED);
	memset(r->host, 0x5a, r->size);
	memory_integrated_free(r);
	assert_int_equal(fake.unmaps, 1);
	assert_false(fake.mapped);
}

static void test_h2c_ring_writable(void **state)
{
	struct mem_region *r = NULL;
	void *w;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	assert_int_equal(memory_integrated_alloc(4096, 0, "h2c0", 0, &fake_mapper, &r), 0);
	w = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	assert_true(w != MAP_FAILED);
	munmap(w, r->size);
	memory_integrated_free(r);
	assert_int_equal(fake.unmaps, 1);
}

static void test_map_fails(void **state)
{
	struct mem_region *r = NULL;
	unsigned before = open_fds();

	(void)state;
	memset(&fake, 0, sizeof(fake));
	fake.fail = -EIO;
	assert_int_equal(memory_integrated_alloc(4096, 0, "c2h0", MEMORY_LESSEE_READS,
						 &fake_mapper, &r), -EIO);
	assert_null(r);
	assert_int_equal(fake.unmaps, 0);
	/* Nothing left behind: the memfd went with the mapping. */
	assert_int_equal(open_fds(), before);
	/* Bad sizes are the host backend's. */
	fake.fail = 0;
	assert_int_equal(memory_integrated_alloc(0, 0, "c2h0", 0, &fake_mapper, &r), -EINVAL);
	assert_int_equal(fake.maps, 1);
	memory_integrated_free(NULL);
}

/* A device that records what it was asked to pin. */
static struct dev_region pinned;
static int exports;

static int rec_pin(struct device_queue *q, const struct dev_region *reg,
		   uint64_t *ret_handle)
{
	(void)q;
	pinned = *reg;
	*ret_handle = 7;
	return 0;
}

static int rec_export(struct mem_region *r, uint64_t offset, uint64_t len,
		      int *ret_fd)
{
	(void)r;
	(void)offset;
	(void)len;
	(void)ret_fd;
	exports++;
	return -EOPNOTSUPP;
}

static const struct device_ops rec_ops = { .name = "rec", .pin = rec_pin };
static const struct memory_ops rec_mops = { .name = "rec", .export_dmabuf = rec_export };

static void test_card_writes_host_memory(void **state)
{
	struct mem_region *r = NULL;
	struct mem_region gpu = {
		.kind = MEMORY_CUDA, .size = 4096, .dev = fake_gpu_mem, .gpu = 1, .fd = -1,
	};
	uint64_t h = 0;

	(void)state;
	memset(&fake, 0, sizeof(fake));
	assert_int_equal(memory_integrated_alloc(4096, 1, "c2h0", 0, &fake_mapper, &r), 0);
	exports = 0;
	assert_int_equal(device_pin_region(&rec_ops, NULL, &rec_mops, r, &h), 0);
	assert_int_equal(h, 7);
	/* Host memory by address: no dma-buf of GPU memory asked for. */
	assert_int_equal(pinned.kind, DEV_REGION_HOST);
	assert_ptr_equal(pinned.addr, r->host);
	assert_int_equal(pinned.length, r->size);
	assert_int_equal(exports, 0);
	memory_integrated_free(r);

	/* A discrete GPU's ring still goes as GPU memory. */
	assert_int_equal(device_pin_region(&rec_ops, NULL, &rec_mops, &gpu, &h), 0);
	assert_int_equal(exports, 1);
	assert_int_equal(pinned.kind, DEV_REGION_CUDA);
	assert_ptr_equal(pinned.addr, fake_gpu_mem);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attribute),
		cmocka_unit_test(test_ring_is_host_memory),
		cmocka_unit_test(test_h2c_ring_writable),
		cmocka_unit_test(test_map_fails),
		cmocka_unit_test(test_card_writes_host_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
