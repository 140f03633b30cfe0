#!/usr/bin/env python3
"""sgr.py — the colour and attributes of text on a tmux screen.

Reads `tmux capture-pane -p -e` output on stdin (text with the SGR escape
sequences tmux uses to describe each cell) and, for every TEXT given on the
command line, prints one line "TEXT fg=F bg=B bold=0|1 dim=0|1" describing
the first character of TEXT's first occurrence on the screen (fg and bg are
SGR colour numbers, 30-37 and 40-47, or "default"). A TEXT that is not on
the screen prints "TEXT missing". "--cols A:B" first limits the search to
screen columns A to B-1 (the answer pane, say). Used by
tests/sh/tui_colours.sh.
"""
import re
import sys

SGR = re.compile(r"\x1b\[([0-9;]*)m")


def cells(line):
    """Yields (char, state) for every character of a captured line."""
    st = {"fg": "default", "bg": "default", "bold": 0, "dim": 0}
    pos = 0
    for m in SGR.finditer(line):
        for ch in line[pos:m.start()]:
            yield ch, dict(st)
        pos = m.end()
        codes = [int(c) if c else 0 for c in m.group(1).split(";")]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                st = {"fg": "default", "bg": "default", "bold": 0, "dim": 0}
            elif c == 1:
                st["bold"] = 1
            elif c == 2:
                st["dim"] = 1
            elif c == 22:
                st["bold"] = st["dim"] = 0
            elif 30 <= c <= 37:
                st["fg"] = str(c)
            elif c == 39:
                st["fg"] = "default"
            elif 40 <= c <= 47:
                st["bg"] = str(c)
            elif c == 49:
                st["bg"] = "default"
            elif c in (38, 48):          # 256-colour or RGB: skip its arguments
                i += 2 if i + 1 < len(codes) and codes[i + 1] == 5 else 4
            i += 1
    for ch in line[pos:]:
        yield ch, dict(st)


def main():
    args = sys.argv[1:]
    lo, hi = 0, None
    if len(args) >= 2 and args[0] == "--cols":
        a, b = args[1].split(":")
        lo, hi = int(a), int(b)
        args = args[2:]
    lines = [list(cells(l.rstrip("\n")))[lo:hi] for l in sys.stdin]
    for text in args:
        found = None
        for row in lines:
            s = "".join(ch for ch, _ in row)
            k = s.find(text)
            if k >= 0:
                found = row[k][1]
                break
        if found is None:
            print(f"{text} missing")
        else:
            print(f"{text} fg={found['fg']} bg={found['bg']} bold={found['bold']} dim={found['dim']}")


if __name__ == "__main__":
    main()
