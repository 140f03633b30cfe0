#!/bin/sh
# remora's gemm against its peers on K3's shapes (issue #30's benchmark; it
# judges nothing, takes minutes and is not part of make test):
#   - OpenBLAS sgemm (Debian's libopenblas-dev) on the same weights decoded to
#     fp32, interleaved with remora round by round on the same threads, with
#     the FMA peak measured in each round (tests/bench/peers.c says how, and
#     states OpenBLAS's loss of precision against remora's fixed order);
#   - ggml's CPU backend, when GGML_DIR names a ggml source tree (ggml's own
#     or llama.cpp's, whose ggml/ it uses; the project never vendors it):
#     built here under build/peers twice, as llama.cpp builds it
#     (GGML_LLAMAFILE=ON, GGML_CPU_REPACK=ON, weights in the repacking
#     buffer) and plain (both OFF, the plain CPU buffer), each linked into
#     its own peers binary, so each round of a case measures remora,
#     OpenBLAS and that ggml one after the other on the same threads.
#
# usage: sh tests/bench/peers.sh [THREADS] [SECONDS] [ROUNDS] [GGML_DIR]
#   defaults 2 threads, 1-second windows, 3 rounds; ONLY=gemm or ONLY=gemv
#   in the environment keeps those rows. Needs build/rel/libremora.a
#   (make MODE=rel build/remora) and libopenblas-dev (apt-get install
#   libopenblas-dev); with GGML_DIR, cmake and a C++ compiler.
set -eu
THREADS=${1:-2}; SECONDS_=${2:-1}; ROUNDS=${3:-3}; GGML=${4:-}; ONLY=${ONLY:-}
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
# a library built with CUDA needs its runtime (the Makefile's CUDA_LIBS)
if ar t "$LIB" | grep -q '^gpu_kernels.o$'; then
    NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
    LIBS="$LIBS -L${NVCC%/bin/nvcc}/lib64 -lcudart_static -ldl -lrt -lstdc++"
fi
if [ -z "$GGML" ]; then
    ${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -Iengine -I. $BLAS_CFLAGS -o "$OUT/peers" tests/bench/peers.c "$LIB" \
        $BLAS_LIBS $LIBS -lm -pthread
    exec "$OUT/peers" "$THREADS" "$SECONDS_" "$ROUNDS" $ONLY
fi
SRC=$GGML
[ -f "$SRC/ggml/include/ggml.h" ] && SRC=$SRC/ggml
[ -f "$SRC/include/ggml.h" ] || { echo "peers.sh: $GGML holds no ggml source (include/ggml.h)" >&2; exit 2; }
# each: its name, PEERS_GGML_REPACK, the two cmake options
for cfg in "llama 1 ON" "plain 0 OFF"; do
    set -- $cfg
    B=$OUT/ggml-$1
    if [ ! -f "$B/src/libggml-cpu.a" ]; then
        cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_LLAMAFILE=$3 \
            -DGGML_CPU_REPACK=$3 -DGGML_OPENMP=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF \
            -DBUILD_SHARED_LIBS=OFF >"$B.log" 2>&1 &&
        cmake --build "$B" --target ggml -j "$(nproc)" >>"$B.log" 2>&1 ||
            { echo "peers.sh: building ggml ($1) failed: see $B.log" >&2; exit 1; }
    fi
    ${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -DPEERS_GGML -DPEERS_GGML_REPACK=$2 -Iengine -I. -I"$SRC/include" \
        $BLAS_CFLAGS -o "$OUT/peers-$1" tests/bench/peers.c "$LIB" "$B/src/libggml.a" "$B/src/libggml-cpu.a" \
        "$B/src/libggml-base.a" $BLAS_LIBS $LIBS -lstdc++ -lm -pthread
done
"$OUT/peers-llama" "$THREADS" "$SECONDS_" "$ROUNDS" $ONLY
"$OUT/peers-plain" "$THREADS" "$SECONDS_" "$ROUNDS" $ONLY
