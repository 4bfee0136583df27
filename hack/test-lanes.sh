#!/usr/bin/env bash
# Runs make test's stages in two lanes at once: the stages that keep the
# CPU busy (compiling, envtest suites) one after another in the first, the
# real-Ray suites (which mostly wait: on Ray, on grace periods, on
# restarts) in the second. Each line is prefixed with its lane.
#   test-lanes.sh MAKE "CPU STAGES" "E2E STAGES"
set -uo pipefail
make=$1
timings="$(dirname "$0")/timings.sh"

lane() { # lane NAME STAGE...
	local name=$1 stage
	shift
	for stage in "$@"; do
		echo "== make $stage"
		"$timings" run stage "$stage" -- $make --no-print-directory "$stage" || { echo "== make $stage failed"; return 1; }
	done
}

(lane cpu $2 2>&1 | sed -u 's/^/[cpu] /') & cpu=$!
(lane e2e $3 2>&1 | sed -u 's/^/[e2e] /') & e2e=$!
rc=0
wait $cpu || rc=1
wait $e2e || rc=1
exit $rc
