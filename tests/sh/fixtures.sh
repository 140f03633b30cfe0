#!/bin/sh
# fixtures.sh — the reference fixtures in tests/fixtures are whole: every file
# listed in tests/fixtures/SHA256SUMS is present with its checksum and nothing
# unlisted sits beside them. Then the tests must fail loudly, naming the path,
# when a fixture is missing or truncated: a copy with one golden removed, one
# with a shard cut short, and a missing fixtures folder each make the golden
# test fail instead of being skipped.
cd "$(dirname "$0")/../.." || exit 2
FX=tests/fixtures
UNIT=${REMORA_UNIT:-build/rel/remora-tests}
[ -x "$UNIT" ] || { echo "missing $UNIT (run make MODE=rel unit)"; exit 1; }
status=0
bad() { echo "FAIL: $*"; status=1; }

(cd "$FX" && sha256sum --quiet --strict -c SHA256SUMS) || bad "checksums of $FX differ from SHA256SUMS"
listed=$(sed 's/^[0-9a-f]*  //' "$FX/SHA256SUMS" | sort)
present=$(cd "$FX" && find k3-tiny kl-tiny tokenizer -type f | sort)
[ "$listed" = "$present" ] || bad "files in $FX and SHA256SUMS differ: $(printf '%s\n%s\n' "$listed" "$present" | sort | uniq -u | tr '\n' ' ')"

T=$(mktemp -d) || exit 1
trap 'rm -rf "$T"' EXIT

# expect_fail CASE FIXTURES-DIR TEXT: the K3 golden test fails and says TEXT.
expect_fail() {
  REMORA_FIXTURES=$2 "$UNIT" model_k3_goldens > "$T/$1.log" 2>&1
  grep -q '^FAIL model_k3_goldens' "$T/$1.log" || bad "$1: the golden test did not fail"
  grep -qF "$3" "$T/$1.log" || { bad "$1: the failure does not name $3"; sed 's/^/    /' "$T/$1.log" | head -10; }
}

cp -r "$FX" "$T/no-hidden"
rm "$T/no-hidden/k3-tiny/goldens/hidden_short.f32"
expect_fail missing-golden "$T/no-hidden" "$T/no-hidden/k3-tiny/goldens/hidden_short.f32"

cp -r "$FX" "$T/short-shard"
shard=$T/short-shard/k3-tiny/model-00004-of-000010.safetensors
size=$(stat -c %s "$shard")
truncate -s $((size / 2)) "$shard"
expect_fail truncated-shard "$T/short-shard" "model-00004-of-000010.safetensors"

expect_fail no-fixtures "$T/nowhere" "FIXTURES MISSING: $T/nowhere"

[ $status = 0 ] && echo ok
exit $status
