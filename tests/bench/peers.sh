#!/bin/sh
# remora's gemm against its peers on K3's shapes (issue #30's benchmark; it
# judges nothing, takes minutes and is not part of make test):
#   - OpenBLAS sgemm (Debian's libopenblas-dev) on the same weights decoded to
#     fp32, interleaved with remora round by round on the same threads, with
#     the FMA peak measured in each round (tests/bench/peers.c says how, and
#     states OpenBLAS's loss of precision against remora's fixed order);
#   - ggml's CPU backend: not built by this script yet (see the README's
#     performance section for why); LLAMA_DIR is accepted for when it is.
#
# usage: sh tests/bench/peers.sh [THREADS] [SECONDS] [ROUNDS] [LLAMA_DIR]
#   defaults 2 threads, 1-second windows, 3 rounds. Needs build/rel/libremora.a
#   (make MODE=rel build/remora) and libopenblas-dev (apt-get install
#   libopenblas-dev).
set -eu
THREADS=${1:-2}; SECONDS_=${2:-1}; ROUNDS=${3:-3}; LLAMA=${4:-}
LIB=build/rel/libremora.a
[ -f "$LIB" ] || { echo "peers.sh: $LIB is missing: make MODE=rel build/remora first" >&2; exit 2; }
[ -f /usr/include/x86_64-linux-gnu/openblas-pthread/cblas.h ] || [ -f /usr/include/openblas/cblas.h ] ||
    pkg-config --exists openblas 2>/dev/null ||
    { echo "peers.sh: OpenBLAS is missing: apt-get install libopenblas-dev" >&2; exit 2; }
OUT=build/peers
mkdir -p "$OUT"
BLAS_CFLAGS=$(pkg-config --cflags openblas 2>/dev/null || echo "-I/usr/include/x86_64-linux-gnu/openblas-pthread")
BLAS_LIBS=$(pkg-config --libs openblas 2>/dev/null || echo "-lopenblas")
LIBS=$(pkg-config --libs ncursesw readline libcurl libutf8proc jansson zlib libmicrohttpd 2>/dev/null)
${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -Iengine -I. $BLAS_CFLAGS -o "$OUT/peers" tests/bench/peers.c "$LIB" \
    $BLAS_LIBS $LIBS -lm -pthread
"$OUT/peers" "$THREADS" "$SECONDS_" "$ROUNDS"
if [ -n "$LLAMA" ]; then
    echo "ggml: not measured by this script yet (LLAMA_DIR=$LLAMA given)"
fi
