#!/bin/sh
# The manual page: mandoc and groff lint it clean, and it documents exactly
# the options of `remora chat --help`, the keys of `remora chat --keys` and
# the commands of `remora --help` (each checked in both directions), and
# every option of `remora serve --help` (under SERVE, or OPTIONS for the
# shared ones; SERVE lists no option serve lacks); and every option the
# --help of any command names.
cd "$(dirname "$0")/../.." || exit 2
BIN=${REMORA_BIN:-build/rel/remora}
PAGE=man/remora.1
status=0
bad() { echo "FAIL: $*"; status=1; }
T=$(mktemp -d) || exit 1; trap 'rm -rf "$T"' EXIT

out=$(mandoc -Tlint -Wstyle "$PAGE" 2>&1) || [ -n "$out" ] || out="mandoc failed"
[ -z "$out" ] || bad "mandoc -Tlint: $out"
out=$(groff -man -ww -z "$PAGE" 2>&1)
[ -z "$out" ] || bad "groff -ww: $out"

# The tags (the line after .TP) of one .SH section, with the font macros,
# quotes and escapes taken off.
tags() {
  awk -v sec="$1" '/^\.SH/ { in_sec = ($0 == ".SH " sec); prev = ""; next }
                   in_sec && prev == ".TP" { print } { prev = $0 }' "$PAGE" |
    sed -e 's/^\.[A-Z]* *//' -e 's/\\-/-/g' -e 's/"//g' -e 's/\\f[BIRP]//g' -e 's/ *$//'
}

# compare WHAT LIST1 LIST2 (newline-separated): reports what either lacks.
compare() {
  printf '%s\n' "$2" | sort -u > "$T/a"
  printf '%s\n' "$3" | sort -u > "$T/b"
  missing=$(comm -23 "$T/a" "$T/b")
  extra=$(comm -13 "$T/a" "$T/b")
  rm -f "$T/a" "$T/b"
  [ -z "$missing" ] || bad "$1 not in the man page: $(echo $missing)"
  [ -z "$extra" ] || bad "$1 in the man page but not in the program: $(echo $extra)"
}

help_opts=$("$BIN" chat --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p')
man_opts=$(tags OPTIONS | awk '{ print $1 }')
[ -n "$help_opts" ] || bad "remora chat --help lists no options"
compare "chat options" "$help_opts" "$man_opts"

# serve: its own options under SERVE, the shared ones under OPTIONS
serve_opts=$("$BIN" serve --help | sed -n 's/^  \(--[a-z-]*\).*/\1/p')
serve_man=$(tags SERVE | awk '$1 ~ /^--/ { print $1 }')
[ -n "$serve_opts" ] || bad "remora serve --help lists no options"
printf '%s\n' "$serve_opts" | sort -u > "$T/so"
printf '%s\n%s\n' "$serve_man" "$man_opts" | sort -u > "$T/documented"
printf '%s\n' "$serve_man" | sort -u > "$T/sm"
missing=$(comm -23 "$T/so" "$T/documented")
extra=$(comm -13 "$T/so" "$T/sm")
[ -z "$missing" ] || bad "serve options not in the man page: $(echo $missing)"
[ -z "$extra" ] || bad "serve options under SERVE but not in remora serve --help: $(echo $extra)"

help_keys=$("$BIN" chat --keys | sed 's/  .*//')
man_keys=$(tags KEYS)
[ -n "$help_keys" ] || bad "remora chat --keys lists no keys"
compare "keys" "$help_keys" "$man_keys"

help_cmds=$("$BIN" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
man_cmds=$(tags COMMANDS)
compare "commands" "$help_cmds" "$man_cmds"

# Every option that any command's --help names (in its usage line or its
# option lines) is in the page.
plain=$(sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$PAGE")
for cmd in $help_cmds; do
  for o in $("$BIN" "$cmd" --help 2>&1 | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
    printf '%s\n' "$plain" | grep -qF -- "$o" || bad "remora $cmd --help names $o, which the man page lacks"
  done
done

# One version everywhere: --version, -V, the --help banner and the page header.
ver=$("$BIN" --version | sed -n 's/^remora \([0-9][0-9.]*\)$/\1/p')
[ -n "$ver" ] || bad "remora --version does not print 'remora X.Y.Z'"
[ "$("$BIN" -V)" = "remora $ver" ] || bad "remora -V differs from --version"
"$BIN" --help | head -1 | grep -qF "remora $ver " || bad "remora --help does not show version $ver"
grep -q "^\.TH REMORA 1 [0-9-]* \"remora $ver\" " "$PAGE" || bad "the .TH header of $PAGE does not say remora $ver"

[ $status = 0 ] && echo ok
exit $status
