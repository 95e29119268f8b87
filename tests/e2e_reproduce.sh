#!/usr/bin/env bash
# Smoke test of analysis/reproduce_bucketserve.sh --quick: it runs every experiment shape,
# writes its tables and the ratio summary, and is deterministic apart from the wall-clock
# overhead table.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
expect_exit 0 reproduce-quick analysis/reproduce_bucketserve.sh --quick -o "$T/r1" "$BUCKETSIM"
for f in offline_batch.csv uellm_sensitivity.csv online_rate.csv overhead_buckets.csv summary.md; do
	[ -s "$T/r1/$f" ] && ok "reproduce-$f" || fail "reproduce-$f" "missing"
done
grep -q '^| 3.58x |' "$T/r1/summary.md" && ok reproduce-ratios || fail reproduce-ratios "no ratio table"
# The prefill batch size each offline run used (its configuration echo): in the sweep "own" the
# disaggregated presets' server.max_num_prefill_seqs=16 (policies/presets.c: the largest batch a
# warmed pass holds, 2048 / 128) and vllm-gaudi's default 1 for the colocated vllm and uellm; in
# the sweep "8" every system at 8.  3 batch sizes x 5 systems x (3 datasets + 1) = 60 rows.
awk -F, 'NR == 1 { ok = $2 == "sweep" && $3 == "prefill_seqs" && $5 == "system"; next }
	{ n++; want = $2 == "8" ? 8 : ($5 == "vllm" || $5 == "uellm") ? 1 : 16
	  if ($2 != "own" && $2 != "8" || $3 != want) ok = 0 }
	END { exit !(ok && n == 60) }' "$T/r1/offline_batch.csv" && ok reproduce-prefill-seqs ||
	fail reproduce-prefill-seqs "offline runs not at the expected max_num_prefill_seqs"
expect_exit 0 reproduce-again analysis/reproduce_bucketserve.sh --quick -o "$T/r2" "$BUCKETSIM"
for f in offline_batch.csv uellm_sensitivity.csv online_rate.csv; do
	cmp -s "$T/r1/$f" "$T/r2/$f" && ok "reproduce-same-$f" || fail "reproduce-same-$f" "differs"
done
expect_exit 2 reproduce-bad-testbed analysis/reproduce_bucketserve.sh --quick --testbed h100 -o "$T/r4" "$BUCKETSIM"
expect_stderr reproduce-bad-testbed-msg "unknown testbed 'h100' \\(a100, gaudi2, gaudi3\\)"
expect_exit 2 reproduce-testbed-no-value analysis/reproduce_bucketserve.sh --testbed
expect_exit 2 gap-bad-testbed analysis/online_gap.sh --quick --testbed gaudi3 -o "$T/g1" "$BUCKETSIM"
grep -q 'gaudi2 (default) or gaudi3' "$(dirname "$0")/../analysis/reproduce_bucketserve.sh" && \
	analysis/reproduce_bucketserve.sh --help | grep -q -- '--testbed' && ok reproduce-help-testbed || fail reproduce-help-testbed "no --testbed in --help"
expect_exit 1 reproduce-failing-binary analysis/reproduce_bucketserve.sh --quick -o "$T/r3" /bin/false
e2e_done
