// SPDX-License-Identifier: MIT
/* test_fault_guard.c - copies that survive a SIGBUS on either side. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "memory/fault_guard.h"

/*
 * Two pages of a memfd mapped, the second cut off by ftruncate: touching
 * it raises SIGBUS, as a client's memory does when its page cannot be
 * had.
 */
static unsigned char *half_gone(long page, int *ret_fd)
{
	int fd = memfd_create("guard", MFD_CLOEXEC);
	unsigned char *m;

	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, 2 * page), 0);
	m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(ftruncate(fd, page), 0);
	*ret_fd = fd;
	return m;
}

static void test_copies(void **state)
{
	char a[64] = "the bytes", b[64] = "";

	(void)state;
	assert_int_equal(fault_guard_copy(b, a, sizeof(a)), 0);
	assert_string_equal(b, "the bytes");
}

/* Reading from and writing to a page that faults: -EFAULT, twice. */
static void test_sigbus_contained(void **state)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char buf[256], *m;
	int fd;

	(void)state;
	/* After CMocka's own handlers, which it sets for each test. */
	assert_int_equal(fault_guard_init(), 0);
	m = half_gone(page, &fd);
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(fault_guard_copy(m, buf, sizeof(buf)), 0);
	assert_int_equal(m[0], 0x5a);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(fault_guard_copy(buf, m + page, sizeof(buf)),
				 -EFAULT);
		assert_int_equal(fault_guard_copy(m + page - 16, buf,
						  sizeof(buf)), -EFAULT);
	}
	/* The guard is gone once the copy returns: ordinary copies work. */
	assert_int_equal(fault_guard_copy(buf, m, sizeof(buf)), 0);
	munmap(m, 2 * page);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_copies),
		cmocka_unit_test(test_sigbus_contained),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
