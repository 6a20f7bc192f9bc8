/* SPDX-License-Identifier: MIT */
/*
 * channel_counters.h - a channel's counters, written down once.
 *
 * Each is one uint64_t of the same name in fpgad's struct channel_stats,
 * the protocol's ChannelStatsReply, fpgad.h's struct fpgad_channel_stats,
 * `fpgactl stats --json` and the Python binding's ChannelStats.  fpgad's
 * reply, libfpgad's copy, fpgactl's JSON, the Python dict and the
 * Prometheus families are generated from this table; the protocol, the
 * public header, the Python dataclass and the manual pages are checked
 * against it (tests/arch/counters.py, in make arch-check), so that a
 * counter added here and forgotten in one of them fails the build or the
 * check, naming the file.
 *
 * X(name, help): @help, when not NULL, makes the counter the Prometheus
 * family fpgad_channel_<name>_total with that HELP text.
 */
#ifndef FPGAD_CHANNEL_COUNTERS_H
#define FPGAD_CHANNEL_COUNTERS_H

#define CHANNEL_COUNTERS(X)						\
	X(frames, "Frames the channel moved: published to its lessees "	\
		  "(c2h), or read by the card (h2c).")			\
	X(bytes, "Bytes the card's DMA moved in transfers that "	\
		 "completed.")						\
	X(drops, "Frames lost: ready frames nobody held, taken back "	\
		 "under policy drop-oldest (c2h); frames of the writer "	\
		 "the card lost (h2c).")				\
	X(stalls, "Times the card waited for a free slot under policy "	\
		  "block.")						\
	X(errors, "DMA errors and timeouts, and transfers that could "	\
		  "not be started or copied.")				\
	X(recoveries, "Engine resets after a DMA error or timeout.")	\
	X(integrity_errors, "Frames whose CRC-32C did not match "	\
			    "(integrity = crc32c); published flagged "	\
			    "ERROR.")					\
	X(copies, NULL)			/* bounce copies made */	\
	X(card_good, NULL)		/* h2c, sim: frames its sink verified */ \
	X(card_bad, NULL)		/* h2c, sim: frames it rejected */

#endif
