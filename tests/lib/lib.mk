# SPDX-License-Identifier: MIT
#
# lib.mk - helpers that several test tiers link (included by the root
# Makefile): tests/lib/*.c, one object each, named by the programs that
# use them.
#
#   raw_request.o   a control request as protobuf bytes (ring_peer, gpu_stale)

TEST_LIB_RAW := $(BUILD)/obj/tests/lib/raw_request.o
