#!/usr/bin/env bash
# Regenerates the README's gallery (docs/gallery/*.png) from the bundled Alpaca trace: one
# figure of each `bucketsim plot` kind, each checked by tests/plot_key_check.py (its legend
# covers no data point in PDF, SVG or PNG; nothing is copied otherwise).
# Usage: docs/gallery.sh [BUCKETSIM]  (about 20 s on an idle machine)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/bucketsim}
W=$(mktemp -d /tmp/bucketsim-gallery.XXXXXX)
trap 'rm -rf "$W"' EXIT
G=docs/gallery
mkdir -p "$G"
T=(--trace alpaca --set workload.num_requests=400)

# SLO attainment vs rate at equal cards (a sweep), with each system's capacity at 80 %, on Alpaca,
# where distserve's and bucketserve's prefill batches differ near capacity (policies/README.md,
# "How bucketserve and distserve differ"; on Mixed they differ only above capacity): with
# 20000 requests, enough for the queue to build up at the rates probed (README, "How to
# compare systems fairly").
L=(--trace alpaca --set workload.num_requests=20000)
"$B" capacity "${L[@]}" --set cluster.cards=2 --system vllm --system distserve \
	--system bucketserve --target 0.8 -o "$W/cap" > /dev/null
"$B" sweep "${L[@]}" --set cluster.cards=2 --set workload.arrival=poisson \
	--axis preset=vllm,distserve,bucketserve \
	--axis workload.rate=50,100,150,160,170,175,180,185,190,195,200,225,250 -o "$W/rate" 2> /dev/null
"$B" plot attainment "$W/rate/sweep.csv" --capacity "$W/cap" --target 0.8 \
	-o "$W/attainment"
# Latency CDFs, bucket usage and the monitor's timeline of two runs at 2 cards.
for p in vllm distserve; do
	"$B" run "${T[@]}" --preset $p --set cluster.cards=2 --set workload.arrival=poisson \
		--set workload.rate=60 --set monitor.interval_s=0.25 -q -o "$W/$p"
done
"$B" plot cdf "$W/vllm" "$W/distserve" -o "$W/cdf"
"$B" plot heatmap "$W/vllm" -o "$W/heatmap"
"$B" plot timeline "$W/distserve" -o "$W/timeline"
# Throughput vs concurrency (every request at time 0).
"$B" sweep "${T[@]}" --set workload.arrival=offline --axis preset=vllm,distserve \
	--axis server.max_num_seqs=1,2,4,8,16,32,64,128 -o "$W/tput" 2> /dev/null
"$B" plot throughput "$W/tput/sweep.csv" -o "$W/throughput"
# Padding waste vs warmed buckets at equal budgets per phase: the advisor, and exponential,
# linear and padding-aware with their own count knobs (policies/README.md, "Bucket budgets
# across strategies").
"$B" buckets --advise "${T[@]}" --budgets 8,16,32,64,128,256,512,1024,2048 -o "$W/waste.csv"
"$B" plot waste "$W/waste.csv" --series strategy --logx -o "$W/waste"
# Warm-up compiles and time per bucketing strategy.
"$B" sweep "${T[@]}" --axis bucketing.version=docs,current \
	--axis bucketing.strategy=exponential,linear,none -o "$W/comp" 2> /dev/null
"$B" plot compiles "$W/comp/sweep.csv" --series bucketing.version --logy -o "$W/compiles"
# Pipeline bubbles of a two-stage pipeline.
"$B" run "${T[@]}" --set cluster.pp=2 --set workload.arrival=poisson --set workload.rate=20 \
	-q -o "$W/pp"
"$B" plot bubbles "$W/pp" -o "$W/bubbles"
python3 tests/plot_key_check.py "$W/attainment" "$W/cdf" "$W/throughput" "$W/waste" \
	"$W/compiles" "$W/timeline" > "$W/key_check.txt" || { cat "$W/key_check.txt" >&2; exit 1; }
for k in attainment cdf throughput waste compiles heatmap timeline bubbles; do
	cp "$W/$k.png" "$G/$k.png"
done
