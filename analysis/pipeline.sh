#!/usr/bin/env bash
# Compares the vLLM V1 pipeline-parallelism RFC's three engine loops (async, atomic, virtual)
# with bucketsim: Llama-2-70B bf16 on Gaudi 2 (tp 1), cluster.pp 2 and 4, on Alpaca and on Mixed
# (alpaca:0.8,longbench:0.2, LongBench cut to the 4096-token context), at a low load (0.2 x) and
# near capacity (0.9 x the async loop's capacity at that pp and workload, `bucketsim capacity`:
# the highest Poisson rate with SLO attainment >= 0.9).  Also: the async loop's prefill chunks
# in several microbatches (cluster.async_prefill_chunks) on long prompts (LongBench), and the
# atomic loop without empty microbatches (cluster.atomic_empty_microbatches=false), and the
# virtual engines' KV fragmentation under a small KV cache (server.num_kv_blocks 160 and 240,
# Mixed near capacity).  Writes loops.csv, chunks.csv, kv.csv and summary.md into OUTDIR.  Uses only bash, awk and the bucketsim
# binary.  See analysis/pipeline.md.
#
# usage: analysis/pipeline.sh [--quick] [-o OUTDIR] [BUCKETSIM]
#   --quick     fewer requests (seconds); same seeds
#   -o OUTDIR   output directory (default: pipeline-out, or pipeline-quick with --quick)
#   BUCKETSIM   the binary (default: build/bucketsim next to this script's parent)
# Exit status: 0 when every run succeeded, 1 when a run failed, 2 on a usage error.
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/study_lib.sh"
study_args pipeline 17 pipeline-out pipeline-quick "$@"

# ---- configuration ------------------------------------------------------------------------
SEED=1
if [ $QUICK = 1 ]; then N=300; N_CAP=200; N_LONG=60; else N=3000; N_CAP=1500; N_LONG=400; fi
COMMON=(--set model=llama-2-70b --set hardware=gaudi2 --set hardware.tp=1
	--set workload.truncate=true --set slo.ttft_ms=5000 --set slo.tpot_ms=200 --seed $SEED)
mixof() {
	case "$1" in
	alpaca) echo alpaca:1 ;;
	mixed) echo alpaca:0.8,longbench:0.2 ;;
	longbench) echo longbench:1 ;;
	esac
}

# run ARGS... : one simulation; prints its metrics as "key value" lines.
run() {
	local cmd=("$BIN" run "${COMMON[@]}" "$@" --json)
	study_metrics pipeline "${cmd[@]}"
}
get() { study_get "$1"; }

# capacity PP WORKLOAD: the async loop's capacity in req/s.
capacity() {
	local cmd=("$BIN" capacity "${COMMON[@]}" --set cluster.pp=$1 --set cluster.engine_loop=async
		   --set workload.mix=$(mixof $2) --set workload.num_requests=$N_CAP --tol 0.02)
	if ! "${cmd[@]}" >"$TMP/cap.txt" 2>"$TMP/err.txt"; then
		echo "pipeline: capacity failed: ${cmd[*]}" >&2
		cat "$TMP/err.txt" >&2
		exit 1
	fi
	awk '$1 == "config" { print $2 }' "$TMP/cap.txt"
}

COLS=(output_throughput median_ttft_ms p99_ttft_ms median_tpot_ms p99_tpot_ms
      pp_bubble_fraction_mean pp_empty_microbatches pp_lost_slots preemptions
      pp_kv_fragmented_preemptions pp_kv_free_elsewhere_blocks_mean)
row() { # metrics on stdin -> the COLS as CSV
	local m k line=
	m=$(cat)
	for k in "${COLS[@]}"; do line="$line,$(echo "$m" | get $k)"; done
	echo "${line#,}"
}

# ---- 1. the three loops ---------------------------------------------------------------------
csv=$OUT/loops.csv
echo "pp,workload,load,rate,loop,$(IFS=,; echo "${COLS[*]}")" >"$csv"
NRUNS=0
declare -A NEAR
for pp in 2 4; do
	for wl in alpaca mixed; do
		cap=$(capacity $pp $wl)
		NEAR[$pp$wl]=$(awk -v c="$cap" 'BEGIN { printf "%.4g", c * 0.9 }')
		echo "pipeline: pp $pp $wl: async capacity $cap req/s" >&2
		for load in low near; do
			f=$([ $load = low ] && echo 0.2 || echo 0.9)
			rate=$(awk -v c="$cap" -v f="$f" 'BEGIN { printf "%.4g", c * f }')
			for loop in async atomic virtual atomic-noempty; do
				extra=(--set cluster.engine_loop=${loop%-noempty})
				[ $loop = atomic-noempty ] && extra+=(--set cluster.atomic_empty_microbatches=false)
				m=$(run --set cluster.pp=$pp "${extra[@]}" --set workload.mix=$(mixof $wl) \
					--set workload.num_requests=$N --set workload.rate=$rate) || exit 1
				NRUNS=$((NRUNS + 1))
				echo "$pp,$wl,$load,$rate,$loop,$(echo "$m" | row)" >>"$csv"
			done
		done
	done
done

# ---- 2. prefill chunks in several microbatches: TTFT on long prompts -------------------------
ccsv=$OUT/chunks.csv
echo "pp,max_num_batched_tokens,rate,async_prefill_chunks,median_ttft_ms,p99_ttft_ms,median_tpot_ms,output_throughput,pp_bubble_fraction_mean" >"$ccsv"
for pp in 2 4; do
	for tok in 512 2048; do
		for ch in false true; do
			m=$(run --set cluster.pp=$pp --set cluster.engine_loop=async \
				--set cluster.async_prefill_chunks=$ch --set server.max_num_batched_tokens=$tok \
				--set workload.mix=longbench:1 --set workload.num_requests=$N_LONG \
				--set workload.rate=0.5) || exit 1
			NRUNS=$((NRUNS + 1))
			echo "$pp,$tok,0.5,$ch,$(echo "$m" | get median_ttft_ms),$(echo "$m" | get p99_ttft_ms),$(echo "$m" | get median_tpot_ms),$(echo "$m" | get output_throughput),$(echo "$m" | get pp_bubble_fraction_mean)" >>"$ccsv"
		done
	done
done

# ---- 3. KV fragmentation: a small KV cache, Mixed near capacity --------------------------------
kcsv=$OUT/kv.csv
echo "pp,num_kv_blocks,rate,loop,$(IFS=,; echo "${COLS[*]}")" >"$kcsv"
for pp in 2 4; do
	for kb in 160 240; do
		for loop in async virtual; do
			m=$(run --set cluster.pp=$pp --set cluster.engine_loop=$loop \
				--set server.num_kv_blocks=$kb --set workload.mix=$(mixof mixed) \
				--set workload.num_requests=$N --set workload.rate=${NEAR[${pp}mixed]}) || exit 1
			NRUNS=$((NRUNS + 1))
			echo "$pp,$kb,${NEAR[${pp}mixed]},$loop,$(echo "$m" | row)" >>"$kcsv"
		done
	done
done

# ---- summary.md -------------------------------------------------------------------------------
{
	echo "# Pipeline-parallel engine loops ($NRUNS runs, seed $SEED, $N requests a point)"
	echo
	echo "| pp | workload | load (req/s) | loop | tok/s | TTFT p50 / p99 ms | TPOT p50 / p99 ms | bubble | empty mb | lost slots | preempt | frag. preempt / free blocks elsewhere |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	awk -F, 'NR > 1 { printf "| %s | %s | %s %s | %s | %.0f | %.0f / %.0f | %.1f / %.1f | %.3f | %d | %d | %d | %d / %.0f |\n",
		$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 }' "$csv"
	echo
	echo "Long prompts (LongBench, 0.5 req/s), async loop with and without prefill chunks in several microbatches:"
	echo
	echo "| pp | max_num_batched_tokens | chunks in several microbatches | TTFT p50 / p99 ms | TPOT p50 ms | tok/s | bubble |"
	echo "|---|---|---|---|---|---|---|"
	awk -F, 'NR > 1 { printf "| %s | %s | %s | %.0f / %.0f | %.1f | %.1f | %.3f |\n", $1, $2, $4, $5, $6, $7, $8, $9 }' "$ccsv"
	echo
	echo "A small KV cache (Mixed, 0.9 x the async capacity at that pp):"
	echo
	echo "| pp | KV blocks | loop | tok/s | TTFT p50 / p99 ms | TPOT p50 / p99 ms | bubble | preempt | frag. preempt | free blocks elsewhere |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	awk -F, 'NR > 1 { printf "| %s | %s | %s | %.1f | %.0f / %.0f | %.1f / %.1f | %.3f | %d | %d | %.1f |\n",
		$1, $2, $4, $5, $6, $7, $8, $9, $10, $13, $14, $15 }' "$kcsv"
} >"$OUT/summary.md"
echo "pipeline: $NRUNS runs; wrote $csv, $ccsv, $kcsv and $OUT/summary.md" >&2
