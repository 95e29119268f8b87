#!/usr/bin/env bash
# Reproduces the shapes of the BucketServe paper's experiments (Section V: Fig. 5a-f, Fig. 6b)
# with bucketsim: Llama-2-13B on 4 cards, Alpaca, LongBench (truncated to the model's
# 4096-token context) and Mixed (alpaca:0.8,longbench:0.2).  Writes CSV tables and summary.md
# into OUTDIR.  Uses only bash, awk, sed and the bucketsim binary.  See analysis/reproduce.md.
#
# usage: analysis/reproduce_bucketserve.sh [--quick] [--testbed T] [-o OUTDIR] [BUCKETSIM]
#   --quick     fewer points and requests (minutes); same seeds
#   --testbed   gaudi2 (default) or gaudi3: Gaudi cards with vllm-gaudi's buckets and compiles;
#               a100: the paper's testbed, A100 SXM4 40 GB (profile a100-40gb) with every pass
#               run at its own shape (bucketing.strategy=none: a prefill batch is exactly
#               N x S_max, Eq. 1) and no compile cost (a GPU runs a new shape without
#               compiling); the profile with the compile terms set to 0 is written to OUTDIR
#   -o OUTDIR   output directory (default: repro-out, or repro-quick with --quick)
#   BUCKETSIM   the binary (default: build/bucketsim next to this script's parent)
# Exit status: 0 when every run succeeded, 1 when a run failed, 2 on a usage error.
set -euo pipefail
export LC_ALL=C

. "$(dirname "$0")/study_lib.sh"
study_testbed reproduce "a100 gaudi2 gaudi3" "$@"
study_args reproduce 15 repro-out repro-quick ${ARGS[@]+"${ARGS[@]}"}

# ---- configuration ------------------------------------------------------------------------
SEED=1
SLO_TTFT_MS=1000
SLO_TPOT_MS=100
MIXED=alpaca:0.8,longbench:0.2
if [ $QUICK = 1 ]; then
	N_OFF=200; N_ON=300; N_OVH=2000
	BATCHES="8 32 256"
	RATES_ALPACA="20 60 120"
	RATES_MIXED="2 4 6 8 12 16 24"
	NBUCKETS="1 4 32"
else
	N_OFF=4000; N_ON=8000; N_OVH=100000
	BATCHES="8 16 32 64 128 256"
	RATES_ALPACA="10 20 30 40 50 60 70 80 90 100 120 140"
	RATES_MIXED="2 4 6 8 10 12 14 16 18 20 24 28"
	NBUCKETS="1 2 4 8 16 32"
fi
# The testbed: the hardware and how passes run on it (analysis/study_lib.sh).
study_hardware reproduce
# Every run: the same model, chip and card count; LongBench prompts cut to the context.
COMMON=(--set model=llama-2-13b "${HW[@]}" --set hardware.tp=1
	--set workload.truncate=true --set slo.ttft_ms=$SLO_TTFT_MS --set slo.tpot_ms=$SLO_TPOT_MS
	--seed $SEED)
# 4 cards: colocated systems as 4 data-parallel instances, disaggregated ones as 2 prefill +
# 2 decode instances; tp = 1 everywhere.
topology() {
	case "$1" in
	vllm|uellm) echo "--set cluster.instances=4" ;;
	# The paper's prefill batches (the presets' default, with the presets' own
	# server.max_num_prefill_seqs: on Gaudi each batch within the warmed prompt grid of that many
	# prompts, on a100 whole prompts at their own shape: policies/README.md).
	*) echo "--set cluster.prefill_instances=2 --set cluster.decode_instances=2 --set scheduler.batching=prefill_batch" ;;
	esac
}
mixof() {
	case "$1" in
	alpaca) echo alpaca:1 ;;
	longbench) echo longbench:1 ;;
	mixed) echo $MIXED ;;
	esac
}

NRUNS=0
T_START=$SECONDS
# run PRESET ARGS... : one simulation; prints the metrics as "key value" lines on stdout.
# Exits the script (status 1) when bucketsim fails (it runs in a command substitution, so
# the caller counts it and exits too: "|| exit 1").
# Also prints "max_num_prefill_seqs V", the value the run used (its configuration echo).
run() {
	local preset=$1; shift
	local cmd=("$BIN" run --preset "$preset" "${COMMON[@]}" $(topology "$preset") "$@" --json)
	study_metrics reproduce "${cmd[@]}"
	awk '/"server.max_num_prefill_seqs":/ { v = $2; sub(/,$/, "", v); print "max_num_prefill_seqs", v }' "$TMP/out.json"
}
# get KEY < metrics
get() { study_get "$1"; }

# ---- 1. offline: throughput and utilisation vs max batch size (Fig. 5a/b) ------------------
# Two sweeps of server.max_num_prefill_seqs (the column prefill_seqs is the value each run used):
#   own  every system at its own: the disaggregated presets' (their prefill batches), vllm-gaudi's
#        default 1 for vllm and uellm (one prompt per prefill pass, as the real server runs);
#   8    every system at 8: the colocated ones merge up to 8 prompts into a padded pass within
#        the 2048-token budget, and on Gaudi the disaggregated batches stay within a grid of
#        8-prompt buckets (on a100 their batches do not depend on it).
OFF_SYSTEMS="bucketserve-offline bucketserve distserve uellm vllm"
off_csv=$OUT/offline_batch.csv
echo "dataset,sweep,prefill_seqs,max_num_seqs,system,completed,request_throughput,output_throughput,total_token_throughput,utilization,padding_waste_ratio,preemptions,bucket_splits" >"$off_csv"
offline_sweep() { # dataset sweep (own or a max_num_prefill_seqs for every system)
	local ds=$1 sw=$2 bs sys m extra
	for bs in $BATCHES; do
		for sys in $OFF_SYSTEMS; do
			extra=()
			# UELLM's static batches follow the swept batch size (its preset packs 10).
			[ $sys = uellm ] && extra=(--set scheduler.static_batch_size=$bs)
			[ $sw = own ] || extra+=(--set server.max_num_prefill_seqs=$sw)
			m=$(run $sys --set workload.mix=$(mixof $ds) --set workload.arrival=offline \
				--set workload.num_requests=$N_OFF --set server.max_num_seqs=$bs \
				${extra[@]+"${extra[@]}"}) || exit 1
			NRUNS=$((NRUNS + 1))
			echo "$ds,$sw,$(echo "$m" | get max_num_prefill_seqs),$bs,$sys,$(echo "$m" | get completed),$(echo "$m" | get request_throughput),$(echo "$m" | get output_throughput),$(echo "$m" | get total_token_throughput),$(echo "$m" | get utilization),$(echo "$m" | get padding_waste_ratio),$(echo "$m" | get preemptions),$(echo "$m" | get bucket_splits)" >>"$off_csv"
		done
	done
}
for ds in alpaca longbench mixed; do offline_sweep $ds own; done
# Every system with up to 8 prompts per prefill pass.
offline_sweep mixed 8
# UELLM's sensitivity to its batching rule (offline, max_num_seqs = the largest batch size):
# the preset (at most 10 per batch, Eq. 2 padding waste of the prompts <= 0.25), the swept
# batch size, and either without the padding bound.
sens_csv=$OUT/uellm_sensitivity.csv
echo "dataset,static_batch_size,static_max_waste,request_throughput,total_token_throughput,utilization" >"$sens_csv"
MAXBS=$(echo $BATCHES | awk '{ print $NF }')
for ds in alpaca mixed; do
	for sb in 10 $MAXBS; do
		for w in 0.25 1; do
			m=$(run uellm --set workload.mix=$(mixof $ds) --set workload.arrival=offline \
				--set workload.num_requests=$N_OFF --set server.max_num_seqs=$MAXBS \
				--set scheduler.static_batch_size=$sb --set scheduler.static_max_waste=$w) || exit 1
			NRUNS=$((NRUNS + 1))
			echo "$ds,$sb,$w,$(echo "$m" | get request_throughput),$(echo "$m" | get total_token_throughput),$(echo "$m" | get utilization)" >>"$sens_csv"
		done
	done
done
echo "reproduce: offline sweep done ($NRUNS runs, $((SECONDS - T_START)) s)" >&2

# ---- 2./3. online: SLO attainment and server RPS vs client RPS (Fig. 5c-f) -----------------
ON_SYSTEMS="bucketserve distserve uellm vllm"
on_csv=$OUT/online_rate.csv
echo "dataset,client_rps,system,completed,server_rps,slo_attainment,mean_ttft_ms,p99_ttft_ms,mean_tpot_ms,p99_tpot_ms,utilization,bucket_splits" >"$on_csv"
online_sweep() { # dataset rates...
	local ds=$1 r sys m; shift
	for r in "$@"; do
		for sys in $ON_SYSTEMS; do
			m=$(run $sys --set workload.mix=$(mixof $ds) --set workload.arrival=poisson \
				--set workload.rate=$r --set workload.num_requests=$N_ON) || exit 1
			NRUNS=$((NRUNS + 1))
			echo "$ds,$r,$sys,$(echo "$m" | get completed),$(echo "$m" | get request_throughput),$(echo "$m" | get slo_attainment),$(echo "$m" | get mean_ttft_ms),$(echo "$m" | get p99_ttft_ms),$(echo "$m" | get mean_tpot_ms),$(echo "$m" | get p99_tpot_ms),$(echo "$m" | get utilization),$(echo "$m" | get bucket_splits)" >>"$on_csv"
		done
	done
}
online_sweep alpaca $RATES_ALPACA
online_sweep mixed $RATES_MIXED
echo "reproduce: online sweep done ($NRUNS runs, $((SECONDS - T_START)) s)" >&2

# ---- 4. bucketing overhead vs number of buckets (Fig. 6b) ----------------------------------
ovh_csv=$OUT/overhead_buckets.csv
echo "buckets,boundaries,bucketing_s,pct_of_sim_wall,us_per_request,simulated_s,pct_of_simulated_time" >"$ovh_csv"
for k in $NBUCKETS adaptive; do
	if [ $k = adaptive ]; then
		grp=(--set scheduler.grouping=adaptive); bnd=adaptive
	else
		bnd=$(awk -v k=$k 'BEGIN { s = "0"; for (i = 1; i < k; i++) s = s "," int(4096 * i / k); print s ",max" }')
		grp=(--set scheduler.grouping=fixed --set scheduler.boundaries=$bnd)
	fi
	cmd=("$BIN" run --preset bucketserve "${COMMON[@]}" $(topology bucketserve) "${grp[@]}"
	     --set workload.mix=$MIXED --set workload.arrival=poisson --set workload.rate=12
	     --set workload.num_requests=$N_OVH --json --perf)
	NRUNS=$((NRUNS + 1))
	if ! "${cmd[@]}" >"$TMP/out.json" 2>"$TMP/perf.txt"; then
		echo "reproduce: run failed: ${cmd[*]}" >&2; cat "$TMP/perf.txt" >&2; exit 1
	fi
	sim_s=$(awk '/"simulated_s"/ { v = $2; sub(/,$/, "", v); print v }' "$TMP/out.json")
	line=$(awk '/bucketing overhead/ { print $4, $(NF - 5) }' "$TMP/perf.txt")
	[ -n "$line" ] || { echo "reproduce: no bucketing overhead line from ${cmd[*]}" >&2; exit 1; }
	set -- $line
	awk -v k=$k -v b="$bnd" -v s=$1 -v p=$2 -v n=$N_OVH -v sim=$sim_s 'BEGIN {
		sub(/%$/, "", p); gsub(/,/, " ", b)
		printf "%s,%s,%.6f,%.2f,%.3f,%.1f,%.2e\n", k, b, s, p, 1e6 * s / n, sim, 100 * s / sim }' >>"$ovh_csv"
done
echo "reproduce: overhead sweep done ($NRUNS runs, $((SECONDS - T_START)) s)" >&2

# ---- summary: the paper's ratios from the simulated results -------------------------------
sum=$OUT/summary.md
{
echo "# BucketServe experiments in bucketsim"
echo
echo "Llama-2-13B (bf16) on 4 cards of $HWDESC (tp = 1): colocated systems (vllm, uellm) as 4"
echo "instances, disaggregated ones (distserve, bucketserve*) as 2 prefill + 2 decode instances,"
echo "these with the paper's prefill batches (scheduler.batching=prefill_batch) at their presets'"
echo "server.max_num_prefill_seqs, the colocated ones at vllm-gaudi's default of one prompt per"
echo "prefill pass (except in the offline sweep with prefill_seqs 8)."
echo "Seed $SEED; offline runs $N_OFF requests (all at t = 0), online runs $N_ON Poisson requests;"
echo "SLO: TTFT <= $SLO_TTFT_MS ms and TPOT <= $SLO_TPOT_MS ms. Mixed = $MIXED; LongBench prompts"
echo "truncated to the 4096-token context. $([ $QUICK = 1 ] && echo '**Quick mode: few points, not for conclusions.**')"
echo
echo "## Offline throughput at max_num_seqs = $MAXBS (Fig. 5a/b)"
echo
echo "total_token_throughput in tokens/s (utilisation in parentheses)."
echo
awk -F, -v bs=$MAXBS '
	NR > 1 && $4 == bs { key = $1 " (prefill_seqs " $2 ")"; if (!(key in seen)) { seen[key] = 1; rows[++n] = key }
		v[key, $5] = sprintf("%.0f (%.1f%%)", $9, 100 * $10)
		if ($2 == "own" && !(($5) in own)) { own[$5] = $3; sys[++ns] = $5 } }
	END {
		printf "| dataset | bucketserve-offline | bucketserve | distserve | uellm | vllm |\n|---|---:|---:|---:|---:|---:|\n"
		for (i = 1; i <= n; i++) { k = rows[i]
			printf "| %s | %s | %s | %s | %s | %s |\n", k, v[k, "bucketserve-offline"], v[k, "bucketserve"], v[k, "distserve"], v[k, "uellm"], v[k, "vllm"] }
		printf "\nprefill_seqs own: each system at its own server.max_num_prefill_seqs ("
		for (i = 1; i <= ns; i++) printf "%s%s %s", (i > 1 ? ", " : ""), sys[i], own[sys[i]]
		printf "); 8: every system at 8.\n" }' "$off_csv"
echo
echo "## Server RPS at 80 % SLO attainment (Fig. 5c/d)"
echo
echo "Linear interpolation between the last client rate with attainment >= 0.8 and the next one;"
echo "'>' = never below 0.8 in the sweep, '<' = below 0.8 at the lowest rate."
echo
awk -F, 'NR > 1 { k = $1 SUBSEP $3; n[k]++; srv[k, n[k]] = $5; att[k, n[k]] = $6; ds[$1] = 1; sy[$3] = 1 }
	END {
		printf "| dataset | bucketserve | distserve | uellm | vllm |\n|---|---:|---:|---:|---:|\n"
		split("alpaca mixed", D, " "); split("bucketserve distserve uellm vllm", S, " ")
		for (d = 1; d <= 2; d++) { line = "| " D[d]
			for (s = 1; s <= 4; s++) { k = D[d] SUBSEP S[s]; r = ""
				if (att[k, 1] < 0.8) r = sprintf("< %.2f", srv[k, 1])
				else { for (i = 2; i <= n[k]; i++) if (att[k, i] < 0.8) break
					if (i > n[k]) r = sprintf("> %.2f", srv[k, n[k]])
					else { f = (att[k, i - 1] - 0.8) / (att[k, i - 1] - att[k, i])
						r = sprintf("%.2f", srv[k, i - 1] + f * (srv[k, i] - srv[k, i - 1])) } }
				line = line " | " r }
			print line " |" } }' "$on_csv" | tee "$TMP/rps80.md"
echo
echo "## Server RPS at the highest client RPS (Fig. 5e/f)"
echo
awk -F, 'NR > 1 { if ($2 + 0 >= top[$1]) top[$1] = $2 + 0; v[$1, $2 + 0, $3] = $5 }
	END {
		printf "| dataset | client RPS | bucketserve | distserve | uellm | vllm |\n|---|---:|---:|---:|---:|---:|\n"
		split("alpaca mixed", D, " ")
		for (d = 1; d <= 2; d++) { t = top[D[d]]
			printf "| %s | %g | %.2f | %.2f | %.2f | %.2f |\n", D[d], t, v[D[d], t, "bucketserve"], v[D[d], t, "distserve"], v[D[d], t, "uellm"], v[D[d], t, "vllm"] } }' "$on_csv"
echo
echo "## The paper's ratios beside the simulated ones"
echo
awk -F, -v bs=$MAXBS -v offcsv="$off_csv" -v oncsv="$on_csv" -v rpsf="$TMP/rps80.md" '
	function ratio(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "n/a" : sprintf("%.2fx", a / b) }
	function num(s) { gsub(/[<> ]/, "", s); return s }
	BEGIN {
		while ((getline l < offcsv) > 0) { split(l, f, ","); if (f[4] == bs) { tp[f[1], f[2], f[5]] = f[9]; ut[f[1], f[2], f[5]] = f[10] } }
		while ((getline l < oncsv) > 0) { split(l, f, ","); if (f[1] == "dataset") continue
			if (f[2] + 0 >= top[f[1]]) top[f[1]] = f[2] + 0; srv[f[1], f[2] + 0, f[3]] = f[5] }
		while ((getline l < rpsf) > 0) { n = split(l, f, "|"); if (f[2] ~ /alpaca|mixed/) { d = f[2]; gsub(/ /, "", d)
			r80[d, "bucketserve"] = num(f[3]); r80[d, "distserve"] = num(f[4]); r80[d, "uellm"] = num(f[5]) } }
		print "| paper | what | simulated |"
		print "|---|---|---:|"
		printf "| 3.58x | offline throughput, BucketServe / UELLM (Mixed, max_num_seqs %s) | %s |\n", bs, ratio(tp["mixed", "own", "bucketserve-offline"], tp["mixed", "own", "uellm"])
		printf "| 1.31x | offline throughput, BucketServe / DistServe (Mixed, max_num_seqs %s) | %s |\n", bs, ratio(tp["mixed", "own", "bucketserve-offline"], tp["mixed", "own", "distserve"])
		printf "| 81.66%% | BucketServe utilisation (Mixed, max_num_seqs %s) | %.2f%% |\n", bs, 100 * ut["mixed", "own", "bucketserve-offline"]
		printf "| - | the same two ratios with every system at 8 prompts per prefill pass | %s, %s |\n", ratio(tp["mixed", "8", "bucketserve-offline"], tp["mixed", "8", "uellm"]), ratio(tp["mixed", "8", "bucketserve-offline"], tp["mixed", "8", "distserve"])
		printf "| 1.37x | server RPS at 80%% SLO, BucketServe / DistServe, Alpaca | %s |\n", ratio(r80["alpaca", "bucketserve"], r80["alpaca", "distserve"])
		printf "| 1.93x | server RPS at 80%% SLO, BucketServe / DistServe, Mixed | %s |\n", ratio(r80["mixed", "bucketserve"], r80["mixed", "distserve"])
		ta = top["alpaca"]; tm = top["mixed"]
		printf "| 1.975x | server RPS at client RPS %g, BucketServe / UELLM, Alpaca | %s |\n", ta, ratio(srv["alpaca", ta, "bucketserve"], srv["alpaca", ta, "uellm"])
		printf "| 1.4x | server RPS at client RPS %g, BucketServe / DistServe, Mixed | %s |\n", tm, ratio(srv["mixed", tm, "bucketserve"], srv["mixed", tm, "distserve"])
		printf "| 3.47x | server RPS at client RPS %g, BucketServe / UELLM, Mixed | %s |\n", tm, ratio(srv["mixed", tm, "bucketserve"], srv["mixed", tm, "uellm"])
	}'
echo
echo "## UELLM's sensitivity to its batching rule (offline, max_num_seqs = $MAXBS)"
echo
awk -F, 'NR == 1 { print "| dataset | static_batch_size | static_max_waste | req/s | tokens/s | utilisation |"; print "|---|---:|---:|---:|---:|---:|"; next }
	{ printf "| %s | %s | %s | %.2f | %.0f | %.1f%% |\n", $1, $2, $3, $4, $5, 100 * $6 }' "$sens_csv"
echo
echo "## Bucketing overhead vs number of buckets (Fig. 6b)"
echo
echo "BucketServe preset, fixed equal-width buckets over [0, 4096], Mixed at 12 req/s, $N_OVH"
echo "requests. Wall-clock (from --perf): varies from run to run and machine to machine."
echo
awk -F, 'NR > 1 { printf "| %s | %.4f | %.1f%% | %.2f | %s |\n", $1, $3, $4, $5, $7 }
	BEGIN { print "| buckets | bucketing wall s | % of simulation wall time | us / request | % of simulated time |"
		print "|---|---:|---:|---:|---:|" }' "$ovh_csv"
echo
echo "Files: offline_batch.csv, uellm_sensitivity.csv, online_rate.csv, overhead_buckets.csv. $NRUNS runs."
} >"$sum"
echo "reproduce: $NRUNS runs in $((SECONDS - T_START)) s; summary in $sum" >&2
