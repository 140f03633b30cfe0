#!/bin/sh
# Runs every test: the unit-test binary (release and ASan+UBSan builds) and
# each script in tests/sh/ (driving the real binary: CLI, tmux, nginx, man).
# Prints per-suite results and one closing "N passed, N failed" line.
cd "$(dirname "$0")/.." || exit 2
export REMORA_FIXTURES="${REMORA_FIXTURES:-$(pwd)/tests/fixtures}"
# the prefix cache is off (and would be in a folder of the run's) unless a
# test turns it on: a prompt cached by one test would skip another's prefill
export REMORA_PREFIX_CACHE_GB=0
export XDG_CACHE_HOME="$(pwd)/build/test-cache"
rm -rf build/test-cache
pass=0; fail=0
count() { # $1 = log file of a unit run
  p=$(grep -c '^PASS ' "$1"); f=$(grep -c '^FAIL ' "$1")
  pass=$((pass + p)); fail=$((fail + f))
}
mkdir -p build/logs
for mode in rel asan; do
  echo "== unit tests ($mode)"
  REMORA_BIN=build/$mode/remora ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    build/$mode/remora-tests > build/logs/unit-$mode.log 2>&1
  rc=$?
  grep -E '^(FAIL|  )' build/logs/unit-$mode.log | head -50
  count build/logs/unit-$mode.log
  if [ $rc -ne 0 ] && ! grep -q '^FAIL ' build/logs/unit-$mode.log; then
    echo "unit runner ($mode) crashed (rc=$rc):"; tail -30 build/logs/unit-$mode.log
    fail=$((fail + 1))
  fi
  tail -1 build/logs/unit-$mode.log
done
for t in tests/sh/*.sh; do
  [ -f "$t" ] || continue
  name=$(basename "$t" .sh)
  if sh "$t" > "build/logs/$name.log" 2>&1; then
    echo "PASS $name"; pass=$((pass + 1))
  else
    echo "FAIL $name"; tail -20 "build/logs/$name.log" | sed 's/^/    /'; fail=$((fail + 1))
  fi
done
rm -rf build/test-cache
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
