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
UI_SRC     := $(wildcard ui/*.c ui/curses/*.c)
APP_SRC    := $(wildcard app/*.c app/serve/*.c)
TEST_SRC   := $(wildcard tests/unit/*.c tests/unit/*/*.c)

ENGINE_OBJ := $(ENGINE_SRC:%.c=$(B)/%.o)
UI_OBJ     := $(UI_SRC:%.c=$(B)/%.o)
APP_OBJ    := $(APP_SRC:%.c=$(B)/%.o)
TEST_OBJ   := $(TEST_SRC:%.c=$(B)/%.o)
# the unit tests see the engine's test hooks (declared under REMORA_TEST)
$(TEST_OBJ): CFLAGS_ALL += -DREMORA_TEST
# app/ files the unit tests link (the rest of app/ holds main and the commands)
APP_TEST_OBJ := $(B)/app/opts.o

.PHONY: all run test deps test-deps clean install unit bench fuzz FORCE
# The package check runs first, in its own make: pkg-config is read when a
# make starts, so the build must start after missing packages are installed.
all: deps
	@$(MAKE) --no-print-directory build/remora

# Release binary at build/remora; ASan test binaries under build/asan.
build/remora: $(B)/remora
	@ln -sf $(MODE)/remora $@

$(B)/remora: $(APP_OBJ) $(UI_OBJ) $(B)/libremora.a
	$(CC) $(LDOPT) -o $@ $(APP_OBJ) $(UI_OBJ) $(B)/libremora.a $(PKG_LIBS)

$(B)/libremora.a: $(ENGINE_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/remora-tests: $(TEST_OBJ) $(UI_OBJ) $(APP_TEST_OBJ) $(B)/libremora.a
	$(CC) $(LDOPT) -o $@ $(TEST_OBJ) $(UI_OBJ) $(APP_TEST_OBJ) $(B)/libremora.a $(PKG_LIBS)

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

# Tables generated from Debian's unicode-data (the Han script for the pre-tokeniser).
$(GEN)/han_ranges.h: engine/text/gen_han.awk $(UNICODE_DATA)/Scripts.txt
	@mkdir -p $(GEN)
	awk -f engine/text/gen_han.awk $(UNICODE_DATA)/Scripts.txt > $@.tmp && mv $@.tmp $@
$(B)/engine/text/pretok.o: $(GEN)/han_ranges.h

# The installed model's folder under PREFIX (app/model_path.c); the stamp
# is rewritten only when PREFIX changes, so `make install PREFIX=...`
# rebuilds what uses it.
$(GEN)/prefix.txt: FORCE
	@mkdir -p $(GEN)
	@echo '$(PREFIX)' > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(B)/app/model_path.o: $(GEN)/prefix.txt
$(B)/app/model_path.o: CFLAGS_ALL += -DREMORA_DATADIR='"$(PREFIX)/share/remora"'
FORCE:

-include $(ENGINE_OBJ:.o=.d) $(UI_OBJ:.o=.d) $(APP_OBJ:.o=.d) $(TEST_OBJ:.o=.d)

unit: $(B)/remora-tests $(B)/remora

# libFuzzer targets (clang) for the tokenizer, the tiktoken reader, the
# chat-stream splitter, the tool-call parser, the safetensors header, config.json, the index, the
# transcript reader, the chat JSON, the Content-Range parser and the
# endpoint's stream reader; tests/sh/fuzz.sh runs each for a bounded time.
# The engine files they need are compiled once (instrumented,
# build/fuzz/obj) and linked into each.
FUZZ_CC    ?= clang
FUZZ_SAN    = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_FLAGS  = -std=gnu11 -g -O1 -D_GNU_SOURCE $(FUZZ_SAN)
FUZZ_SRC    = engine/text/tokenizer.c engine/text/pretok.c engine/text/utf8.c engine/text/pyjson.c \
              engine/text/template.c engine/text/chat_stream.c engine/text/toolcall.c engine/format/st.c \
              engine/format/config.c \
              engine/session/transcript.c engine/remote/http.c \
              engine/base/err.c engine/base/buf.c engine/base/file.c engine/base/jfile.c engine/base/clock.c
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
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -Iengine -I. $(PKG_CFLAGS) -o $@ $< ui/sse.c $(B)/libremora.a $(PKG_LIBS)
build/fuzz/%: tests/fuzz/%.c tests/fuzz/fuzz_common.h $(FUZZ_OBJ)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -Iengine -I$(GEN) $(PKG_CFLAGS) -o $@ $< $(FUZZ_OBJ) $(PKG_LIBS)

# ---- dependencies -------------------------------------------------------
deps:
	@sh tests/deps.sh build $(DEB_PKGS)
test-deps:
	@sh tests/deps.sh test $(DEB_PKGS) $(TEST_DEB_PKGS)

# ---- the two commands of the README -------------------------------------
run: all
	./build/remora chat --model assets/model

test: test-deps
	$(MAKE) -j2 MODE=rel unit build/remora
	$(MAKE) -j2 MODE=asan unit
	sh tests/run.sh

bench: all
	./build/remora bench-kernels

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 build/remora $(DESTDIR)$(PREFIX)/bin/remora
	install -m 644 man/remora.1 $(DESTDIR)$(PREFIX)/share/man/man1/remora.1
	install -d $(DESTDIR)$(PREFIX)/share/remora/model
	install -m 644 assets/model/*.json assets/model/*.safetensors assets/model/tiktoken.model \
	    assets/model/README.md $(DESTDIR)$(PREFIX)/share/remora/model/

clean:
	rm -rf build
