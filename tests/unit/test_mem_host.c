// SPDX-License-Identifier: MIT
/* test_mem_host.c - the host memory backend and the memory backend table. */
#include <setjmp.h>
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

#include "memory.h"

static void test_alloc_rounds_and_aligns(void **state)
{
	struct mem_region *r = NULL;
	struct stat st;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(5000, NULL, "ring0", &r), 0);
	assert_non_null(r);
	assert_int_equal(r->kind, MEMORY_HOST);
	assert_int_equal(r->size, 8192);
	assert_int_equal(r->size % MEMORY_SLOT_ALIGN, 0);
	assert_non_null(r->host);
	assert_int_equal((uintptr_t)r->host % MEMORY_SLOT_ALIGN, 0);
	assert_null(r->dev);
	assert_true(r->shm_fd >= 0);
	assert_int_equal(strncmp(r->shm_name, "/fpgad.", 7), 0);
	assert_non_null(strstr(r->shm_name, ".ring0."));

	assert_int_equal(fstat(r->shm_fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 8192);
	/* Writable end to end. */
	memset(r->host, 0x5a, r->size);
	memory_host_ops.free(r);
}

static void test_exact_size(void **state)
{
	struct mem_region *r = NULL;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(3 * MEMORY_SLOT_ALIGN, NULL,
					       "x", &r), 0);
	assert_int_equal(r->size, 3 * MEMORY_SLOT_ALIGN);
	memory_host_ops.free(r);
}

static void test_second_mapping_sees_writes(void **state)
{
	struct mem_region *r = NULL;
	unsigned char *m;
	int fd;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(1 << 20, NULL, "share", &r), 0);
	/* As the lease holder does: open by name, map. */
	fd = shm_open(r->shm_name, O_RDWR, 0);
	assert_true(fd >= 0);
	m = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	close(fd);

	memcpy(r->host, "daemon", 7);
	assert_string_equal((char *)m, "daemon");
	memcpy(m + r->size - 7, "client", 7);
	assert_string_equal((char *)r->host + r->size - 7, "client");

	munmap(m, r->size);
	memory_host_ops.free(r);
}

static void test_free_unlinks(void **state)
{
	struct mem_region *r = NULL;
	char name[sizeof(r->shm_name)];
	int fd;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "gone", &r), 0);
	memcpy(name, r->shm_name, sizeof(name));
	memory_host_ops.free(r);
	fd = shm_open(name, O_RDWR, 0);
	assert_int_equal(fd, -1);
	assert_int_equal(errno, ENOENT);
	/* NULL is fine. */
	memory_host_ops.free(NULL);
}

static void test_names_unique(void **state)
{
	struct mem_region *a = NULL, *b = NULL, *c = NULL;
	char stale[64];
	int fd;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "dup", &a), 0);
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "dup", &b), 0);
	assert_string_not_equal(a->shm_name, b->shm_name);
	memory_host_ops.free(a);
	memory_host_ops.free(b);

	/* A stale object holding the first name is stepped over, untouched. */
	snprintf(stale, sizeof(stale), "/fpgad.%ld.stale.0", (long)getpid());
	fd = shm_open(stale, O_RDWR | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "stale", &c), 0);
	assert_string_not_equal(c->shm_name, stale);
	memory_host_ops.free(c);
	fd = shm_open(stale, O_RDWR, 0);
	assert_true(fd >= 0);
	close(fd);
	shm_unlink(stale);
}

static void test_hint_sanitized(void **state)
{
	struct mem_region *r = NULL;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "../a b/c", &r), 0);
	assert_null(strchr(r->shm_name + 1, '/'));
	assert_null(strchr(r->shm_name, ' '));
	assert_non_null(strstr(r->shm_name, ".abc."));
	memory_host_ops.free(r);

	assert_int_equal(memory_host_ops.alloc(4096, NULL, NULL, &r), 0);
	assert_non_null(strstr(r->shm_name, ".mem."));
	memory_host_ops.free(r);

	assert_int_equal(memory_host_ops.alloc(4096, NULL,
		"a-very-long-channel-name-that-goes-on-and-on-and-on", &r), 0);
	assert_true(strlen(r->shm_name) < sizeof(r->shm_name));
	memory_host_ops.free(r);
}

static void test_bad_size(void **state)
{
	struct mem_region *r = (void *)0x1;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(0, NULL, "z", &r), -EINVAL);
	assert_int_equal(memory_host_ops.alloc(SIZE_MAX, NULL, "z", &r),
			 -EINVAL);
	/* ret_* untouched on failure. */
	assert_ptr_equal(r, (void *)0x1);
}

static void test_grant(void **state)
{
	struct mem_region *r = NULL;
	struct stat st;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "grant", &r), 0);
	assert_int_equal(memory_host_ops.grant(r, geteuid()), 0);
	assert_int_equal(fstat(r->shm_fd, &st), 0);
	assert_int_equal(st.st_uid, geteuid());

	assert_int_equal(memory_host_ops.grant(r, 4242), 0);
	assert_int_equal(fstat(r->shm_fd, &st), 0);
	if (geteuid() == 0)
		assert_int_equal(st.st_uid, 4242);
	else
		assert_int_equal(st.st_uid, geteuid());
	memory_host_ops.free(r);
}

static void test_no_dmabuf(void **state)
{
	struct mem_region *r = NULL;
	int fd = -7;

	(void)state;
	assert_int_equal(memory_host_ops.alloc(4096, NULL, "dmabuf", &r), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_rounds_and_aligns),
		cmocka_unit_test(test_exact_size),
		cmocka_unit_test(test_second_mapping_sees_writes),
		cmocka_unit_test(test_free_unlinks),
		cmocka_unit_test(test_names_unique),
		cmocka_unit_test(test_hint_sanitized),
		cmocka_unit_test(test_bad_size),
		cmocka_unit_test(test_grant),
		cmocka_unit_test(test_no_dmabuf),
		cmocka_unit_test(test_ops_for),
		cmocka_unit_test(test_cuda_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
