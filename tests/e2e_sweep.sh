#!/usr/bin/env bash
# End-to-end tests of `bucketsim sweep`: grid order, seeds, agreement with `run`, metrics
# selection, determinism, errors before any output.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM

expect_exit 0 sweep "$B" sweep --trace alpaca --set workload.num_requests=300 \
	--grid bucketing.strategy=exponential,none --grid workload.rate=2,20 --seeds 2 -o "$T/s.csv"
[ "$(wc -l < "$T/s.csv")" -eq 9 ] && ok sweep-rows || fail sweep-rows "$(wc -l < "$T/s.csv") lines"
head -1 "$T/s.csv" | grep -q '^bucketing.strategy,workload.rate,seed,completed,request_throughput,' && ok sweep-header || fail sweep-header "$(head -1 "$T/s.csv")"
order=$(tail -n +2 "$T/s.csv" | cut -d, -f1-3 | tr '\n' ' ')
want="exponential,2,1 exponential,2,2 exponential,20,1 exponential,20,2 none,2,1 none,2,2 none,20,1 none,20,2 "
[ "$order" = "$want" ] && ok sweep-order || fail sweep-order "$order"
# A sweep row equals the same configuration run alone.
expect_exit 0 run-point "$B" run --trace alpaca --set workload.num_requests=300 \
	--set bucketing.strategy=none --set workload.rate=20 --seed 2 -o "$T/r"
mean=$(sed -n 's/^[[:space:]]*"mean_ttft_ms":[[:space:]]*\([^,]*\),$/\1/p' "$T/r/summary.json")
row=$(grep '^none,20,2,' "$T/s.csv" | cut -d, -f8)
awk -v a="$mean" -v b="$row" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(d <= 1e-6 * a)}' \
	&& ok sweep-equals-run || fail sweep-equals-run "run $mean, sweep $row"
expect_exit 0 sweep-again "$B" sweep --trace alpaca --set workload.num_requests=300 \
	--grid bucketing.strategy=exponential,none --grid workload.rate=2,20 --seeds 2 -o "$T/s2.csv"
cmp -s "$T/s.csv" "$T/s2.csv" && ok sweep-deterministic || fail sweep-deterministic "differs"
expect_exit 0 sweep-metrics "$B" sweep --set workload.num_requests=100 --metrics completed,preemptions
[ "$(cat "$T/stdout")" = "$(printf 'seed,completed,preemptions\n1,100,0')" ] && ok sweep-metrics-out || fail sweep-metrics-out "$(cat "$T/stdout")"
# Errors: nothing written.
expect_exit 2 sweep-bad-value "$B" sweep --grid workload.rate=1,x -o "$T/bad.csv"
[ ! -e "$T/bad.csv" ] && ok sweep-bad-clean || fail sweep-bad-clean "file written"
expect_exit 2 sweep-bad-metric "$B" sweep --set workload.num_requests=10 --metrics nope -o "$T/bad2.csv"
[ ! -e "$T/bad2.csv" ] && ok sweep-metric-clean || fail sweep-metric-clean "file written"
expect_exit 2 sweep-bad-grid "$B" sweep --grid novalue
expect_exit 3 sweep-run-fails "$B" sweep --grid server.max_num_seqs=8,4096 -o "$T/bad3.csv"
[ ! -e "$T/bad3.csv" ] && ok sweep-fail-clean || fail sweep-fail-clean "file written"
expect_exit 0 sweep-help "$B" sweep --help
e2e_done
