#!/usr/bin/env bash
# Installs Debian packages with apt-get, one caller at a time on this machine
# (make test's prefetch and its stages may ask at once; apt-get refuses a
# second caller instead of waiting), and records the time as a tool of the
# test timings. Packages already installed are skipped.
#   apt-install.sh PACKAGE ...
set -euo pipefail

exec 8>/tmp/ray-operator-apt.lock
flock 8
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0
echo "installing ${missing[*]} with apt-get (first run only)" >&2
export DEBIAN_FRONTEND=noninteractive
"$(dirname "$0")/timings.sh" run tool "apt ${missing[*]}" -- \
	bash -c 'apt-get update && apt-get install -y "$@"' apt-install "${missing[@]}" >&2
