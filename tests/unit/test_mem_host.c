// SPDX-License-Identifier: MIT
/* test_mem_host.c - the host memory backend and the memory backend table. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "memory/memory.h"

static void test_alloc_rounds_and_aligns(void **state)
{
	struct mem_region *r = NULL;
	struct stat st;
	char link[64], target[256];
	ssize_t n;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(5000, NULL, "ring0", 0, &r), 0);
	assert_non_null(r);
	assert_int_equal(r->kind, MEMORY_HOST);
	assert_int_equal(r->size, 8192);
	assert_non_null(r->host);
	assert_int_equal((uintptr_t)r->host % MEMORY_SLOT_ALIGN, 0);
	assert_null(r->dev);
	assert_true(r->fd >= 0);
	assert_int_equal(fstat(r->fd, &st), 0);
	assert_int_equal(st.st_size, 8192);
	/* Every page is allocated already: nothing can fault later. */
	assert_true((uint64_t)st.st_blocks * 512 >= 8192);
	/* A memfd, named after the hint, with no name in any file system. */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", r->fd);
	n = readlink(link, target, sizeof(target) - 1);
	assert_true(n > 0);
	target[n] = '\0';
	assert_non_null(strstr(target, "memfd:ring0"));
	/* Writable end to end. */
	memset(r->host, 0x5a, r->size);
	memory_host_ops.free(r);
}

static void test_exact_size(void **state)
{
	struct mem_region *r = NULL;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(3 * MEMORY_SLOT_ALIGN, NULL,
					       "x", 0, &r), 0);
	assert_int_equal(r->size, 3 * MEMORY_SLOT_ALIGN);
	memory_host_ops.free(r);
}

/* What a lessee does with the descriptor it is handed. */
static void test_second_mapping_sees_writes(void **state)
{
	struct mem_region *r = NULL;
	unsigned char *m;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "two", 0, &r), 0);
	m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	assert_true(m != MAP_FAILED);
	((unsigned char *)r->host)[100] = 0x42;
	assert_int_equal(m[100], 0x42);
	m[200] = 0x24;
	assert_int_equal(((unsigned char *)r->host)[200], 0x24);
	munmap(m, 4096);
	memory_host_ops.free(r);
}

/* A lessee cannot shrink or grow the memory under fpgad's mapping. */
static void test_sealed(void **state)
{
	struct mem_region *r = NULL;
	int seals;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(8192, NULL, "sealed", 0, &r), 0);
	seals = fcntl(r->fd, F_GET_SEALS);
	assert_true(seals & F_SEAL_SHRINK);
	assert_true(seals & F_SEAL_GROW);
	assert_true(seals & F_SEAL_SEAL);
	assert_int_equal(ftruncate(r->fd, 0), -1);
	assert_int_equal(errno, EPERM);
	assert_int_equal(ftruncate(r->fd, 1 << 20), -1);
	assert_int_equal(errno, EPERM);
	assert_int_not_equal(posix_fallocate(r->fd, 0, 1 << 20), 0);
	/* Nor unseal it. */
	assert_int_equal(fcntl(r->fd, F_ADD_SEALS, F_SEAL_WRITE), -1);
	assert_int_equal(errno, EPERM);
	/* fpgad's mapping still works. */
	memset(r->host, 1, r->size);
	/* Without MEMORY_LESSEE_READS a lessee may write (h2c rings). */
	{
		void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED,
			       r->fd, 0);

		assert_true(m != MAP_FAILED);
		munmap(m, 8192);
	}
	memory_host_ops.free(r);
}

/* A ring the lessee only reads: no writable mapping for it, ever. */
static void test_lessee_reads(void **state)
{
	struct mem_region *r = NULL;
	char path[64];
	void *m;
	int fd;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(8192, NULL, "ro",
					       MEMORY_LESSEE_READS, &r), 0);
	assert_true(fcntl(r->fd, F_GET_SEALS) & 0x10 /* F_SEAL_FUTURE_WRITE */);
	m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	assert_true(m == MAP_FAILED);
	assert_int_equal(errno, EPERM);
	m = mmap(NULL, 8192, PROT_READ, MAP_SHARED, r->fd, 0);
	assert_true(m != MAP_FAILED);
	/* Reopened read-write, it still refuses writes. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->fd);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), -1);
	assert_int_equal(errno, EPERM);
	close(fd);
	/* fpgad's own writable mapping keeps working; the lessee sees it. */
	((unsigned char *)r->host)[10] = 7;
	assert_int_equal(((unsigned char *)m)[10], 7);
	munmap(m, 8192);
	memory_host_ops.free(r);
}

/* A descriptor the lessee keeps outlives fpgad's: nothing is left behind. */
static void test_free_keeps_lessee_mapping(void **state)
{
	struct mem_region *r = NULL;
	unsigned char *m;
	int fd;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "gone", 0, &r), 0);
	fd = dup(r->fd);
	assert_true(fd >= 0);
	memset(r->host, 9, 4096);
	memory_host_ops.free(r);
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(m[4095], 9);
	munmap(m, 4096);
	close(fd);
	memory_host_ops.free(NULL);
}

/* A ring that cannot be had is refused when it is made, not later. */
static void test_too_large(void **state)
{
	struct mem_region *r = (void *)0x1;

	(void)state;
	assert_int_equal(memory_host_ops.alloc((size_t)1 << 50, NULL, "huge", 0,
					       &r), -ENOMEM);
	assert_ptr_equal(r, (void *)0x1);
}

static void test_bad_size(void **state)
{
	struct mem_region *r = (void *)0x1;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(0, NULL, "z", 0, &r), -EINVAL);
	assert_int_equal(memory_host_ops.alloc(SIZE_MAX, NULL, "z", 0, &r),
			 -EINVAL);
	/* ret_* untouched on failure. */
	assert_ptr_equal(r, (void *)0x1);
}

static void test_no_dmabuf(void **state)
{
	struct mem_region *r = NULL;
	int fd = -7;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "dmabuf", 0, &r), 0);
	assert_int_equal(memory_host_ops.export_dmabuf(r, 0, 4096, &fd),
			 -EOPNOTSUPP);
	assert_int_equal(fd, -7);
	memory_host_ops.free(r);
}

static void test_ops_for(void **state)
{
	(void)state;
	assert_ptr_equal(memory_ops_for(MEMORY_HOST), &memory_host_ops);
	assert_null(memory_ops_for(MEMORY_AUTO));
	assert_ptr_equal(memory_ops_for(MEMORY_CUDA), &memory_cuda_ops);
	assert_string_equal(memory_host_ops.name, "host");
}

static void test_cuda_probe(void **state)
{
	char why[256] = "";
	int ordinal = -5, r;

	(void)state;
	r = memory_cuda_probe("", &ordinal, why, sizeof(why));
	if (r == 0) {
		assert_true(ordinal >= 0);
		print_message("a GPU answers: ordinal %d\n", ordinal);
		return;
	}
	assert_int_equal(r, -ENODEV);
	assert_int_equal(ordinal, -5);
	assert_true(why[0] != '\0');
	assert_null(strchr(why, '\n'));
#ifndef FPGAD_CUDA
	assert_string_equal(why, "built without CUDA");
#endif
	print_message("no GPU: %s\n", why);
}

/* A memfd of @len bytes sealed against shrinking, allocated or sparse. */
static int client_memfd(off_t len, bool allocated)
{
	int fd = memfd_create("client", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, len), 0);
	if (allocated)
		assert_int_equal(posix_fallocate(fd, 0, len), 0);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
	return fd;
}

static int try_import(int fd, uint64_t len, char *why, size_t whylen)
{
	struct mem_import imp = { .length = len, .fd = fd };
	struct mem_region *r = NULL;
	int ret;

	ret = memory_host_ops.import(&imp, &r, why, whylen);
	if (ret == 0) {
		r->fd = -1;	/* the caller's */
		memory_host_ops.free(r);
	}
	return ret;
}

/* An allocated memfd is taken; a sparse one is refused, saying so. */
static void test_import_sparse(void **state)
{
	char why[160] = "";
	int fd;

	(void)state;
	fd = client_memfd(1 << 20, true);
	assert_int_equal(try_import(fd, 1 << 20, why, sizeof(why)), 0);
	assert_int_equal(fallocate(fd, FALLOC_FL_PUNCH_HOLE |
				   FALLOC_FL_KEEP_SIZE, 65536, 4096), 0);
	assert_int_equal(try_import(fd, 1 << 20, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "the memfd is sparse (1044480 of 1048576"));
	close(fd);
	fd = client_memfd(1 << 20, false);
	assert_int_equal(try_import(fd, 4096, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "the memfd is sparse (0 of 1048576"));
	close(fd);
}

/* Not shmem: refused by filesystem type, before anything else. */
static void test_import_not_shmem(void **state)
{
	char why[160] = "";
	/* procfs; not /proc/self/stat, which qemu-user fakes with a tmpfs file. */
	int fd = open("/proc/version", O_RDONLY | O_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(try_import(fd, 4096, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not shared memory (filesystem type"));
	close(fd);
}

/* CUDA's GPUDirect RDMA write-ordering values, and the test override. */
static void test_rdma_order(void **state)
{
	(void)state;
	unsetenv("FPGAD_TEST_RDMA_ORDER");
	assert_int_equal(memory_rdma_order(0), RDMA_ORDER_NONE);
	assert_int_equal(memory_rdma_order(100), RDMA_ORDER_OWNER);
	assert_int_equal(memory_rdma_order(200), RDMA_ORDER_ALL);
	assert_int_equal(memory_rdma_order(-1), RDMA_ORDER_UNKNOWN);
	assert_int_equal(memory_rdma_order(50), RDMA_ORDER_UNKNOWN);
	/* Only rule none says the writes are flushed. */
	assert_non_null(strstr(memory_rdma_order_rule(RDMA_ORDER_NONE), "flushed"));
	assert_null(strstr(memory_rdma_order_rule(RDMA_ORDER_OWNER), "flushed"));
	assert_null(strstr(memory_rdma_order_rule(RDMA_ORDER_ALL), "flushed"));
	assert_non_null(strstr(memory_rdma_order_rule(RDMA_ORDER_UNKNOWN), "unknown"));
	setenv("FPGAD_TEST_RDMA_ORDER", "none", 1);
	assert_int_equal(memory_rdma_order(100), RDMA_ORDER_NONE);
	setenv("FPGAD_TEST_RDMA_ORDER", "all", 1);
	assert_int_equal(memory_rdma_order(0), RDMA_ORDER_ALL);
	setenv("FPGAD_TEST_RDMA_ORDER", "bogus", 1);
	assert_int_equal(memory_rdma_order(100), RDMA_ORDER_UNKNOWN);
	unsetenv("FPGAD_TEST_RDMA_ORDER");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_rounds_and_aligns),
		cmocka_unit_test(test_exact_size),
		cmocka_unit_test(test_second_mapping_sees_writes),
		cmocka_unit_test(test_sealed),
		cmocka_unit_test(test_lessee_reads),
		cmocka_unit_test(test_free_keeps_lessee_mapping),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_bad_size),
		cmocka_unit_test(test_no_dmabuf),
		cmocka_unit_test(test_ops_for),
		cmocka_unit_test(test_cuda_probe),
		cmocka_unit_test(test_import_sparse),
		cmocka_unit_test(test_import_not_shmem),
		cmocka_unit_test(test_rdma_order),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
