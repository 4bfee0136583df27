#!/usr/bin/env bash
# Creates a Python virtualenv with a pinned ray[default,serve] in a cache
# outside the work tree and prints its directory. The e2e suites run the venv's
# `ray` CLI to start a real Ray head (default: dashboard and jobs API; serve:
# the Serve REST API); the local node mounts it read-only into every Ray
# container at /home/ray/anaconda3, where the rayproject/ray images keep their
# Python. So that it runs there too, it is built on the system's Python
# (/usr/bin/python3, which containers see) and its scripts find their
# interpreter next to themselves instead of by absolute path. A second run
# only compares the marker file.
set -euo pipefail

# The newest Ray release with a cp311 manylinux x86_64 wheel (Python here is
# 3.11). The directory name follows the version, so a bump installs afresh.
ray_version=${RAY_VERSION:-2.60.0}
requirement="ray[default,serve]==$ray_version"
python=${PYTHON:-/usr/bin/python3}
cache=${RAY_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ray-operator}
# The name also says how the venv is built, so that a checkout with an older
# script (which builds it on another Python, with absolute paths) keeps its
# own instead of rebuilding this one.
dir="$cache/ray-venv-$ray_version-relocatable"
marker="$dir/.installed"
# What the marker records: a change here installs afresh.
layout="$requirement; python $("$python" -c 'import sys; print(sys.executable, *sys.version_info[:2])'); relocatable scripts and activate"

if ! "$python" -c 'import ensurepip' 2>/dev/null; then
	if [[ $(id -u) -ne 0 ]]; then
		echo "$python has no venv module: install Debian's python3-venv" >&2
		exit 1
	fi
	"$(dirname "$0")/apt-install.sh" python3-venv
fi
mkdir -p "$cache"
# One install at a time per machine; later callers wait and then find it done.
exec 9>"$dir.lock"
flock 9
if [[ "$(cat "$marker" 2>/dev/null)" != "$layout" ]]; then
	echo "installing $requirement into $dir (first run only)" >&2
	# The marker, written last, tells a complete install from an interrupted
	# one and records what was installed.
	rm -rf "$dir"
	mkdir -p "$cache"
	"$python" -m venv "$dir" >&2
	"$(dirname "$0")/timings.sh" run tool "ray-venv-$ray_version" -- \
		"$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
		--only-binary=:all: "$requirement" >&2
	"$dir/bin/python" "$(dirname "$0")/relocatable-venv.py" "$dir" >&2
	"$dir/bin/ray" --version >&2
	echo "$layout" >"$marker"
fi
echo "$dir"
