#!/usr/bin/env bash
# Replays the fuzz harnesses' seed corpora and every past crash input (tests/fuzz/corpus/NAME,
# tests/fuzz/crashes/NAME) through build/tests/fuzz/replay_NAME: one case per harness, which
# fails on a crash, a sanitizer report (in the build-san pass) or a missing input.
. "$(dirname "$0")/e2e_lib.sh"
BUILD=${BUILD:-build}
for f in tests/fuzz/fuzz_*.c; do
	n=${f#tests/fuzz/fuzz_}; n=${n%.c}
	want=$(find "tests/fuzz/corpus/$n" "tests/fuzz/crashes/$n" -type f ! -name '.*' | wc -l)
	expect_exit 0 "replay-$n" "$BUILD/tests/fuzz/replay_$n" "tests/fuzz/corpus/$n" "tests/fuzz/crashes/$n"
	grep -qx "replay: $want inputs" "$E2E_TMP/stdout" && [ "$want" -gt 0 ] && ok "replay-$n-count" \
		|| fail "replay-$n-count" "$(cat "$E2E_TMP/stdout"), expected $want"
done
e2e_done
