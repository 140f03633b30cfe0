#!/bin/sh
# http_nginx.sh — stream mode against a real nginx on 127.0.0.1 serving the
# k3-tiny fixture (through a directory of symlinks): `remora setup --stream`,
# then greedy runs with a small RAM budget give the same text as the local
# model; a second run sends no request at all (nginx's access log); `remora
# fetch` completes the pool and runs go on with nginx stopped. Also: full
# mode gives byte-identical shards, the bearer token never goes over http,
# and the cache holds exactly the checkpoint's bytes. Release and ASan builds.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/sh/lib/http.sh
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}/k3-tiny
[ -d "$FX" ] || { echo "fixtures missing: $FX"; exit 1; }
T=$(mktemp -d) && chmod 755 "$T" || exit 1  # nginx workers may run as another user
trap 'nginx_stop; rm -rf "$T"' EXIT
mkdir -p "$T/www/k3"
for f in "$FX"/*; do ln -s "$f" "$T/www/k3/"; done
nginx_start "$T" || exit 1
URL=http://127.0.0.1:$NGX_PORT/k3
fail=0
bad() { echo "FAIL $*"; fail=1; }
ranges() { grep -c 'bytes=' "$T/access.log" 2>/dev/null; }
for bin in build/rel/remora build/asan/remora; do
  [ -x "$bin" ] || continue
  m=$T/m-$(basename "$(dirname "$bin")")
  gen() { # model, output name
    "$bin" run --model "$1" --prompt "The quick brown fox" --max-new 16 --ram 0.004 >"$T/$2.out" 2>"$T/$2.err"
  }
  gen "$FX" local || { bad "$bin local run"; cat "$T/local.err"; continue; }
  HF_TOKEN=sekrit "$bin" setup --source "$URL" --dir "$m" --stream 2>"$T/setup.err" || { bad "$bin setup"; cat "$T/setup.err"; continue; }
  grep -q "stream mode" "$T/setup.err" || bad "$bin setup does not say stream mode"
  grep -q sekrit "$T/access.log" && bad "$bin sent HF_TOKEN over plain http"
  [ -z "$(ls "$m/.remora/experts" 2>/dev/null)" ] || bad "$bin setup fetched experts"
  HF_TOKEN=sekrit gen "$m" s1 || { bad "$bin stream run"; cat "$T/s1.err"; }
  cmp -s "$T/local.out" "$T/s1.out" || bad "$bin stream output differs from local"
  grep -q "stream mode from $URL: 0 of 224 experts local" "$T/s1.err" || { bad "$bin run does not report the pool"; cat "$T/s1.err"; }
  grep -q Sanitizer "$T/s1.err" && bad "$bin sanitizer report"
  check_cache "$m" "$FX" || bad "$bin cache after the first run"
  n1=$(ranges)
  gen "$m" s2 || bad "$bin second run"
  cmp -s "$T/local.out" "$T/s2.out" || bad "$bin second stream output differs"
  [ "$(ranges)" = "$n1" ] || bad "$bin second run made $(( $(ranges) - n1 )) range requests"
  "$bin" fetch --dir "$m" --dry-run >"$T/dry.out" || bad "$bin fetch --dry-run"
  grep -q "^experts: 224, local: " "$T/dry.out" || { bad "$bin dry-run output"; cat "$T/dry.out"; }
  "$bin" fetch --dir "$m" --connections 3 2>"$T/fetch.err" || { bad "$bin fetch"; cat "$T/fetch.err"; }
  "$bin" fetch --dir "$m" --dry-run | grep -q "missing: 0 " || bad "$bin pool not complete after fetch"
  check_cache "$m" "$FX" --all || bad "$bin cache after fetch"
done
# full mode: the shards are byte for byte the originals
build/rel/remora setup --source "$URL" --dir "$T/full" 2>"$T/full.err" || { bad "auto setup"; cat "$T/full.err"; }
grep -q '"mode": "full"' "$T/full/.remora/source.json" || bad "auto setup did not choose full mode"
for f in "$FX"/*.safetensors; do cmp -s "$f" "$T/full/$(basename "$f")" || bad "full shard $(basename "$f") differs"; done
nginx_stop
# with the server gone, everything is local
for bin in build/rel/remora build/asan/remora; do
  [ -x "$bin" ] || continue
  m=$T/m-$(basename "$(dirname "$bin")")
  [ -d "$m" ] || continue
  "$bin" run --model "$m" --prompt "The quick brown fox" --max-new 16 --ram 0.004 >"$T/s3.out" 2>"$T/s3.err" || { bad "$bin run with nginx stopped"; cat "$T/s3.err"; }
  cmp -s "$T/local.out" "$T/s3.out" || bad "$bin output with nginx stopped differs"
  grep -q "224 of 224 experts local" "$T/s3.err" || bad "$bin pool line after fetch"
done
build/rel/remora run --model "$T/full" --prompt "The quick brown fox" --max-new 16 --ram 0.004 >"$T/f.out" 2>/dev/null || bad "full-mode run"
cmp -s "$T/local.out" "$T/f.out" || bad "full-mode output differs"
[ $fail = 0 ] && echo "ok http_nginx"
exit $fail
