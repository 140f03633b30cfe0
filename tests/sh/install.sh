#!/bin/sh
# `make install` installs the embedded model under PREFIX/share/remora/model
# (DESTDIR honoured), and the installed binary, run from another folder,
# finds it from its own location: `remora run` answers with no --model, and
# `remora chat` opens on it (tmux). With no model anywhere, both say where
# they looked and to pass --model DIR or try --synthetic, exit 2.
# The install builds for PREFIX=/usr in a build folder of its own
# (build/install-test): the user's build/remora is never rebuilt or
# relinked in place while other tests run it.
cd "$(dirname "$0")/../.." || exit 2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
before=$(stat -c %Y build/rel/remora 2>/dev/null)
# The folder starts as a copy of the release build's (times kept, the
# dependency files pointed at the copy), so that make rebuilds only what
# PREFIX changes (app/model_path.o) and relinks: compiling the whole
# engine again, nvcc included, took about 100 CPU-seconds of make test.
# Without a release build, make builds everything there.
rm -rf build/install-test
if [ -f build/rel/remora ]; then
  cp -a build/rel build/install-test &&
    find build/install-test -name '*.d' -exec sed -i 's#build/rel/#build/install-test/#g' {} + || exit 1
fi
make -s install MODE=install-test DESTDIR="$T/stage" PREFIX=/usr > "$T/make.log" 2>&1 || { cat "$T/make.log"; exit 1; }
[ "$(stat -c %Y build/rel/remora 2>/dev/null)" = "$before" ] || { echo "make install rebuilt build/rel/remora"; exit 1; }
[ "$(readlink build/remora)" = rel/remora ] || { echo "make install repointed build/remora: $(readlink build/remora)"; exit 1; }
BIN="$T/stage/usr/bin/remora"
[ -x "$BIN" ] || { echo "no installed binary"; exit 1; }
for f in config.json tiktoken.model README.md model.safetensors.index.json; do
  [ -f "$T/stage/usr/share/remora/model/$f" ] || { echo "model file $f not installed"; exit 1; }
done
[ -f "$T/stage/usr/share/man/man1/remora.1" ] || { echo "man page not installed"; exit 1; }
mkdir -p "$T/elsewhere"
cd "$T/elsewhere" || exit 1
out=$("$BIN" run --prompt 'What is 37*12?' --chat 2> "$T/err")
[ "$out" = 444 ] || { echo "installed remora run answered '$out'"; cat "$T/err"; exit 1; }
# the chat opens on the installed model from here
SOCK=remora-install-$$
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
export LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME="$T/state"
tm new-session -d -x 100 -y 30 "$BIN" || exit 1
n=100
while [ $n -gt 0 ] && ! tm capture-pane -p | grep -q 'remora-k3-demo: 56.5 M'; do sleep 0.1; n=$((n - 1)); done
[ $n -gt 0 ] || { echo "the installed chat did not open on its model"; tm capture-pane -p; tm kill-server; exit 1; }
tm kill-server 2>/dev/null
# no model anywhere: the message names the way out
mv "$T/stage/usr/share/remora/model" "$T/stage/usr/share/remora/moved"
for cmd in "run --prompt hi" "chat"; do
  "$BIN" $cmd > /dev/null 2> "$T/err" < /dev/null; rc=$?
  [ $rc = 2 ] || { echo "$cmd without a model: exit $rc"; cat "$T/err"; exit 1; }
  grep -q 'no model found (looked in ./assets/model, .*/share/remora/model and /usr/share/remora/model): pass --model DIR, or try .remora chat --synthetic' "$T/err" ||
    { echo "$cmd without a model said:"; cat "$T/err"; exit 1; }
done
echo ok
