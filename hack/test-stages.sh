#!/usr/bin/env bash
# Runs make test's stages, each timed (hack/timings.sh), and stops at the
# first that fails.
#   test-stages.sh MAKE LANES "FIRST STAGES" "CPU STAGES" "E2E STAGES"
# The first stages run alone (verify-generated rewrites files the others
# read), then every tool is built, then the rest: with LANES=1 one after
# another; with LANES=2 in two lanes at once, the stages that keep the CPU
# busy (compiling, envtest) in one and those that run real pods and Ray
# (which mostly wait: on Ray, on grace periods, on restarts) in the other,
# each line prefixed with its lane.
set -uo pipefail
make=$1 lanes=$2 first=$3 cpu=$4 e2e=$5 tools=${TEST_TOOLS:-}
timings="$(dirname "$0")/timings.sh"

stages() { # stages STAGE...: run each in turn, stop at the first failure
	local stage
	for stage in "$@"; do
		echo "== make $stage"
		"$timings" run stage "$stage" -- $make --no-print-directory "$stage" || { echo "== make $stage failed"; return 1; }
	done
}

# shellcheck disable=SC2086 # the stage lists are words
stages $first || exit 1
echo "== tools"
"$timings" run stage tools -- $make --no-print-directory $tools || exit 1
if [[ $lanes != 2 ]]; then
	stages $cpu $e2e
	exit
fi
(stages $cpu 2>&1 | sed -u 's/^/[cpu] /') & cpu_lane=$!
(stages $e2e 2>&1 | sed -u 's/^/[e2e] /') & e2e_lane=$!
rc=0
wait $cpu_lane || rc=1
wait $e2e_lane || rc=1
exit $rc
