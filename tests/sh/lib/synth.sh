# synth.sh — shared by the scripts that need a K3-width synthetic model
# (sourced, not run): synth.sh and forecast.sh both read the smallest one
# (2 layers, 16 experts, seed 7: 3.5 GB, 9-12 CPU-seconds and 15-20 s of
# disk to write). Under tests/run.sh ($REMORA_SYNTH_DIR set, in the run's
# build/test-cache, removed at its end) it is written once per run, by the
# first script that asks, under a lock, and the other reads the same
# folder; a script run alone writes its own under its scratch folder.
# Nothing may change a shared model: the readers only open it.

# synth_model BIN DIR LAYERS EXPERTS: sets SYNTH to the folder of
# `BIN synth --layers LAYERS --experts EXPERTS --seed 7` (under DIR when
# no run shares it) and SYNTH_ERR to that command's stderr (its plan and
# its next command name SYNTH); returns 1, saying why, when it fails.
synth_model() {
  sm_bin=$1; sm_dir=${REMORA_SYNTH_DIR:-$2}; sm_name=l$3e$4s7
  SYNTH=$sm_dir/$sm_name; SYNTH_ERR=$sm_dir/$sm_name.err
  mkdir -p "$sm_dir" || return 1
  (
    flock -w 600 9 || { echo "waited 600 s for $SYNTH.lock"; exit 1; }
    [ -f "$SYNTH.done" ] && exit 0
    rm -rf "$SYNTH"
    "$sm_bin" synth --out "$SYNTH" --layers "$3" --experts "$4" --seed 7 2> "$SYNTH_ERR" || { cat "$SYNTH_ERR"; exit 1; }
    : > "$SYNTH.done"
  ) 9> "$SYNTH.lock"
}
