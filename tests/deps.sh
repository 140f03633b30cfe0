#!/bin/sh
# Installs the Debian packages Remora needs when run as root, otherwise prints
# the exact apt-get line and fails. Usage: deps.sh build|test PKG...
# A package counts as present when dpkg reports it installed.
kind=$1; shift
missing=""
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
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
