# Remora build. `make` builds build/remora; `make test` builds and runs every
# test (plain and ASan+UBSan); `make run` starts the chat on the default model.
# Packages come from Debian; `make deps` installs what is missing when run as
# root and otherwise prints the exact apt-get line.

CC      ?= cc
PREFIX  ?= /usr/local
DESTDIR ?=
PKGS     = jansson libcurl libutf8proc ncursesw zlib libmicrohttpd
DEB_PKGS = build-essential pkg-config libjansson-dev libcurl4-openssl-dev zlib1g-dev \
           libutf8proc-dev libncurses-dev libreadline-dev libmicrohttpd-dev unicode-data
TEST_DEB_PKGS = clang tmux nginx-light mandoc groff-base python3 curl openssl nodejs npm

MODE ?= rel
B     = build/$(MODE)
GEN   = build/gen
UNICODE_DATA ?= /usr/share/unicode
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lreadline -lm -pthread

WARN    = -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -Wno-missing-field-initializers -Wshadow=local
BASE_CFLAGS = -std=gnu11 -D_GNU_SOURCE -g $(WARN) -pthread -Iengine -I. -I$(GEN) $(PKG_CFLAGS)
ifeq ($(MODE),asan)
OPT = -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
LDOPT = -fsanitize=address,undefined
else
OPT = -O2
LDOPT =
endif
CFLAGS_ALL = $(BASE_CFLAGS) $(OPT) $(CFLAGS)

ENGINE_SRC := $(wildcard engine/*/*.c)
# The optional CUDA backend (engine/gpu/, README "The GPU"): built when nvcc
# is found, or with CUDA=1; CUDA=0 (or no nvcc) builds gpu_none.c instead,
# whose products all run on the CPU.
NVCC ?= $(shell command -v nvcc 2>/dev/null || (test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc))
CUDA ?= $(if $(NVCC),1,0)
# the sanitizers' builds stay on the CPU: the CUDA runtime's own allocations
# are not ours to account for
ifeq ($(MODE),asan)
override CUDA := 0
endif
ifeq ($(CUDA),1)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
ENGINE_SRC := $(filter-out engine/gpu/gpu_none.c,$(ENGINE_SRC))
GPU_OBJ    := $(patsubst %.cu,$(B)/%.o,$(wildcard engine/gpu/*.cu))
CUDA_LIBS   = -L$(CUDA_HOME)/lib64 -lcudart_static -ldl -lrt -lstdc++
# --fmad=false: no a*b+c is contracted (the kernels write every fma out);
# no fast-math, so subnormals are kept: the CPU's bits (engine/gpu/gpu.h)
# Machine code for Hopper (sm_90, the H200 the GPU tests run on), PTX for
# Ampere (compute_80, compiled by the driver at its first run and cached):
# sm_80 machine code too doubled nvcc's compile of gpu_kernels.cu, 53 s on
# the 2-core development machine, the release build's longest job and so
# the start of every `make test`. The PTX keeps every rounding explicit
# (mul.rn, add.rn, fma.rn): the driver's compile contracts nothing.
NVCC_FLAGS  = -O3 -std=c++17 --fmad=false -Xptxas -v -gencode=arch=compute_90,code=sm_90 \
              -gencode=arch=compute_80,code=compute_80 -Iengine -I. -Xcompiler -g,-pthread,-Wall
endif
UI_SRC     := $(wildcard ui/*.c ui/curses/*.c)
APP_SRC    := $(wildcard app/*.c app/serve/*.c)
TEST_SRC   := $(wildcard tests/unit/*.c tests/unit/*/*.c tests/unit/*/*/*.c)

ENGINE_OBJ := $(ENGINE_SRC:%.c=$(B)/%.o) $(GPU_OBJ)
UI_OBJ     := $(UI_SRC:%.c=$(B)/%.o)
APP_OBJ    := $(APP_SRC:%.c=$(B)/%.o)
TEST_OBJ   := $(TEST_SRC:%.c=$(B)/%.o)
# the unit tests see the engine's test hooks (declared under REMORA_TEST)
$(TEST_OBJ): CFLAGS_ALL += -DREMORA_TEST
# The model and the tests of kernels/crmath.h compute with that header, whose
# every a*b+c is two roundings, as on the GPU (nvcc --fmad=false): gcc in GNU C
# mode would fuse them wherever FMA instructions are enabled (-march=...).
CONTRACT_OFF_OBJ := $(filter $(B)/engine/model/%,$(ENGINE_OBJ)) $(B)/tests/unit/engine/kernels/test_crmath.o
$(CONTRACT_OFF_OBJ): CFLAGS_ALL += -ffp-contract=off
# Under the sanitizers the kernels and the model are compiled at -O2: the
# ASan unit tests spend their time in the fixture models' passes, which
# took 45% fewer CPU-seconds so (model_k3_goldens 4.3 -> 2.4 s,
# model_kl_prefill_equals_decode 0.9 -> 0.5; the whole build at -O2 gave
# no more: 2.6 and 0.6), and the sanitizers check every access the compiled
# code makes at either level; the rest stays at -O1, whose reports are the
# easier to read. The two folders are a tenth of the lines: the build
# grows by a few CPU-seconds (-O2 compiles 1.8 times as long under ASan).
ASAN_O2_OBJ = $(filter $(B)/engine/kernels/% $(B)/engine/model/%,$(ENGINE_OBJ))
ifeq ($(MODE),asan)
$(ASAN_O2_OBJ): OPT = -O2 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
endif
# app/ files the unit tests link (the rest of app/ holds main and the commands):
# the options, and the server's parts without cmd_serve.c
APP_TEST_OBJ := $(B)/app/opts.o $(patsubst %.c,$(B)/%.o,$(wildcard app/serve/*.c))

.PHONY: all run test test-build-rel test-build-asan test-build-fuzz test-build-late deps test-deps clean install unit bench fuzz crmath-check \
        crmath-bench FORCE
# The package check runs first, in its own make: pkg-config is read when a
# make starts, so the build must start after missing packages are installed.
all: deps
	@$(MAKE) --no-print-directory build/remora

# Release binary at build/remora; ASan test binaries under build/asan.
build/remora: $(B)/remora
	@ln -sf $(MODE)/remora $@

$(B)/remora: $(APP_OBJ) $(UI_OBJ) $(B)/libremora.a
	$(CC) $(LDOPT) -o $@ $(APP_OBJ) $(UI_OBJ) $(B)/libremora.a $(PKG_LIBS) $(CUDA_LIBS)

$(B)/libremora.a: $(ENGINE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/remora-tests: $(TEST_OBJ) $(UI_OBJ) $(APP_TEST_OBJ) $(B)/libremora.a
	$(CC) $(LDOPT) -o $@ $(TEST_OBJ) $(UI_OBJ) $(APP_TEST_OBJ) $(B)/libremora.a $(PKG_LIBS) $(CUDA_LIBS)

# SIMD variants are compiled with their own target flags; dispatch picks one at run time.
$(B)/%_avx2.o: %_avx2.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -mavx2 -mfma -MMD -MP -c $< -o $@
$(B)/%_avx512.o: %_avx512.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -mavx512f -mavx512bw -mavx512vl -mavx512dq -mfma -MMD -MP -c $< -o $@
$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@
$(B)/%.o: %.cu
	@mkdir -p $(dir $@)
	@$(NVCC) $(NVCC_FLAGS) -MMD -MP -c $< -o $@ 2> $(@:.o=.ptxas) || { cat $(@:.o=.ptxas); exit 1; }
	@echo "nvcc $<:"; grep -E 'Compiling entry|registers|spill' $(@:.o=.ptxas) | sed 's/^ptxas info *: */  /' || true

# Tables generated from Debian's unicode-data (the Han script for the pre-tokeniser).
$(GEN)/han_ranges.h: engine/text/gen_han.awk $(UNICODE_DATA)/Scripts.txt
	@mkdir -p $(GEN)
	awk -f engine/text/gen_han.awk $(UNICODE_DATA)/Scripts.txt > $@.$$$$ && mv $@.$$$$ $@
$(B)/engine/text/pretok.o: $(GEN)/han_ranges.h

# The installed model's folder under PREFIX (app/model_path.c); the stamp,
# one per build folder, is rewritten only when PREFIX changes, so
# `make install PREFIX=...` rebuilds what uses it. The temporary names
# carry the shell's pid: `make test` runs the release and ASan makes at once.
$(B)/prefix.txt: FORCE
	@mkdir -p $(B)
	@echo '$(PREFIX)' > $@.$$$$; if cmp -s $@.$$$$ $@; then rm -f $@.$$$$; else mv $@.$$$$ $@; fi
$(B)/app/model_path.o: $(B)/prefix.txt
$(B)/app/model_path.o: CFLAGS_ALL += -DREMORA_DATADIR='"$(PREFIX)/share/remora"'
FORCE:

-include $(ENGINE_OBJ:.o=.d) $(UI_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

# The CUDA objects first: nvcc's compile of gpu_kernels.cu (two GPU
# architectures) is the build's longest job, 21 CPU-s of a bare clone's
# 101 (release, ASan and fuzz builds), and make starts prerequisites in
# their order: reached through the library, after the test, UI and engine
# objects, it began last and the links and tests waited for it alone.
unit: $(GPU_OBJ) $(B)/remora-tests $(B)/remora

# libFuzzer targets (clang) for the tokenizer, the tiktoken reader, the
# chat-stream splitter, the tool-call parser, the safetensors header,
# config.json, the index, the transcript reader, the chat JSON, the
# Content-Range parser, the endpoint's stream reader, the snapshot reader and
# the prefix cache's entries; tests/sh/fuzz.sh runs each for a bounded time.
# The engine files they need are compiled once (instrumented,
# build/fuzz/obj) and linked into each.
FUZZ_CC    ?= clang
FUZZ_SAN    = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_FLAGS  = -std=gnu11 -g -O1 -D_GNU_SOURCE $(FUZZ_SAN)
FUZZ_SRC    = engine/text/tokenizer.c engine/text/pretok.c engine/text/utf8.c engine/text/pyjson.c \
              engine/text/template.c engine/text/chat_stream.c engine/text/toolcall.c engine/format/st.c \
              engine/format/config.c engine/session/transcript.c engine/remote/http.c engine/remote/http_policy.c \
              engine/base/err.c engine/base/buf.c engine/base/file.c engine/base/jfile.c engine/base/clock.c \
              engine/base/base64.c
FUZZ_OBJ   := $(FUZZ_SRC:%.c=build/fuzz/obj/%.o)
FUZZ_BIN   := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
fuzz: $(FUZZ_BIN)
.SECONDARY: $(FUZZ_OBJ)
build/fuzz/obj/%.o: %.c $(wildcard engine/*.h engine/*/*.h) $(GEN)/han_ranges.h
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -Iengine -I$(GEN) $(PKG_CFLAGS) -c $< -o $@
# fuzz_sse reads the stats extension through the engine's mapping: it links
# the library (the release build) rather than a list of its files.
build/fuzz/fuzz_sse: tests/fuzz/fuzz_sse.c ui/sse.c ui/sse.h engine/engine.h $(B)/libremora.a
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -Iengine -I. $(PKG_CFLAGS) -o $@ $< ui/sse.c $(B)/libremora.a $(PKG_LIBS) $(CUDA_LIBS)
# fuzz_snapshot and fuzz_prefix need a whole session (the fixture model):
# the snapshot reader and the prefix cache are compiled instrumented, the
# rest of the engine comes from the release library.
SNAP_FUZZ_OBJ = build/fuzz/obj/engine/session/snapshot.o build/fuzz/obj/engine/session/prefix.o
build/fuzz/fuzz_snapshot build/fuzz/fuzz_prefix: build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_snap_common.h \
		$(SNAP_FUZZ_OBJ) $(B)/libremora.a
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -Iengine -I$(GEN) $(PKG_CFLAGS) -o $@ $< $(SNAP_FUZZ_OBJ) \
		$(B)/libremora.a $(PKG_LIBS) $(CUDA_LIBS)
build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(FUZZ_OBJ)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -Iengine -I$(GEN) $(PKG_CFLAGS) -o $@ $< $(FUZZ_OBJ) $(PKG_LIBS)

# The exhaustive proof of kernels/crmath.h: all 2^32 inputs of each function
# against glibc's double and long double functions and MPFR (libmpfr-dev), on
# 2 threads: about 12 CPU-minutes. Not part of `make test`: the unit tests
# check a sample and the hard cases.
CRMATH_CHECK_ARGS ?= -t 2
crmath-check: $(B)/crmath-check
	./$(B)/crmath-check $(CRMATH_CHECK_ARGS)
$(B)/crmath-check: tests/tools/crmath_check.c tests/tools/crmath_sum.h engine/kernels/crmath.h
	@mkdir -p $(B)
	$(CC) $(BASE_CFLAGS) $(OPT) $(CFLAGS) -ffp-contract=off -o $@ $< -lmpfr -lgmp -lm -pthread
# crmath against glibc in the model's element-wise loops (prints figures)
crmath-bench: $(B)/crmath-bench
	./$(B)/crmath-bench
$(B)/crmath-bench: tests/tools/crmath_bench.c engine/kernels/crmath.h
	@mkdir -p $(B)
	$(CC) $(BASE_CFLAGS) $(OPT) $(CFLAGS) -ffp-contract=off -o $@ $< -lm

# ---- dependencies -------------------------------------------------------
deps:
	@sh tests/deps.sh build $(DEB_PKGS)
test-deps:
	@sh tests/deps.sh test $(DEB_PKGS) $(TEST_DEB_PKGS)

# ---- the two commands of the README -------------------------------------
run: all
	./build/remora chat --model assets/model

# The release build first; then tests/run.sh starts the ASan build and the
# fuzz targets of tests/sh/fuzz.sh (test-build-late, its output in
# build/logs/late-build.log) beside the suites that need only the release
# build, and the suites that need them wait for it (run.sh's LATE): the
# builds' serial tails (the archive, the links) no longer leave a core idle
# before the first test. The last line is the whole time, build included.
test: test-deps
	@t0=$$(date +%s); $(MAKE) -j2 test-build-rel || exit 1; t1=$$(date +%s); \
	REMORA_LATE_BUILD="$(MAKE) --no-print-directory -j2 test-build-late" sh tests/run.sh; rc=$$?; t2=$$(date +%s); \
	echo "make test: $$((t2 - t0)) s ($$((t1 - t0)) s building the release, $$((t2 - t1)) s testing beside the ASan and fuzz builds)"; \
	exit $$rc
test-build-rel:
	$(MAKE) MODE=rel unit build/remora
test-build-late: test-build-asan test-build-fuzz
test-build-asan:
	$(MAKE) MODE=asan unit
test-build-fuzz:
	$(MAKE) MODE=rel fuzz

bench: all
	./build/remora bench-kernels

# Installs the binary of this MODE's build folder (build/$(MODE)/remora), so
# `make install MODE=x` builds and installs without touching build/remora.
install: deps
	@$(MAKE) --no-print-directory $(B)/remora
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(B)/remora $(DESTDIR)$(PREFIX)/bin/remora
	install -m 644 man/remora.1 $(DESTDIR)$(PREFIX)/share/man/man1/remora.1
	install -d $(DESTDIR)$(PREFIX)/share/remora/model
	install -m 644 assets/model/*.json assets/model/*.safetensors assets/model/tiktoken.model \
	    assets/model/README.md $(DESTDIR)$(PREFIX)/share/remora/model/

clean:
	rm -rf build
