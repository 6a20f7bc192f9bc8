// SPDX-License-Identifier: MIT
/*
 * test_cuvmm.c - how a GPU ring reaches its lessee (cuvmm.h): the export's
 * choice from what the device can do and the test override, the reply's
 * export names (an older fpgad's empty one included) and their round trip
 * through OpenChannelReply, and the driver calls where no driver answers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <string.h>

#include <cmocka.h>

#include "cuvmm.h"
#include "fpgad.pb-c.h"

static const struct cuvmm_caps all = { .vmm = true, .posix_fd = true, .rdma = true };

static void test_choose_fd_where_the_device_can(void **state)
{
	enum gpu_export e = GPU_EXPORT_IPC;
	char why[128];

	(void)state;
	assert_int_equal(gpu_export_choose(&all, NULL, &e, why, sizeof(why)), 0);
	assert_int_equal(e, GPU_EXPORT_FD);
	assert_string_equal(why, "");
	assert_int_equal(gpu_export_choose(&all, "", &e, why, sizeof(why)), 0);
	assert_int_equal(e, GPU_EXPORT_FD);
}

/* Each capability missing falls back to IPC and names what is missing. */
static void test_fallback_names_what_is_missing(void **state)
{
	static const struct {
		struct cuvmm_caps caps;
		const char *lacks;
	} cases[] = {
		{ { false, true, true }, "virtual memory management" },
		{ { true, false, true }, "POSIX file descriptor handles" },
		{ { true, true, false }, "GPUDirect RDMA on VMM memory" },
		{ { false, false, false }, "virtual memory management" },
	};
	enum gpu_export e;
	char why[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		e = GPU_EXPORT_FD;
		assert_int_equal(gpu_export_choose(&cases[i].caps, NULL, &e, why,
						   sizeof(why)), 0);
		assert_int_equal(e, GPU_EXPORT_IPC);
		assert_non_null(strstr(why, cases[i].lacks));
	}
}

static void test_override(void **state)
{
	const struct cuvmm_caps none = { 0 };
	enum gpu_export e = GPU_EXPORT_FD;
	char why[128];

	(void)state;
	/* ipc is always possible: the legacy path, tested on a GPU that could do fd. */
	assert_int_equal(gpu_export_choose(&all, "ipc", &e, why, sizeof(why)), 0);
	assert_int_equal(e, GPU_EXPORT_IPC);
	assert_non_null(strstr(why, GPU_EXPORT_ENV "=ipc"));
	/* fd where the device cannot: refused, not quietly IPC. */
	assert_int_equal(gpu_export_choose(&none, "fd", &e, why, sizeof(why)), -EOPNOTSUPP);
	assert_non_null(strstr(why, "virtual memory management"));
	e = GPU_EXPORT_IPC;
	assert_int_equal(gpu_export_choose(&all, "fd", &e, why, sizeof(why)), 0);
	assert_int_equal(e, GPU_EXPORT_FD);
	assert_int_equal(gpu_export_choose(&all, "dmabuf", &e, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "want fd or ipc"));
	/* host is an integrated GPU's, not a discrete GPU's to be forced into. */
	e = GPU_EXPORT_FD;
	assert_int_equal(gpu_export_choose(&all, "host", &e, why, sizeof(why)), -EINVAL);
	assert_int_equal(e, GPU_EXPORT_FD);
	assert_non_null(strstr(why, "want fd or ipc"));
}

static void test_names(void **state)
{
	enum gpu_export e = GPU_EXPORT_FD;

	(void)state;
	assert_string_equal(gpu_export_name(GPU_EXPORT_FD), "fd");
	assert_string_equal(gpu_export_name(GPU_EXPORT_IPC), "ipc");
	assert_int_equal(gpu_export_parse("fd", &e), 0);
	assert_int_equal(e, GPU_EXPORT_FD);
	assert_int_equal(gpu_export_parse("ipc", &e), 0);
	assert_int_equal(e, GPU_EXPORT_IPC);
	assert_string_equal(gpu_export_name(GPU_EXPORT_HOST), "host");
	assert_int_equal(gpu_export_parse("host", &e), 0);
	assert_int_equal(e, GPU_EXPORT_HOST);
	/* An fpgad before the field sends none: it knew only IPC. */
	e = GPU_EXPORT_FD;
	assert_int_equal(gpu_export_parse("", &e), 0);
	assert_int_equal(e, GPU_EXPORT_IPC);
	e = GPU_EXPORT_FD;
	assert_int_equal(gpu_export_parse(NULL, &e), 0);
	assert_int_equal(e, GPU_EXPORT_IPC);
	assert_int_equal(gpu_export_parse("FD", &e), -EINVAL);
	assert_int_equal(gpu_export_parse("fd ", &e), -EINVAL);
}

/* OpenChannelReply.gpu_export survives the wire; a reply without it reads "". */
static void test_reply_round_trip(void **state)
{
	Fpgad__OpenChannelReply o = FPGAD__OPEN_CHANNEL_REPLY__INIT, *back;
	uint8_t buf[256];
	size_t n;

	(void)state;
	o.name = "c2h0";
	o.memory = "cuda";
	o.gpu_export = "fd";
	n = fpgad__open_channel_reply__pack(&o, buf);
	back = fpgad__open_channel_reply__unpack(NULL, n, buf);
	assert_non_null(back);
	assert_string_equal(back->gpu_export, "fd");
	assert_int_equal(back->ipc_handle.len, 0);
	fpgad__open_channel_reply__free_unpacked(back, NULL);

	o.gpu_export = "";
	n = fpgad__open_channel_reply__pack(&o, buf);
	back = fpgad__open_channel_reply__unpack(NULL, n, buf);
	assert_non_null(back);
	assert_string_equal(back->gpu_export, "");
	fpgad__open_channel_reply__free_unpacked(back, NULL);
}

static void test_round(void **state)
{
	(void)state;
	assert_int_equal(cuvmm_round(1, 2u << 20), 2u << 20);
	assert_int_equal(cuvmm_round(2u << 20, 2u << 20), 2u << 20);
	assert_int_equal(cuvmm_round((2u << 20) + 1, 2u << 20), 4u << 20);
	assert_int_equal(cuvmm_round((size_t)-1, 2u << 20), 0);
	assert_int_equal(cuvmm_round(4096, 0), 0);
}

/* Without a driver (or without CUDA) every call says why, and frees nothing. */
static void test_no_driver_says_why(void **state)
{
	struct cuvmm_caps caps;
	struct cuvmm m = { 0 };
	char why[192] = "";
	size_t g = 0;
	int fd = -1, r;

	(void)state;
	r = cuvmm_caps(0, &caps, why, sizeof(why));
	if (r == 0) {
		print_message("a driver answers: vmm %d, posix fd %d, rdma %d\n",
			      caps.vmm, caps.posix_fd, caps.rdma);
		return;
	}
	assert_int_equal(r, -ENODEV);
	assert_true(why[0] != '\0');
	print_message("no driver: %s\n", why);
#ifndef FPGAD_CUDA
	assert_string_equal(why, "built without CUDA");
#else
	assert_non_null(strstr(why, "cuDeviceGet"));
#endif
	assert_int_equal(cuvmm_granule(0, &g, why, sizeof(why)), -ENODEV);
	assert_int_equal(cuvmm_alloc(0, 2u << 20, &m, &fd, why, sizeof(why)), -ENODEV);
	assert_int_equal(fd, -1);
	assert_int_equal(cuvmm_import(0, 2u << 20, 0, -1, &m, why, sizeof(why)), -ENODEV);
	assert_int_equal(m.va, 0);
	cuvmm_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_choose_fd_where_the_device_can),
		cmocka_unit_test(test_fallback_names_what_is_missing),
		cmocka_unit_test(test_override),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_reply_round_trip),
		cmocka_unit_test(test_round),
		cmocka_unit_test(test_no_driver_says_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
