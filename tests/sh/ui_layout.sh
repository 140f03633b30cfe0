#!/bin/sh
# The include rules of ui/ and app/, read from their #include lines:
# - the ui core (ui/*.c, ui/*.h) includes no curses, ncurses or readline
#   header and nothing from ui/curses/: it draws nothing;
# - ui/, ui/curses/ and app/ include nothing from engine/ but engine.h;
# - a quoted include names a file of the same folder ("pane.h") or a path
#   from the top of the tree ("ui/doc.h", "app/opts.h"), never "../".
cd "$(dirname "$0")/../.." || exit 2
status=0
bad() { echo "FAIL: $*"; status=1; }
n=0
T_BAD=$(mktemp) || exit 1; trap 'rm -f "$T_BAD"' EXIT

for f in ui/*.c ui/*.h; do
  grep -nE '^[[:space:]]*#[[:space:]]*include' "$f" | while IFS= read -r line; do
    case $line in
      *'<curses.h>'*|*'<ncurses'*|*'<ncursesw/'*|*'<term.h>'*|*'<panel.h>'*|*'<menu.h>'*|*'<form.h>'*|*'<readline/'*|*'<editline/'*)
        echo "FAIL: $f:$line: the ui core draws nothing (curses and readline belong in ui/curses/)"; echo x >> "$T_BAD" ;;
      *'"curses/'*|*'"ui/curses/'*)
        echo "FAIL: $f:$line: the ui core includes nothing from ui/curses/"; echo x >> "$T_BAD" ;;
    esac
  done
done

for f in ui/*.c ui/*.h ui/curses/*.c ui/curses/*.h app/*.c app/*.h app/serve/*.c app/serve/*.h; do
  dir=$(dirname "$f")
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    n=$((n + 1))
    case $inc in
      engine.h) continue ;;
      ../*|*/../*) bad "$f: \"$inc\": name a file of the same folder or a path from the top of the tree" ;;
      engine/*) bad "$f: \"$inc\": ui/ and app/ include nothing from engine/ but engine.h" ;;
      ui/*|app/*) [ -f "$inc" ] || bad "$f: \"$inc\" does not exist" ;;
      */*) bad "$f: \"$inc\": only ui/ and app/ paths (and engine.h)" ;;
      *) if [ ! -f "$dir/$inc" ]; then
           if [ -f "engine/$inc" ]; then bad "$f: \"$inc\" is an engine header: only engine.h is public"
           else bad "$f: \"$inc\" is not in $dir/"; fi
         fi ;;
    esac
  done
done
[ -s "$T_BAD" ] && status=1
[ $status = 0 ] && echo "ok   $n quoted includes of ui/ and app/; the ui core includes no curses or readline"
exit $status
