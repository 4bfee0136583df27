#!/usr/bin/env bash
# Prints the path of a redis-server binary for the Redis cleanup e2e suite
# (test/e2e/rediscleanup). When none is on PATH it installs Debian's
# redis-server package first (CI machines start without Redis; the suite runs
# as root there). The suite starts its own server on a free port; the
# package's service is not used.
set -euo pipefail

if ! command -v redis-server >/dev/null 2>&1; then
	"$(dirname "$0")/apt-install.sh" redis-server
fi
command -v redis-server
