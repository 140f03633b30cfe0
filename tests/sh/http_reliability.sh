#!/bin/sh
# http_reliability.sh — stream mode against hostile servers and disks on
# 127.0.0.1 (issue #14): a checkpoint that changes upstream (the faulty
# server and nginx, both with ETags) is refused, never mixed in, and setup
# starts the changed shard over; cache files carry their expert and
# revision; one failed expert ends every other download at once; a trickling
# server is abandoned (minimum rate) and a request has a deadline; bad
# sources are exit 2; damaged metadata is rebuilt by setup; fetch on a
# read-only or small disk says what failed.
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/sh/lib/http.sh
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}/k3-tiny
[ -d "$FX" ] || { echo "fixtures missing: $FX"; exit 1; }
BIN=build/rel/remora
T=$(mktemp -d) && chmod 755 "$T" || exit 1
MNT=
trap '[ -n "$MNT" ] && umount "$MNT" 2>/dev/null; faulty_stop; nginx_stop; rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL $*"; fail=1; }
ok() { echo "ok   $*"; }
gen() { # model output-name [env...]: a greedy run, at most 60 s
  m=$1 o=$2; shift 2
  env "$@" timeout 60 $BIN run --model "$m" --prompt "The quick brown fox" --max-new 16 --ram 0.004 >"$T/$o.out" 2>"$T/$o.err"
}
SHARD=model-00003-of-000010.safetensors
# change_shard DIR: other bytes at the end of the shard (its experts), same size, a new mtime (a new ETag)
change_shard() {
  python3 - "$1/$SHARD" <<'PY'
import os, sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read())
for i in range(len(b) - 4000, len(b)): b[i] ^= 0x5a
os.remove(p); open(p, "wb").write(b)
st = os.stat(p); os.utime(p, (st.st_atime + 100, st.st_mtime + 100))
PY
}
mkdir -p "$T/www/fs" "$T/www/ng"
for f in "$FX"/*; do [ -f "$f" ] && cp "$f" "$T/www/fs/" && cp "$f" "$T/www/ng/"; done
faulty_start "$T" "$T/www" || exit 1
nginx_start "$T" || exit 1
gen "$FX" local || { echo "local run failed"; cat "$T/local.err"; exit 1; }

# -- finding 1: a checkpoint that changes upstream, against both servers
for srv in fs ng; do
  if [ $srv = fs ]; then URL=http://127.0.0.1:$FS_PORT/fs; else URL=http://127.0.0.1:$NGX_PORT/ng; fi
  m=$T/m-$srv
  $BIN setup --source "$URL" --dir "$m" --stream 2>"$T/setup.err" || { bad "$srv setup"; cat "$T/setup.err"; continue; }
  grep -q "\"$SHARD\": \"" "$m/.remora/source.json" && ok "$srv: source.json records the ETags" || bad "$srv: no ETag in source.json"
  change_shard "$T/www/$srv"
  gen "$m" changed-$srv; rc=$?
  [ $rc = 1 ] && grep -q "$SHARD: the file changed upstream" "$T/changed-$srv.err" && grep -qF "run \`remora setup --dir $m\` again" "$T/changed-$srv.err" \
    && ok "$srv: a changed shard is refused (exit 1, names the file, says to run setup)" || { bad "$srv changed: rc=$rc"; cat "$T/changed-$srv.err"; }
  check_cache "$m" "$FX" >/dev/null && ok "$srv: nothing of the other revision was cached" || { bad "$srv cache"; check_cache "$m" "$FX"; }
  $BIN setup --dir "$m" 2>"$T/resetup.err" || { bad "$srv setup after the change"; cat "$T/resetup.err"; }
  $BIN fetch --dir "$m" 2>"$T/refetch.err" || { bad "$srv fetch after the change"; cat "$T/refetch.err"; }
  gen "$T/www/$srv" newlocal-$srv && gen "$m" new-$srv && cmp -s "$T/newlocal-$srv.out" "$T/new-$srv.out" \
    && ok "$srv: after setup again the model is the new revision, whole" || bad "$srv: new revision differs from the local copy"
  grep -q Sanitizer "$T"/*-$srv.err && bad "$srv sanitizer"
done
URL=http://127.0.0.1:$FS_PORT/fs

# a swap while setup runs (the faulty server answers another ETag after the headers): setup fails, the next one finishes
fault_etag() { python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$FS_PORT/__fault?mode=etag&count=1000&skip=$1', timeout=5).read()"; }
fault_etag 20
$BIN setup --source "$URL" --dir "$T/swap" --stream 2>"$T/swap.err"; rc=$?
[ $rc = 1 ] && grep -q "it changed while setup ran: run \`remora setup --dir $T/swap\` again" "$T/swap.err" \
  && ok "a swap during setup fails it" || { bad "swap during setup: rc=$rc"; cat "$T/swap.err"; }
fault none 0
$BIN setup --source "$URL" --dir "$T/swap" --stream 2>"$T/swap2.err" && gen "$T/swap" swap && cmp -s "$T/newlocal-fs.out" "$T/swap.out" \
  && ok "setup again after the swap gives one revision" || { bad "setup after the swap"; cat "$T/swap2.err" "$T/swap.err"; }

# -- finding 5: a cache file says which expert it holds
$BIN fetch --dir "$T/swap" 2>/dev/null || bad "fetch"
e=$T/swap/.remora/experts/L1
cp "$e/E0.bin" "$T/e0" && cp "$e/E1.bin" "$e/E0.bin" && cp "$T/e0" "$e/E1.bin"
gen "$T/swap" swapped && cmp -s "$T/newlocal-fs.out" "$T/swapped.out" && ok "swapped cache files are refused and fetched again" \
  || bad "swapped cache files: $(cat "$T/swapped.err")"

# -- finding 3: one failed expert ends every download at once
$BIN setup --source "$URL" --dir "$T/c" --stream 2>/dev/null || bad "setup for cancel"
fault onebad 1000
t0=$(date +%s); $BIN fetch --dir "$T/c" --connections 4 2>"$T/cancel.err"; rc=$?; t1=$(date +%s)
[ $rc = 1 ] && [ $((t1 - t0)) -lt 15 ] && grep -q "Content-Range" "$T/cancel.err" \
  && ok "fetch: one failure cancels the others ($((t1 - t0)) s, the others hang 60 s)" || { bad "fetch cancel: rc=$rc in $((t1 - t0)) s"; cat "$T/cancel.err"; }
fault onebad 1000
t0=$(date +%s); gen "$T/c" cancel-run REMORA_HTTP_TRIES=1; rc=$?; t1=$(date +%s)
[ $rc = 1 ] && [ $((t1 - t0)) -lt 15 ] && ok "run: one failure cancels the other reads ($((t1 - t0)) s)" || { bad "run cancel: rc=$rc in $((t1 - t0)) s"; cat "$T/cancel-run.err"; }
fault none 0

# -- finding 8: a trickle is abandoned; a request has a deadline
fault trickle 1000
t0=$(date +%s); gen "$T/c" trickle REMORA_HTTP_STALL=2 REMORA_HTTP_TRIES=1; rc=$?; t1=$(date +%s)
[ $rc = 1 ] && grep -q "$URL/model-.*too slow (less than 32768 bytes/s for 2 s" "$T/trickle.err" && [ $((t1 - t0)) -lt 20 ] \
  && ok "a 1.5 KB/s trickle is abandoned ($((t1 - t0)) s)" || { bad "trickle: rc=$rc in $((t1 - t0)) s"; cat "$T/trickle.err"; }
t0=$(date +%s); gen "$T/c" deadline REMORA_HTTP_MIN_RATE=100 REMORA_HTTP_DEADLINE=3; rc=$?; t1=$(date +%s)
[ $rc = 1 ] && grep -q "$URL/model-.*not done within the 3 s a request may take" "$T/deadline.err" && [ $((t1 - t0)) -lt 20 ] \
  && ok "the per-request deadline ($((t1 - t0)) s)" || { bad "deadline: rc=$rc in $((t1 - t0)) s"; cat "$T/deadline.err"; }
fault none 0

# -- finding 10: bad input to setup is exit 2
mkdir -p "$T/www/badcfg" "$T/www/badidx" "$T/www/hlen" "$T/www/bomb"
for d in badcfg badidx hlen bomb; do cp "$FX"/*.json "$FX"/tiktoken.model "$T/www/$d/"; done
echo '{"model_type": "llama"}' > "$T/www/badcfg/config.json"
python3 - "$T/www" "$FX" <<'PY'
import json, os, struct, sys
www, fx = sys.argv[1], sys.argv[2]
ix = json.load(open(os.path.join(fx, "model.safetensors.index.json")))
k = next(iter(ix["weight_map"])); ix["weight_map"][k] = "../secret.safetensors"
json.dump(ix, open(os.path.join(www, "badidx", "model.safetensors.index.json"), "w"))
for d, body in (("hlen", struct.pack("<Q", 1 << 40) + b"{}"), ("bomb", None)):
    one = {"weight_map": {"x": "s.safetensors"}}
    json.dump(one, open(os.path.join(www, d, "model.safetensors.index.json"), "w"))
    if body is None:
        h = b"[" * 100000 + b"]" * 100000
        body = struct.pack("<Q", len(h)) + h
    open(os.path.join(www, d, "s.safetensors"), "wb").write(body + b"\0" * 64)
PY
while IFS='|' read -r src want; do
  $BIN setup --source "$src" --dir "$T/bad" --stream >/dev/null 2>"$T/bad.err"; rc=$?
  [ $rc = 2 ] && grep -qF -- "$want" "$T/bad.err" && ok "setup exit 2: $want" || { bad "setup $src: rc=$rc (want 2)"; cat "$T/bad.err"; }
  rm -rf "$T/bad"
done <<TABLE
ftp://127.0.0.1/x|ftp://127.0.0.1/x: not an http:// or https:// URL
file:///tmp|file:///tmp: not an http:// or https:// URL
http://127.0.0.1:$FS_PORT/badcfg|unsupported model_type "llama"
http://127.0.0.1:$FS_PORT/badidx|which is not a plain file name
http://127.0.0.1:$FS_PORT/hlen|header length 1099511627776 does not fit
http://127.0.0.1:$FS_PORT/bomb|header is not valid JSON
TABLE
$BIN setup --source "http://127.0.0.1:$NGX_PORT/ng" --dir "$T/c" --stream >/dev/null 2>"$T/other.err"; rc=$?
[ $rc = 2 ] && grep -q "was set up from" "$T/other.err" && ok "setup exit 2: a directory set up from another URL" || { bad "other URL: rc=$rc"; cat "$T/other.err"; }

# -- finding 16: damaged metadata is rebuilt by setup, and the message says so
for f in manifest.json source.json; do
  rm -rf "$T/d"; cp -a "$T/swap" "$T/d"
  echo '{"broken' > "$T/d/.remora/$f"
  gen "$T/d" damaged-$f; rc=$?
  [ $rc = 2 ] && grep -q "$f: not valid JSON.*remora setup --dir $T/d.* rebuilds it" "$T/damaged-$f.err" \
    && ok "a damaged $f: exit 2 saying how to rebuild it" || { bad "damaged $f: rc=$rc"; cat "$T/damaged-$f.err"; }
  $BIN setup --source "$URL" --dir "$T/d" 2>"$T/rebuild.err" && grep -q "$f was damaged and is rebuilt" "$T/rebuild.err" && gen "$T/d" rebuilt \
    && cmp -s "$T/newlocal-fs.out" "$T/rebuilt.out" && ok "setup rebuilds $f" || { bad "rebuild $f"; cat "$T/rebuild.err" "$T/rebuilt.err"; }
done

# -- finding 15: fetch on a read-only or small disk says what failed
MNT=$T/mnt; mkdir -p "$MNT"
need=$(du -sk "$T/c" | cut -f1)
if mount -t tmpfs -o size=$((need + 200))k tmpfs "$MNT" 2>/dev/null; then
  cp -a "$T/c" "$MNT/m"
  $BIN fetch --dir "$MNT/m" 2>"$T/small.err"; rc=$?
  [ $rc = 1 ] && grep -q "the missing experts need 0.00[0-9] GB and 0.000 GB is free\|the missing experts need .* GB and .* GB is free" "$T/small.err" \
    && ! grep -q "2.1 GB stays free" "$T/small.err" && ok "fetch on a small disk: $(cat "$T/small.err")" || { bad "small disk: rc=$rc"; cat "$T/small.err"; }
  mount -o remount,ro "$MNT"
  $BIN fetch --dir "$MNT/m" 2>"$T/ro.err"; rc=$?
  [ $rc = 1 ] && grep -q "Read-only file system" "$T/ro.err" && ok "fetch on a read-only disk names EROFS" || { bad "read-only: rc=$rc"; cat "$T/ro.err"; }
  umount "$MNT"; MNT=
else
  echo "skip small and read-only disks: tmpfs cannot be mounted here"; MNT=
fi
# out of file handles: said so, exit 1
(ulimit -n 16; exec $BIN run --model "$T/swap" --prompt hi --max-new 2) >/dev/null 2>"$T/nofile.err"; rc=$?
[ $rc = 1 ] && grep -q "Too many open files (raise the limit with \`ulimit -n\`)" "$T/nofile.err" && ok "out of file handles: exit 1, says so" \
  || { bad "EMFILE: rc=$rc"; cat "$T/nofile.err"; }
exit $fail
