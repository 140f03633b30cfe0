#!/bin/sh
# Installs the Debian packages Remora needs when run as root, otherwise prints
# the exact apt-get line and fails. Usage: deps.sh build|test PKG...
# A package counts as present when dpkg reports it installed, or when an
# installed package provides it (NodeSource's nodejs provides npm, and
# conflicts with Debian's npm).
kind=$1; shift
provided=$(dpkg-query -W -f='${db:Status-Status} ${Provides}\n' 2>/dev/null |
  sed -n 's/^installed //p' | tr ',' '\n' | sed 's/ *(.*//; s/^ *//; s/:.*//' | sort -u)
missing=""
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" && continue
  printf '%s\n' "$provided" | grep -qx "$p" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ]; then
  echo "remora: installing missing packages:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q $missing >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q $missing; } || exit 1
else
  echo "remora: missing Debian packages. Install them with:"
  echo "  sudo apt-get install -y$missing"
  exit 1
fi
