#!/usr/bin/env bash
# Records where `make test`'s time goes and prints it, beside the previous
# run's figures, so that a regression shows in the next run.
#
#   timings.sh begin                     start a record (RAY_OPERATOR_TIMINGS names it)
#   timings.sh run KIND NAME -- CMD ...  run CMD, record its wall time and exit status
#   timings.sh gotest                    copy `go test` output through, recording each
#                                        package's "ok"/"FAIL" line as a package time
#   timings.sh report                    print the record, keep a copy in the cache and
#                                        in .cache/test-times.txt of the work tree
#   timings.sh failures                  print what failed (stages, packages, tests with
#                                        their first error lines), short, to end the output:
#                                        CI shows only the end of it
#
# A record is one line per entry: KIND<TAB>NAME<TAB>SECONDS<TAB>STATUS, KIND
# one of stage (a `make test` prerequisite), tool (something built or
# installed on first use: its build, module downloads included) or package
# (a `go test` package's own run time, as go test prints it; building the
# test binary is not in it) or test (a test of 20 s or more, from the
# gotestsum records in RAY_OPERATOR_TEST_JSON) or total (`make test`'s wall
# time from begin to report: with two lanes, less than the stages' sum). Without RAY_OPERATOR_TIMINGS nothing is
# recorded: `run` and `gotest` only run and copy.
set -euo pipefail

record=${RAY_OPERATOR_TIMINGS:-}
cache=${RAY_OPERATOR_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ray-operator}
history="$cache/test-times"

add() { # add KIND NAME SECONDS STATUS
	[[ -n "$record" ]] || return 0
	printf '%s\t%s\t%s\t%s\n' "$@" >>"$record"
}

now() { date +%s.%N; }

elapsed() { # elapsed START
	awk -v s="$1" -v e="$(now)" 'BEGIN { printf "%.1f", e - s }'
}

cmd_run() {
	local kind=$1 name=$2
	shift 2
	[[ ${1:-} == -- ]] && shift
	local start rc=0
	start=$(now)
	"$@" || rc=$?
	add "$kind" "$name" "$(elapsed "$start")" "$rc"
	return "$rc"
}

cmd_gotest() {
	# go test's summary lines: "ok  <pkg>  12.3s" and "FAIL  <pkg>  4.5s"
	# (a cached result says "(cached)" and is recorded as 0).
	awk -v record="$record" '
		{ print; fflush() }
		record != "" && ($1 == "ok" || $1 == "FAIL") && NF >= 3 && $2 ~ /\// {
			t = $3; sub(/s$/, "", t)
			if ($3 == "(cached)") t = 0
			if (t ~ /^[0-9.]+$/) {
				printf "package\t%s\t%s\t%s\n", $2, t, ($1 == "ok" ? 0 : 1) >> record
				fflush(record)
			}
		}'
}

# report_table RECORD PREVIOUS: the entries of RECORD by kind, longest first,
# each with the previous record's figure for the same entry.
report_table() {
	awk -F '\t' -v prev="$2" '
		BEGIN { if (prev != "") while ((getline l < prev) > 0) { split(l, f, "\t"); before[f[1] "\t" f[2]] = f[3] } }
		{ kind[NR] = $1; name[NR] = $2; secs[NR] = $3; status[NR] = $4; total[$1] += $3 }
		END {
			n = split("total stage tool package test", kinds, " ")
			for (k = 1; k <= n; k++) {
				if (!(kinds[k] in total)) continue
				printf "\n%s (sum %.0f s)\n", kinds[k], total[kinds[k]]
				# Longest first: a selection sort keeps this awk POSIX.
				m = 0
				for (i = 1; i <= NR; i++) if (kind[i] == kinds[k]) order[++m] = i
				for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
					if (secs[order[j]] + 0 > secs[order[i]] + 0) { x = order[i]; order[i] = order[j]; order[j] = x }
				for (i = 1; i <= m; i++) {
					e = order[i]; key = kind[e] "\t" name[e]
					was = (key in before) ? sprintf("%8.1f", before[key]) : "       -"
					printf "  %8.1f %s  %-4s %s\n", secs[e], was, (status[e] == 0 ? "" : "FAIL"), name[e]
				}
			}
		}' "$1"
}

# add_slowest_tests: the top-level tests of RAY_OPERATOR_TEST_JSON's gotestsum
# records that took 20 s or more, as test entries ("<package> <test>").
add_slowest_tests() {
	local gotestsum=${RAY_OPERATOR_GOTESTSUM:-} dir=${RAY_OPERATOR_TEST_JSON:-} f
	[[ -n "$gotestsum" && -x "$gotestsum" && -d "$dir" ]] || return 0
	for f in "$dir"/*.json; do
		[[ -s "$f" ]] || continue
		"$gotestsum" tool slowest --jsonfile "$f" --threshold 20s |
			awk 'NF == 3 && $2 !~ /\// {
				# A Go duration: 25.1s, 1m30.2s, 1h2m0s.
				d = $3; t = 0
				while (match(d, /^[0-9.]+(h|ms|m|s)/)) {
					v = substr(d, 1, RLENGTH); d = substr(d, RLENGTH + 1)
					u = v; sub(/^[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
					t += v * (u == "h" ? 3600 : u == "m" ? 60 : u == "s" ? 1 : 0.001)
				}
				printf "test\t%s %s\t%.1f\t0\n", $1, $2, t
			}' >>"$record" || true
	done
}

cmd_report() {
	[[ -n "$record" && -f "$record" ]] || { echo "timings: no record (RAY_OPERATOR_TIMINGS)" >&2; return 0; }
	[[ -s "$record.start" ]] && add total "make test" "$(elapsed "$(cat "$record.start")")" 0
	add_slowest_tests
	mkdir -p "$history" .cache
	local previous
	previous=$(ls -1 "$history"/*.tsv 2>/dev/null | sort | tail -n 1 || true)
	local commit
	commit=$(git rev-parse --short HEAD 2>/dev/null || echo none)
	local saved
	saved="$history/$(date -u +%Y%m%dT%H%M%SZ)-$commit.tsv"
	{
		echo "== Where make test's time went (seconds; beside it the previous run's, $(basename "${previous:-none}"))"
		echo "   record: $saved"
		report_table "$record" "$previous"
	} | tee .cache/test-times.txt
	cp "$record" "$saved"
}

# json_failures FILE: the failed tests of one gotestsum record (leaves only:
# a parent that failed because a subtest did adds nothing), each with up to
# three of its output lines that look like an error (else its last logged
# line), and the packages that
# failed with no failed test (a build failure, a panic, the -timeout).
json_failures() {
	awk '
		function field(name,   v) {
			if (!match($0, "\"" name "\":\"([^\"\\\\]|\\\\.)*\"")) return ""
			v = substr($0, RSTART + length(name) + 4, RLENGTH - length(name) - 5)
			gsub(/\\t/, " ", v); gsub(/\\n/, "", v); gsub(/\\"/, "\"", v); gsub(/  +/, " ", v)
			sub(/^ /, "", v)
			return v
		}
		function errorish(line) {
			return line ~ /^(panic: |--- FAIL|FAIL)/ || (line ~ /\.go:[0-9]+: / && tolower(line) ~ /(error|fail|timed out|timeout|deadline|never|unexpected|want|expected|not |refused|missing)/)
		}
		{
			action = field("Action"); pkg = field("Package"); test = field("Test")
			if (action == "output") {
				out = field("Output")
				if (test == "" ) { if (out ~ /^(panic: |FAIL|# |.*\.go:[0-9]+:[0-9]+: )/ && npkg[pkg] < 3) pkgmsg[pkg, ++npkg[pkg]] = out }
				else if (out !~ /^--- FAIL/ && errorish(out)) { if (nmsg[pkg, test] < 3) msg[pkg, test, ++nmsg[pkg, test]] = out }
				else if (out ~ /\.go:[0-9]+: /) lastlog[pkg, test] = out
				if (out ~ /^panic: test timed out/) { timedout[pkg] = out; running[pkg] = "" }
				else if (timedout[pkg] != "" && out ~ /^Test[^ ]* \(/) running[pkg] = running[pkg] " " out
			}
			if (action == "fail") {
				if (test != "") { failed[++nf] = pkg SUBSEP test; failedin[pkg]++ }
				else pkgfail[++np] = pkg
			}
		}
		END {
			for (i = 1; i <= nf; i++) {
				split(failed[i], pt, SUBSEP); leaf = 1
				for (j = 1; j <= nf; j++) {
					split(failed[j], q, SUBSEP)
					if (q[1] == pt[1] && index(q[2], pt[2] "/") == 1) leaf = 0
				}
				if (!leaf) continue
				printf "  FAIL %s %s\n", pt[1], pt[2]
				for (k = 1; k <= nmsg[pt[1], pt[2]]; k++) printf "       %s\n", substr(msg[pt[1], pt[2], k], 1, 240)
				if (!nmsg[pt[1], pt[2]] && lastlog[pt[1], pt[2]] != "") printf "       %s\n", substr(lastlog[pt[1], pt[2]], 1, 240)
			}
			for (i = 1; i <= np; i++) {
				p = pkgfail[i]
				if (timedout[p] != "") { printf "  FAIL %s: %s; running:%s\n", p, timedout[p], substr(running[p], 1, 200); continue }
				if (failedin[p]) continue
				printf "  FAIL %s (no test failed)\n", p
				for (k = 1; k <= npkg[p]; k++) printf "       %s\n", substr(pkgmsg[p, k], 1, 240)
			}
		}' "$1"
}

# cmd_failures: what failed, from the record (stages) and the gotestsum
# records (packages and tests); nothing when all passed.
cmd_failures() {
	local out="" dir=${RAY_OPERATOR_TEST_JSON:-} f
	if [[ -n "$record" && -f "$record" ]]; then
		out=$(awk -F '\t' '$1 == "stage" && $4 != 0 { printf "  stage %s: exit %s\n", $2, $4 }' "$record")
	fi
	if [[ -d "$dir" ]]; then
		for f in "$dir"/*.json; do
			[[ -s "$f" ]] || continue
			out+=$'\n'$(json_failures "$f")
		done
	fi
	out=$(grep -v '^$' <<<"$out" || true)
	[[ -n "$out" ]] || return 0
	echo "== What failed (each test's whole output: the records named above)"
	echo "$out"
}

case "${1:-}" in
begin)
	[[ -n "$record" ]] || { echo "timings: RAY_OPERATOR_TIMINGS is not set" >&2; exit 2; }
	mkdir -p "$(dirname "$record")"
	: >"$record"
	now >"$record.start"
	;;
run) shift && cmd_run "$@" ;;
gotest) cmd_gotest ;;
report) cmd_report ;;
failures) cmd_failures ;;
*)
	echo "usage: timings.sh begin | run KIND NAME -- CMD ... | gotest | report | failures" >&2
	exit 2
	;;
esac
