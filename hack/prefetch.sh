#!/usr/bin/env bash
# Installs on first use, in the background of `make test`'s first stages,
# what the later stages need and what spends its time on the network rather
# than the CPU: the local node's Debian packages, redis-server and Ray from
# PyPI. Each script takes its own lock, so a stage that reaches one first
# waits for it here instead of installing twice.
set -euo pipefail
cd "$(dirname "$0")/.."
hack/node-packages.sh
hack/redis-server.sh >/dev/null
hack/ray-venv.sh >/dev/null
# The older release the node suite runs (olderRay in
# local/test/integration/node/rayrelease_test.go): its pod would install it.
hack/ray-venv.sh 2.41.0 >/dev/null
# The samples' release, which the walkthrough runs (ray-local with the
# installer, as `make run`: local/test/e2e/walkthrough).
hack/ray-venv.sh 2.52.0 >/dev/null
# The oldest release of the rayversions package's default pair, which
# `make test` runs (test-e2e-ray-versions); its first pod would install it.
hack/ray-venv.sh 2.9.3 >/dev/null
