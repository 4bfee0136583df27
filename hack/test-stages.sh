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
# The e2e lane then starts a niced make of $TEST_TOOLS_E2E_LATER in the
# background, holding an flock on $RAY_OPERATOR_TOOLS_LOCK until it ends:
# the suites that need those tools wait for the lock (local/internal/e2eutil),
# the others run meanwhile and mostly wait on Ray, which leaves the CPU to
# the build. Its output goes to .cache/later-tools.log.
# shellcheck disable=SC2086 # the stage and tool lists are words
set -uo pipefail
make=$1 lanes=$2 first=$3 cpu=$4 e2e=$5
tools=${TEST_TOOLS:-} cpu_tools=${TEST_TOOLS_CPU:-} e2e_tools=${TEST_TOOLS_E2E:-}
later_tools=${TEST_TOOLS_E2E_LATER:-} tools_lock=${RAY_OPERATOR_TOOLS_LOCK:-}
timings="$(dirname "$0")/timings.sh"

tools() { # tools LEVEL NAME TOOL...: build the tools as one timed stage at nice level LEVEL
	local level=$1 name=$2
	shift 2
	[[ $# == 0 ]] && return
	echo "== $name"
	"$timings" run stage "$name" -- nice -n "$level" $make --no-print-directory "$@" || { echo "== $name failed"; return 1; }
}

# The stages of $TEST_NICE_STAGES (compiling and linting: nothing in them
# waits on a clock) run at nice level 10, so that beside them the e2e lane's
# Ray clusters get the CPUs when they need them: on a new machine lint
# analyses every package from an empty cache for over ten minutes, and
# beside it (load 40 on two cores) two of the cluster package's parallel
# tests missed their deadlines.
nice_stages=" ${TEST_NICE_STAGES:-} "

stages() { # stages STAGE...: run each in turn, stop at the first failure
	local stage level
	for stage in "$@"; do
		echo "== make $stage"
		level=0
		[[ $nice_stages == *" $stage "* ]] && level=10
		"$timings" run stage "$stage" -- nice -n $level $make --no-print-directory "$stage" || { echo "== make $stage failed"; return 1; }
	done
}

# later_tools: the background build of $later_tools, the lock taken here
# (so that no suite can find it free before the build begins) and held by
# the build's processes alone once this shell closes its descriptor.
later_tools() {
	[[ -n $later_tools && -n $tools_lock ]] || return 0
	local log=.cache/later-tools.log
	mkdir -p "$(dirname "$tools_lock")" .cache
	exec 8>"$tools_lock"
	flock 8
	echo "== tools (e2e, background, niced): $later_tools; log: $log"
	("$timings" run stage "tools (e2e, background)" -- nice -n 19 $make --no-print-directory $later_tools >"$log" 2>&1 ||
		echo "== the background build of $later_tools failed: $log") &
	later_pid=$!
	exec 8>&-
}

stages $first || exit 1
tools 0 tools $tools || exit 1
# The cpu lane's own tools build niced: on a new machine the e2e lane's
# (which it needs before its first suite) get the CPUs first, the cpu lane
# having time to spare (it ends half way through the e2e lane).
cpu_lane() { tools 10 "tools (cpu)" $cpu_tools && stages $cpu; }
# The e2e lane ends with its background build, even when a stage failed
# before a suite waited for it.
e2e_lane() {
	local rc=0 later_pid=
	{ tools 0 "tools (e2e)" $e2e_tools && later_tools && stages $e2e; } || rc=1
	[[ -z $later_pid ]] || wait "$later_pid"
	return $rc
}
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
