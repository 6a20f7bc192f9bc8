# The Python package (python/): the extension fpgad._fpgad over libfpgad and
# its pytest suite, run against real fpgad processes on the simulated card.
#
#   make python        build $(BUILD)/python/fpgad/ (importable with
#                      PYTHONPATH=$(BUILD)/python), an abi3 module for
#                      CPython >= 3.11 with libfpgad linked in
#   make python-check  build, then pytest python/tests; skips, saying why,
#                      without python3-dev, numpy or pytest
#
# libfpgad.a is always linked in, and CUDA builds link the CUDA runtime
# statically in any case; with STATIC=1 protobuf-c is linked in too and
# libnng (with its mbedtls) is copied beside the module, so $(BUILD)/python
# travels to another host like the other binaries.  Symbols of the static
# libraries stay inside the module.

PYTHON ?= $(firstword $(wildcard /usr/bin/python3) python3)
PY_DIR := $(BUILD)/python/fpgad
PY_EXT := $(PY_DIR)/_fpgad.abi3.so
PY_INC := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])' 2>/dev/null)
PY_HAVE_DEV := $(wildcard $(PY_INC)/Python.h)
PY_SRC := $(wildcard python/src/*.c)
PY_OBJ := $(patsubst python/src/%.c,$(BUILD)/obj/python/%.o,$(PY_SRC))
PY_FILES := $(addprefix $(PY_DIR)/,$(notdir $(wildcard python/fpgad/*.py python/fpgad/*.pyi) \
	python/fpgad/py.typed))

# Debian's libnng.a is not position-independent, so STATIC=1 ships nng
# (and the mbedtls it needs) beside the module instead, found through an
# RPATH of $ORIGIN.
ifeq ($(STATIC),1)
PY_LIBS := -lnng -lmbedtls -lmbedx509 -lmbedcrypto -Wl,-Bstatic -lprotobuf-c -Wl,-Bdynamic \
	-lpthread -ldl -lrt -lm \
	-Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN'
PY_SHIP = ldd $@ | awk -v d=$(abspath $(PY_DIR))/ \
	'$$1 ~ /^lib(nng|mbed)/ && index($$3, d) != 1 { print $$3 }' | xargs -r cp -L -t $(PY_DIR)
else
PY_LIBS := $(CLIENT_LIBS) -ldl
PY_SHIP = true
endif

DEBS += python3-dev python3-numpy python3-pytest python3-setuptools python3-venv python3-wheel

.PHONY: python python-check

$(BUILD)/obj/python/%.o: python/src/%.c python/src/pyfpgad.h include/fpgad.h \
		common/channel_counters.h
	$(call msg,CC,$<)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -I$(PY_INC) -Iinclude -Icommon -D_GNU_SOURCE $(CPPFLAGS) \
		$(CFLAGS_ALL) -c -o $@ $<

$(PY_EXT): $(PY_OBJ) $(BUILD)/libfpgad.a
	$(call msg,LD,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -shared -Wl,--exclude-libs,ALL $(LDFLAGS) -o $@ $(PY_OBJ) \
		$(BUILD)/libfpgad.a $(CUDA_LIBS) $(PY_LIBS)
	$(Q)$(PY_SHIP)

$(PY_DIR)/%: python/fpgad/%
	$(Q)mkdir -p $(dir $@)
	$(Q)cp $< $@

ifneq ($(PY_HAVE_DEV),)
python: $(PY_EXT) $(PY_FILES) $(BUILD)/fpgad.pc
else
python:
	@echo "python: not built: no Python.h for $(PYTHON) (Debian: python3-dev)"
endif

# The suite starts fpgad itself (FPGAD_BUILD names the build tree).
# The sender python/tests/test_sender_times.py runs: net.mk, included later, builds it.
python-check: all python $(BUILD)/net/hsb_sender
	@if [ -z "$(PY_HAVE_DEV)" ]; then \
		echo "python: SKIP: no Python.h for $(PYTHON) (python3-dev)"; exit 0; fi; \
	if ! $(PYTHON) -c 'import numpy, pytest' 2>/dev/null; then \
		echo "python: SKIP: $(PYTHON) lacks numpy or pytest (python3-numpy, python3-pytest)"; \
		exit 0; fi; \
	rc=0; echo "== python/tests ($(PYTHON))"; \
	FPGAD_BUILD=$(BUILD) PYTHONPATH=$(BUILD)/python PYTHONDONTWRITEBYTECODE=1 \
		$(PYTHON) -m pytest -p no:cacheprovider -q python/tests || rc=1; \
	echo "== python/tests/install.sh (README's steps in a fresh venv)"; \
	BUILD=$(BUILD) PYTHON=$(PYTHON) python/tests/install.sh || rc=1; \
	exit $$rc


# The GPU suite runs the package's GPU steps (python/tests/gpu_frames.py).
gpu-check: python
