# npm.sh — shared by the tests that drive the official npm clients (sourced,
# not run): the pinned packages, installed once per clone into build/npm
# and kept there. Two of those tests may run at once (tests/run.sh): the
# install is done under a lock, and both ask for the whole set, so a bare
# clone runs npm once.
NPM_DIR=$(pwd)/build/npm
NPM_PKGS="openai@5.23.2 @anthropic-ai/sdk@1.15.0"

# npm_have PKG: the version of PKG installed in NPM_DIR (empty if none).
npm_have() { node -p "require('$NPM_DIR/node_modules/$1/package.json').version" 2>/dev/null; }

# npm_ensure: installs NPM_PKGS into NPM_DIR unless every one of them is
# there at its version; says why and returns 1 when npm cannot.
npm_ensure() {
  for c in node npm; do
    command -v $c > /dev/null || { echo "FAIL: $c is not installed (make test installs nodejs and npm)"; return 1; }
  done
  mkdir -p "$NPM_DIR" || return 1
  (
    flock -w 600 9 || { echo "FAIL: waited 600 s for $NPM_DIR/.lock"; exit 1; }
    for p in $NPM_PKGS; do
      [ "$(npm_have "${p%@*}")" = "${p##*@}" ] || {
        timeout 300 npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error $NPM_PKGS \
          > "$NPM_DIR/npm.log" 2>&1 && exit 0
        echo "FAIL: cannot install $NPM_PKGS with npm into $NPM_DIR (is the npm registry reachable?):"
        tail -5 "$NPM_DIR/npm.log"
        exit 1
      }
    done
  ) 9> "$NPM_DIR/.lock"
}
