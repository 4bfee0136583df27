#!/usr/bin/env bash
# Prints the path of a runc binary for the local node's sandbox tests
# (internal/localnode/sandbox). When none is on PATH it installs Debian's runc
# package first (CI machines may start without it; the tests run as root).
set -euo pipefail

if ! command -v runc >/dev/null 2>&1; then
	echo "installing runc with apt-get (first run only)" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update >&2
	apt-get install -y runc >&2
fi
command -v runc
