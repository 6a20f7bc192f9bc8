// SPDX-License-Identifier: MIT
/*
 * gpu_stale.c - a lessee that keeps what it mapped after its lease ends
 * (a raw protocol client, as anyone can write from proto/fpgad.proto) must
 * not see the frames of the lessee after it:
 *
 *   gpu_stale [-n N] [-e fd|ipc] URL CHANNEL
 *
 * Lease 1: OpenChannel by hand, map the ring as the reply says (export
 * fd: the VMM descriptor of the handoff, imported; ipc: the CUDA IPC
 * handle) and keep the mapping, CloseChannel.  Lease 2, through libfpgad: take N frames.
 * Then read every slot header of the kept mapping: none may be a frame of
 * lease 2.  Prints one JSON line; exit 0 when none is, 1 otherwise.
 * -e E: fail unless the ring's export is E (fd or ipc).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cuvmm.h"
#include "fpgad.h"
#include "fpgad.pb-c.h"
#include "fpgad_simframe.h"
#include "raw_request.h"

int main(int argc, char **argv)
{
	Fpgad__Request req = FPGAD__REQUEST__INIT;
	Fpgad__Hello hello = FPGAD__HELLO__INIT;
	Fpgad__OpenChannelRequest open = FPGAD__OPEN_CHANNEL_REQUEST__INIT;
	Fpgad__CloseChannelRequest bye = FPGAD__CLOSE_CHANNEL_REQUEST__INIT;
	Fpgad__Response *resp;
	cudaIpcMemHandle_t h;
	unsigned long long n = 200, seen = 0, first = 0, last = 0;
	uint64_t slots, slot_size, lease1;
	unsigned char *old = NULL, hdr[FPGAD_SIMFRAME_HDR_SIZE];
	fpgad_channel *ch = NULL;
	fpgad_client *c = NULL;
	nng_socket s;
	const char *want_export = NULL;
	char export[8];
	struct cuvmm vmm = { 0 };
	int opt, gpu, code = 1, link = -1;

	while ((opt = getopt(argc, argv, "n:e:")) != -1) {
		if (opt == 'n')
			n = strtoull(optarg, NULL, 0);
		else if (opt == 'e')
			want_export = optarg;
	}
	if (argc - optind != 2) {
		fprintf(stderr, "usage: gpu_stale [-n N] [-e fd|ipc] URL CHANNEL\n");
		return 2;
	}
	if (nng_req0_open(&s) != 0 || nng_dial(s, argv[optind], NULL, 0) != 0)
		return 1;
	nng_socket_set_ms(s, NNG_OPT_RECVTIMEO, 10000);
	hello.version = hello.min_version = FPGAD_PROTOCOL_VERSION;
	req.id = 1;
	req.body_case = FPGAD__REQUEST__BODY_HELLO;
	req.hello = &hello;
	resp = raw_transact(s, &req);
	if (!resp || resp->code)
		return 1;
	fpgad__response__free_unpacked(resp, NULL);

	/* Lease 1, by hand: keep its ring mapped. */
	open.name = argv[optind + 1];
	req.id = 2;
	req.body_case = FPGAD__REQUEST__BODY_OPEN_CHANNEL;
	req.open_channel = &open;
	resp = raw_transact(s, &req);
	if (!resp || resp->code) {
		fprintf(stderr, "gpu_stale: OpenChannel: %s\n",
			resp ? resp->message : "no reply");
		return 1;
	}
	snprintf(export, sizeof(export), "%s", resp->open_channel->gpu_export[0] ?
		 resp->open_channel->gpu_export : "ipc");
	if (want_export && strcmp(export, want_export)) {
		fprintf(stderr, "gpu_stale: the ring's export is %s, not %s\n", export,
			want_export);
		return 1;
	}
	slots = resp->open_channel->slots;
	slot_size = resp->open_channel->slot_size;
	lease1 = resp->open_channel->lease_id;
	gpu = resp->open_channel->gpu;
	if (cudaDeviceGetByPCIBusId(&gpu, resp->open_channel->gpu_bus_id) !=
	    cudaSuccess || cudaSetDevice(gpu) != cudaSuccess) {
		fprintf(stderr, "gpu_stale: lease 1's GPU is not here\n");
		return 1;
	}
	if (!strcmp(export, "fd")) {
		int fds[2] = { -1, -1 };
		unsigned got = 0;
		char why[192];

		if (raw_handoff(resp->open_channel->handoff_path,
				&resp->open_channel->handoff_token, fds, 2, &got,
				&link) < 0 || got != 2 ||
		    cuvmm_import(fds[1], resp->open_channel->ring_size, gpu, -1,
				 &vmm, why, sizeof(why)) < 0) {
			fprintf(stderr, "gpu_stale: cannot map lease 1's ring (fd)\n");
			return 1;
		}
		close(fds[0]);
		close(fds[1]);
		old = (unsigned char *)(uintptr_t)vmm.va;
	} else if (resp->open_channel->ipc_handle.len != sizeof(h) ||
		   (memcpy(&h, resp->open_channel->ipc_handle.data, sizeof(h)),
		    cudaIpcOpenMemHandle((void **)&old, h,
					 cudaIpcMemLazyEnablePeerAccess)) != cudaSuccess) {
		fprintf(stderr, "gpu_stale: cannot map lease 1's ring (ipc)\n");
		return 1;
	}
	fpgad__response__free_unpacked(resp, NULL);
	bye.name = argv[optind + 1];
	bye.lease_id = lease1;
	req.id = 3;
	req.body_case = FPGAD__REQUEST__BODY_CLOSE_CHANNEL;
	req.close_channel = &bye;
	resp = raw_transact(s, &req);
	if (!resp || resp->code)
		return 1;
	fpgad__response__free_unpacked(resp, NULL);

	/* Lease 2, through the library, as the next user would. */
	if (fpgad_connect(argv[optind], &c) < 0 ||
	    fpgad_channel_open(c, argv[optind + 1], 0, &ch) < 0) {
		fprintf(stderr, "gpu_stale: lease 2: %s\n", c ? fpgad_errmsg(c) : "");
		goto out;
	}
	for (unsigned long long i = 0; i < n; i++) {
		struct fpgad_frame f;

		if (fpgad_frame_wait(ch, &f, 10000) < 0)
			goto out;
		if (!i)
			first = f.seq;
		last = f.seq;
		fpgad_frame_release(ch, &f);
	}
	/* What lease 1 still sees: no frame of lease 2 may be there. */
	for (uint64_t k = 0; k < slots; k++) {
		struct fpgad_simframe_hdr fh;

		if (cudaMemcpy(hdr, old + k * slot_size, sizeof(hdr),
			       cudaMemcpyDeviceToHost) != cudaSuccess)
			goto out;
		memcpy(&fh, hdr, sizeof(fh));
		if (fh.magic == FPGAD_SIMFRAME_MAGIC &&
		    fh.check == fpgad_simframe_hdr_check(&fh) &&
		    fh.seq >= first && fh.seq <= last)
			seen++;
	}
	printf("{\"channel\":\"%s\",\"export\":\"%s\",\"lease2_frames\":%llu,\"lease2_seq\":[%llu,%llu],"
	       "\"slots_of_lease2_seen_by_lease1\":%llu}\n", argv[optind + 1], export, n,
	       first, last, seen);
	code = seen ? 1 : 0;
out:
	fpgad_channel_close(ch);
	fpgad_disconnect(c);
	if (vmm.va)
		cuvmm_free(&vmm);
	else
		cudaIpcCloseMemHandle(old);
	if (link >= 0)
		close(link);
	nng_close(s);
	return code;
}
