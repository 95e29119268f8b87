#!/usr/bin/env bash
# The BucketServe paper's online gain (1.93x server RPS at 80% SLO attainment on Mixed over
# DistServe) under candidate explanations: each variant sweeps the Poisson client rate for
# bucketserve and distserve on Mixed (alpaca:0.8,longbench:0.2, Llama-2-13B, 4 cards) and
# reports, per system, the client rate and the server RPS at which SLO attainment crosses 80%
# (linear interpolation between the sweep's points), and their ratios.  See analysis/reproduce.md.
#
# usage: analysis/online_gap.sh [--quick] [--testbed T] [-o OUTDIR] [BUCKETSIM]
#   --quick     fewer rates and requests; same seeds
#   --testbed   gaudi2 (default) or a100, as analysis/reproduce_bucketserve.sh sets them up
#   -o OUTDIR   output directory (default: gap-out, or gap-quick with --quick)
# Writes OUTDIR/online_gap.csv (every run) and OUTDIR/online_gap.md (the table).
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/study_lib.sh"
study_testbed online_gap "a100 gaudi2" "$@"
study_args online_gap 11 gap-out gap-quick ${ARGS[@]+"${ARGS[@]}"}

if [ $QUICK = 1 ]; then N=300; RATES="1 2 3 4 6 8 10 12 16"; else N=1000; RATES="1 2 3 4 5 6 7 8 9 10 12 14 16"; fi
study_hardware online_gap
COMMON=(--set model=llama-2-13b "${HW[@]}" --set workload.truncate=true
	--set workload.mix=alpaca:0.8,longbench:0.2 --set cluster.cards=4 --seed 1
	--set workload.arrival=poisson --set workload.num_requests=$N)
SLO=(--set slo.ttft_ms=1000 --set slo.tpot_ms=100)

# variant NAME | bucketserve's extra keys | distserve's extra keys   (one per line; keys
# separated by spaces).  SLO keys here replace the default SLO above.
VARIANTS=$(cat <<'EOF'
base (padded prefill batches in both)|--set scheduler.batching=prefill_batch|--set scheduler.batching=prefill_batch
gaudi_passes (Gaudi's one-prompt prefill passes in both)|--set scheduler.batching=memory_safe --set server.max_num_prefill_seqs=1|--set scheduler.batching=continuous --set server.max_num_prefill_seqs=1
distserve_continuous (DistServe batches its prefills as vLLM: token budget, chunks)|--set scheduler.batching=prefill_batch|--set scheduler.batching=continuous
distserve_1p3d (DistServe placed as 1 prefill + 3 decode instances)|--set scheduler.batching=prefill_batch|--set scheduler.batching=prefill_batch --set cluster.prefill_instances=1
distserve_3p1d (DistServe placed as 3 prefill + 1 decode instances)|--set scheduler.batching=prefill_batch|--set scheduler.batching=prefill_batch --set cluster.prefill_instances=3
slo_ttft_only (SLO on TTFT <= 1 s alone)|--set scheduler.batching=prefill_batch --set slo.tpot_ms=1000000|--set scheduler.batching=prefill_batch --set slo.tpot_ms=1000000
slo_loose (TTFT <= 5 s, TPOT <= 200 ms)|--set scheduler.batching=prefill_batch --set slo.ttft_ms=5000 --set slo.tpot_ms=200|--set scheduler.batching=prefill_batch --set slo.ttft_ms=5000 --set slo.tpot_ms=200
EOF
)

csv=$OUT/online_gap.csv
echo "variant,system,client_rps,server_rps,slo_attainment" >"$csv"
NRUNS=0
while IFS='|' read -r name bx dx; do
	v=${name%% *}
	for sys in bucketserve distserve; do
		extra=$bx; [ $sys = distserve ] && extra=$dx
		for r in $RATES; do
			# The variant's SLO keys come last, so they override the default SLO.
			m=$(study_metrics online_gap "$BIN" run --preset $sys "${COMMON[@]}" "${SLO[@]}" \
				--set workload.rate=$r $extra --json) || exit 1
			NRUNS=$((NRUNS + 1))
			echo "$v,$sys,$r,$(echo "$m" | study_get request_throughput),$(echo "$m" | study_get slo_attainment)" >>"$csv"
		done
	done
done <<<"$VARIANTS"

{
echo "# The online gap: rate at 80% SLO attainment, Mixed, $TESTBED, $N requests per run, seed 1"
echo
echo "client = the Poisson client rate (req/s) at which attainment crosses 0.8; server = the"
echo "served rate (request_throughput) there; '>' never below 0.8 in the sweep ($RATES req/s),"
echo "'<' below 0.8 at the lowest rate."
echo
awk -F, -v vars="$VARIANTS" '
	function cross(k, col,   i, f) {
		if (att[k, 1] < 0.8) return sprintf("<%.2f", v[k, 1, col])
		for (i = 2; i <= n[k]; i++) if (att[k, i] < 0.8) break
		if (i > n[k]) return sprintf(">%.2f", v[k, n[k], col])
		f = (att[k, i - 1] - 0.8) / (att[k, i - 1] - att[k, i])
		return sprintf("%.2f", v[k, i - 1, col] + f * (v[k, i, col] - v[k, i - 1, col])) }
	function ratio(a, b) { return (a ~ /^[<>]/ || b ~ /^[<>]/ || b + 0 == 0) ? "n/a" : sprintf("%.2fx", a / b) }
	NR > 1 { k = $1 SUBSEP $2; i = ++n[k]; v[k, i, 1] = $3; v[k, i, 2] = $4; att[k, i] = $5 }
	END {
		print "| variant | bucketserve client | distserve client | ratio | bucketserve server | distserve server | ratio |"
		print "|---|---:|---:|---:|---:|---:|---:|"
		nv = split(vars, L, "\n")
		for (j = 1; j <= nv; j++) { split(L[j], F, "|"); name = F[1]; split(name, W, " "); x = W[1]
			bc = cross(x SUBSEP "bucketserve", 1); dc = cross(x SUBSEP "distserve", 1)
			bs = cross(x SUBSEP "bucketserve", 2); ds = cross(x SUBSEP "distserve", 2)
			printf "| %s | %s | %s | %s | %s | %s | %s |\n", name, bc, dc, ratio(bc, dc), bs, ds, ratio(bs, ds) } }' "$csv"
echo
echo "$NRUNS runs."
} >"$OUT/online_gap.md"
cat "$OUT/online_gap.md"
