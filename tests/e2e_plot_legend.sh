#!/usr/bin/env bash
# End-to-end tests of what a figure shows beyond its numbers (tests/e2e_plot.sh checks those):
# series that stay visible (a dash pattern, an open point shape and a width of their own, a
# warning naming coinciding series), legends that cover no data point (tests/plot_key_check.py,
# on inputs like the gallery's, for every kind with a legend) and `--key outside` that widens the
# figure instead of squeezing the graph, stacked compiles with --logy and rotated labels,
# --label and readable series names, --baseline's paired interval against a hand computation,
# and cdf --panels.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
CHECK="$(dirname "$0")/plot_key_check.py"
W=(--trace alpaca --set workload.num_requests=120)
if ! command -v gnuplot >/dev/null; then
	fail gnuplot "gnuplot not installed (make deps installs gnuplot-nox)"
	e2e_done
	exit
fi
# gp_read GP PREFIX: each string expression following PREFIX in GP, as gnuplot reads it back.
gp_read() {
	rm -f "$T/gp_read.out"
	{ echo "set print '$T/gp_read.out'"
	  perl -ne 'BEGIN { $p = shift @ARGV } while (/\Q$p\E("(?:[^"\\]|\\.)*"(?:\."(?:[^"\\]|\\.)*")*)/g) { print "print $1\n" }' "$2" "$1"; } |
		gnuplot 2>"$T/gp_read.err" && cat "$T/gp_read.out"
}
# key_ok NAME OUT: the legend of every panel of OUT covers no point, in PDF, SVG and PNG.
key_ok() {
	if python3 "$CHECK" "$2" >"$T/check.out" 2>&1; then ok "$1"; else fail "$1" "$(grep -v 'no point covered\|: ok$' "$T/check.out" | head -5)"; fi
}

# ---- 1. Series stay visible ----
# Ten series of one hand-made CSV: every clause that draws a series has its own (colour, dash,
# point) triple and dash patterns and point shapes differ between neighbours; widths shrink from
# the first series to the last, so a series drawn over another leaves the other's line showing.
{ echo "preset,workload.rate,seed,error,y"
  for i in 0 1 2 3 4 5 6 7 8 9; do for x in 1 2 3; do echo "p$i,$x,1,,$((i * 10 + x))"; done; done; } > "$T/ten.csv"
"$B" plot line "$T/ten.csv" --x workload.rate --y y --script-only -o "$T/f/ten" 2>"$T/ten.err"
grep 'with linespoints' "$T/f/ten.gp" | sed -E 's/.*lc rgb "([^"]*)" dt ([0-9]+) lw ([0-9.]+) pt ([0-9]+).*/\1 \2 \3 \4/' > "$T/ten.styles"
[ "$(wc -l < "$T/ten.styles")" -eq 10 ] && [ "$(cut -d' ' -f1,2,4 "$T/ten.styles" | sort -u | wc -l)" -eq 10 ] \
	&& awk 'NR > 1 && ($2 == d || $4 == p) {exit 1} {d = $2; p = $4}' "$T/ten.styles" \
	&& awk 'NR > 1 && $3 > w {exit 1} {w = $3} END {exit !(NR == 10)}' "$T/ten.styles" \
	&& ok series-styles-distinct || fail series-styles-distinct "$(cat "$T/ten.styles")"
# the point shapes are open (or strokes), so one drawn over another leaves both visible
! cut -d' ' -f4 "$T/ten.styles" | grep -qxE '5|7|9|11|13|15' && ok series-points-open || fail series-points-open "$(cut -d' ' -f4 "$T/ten.styles" | tr '\n' ' ')"
# Coinciding series are named on stderr; a series that differs is not.
printf 'preset,workload.rate,seed,error,slo_attainment\na,1,1,,1\na,2,1,,0.5\nb,1,1,,1\nb,2,1,,0.5\nc,1,1,,1\nc,2,1,,0.4\n' > "$T/same.csv"
expect_exit 0 plot-coincide "$B" plot attainment "$T/same.csv" --script-only -o "$T/f/same"
expect_stderr plot-coincide-msg "warning: .*same: series 'a' and 'b' coincide"
[ "$(grep -c coincide "$T/stderr")" -eq 1 ] && ok plot-coincide-only-those || fail plot-coincide-only-those "$(cat "$T/stderr")"
"$B" run "${W[@]}" --set workload.arrival=poisson --set workload.rate=30 --set monitor.interval_s=0.5 -q -o "$T/a"
"$B" run "${W[@]}" --preset distserve -q -o "$T/b"
cp -r "$T/a" "$T/a2"
expect_exit 0 plot-cdf-coincide "$B" plot cdf "$T/a" "$T/b" "$T/a2" --script-only -o "$T/f/cdfsame"
[ "$(grep -c "series 'a' and 'a2' coincide in the" "$T/stderr")" -eq 3 ] && expect_stderr plot-cdf-coincide-panel "coincide in the TPOT panel" || fail plot-cdf-coincide-count "$(cat "$T/stderr")"
# every cdf series has points along its steps (its own shape) and a legend entry showing both
[ "$(grep -c 'with points' "$T/f/cdfsame.gp")" -eq 9 ] && [ "$(gp_read "$T/f/cdfsame.gp" 'title ' | tr '\n' '|')" = "a|b|a2|a|b|a2|a|b|a2|" ] \
	&& ok cdf-points-and-titles || fail cdf-points-and-titles "$(grep -c 'with points' "$T/f/cdfsame.gp")"

# ---- 2. Legends cover no point ----
# Inputs like the gallery's (docs/gallery.sh), smaller: every kind with a legend.
"$B" capacity --trace alpaca --set workload.num_requests=400 --set cluster.cards=2 --system vllm --system distserve --system bucketserve --target 0.8 -o "$T/cap" >/dev/null
"$B" sweep --trace alpaca --set workload.num_requests=400 --set cluster.cards=2 --set workload.arrival=poisson \
	--axis preset=vllm,distserve,bucketserve --axis workload.rate=25,50,100,150,200,300 -o "$T/rate" 2>/dev/null
"$B" sweep "${W[@]}" --set workload.arrival=offline --axis preset=vllm,distserve \
	--axis server.max_num_seqs=1,2,4,8,16,32,64,128 -o "$T/tput" 2>/dev/null
"$B" sweep "${W[@]}" --set bucketing.strategy=linear --axis env.VLLM_DECODE_BLOCK_BUCKET_STEP=32,128 \
	--axis env.VLLM_PROMPT_SEQ_BUCKET_STEP=32,64,128,256,512 -o "$T/waste" 2>/dev/null
"$B" sweep "${W[@]}" --axis bucketing.version=docs,current --axis bucketing.strategy=exponential,linear,none -o "$T/comp" 2>/dev/null
P=$T/f/k
mkdir -p "$P"
"$B" plot attainment "$T/rate/sweep.csv" --capacity "$T/cap" --target 0.8 -o "$P/att" 2>/dev/null
"$B" plot attainment "$T/cap" -o "$P/cap" 2>/dev/null
"$B" plot throughput "$T/tput/sweep.csv" -o "$P/tput" 2>/dev/null
"$B" plot line "$T/rate/sweep.csv" --x workload.rate --y p99_ttft_ms --logy --ci 0.95 -o "$P/line" 2>/dev/null
"$B" plot waste "$T/waste/sweep.csv" --series env.VLLM_DECODE_BLOCK_BUCKET_STEP -o "$P/waste" 2>/dev/null
"$B" plot compiles "$T/comp/sweep.csv" --series bucketing.version --logy -o "$P/comp" 2>/dev/null
"$B" plot cdf "$T/a" "$T/b" -o "$P/cdf" 2>/dev/null
"$B" plot timeline "$T/a" -o "$P/timeline" 2>/dev/null
for k in att cap tput line waste comp cdf timeline; do
	key_ok "key-covers-no-point-$k" "$P/$k"
done
# A legend whose every corner would cover a point goes below the graph: a sweep whose series fill
# the corners (low attainment at low rates, high at high rates, and the reverse).
{ echo "preset,workload.rate,seed,error,slo_attainment"
  for x in 1 2 3 4 5; do echo "up,$x,1,,$(( (x - 1) * 25 ))e-2"; echo "down,$x,1,,$(( (5 - x) * 25 ))e-2"; echo "top,$x,1,,1"; echo "bottom,$x,1,,0"; done; } > "$T/corners.csv"
"$B" plot attainment "$T/corners.csv" -o "$P/corners" 2>/dev/null
grep -q '^  set key below' "$P/corners.gp" && ok key-below-when-corners-full || fail key-below-when-corners-full "$(grep 'set key' "$P/corners.gp")"
key_ok key-covers-no-point-corners "$P/corners"
# The same data with the bottom left empty: the legend goes there.
printf 'preset,workload.rate,seed,error,slo_attainment\nup,1,1,,1\nup,2,1,,1\nup,3,1,,1\nup,4,1,,0.1\n' > "$T/bl.csv"
"$B" plot attainment "$T/bl.csv" --script-only -o "$P/bl"
grep -q '^  set key inside bottom left$' "$P/bl.gp" && ok key-empty-corner || fail key-empty-corner "$(grep 'set key' "$P/bl.gp")"
# A legend the user puts over points is drawn there, with a warning counting them.
expect_exit 0 plot-key-user-covers "$B" plot attainment "$T/bl.csv" --key 'top left' --script-only -o "$P/tl"
expect_stderr plot-key-user-covers-msg "warning: .*tl: the legend at 'top left' covers [0-9]+ point"
# --key outside, above, below: the figure grows, the graph keeps its size (no squeezed strip, no
# "difficulty fitting" warning), in PDF, SVG and PNG.
for pos in outside below above; do
	expect_exit 0 "plot-key-$pos" "$B" plot attainment "$T/rate/sweep.csv" --capacity "$T/cap" --target 0.8 --key "$pos" -o "$P/o-$pos"
	! grep -q 'difficulty' "$T/stderr" && ok "plot-key-$pos-no-warning" || fail "plot-key-$pos-no-warning" "$(cat "$T/stderr")"
	key_ok "plot-key-$pos-not-squeezed" "$P/o-$pos"
done
w_in() { sed -n 's/.*pdfcairo size \([0-9.]*\)in,\([0-9.]*\)in.*/\1 \2/p' "$1.gp"; }
awk -v a="$(w_in "$P/o-outside")" 'BEGIN {split(a, v, " "); exit !(v[1] > 3.5 && v[2] == 2.5)}' && ok key-outside-wider || fail key-outside-wider "$(w_in "$P/o-outside")"
awk -v a="$(w_in "$P/o-below")" 'BEGIN {split(a, v, " "); exit !(v[1] == 3.5 && v[2] > 2.5)}' && ok key-below-taller || fail key-below-taller "$(w_in "$P/o-below")"
# gnuplot's own graph width with the legend outside is the one without a legend (PNG).
gw() { printf 'load "%s.gp"\nprint GPVAL_TERM_XMAX - GPVAL_TERM_XMIN\n' "$(basename "$1")" > "$1.probe"; (cd "$(dirname "$1")" && gnuplot "$(basename "$1").probe" 2>&1); }
"$B" plot attainment "$T/rate/sweep.csv" --capacity "$T/cap" --target 0.8 --key off -o "$P/o-off" 2>/dev/null
awk -v a="$(gw "$P/o-outside")" -v b="$(gw "$P/o-off")" 'BEGIN {exit !(a > 0 && a >= 0.97 * b)}' && ok key-outside-graph-size || fail key-outside-graph-size "outside $(gw "$P/o-outside"), off $(gw "$P/o-off")"

# ---- 3. compiles ----
expect_exit 0 plot-compiles-logy "$B" plot compiles "$T/comp/sweep.csv" --series bucketing.version --logy --script-only -o "$T/f/clog"
[ "$(grep -c 'set logscale y' "$T/f/clog.gp")" -eq 2 ] && [ "$(grep -c 'set yrange \[0.5:' "$T/f/clog.gp")" -eq 2 ] && ok compiles-logy || fail compiles-logy "$(grep -E 'logscale|yrange' "$T/f/clog.gp")"
# no empty legend: one series has two entries per panel (warm-up, run time)
"$B" plot compiles "$T/comp/sweep.csv" --series bucketing.version --script-only -o "$T/f/c1" 2>/dev/null
printf 'bucketing.strategy,seed,error,compiles_warmup,compiles_runtime,warmup_s,runtime_compile_s\n' > "$T/seven.csv"
for s in exponential linear padding_aware unified file log none; do echo "$s,1,,10,5,1,0.5"; done >> "$T/seven.csv"
"$B" plot compiles "$T/seven.csv" --script-only -o "$T/f/seven"
[ "$(gp_read "$T/f/seven.gp" 'title ' | tr '\n' '|')" = "run time|warm-up|run time|warm-up|" ] && ok compiles-legend-not-empty || fail compiles-legend-not-empty "$(grep -c title "$T/f/seven.gp")"
[ "$(grep -c 'set xtics (.*) rotate by' "$T/f/seven.gp")" -eq 2 ] && ok compiles-labels-rotated || fail compiles-labels-rotated "$(grep xtics "$T/f/seven.gp")"
expect_exit 0 plot-compiles-seven "$B" plot compiles "$T/seven.csv" -o "$T/f/seven"
key_ok key-covers-no-point-seven "$T/f/seven"
# `none` compiles at run time: its bar shows the run-time compiles of the sweep
want=$(awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i} NR > 1 && $1 == "current" && $2 == "none" {print $c["compiles_warmup"] + $c["compiles_runtime"]}' "$T/comp/sweep.csv")
got=$(awk '/^# / {name = substr($0, 3); n[name]++; next} name == "version current, run time" && n[name] == 1 && NF {v = $2} END {print v}' "$T/f/c1.dat")
[ -n "$want" ] && [ "$want" -gt 0 ] && [ "$want" = "$got" ] && ok compiles-none-runtime || fail compiles-none-runtime "sweep $want, plot $got"

# ---- 4. Series names ----
# sweep points named by the keys that make them, raw keys read as words
"$B" sweep "${W[@]}" --set output.requests=true --axis server.max_num_seqs=4,32 -o "$T/pts" 2>/dev/null
expect_exit 0 plot-cdf-points "$B" plot cdf "$T/pts/points/0001" "$T/pts/points/0002" --script-only -o "$T/f/pts"
[ "$(gp_read "$T/f/pts.gp" 'title ' | sort -u | tr '\n' '|')" = "max num seqs 32|max num seqs 4|" ] && ok cdf-point-names || fail cdf-point-names "$(gp_read "$T/f/pts.gp" 'title ')"
gp_read "$P/waste.gp" 'title ' | sort -u | tr '\n' '|' > "$T/wt"
[ "$(cat "$T/wt")" = "decode block bucket step 128|decode block bucket step 32|" ] && ok series-raw-key-readable || fail series-raw-key-readable "$(cat "$T/wt")"
# --label per input and per series; the wrong number is an error naming both
expect_exit 0 plot-label-cdf "$B" plot cdf "$T/a" "$T/b" --label 'vLLM, 2 cards' --label DistServe --script-only -o "$T/f/lab"
[ "$(gp_read "$T/f/lab.gp" 'title ' | tr '\n' '|')" = "vLLM, 2 cards|DistServe|vLLM, 2 cards|DistServe|vLLM, 2 cards|DistServe|" ] && ok label-cdf || fail label-cdf "$(gp_read "$T/f/lab.gp" 'title ')"
expect_exit 0 plot-label-sweep "$B" plot throughput "$T/tput/sweep.csv" --label A --label B --script-only -o "$T/f/labs"
[ "$(gp_read "$T/f/labs.gp" 'title ' | tr '\n' '|')" = "A|B|" ] && ok label-sweep || fail label-sweep "$(gp_read "$T/f/labs.gp" 'title ')"
expect_exit 2 plot-label-count "$B" plot throughput "$T/tput/sweep.csv" --label A -o "$T/f/x"
expect_stderr plot-label-count-msg "1 label given, the plot has 2 series"
expect_exit 2 plot-label-heatmap "$B" plot heatmap "$T/a" --label A -o "$T/f/x"

# ---- 5. --baseline: paired differences ----
# Seeds 1-3 of both series (a seed noise of 2 points, shared): differences of 0.5, 0.4, 0.6
# points (0.005, 0.004, 0.006) at rate 10, mean 0.005, s = 0.001, paired t half-width
# t(0.975, 2) s / sqrt 3 = 4.302652729749464 x 0.001 / sqrt 3 = 0.0024841377117503; seed 4 of b
# has no partner and is left out.  At rate 20 one pair: no interval.
cat >"$T/paired.csv" <<'CSV'
preset,workload.rate,seed,error,slo_attainment
a,10,1,,0.80
a,10,2,,0.82
a,10,3,,0.78
a,20,1,,0.60
b,10,1,,0.805
b,10,2,,0.824
b,10,3,,0.786
b,10,4,,0.9
b,20,1,,0.70
CSV
expect_exit 0 plot-baseline "$B" plot attainment "$T/paired.csv" --ci 0.95 --baseline a -o "$T/f/pair"
want=$(awk 'BEGIN {h = 4.302652729749464 * 0.1 / sqrt(3) / 100; printf "10 %.9f %.9f %.9f 3|20 %.9f NaN NaN 1|", 0.005, 0.005 - h, 0.005 + h, 0.1}')
got=$(awk '/^# / || !NF {next} {printf "%s %.9f", $1, $2; for (i = 3; i <= 4; i++) printf " %s", ($i == "NaN" ? "NaN" : sprintf("%.9f", $i)); printf " %s|", $5}' "$T/f/pair.dat")
[ "$want" = "$got" ] && ok baseline-paired-values || fail baseline-paired-values "want $want, got $got"
[ "$(grep -c '^# ' "$T/f/pair.dat")" -eq 1 ] && grep -q '^# b$' "$T/f/pair.dat" && ok baseline-not-drawn || fail baseline-not-drawn "$(grep '^# ' "$T/f/pair.dat")"
[ "$(gp_read "$T/f/pair.gp" 'set ylabel ')" = "SLO attainment (fraction), difference to a" ] && ok baseline-ylabel || fail baseline-ylabel "$(grep ylabel "$T/f/pair.gp")"
expect_exit 2 plot-baseline-unknown "$B" plot attainment "$T/paired.csv" --ci 0.95 --baseline c -o "$T/f/x"
expect_stderr plot-baseline-unknown-msg "--baseline'?: no series named 'c' \(the series: 'a', 'b'\)"
expect_exit 2 plot-baseline-cdf "$B" plot cdf "$T/a" --baseline a -o "$T/f/x"

# ---- 6. cdf --panels ----
expect_exit 0 plot-panels "$B" plot cdf "$T/a" "$T/b" --panels ttft,tpot -o "$T/f/p2"
grep -q 'set multiplot layout 1,2' "$T/f/p2.gp" && [ "$(grep -c '^# ' "$T/f/p2.dat")" -eq 4 ] && ! grep -q 'E2E' "$T/f/p2.gp" \
	&& [ "$(gp_read "$T/f/p2.gp" 'set xlabel ' | tr '\n' '|')" = "TTFT (ms)|TPOT (ms)|" ] && ok cdf-panels-two || fail cdf-panels-two "$(grep -E 'multiplot|xlabel' "$T/f/p2.gp")"
expect_exit 0 plot-panels-one "$B" plot cdf "$T/a" --panels e2e --script-only -o "$T/f/p1"
! grep -q multiplot "$T/f/p1.gp" && [ "$(gp_read "$T/f/p1.gp" 'set xlabel ')" = "E2E latency (ms)" ] && ok cdf-panels-one || fail cdf-panels-one "$(grep -E 'multiplot|xlabel' "$T/f/p1.gp")"
key_ok key-covers-no-point-panels "$T/f/p2"
for bad in "ttft,itl" "ttft,ttft" "" "tpot,"; do
	expect_exit 2 "plot-panels-bad-$bad" "$B" plot cdf "$T/a" --panels "$bad" -o "$T/f/x"
done
expect_stderr plot-panels-bad-msg "--panels 'tpot,': unknown panel '' \(choices: ttft, tpot, e2e\)"
expect_exit 2 plot-panels-sweep "$B" plot throughput "$T/tput/sweep.csv" --panels ttft -o "$T/f/x"
e2e_done
