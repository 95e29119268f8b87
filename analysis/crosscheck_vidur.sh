#!/usr/bin/env bash
# Cross-check with the peer simulator Vidur (microsoft/vidur): runs bucketsim on the committed
# traces and configurations of models/README.md, "Cross-check with Vidur", and prints the table
# (TTFT, TPOT and E2E mean and p99, passes, preemptions).  Vidur's side is not run here (it is a
# separate Python program, see the README for its commands and version): given the output
# directories of its runs with --vidur DIR, its request_metrics.csv and batch_metrics.csv are
# summarised the same way, one line per run next to bucketsim's.
#
# usage: analysis/crosscheck_vidur.sh [--traces] [--vidur DIR] [BUCKETSIM]
#   --traces    regenerate the traces in analysis/crosscheck/ (bucketsim trace synth) first
#   --vidur DIR a directory holding Vidur's runs as DIR/<model>_<sched>_<rate>/<timestamp>/
#               (model l70 or c34, sched sarathi or vllm, rate 1 or 2)
#   BUCKETSIM   the binary (default: build/bucketsim next to this script's parent)
# Uses bash, python3 (standard library, to read the JSON and CSV outputs) and bucketsim.
# Exit status: 0 success, 1 a run failed, 2 usage error.
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$HERE/crosscheck
B=$HERE/../build/bucketsim
TRACES=0
VIDUR=
while [ $# -gt 0 ]; do
	case $1 in
	--traces) TRACES=1 ;;
	--vidur) [ $# -ge 2 ] || { echo "usage: --vidur DIR" >&2; exit 2; }; VIDUR=$2; shift ;;
	-h|--help) sed -n '2,16p' "$0"; exit 0 ;;
	-*) echo "crosscheck_vidur.sh: unknown option $1" >&2; exit 2 ;;
	*) B=$1 ;;
	esac
	shift
done

RATES="1 2"
# Vidur's column names: arrived_at (s), num_prefill_tokens, num_decode_tokens (its
# TraceReplayRequestGenerator; the first output token counts as a decode token there too).
if [ $TRACES = 1 ]; then
	for r in $RATES; do
		"$B" trace synth --trace sharegpt --rate "$r" -n 1000 --seed 1 \
			--set server.max_model_len=4096 --set workload.truncate=true \
			-o "$DIR/sharegpt_${r}rps.csv"
		python3 - "$DIR/sharegpt_${r}rps.csv" "$DIR/vidur_sharegpt_${r}rps.csv" <<'PY'
import csv, sys
with open(sys.argv[1], newline="") as f, open(sys.argv[2], "w", newline="") as g:
    w = csv.writer(g, lineterminator="\n")
    w.writerow(["arrived_at", "num_prefill_tokens", "num_decode_tokens"])
    for r in csv.DictReader(f):
        w.writerow([r["arrival_time_s"], r["prompt_tokens"], r["output_tokens"]])
PY
	done
fi

# The configurations.  Both: Llama-2-70B or CodeLlama-34B at TP 2 on the a100 profile (A100
# SXM4 80 GB) in execution mode cuda_graphs (vLLM V1 on NVIDIA: one forward per step over every
# scheduled token, padded to a CUDA-graph capture size), bf16, 16-token blocks, Vidur's
# KV-cache size (its MemoryPlanner: 90 % of 80 GiB less the weights, in whole 4096-token
# requests: 3328 blocks for Llama-2-70B, 27904 for CodeLlama-34B), at most 128 running
# requests, no prefix caching, no host time (Vidur skips its CPU overheads by default).
COMMON=(--set hardware=a100 --set hardware.tp=2 --set server.execution_mode=cuda_graphs
	--set server.block_size=16 --set server.max_num_seqs=128 --set server.max_model_len=4096
	--set server.prefix_caching=false --set sim.host_time=false --seed 1)
# Sarathi-like: a 512-token budget per step shared by decodes and prefill chunks.  vLLM-like:
# whole prompts (no chunking) within 4096 tokens per step.  Vidur's vLLM scheduler is vLLM
# V0's (a step runs either prefills or decodes, prefills first); cuda_graphs is V1's (both in
# one forward): models/README.md says what that changes.
SARATHI=(--set server.max_num_batched_tokens=512)
VLLM=(--set server.chunked_prefill=false --set server.max_num_batched_tokens=4096)

summ_bucketsim() {
	python3 -c '
import json, sys
m = json.load(sys.stdin)["metrics"]
passes = m["prefill_passes"] + m["decode_passes"] + m["unified_passes"]
print("%9.1f %9.1f %8.2f %8.2f %9.0f %9.0f %7d %6d" % (m["mean_ttft_ms"], m["p99_ttft_ms"],
      m["mean_tpot_ms"], m["p99_tpot_ms"], m["mean_e2el_ms"], m["p99_e2el_ms"], passes,
      m["preemptions"]))'
}

# Vidur's run directory: TTFT = prefill_e2e_time, E2E = request_e2e_time, TPOT = (E2E - TTFT) /
# (decode tokens - 1) as bucketsim defines it; percentiles interpolated linearly; iterations =
# rows of batch_metrics.csv; preemptions = request restarts.
summ_vidur() {
	python3 - "$1" <<'PY'
import csv, glob, math, statistics, sys
def q(v, p):
    v = sorted(v); k = (len(v) - 1) * p; f = math.floor(k); c = min(f + 1, len(v) - 1)
    return v[f] + (v[c] - v[f]) * (k - f)
d = sorted(glob.glob(sys.argv[1] + "/*/request_metrics.csv"))[-1].rsplit("/", 1)[0]
rows = list(csv.DictReader(open(d + "/request_metrics.csv")))
ttft = [float(r["prefill_e2e_time"]) * 1e3 for r in rows]
e2e = [float(r["request_e2e_time"]) * 1e3 for r in rows]
tpot = [(float(r["request_e2e_time"]) - float(r["prefill_e2e_time"])) * 1e3 /
        (float(r["request_num_decode_tokens"]) - 1)
        for r in rows if float(r["request_num_decode_tokens"]) > 1]
nb = sum(1 for _ in open(d + "/batch_metrics.csv")) - 1
pre = sum(int(float(r["request_num_restarts"])) for r in rows)
print("%9.1f %9.1f %8.2f %8.2f %9.0f %9.0f %7d %6d" % (statistics.mean(ttft), q(ttft, .99),
      statistics.mean(tpot), q(tpot, .99), statistics.mean(e2e), q(e2e, .99), nb, pre))
PY
}

printf '%-10s %-16s %4s %-8s %9s %9s %8s %8s %9s %9s %7s %6s\n' tool model rate sched \
	ttft_mean ttft_p99 tpot_mean tpot_p99 e2e_mean e2e_p99 passes preempt
for mk in l70:llama-2-70b:3328 c34:codellama-34b:27904; do
	IFS=: read -r key model blocks <<<"$mk"
	for r in $RATES; do
		for s in sarathi vllm; do
			if [ $s = sarathi ]; then cfg=("${SARATHI[@]}"); else cfg=("${VLLM[@]}"); fi
			line=$("$B" run --trace "$DIR/sharegpt_${r}rps.csv" "${COMMON[@]}" "${cfg[@]}" \
				--set model=$model --set server.num_kv_blocks=$blocks --json | summ_bucketsim) ||
				{ echo "bucketsim run failed: $model $s $r" >&2; exit 1; }
			printf '%-10s %-16s %4s %-8s %s\n' bucketsim $model $r $s "$line"
			if [ -n "$VIDUR" ] && [ -d "$VIDUR/${key}_${s}_${r}" ]; then
				printf '%-10s %-16s %4s %-8s %s\n' vidur $model $r $s \
					"$(summ_vidur "$VIDUR/${key}_${s}_${r}")"
			fi
		done
	done
done
