// SPDX-License-Identifier: MIT
/*
 * test_roce_landing.c - which landing ring a RoCE channel's NIC writes
 * (roce_landing.c), through fakes of the GPU and the verbs: GPU memory as
 * a dma-buf MR when the ring is a GPU's and every step works, else host
 * memory, with why.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "device/net/roce_landing.h"

#define LEN (4u * 8192u)
#define IOVA 0x10000000000ull

struct fake {
	int alloc_err;			/* gpu_alloc's answer */
	int dmabuf_err;			/* reg_dmabuf's */
	unsigned char gpu[LEN];		/* "GPU memory" */
	int gpu_allocs, gpu_frees;
	int dmabuf_regs, host_regs;
	int last_fd;
	uint64_t last_iova;
	void *last_host;
};

static int f_gpu_alloc(void *user, size_t len, void **ret_mem, int *ret_fd,
		       char *why, size_t whylen)
{
	struct fake *f = user;

	assert_int_equal(len, LEN);
	if (f->alloc_err) {
		snprintf(why, whylen, "GPU 0: no VMM memory");
		return f->alloc_err;
	}
	f->gpu_allocs++;
	*ret_mem = f->gpu;
	*ret_fd = 42;
	return 0;
}

static void f_gpu_free(void *user, void *mem, int fd)
{
	struct fake *f = user;

	assert_ptr_equal(mem, f->gpu);
	assert_int_equal(fd, 42);
	f->gpu_frees++;
}

static int f_reg_dmabuf(void *user, int fd, size_t len, uint64_t iova,
			uint32_t *ret_rkey)
{
	struct fake *f = user;

	assert_int_equal(len, LEN);
	if (f->dmabuf_err)
		return f->dmabuf_err;
	f->dmabuf_regs++;
	f->last_fd = fd;
	f->last_iova = iova;
	*ret_rkey = 0x100u + (uint32_t)f->dmabuf_regs;
	return 0;
}

static int f_reg_host(void *user, void *addr, size_t len, uint64_t iova,
		      uint32_t *ret_rkey)
{
	struct fake *f = user;

	assert_int_equal(len, LEN);
	f->host_regs++;
	f->last_host = addr;
	f->last_iova = iova;
	*ret_rkey = 0x200u + (uint32_t)f->host_regs;
	return 0;
}

static const struct roce_landing_ops ops = {
	.gpu_alloc = f_gpu_alloc,
	.gpu_free = f_gpu_free,
	.reg_dmabuf = f_reg_dmabuf,
	.reg_host = f_reg_host,
};

/* A host landing ring, registered by address; @why as shown. */
static void expect_host(struct roce_landing *l, struct fake *f, const char *why)
{
	uint32_t rkey;

	assert_int_equal(l->kind, ROCE_LANDING_HOST);
	assert_string_equal(l->shown, why);
	assert_non_null(l->mem);
	assert_ptr_not_equal(l->mem, f->gpu);
	assert_int_equal(roce_landing_reg(l, &ops, f, IOVA, &rkey), 0);
	assert_int_equal(f->host_regs, 1);
	assert_ptr_equal(f->last_host, l->mem);
	assert_int_equal(f->last_iova, IOVA);
	/* GPU memory asked for and not used went back. */
	assert_int_equal(f->gpu_frees, f->gpu_allocs);
	roce_landing_close(l, &ops, f);
	assert_int_equal(f->gpu_frees, f->gpu_allocs);
}

/* A host ring: a host landing ring, the GPU never asked. */
static void test_host_ring(void **state)
{
	struct fake f = { 0 };
	struct roce_landing l;

	(void)state;
	assert_int_equal(roce_landing_open(&l, &ops, &f, false, "mlx5_0", LEN, IOVA), 0);
	assert_int_equal(f.gpu_allocs + f.dmabuf_regs, 0);
	expect_host(&l, &f, "host (the ring is in host memory)");
}

/* A GPU ring and a NIC that takes dma-buf MRs: the landing ring is the GPU's. */
static void test_gpu_landing(void **state)
{
	struct fake f = { 0 };
	struct roce_landing l;
	uint32_t rkey;

	(void)state;
	assert_int_equal(roce_landing_open(&l, &ops, &f, true, "mlx5_0", LEN, IOVA), 0);
	assert_int_equal(l.kind, ROCE_LANDING_GPU);
	assert_string_equal(l.shown, "gpu (dma-buf MR)");
	assert_ptr_equal(l.mem, f.gpu);
	assert_int_equal(f.dmabuf_regs, 1);
	assert_int_equal(f.last_iova, IOVA);
	/* Each new ring registers the dma-buf again: a new key. */
	assert_int_equal(roce_landing_reg(&l, &ops, &f, IOVA, &rkey), 0);
	assert_int_equal(rkey, 0x102);
	assert_int_equal(f.last_fd, 42);
	assert_int_equal(f.host_regs, 0);
	roce_landing_close(&l, &ops, &f);
	assert_int_equal(f.gpu_frees, 1);
}

/* The provider refuses dma-buf MRs (rxe): host, saying who refused and why. */
static void test_provider_refuses(void **state)
{
	struct fake f = { .dmabuf_err = -EOPNOTSUPP };
	struct roce_landing l;

	(void)state;
	assert_int_equal(roce_landing_open(&l, &ops, &f, true, "rxe0", LEN, IOVA), 0);
	assert_int_equal(f.gpu_allocs, 1);
	expect_host(&l, &f, "host: rxe0 refused ibv_reg_dmabuf_mr: Operation not supported");
}

/* No dma-buf of the GPU's memory: host, saying why. */
static void test_no_dmabuf(void **state)
{
	struct fake f = { .alloc_err = -EOPNOTSUPP };
	struct roce_landing l;

	(void)state;
	assert_int_equal(roce_landing_open(&l, &ops, &f, true, "mlx5_0", LEN, IOVA), 0);
	assert_int_equal(f.dmabuf_regs, 0);
	expect_host(&l, &f, "host: no dma-buf of GPU memory: GPU 0: no VMM memory");
}

/* A libibverbs without ibv_reg_dmabuf_mr: host, saying so; no GPU memory taken. */
static void test_no_dmabuf_call(void **state)
{
	struct roce_landing_ops o = ops;
	struct fake f = { 0 };
	struct roce_landing l;

	(void)state;
	o.reg_dmabuf = NULL;
	assert_int_equal(roce_landing_open(&l, &o, &f, true, "mlx5_0", LEN, IOVA), 0);
	assert_int_equal(f.gpu_allocs, 0);
	assert_int_equal(l.kind, ROCE_LANDING_HOST);
	assert_string_equal(l.shown, "host: this libibverbs has no ibv_reg_dmabuf_mr");
	roce_landing_close(&l, &o, &f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_host_ring),
		cmocka_unit_test(test_gpu_landing),
		cmocka_unit_test(test_provider_refuses),
		cmocka_unit_test(test_no_dmabuf),
		cmocka_unit_test(test_no_dmabuf_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
