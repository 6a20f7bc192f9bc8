# fpgad - one Makefile for the daemon, the client library, the CLI, the
# kernel module and every test tier.  Outputs go under $(BUILD).
#
#   make deps      install the missing Debian packages the build and the demo
#                  need (as root), else print how; deps-check: those the
#                  test tiers need too
#   make / all     build/fpgad build/fpgad-exporter build/fpgactl
#                  build/libfpgad.{so,a} build/fpgad.pc
#   make check     deps-check, then every tier of tests/tiers this machine
#                  can run (tests/check.sh; TIERS="unit hostile" for some)
#   make demo      deps, build, stream and verify frames on the simulated card
#   make bench     streaming and control-plane benchmarks into BENCHMARKS.md
#   make install   PREFIX=/usr/local DESTDIR=
#
# Options: V=1 (echo commands), CUDA=0 (build without CUDA), STATIC=1 (link
# nng, libuv, protobuf-c and inih statically, for binaries that travel).

BUILD   ?= build
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
DESTDIR ?=
V       ?= 0
STATIC  ?= 0
SANITIZE ?= 0

VERSION := $(shell sed -n 's/^\#define FPGAD_VERSION_STRING "\(.*\)"/\1/p' include/fpgad.h)

CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard $(CUDA_HOME)/bin/nvcc))
ifeq ($(origin CUDA),undefined)
CUDA := $(if $(NVCC),1,0)
endif

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

CC ?= cc
AR ?= ar
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# Every object sees the public headers and the shared helpers; each part
# sees its own headers only (tests see everything they test).
CPPFLAGS_ALL := -D_GNU_SOURCE -DFPGAD_VERSION='"$(VERSION)"' \
	-Icommon -Iinclude -Ikmod/uapi -I$(BUILD)/gen
INC_DAEMON := -Idaemon
INC_CLIENT := -Iclient -DFPGAD_BUILDING_LIBRARY
CFLAGS_ALL := -std=c11 $(WARN) -fPIC -fvisibility=hidden -MMD -MP $(CFLAGS)

SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
ifeq ($(SANITIZE),1)
CFLAGS_ALL += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
endif
# Generated code is not held to the project's warnings.
CFLAGS_GEN := -std=c11 -fPIC -fvisibility=hidden -MMD -MP $(CFLAGS) $(if $(filter 1,$(SANITIZE)),$(SAN_FLAGS))

ifeq ($(CUDA),1)
CPPFLAGS_ALL += -DFPGAD_CUDA=1 -I$(CUDA_HOME)/include
CUDA_LIBDIR ?= $(CUDA_HOME)/lib64
CUDA_LIBS := -L$(CUDA_LIBDIR) -lcudart_static -ldl -lrt
# fpgad.pc names the toolkit's library folder as the variable cudalibdir,
# which a user with the toolkit elsewhere overrides (pkg-config
# --define-variable=cudalibdir=DIR).
PC_CUDA_LIBS := -L$${cudalibdir} -lcudart_static -ldl -lrt
endif

ifeq ($(STATIC),1)
DEP_LIBS := -Wl,-Bstatic -lnng -lmbedtls -lmbedx509 -lmbedcrypto -luv_a \
	-lprotobuf-c -linih -ljansson -lz -Wl,-Bdynamic -lsystemd -lpthread -ldl -lrt -lm
else
DEP_LIBS := -lnng -lmbedtls -lmbedx509 -lmbedcrypto -luv -lprotobuf-c -linih \
	-ljansson -lz -lsystemd -lpthread -lrt -lm
endif
CLIENT_LIBS := -lnng -lmbedtls -lmbedx509 -lmbedcrypto -lprotobuf-c -lpthread -lrt

# --- sources ---------------------------------------------------------------

PROTO_C := $(BUILD)/gen/fpgad.pb-c.c
PROTO_H := $(BUILD)/gen/fpgad.pb-c.h

# CUDA builds compile *_cuda.c, the others *_nocuda.c.
cuda_filter = $(filter-out $(if $(filter 1,$(CUDA)),%_nocuda.c,%_cuda.c),$(1))

COMMON_SRC := $(call cuda_filter,$(wildcard common/*.c))
# The services' journal log and sd_notify: fpgad and fpgad-exporter link
# them, libfpgad (which never prints) does not.
SERVICE_SRC := common/log.c common/notify.c
LIB_COMMON_SRC := $(filter-out $(SERVICE_SRC),$(COMMON_SRC))
DAEMON_SRC := $(call cuda_filter,$(filter-out daemon/main.c,\
	$(wildcard daemon/*.c daemon/*/*.c daemon/*/*/*.c)))
# Older versions of libfpgad.so's functions: the shared library only.
CLIENT_SO_SRC := client/symver.c
CLIENT_SRC := $(filter-out $(CLIENT_SO_SRC),$(call cuda_filter,$(wildcard client/*.c)))
FPGACTL_SRC := $(call cuda_filter,$(wildcard client/fpgactl/*.c))
EXPORTER_SRC := $(wildcard exporter/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
PROTO_OBJ := $(BUILD)/obj/gen/fpgad.pb-c.o
COMMON_OBJ := $(call obj,$(COMMON_SRC)) $(PROTO_OBJ)
DAEMON_OBJ := $(call obj,$(DAEMON_SRC))
CLIENT_OBJ := $(call obj,$(CLIENT_SRC))
LIB_COMMON_OBJ := $(call obj,$(LIB_COMMON_SRC)) $(PROTO_OBJ)
SERVICE_OBJ := $(call obj,$(SERVICE_SRC))

UNIT_SRC := $(call cuda_filter,$(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))

PROGRAMS := $(BUILD)/fpgad $(BUILD)/fpgad-exporter $(BUILD)/fpgactl
LIBS := $(BUILD)/libfpgad.so $(BUILD)/libfpgad.a $(BUILD)/fpgad.pc

.PHONY: all deps check demo bench install clean unit run-unit valgrind \
	sanitize integration fuzz gpu
.DEFAULT_GOAL := all
.SECONDARY:

all: $(PROGRAMS) $(LIBS)

# --- Debian packages ---------------------------------------------------------

# What the build and the demo need (make deps); zlib: the CRC-32 of RoCE
# v2's iCRC (daemon/device/net/roce_icrc.c).
DEMO_DEBS := build-essential pkg-config libsystemd-dev libprotobuf-c-dev \
	protobuf-c-compiler libuv1-dev libnng-dev libinih-dev \
	libjansson-dev libmbedtls-dev zlib1g-dev
# What the tiers need besides (make deps-check; the .mk files add theirs).
DEBS := libcmocka-dev valgrind clang libclang-rt-14-dev jq psmisc openssl \
	linux-headers-amd64 linux-image-amd64 qemu-system-x86 busybox-static \
	libdrm-dev kmod cpio passwd
# promtool, which checks fpgad's Prometheus exposition (tests/integration/test_metrics.c).
# No Debian package ships it alone; deps installs packages with services
# kept from starting (policy-rc.d), so no Prometheus server comes up.
DEBS += prometheus
# The kernel module is built and booted against both of Debian 12's kernels,
# and cross-compiled for arm64.
# (The 6.12 kernel of Debian 12 is in bookworm-security, which an installed
# Debian 12 has among its sources.)
DEBS += linux-headers-6.12-amd64 linux-image-6.12-amd64 gcc-aarch64-linux-gnu

# install_missing PACKAGES: apt-get install those not installed (as root,
# services kept from starting), else say how.
define install_missing
	@missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	[ -z "$$missing" ] && exit 0; \
	missing=$$(echo $$missing); \
	if [ "$$(id -u)" = 0 ]; then \
		echo "  DEPS   installing $$missing"; \
		guard=; \
		if [ ! -e /usr/sbin/policy-rc.d ]; then \
			printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && \
			chmod 0755 /usr/sbin/policy-rc.d && guard=1; \
		fi; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
		rc=$$?; [ -z "$$guard" ] || rm -f /usr/sbin/policy-rc.d; \
		[ $$rc = 0 ] || exit 1; \
	else \
		echo "fpgad: missing Debian packages; run:"; \
		echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $$missing"; \
		exit 1; \
	fi
endef

.PHONY: deps-check
deps:
	$(call install_missing,$(DEMO_DEBS))
deps-check:
	$(call install_missing,$(DEMO_DEBS) $(DEBS))

# --- build rules ---------------------------------------------------------------

$(PROTO_C) $(PROTO_H): proto/fpgad.proto
	$(call msg,PROTOC,$<)
	$(Q)mkdir -p $(BUILD)/gen
	$(Q)protoc-c --proto_path=proto --c_out=$(BUILD)/gen $<

$(BUILD)/obj/gen/fpgad.pb-c.o: $(PROTO_C)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS_ALL) $(CPPFLAGS) $(CFLAGS_GEN) -c -o $@ $<

$(BUILD)/obj/daemon/%.o: INC_DIR := $(INC_DAEMON)
$(BUILD)/obj/client/%.o: INC_DIR := $(INC_CLIENT)
$(BUILD)/obj/tests/%.o: INC_DIR := $(INC_DAEMON) -Iclient -Iexporter -Itests/lib

$(BUILD)/obj/%.o: %.c | $(PROTO_H)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS_ALL) $(INC_DIR) $(CPPFLAGS) $(CFLAGS_ALL) -c -o $@ $<

# Internal archives: the daemon but main(), the library's own objects, and
# what both compile (common/ and the generated protocol code).
$(BUILD)/libfpgad-core.a: $(DAEMON_OBJ)
$(BUILD)/libfpgad-client.a: $(CLIENT_OBJ)
$(BUILD)/libfpgad-common.a: $(COMMON_OBJ)
# fpgad-exporter but main(), for its unit tests.
$(BUILD)/libfpgad-exporter.a: $(filter-out %/main.o,$(call obj,$(EXPORTER_SRC)))
# The installed static library stands alone.
$(BUILD)/libfpgad.a: $(CLIENT_OBJ) $(LIB_COMMON_OBJ)

$(BUILD)/libfpgad-core.a $(BUILD)/libfpgad-client.a $(BUILD)/libfpgad-common.a \
		$(BUILD)/libfpgad-exporter.a $(BUILD)/libfpgad.a:
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# The shared library exports the functions of fpgad.h and nothing else:
# hidden visibility, FPGAD_EXPORT, and a version script.
$(BUILD)/libfpgad.so: $(CLIENT_OBJ) $(call obj,$(CLIENT_SO_SRC)) $(LIB_COMMON_OBJ) \
		client/libfpgad.map
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -Wl,-soname,libfpgad.so.0 -Wl,--no-undefined \
		-Wl,--version-script=client/libfpgad.map $(LDFLAGS) \
		-o $@ $(filter %.o,$^) $(CUDA_LIBS) $(CLIENT_LIBS)

$(BUILD)/fpgad: $(BUILD)/obj/daemon/main.o $(BUILD)/libfpgad-core.a \
		$(BUILD)/libfpgad-common.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

# fpgad-exporter's accept guard (exporter/accept_guard.c) must be what
# libnng calls.
EXPORTER_EXPORTS := -Wl,--export-dynamic-symbol=accept \
	-Wl,--export-dynamic-symbol=accept4

$(BUILD)/fpgad-exporter: $(call obj,$(EXPORTER_SRC)) $(SERVICE_OBJ) $(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $(EXPORTER_EXPORTS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

$(BUILD)/fpgactl: $(call obj,$(FPGACTL_SRC)) $(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

INTERNAL_LIBS := $(BUILD)/libfpgad-exporter.a $(BUILD)/libfpgad-core.a \
	$(BUILD)/libfpgad-client.a $(BUILD)/libfpgad-common.a

PC_SED = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|g' -e 's|@VERSION@|$(VERSION)|g' \
	-e 's|@CUDA_LIBS@|$(PC_CUDA_LIBS)|g' -e 's|@CUDA_LIBDIR@|$(CUDA_LIBDIR)|g'

$(BUILD)/fpgad.pc: client/fpgad.pc.in Makefile
	$(call msg,GEN,$@)
	$(Q)$(PC_SED) $< > $@

# --- unit tests (CMocka, one table per module) -----------------------------------

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(INTERNAL_LIBS)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS) -lcmocka

unit: $(UNIT_BIN)

run-unit: unit
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done

valgrind: unit
	@set -e; for t in $(UNIT_BIN); do echo "== valgrind $$t"; \
		valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect \
		--suppressions=tests/valgrind.supp $$t >/dev/null 2>$(BUILD)/valgrind.log || \
		{ cat $(BUILD)/valgrind.log; echo "valgrind: $$t failed"; exit 1; }; done; \
		echo "valgrind: $(words $(UNIT_BIN)) unit suites clean"

sanitize:
	$(Q)$(MAKE) --no-print-directory BUILD=$(BUILD)/asan SANITIZE=1 CUDA=0 CC=clang run-unit

# --- the rest of the tiers ------------------------------------------------------------

ITEST_SRC := $(wildcard tests/integration/test_*.c)
ITEST_BIN := $(patsubst tests/integration/%.c,$(BUILD)/itests/%,$(ITEST_SRC))

$(BUILD)/itests/%: $(BUILD)/obj/tests/integration/%.o \
		$(BUILD)/obj/tests/integration/harness.o $(INTERNAL_LIBS)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS) -lcmocka

$(BUILD)/itests/hold_frame: $(BUILD)/obj/tests/integration/hold_frame.o $(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CUDA_LIBS) $(DEP_LIBS)

# A program of the fpgad.h before the sender's times, on libfpgad.so.
$(BUILD)/itests/old_frame_wait: $(BUILD)/obj/tests/integration/old_frame_wait.o $(BUILD)/libfpgad.so
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD) -l:libfpgad.so -Wl,-rpath,$(abspath $(BUILD))

integration: all $(ITEST_BIN) $(BUILD)/itests/hold_frame $(BUILD)/itests/old_frame_wait
	@rc=0; for t in $(ITEST_BIN) tests/integration/symbols.sh tests/integration/cards.sh \
		tests/integration/install.sh; do echo "== $$t"; BUILD=$(BUILD) $$t || rc=1; done; \
	exit $$rc

# Each part's make file: its targets, and the Debian packages it needs
# (DEBS).  rxe.mk comes after net.mk and system.mk, whose variables it uses.
PARTS_MK := tests/lib/lib.mk kmod/kmod.mk tests/fuzz/fuzz.mk tests/gpu/gpu.mk \
	tests/bench/bench.mk tests/hostile/hostile.mk python/python.mk tests/xfer.mk \
	systemd/service.mk client/pkgconfig.mk man/man.mk debian/deb.mk \
	tests/system/system.mk tests/arch/arch.mk tests/net/net.mk tests/net/roce.mk \
	k8s/k8s.mk tests/mutants/mutants.mk tests/net/rxe.mk tests/arm64/arm64.mk \
	tests/docs/docs.mk
include $(PARTS_MK)

# make check: the tiers of tests/tiers (what each proves, how it runs, in
# which order), scheduled by tests/check.sh; TIERS="unit hostile" runs those.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TIERS ?=
# make check adds dpkg's arm64 architecture for the arm64 tier (deps-arm64).
check: deps-check deps-arm64
	$(Q)BUILD=$(BUILD) MAKE="$(MAKE)" CHECK_JOBS=$(CHECK_JOBS) tests/check.sh $(TIERS)

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=$(BUILD) tests/demo.sh

# --- install ---------------------------------------------------------------------

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/sbin \
		$(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PREFIX)/include \
		$(DESTDIR)/etc/fpgad $(DESTDIR)$(PREFIX)/lib/systemd/system \
		$(DESTDIR)$(PREFIX)/lib/sysusers.d $(DESTDIR)$(PREFIX)/lib/tmpfiles.d \
		$(DESTDIR)$(PREFIX)/lib/udev/rules.d
	install -m 0755 $(BUILD)/fpgad $(DESTDIR)$(PREFIX)/sbin/fpgad
	install -m 0755 $(BUILD)/fpgad-exporter $(DESTDIR)$(PREFIX)/sbin/fpgad-exporter
	install -m 0755 $(BUILD)/fpgactl $(DESTDIR)$(PREFIX)/bin/fpgactl
	install -m 0644 $(BUILD)/libfpgad.a $(DESTDIR)$(LIBDIR)/libfpgad.a
	install -m 0755 $(BUILD)/libfpgad.so $(DESTDIR)$(LIBDIR)/libfpgad.so.0
	ln -sf libfpgad.so.0 $(DESTDIR)$(LIBDIR)/libfpgad.so
	$(PC_SED) client/fpgad.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/fpgad.pc
	install -m 0644 include/fpgad*.h $(DESTDIR)$(PREFIX)/include/
	install -m 0644 systemd/fpgad.conf $(DESTDIR)/etc/fpgad/fpgad.conf.example
	sed 's|@SBINDIR@|$(PREFIX)/sbin|g' systemd/fpgad.service.in > \
		$(DESTDIR)$(PREFIX)/lib/systemd/system/fpgad.service
	install -m 0644 systemd/fpgad.sysusers $(DESTDIR)$(PREFIX)/lib/sysusers.d/fpgad.conf
	install -m 0644 systemd/fpgad.tmpfiles $(DESTDIR)$(PREFIX)/lib/tmpfiles.d/fpgad.conf
	install -m 0644 systemd/60-fpgad.rules $(DESTDIR)$(PREFIX)/lib/udev/rules.d/60-fpgad.rules

clean:
	rm -rf $(BUILD)
	-$(MAKE) --no-print-directory kmod-clean 2>/dev/null

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
