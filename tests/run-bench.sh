#!/usr/bin/env bash
# Benchmarks (figures, not timed tests).  Prints requests simulated per wall-second, events per
# second and peak memory for a 1,000,000-request run of short Alpaca-like requests with Poisson
# arrivals at a load the server sustains, with and without per-request output.
set -eu
B=${BUCKETSIM:-build/bucketsim}
OUT=$(mktemp -d /tmp/bucketsim-bench.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
common=(--trace alpaca --set workload.lengths=empirical --set workload.num_requests=1000000
	--set workload.arrival=poisson --set workload.rate=20 --seed 1 --no-batches -q --perf)
echo "bench: 1,000,000 Alpaca-like requests (empirical lengths), Poisson 20 req/s, llama-3.1-8b on gaudi2"
for strat in exponential none; do
	echo "- bucketing.strategy=$strat, no per-request output:"
	"$B" run "${common[@]}" --set bucketing.strategy=$strat --set output.requests=false -o "$OUT/r" 2>&1 | sed 's/^/    /'
done
echo "- exponential, with requests.csv:"
"$B" run "${common[@]}" -o "$OUT/r" 2>&1 | sed 's/^/    /'
echo "- utilisation of that run (sustained load check):"
grep -E '"(utilization|completed|mean_ttft_ms|simulated_s)"' "$OUT/r/summary.json" | sed 's/^/    /'
echo "- overloaded server (queue grows): Poisson 60 req/s, max_num_seqs 64, no per-request output:"
"$B" run --trace alpaca --set workload.lengths=empirical --set workload.num_requests=1000000 \
	--set workload.arrival=poisson --set workload.rate=60 --set server.max_num_seqs=64 \
	--set output.requests=false --no-batches -q --perf -o "$OUT/b" 2>&1 | sed 's/^/    /'
grep -E '"(utilization|mean_ttft_ms)"' "$OUT/b/summary.json" | sed 's/^/    /'
