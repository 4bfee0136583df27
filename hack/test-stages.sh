#!/usr/bin/env bash
# Runs make test's stages, each timed (hack/timings.sh), and stops at the
# first that fails.
#   test-stages.sh MAKE LANES "FIRST STAGES" "CPU STAGES" "E2E STAGES"
# The first stages run alone (verify-generated rewrites files the others
# read), then the tools both lanes use ($TEST_TOOLS) are built, then the
# rest: with LANES=1 one after another; with LANES=2 in two lanes at once,
# each line prefixed with its lane: the local cluster's suites (real Ray
# pods; they mostly wait, on Ray, on grace periods, on restarts) in one, the
# other stages (compiling, envtest, Ray heads on the host) in the other.
# Each lane first builds its own tools ($TEST_TOOLS_CPU, $TEST_TOOLS_E2E).
# shellcheck disable=SC2086 # the stage and tool lists are words
set -uo pipefail
make=$1 lanes=$2 first=$3 cpu=$4 e2e=$5
tools=${TEST_TOOLS:-} cpu_tools=${TEST_TOOLS_CPU:-} e2e_tools=${TEST_TOOLS_E2E:-}
timings="$(dirname "$0")/timings.sh"

tools() { # tools NAME TOOL...: build the tools as one timed stage
	local name=$1
	shift
	[[ $# == 0 ]] && return
	echo "== $name"
	"$timings" run stage "$name" -- $make --no-print-directory "$@" || { echo "== $name failed"; return 1; }
}

stages() { # stages STAGE...: run each in turn, stop at the first failure
	local stage
	for stage in "$@"; do
		echo "== make $stage"
		"$timings" run stage "$stage" -- $make --no-print-directory "$stage" || { echo "== make $stage failed"; return 1; }
	done
}

stages $first || exit 1
tools tools $tools || exit 1
cpu_lane() { tools "tools (cpu)" $cpu_tools && stages $cpu; }
e2e_lane() { tools "tools (e2e)" $e2e_tools && stages $e2e; }
if [[ $lanes != 2 ]]; then
	cpu_lane && e2e_lane
	exit
fi
(cpu_lane 2>&1 | sed -u 's/^/[cpu] /') & cpu_lane=$!
(e2e_lane 2>&1 | sed -u 's/^/[e2e] /') & e2e_lane=$!
rc=0
wait $cpu_lane || rc=1
wait $e2e_lane || rc=1
exit $rc
