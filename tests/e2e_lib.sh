# Shared helpers for the end-to-end scripts (sourced, not run).
#   BUCKETSIM   the binary under test (default build/bucketsim)
# Each script calls `ok NAME` / `fail NAME WHY` (or `expect_exit CODE NAME -- CMD...`) and
# finally `e2e_done`, which prints "e2e: N passed, N failed" and sets the exit status.
BUCKETSIM=${BUCKETSIM:-build/bucketsim}
export LC_ALL=C
E2E_PASS=0
E2E_FAIL=0
E2E_TMP=$(mktemp -d /tmp/bucketsim-e2e.XXXXXX)
trap 'rm -rf "$E2E_TMP"' EXIT
ok() { E2E_PASS=$((E2E_PASS + 1)); }
fail() { E2E_FAIL=$((E2E_FAIL + 1)); echo "FAIL $1: $2"; }
# expect_exit CODE NAME CMD...: runs CMD, checks its exit code; stderr kept in $E2E_TMP/stderr.
expect_exit() {
	local want=$1 name=$2; shift 2
	"$@" >"$E2E_TMP/stdout" 2>"$E2E_TMP/stderr"; local rc=$?
	if [ "$rc" -eq "$want" ]; then ok "$name"; else fail "$name" "exit $rc, expected $want: $(head -c 300 "$E2E_TMP/stderr")"; fi
}
# expect_stderr NAME PATTERN: the last command's stderr matches the grep -E pattern.
expect_stderr() {
	if grep -qE -- "$2" "$E2E_TMP/stderr"; then ok "$1"; else fail "$1" "stderr lacks /$2/: $(head -c 300 "$E2E_TMP/stderr")"; fi
}
e2e_done() {
	echo "e2e: $E2E_PASS passed, $E2E_FAIL failed"
	[ "$E2E_FAIL" -eq 0 ]
}
