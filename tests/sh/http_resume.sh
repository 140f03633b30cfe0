#!/bin/sh
# http_resume.sh — interrupted downloads resume. A `remora setup` cut short
# by dropped connections (one try each) is completed by running it again; a
# `remora fetch` killed with SIGKILL mid-way (the server answers slowly)
# leaves only whole experts under final names, and the next fetch removes its
# leftovers and completes the pool with the checkpoint's exact bytes.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/sh/lib/http.sh
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}/k3-tiny
[ -d "$FX" ] || { echo "fixtures missing: $FX"; exit 1; }
T=$(mktemp -d) || exit 1
FPID=
trap '[ -n "$FPID" ] && kill -9 "$FPID" 2>/dev/null; faulty_stop; rm -rf "$T"' EXIT
faulty_start "$T" "$FX" || exit 1
URL=http://127.0.0.1:$FS_PORT
BIN=build/rel/remora
fail=0
bad() { echo "FAIL $*"; fail=1; }
$BIN run --model "$FX" --prompt "The quick brown fox" --max-new 16 --ram 0.004 >"$T/local.out" 2>/dev/null || exit 1
# setup: the first attempt fails part-way, the second completes it
fault drop 6
REMORA_HTTP_TRIES=1 $BIN setup --source "$URL" --dir "$T/m" --stream --connections 2 2>"$T/s1.err" && bad "setup with drops and one try succeeded"
grep -q "gave up after 1 tries" "$T/s1.err" || { bad "setup failure message"; cat "$T/s1.err"; }
fault none 0
$BIN run --model "$T/m" --prompt x --max-new 1 >/dev/null 2>"$T/r0.err" && bad "an unfinished setup ran"
grep -q "setup has not finished\|cannot open\|is not recorded" "$T/r0.err" || { bad "unfinished setup message"; cat "$T/r0.err"; }
: > "$T/faulty.log"
$BIN setup --source "$URL" --dir "$T/m" --stream 2>"$T/s2.err" || { bad "setup resume"; cat "$T/s2.err"; }
[ "$(grep -c 'bytes=0-7' "$T/faulty.log")" = 10 ] || bad "setup resume did not read the 10 headers"
$BIN run --model "$T/m" --prompt "The quick brown fox" --max-new 16 --ram 0.004 >"$T/r1.out" 2>"$T/r1.err" || { bad "run after resumed setup"; cat "$T/r1.err"; }
cmp -s "$T/local.out" "$T/r1.out" || bad "output after resumed setup differs"
# fetch: killed part-way, then resumed
rm -rf "$T/m/.remora/experts"
fault delay 100000
$BIN fetch --dir "$T/m" --connections 1 2>/dev/null &
FPID=$!
for i in $(seq 200); do
  [ "$(find "$T/m/.remora/experts" -name 'E*.bin' 2>/dev/null | wc -l)" -ge 20 ] && break
  sleep 0.1
done
kill -9 $FPID; wait $FPID 2>/dev/null; FPID=
fault none 0
n=$(find "$T/m/.remora/experts" -name 'E*.bin' | wc -l)
[ "$n" -ge 20 ] && [ "$n" -lt 224 ] || bad "the killed fetch cached $n experts (want some, not all)"
check_cache "$T/m" "$FX" --allow-tmp || bad "cache after the kill"
$BIN fetch --dir "$T/m" --dry-run | grep -q "missing: $((224 - n)) " || bad "dry-run after the kill"
$BIN fetch --dir "$T/m" 2>"$T/f2.err" || { bad "fetch resume"; cat "$T/f2.err"; }
check_cache "$T/m" "$FX" --all || bad "cache after the resumed fetch"
[ $fail = 0 ] && echo "ok http_resume"
exit $fail
