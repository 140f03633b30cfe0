#!/bin/sh
# The include rule of engine/ (README "How it works"), checked from the
# #include "..." lines: a file in engine/F/ may include engine.h, headers of
# its own folder, and headers of folders that come before F in ORDER; a
# folder that is not in ORDER, a file directly in engine/ other than
# engine.h, or an include cycle between folders is an error too. Files of
# app/ and ui/ include nothing from engine/ but engine.h. Every violation is
# reported as FILE:LINE and what it includes; the exit status is 1 if there
# is any. The checker then proves itself on a small tree with one upward
# include and one cycle, which it must reject.
ORDER="base kernels gpu format io remote model text session tools"
set -u
cd "$(dirname "$0")/../.." || exit 2

# check ROOT: prints the violations under ROOT, returns 1 if there are any.
check() {
  root=$1
  find "$root/engine" "$root/app" "$root/ui" -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) 2>/dev/null | sort |
  while read -r f; do
    grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" /dev/null | sed "s|^$root/||"
  done | awk -v order="$ORDER" -v root="$root" '
    function exists(p) { return (system("test -f \"" root "/" p "\"") == 0) }
    function norm(p,   n, a, i, out, k, s) {     # folds "x/../" and "./"
      n = split(p, a, "/"); k = 0
      for (i = 1; i <= n; i++) {
        if (a[i] == "." || a[i] == "") continue
        if (a[i] == ".." && k > 0 && s[k] != "..") { k--; continue }
        s[++k] = a[i]
      }
      out = ""; for (i = 1; i <= k; i++) out = out (i > 1 ? "/" : "") s[i]
      return out
    }
    BEGIN {
      n = split(order, o, " ")
      for (i = 1; i <= n; i++) rank[o[i]] = i
      bad = 0
    }
    {
      # FILE:LINE:#include "X"
      file = $0; sub(/:.*/, "", file)
      rest = substr($0, length(file) + 2); line = rest; sub(/:.*/, "", line)
      inc = rest; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
      dir = file; sub(/\/[^\/]*$/, "", dir)
      # where the include resolves: the including folder first, then -Iengine, then -I.
      if (exists(dir "/" inc)) target = norm(dir "/" inc)
      else if (exists("engine/" inc)) target = norm("engine/" inc)
      else if (exists(inc)) target = norm(inc)
      else target = ""                               # generated (build/gen) or a system header
      if (file ~ /^(app|ui)\//) {
        if (target ~ /^engine\// && target != "engine/engine.h") {
          printf "%s:%s: includes \"%s\": app/ and ui/ include only engine.h from engine/\n", file, line, inc
          bad = 1
        }
        next
      }
      # a file of engine/
      split(file, p, "/")
      if (file == "engine/engine.h") from = ""
      else if (p[3] == "") { printf "%s: engine/ holds engine.h and folders only\n", file; bad = 1; next }
      else from = p[2]
      if (target == "" || target == "engine/engine.h") next
      if (target !~ /^engine\//) {
        printf "%s:%s: includes \"%s\", which is outside engine/\n", file, line, inc; bad = 1; next
      }
      split(target, q, "/")
      to = (q[3] == "") ? "" : q[2]
      if (from == "") { printf "%s:%s: engine.h includes \"%s\": it must stand alone\n", file, line, inc; bad = 1; next }
      if (!(from in rank)) { printf "%s: folder engine/%s is not in the order (%s)\n", file, from, order; bad = 1; next }
      if (to == from) next
      if (to == "") { printf "%s:%s: includes \"%s\": only engine.h lives directly in engine/\n", file, line, inc; bad = 1; next }
      if (!(to in rank)) { printf "%s:%s: includes \"%s\" from engine/%s, a folder not in the order\n", file, line, inc, to; bad = 1; next }
      if (!((from, to) in edge)) { edge[from, to] = file ":" line; adj[from] = adj[from] " " to }
      if (rank[to] > rank[from]) {
        printf "%s:%s: includes \"%s\": %s/ comes after %s/ in the order (%s)\n", file, line, inc, to, from, order
        bad = 1
      }
    }
    # a cycle between folders, by depth-first search over the include edges
    function dfs(u,   m, v, w, i, j, path) {
      state[u] = 1; stack[++sp] = u
      m = split(adj[u], v, " ")
      for (i = 1; i <= m; i++) {
        w = v[i]
        if (state[w] == 1) {            # w is on the stack: w -> ... -> u -> w
          for (j = sp; j > 1 && stack[j] != w; j--) ;
          path = ""; for (; j <= sp; j++) path = path stack[j] "/ -> "
          printf "include cycle between folders: %s%s/ (closed by %s)\n", path, w, edge[u, w]
          bad = 1
        } else if (state[w] == 0) dfs(w)
      }
      state[u] = 2; sp--
    }
    END {
      for (u in adj) state[u] = 0
      sp = 0
      for (u in adj) if (state[u] == 0) dfs(u)
      exit bad
    }'
}

fail=0
if check .; then echo "ok   engine/ follows the include order: $ORDER"
else echo "FAIL the include rule (order: $ORDER)"; fail=1; fi

# The checker must catch an upward include and a cycle.
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/engine/base" "$T/engine/io" "$T/engine/model" "$T/app"
echo '#include "engine.h"' > "$T/engine/engine.h"
printf '#include "engine.h"\n#include "io/a.h"\n' > "$T/engine/base/b.h"      # base -> io: upward
printf '#include "base/b.h"\n#include "model/m.h"\n' > "$T/engine/io/a.h"    # io -> model: upward, and a cycle via model
printf '#include "io/a.h"\n' > "$T/engine/model/m.h"
printf '#include "engine.h"\n#include "io/a.h"\n' > "$T/app/x.c"
check "$T" > "$T/out"
grep -q 'engine/base/b.h:2: includes "io/a.h"' "$T/out" && grep -q 'include cycle' "$T/out" &&
  grep -q 'app/x.c:2' "$T/out" && echo "ok   the checker rejects an upward include, a cycle and app/ reaching into engine/" ||
  { echo "FAIL the checker missed a planted violation:"; cat "$T/out"; fail=1; }
exit $fail
