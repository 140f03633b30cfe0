#!/bin/sh
# `remora setup` without a network: --dry-run knows Kimi K3's shapes, so it
# says the disk each mode needs, which mode the free disk allows and what
# `remora forecast` predicts, and downloads nothing; a set-up whose source
# cannot be reached (a closed loopback port) says so and suggests --source.
set -u
BIN=build/rel/remora
D=$(mktemp -d) || exit 1; trap 'rm -rf "$D"' EXIT
status=0
REMORA_HF_HOST=http://127.0.0.1:1 $BIN setup --dir "$D/k3" --dry-run > "$D/out" 2> "$D/err" ||
  { echo "FAIL: --dry-run exited $?"; cat "$D/err"; status=1; }
for want in "full mode: 15" "stream mode: 11" "GB free" "forecast at the default RAM budget" "s/token decode"; do
  grep -qF "$want" "$D/out" || { echo "FAIL: the dry run lacks '$want'"; cat "$D/out" "$D/err"; status=1; }
done
[ -e "$D/k3" ] && { echo "FAIL: the dry run created $D/k3"; status=1; }
REMORA_HF_HOST=http://127.0.0.1:1 timeout 60 $BIN setup --dir "$D/k3" > /dev/null 2> "$D/err"; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: an unreachable source exits $rc, not 1"; status=1; }
grep -q "could not be reached" "$D/err" && grep -q -- "--source URL" "$D/err" ||
  { echo "FAIL: no hint for an unreachable source:"; cat "$D/err"; status=1; }
[ $status -eq 0 ] && echo "ok: dry run offline ($(grep -o 'full mode: [0-9]* GB' "$D/out")); unreachable source explained"
exit $status
