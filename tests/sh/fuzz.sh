#!/bin/sh
# fuzz.sh — builds the libFuzzer targets (make fuzz) and runs each for a
# bounded time from its seed corpus in tests/fuzz/corpus/<target>; new inputs
# libFuzzer finds go to build/fuzz/corpus-<target>, not into the repository.
# FUZZ_SECONDS sets the time per target (default 4), FUZZ_TARGETS a list of
# target names to run instead of all; a crash, leak or sanitizer report
# fails the test and leaves the reproducer in build/fuzz.
# 4 s: every seed runs first whatever the budget (1-8 per target, done
# within the first second), then mutations for the rest: at 10 s on a
# loaded machine that was 2,000 runs of the session targets (snapshot,
# prefix) to 1.9 million of the Content-Range parser, 4 s does two fifths
# of it. At 10 s the 13 targets took 130 CPU-seconds, the largest share of
# make test after the ASan unit tests; the corpus a run grows is kept in
# build/fuzz/corpus-<target>, so each later run on a clone starts from
# what the earlier ones found.
cd "$(dirname "$0")/../.." || exit 2
export REMORA_FIXTURES="${REMORA_FIXTURES:-$(pwd)/tests/fixtures}"
secs=${FUZZ_SECONDS:-4}
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
