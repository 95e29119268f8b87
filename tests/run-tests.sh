#!/usr/bin/env bash
# Runs every unit suite (build/tests/check_*) and the end-to-end tests, then prints one closing
# line "N passed, N failed" (suites and end-to-end cases counted together by test).
set -u
BUILD=${BUILD:-build}
export BUCKETSIM=${BUCKETSIM:-$BUILD/bucketsim}
export LC_ALL=C
passed=0; failed=0
for t in "$BUILD"/tests/check_*; do
	[ -x "$t" ] || continue
	case "$t" in *.d|*.o) continue;; esac
	errf=$(mktemp); out=$("$t" 2>"$errf"); rc=$?
	echo "$out" | grep -E '^[0-9]+%: Checks' | sed "s|^|$(basename "$t"): |"
	line=$(echo "$out" | grep -E '^[0-9]+%: Checks' | tail -n 1)
	n=$(echo "$line" | sed -n 's/.*Checks: \([0-9]*\).*/\1/p'); n=${n:-0}
	f=$(echo "$line" | sed -n 's/.*Failures: \([0-9]*\).*/\1/p'); f=${f:-0}
	e=$(echo "$line" | sed -n 's/.*Errors: \([0-9]*\).*/\1/p'); e=${e:-0}
	if [ $rc -ne 0 ] && [ $((f + e)) -eq 0 ]; then e=1; fi
	[ $rc -ne 0 ] && { echo "$out" | grep -vE '^[0-9]+%: Checks|^Running suite' | head -n 40; head -n 20 "$errf"; }
	rm -f "$errf"
	passed=$((passed + n - f - e)); failed=$((failed + f + e))
done
# End-to-end scripts: each prints "e2e: N passed, N failed" as its last matching line.
for e in tests/e2e_*.sh; do
	[ -x "$e" ] || continue
	out=$("$e" 2>&1); rc=$?
	echo "$out" | grep -E '^(FAIL|e2e:)' | sed "s|^|$(basename "$e"): |"
	p=$(echo "$out" | sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' | tail -n 1); p=${p:-0}
	f=$(echo "$out" | sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' | tail -n 1); f=${f:-0}
	if [ $rc -ne 0 ] && [ "$f" -eq 0 ]; then f=1; echo "$out" | tail -n 20; fi
	passed=$((passed + p)); failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
