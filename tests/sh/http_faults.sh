#!/bin/sh
# http_faults.sh — stream mode against a misbehaving server on 127.0.0.1
# (tests/sh/lib/faulty_server.py). Each fault is armed for some expert range
# requests of a greedy run: dropped connections, truncated bodies, 500, 503,
# 429 and a stall once are recovered from (same text as the local model);
# a wrong Content-Range, a 200 instead of 206 and an endless stall fail with
# a message naming the problem. After every run the disk cache holds only
# whole, correct experts. Damaged cache files (a flipped byte, a short file)
# are detected and fetched again. Release and ASan builds.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/sh/lib/http.sh
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}/k3-tiny
[ -d "$FX" ] || { echo "fixtures missing: $FX"; exit 1; }
T=$(mktemp -d) || exit 1
trap 'faulty_stop; rm -rf "$T"' EXIT
faulty_start "$T" "$FX" || exit 1
URL=http://127.0.0.1:$FS_PORT
fail=0
bad() { echo "FAIL $*"; fail=1; }
gen() { # bin model name [env...]
  b=$1 mdl=$2 out=$3; shift 3
  env "$@" "$b" run --model "$mdl" --prompt "The quick brown fox" --max-new 16 --ram 0.004 >"$T/$out.out" 2>"$T/$out.err"
}
build/rel/remora run --model "$FX" --prompt "The quick brown fox" --max-new 16 --ram 0.004 >"$T/local.out" 2>/dev/null || { echo "local run failed"; exit 1; }
build/rel/remora setup --source "$URL" --dir "$T/base" --stream 2>"$T/setup.err" || { cat "$T/setup.err"; exit 1; }
# recoverable faults: mode, count, extra environment
for bin in build/rel/remora build/asan/remora; do
  [ -x "$bin" ] || continue
  cases='"drop 3" "truncate 3" "503 2"'   # ASan: the retry and resume paths once each
  [ "$bin" = build/rel/remora ] && cases='"drop 3" "truncate 3" "500 2" "503 2" "429 1" "slow 1 REMORA_HTTP_STALL=1"'
  eval "set -- $cases"
  for case in "$@"; do
    set -- $case
    name="$(basename "$(dirname "$bin")")-$1"
    rm -rf "$T/m"; cp -a "$T/base" "$T/m"
    fault "$1" "$2"
    shift 2
    gen "$bin" "$T/m" "$name" REMORA_HTTP_TRIES=6 "$@" || { bad "$name: run failed"; cat "$T/$name.err"; }
    cmp -s "$T/local.out" "$T/$name.out" || bad "$name: output differs from local"
    grep -q Sanitizer "$T/$name.err" && { bad "$name: sanitizer"; cat "$T/$name.err"; }
    check_cache "$T/m" "$FX" >/dev/null || { bad "$name: cache"; check_cache "$T/m" "$FX"; }
    fault none 0
  done
done
# faults that cannot be fixed by retrying: a clear error, nothing bad cached
for case in "badrange|Content-Range" "full200|answered 200 (the whole file) instead of 206" "slow|too slow (less than 32768 bytes/s"; do
  mode=${case%%|*} text=${case#*|}
  rm -rf "$T/m"; cp -a "$T/base" "$T/m"
  fault "$mode" 1000
  gen build/rel/remora "$T/m" "$mode" REMORA_HTTP_STALL=1 REMORA_HTTP_TRIES=2; rc=$?
  [ $rc = 1 ] || bad "$mode: exit status $rc, want 1"
  grep -qF -- "$text" "$T/$mode.err" || { bad "$mode: no clear error"; cat "$T/$mode.err"; }
  grep -qF "$URL/model-" "$T/$mode.err" || bad "$mode: the error does not name the URL"
  check_cache "$T/m" "$FX" >/dev/null || { bad "$mode: cache"; check_cache "$T/m" "$FX"; }
  fault none 0
done
# setup against a server that ignores Range
fault full200 1000
build/rel/remora setup --source "$URL" --dir "$T/s200" --stream 2>"$T/s200.err"; rc=$?
[ $rc = 1 ] && grep -q "instead of 206" "$T/s200.err" || { bad "setup with 200 answers: rc=$rc"; cat "$T/s200.err"; }
fault none 0
# damaged cache files are fetched again
rm -rf "$T/m"; cp -a "$T/base" "$T/m"
build/rel/remora fetch --dir "$T/m" 2>/dev/null || bad "fetch"
f1=$T/m/.remora/experts/L1/E0.bin f2=$T/m/.remora/experts/L7/E31.bin
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[100]^=1; open(p,'wb').write(b)" "$f1"
head -c 5000 "$f2" > "$T/short" && cat "$T/short" > "$f2"
: > "$T/faulty.log"
for bin in build/rel/remora build/asan/remora; do
  [ -x "$bin" ] || continue
  gen "$bin" "$T/m" damaged || { bad "$bin run with a damaged cache"; cat "$T/damaged.err"; }
  cmp -s "$T/local.out" "$T/damaged.out" || bad "$bin output with a damaged cache differs"
done
check_cache "$T/m" "$FX" --all >/dev/null || { bad "cache not repaired"; check_cache "$T/m" "$FX" --all; }
[ "$(grep -c bytes= "$T/faulty.log")" -le 2 ] || bad "more than the damaged experts were fetched: $(cat "$T/faulty.log")"
[ $fail = 0 ] && echo "ok http_faults"
exit $fail
