/* SPDX-License-Identifier: MIT */
/* client_internal.h - what libfpgad's files share; not installed. */
#ifndef FPGAD_CLIENT_INTERNAL_H
#define FPGAD_CLIENT_INTERNAL_H

#include <nng/nng.h>

#include "fpgad.h"
#include "fpgad.pb-c.h"

struct fpgad_channel;

struct fpgad_client {
	nng_socket sock;
	char url[512];
	char server[64];
	char errmsg[256];
	uint64_t next_id;
	int timeout_ms;
	fpgad_log_fn log;
	void *log_user;
	struct fpgad_channel *channels;	/* open channels, for disconnect */
};

void client_log(const fpgad_client *c, int level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int client_nng_errno(int e);
/* Send @req (its id is set here) and take a STATUS_OK reply. */
int client_transact(fpgad_client *c, Fpgad__Request *req,
		    Fpgad__Response **ret_resp);
/* Frees @resp and fails unless it carries @body. */
int client_expect(fpgad_client *c, Fpgad__Response *resp,
		  Fpgad__Response__BodyCase body);
/*
 * GPU memory of another process (gpu_cuda.c; without CUDA, gpu.c says
 * "built without CUDA").  gpu_map opens a cudaIpcMemHandle_t once, on the
 * GPU with PCI bus id @bus_id (this process's ordinal for it may differ
 * from fpgad's), else on ordinal @gpu.
 */
int gpu_map(const void *ipc_handle, int gpu, const char *bus_id,
	    void **ret_ptr, char *why, size_t whylen);
void gpu_unmap(void *ptr);
int gpu_host_alloc(size_t len, void **ret_ptr);
void gpu_host_free(void *ptr);
int gpu_to_host(void *dst, const void *src_dev, size_t len);
int gpu_from_host(void *dst_dev, const void *src, size_t len);

/* Close every channel still open on @c (channel.c). */
void client_channels_close_all(fpgad_client *c);

#endif
