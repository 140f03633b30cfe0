#!/bin/sh
# fuzz.sh — builds the libFuzzer targets (make fuzz) and runs each for a
# bounded time from its seed corpus in tests/fuzz/corpus/<target>; new inputs
# libFuzzer finds go to build/fuzz/corpus-<target>, not into the repository.
# FUZZ_SECONDS sets the time per target (default 2), FUZZ_TARGETS a list of
# target names to run instead of all; a crash, leak or sanitizer report
# fails the test and leaves the reproducer in build/fuzz.
# 2 s: every seed runs first whatever the budget (1-8 per target; libFuzzer
# runs the whole corpus before it first looks at its clock), then mutations for the
# rest: at 2 s on a quiet machine that was 800-1,800 runs of the session
# targets (snapshot, prefix) to 1.8 million of the Content-Range parser.
# At 10 s the 13 targets took 130 CPU-seconds, at 4 s 41 (a bare clone's
# make test at a load of 7), at 2 s 35 (a load of 4; each target spends
# about a second more starting and stopping: ASan, the fixture model);
# the corpus a run grows is kept in build/fuzz/corpus-<target>, so each
# later run on a clone starts from what the earlier ones found (the README
# names FUZZ_SECONDS=300 for a longer hunt).
cd "$(dirname "$0")/../.." || exit 2
export REMORA_FIXTURES="${REMORA_FIXTURES:-$(pwd)/tests/fixtures}"
secs=${FUZZ_SECONDS:-2}
make -s fuzz || exit 1
fails=0
for src in tests/fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  if [ -n "$FUZZ_TARGETS" ]; then
    case " $FUZZ_TARGETS " in *" $name "*) ;; *) continue ;; esac
  fi
  work=build/fuzz/corpus-$name
  mkdir -p "$work"
  cp tests/fuzz/corpus/"$name"/* "$work"/ 2>/dev/null
  case $name in
    fuzz_tiktoken) maxlen=8192 ;;
    *) maxlen=4096 ;;
  esac
  if (cd build/fuzz && ./"$name" -max_total_time="$secs" -max_len=$maxlen -timeout=20 \
        -rss_limit_mb=2048 -print_final_stats=1 corpus-"$name" > "$name.log" 2>&1); then
    echo "ok   $name: $(grep -E '^stat::number_of_executed_units' build/fuzz/$name.log | awk '{print $2}') runs in ${secs}s"
  else
    echo "FAIL $name (log: build/fuzz/$name.log)"; tail -30 "build/fuzz/$name.log"
    fails=$((fails + 1))
  fi
done
[ $fails -eq 0 ]
