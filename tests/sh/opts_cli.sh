#!/bin/sh
# The shared options of run, chat, bench and eval (app/opts.c) on the real
# binary: for every option each command takes, nan, inf, 1e300, a negative
# value, an overflowing integer, an empty value and trailing junk are
# refused with exit status 2 and "remora CMD: --OPTION VALUE: must ..."
# naming the accepted range; the bounds themselves are taken (run, bench
# and eval on the fixture model), a 64-bit seed whole. The numbers of the
# other commands (synth, setup, fetch, bench-ui, bench-tokenizer) go
# through the same rules.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
M="$FX/k3-tiny"
[ -d "$M" ] || { echo "fixtures missing: $FX"; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0; n=0

# refused CMD OPTION VALUE MESSAGE-TAIL: exit 2 and exactly that message
refused() {
  "$BIN" "$1" $EXTRA --"$2" "$3" > "$T/out" 2> "$T/err" < /dev/null; rc=$?
  shown=$3; [ -n "$3" ] || shown="''"
  want="remora $1: --$2 $shown: $4"
  n=$((n + 1))
  if [ $rc != 2 ] || ! grep -qxF -- "$want" "$T/err"; then
    echo "FAIL $1 --$2 '$3': rc=$rc, stderr: $(head -2 "$T/err")"; echo "     want: $want"; fail=1
  fi
}

BAD="nan inf 1e300 -1 99999999999999999999 12abc"
# option  commands  message tail
while read -r opt cmds tail; do
  for cmd in $(echo "$cmds" | tr , ' '); do
    EXTRA=""
    for v in $BAD ""; do refused "$cmd" "$opt" "$v" "$tail"; done
  done
done <<'TABLE'
max-new run,chat,eval must be an integer in [1, 1000000000]
temperature run,chat must be in [0, 10]
top-p run,chat must be in (0, 1]
seed run,chat must be an integer in [0, 18446744073709551615]
threads run,chat must be an integer in [1, 4096]
io-threads bench must be an integer in [1, 256]
ram run,chat,bench must be in [0.001, 1000000]
spec run,chat,bench must be auto, on or off
thinking-effort run,chat must be low, medium, high or max
tokens bench must be an integer in [1, 1000000000]
device-seconds bench must be in (0, 3600]
limit eval must be an integer in [1, 1000000000]
max-ctx run,chat,bench must be an integer in [1, 1000000000]
synthetic-rate chat must be in [0.1, 1000000]
TABLE
EXTRA=""
for cmd in run chat bench eval; do refused $cmd model "" "must not be empty"; done
for cmd in run chat; do refused $cmd trace "" "must not be empty"; done
# the edges just outside the ranges
refused run top-p 0 "must be in (0, 1]"
refused run max-new 99999999999 "must be an integer in [1, 1000000000]"
refused run top-p 1.0001 "must be in (0, 1]"
refused chat temperature 10.5 "must be in [0, 10]"
refused run threads 0 "must be an integer in [1, 4096]"
refused chat threads 4097 "must be an integer in [1, 4096]"
refused run max-new 0 "must be an integer in [1, 1000000000]"
refused run max-new 1.5 "must be an integer in [1, 1000000000]"
refused run seed 18446744073709551616 "must be an integer in [0, 18446744073709551615]"
refused bench ram 0.0009 "must be in [0.001, 1000000]"
refused bench io-threads 257 "must be an integer in [1, 256]"
# the other commands' numbers follow the same rules
EXTRA="--out $T/none"; for v in nan 99999999999999999999 -1 2x ""; do refused synth seed "$v" "must be an integer in [0, 18446744073709551615]"; done
for v in nan 1 99999999999 2x ""; do refused synth layers "$v" "must be an integer in [2, 2147483647]"; done
EXTRA="--dir $T/none"; for v in nan 0 65 99999999999 2x ""; do refused setup connections "$v" "must be an integer in [1, 64]"; done
for v in nan 0 65 2x; do refused fetch connections "$v" "must be an integer in [1, 64]"; done
for v in 3-1 1-x - -3 3- 99999999999 ""; do refused fetch layers "$v" "must be A-B with 0 <= A <= B"; done
EXTRA=""; for v in nan inf 0 1e300 -1 2x ""; do refused bench-ui rate "$v" "must be in (0, 1000000]"; done
for v in nan 0 99999999999 2x ""; do refused bench-ui tokens "$v" "must be an integer in [1, 2147483647]"; done
EXTRA="--tokenizer $T/none"; for v in nan inf 0 1e300 2x ""; do refused bench-tokenizer mb "$v" "must be in (0, 1024]"; done
for v in nan 0 99999999999 2x; do refused bench-tokenizer passes "$v" "must be an integer in [1, 1000000]"; done
EXTRA=""
echo "ok   $n refused values"

# the bounds are taken
ok() { n=$((n + 1)); "$@" > "$T/out" 2> "$T/err" < /dev/null || { echo "FAIL: $* (rc=$?): $(head -3 "$T/err")"; fail=1; }; }
ok "$BIN" run --model "$M" --prompt hi --max-new 1 --seed 18446744073709551615 --top-p 1 --temperature 10 \
  --threads 1 --ram 1000000 --spec off --thinking-effort max --trace "$T/tr"
ok "$BIN" run --model "$M" --prompt hi --max-new 1 --seed 0 --top-p 0.001 --temperature 0 --threads 4096 --spec on
grep -q '"prefill":false' "$T/tr" || { echo "FAIL: --trace wrote no token"; fail=1; }
ok "$BIN" bench --model "$M" --tokens 1 --device-seconds 0.01 --io-threads 256 --ram 1000000
ok "$BIN" bench --model "$M" --tokens 1 --device-seconds 0.01 --io-threads 1 --prompt hi --spec auto
printf '{"prompt": "hi", "reference": "x"}\n' > "$T/data.jsonl"
ok "$BIN" eval --model "$M" --data "$T/data.jsonl" --max-new 1 --limit 1 --no-think
# chat takes them too and only then wants a terminal
"$BIN" chat --synthetic --synthetic-rate 0.1 --max-new 1000000000 --top-p 1 --seed 18446744073709551615 \
  --threads 4096 --ram 0.001 --temperature 10 > /dev/null 2> "$T/err" < /dev/null
grep -q "must be a terminal" "$T/err" || { echo "FAIL: chat refused good values: $(cat "$T/err")"; fail=1; }
# run --help documents every range it checks
"$BIN" run --help > "$T/help"
for r in "N in [1, 1000000000]" "T in [0, 10]" "P in (0, 1]" "S in [0, 18446744073709551615]" \
         "N in [1, 4096]" "GB in [0.001, 1000000]" "MODE: auto, on or off" "E: low, medium, high or max"; do
  grep -qF -- "$r" "$T/help" || { echo "FAIL: run --help does not say '$r'"; fail=1; }
done
[ $fail = 0 ] && echo "ok   $n cases"
exit $fail
