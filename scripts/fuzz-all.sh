#!/bin/sh
# fuzz-all.sh runs every Fuzz target of the module, one after another,
# each for the given time (default 30s), with -fuzzminimizetime set so
# that the time goes to fuzzing rather than to minimizing new inputs.
#
#   scripts/fuzz-all.sh 30s                 # every target for 30 s
#   scripts/fuzz-all.sh 20s ./server/ ./llm/ # only the targets of these packages
#
# Environment: FUZZ_MINIMIZE (default 5s) is each -fuzzminimizetime,
# FUZZ_PARALLEL (default: the number of cores) each -parallel, FUZZ_OUT
# (default fuzz-results) the folder for the logs and results.tsv, a line
# per target: package, target, time, executions, result (ok, FAIL, or
# SKIP for a target that skipped itself: those needing ../shared/data
# find it beside the repository or at TOOLENV_SHARED_DATA). A crash leaves
# its input in the package's testdata/fuzz/<target>/ (commit it as a
# regression test once fixed) and its log in FUZZ_OUT; the script goes on
# with the next target and exits 1 at the end if any target failed.
#
# Go 1.26's fuzzing coordinator can fail a target with a bare "context
# deadline exceeded" as -fuzztime ends, having found nothing and written
# no input (golang/go#75804, fixed in Go 1.27). A target failing so is run
# once more for the same time: if that passes it is reported RERUN, with
# both logs kept, and does not fail the script; any other failure, or a
# second one, is FAIL.
set -u
cd "$(dirname "$0")/.." || exit 2
time=${1:-30s}
[ $# -gt 0 ] && shift
minimize=${FUZZ_MINIMIZE:-5s}
parallel=${FUZZ_PARALLEL:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)}
out=${FUZZ_OUT:-fuzz-results}
mkdir -p "$out"
results="$out/results.tsv"
printf 'package\ttarget\ttime\texecs\tresult\n' >"$results"

# Targets: "pkg name" lines, from the test files' func Fuzz declarations.
if [ $# -gt 0 ]; then
	dirs=$(for p in "$@"; do echo "${p%/}"; done)
else
	dirs=$(find . -name '*_test.go' -not -path './.git/*' -exec grep -l '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' {} + | xargs -n1 dirname | sort -u)
fi
targets=$(for d in $dirs; do
	grep -ho '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' "$d"/*_test.go 2>/dev/null | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/' | sort -u | sed "s|^|$d |"
done)
n=$(echo "$targets" | grep -c .)

# coordinator_race: the log ends in the fuzzing coordinator's own deadline
# error with no failing input written and no other failure reported.
coordinator_race() {
	grep -q '^    context deadline exceeded$' "$1" &&
		! grep -q 'Failing input written' "$1" &&
		[ "$(grep -c '^    ' "$1")" -eq 1 ]
}
echo "fuzz-all: $n targets, $time each (-fuzzminimizetime $minimize, -parallel $parallel); logs in $out/"
i=0
echo "$targets" | while read -r pkg name; do
	[ -n "$name" ] || continue
	i=$((i + 1))
	log="$out/$(echo "$pkg" | sed 's|^\./||; s|^\.$|root|; s|/|_|g')-$name.log"
	printf '[%d/%d] %s %s ... ' "$i" "$n" "$pkg" "$name"
	if go test -run '^$' -fuzz "^$name\$" -fuzztime "$time" -fuzzminimizetime "$minimize" -parallel "$parallel" "$pkg" >"$log" 2>&1; then
		result=ok
	elif coordinator_race "$log"; then
		mv "$log" "$log.race"
		if go test -run '^$' -fuzz "^$name\$" -fuzztime "$time" -fuzzminimizetime "$minimize" -parallel "$parallel" "$pkg" >"$log" 2>&1; then
			result=RERUN # the first run hit the coordinator's deadline race (log .race); this one ran clean
		else
			result=FAIL
		fi
	else
		result=FAIL
	fi
	execs=$(grep -o 'execs: [0-9]*' "$log" | tail -1 | sed 's/execs: //')
	if [ "$result" = ok ] && [ -z "$execs" ]; then
		result=SKIP # the target skipped itself (a target needing ../shared/data without it): see the log
	fi
	echo "$result (${execs:-0} execs)"
	printf '%s\t%s\t%s\t%s\t%s\n' "${pkg#./}" "$name" "$time" "${execs:-0}" "$result" >>"$results"
done
if grep -q 'FAIL$' "$results"; then
	echo "fuzz-all: failures:"
	grep 'FAIL$' "$results"
	exit 1
fi
if grep -q 'RERUN$' "$results"; then
	echo "fuzz-all: ran clean on a second run after Go's coordinator deadline race (golang/go#75804; first logs kept as .race):"
	grep 'RERUN$' "$results"
fi
if grep -q 'SKIP$' "$results"; then
	echo "fuzz-all: skipped (no ../shared/data? set TOOLENV_SHARED_DATA):"
	grep 'SKIP$' "$results"
fi
echo "fuzz-all: no target failed; results in $results"
