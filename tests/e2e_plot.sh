#!/usr/bin/env bash
# End-to-end tests of `bucketsim plot`: every kind renders non-empty PDF, SVG and PNG files from
# a small run; the data it plots is the sweep's (as many series and points, the mean over seeds),
# the capacity curve's, the requests' CDF and the buckets' uses; errors are clean.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
W=(--trace alpaca --set workload.num_requests=120)
if ! command -v gnuplot >/dev/null; then
	fail gnuplot "gnuplot not installed (make deps installs gnuplot-nox)"
	e2e_done
	exit
fi
rendered() { # NAME OUT: the three files exist, are non-empty and have their format's magic.
	head -c 4 "$2.pdf" 2>/dev/null | grep -q '%PDF' && grep -q '<svg' "$2.svg" 2>/dev/null \
		&& [ "$(head -c 4 "$2.png" 2>/dev/null | tail -c 3)" = PNG ] && [ -s "$2.png" ] \
		&& ok "$1" || fail "$1" "missing or empty output for $2"
}
blocks() { grep -c '^# ' "$1.dat"; }
# Rows of data block I (0-based) of OUT.dat.
block_rows() { awk -v want="$2" '/^# / {b++; next} NF && b - 1 == want {n++} END {print n + 0}' "$1.dat"; }

# Runs.
"$B" run "${W[@]}" --set workload.arrival=poisson --set workload.rate=30 --set monitor.interval_s=0.5 -q -o "$T/a"
"$B" run "${W[@]}" --preset distserve -q -o "$T/b"
"$B" run "${W[@]}" --set cluster.pp=2 --set workload.arrival=poisson --set workload.rate=30 -q -o "$T/pp"

# Sweep kinds: series and points as in the sweep, y the mean over seeds.
"$B" sweep "${W[@]}" --set workload.arrival=offline --axis preset=vllm,distserve \
	--axis server.max_num_seqs=1,4,16 --seeds 2 -o "$T/s" 2>/dev/null
expect_exit 0 plot-throughput "$B" plot throughput "$T/s/sweep.csv" -o "$T/f/throughput"
rendered throughput-rendered "$T/f/throughput"
[ "$(blocks "$T/f/throughput")" -eq 2 ] && ok throughput-series || fail throughput-series "$(blocks "$T/f/throughput")"
[ "$(block_rows "$T/f/throughput" 0) $(block_rows "$T/f/throughput" 1)" = "3 3" ] && ok throughput-points || fail throughput-points "$(cat "$T/f/throughput.dat")"
[ "$(grep -o 'index [0-9]*' "$T/f/throughput.gp" | sort -u | wc -l)" -eq 2 ] && ok throughput-plot-clauses || fail throughput-plot-clauses "$(grep plot "$T/f/throughput.gp")"
c=$(head -1 "$T/s/sweep.csv" | tr ',' '\n' | grep -nx output_throughput | cut -d: -f1)
want=$(awk -F, -v c="$c" '$1 == 4 && $3 == "distserve" {s += $c; n++} END {printf "%.6g", s / n}' "$T/s/sweep.csv")
got=$(awk '/^# / {b++; next} b == 2 && $1 == 4 {printf "%.6g", $2}' "$T/f/throughput.dat")
[ -n "$want" ] && [ "$want" = "$got" ] && ok throughput-mean-of-seeds || fail throughput-mean-of-seeds "sweep $want, plot $got"
grep -q '"output throughput (tokens/s)"' "$T/f/throughput.gp" && grep -q '"server.max_num_seqs (requests)"' "$T/f/throughput.gp" \
	&& ok throughput-units || fail throughput-units "labels"
"$B" sweep "${W[@]}" --axis preset=vllm,distserve,bucketserve --axis workload.rate=5,20,80,160 -o "$T/r" 2>/dev/null
expect_exit 0 plot-attainment "$B" plot attainment "$T/r/sweep.csv" --target 0.8 -o "$T/f/att"
rendered attainment-rendered "$T/f/att"
[ "$(blocks "$T/f/att") $(block_rows "$T/f/att" 0) $(block_rows "$T/f/att" 1) $(block_rows "$T/f/att" 2)" = "3 4 4 4" ] \
	&& ok attainment-series-points || fail attainment-series-points "$(cat "$T/f/att.dat")"
grep -q 'first 0.8 to graph 1, first 0.8' "$T/f/att.gp" && ok attainment-target || fail attainment-target "no target line"
expect_exit 0 plot-waste "$B" plot waste "$T/s/sweep.csv" -o "$T/f/waste"
rendered waste-rendered "$T/f/waste"
"$B" sweep "${W[@]}" --axis bucketing.strategy=exponential,linear,none -o "$T/c" 2>/dev/null
expect_exit 0 plot-compiles "$B" plot compiles "$T/c/sweep.csv" -o "$T/f/comp"
rendered compiles-rendered "$T/f/comp"
[ "$(blocks "$T/f/comp") $(block_rows "$T/f/comp" 0)" = "2 3" ] && ok compiles-bars || fail compiles-bars "$(cat "$T/f/comp.dat")"

# Capacity: one curve per system, the probes of the first seed, and capacity lines.
"$B" capacity --trace alpaca --set workload.num_requests=300 --system vllm --system distserve --target 0.8 -o "$T/cap" >/dev/null
expect_exit 0 plot-capacity "$B" plot attainment "$T/cap" -o "$T/f/cap"
rendered capacity-rendered "$T/f/cap"
for i in 0 1; do
	sys=$([ $i = 0 ] && echo vllm || echo distserve)
	n=$(grep -c "^$sys," "$T/cap/capacity_curve.csv")
	[ "$(block_rows "$T/f/cap" $i)" -eq "$n" ] && ok "capacity-points-$sys" || fail "capacity-points-$sys" "$(block_rows "$T/f/cap" $i) vs $n"
done
[ "$(grep -c 'graph 0 to first' "$T/f/cap.gp")" -eq 2 ] && ok capacity-lines || fail capacity-lines "$(grep arrow "$T/f/cap.gp")"

# A sweep's attainment with the capacities of a capacity run over the same systems.
"$B" sweep --trace alpaca --set workload.num_requests=300 --set workload.arrival=poisson \
	--axis preset=vllm,distserve --axis workload.rate=50,150,250 -o "$T/r2" 2>/dev/null
expect_exit 0 plot-att-capacity "$B" plot attainment "$T/r2/sweep.csv" --capacity "$T/cap" --target 0.8 -o "$T/f/attc"
rendered att-capacity-rendered "$T/f/attc"
for sys in vllm distserve; do
	cap=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('%.9g' % [s for s in d['systems'] if s['system'] == sys.argv[2]][0]['capacity_req_s'])" "$T/cap/capacity.json" $sys)
	grep -q "set arrow from first $cap, graph 0 to first $cap, graph 1" "$T/f/attc.gp" && grep -q "title \"$sys (capacity " "$T/f/attc.gp" \
		&& ok "att-capacity-$sys" || fail "att-capacity-$sys" "$cap: $(grep arrow "$T/f/attc.gp")"
done
expect_exit 2 plot-capacity-kind "$B" plot throughput "$T/s/sweep.csv" --capacity "$T/cap" -o "$T/f/x"
expect_exit 3 plot-capacity-nomatch "$B" plot attainment "$T/c/sweep.csv" --x compiles_warmup --capacity "$T/cap" -o "$T/f/x"
expect_stderr plot-capacity-nomatch-msg "no system of capacity.json is a series"

# Run kinds.
expect_exit 0 plot-cdf "$B" plot cdf "$T/a" "$T/b" -o "$T/f/cdf"
rendered cdf-rendered "$T/f/cdf"
[ "$(blocks "$T/f/cdf")" -eq 6 ] && ok cdf-series || fail cdf-series "$(blocks "$T/f/cdf")"
[ "$(block_rows "$T/f/cdf" 0)" -eq 120 ] && ok cdf-ttft-points || fail cdf-ttft-points "$(block_rows "$T/f/cdf" 0)"
ntpot=$(awk -F, 'NR > 1 && $10 != "" && $10 > 0' "$T/a/requests.csv" | wc -l)
[ "$(block_rows "$T/f/cdf" 2)" -eq "$ntpot" ] && ok cdf-tpot-points || fail cdf-tpot-points "$(block_rows "$T/f/cdf" 2) vs $ntpot"
awk '/^# / {b++; next} b == 1 && NF {last = $2} END {exit !(last == 1)}' "$T/f/cdf.dat" && ok cdf-ends-at-1 || fail cdf-ends-at-1 "last"
expect_exit 0 plot-heatmap "$B" plot heatmap "$T/a" -o "$T/f/heat"
rendered heatmap-rendered "$T/f/heat"
for ph in prompt decode; do
	want=$(awk -F, -v p=$ph '$1 == p {s += $9} END {print s}' "$T/a/buckets.csv")
	got=$(awk -v p="$ph" '/^# / {cur = $2; next} cur == p && NF && $3 != "NaN" {s += 10 ^ $3} END {printf "%.0f", s}' "$T/f/heat.dat")
	[ "$want" = "$got" ] && ok "heatmap-uses-$ph" || fail "heatmap-uses-$ph" "buckets.csv $want, plot $got"
done
expect_exit 0 plot-timeline "$B" plot timeline "$T/a" -o "$T/f/time"
rendered timeline-rendered "$T/f/time"
[ "$(block_rows "$T/f/time" 0)" -eq "$(($(wc -l < "$T/a/monitor.csv") - 1))" ] && ok timeline-rows || fail timeline-rows "rows"
expect_exit 0 plot-bubbles "$B" plot bubbles "$T/pp" -o "$T/f/bub"
rendered bubbles-rendered "$T/f/bub"
# Lane 1 of a loaded two-stage pipeline is busy part of the window: its idle share is below 100 %.
grep -qE '"1: [0-9]{1,2}%% idle" 1' "$T/f/bub.gp" && ok bubbles-lanes || fail bubbles-lanes "$(grep ytics "$T/f/bub.gp")"
expect_exit 3 plot-bubbles-no-pp "$B" plot bubbles "$T/a" -o "$T/f/nobub"
expect_stderr bubbles-no-pp-msg "no pipeline"
[ ! -e "$T/f/nobub.gp" ] && ok bubbles-no-pp-clean || fail bubbles-no-pp-clean "script written"

# Script only; errors.
expect_exit 0 plot-script-only "$B" plot cdf "$T/a" --script-only -o "$T/f/so"
[ -s "$T/f/so.gp" ] && [ -s "$T/f/so.dat" ] && [ ! -e "$T/f/so.png" ] && ok script-only || fail script-only "files"
expect_exit 2 plot-kind "$B" plot nope "$T/a" -o "$T/f/x"
expect_exit 2 plot-no-out "$B" plot cdf "$T/a"
expect_exit 3 plot-column "$B" plot throughput "$T/s/sweep.csv" --x nosuch -o "$T/f/x"
expect_stderr plot-column-msg "field 'nosuch': no such column"
expect_exit 2 plot-not-dir "$B" plot heatmap "$T/s/sweep.csv" -o "$T/f/x"
e2e_done
