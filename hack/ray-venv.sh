#!/usr/bin/env bash
# Creates a Python virtualenv with ray[default,serve] of one release in a
# cache outside the work tree and prints its directory:
#
#   ray-venv.sh [VERSION]    (default: $RAY_VERSION, else the pinned 2.60.0)
#
# The e2e suites run the venv's `ray` CLI to start a real Ray head (default:
# dashboard and jobs API; serve: the Serve REST API); the local node mounts a
# venv read-only into every Ray container at /home/ray/anaconda3, where the
# rayproject/ray images keep their Python, and calls this script to install
# the release a pod's image tag names (local/internal/rayvenv), as its image
# pull. So that it runs there too, it is built on the system's Python
# (/usr/bin/python3, which containers see) and its scripts find their
# interpreter next to themselves instead of by absolute path. A second run
# only compares the marker file. Several callers for one release at once
# (pods of that version starting together) wait for the first one's install.
set -euo pipefail

# The newest Ray release with a cp311 manylinux x86_64 wheel (Python here is
# 3.11). The directory name follows the version, so a bump installs afresh.
ray_version=${1:-${RAY_VERSION:-2.60.0}}
if [[ ! $ray_version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
	echo "ray-venv.sh: $ray_version is not a Ray release (X.Y.Z)" >&2
	exit 2
fi
requirement="ray[default,serve]==$ray_version"
python=${PYTHON:-/usr/bin/python3}
cache=${RAY_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ray-operator}
# The name also says how the venv is built, so that a checkout with an older
# script (which builds it on another Python, with absolute paths) keeps its
# own instead of rebuilding this one.
dir="$cache/ray-venv-$ray_version-relocatable"
marker="$dir/.installed"

# version_lt A B: whether release A is older than release B.
version_lt() {
	[[ $1 != "$2" && $(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1) == "$1" ]]
}

# What older releases need to install with today's PyPI on Python 3.11, by
# version range (checked: 2.9.3 and 2.41.0 install and start a head with no
# other pin). pip_extra goes on pip's command line, and into the marker.
pip_extra=()
# ray[default] before 2.41 (2.9.3 checked; 2.41.0 has no gpustat) needs
# gpustat, which PyPI serves as a source distribution only.
if version_lt "$ray_version" 2.41.0; then
	pip_extra+=(--no-binary=gpustat)
fi
# Serve from 2.44.0 to 2.56.x reads FieldDescriptor.label, which protobuf 7
# removed: every Serve application fails to deploy with an AttributeError
# (seen on 2.52.0; 2.43.0 does not read it, 2.57.0 checks for is_repeated
# first). pip would pick protobuf 7, so those releases keep protobuf 6.
if ! version_lt "$ray_version" 2.44.0 && version_lt "$ray_version" 2.57.0; then
	pip_extra+=("protobuf<7")
fi

# What the marker records: a change here installs afresh. A release with no
# pins keeps the line it had before pins existed, so that its venv stays.
layout="$requirement${pip_extra[*]:+ ${pip_extra[*]}}; python $("$python" -c 'import sys; print(sys.executable, *sys.version_info[:2])'); relocatable scripts and activate"

if ! "$python" -c 'import ensurepip' 2>/dev/null; then
	if [[ $(id -u) -ne 0 ]]; then
		echo "$python has no venv module: install Debian's python3-venv" >&2
		exit 1
	fi
	"$(dirname "$0")/apt-install.sh" python3-venv
fi
mkdir -p "$cache"
# One install at a time per release and machine; later callers wait and then
# find it done.
exec 9>"$dir.lock"
flock 9
if [[ "$(cat "$marker" 2>/dev/null)" != "$layout" ]]; then
	echo "installing $requirement into $dir (first run only)" >&2
	# The marker, written last, tells a complete install from an interrupted
	# one and records what was installed.
	rm -rf "$dir"
	mkdir -p "$cache"
	"$python" -m venv "$dir" >&2
	# A bounded wait per connection and few retries: with PyPI unreachable
	# the install fails within about a minute instead of hanging.
	if ! "$(dirname "$0")/timings.sh" run tool "ray-venv-$ray_version" -- \
		"$dir/bin/python" -m pip install --quiet --disable-pip-version-check \
		--timeout 20 --retries 2 \
		--only-binary=:all: "${pip_extra[@]}" "$requirement" >&2; then
		rm -rf "$dir"
		exit 1
	fi
	"$dir/bin/python" "$(dirname "$0")/relocatable-venv.py" "$dir" >&2
	"$dir/bin/ray" --version >&2
	echo "$layout" >"$marker"
fi
echo "$dir"
