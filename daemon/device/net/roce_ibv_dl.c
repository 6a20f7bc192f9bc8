// SPDX-License-Identifier: MIT
/*
 * roce_ibv_dl.c - the ibv_* functions roce_verbs.c calls, from the host's
 * libibverbs.so.1 loaded at run time (roce_ibv_dl.h).  Built into every
 * fpgad, empty unless ROCE=dlopen.
 */
#include "device/net/roce_ibv_dl.h"

#ifdef FPGAD_ROCE_DLOPEN

#include <dlfcn.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>

/* The functions themselves, not the inline fronts libibverbs' header puts before them. */
#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr_iova

/* RET, NAME, (PARAMETERS), (ARGUMENTS) of each function forwarded. */
#define IBV_FUNCS(X) \
	X(struct ibv_device **, ibv_get_device_list, (int *n), (n)) \
	X(const char *, ibv_get_device_name, (struct ibv_device *d), (d)) \
	X(struct ibv_context *, ibv_open_device, (struct ibv_device *d), (d)) \
	X(int, ibv_close_device, (struct ibv_context *c), (c)) \
	X(ssize_t, _ibv_query_gid_table, (struct ibv_context *c, \
	  struct ibv_gid_entry *e, size_t max, uint32_t flags, size_t size), \
	  (c, e, max, flags, size)) \
	X(int, ibv_query_port, (struct ibv_context *c, uint8_t port, \
	  struct _compat_ibv_port_attr *a), (c, port, a)) \
	X(struct ibv_pd *, ibv_alloc_pd, (struct ibv_context *c), (c)) \
	X(int, ibv_dealloc_pd, (struct ibv_pd *pd), (pd)) \
	X(struct ibv_comp_channel *, ibv_create_comp_channel, \
	  (struct ibv_context *c), (c)) \
	X(int, ibv_destroy_comp_channel, (struct ibv_comp_channel *ch), (ch)) \
	X(struct ibv_cq *, ibv_create_cq, (struct ibv_context *c, int cqe, \
	  void *user, struct ibv_comp_channel *ch, int vector), \
	  (c, cqe, user, ch, vector)) \
	X(int, ibv_destroy_cq, (struct ibv_cq *cq), (cq)) \
	X(struct ibv_qp *, ibv_create_qp, (struct ibv_pd *pd, \
	  struct ibv_qp_init_attr *a), (pd, a)) \
	X(int, ibv_modify_qp, (struct ibv_qp *qp, struct ibv_qp_attr *a, \
	  int mask), (qp, a, mask)) \
	X(int, ibv_destroy_qp, (struct ibv_qp *qp), (qp)) \
	X(struct ibv_mr *, ibv_reg_mr_iova, (struct ibv_pd *pd, void *addr, \
	  size_t len, uint64_t iova, int access), (pd, addr, len, iova, access)) \
	X(struct ibv_mr *, ibv_reg_dmabuf_mr, (struct ibv_pd *pd, uint64_t off, \
	  size_t len, uint64_t iova, int fd, int access), \
	  (pd, off, len, iova, fd, access)) \
	X(int, ibv_dereg_mr, (struct ibv_mr *mr), (mr)) \
	X(int, ibv_get_cq_event, (struct ibv_comp_channel *ch, \
	  struct ibv_cq **cq, void **user), (ch, cq, user))
/* ... and those that return nothing. */
#define IBV_VOID_FUNCS(X) \
	X(void, ibv_free_device_list, (struct ibv_device **l), (l)) \
	X(void, ibv_ack_cq_events, (struct ibv_cq *cq, unsigned int n), (cq, n))

#define POINTER(ret, name, params, args) static ret (*p_##name) params;
IBV_FUNCS(POINTER)
IBV_VOID_FUNCS(POINTER)
#undef POINTER

/*
 * The forwarders: called only after roce_ibv_load() succeeded (every
 * path into verbs goes through roce_verbs_find(), which loads first).
 * ibv_reg_dmabuf_mr is the one a libibverbs before rdma-core 34 lacks:
 * then it fails with EOPNOTSUPP, and the landing ring is host memory.
 */
#define FORWARD(ret, name, params, args) \
	ret name params { return p_##name args; }
#define FORWARD_VOID(ret, name, params, args) \
	ret name params { p_##name args; }
IBV_FUNCS(FORWARD)
IBV_VOID_FUNCS(FORWARD_VOID)
#undef FORWARD
#undef FORWARD_VOID

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char load_error[256];

static struct ibv_mr *no_dmabuf_mr(struct ibv_pd *pd, uint64_t off, size_t len,
				   uint64_t iova, int fd, int access)
{
	(void)pd, (void)off, (void)len, (void)iova, (void)fd, (void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

static void load(void)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
	const char *missing = NULL;

	if (!h) {
		snprintf(load_error, sizeof(load_error),
			 "source = roce: this fpgad loads libibverbs at run time and cannot (%s): install rdma-core's libibverbs1 and ibverbs-providers",
			 dlerror());
		return;
	}
#define LOOKUP(ret, name, params, args) \
	*(void **)&p_##name = dlsym(h, #name);
	IBV_FUNCS(LOOKUP)
	IBV_VOID_FUNCS(LOOKUP)
#undef LOOKUP
	if (!p_ibv_reg_dmabuf_mr)
		p_ibv_reg_dmabuf_mr = no_dmabuf_mr;
#define CHECK(ret, name, params, args) \
	if (!p_##name && !missing) \
		missing = #name;
	IBV_FUNCS(CHECK)
	IBV_VOID_FUNCS(CHECK)
#undef CHECK
	if (missing)
		snprintf(load_error, sizeof(load_error),
			 "source = roce: the host's libibverbs.so.1 has no %s: install rdma-core 34 or later",
			 missing);
}

int roce_ibv_load(char *why, size_t whylen)
{
	pthread_once(&once, load);
	if (!load_error[0])
		return 0;
	snprintf(why, whylen, "%s", load_error);
	return -ENOENT;
}

#else

int roce_ibv_load(char *why, size_t whylen)
{
	(void)why, (void)whylen;
	return 0;
}

#endif /* FPGAD_ROCE_DLOPEN */
