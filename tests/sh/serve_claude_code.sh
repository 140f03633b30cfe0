#!/bin/sh
# Claude Code (the official @anthropic-ai/claude-code npm package, pinned,
# installed with npm into build/npm-claude and kept there) against
# `remora serve`, offline: ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY point
# it at the server, telemetry and updates off, HOME a scratch folder. On
# kl-tiny with its replies forced ($REMORA_TEST_REPLIES, the fixtures' K3
# markup) to a final answer, `claude -p` completes one prompt and prints
# the answer; the server saw /v1/messages?beta=true with Claude Code's
# preamble of tens of thousands of tokens. The model is kl-tiny's first
# two layers (lib/first_layers.py), both KDA: the test is the client's (the
# replies are forced), and the 25k-token prefill is its cost, which
# kl-tiny's two full-attention layers make quadratic: the script took
# 41.6 CPU-s on the whole kl-tiny (its prefill 42.8 s; k3-tiny's took half
# as much again) and 4.8 on the cut one (4.0 s), with Claude Code
# installed. Skipped, saying so, when the npm registry cannot be reached.
set -u
cd "$(dirname "$0")/../.." || exit 2
FX=${REMORA_FIXTURES:-$(pwd)/tests/fixtures}
BIN=${REMORA_BIN:-build/rel/remora}
NPM_DIR=$(pwd)/build/npm-claude
PKG=@anthropic-ai/claude-code@2.1.332
T=$(mktemp -d)
trap 'serve_stop; rm -rf "$T"' EXIT
. tests/sh/lib/serve.sh
fail=0; passed=0; failed=0
CLAUDE=$NPM_DIR/node_modules/@anthropic-ai/claude-code/bin/claude.exe
if [ ! -x "$CLAUDE" ]; then
  command -v npm > /dev/null || { echo "skip: npm is not installed"; echo "0 passed, 0 failed"; exit 0; }
  mkdir -p "$NPM_DIR"
  if ! timeout 600 npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error "$PKG" > "$T/npm.log" 2>&1; then
    echo "skip: cannot install $PKG with npm (is the npm registry reachable?):"; tail -3 "$T/npm.log"
    echo "0 passed, 0 failed"; exit 0
  fi
fi
expect() {
  if [ "$2" = "$3" ]; then echo "ok   $1"; passed=$((passed + 1)); else echo "FAIL $1: '$2', want '$3'"; failed=$((failed + 1)); fi
}
B='Done.<|close|>think<|sep|><|open|>response<|sep|>It is 19.<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>'
printf '["%s"]' "$B" > "$T/replies.json"
export REMORA_TEST_REPLIES=$T/replies.json
python3 tests/sh/lib/first_layers.py "$FX/kl-tiny" "$T/kl2" 2 || exit 1
serve_start "$BIN" "$T/kl2" --max-tokens 100000 || exit 1
mkdir -p "$T/home"
(cd "$T/home" && HOME=$T/home ANTHROPIC_BASE_URL=http://127.0.0.1:$SRV_PORT ANTHROPIC_API_KEY=sk-local \
  ANTHROPIC_MODEL=remora ANTHROPIC_SMALL_FAST_MODEL=remora DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
  DISABLE_ERROR_REPORTING=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
  timeout 900 "$CLAUDE" -p "What is 12+7?" --max-turns 1 > "$T/out" 2> "$T/err")
rc=$?
expect "claude -p exits 0" "$rc" 0
expect "claude -p prints the server's answer" "$(cat "$T/out")" "It is 19."
expect "the server answered /v1/messages" "$(grep -c 'POST /v1/messages 200' "$SRV_LOG" | sed 's/^[1-9][0-9]*$/some/')" some
n=$(sed -n 's/.*POST \/v1\/messages 200.*: \([0-9]*\) prompt tokens.*/\1/p' "$SRV_LOG" | sort -n | tail -1)
echo "     the largest prompt: ${n:-?} tokens"
[ $rc -eq 0 ] || { echo "     claude's stderr:"; tail -5 "$T/err" | sed 's/^/     /'; }
serve_stop
[ $fail -eq 0 ] || failed=$((failed + 1))
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
