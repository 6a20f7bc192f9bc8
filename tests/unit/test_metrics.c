// SPDX-License-Identifier: MIT
/*
 * test_metrics.c - the Prometheus exposition (metrics.c) to the letter
 * for a known snapshot, its families kept together with several channels,
 * label escaping, and the histogram of durations (service/histogram.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "service/histogram.h"
#include "metrics.h"

static const char expected[] =
	"# HELP fpgad_build_info The version of fpgad that runs, as a label; always 1.\n"
	"# TYPE fpgad_build_info gauge\n"
	"fpgad_build_info{version=\"0.1.0-\\\"rc\\\"\\\\1\"} 1\n"
	"# HELP fpgad_uptime_seconds Seconds since fpgad started.\n"
	"# TYPE fpgad_uptime_seconds gauge\n"
	"fpgad_uptime_seconds 12.346\n"
	"# HELP fpgad_clients Control connections open, on the local socket and the remote listener.\n"
	"# TYPE fpgad_clients gauge\n"
	"fpgad_clients 3\n"
	"# HELP fpgad_pinned_bytes Bytes pinned for the card's DMA: every channel's ring, and its staging in bounce mode.\n"
	"# TYPE fpgad_pinned_bytes gauge\n"
	"fpgad_pinned_bytes 16777216\n"
	"# HELP fpgad_card_info The card fpgad drives, as labels (empty where unknown): PCI address and ids, PCIe link now and at most, NUMA node, driver and module version, or what the simulated card models; always 1.\n"
	"# TYPE fpgad_card_info gauge\n"
	"fpgad_card_info{pci_address=\"0000:03:00.0\",vendor_id=\"10ee\",device_id=\"9038\",subsystem_vendor_id=\"10ee\",subsystem_device_id=\"0007\",link=\"PCIe Gen3 x4\",max_link=\"PCIe Gen4 x8\",numa_node=\"1\",driver=\"fpgad_dma\",module_version=\"0.1.0\",simulates=\"\"} 1\n"
	"# HELP fpgad_card_aer_errors_total PCIe AER errors the kernel counted on the card since boot, by severity: the totals of its sysfs aer_dev_correctable, aer_dev_nonfatal and aer_dev_fatal; only where the card has them.\n"
	"# TYPE fpgad_card_aer_errors_total counter\n"
	"fpgad_card_aer_errors_total{pci_address=\"0000:03:00.0\",severity=\"correctable\"} 5000000000\n"
	"fpgad_card_aer_errors_total{pci_address=\"0000:03:00.0\",severity=\"nonfatal\"} 2\n"
	"fpgad_card_aer_errors_total{pci_address=\"0000:03:00.0\",severity=\"fatal\"} 0\n"
	"# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
	"# TYPE process_start_time_seconds gauge\n"
	"process_start_time_seconds 1764600000.250\n"
	"# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n"
	"# TYPE process_cpu_seconds_total counter\n"
	"process_cpu_seconds_total 1.500\n"
	"# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
	"# TYPE process_resident_memory_bytes gauge\n"
	"process_resident_memory_bytes 8388608\n"
	"# HELP process_open_fds Number of open file descriptors.\n"
	"# TYPE process_open_fds gauge\n"
	"process_open_fds 12\n"
	"# HELP process_max_fds Maximum number of open file descriptors.\n"
	"# TYPE process_max_fds gauge\n"
	"process_max_fds 65536\n"
	"# HELP fpgad_channel_mode The channel's memory and transfer mode, as labels; always 1.\n"
	"# TYPE fpgad_channel_mode gauge\n"
	"fpgad_channel_mode{channel=\"cam0\",direction=\"c2h\",memory=\"cuda\",mode=\"gpudirect\"} 1\n"
	"# HELP fpgad_channel_state 1 for the state the channel is in, 0 for the others.\n"
	"# TYPE fpgad_channel_state gauge\n"
	"fpgad_channel_state{channel=\"cam0\",direction=\"c2h\",state=\"idle\"} 0\n"
	"fpgad_channel_state{channel=\"cam0\",direction=\"c2h\",state=\"streaming\"} 1\n"
	"fpgad_channel_state{channel=\"cam0\",direction=\"c2h\",state=\"recovering\"} 0\n"
	"fpgad_channel_state{channel=\"cam0\",direction=\"c2h\",state=\"failed\"} 0\n"
	"# HELP fpgad_channel_leases Leases held on the channel: processes that read (c2h) or write (h2c) it.\n"
	"# TYPE fpgad_channel_leases gauge\n"
	"fpgad_channel_leases{channel=\"cam0\",direction=\"c2h\"} 2\n"
	"# HELP fpgad_channel_frames_total Frames the channel moved: published to its lessees (c2h), or read by the card (h2c).\n"
	"# TYPE fpgad_channel_frames_total counter\n"
	"fpgad_channel_frames_total{channel=\"cam0\",direction=\"c2h\"} 1000\n"
	"# HELP fpgad_channel_bytes_total Bytes the card's DMA moved in transfers that completed.\n"
	"# TYPE fpgad_channel_bytes_total counter\n"
	"fpgad_channel_bytes_total{channel=\"cam0\",direction=\"c2h\"} 1048576000\n"
	"# HELP fpgad_channel_drops_total Frames lost: ready frames nobody held, taken back under policy drop-oldest (c2h); frames of the writer the card lost (h2c).\n"
	"# TYPE fpgad_channel_drops_total counter\n"
	"fpgad_channel_drops_total{channel=\"cam0\",direction=\"c2h\"} 7\n"
	"# HELP fpgad_channel_stalls_total Times the card waited for a free slot under policy block.\n"
	"# TYPE fpgad_channel_stalls_total counter\n"
	"fpgad_channel_stalls_total{channel=\"cam0\",direction=\"c2h\"} 5\n"
	"# HELP fpgad_channel_errors_total DMA errors and timeouts, and transfers that could not be started or copied.\n"
	"# TYPE fpgad_channel_errors_total counter\n"
	"fpgad_channel_errors_total{channel=\"cam0\",direction=\"c2h\"} 1\n"
	"# HELP fpgad_channel_recoveries_total Engine resets after a DMA error or timeout.\n"
	"# TYPE fpgad_channel_recoveries_total counter\n"
	"fpgad_channel_recoveries_total{channel=\"cam0\",direction=\"c2h\"} 4\n"
	"# HELP fpgad_channel_integrity_errors_total Frames whose CRC-32C did not match (integrity = crc32c); published flagged ERROR.\n"
	"# TYPE fpgad_channel_integrity_errors_total counter\n"
	"fpgad_channel_integrity_errors_total{channel=\"cam0\",direction=\"c2h\"} 6\n"
	"# HELP fpgad_channel_dma_duration_seconds Card DMA time of each transfer that completed, from the engine's start to its end.\n"
	"# TYPE fpgad_channel_dma_duration_seconds histogram\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"2.56e-07\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"5.12e-07\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"1.024e-06\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"2.048e-06\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"4.096e-06\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"8.192e-06\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"1.6384e-05\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"3.2768e-05\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"6.5536e-05\"} 1\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.000131072\"} 600\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.000262144\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.000524288\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.001048576\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.002097152\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.004194304\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.008388608\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.016777216\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.033554432\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.067108864\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.134217728\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.268435456\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.536870912\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"1.073741824\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"+Inf\"} 1000\n"
	"fpgad_channel_dma_duration_seconds_sum{channel=\"cam0\",direction=\"c2h\"} 0.200000000\n"
	"fpgad_channel_dma_duration_seconds_count{channel=\"cam0\",direction=\"c2h\"} 1000\n"
	"# HELP fpgad_channel_publish_latency_seconds c2h: time from the end of a frame's card DMA to its publication to the lessees, measured by fpgad's streaming thread; includes the bounce copy and the CRC check.\n"
	"# TYPE fpgad_channel_publish_latency_seconds histogram\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"2.56e-07\"} 0\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"5.12e-07\"} 0\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"1.024e-06\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"2.048e-06\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"4.096e-06\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"8.192e-06\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"1.6384e-05\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"3.2768e-05\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"6.5536e-05\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.000131072\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.000262144\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.000524288\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.001048576\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.002097152\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.004194304\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.008388608\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.016777216\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.033554432\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.067108864\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.134217728\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.268435456\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"0.536870912\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"1.073741824\"} 999\n"
	"fpgad_channel_publish_latency_seconds_bucket{channel=\"cam0\",direction=\"c2h\",le=\"+Inf\"} 1000\n"
	"fpgad_channel_publish_latency_seconds_sum{channel=\"cam0\",direction=\"c2h\"} 1.500000000\n"
	"fpgad_channel_publish_latency_seconds_count{channel=\"cam0\",direction=\"c2h\"} 1000\n"
	"# HELP fpgad_transfers_total Card memory transfers completed, any status.\n"
	"# TYPE fpgad_transfers_total counter\n"
	"fpgad_transfers_total 40\n"
	"# HELP fpgad_transfer_bytes_total Bytes card memory transfers moved.\n"
	"# TYPE fpgad_transfer_bytes_total counter\n"
	"fpgad_transfer_bytes_total 2621440\n"
	"# HELP fpgad_transfer_engine_resets_total Memory engines reset after a hang.\n"
	"# TYPE fpgad_transfer_engine_resets_total counter\n"
	"fpgad_transfer_engine_resets_total 1\n"
	"# HELP fpgad_transfer_queues Connections with a transfer queue.\n"
	"# TYPE fpgad_transfer_queues gauge\n"
	"fpgad_transfer_queues 2\n"
	"# HELP fpgad_transfer_buffers Buffers registered for transfers, all connections.\n"
	"# TYPE fpgad_transfer_buffers gauge\n"
	"fpgad_transfer_buffers 5\n"
	"# HELP fpgad_transfer_registered_bytes Bytes of the buffers registered for transfers.\n"
	"# TYPE fpgad_transfer_registered_bytes gauge\n"
	"fpgad_transfer_registered_bytes 327680\n"
	"# HELP fpgad_transfer_errors_total Card memory transfers that failed, by kind: io (the card's DMA failed), timeout (the card's DMA timed out), canceled (an engine reset after a hang, the buffer unregistered or the connection gone), other (fpgad's side: no memory, a GPU copy that failed).\n"
	"# TYPE fpgad_transfer_errors_total counter\n"
	"fpgad_transfer_errors_total{kind=\"io\"} 5\n"
	"fpgad_transfer_errors_total{kind=\"timeout\"} 6\n"
	"fpgad_transfer_errors_total{kind=\"canceled\"} 7\n"
	"fpgad_transfer_errors_total{kind=\"other\"} 8\n"
	"# HELP fpgad_transfer_refused_total Card memory transfers refused, by the rule they broke (fpgad_xfer.h), named as libfpgad's message for it begins.\n"
	"# TYPE fpgad_transfer_refused_total counter\n"
	"fpgad_transfer_refused_total{rule=\"operation\"} 101\n"
	"fpgad_transfer_refused_total{rule=\"reserved fields\"} 102\n"
	"fpgad_transfer_refused_total{rule=\"buffer\"} 103\n"
	"fpgad_transfer_refused_total{rule=\"zero length\"} 104\n"
	"fpgad_transfer_refused_total{rule=\"maximum length\"} 105\n"
	"fpgad_transfer_refused_total{rule=\"card address alignment\"} 106\n"
	"fpgad_transfer_refused_total{rule=\"buffer offset alignment\"} 107\n"
	"fpgad_transfer_refused_total{rule=\"length alignment\"} 108\n"
	"fpgad_transfer_refused_total{rule=\"card range\"} 109\n"
	"fpgad_transfer_refused_total{rule=\"buffer range\"} 110\n"
	"fpgad_transfer_refused_total{rule=\"timeout\"} 111\n"
	"fpgad_transfer_refused_total{rule=\"transfer mode\"} 112\n"
	"fpgad_transfer_refused_total{rule=\"engine\"} 113\n"
	"# HELP fpgad_transfer_latency_seconds Card memory transfers fpgad started (not refused), any status, by op (read: card to host, write: host to card): time from fpgad taking the entry from its queue (a barrier: its start) to its completion, as the completion's t_start_ns and t_end_ns say.\n"
	"# TYPE fpgad_transfer_latency_seconds histogram\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"2.56e-07\"} 0\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"5.12e-07\"} 0\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"1.024e-06\"} 0\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"2.048e-06\"} 0\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"4.096e-06\"} 3\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"8.192e-06\"} 3\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"1.6384e-05\"} 3\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"3.2768e-05\"} 3\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"6.5536e-05\"} 3\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.000131072\"} 3\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.000262144\"} 3\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.000524288\"} 3\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.001048576\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.002097152\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.004194304\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.008388608\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.016777216\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.033554432\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.067108864\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.134217728\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.268435456\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"0.536870912\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"1.073741824\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"read\",le=\"+Inf\"} 5\n"
	"fpgad_transfer_latency_seconds_sum{op=\"read\"} 0.002009000\n"
	"fpgad_transfer_latency_seconds_count{op=\"read\"} 5\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"2.56e-07\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"5.12e-07\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"1.024e-06\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"2.048e-06\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"4.096e-06\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"8.192e-06\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"1.6384e-05\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"3.2768e-05\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"6.5536e-05\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.000131072\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.000262144\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.000524288\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.001048576\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.002097152\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.004194304\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.008388608\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.016777216\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.033554432\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.067108864\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.134217728\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.268435456\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"0.536870912\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"1.073741824\"} 1\n"
	"fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"+Inf\"} 2\n"
	"fpgad_transfer_latency_seconds_sum{op=\"write\"} 2.000000000\n"
	"fpgad_transfer_latency_seconds_count{op=\"write\"} 2\n"
	;

/*
 * One streaming c2h channel with every counter and both histograms set,
 * each counter to a value of its own: two counters swapped show.
 */
static void snapshot_one(struct metrics_snapshot *s)
{
	struct channel_stats *st = &s->channels[0].st;

	memset(s, 0, sizeof(*s));
	s->version = "0.1.0-\"rc\"\\1";
	s->uptime_ns = 12345678901ull;
	s->clients = 3;
	s->pinned_bytes = 16777216;
	s->n_channels = 1;
	s->channels[0].name = "cam0";
	s->channels[0].direction = "c2h";
	s->channels[0].memory = "cuda";
	s->channels[0].mode = "gpudirect";
	s->card.inv = (struct topo_inventory){
		.addr = "0000:03:00.0", .vendor = 0x10ee, .device = 0x9038,
		.subsystem_vendor = 0x10ee, .subsystem_device = 0x0007,
		.link_gen = 3, .link_width = 4, .max_link_gen = 4, .max_link_width = 8,
		.numa_node = 1, .driver = "fpgad_dma", .module_version = "0.1.0",
		.aer = true, .aer_correctable = 5000000000ull, .aer_nonfatal = 2,
	};
	s->process = (struct metrics_process){
		.start_time_s = 1764600000.25, .cpu_s = 1.5, .resident_bytes = 8388608,
		.open_fds = 12, .max_fds = 65536,
	};
	s->xfer = (struct xfer_stats){
		.transfers = 40, .bytes = 2621440, .resets = 1,
		.queues = 2, .buffers = 5, .registered = 327680,
		.errors_by = { [XFER_ERROR_IO] = 5, [XFER_ERROR_TIMEOUT] = 6,
			       [XFER_ERROR_CANCELED] = 7, [XFER_ERROR_OTHER] = 8 },
	};
	for (unsigned r = 0; r < FPGAD_XFER_RULE_COUNT; r++)
		s->xfer.refused_by[r] = 100 + r;
	/* Reads: 3 of 3 us, 2 of 1 ms; writes: one of 0 ns, one of 2 s. */
	s->xfer.latency[DIR_C2H].bucket[4] = 3;
	s->xfer.latency[DIR_C2H].bucket[12] = 2;
	s->xfer.latency[DIR_C2H].count = 5;
	s->xfer.latency[DIR_C2H].sum_ns = 2009000;
	s->xfer.latency[DIR_H2C].bucket[0] = 1;
	s->xfer.latency[DIR_H2C].bucket[HISTO_BOUNDS] = 1;
	s->xfer.latency[DIR_H2C].count = 2;
	s->xfer.latency[DIR_H2C].sum_ns = 2000000000;
	st->state = CHANNEL_STREAMING;
	st->leases = 2;
	st->frames = 1000;
	st->bytes = 1048576000;
	st->drops = 7;
	st->stalls = 5;
	st->errors = 1;
	st->recoveries = 4;
	st->integrity_errors = 6;
	st->dma.bucket[0] = 1;
	st->dma.bucket[9] = 599;
	st->dma.bucket[10] = 400;
	st->dma.count = 1000;
	st->dma.sum_ns = 200000000;
	st->latency.bucket[2] = 999;
	st->latency.bucket[HISTO_BOUNDS] = 1;
	st->latency.count = 1000;
	st->latency.sum_ns = 1500000000;
}

static void test_exact_text(void **state)
{
	struct metrics_snapshot s;
	size_t len;
	char *text;

	(void)state;
	snapshot_one(&s);
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	assert_int_equal(len, strlen(text));
	assert_string_equal(text, expected);
	free(text);
}

/* The name a sample line is of: up to '{' or ' '. */
static void sample_name(const char *line, char *buf, size_t len)
{
	size_t n = strcspn(line, "{ ");

	snprintf(buf, len, "%.*s", (int)n, line);
}

/* Does @name belong to family @fam of @type? */
static bool of_family(const char *name, const char *fam, const char *type)
{
	size_t n = strlen(fam);

	if (strcmp(name, fam) == 0)
		return strcmp(type, "histogram") != 0;
	return strcmp(type, "histogram") == 0 && strncmp(name, fam, n) == 0 &&
	       (!strcmp(name + n, "_bucket") || !strcmp(name + n, "_sum") ||
		!strcmp(name + n, "_count"));
}

/*
 * Two channels: every sample follows its own family's HELP and TYPE, no
 * family is declared twice, and the failed channel's state reads failed.
 */
static void test_families_grouped(void **state)
{
	char fam[128] = "", type[32] = "", name[128], *text, *save = NULL;
	char seen[64][128];
	unsigned n_seen = 0, samples = 0;
	struct metrics_snapshot s;
	size_t len;

	(void)state;
	snapshot_one(&s);
	s.n_channels = 2;
	s.channels[1].name = "out0";
	s.channels[1].direction = "h2c";
	s.channels[1].st.state = CHANNEL_FAILED;
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	assert_non_null(strstr(text, "fpgad_channel_state{channel=\"out0\",direction=\"h2c\",state=\"failed\"} 1\n"));
	assert_non_null(strstr(text, "fpgad_channel_state{channel=\"out0\",direction=\"h2c\",state=\"idle\"} 0\n"));
	assert_non_null(strstr(text, "fpgad_channel_frames_total{channel=\"out0\",direction=\"h2c\"} 0\n"));
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "# HELP ", 7) == 0)
			continue;
		if (sscanf(l, "# TYPE %127s %31s", fam, type) == 2) {
			for (unsigned i = 0; i < n_seen; i++)
				assert_string_not_equal(seen[i], fam);
			assert_true(n_seen < 64);
			snprintf(seen[n_seen++], sizeof(seen[0]), "%s", fam);
			continue;
		}
		sample_name(l, name, sizeof(name));
		if (!of_family(name, fam, type))
			fail_msg("%s outside its family (in %s %s)", l, fam, type);
		samples++;
	}
	/*
	 * 4 daemon gauges, the card and its 3 AER counts, 5 process samples;
	 * the transfers' 6
	 * plain samples, 4 error kinds, 13 rules, 2 x 26 latency lines; per
	 * channel its mode, 4 states, leases, 7 counters, 2 x 26 histogram
	 * lines.
	 */
	assert_int_equal(samples, 4 + 1 + 3 + 5 + (6 + 4 + 13 + 2 * 26) +
				  2 * (1 + 4 + 1 + 7 + 2 * 26));
	free(text);
}

/*
 * The AER family only where the card has the counts (never the simulated
 * card); promtool, where installed, takes the family.
 */
static void test_card_aer(void **state)
{
	char file[] = "/tmp/fpgad-metrics.XXXXXX", cmd[128];
	struct metrics_snapshot s;
	size_t len;
	char *text;
	FILE *f;
	int fd, rc;

	(void)state;
	snapshot_one(&s);
	s.card.inv.aer = false;
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	assert_null(strstr(text, "fpgad_card_aer_errors_total"));
	assert_non_null(strstr(text, "fpgad_card_info{"));
	free(text);

	s.card.inv.aer = true;
	s.card.inv.aer_correctable = 0;
	s.card.inv.aer_fatal = 1;
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	assert_non_null(strstr(text, "# TYPE fpgad_card_aer_errors_total counter\n"
				     "fpgad_card_aer_errors_total{pci_address=\"0000:03:00.0\",severity=\"correctable\"} 0\n"
				     "fpgad_card_aer_errors_total{pci_address=\"0000:03:00.0\",severity=\"nonfatal\"} 2\n"
				     "fpgad_card_aer_errors_total{pci_address=\"0000:03:00.0\",severity=\"fatal\"} 1\n"));
	if (system("command -v promtool >/dev/null 2>&1") != 0) {
		free(text);
		return;
	}
	fd = mkstemp(file);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	free(text);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", file);
	rc = system(cmd);
	unlink(file);
	assert_int_equal(rc, 0);
}

/* A network channel's counters: its samples alone, none for a card channel. */
static void test_net_counters(void **state)
{
	struct metrics_snapshot s;
	char *text, *p;
	size_t len;

	(void)state;
	snapshot_one(&s);
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	assert_null(strstr(text, "fpgad_channel_net_"));
	free(text);

	s.n_channels = 2;
	s.channels[1] = s.channels[0];
	s.channels[1].name = "net0";
	s.channels[1].st.network = true;
	s.channels[1].st.net.lost_packets = 42;
	s.channels[1].st.net.wrong_rkey = 7;
	s.channels[1].st.net.bad_icrc = 3;
	snprintf(s.channels[1].net.interface, sizeof(s.channels[1].net.interface), "eth1");
	snprintf(s.channels[1].net.listen, sizeof(s.channels[1].net.listen), "10.0.0.1:4791");
	snprintf(s.channels[1].net.sender, sizeof(s.channels[1].net.sender), "10.0.0.2");
	s.channels[1].net.mtu = 9000;
	s.channels[1].net.qpn = 0x4d2;
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	assert_non_null(strstr(text, "# TYPE fpgad_channel_net_lost_packets_total counter\n"
				     "fpgad_channel_net_lost_packets_total{channel=\"net0\",direction=\"c2h\"} 42\n"));
	assert_non_null(strstr(text, "fpgad_channel_net_wrong_rkey_total{channel=\"net0\",direction=\"c2h\"} 7\n"));
	assert_non_null(strstr(text, "fpgad_channel_net_kernel_drops_total{channel=\"net0\",direction=\"c2h\"} 0\n"));
	assert_non_null(strstr(text, "fpgad_channel_net_bad_icrc_total{channel=\"net0\",direction=\"c2h\"} 3\n"));
	/* Where it listens and whom from: the labels of one gauge. */
	assert_non_null(strstr(text, "# TYPE fpgad_channel_net_info gauge\n"
				     "fpgad_channel_net_info{channel=\"net0\",direction=\"c2h\",source=\"udp\","
				     "interface=\"eth1\",listen=\"10.0.0.1:4791\",mtu=\"9000\",qpn=\"0x4d2\","
				     "sender=\"10.0.0.2\"} 1\n"));
	assert_null(strstr(text, "fpgad_channel_net_info{channel=\"cam0\""));
	assert_null(strstr(text, "fpgad_channel_net_packets_total{channel=\"cam0\""));
	free(text);

	/* Each family once, whatever the number of network channels. */
	s.n_channels = 3;
	s.channels[2] = s.channels[1];
	s.channels[2].name = "net1";
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	p = strstr(text, "# TYPE fpgad_channel_net_packets_total");
	assert_non_null(p);
	assert_null(strstr(p + 1, "# TYPE fpgad_channel_net_packets_total"));
	assert_non_null(strstr(text, "fpgad_channel_net_lost_packets_total{channel=\"net1\",direction=\"c2h\"} 42\n"));
	free(text);
}

static void test_label_escapes(void **state)
{
	struct metrics_snapshot s;
	size_t len;
	char *text;

	(void)state;
	snapshot_one(&s);
	s.version = "a\nb\\c\"d";
	s.n_channels = 0;
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	assert_non_null(strstr(text, "\nfpgad_build_info{version=\"a\\nb\\\\c\\\"d\"} 1\n"));
	/* No channel, no channel sample; the families stay declared. */
	assert_null(strstr(text, "channel=\""));
	assert_non_null(strstr(text, "# TYPE fpgad_channel_frames_total counter\n"));
	free(text);
}

/* A write of 3 us: in the write histogram's 4.096 us bucket, not below. */
static void test_transfer_latency(void **state)
{
	struct metrics_snapshot s;
	size_t len;
	char *text;

	(void)state;
	snapshot_one(&s);
	memset(s.xfer.latency, 0, sizeof(s.xfer.latency));
	histo_add(&s.xfer.latency[DIR_H2C], 3000);
	assert_int_equal(metrics_format(&s, &text, &len), 0);
	assert_non_null(strstr(text, "\nfpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"2.048e-06\"} 0\n"
				     "fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"4.096e-06\"} 1\n"));
	assert_non_null(strstr(text, "\nfpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"1.073741824\"} 1\n"
				     "fpgad_transfer_latency_seconds_bucket{op=\"write\",le=\"+Inf\"} 1\n"
				     "fpgad_transfer_latency_seconds_sum{op=\"write\"} 0.000003000\n"
				     "fpgad_transfer_latency_seconds_count{op=\"write\"} 1\n"));
	assert_non_null(strstr(text, "\nfpgad_transfer_latency_seconds_count{op=\"read\"} 0\n"));
	free(text);
}

static void test_histo_buckets(void **state)
{
	struct histo h = { 0 };

	(void)state;
	assert_int_equal(histo_bound_ns(0), 256);
	assert_int_equal(histo_bound_ns(HISTO_BOUNDS - 1), 1ull << 30);
	assert_int_equal(histo_bucket(0), 0);
	assert_int_equal(histo_bucket(256), 0);
	assert_int_equal(histo_bucket(257), 1);
	assert_int_equal(histo_bucket(512), 1);
	assert_int_equal(histo_bucket(513), 2);
	assert_int_equal(histo_bucket(1000000), 12);	/* 2^20 ns bound */
	assert_int_equal(histo_bucket(1ull << 30), HISTO_BOUNDS - 1);
	assert_int_equal(histo_bucket((1ull << 30) + 1), HISTO_BOUNDS);
	assert_int_equal(histo_bucket(UINT64_MAX), HISTO_BOUNDS);
	/* Every bound is the last value of its bucket. */
	for (unsigned i = 0; i < HISTO_BOUNDS; i++) {
		assert_int_equal(histo_bucket(histo_bound_ns(i)), i);
		assert_int_equal(histo_bucket(histo_bound_ns(i) + 1), i + 1);
	}
	histo_add(&h, 100);
	histo_add(&h, 300);
	histo_add(&h, 5000000000ull);
	assert_int_equal(h.bucket[0], 1);
	assert_int_equal(h.bucket[1], 1);
	assert_int_equal(h.bucket[HISTO_BOUNDS], 1);
	assert_int_equal(h.count, 3);
	assert_int_equal(h.sum_ns, 5000000400ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_text),
		cmocka_unit_test(test_families_grouped),
		cmocka_unit_test(test_card_aer),
		cmocka_unit_test(test_net_counters),
		cmocka_unit_test(test_label_escapes),
		cmocka_unit_test(test_transfer_latency),
		cmocka_unit_test(test_histo_buckets),
	};

	return cmocka_run_group_tests_name("metrics", tests, NULL, NULL);
}
