#!/bin/sh
# remora's products against their peers on issue #30's shapes (it judges
# nothing, takes minutes and is not part of make test). One process measures,
# round by round on the same threads, remora and each peer (peers.c says
# how, and states each peer's loss of precision against remora's exact fp32):
#   - OpenBLAS sgemm (Debian's libopenblas-dev) on the weights decoded to fp32;
#   - ggml's CPU backend, when GGML names a ggml source — a ggml or
#     llama.cpp tree (whose ggml/ it uses), or a bare git directory of one,
#     which it unpacks under build/peers; the project never vendors it — built
#     here under build/peers twice: as llama.cpp builds it (GGML_LLAMAFILE=ON,
#     GGML_CPU_REPACK=ON, MXFP4 weights in the repacking buffer) and plain
#     (both OFF). Each build is linked with peers_ggml.c into a shared object
#     of its own that keeps ggml's symbols local, so that peers dlopens both
#     into the same run.
#
# usage: sh tests/bench/peers.sh [THREADS] [SECONDS] [ROUNDS] [GGML]
#   defaults 2 threads (a list such as 2,1 runs each in turn), 1-second
#   windows, 3 rounds; ONLY=gemm or ONLY=gemv in the environment keeps those
#   rows. Needs build/rel/libremora.a (make MODE=rel build/remora) and
#   libopenblas-dev (apt-get install libopenblas-dev); with GGML, cmake and a
#   C++ compiler (the two ggml builds take about 10 minutes on 2 cores).
set -eu
THREADS=${1:-2}; SECONDS_=${2:-1}; ROUNDS=${3:-3}; GGML=${4:-}; ONLY=${ONLY:-all}
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
${CC:-cc} -O2 -std=gnu11 -D_GNU_SOURCE -Iengine -I. $BLAS_CFLAGS -o "$OUT/peers" tests/bench/peers.c "$LIB" \
    $BLAS_LIBS $LIBS -lm -ldl -pthread
SHIMS=
if [ -n "$GGML" ]; then
    SRC=$GGML
    if git --git-dir="$GGML" rev-parse -q --verify HEAD >/dev/null 2>&1; then
        REV=$(git --git-dir="$GGML" rev-parse HEAD)
        SRC=$OUT/ggml-src-$REV
        [ -d "$SRC" ] || { mkdir -p "$SRC.tmp" && git --git-dir="$GGML" archive HEAD | tar -x -C "$SRC.tmp" &&
                           mv "$SRC.tmp" "$SRC"; }
        echo "ggml: commit $REV of $GGML"
    fi
    [ -f "$SRC/ggml/include/ggml.h" ] && SRC=$SRC/ggml
    [ -f "$SRC/include/ggml.h" ] || { echo "peers.sh: $GGML holds no ggml source (include/ggml.h)" >&2; exit 2; }
    # each: its name, PEERS_GGML_REPACK, the two cmake options
    for cfg in "llama 1 ON" "plain 0 OFF"; do
        set -- $cfg
        B=$OUT/ggml-$1
        if [ ! -f "$B/src/libggml-cpu.a" ]; then
            cmake -S "$SRC" -B "$B" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_LLAMAFILE=$3 \
                -DGGML_CPU_REPACK=$3 -DGGML_OPENMP=OFF -DGGML_BUILD_TESTS=OFF -DGGML_BUILD_EXAMPLES=OFF \
                -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON >"$B.log" 2>&1 &&
            cmake --build "$B" --target ggml -j "$(nproc)" >>"$B.log" 2>&1 ||
                { echo "peers.sh: building ggml ($1) failed: see $B.log" >&2; exit 1; }
        fi
        ${CC:-cc} -O2 -std=gnu11 -fPIC -shared -DPEERS_GGML_REPACK=$2 -I. -I"$SRC/include" -o "$B.so" \
            tests/bench/peers_ggml.c "$B/src/libggml.a" "$B/src/libggml-cpu.a" "$B/src/libggml-base.a" \
            -Wl,--exclude-libs,ALL -Wl,--no-undefined -lstdc++ -lm -pthread
        SHIMS="$SHIMS $B.so"
    done
fi
for t in $(echo "$THREADS" | tr , ' '); do
    "$OUT/peers" "$t" "$SECONDS_" "$ROUNDS" "$ONLY" $SHIMS
done
