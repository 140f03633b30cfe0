#!/bin/sh
# Runs every test: the unit-test binary (release and ASan+UBSan builds) and
# each script in tests/sh/ (driving the real binary: CLI, tmux, nginx, man).
# Suites run JOBS at a time (default 2, the cores of the machine the tests
# were sized on), the slowest first, and beside them, LIGHT_JOBS at a time
# (default 1; 0 puts them in the JOBS queue), the suites that mostly wait
# (LIGHT below), and in a third lane the suites that mostly wait on the disk
# (SIDE below, one at a time; SIDE_JOBS=0 puts them in the JOBS queue); each prints PASS or FAIL with its time
# as it ends, the slowest are listed at the end, and the last line is
# "N passed, N failed" (unit tests count one each, scripts one each).
# Each suite runs on a core of its own (on_core); under `make test` the
# ASan and fuzz builds run beside the first suites (LATE).
# REMORA_TESTS="unit-rel layout ..." runs only the suites named.
#
# A suite runs beside another only if it shares nothing with it: every
# script keeps its files in a mktemp folder (install.sh its build in
# build/install-test), its servers on ports the kernel picks (port 0) and
# its tmux on a socket of its own.
cd "$(dirname "$0")/.." || exit 2
export REMORA_FIXTURES="${REMORA_FIXTURES:-$(pwd)/tests/fixtures}"
# the prefix cache is off (and would be in a folder of the run's) unless a
# test turns it on: a prompt cached by one test would skip another's prefill
export REMORA_PREFIX_CACHE_GB=0
export XDG_CACHE_HOME="$(pwd)/build/test-cache"
# the K3-width synthetic model synth.sh and forecast.sh both read, written
# once per run by the first to ask (tests/sh/lib/synth.sh); removed with
# the cache at the end
export REMORA_SYNTH_DIR="$XDG_CACHE_HOME/synth"
LOGS=build/logs
# The order on a clone that has no times yet (build/logs/times holds the
# last run's): the suites measured longest first, so that the two queues
# end together; the rest follow in name order. Seconds (and CPU-seconds)
# of a bare clone's run at 06:55 UTC on 3 Dec, each suite on a core of its
# own (on_core below) at a load of 4-5.5 from other work: forecast 214
# (97), unit-asan 143 (70), unit-rel 116 (35), synth 77 (35), serve_agents
# 72 (33), fuzz 45 (22), default_model 39 (18), serve_soak 38 (23),
# http_faults 25 (14), serve_openai 21 (16), serve_curl 16 (12), ram_limit
# 14 (12), serve_queue 12 (10), serve_errors 9 (7), serve_interleave 8
# (7); serve_claude_code 30 (12) is in LIGHT, and first there.
SLOW="forecast unit-asan unit-rel synth serve_agents fuzz default_model serve_soak http_faults serve_openai serve_curl ram_limit serve_queue serve_errors serve_interleave serve_claude_code"
# The suites that mostly wait, on a tmux screen or on a server's timeouts:
# a bare clone's run at 03:42 UTC on 2 Dec measured each under a third of
# a CPU-second per second (37 suites, 200 s, 27 CPU-s in all; the remora
# a tmux server runs is not counted, mostly the synthetic source), while
# the other 37 took 740 s at 0.84 CPU-s per second. They run
# in a queue of their own beside the two, on the time the others leave
# idle, instead of holding a core's queue for 200 s. serve_claude_code is
# one since its prompt went to a two-layer model: on a bare clone it waits
# about 45 s for npm to download Claude Code, then computes for 5 CPU-s.
LIGHT="serve_claude_code endpoint_hostile endpoint_replay http_reliability http_resume serve_hostile serve_log setup_offline tui_*"
# The suites that run one after another, in this order, in a lane of their
# own beside both queues (on_core): forecast held a pinned core 347 s of a
# bare clone's run for 78 CPU-s of work (its synthetic models' writes and
# its O_DIRECT probes; 127 s and 83 CPU-s alone), so the other suites
# waited for a core it left idle. synth follows it in the lane, never
# beside it: it reads the 16-expert model forecast wrote (lib/synth.sh),
# and written beside forecast's models, its own had taken 147 s against 44.
# SIDE_JOBS=0 puts them back in the JOBS queue.
SIDE="forecast synth"

# A suite of the JOBS queue runs on a core of its own (taskset), so the
# engine's compute pool, as wide as the cores it may run on, is one thread:
# two suites at once with a pool of two threads each on the two cores spent
# 3-4 times the CPU-seconds spinning and waking against each other (see
# engine/base/threadpool.c; a bare clone's unit-rel took 31 CPU-s so,
# against 88, default_model 18 against 65). The model's products cut
# across two threads are test_model.c's *_threads_do_not_change_logits
# (in both unit builds). The LIGHT suites, which mostly wait, are not
# pinned: held to one core beside a pinned suite, tui_terminals' /quit
# once took over its 10 s (a bare clone's run at 07:31 UTC, a load of 5).
# PIN=0 pins none.
CPUS=$(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))' 2>/dev/null)
# on_core NAME CMD...: runs CMD on the first core of CPUS that no other
# suite holds (its lock file in LOGS), or unpinned when all are held
on_core() {
  _n=$1; shift
  _pin=${PIN:-1}
  [ "$(echo $CPUS | wc -w)" -ge "${JOBS:-2}" ] || _pin=0
  set -f
  [ "${LIGHT_JOBS:-1}" -gt 0 ] && for _p in $LIGHT; do case $_n in $_p) _pin=0 ;; esac; done
  set +f
  # a SIDE suite shares the last core with the pinned suite there, without
  # its lock: its pool is one thread as theirs, and the queues, which take
  # the first core free, give the other core more suites
  [ "$_pin" = 1 ] && [ "${SIDE_JOBS:-1}" -gt 0 ] && case " $SIDE " in
    *" $_n "*) taskset -c "${CPUS##* }" "$@"; return $? ;;
  esac
  [ "$_pin" = 1 ] && for _c in $CPUS; do
    # the subshell holds the lock while CMD runs (not exec'd: its exit
    # status is read after it, and the lock is held to the end)
    ( flock -n 9 || exit 75; taskset -c "$_c" "$@" 9>&-; exit $? ) 9> "$LOGS/cpu$_c.lock"
    _rc=$?; [ $_rc -eq 75 ] || return $_rc          # 75: held, the next core
  done
  "$@"
}

# The suites that run the ASan build or the fuzz targets. Under `make test`
# ($REMORA_LATE_BUILD, the command that builds them) those builds run beside
# the other suites, and these wait for them: up to 20 minutes, polling the
# status file the build writes as it ends (on a bare clone the release
# build took 28 s alone, then this one 85 s beside the first suites; the
# three builds had taken 70 s before any suite began).
LATE="unit-asan serve_soak fuzz http_faults http_nginx logits_cli"
# late_wait NAME: 0 once the late build is done and passed (or there is
# none, or NAME does not need it), else 1 with the build log's end
late_wait() {
  [ -n "${REMORA_LATE_BUILD:-}" ] || return 0
  case " $LATE " in *" $1 "*) ;; *) return 0 ;; esac
  _i=0
  while [ ! -f "$LOGS/late-build.rc" ] && [ $_i -lt 2400 ]; do sleep 0.5; _i=$((_i + 1)); done
  [ "$(cat "$LOGS/late-build.rc" 2>/dev/null)" = 0 ] && return 0
  echo "the ASan and fuzz builds ($REMORA_LATE_BUILD) failed or did not end in 20 minutes:"
  tail -30 "$LOGS/late-build.log"
  return 1
}

# one NAME: runs the suite NAME, prints its result block in one write (the
# other queue prints too), leaves "NAME rc seconds pass fail cpu" in
# NAME.result. cpu is the CPU-seconds of the processes the suite waited
# for (not those a tmux server runs), which a loaded machine inflates far
# less than the seconds.
one() {
  name=$1; log=$LOGS/$name.log
  late_wait "$name" > "$log" 2>&1; late=$?
  t0=$(date +%s%N)
  case $late$name in
    1*) rc=1; p=0; f=1; crashed=0 ;;
    0unit-rel|0unit-asan)
      mode=${name#unit-}
      REMORA_BIN=build/$mode/remora ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        on_core "$name" build/$mode/remora-tests > "$log" 2>&1
      rc=$?
      p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log")
      if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; crashed=1; else crashed=0; fi ;;
    *)
      on_core "$name" sh "tests/sh/$name.sh" > "$log" 2>&1
      rc=$?
      if [ $rc -eq 0 ]; then p=1; f=0; else p=0; f=1; fi ;;
  esac
  ms=$((($(date +%s%N) - t0) / 1000000))
  secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
  times > "$LOGS/$name.times"     # this shell's children: the suite (a builtin, no fork)
  cpu=$(awk 'NR == 2 { split($1, u, /[ms]/); split($2, k, /[ms]/); printf "%.1f", u[1] * 60 + u[2] + k[1] * 60 + k[2] }' \
        "$LOGS/$name.times")
  echo "$name $rc $secs $p $f $cpu" > "$LOGS/$name.result"
  {
    if [ "$f" -eq 0 ]; then
      printf 'PASS %-20s %7ss  %6s CPU-s\n' "$name" "$secs" "$cpu"
    else
      printf 'FAIL %-20s %7ss  %6s CPU-s\n' "$name" "$secs" "$cpu"
    fi
    case $late$name in
      0unit-*)
        grep -E '^(FAIL|  )' "$log" | head -50
        [ "$crashed" -eq 1 ] && { echo "unit runner ($name) crashed (rc=$rc):"; tail -30 "$log"; }
        tail -1 "$log" | sed 's/^/    /' ;;
      *) [ "$f" -eq 0 ] || tail -20 "$log" | sed 's/^/    /' ;;
    esac
  } > "$LOGS/$name.out"
  cat "$LOGS/$name.out"
}
if [ "${1:-}" = --one ]; then one "$2"; exit 0; fi

mkdir -p "$LOGS"
rm -rf build/test-cache "$LOGS"/*.result "$LOGS"/late-build.rc
if [ -n "${REMORA_LATE_BUILD:-}" ]; then
  echo "building the ASan and fuzz targets beside the tests (log: $LOGS/late-build.log)"
  ( $REMORA_LATE_BUILD > "$LOGS/late-build.log" 2>&1; echo $? > "$LOGS/late-build.rc.tmp"
    mv "$LOGS/late-build.rc.tmp" "$LOGS/late-build.rc" ) &
fi
all="unit-rel unit-asan"
for t in tests/sh/*.sh; do [ -f "$t" ] && all="$all $(basename "$t" .sh)"; done
if [ -n "${REMORA_TESTS:-}" ]; then
  want=""
  for n in $REMORA_TESTS; do
    case " $all " in *" $n "*) want="$want $n" ;; *) echo "no suite named $n"; exit 2 ;; esac
  done
  all=$want
fi
# the order: by the last run's times where known, else SLOW first
if [ -s "$LOGS/times" ]; then
  order=$(sort -k2 -rn "$LOGS/times" | awk '{print $1}')
else
  order=$SLOW
fi
queue=""
for n in $order $all; do
  case " $all " in *" $n "*) ;; *) continue ;; esac
  case " $queue " in *" $n "*) continue ;; esac
  queue="$queue $n"
done
heavy=""; light=""; side=""
set -f                      # LIGHT's patterns are matched, not expanded
for n in $queue; do
  l=0
  [ "${LIGHT_JOBS:-1}" -gt 0 ] && for p in $LIGHT; do case $n in $p) l=1 ;; esac; done
  [ "${SIDE_JOBS:-1}" -gt 0 ] && case " $SIDE " in *" $n "*) l=2 ;; esac
  case $l in 1) light="$light $n" ;; 2) ;; *) heavy="$heavy $n" ;; esac
done
set +f
# the side lane in SIDE's order, whatever the times
[ "${SIDE_JOBS:-1}" -gt 0 ] && for n in $SIDE; do case " $queue " in *" $n "*) side="$side $n" ;; esac; done
# While the late build runs, the first JOBS suites that need only the
# release build go first (the slowest, each longer than that build), so
# no core waits for it: a bare clone's unit-asan, first in the queue,
# held its core 85 s for it.
if [ -n "${REMORA_LATE_BUILD:-}" ]; then
  early=""; rest=""; k=0
  for n in $heavy; do
    case " $LATE " in
      *" $n "*) rest="$rest $n" ;;
      *) if [ $k -lt "${JOBS:-2}" ]; then early="$early $n"; k=$((k + 1)); else rest="$rest $n"; fi ;;
    esac
  done
  heavy="$early$rest"
fi
start=$(date +%s)
[ -n "$heavy" ] && printf '%s\n' $heavy | xargs -P "${JOBS:-2}" -n 1 sh tests/run.sh --one &
[ -n "$light" ] && printf '%s\n' $light | xargs -P "${LIGHT_JOBS:-1}" -n 1 sh tests/run.sh --one &
[ -n "$side" ] && printf '%s\n' $side | xargs -P 1 -n 1 sh tests/run.sh --one &
wait
wall=$(($(date +%s) - start))
rm -rf build/test-cache

pass=0; fail=0; cpus=0
# the times of the suites that did not run this time are kept
if [ -f "$LOGS/times" ]; then
  awk -v ran=" $all " 'index(ran, " " $1 " ") == 0' "$LOGS/times" > "$LOGS/times.new"
else
  : > "$LOGS/times.new"
fi
for n in $all; do
  if [ -f "$LOGS/$n.result" ]; then
    read -r _ _ secs p f cpu < "$LOGS/$n.result"
    echo "$n $secs $cpu" >> "$LOGS/times.new"
    cpus=$(awk -v a="$cpus" -v b="${cpu:-0}" 'BEGIN { printf "%.1f", a + b }')
  else
    echo "FAIL $n: did not run"; p=0; f=1
  fi
  pass=$((pass + p)); fail=$((fail + f))
done
mv "$LOGS/times.new" "$LOGS/times"
# the late build counts as a suite when it failed, whether or not a suite
# that needs it ran (wait above waited for it too)
if [ -n "${REMORA_LATE_BUILD:-}" ] && [ "$(cat "$LOGS/late-build.rc" 2>/dev/null)" != 0 ]; then
  echo "FAIL the ASan and fuzz builds ($REMORA_LATE_BUILD):"; tail -30 "$LOGS/late-build.log"; fail=$((fail + 1))
fi
echo "== slowest suites (of ${wall}s, ${JOBS:-2} at a time, ${LIGHT_JOBS:-1} and ${SIDE_JOBS:-1} beside, $cpus CPU-s in all; logs in $LOGS/)"
for n in $all; do grep "^$n " "$LOGS/times"; done | sort -k2 -rn | head -8 |
  awk '{ printf "  %7ss %6s CPU-s %s\n", $2, $3, $1 }'
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
