#!/usr/bin/env bash
# End-to-end tests of `bucketsim plot`: every kind renders non-empty PDF, SVG and PNG files from
# a small run; the data it plots is the sweep's (as many series and points, the mean over seeds),
# the capacity curve's, the requests' CDF and the buckets' uses; errors are clean.  The scripts
# run from their own directory and from a copy of it; line plots any column against another;
# labels follow the column names; --ci's bounds match a hand computation; --logx, --logy, --key
# are applied, checked and refused by the kinds that cannot honour them.
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
# gp_read GP PREFIX: each string expression following PREFIX in the script GP ('set ylabel ',
# 'title '), as gnuplot itself reads it back, one per line: the text the figure shows, whatever
# the script's quoting.
gp_read() {
	rm -f "$T/gp_read.out"
	{ echo "set print '$T/gp_read.out'"
	  perl -ne 'BEGIN { $p = shift @ARGV } while (/\Q$p\E("(?:[^"\\]|\\.)*"(?:\."(?:[^"\\]|\\.)*")*)/g) { print "print $1\n" }' "$2" "$1"; } |
		gnuplot 2>"$T/gp_read.err" && cat "$T/gp_read.out"
}
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
[ "$(gp_read "$T/f/throughput.gp" 'set ylabel ')" = 'output throughput (tokens/s)' ] && [ "$(gp_read "$T/f/throughput.gp" 'set xlabel ')" = 'server.max_num_seqs (requests)' ] \
	&& ok throughput-units || fail throughput-units "labels"
"$B" sweep "${W[@]}" --axis preset=vllm,distserve,bucketserve --axis workload.rate=5,20,80,160 -o "$T/r" 2>/dev/null
expect_exit 0 plot-attainment "$B" plot attainment "$T/r/sweep.csv" --target 0.8 -o "$T/f/att"
rendered attainment-rendered "$T/f/att"
[ "$(blocks "$T/f/att") $(block_rows "$T/f/att" 0) $(block_rows "$T/f/att" 1) $(block_rows "$T/f/att" 2)" = "3 4 4 4" ] \
	&& ok attainment-series-points || fail attainment-series-points "$(cat "$T/f/att.dat")"
grep -q 'first 0.8 to graph 1, first 0.8' "$T/f/att.gp" && ok attainment-target || fail attainment-target "no target line"
expect_exit 0 plot-waste "$B" plot waste "$T/s/sweep.csv" -o "$T/f/waste"
rendered waste-rendered "$T/f/waste"
# The CSV of `buckets --advise --budgets` (columns as it writes them, values by hand): one series
# per strategy by default, as --series strategy gives, not one line zigzagging across them.
printf 'strategy,budget,bucketing.version,knobs,compiles_warmup,padding_waste_ratio\nadvised,16,current,,28,0.25\nadvised,64,current,,104,0.5\nexponential,0,current,none,219,0.375\nlinear,16,current,X=1,20,0.75\nlinear,64,current,X=2,100,0.125\n' > "$T/adv.csv"
expect_exit 0 plot-waste-advise "$B" plot waste "$T/adv.csv" --script-only -o "$T/f/adv"
[ "$(tr '\n' '|' < "$T/f/adv.dat")" = "# strategy advised|28 0.25|104 0.5|||# strategy exponential|219 0.375|||# strategy linear|20 0.75|100 0.125|" ] \
	&& ok plot-waste-advise-series || fail plot-waste-advise-series "$(cat "$T/f/adv.dat")"
# x values spanning 10^4 and more get SI tick labels, a narrower span plain ones (below).
# --series: an empty or repeated column name is refused, not dropped
for v in "" "preset," "preset,,seed" "preset,preset"; do
	expect_exit 2 "plot-series-bad-$v" "$B" plot throughput "$T/s/sweep.csv" --series "$v" -o "$T/f/x"
done
# an empty x: a null metric leaves its row out; a configuration key a point did not set is an
# error saying why
printf 'workload.rate,seed,error,m,y\n1,1,,,2\n2,1,,5,3\n,1,,6,4\n' > "$T/ex.csv"
expect_exit 0 plot-x-null-metric "$B" plot line "$T/ex.csv" --x m --y y --script-only -o "$T/f/ex"
[ "$(awk 'NF && !/^#/' "$T/f/ex.dat" | wc -l)" -eq 2 ] && ok plot-x-null-metric-left-out || fail plot-x-null-metric-left-out "$(cat "$T/f/ex.dat")"
expect_exit 3 plot-x-config-empty "$B" plot line "$T/ex.csv" --x workload.rate --y y --script-only -o "$T/f/ex2"
expect_stderr plot-x-config-empty-msg "ex.csv:4: field 'workload.rate': x value empty: the point did not set this key"
# numbers as bucketsim reads them everywhere: no hexadecimal
printf 'workload.rate,seed,error,y\n1,1,,0x1p3\n' > "$T/hex.csv"
expect_exit 3 plot-hex-cell "$B" plot line "$T/hex.csv" --x workload.rate --y y -o "$T/f/x"
printf 'a,seed,error,n,y\n1,1,,100,0.5\n2,1,,20100,0.4\n' > "$T/wide.csv"
"$B" plot line "$T/wide.csv" --x n --y y --script-only -o "$T/f/wide"
"$B" plot line "$T/wide.csv" --x a --y y --script-only -o "$T/f/narrow"
grep -q 'set format x "%.0s%c"' "$T/f/wide.gp" && ! grep -q 'set format x' "$T/f/narrow.gp" \
	&& ok plot-si-ticks || fail plot-si-ticks "$(grep format "$T/f/wide.gp" "$T/f/narrow.gp")"
"$B" sweep "${W[@]}" --axis bucketing.strategy=exponential,linear,none -o "$T/c" 2>/dev/null
expect_exit 0 plot-compiles "$B" plot compiles "$T/c/sweep.csv" -o "$T/f/comp"
rendered compiles-rendered "$T/f/comp"
# Two panels of a run-time bar (warm-up + run time) and a warm-up bar over it, per strategy: the
# sweep's columns added by hand.
[ "$(blocks "$T/f/comp") $(block_rows "$T/f/comp" 0) $(block_rows "$T/f/comp" 1)" = "4 3 3" ] && ok compiles-bars || fail compiles-bars "$(cat "$T/f/comp.dat")"
cw=$(head -1 "$T/c/sweep.csv" | tr ',' '\n' | grep -nx compiles_warmup | cut -d: -f1)
cr=$(head -1 "$T/c/sweep.csv" | tr ',' '\n' | grep -nx compiles_runtime | cut -d: -f1)
want=$(awk -F, -v w="$cw" -v r="$cr" 'NR > 1 {printf "%s %s %s|", $1, $w + $r, $w}' "$T/c/sweep.csv")
got=$(awk '/^# / {b++; next} NF && b <= 2 {v[b, n[b]++] = $2} END {split("exponential linear none", c, " "); for (i = 0; i < 3; i++) printf "%s %.17g %.17g|", c[i + 1], v[1, i], v[2, i]}' "$T/f/comp.dat")
[ "$want" = "$got" ] && ok compiles-stacked-values || fail compiles-stacked-values "sweep $want, plot $got"
# Systems that differ in more than one column: listed points (one leaves the strategy to its
# default) times a rate axis.  Pooling rows of another configuration as seeds is refused,
# naming the column; --series takes several columns; compiles' default series is the preset.
printf '{"workload.num_requests": 60, "points": [{"preset": "vllm", "bucketing.strategy": "linear"}, {"preset": "vllm", "bucketing.strategy": "exponential"}, {"preset": "bucketserve"}]}\n' > "$T/sys.json"
"$B" sweep -f "$T/sys.json" --axis workload.rate=5,20 --seeds 2 -o "$T/m" 2>/dev/null
expect_exit 3 plot-pooled "$B" plot line "$T/m/sweep.csv" --x workload.rate --y p99_ttft_ms -o "$T/f/x"
expect_stderr plot-pooled-msg "sweep.csv:6: field 'bucketing.strategy': 'exponential' here, 'linear' on line 2: the two rows have the same x and series, and would be averaged as seeds of one point; name the column in --series \(e.g. --series preset,bucketing.strategy\)"
expect_exit 0 plot-series-two "$B" plot line "$T/m/sweep.csv" --x workload.rate --y p99_ttft_ms --series preset,bucketing.strategy --ci 0.9 --script-only -o "$T/f/two"
[ "$(grep '^# ' "$T/f/two.dat" | tr '\n' '|')" = "# vllm, strategy linear|# vllm, strategy exponential|# bucketserve, strategy default|" ] \
	&& ok plot-series-two-names || fail plot-series-two-names "$(grep '^# ' "$T/f/two.dat")"
gp_read "$T/f/two.gp" 'title ' | grep -qx "bucketserve, strategy default" && ok plot-series-two-title || fail plot-series-two-title "$(grep title "$T/f/two.gp")"
# Each point is the mean of its two seeds alone (n = 2), the sweep's rows averaged by hand.
c=$(head -1 "$T/m/sweep.csv" | tr ',' '\n' | grep -nx p99_ttft_ms | cut -d: -f1)
want=$(awk -F, -v c="$c" '$1 == 20 && $4 == "vllm" && $2 == "exponential" {s += $c; n++} END {printf "%.6g %d", s / n, n}' "$T/m/sweep.csv")
got=$(awk '/^# / {b++; next} b == 2 && $1 == 20 {printf "%.6g %d", $2, $5}' "$T/f/two.dat")
[ "$want" = "$got" ] && ok plot-series-two-mean || fail plot-series-two-mean "sweep $want, plot $got"
expect_exit 3 plot-compiles-pooled "$B" plot compiles "$T/m/sweep.csv" -o "$T/f/x"
expect_stderr plot-compiles-default-series "e.g. --series preset,workload.rate"

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
	grep -q "set arrow from first $cap, graph 0 to first $cap, graph 1" "$T/f/attc.gp" && gp_read "$T/f/attc.gp" 'title ' | grep -q "^$sys (capacity " \
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
# Every column of a panel has its tick (a label, or an unlabelled minor tick where labels are
# thinned), labels written under their columns.
i=0
for ph in prompt decode; do
	cols=$(awk -v p="$ph" '/^# / {cur = $2; next} cur == p && NF {print $1}' "$T/f/heat.dat" | sort -u | wc -l)
	ticks=$(grep 'set xtics (' "$T/f/heat.gp" | sed -n "$((i + 1))p" | grep -o '" [0-9]*' | wc -l)
	[ "$cols" -gt 0 ] && [ "$cols" = "$ticks" ] && ok "heatmap-ticks-$ph" || fail "heatmap-ticks-$ph" "$cols columns, $ticks ticks"
	i=$((i + 1))
done
grep -q 'rotate by 90 right' "$T/f/heat.gp" && ok heatmap-labels-under || fail heatmap-labels-under "$(grep xtics "$T/f/heat.gp")"
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

# Portable scripts: OUT.gp names its files by their base names and runs in its own directory,
# here, in a copy elsewhere, and when plot is run from another directory with a relative -o.
BABS=$(cd "$(dirname "$B")" && pwd)/$(basename "$B")
expect_exit 0 plot-portable-script "$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms --script-only -o "$T/f/port/p99"
grep -q '^out = "./p99"$' "$T/f/port/p99.gp" && ! grep -q "$T" "$T/f/port/p99.gp" && ok portable-base-names || fail portable-base-names "$(head -3 "$T/f/port/p99.gp")"
(cd "$T/f/port" && gnuplot p99.gp) 2>"$T/gnuplot.err"
rendered portable-own-dir "$T/f/port/p99"
mkdir -p "$T/elsewhere/deeper"
cp "$T/f/port/p99.gp" "$T/f/port/p99.dat" "$T/elsewhere/deeper/"
(cd "$T/elsewhere/deeper" && gnuplot p99.gp) 2>"$T/gnuplot.err"
rendered portable-copied-dir "$T/elsewhere/deeper/p99"
mkdir -p "$T/cwd"
(cd "$T/cwd" && "$BABS" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms -o rel/p99) >/dev/null 2>&1
rendered portable-relative-out "$T/cwd/rel/p99"
# As reported: --script-only with a relative OUT, then gnuplot run in OUT's directory.
(cd "$T/cwd" && "$BABS" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms --script-only -o fig/p99ttft \
	&& cd fig && gnuplot p99ttft.gp) >/dev/null 2>&1
rendered portable-as-reported "$T/cwd/fig/p99ttft"

# Text from the inputs reaches the script escaped, so that gnuplot runs no `command` (it runs
# one wherever a raw backquote is in a line) and reads every text back exactly: a title, a
# series cell and a directory name holding backquotes run nothing and show their backquotes; a
# newline in a series name is a newline of its title, neither ending the command nor adding data.
mkdir -p "$T/inj"
awk -F, -v OFS=, 'NR > 1 && $3 == "vllm" {$3 = "v`touch pwned1`"} NR > 1 && $3 == "distserve" {$3 = "d\"x"} {print}' "$T/r/sweep.csv" > "$T/inj/s.csv"
(cd "$T/inj" && "$BABS" plot line s.csv --x workload.rate --y p99_ttft_ms --title 'x`touch pwned2`' -o fig) >/dev/null 2>&1
cp -r "$T/a" "$T/inj/run\`touch pwned3\`"
(cd "$T/inj" && "$BABS" plot cdf "run\`touch pwned3\`" -o cdf) >/dev/null 2>&1
[ -z "$(find "$T/inj" -name 'pwned*')" ] && [ -s "$T/inj/fig.png" ] && [ -s "$T/inj/cdf.png" ] \
	&& ! grep -q '`' "$T/inj/fig.gp" "$T/inj/cdf.gp" \
	&& [ "$(gp_read "$T/inj/fig.gp" 'title ' | tr '\n' '|')" = 'x`touch pwned2`|v`touch pwned1`|d"x|bucketserve|' ] \
	&& [ "$(gp_read "$T/inj/cdf.gp" 'title ' | sort -u | tr '\n' '|')" = 'run`touch pwned3`|' ] && ok plot-no-command-substitution \
	|| fail plot-no-command-substitution "$(find "$T/inj" -name 'pwned*'; grep title "$T/inj/fig.gp")"
printf 'workload.rate,preset,seed,error,y\n1,"a\nb",1,,2\n2,"a\nb",1,,3\n' > "$T/inj/nl.csv"
"$B" plot line "$T/inj/nl.csv" --x workload.rate --y y --series preset --script-only -o "$T/inj/nl"
[ "$(grep -c '^# ' "$T/inj/nl.dat")" -eq 1 ] && grep -q "^# a b$" "$T/inj/nl.dat" && [ "$(awk 'NF && !/^#/' "$T/inj/nl.dat" | wc -l)" -eq 2 ] \
	&& [ "$(gp_read "$T/inj/nl.gp" 'title ')" = "$(printf 'a\nb')" ] && ok plot-newline-in-name || fail plot-newline-in-name "$(cat "$T/inj/nl.dat"; grep title "$T/inj/nl.gp")"

# Every text reaches gnuplot exactly (read back through gnuplot): quotes that single-quoted
# strings cannot hold (a leading one, two doubled in a row), backslashes, a newline, a tab, an
# escape character followed by a digit, a backquote, enhanced-text specials; in a title, an axis
# label, and a run directory's name (its cdf legend).  The figures render, and the SVG shows the
# specials as written (noenhanced: no sub- or superscript).
mkdir -p "$T/q"
odd=$(printf "'95 O''Brien \\\\n\\\\ a\"b\tc\033""1 %%s @x \`d\` a_b^c{d}&e\nline two")
(cd "$T/q" && "$BABS" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms --title "$odd" --ylabel "$odd" -o t) 2>"$T/q/err"
rendered plot-quotes-rendered "$T/q/t"
[ "$(gp_read "$T/q/t.gp" 'set title ')" = "$odd" ] && [ "$(gp_read "$T/q/t.gp" 'set ylabel ')" = "$odd" ] \
	&& ok plot-quotes-exact || fail plot-quotes-exact "$(grep 'set title' "$T/q/t.gp"; cat "$T/q/err" "$T/gp_read.err")"
grep -q '>line two<' "$T/q/t.svg" && grep -qF 'a_b^c{d}&amp;e' "$T/q/t.svg" && ok plot-quotes-noenhanced || fail plot-quotes-noenhanced "$(grep -c tspan "$T/q/t.svg") tspans"
for title in "'95 results" "O''Brien"; do
	(cd "$T/q" && "$BABS" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms --title "$title" -o q) >/dev/null 2>&1
	rendered "plot-quote-title-$title" "$T/q/q"
	[ "$(gp_read "$T/q/q.gp" 'set title ')" = "$title" ] && ok "plot-quote-title-exact-$title" || fail "plot-quote-title-exact-$title" "$(grep 'set title' "$T/q/q.gp")"
done
cp -r "$T/a" "$T/q/it''s"; cp -r "$T/a" "$T/q/back\\slash"
(cd "$T/q" && "$BABS" plot cdf "it''s" "back\\slash" -o cdf) 2>"$T/q/err"
rendered plot-quote-rundir "$T/q/cdf"
[ "$(gp_read "$T/q/cdf.gp" 'title ' | sort -u | tr '\n' '|')" = "back\\slash|it''s|" ] && ok plot-quote-rundir-exact || fail plot-quote-rundir-exact "$(grep title "$T/q/cdf.gp"; cat "$T/q/err")"

# -o names whose base starts with '<' or '|' (gnuplot reads "<cmd" as a command's output and
# writes to "|cmd" through a shell; on its command line and in OUT.gp): the figures are written
# under those names and no command runs.
mkdir -p "$T/inj2" "$T/inj2e"
for o in '<touch PWNED_IN' '|touch PWNED_OUT' '-V'; do
	(cd "$T/inj2" && "$BABS" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms -o "$o") >/dev/null 2>"$T/inj2e/err"
	rendered "plot-name-injection-$o" "$T/inj2/$o"
done
[ -z "$(ls "$T/inj2" | grep -v '^[<|-]')" ] && [ "$(ls -A "$T/inj2" | wc -l)" -eq 15 ] && ok plot-name-no-command || fail plot-name-no-command "$(ls -A "$T/inj2")"

# The figure files are one set: a gnuplot that fails (here one that writes an empty OUT.pdf
# and exits 1) leaves none of them, an earlier figure of the same name untouched, and no
# temporary; a killed plot's temporary directory (its PID no longer running) is removed by the
# next plot into that directory.
mkdir -p "$T/fset/bin" "$T/fset/out"
printf '#!/bin/sh\n: > fig.pdf\necho "gnuplot: failing" >&2\nexit 1\n' > "$T/fset/bin/gnuplot"; chmod +x "$T/fset/bin/gnuplot"
expect_exit 1 plot-set-fail env PATH="$T/fset/bin:$PATH" "$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms -o "$T/fset/out/fig"
[ -z "$(ls -A "$T/fset/out")" ] && ok plot-set-fail-nothing || fail plot-set-fail-nothing "$(ls -A "$T/fset/out")"
"$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms -o "$T/fset/out/fig"
cp -r "$T/fset/out" "$T/fset/before"
sh -c 'exit 0' & dead=$!; wait $dead
mkdir "$T/fset/out/.bucketsim.tmp.$dead"; : > "$T/fset/out/.bucketsim.tmp.$dead/fig.dat"
expect_exit 1 plot-set-fail-again env PATH="$T/fset/bin:$PATH" "$B" plot line "$T/r/sweep.csv" --x workload.rate --y mean_ttft_ms -o "$T/fset/out/fig"
diff -r "$T/fset/out" "$T/fset/before" >/dev/null && ok plot-set-fail-keeps-earlier || fail plot-set-fail-keeps-earlier "$(diff -r "$T/fset/out" "$T/fset/before" | head -3)"
expect_exit 0 plot-set-script-only "$B" plot line "$T/r/sweep.csv" --x workload.rate --y mean_ttft_ms --script-only -o "$T/fset/out/fig"
[ "$(ls -A "$T/fset/out" | tr '\n' ' ')" = "fig.dat fig.gp fig.pdf fig.png fig.svg " ] && ! cmp -s "$T/fset/out/fig.gp" "$T/fset/before/fig.gp" \
	&& ok plot-set-script-only-files || fail plot-set-script-only-files "$(ls -A "$T/fset/out")"

# A table's errors name its line: a NUL byte (line 3 of a sweep CSV; the quoted second line
# of a row does not count as a row) and a row shorter or longer than the header (the line it
# ends on).  Nothing is written.
mkdir -p "$T/tab"
printf 'workload.rate,trace,preset,seed,config_hash,error,mean_ttft_ms\n1,alpaca,vllm,1,h,,5\n2,alpaca,vllm,1,h,,5\0\n' > "$T/tab/nul.csv"
printf 'workload.rate,trace,preset,seed,config_hash,error,mean_ttft_ms\n1,alpaca,vllm,1,h,,5\n2,alpaca\n' > "$T/tab/ragged.csv"
printf 'workload.rate,trace,preset,seed,config_hash,error,mean_ttft_ms\n1,alpaca,"vl\nlm",1,h,,5\n2,alpaca,vllm,1,h,,5,9\n3,alpaca,vllm,1,h,,5\n' > "$T/tab/long.csv"
expect_exit 3 plot-table-nul "$B" plot line "$T/tab/nul.csv" --x workload.rate --y mean_ttft_ms -o "$T/tab/f"
expect_stderr plot-table-nul-msg "^bucketsim: error: .*/tab/nul.csv:3: NUL byte in the table$"
expect_exit 3 plot-table-ragged "$B" plot line "$T/tab/ragged.csv" --x workload.rate --y mean_ttft_ms -o "$T/tab/f"
expect_stderr plot-table-ragged-msg "^bucketsim: error: .*/tab/ragged.csv:3: a row of 2 fields, the header has 7"
expect_exit 3 plot-table-long "$B" plot line "$T/tab/long.csv" --x workload.rate --y mean_ttft_ms -o "$T/tab/f"
expect_stderr plot-table-long-msg "^bucketsim: error: .*/tab/long.csv:4: a row of 8 fields, the header has 7"
[ "$(ls "$T/tab" | tr '\n' ' ')" = "long.csv nul.csv ragged.csv " ] && ok plot-table-errors-write-nothing || fail plot-table-errors-write-nothing "$(ls "$T/tab")"

# line: the README's figure, p99 TTFT against the request rate, one line per system.
expect_exit 0 plot-line "$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms -o "$T/f/line"
rendered line-rendered "$T/f/line"
[ "$(blocks "$T/f/line") $(block_rows "$T/f/line" 0) $(block_rows "$T/f/line" 2)" = "3 4 4" ] && ok line-series-points || fail line-series-points "$(cat "$T/f/line.dat")"
c=$(head -1 "$T/r/sweep.csv" | tr ',' '\n' | grep -nx p99_ttft_ms | cut -d: -f1)
want=$(awk -F, -v c="$c" '$1 == 20 && $3 == "bucketserve" {printf "%.6g", $c}' "$T/r/sweep.csv")
got=$(awk '/^# / {b++; next} b == 3 && $1 == 20 {printf "%.6g", $2}' "$T/f/line.dat")
[ -n "$want" ] && [ "$want" = "$got" ] && ok line-value || fail line-value "sweep $want, plot $got"
[ "$(gp_read "$T/f/line.gp" 'set xlabel ')|$(gp_read "$T/f/line.gp" 'set ylabel ')" = "request rate (req/s)|p99 TTFT (ms)" ] && ok line-labels || fail line-labels "$(grep label "$T/f/line.gp")"
expect_exit 2 plot-line-no-y "$B" plot line "$T/r/sweep.csv" --x workload.rate -o "$T/f/x"
expect_stderr plot-line-no-y-msg "line needs --x COLUMN and --y COLUMN \(missing --y\); the columns of .*: workload.rate, .*p99_ttft_ms, "
expect_exit 2 plot-line-no-xy "$B" plot line "$T/r/sweep.csv" -o "$T/f/x"
expect_stderr plot-line-no-xy-msg "missing both"
expect_exit 3 plot-line-bad-y "$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft -o "$T/f/x"
expect_stderr plot-line-bad-y-msg "field 'p99_ttft': no such column \(columns: workload.rate, trace, preset, .*p99_ttft_ms"
[ "$(wc -l < "$T/stderr")" -eq 1 ] && ok plot-line-bad-y-one-line || fail plot-line-bad-y-one-line "$(cat "$T/stderr")"
[ ! -e "$T/f/x.gp" ] && ok plot-line-errors-write-nothing || fail plot-line-errors-write-nothing "x.gp written"

# Labels from column names (the rule itself: tests/check_plot_fig.c); --xlabel, --ylabel.
for pair in "mean_tpot_ms|mean TPOT (ms)" "request_throughput|request throughput (req/s)" "median_e2el_ms|median E2E latency (ms)" "kv_utilization_mean|KV utilization mean (fraction)"; do
	col=${pair%%|*}; lab=${pair#*|}
	"$B" plot line "$T/r/sweep.csv" --x workload.rate --y "$col" --script-only -o "$T/f/lab"
	[ "$(gp_read "$T/f/lab.gp" 'set ylabel ')" = "$lab" ] && ok "label-$col" || fail "label-$col" "$(grep ylabel "$T/f/lab.gp")"
done
"$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms --xlabel 'offered load (req/s)' --ylabel "tail \"TTFT\" it's" --script-only -o "$T/f/lab"
[ "$(gp_read "$T/f/lab.gp" 'set xlabel ')" = 'offered load (req/s)' ] && [ "$(gp_read "$T/f/lab.gp" 'set ylabel ')" = "tail \"TTFT\" it's" ] \
	&& [ "$(grep -c 'label' "$T/f/lab.gp")" -eq 2 ] && ok label-override || fail label-override "$(grep label "$T/f/lab.gp")"

# Confidence intervals over seeds, from a hand-made sweep: at rate 10 the values 1, 2, 3 (mean 2,
# s = 1, t(0.975, 2) = 4.302652729749464), at 20 the values 10, 14 (mean 12, s = 2 sqrt 2,
# t(0.975, 1) = 12.706204736174707; the third seed failed: left out), at 40 one seed (no bar).
cat >"$T/hand.csv" <<'CSV'
preset,workload.rate,seed,p99_ttft_ms,error
vllm,10,1,1,
vllm,10,2,2,
vllm,10,3,3,
vllm,20,1,10,
vllm,20,2,14,
vllm,20,3,99,run failed
vllm,40,1,5,
distserve,10,1,0,
distserve,20,1,4,
CSV
expect_exit 0 plot-ci "$B" plot line "$T/hand.csv" --x workload.rate --y p99_ttft_ms --ci 0.95 -o "$T/f/ci"
rendered ci-rendered "$T/f/ci"
want=$(awk 'BEGIN {
	h1 = 4.302652729749464 * 1 / sqrt(3); h2 = 12.706204736174707 * sqrt(8) / sqrt(2)
	printf "10 2 %.12g %.12g 3|20 12 %.12g %.12g 2|40 5 NaN NaN 1|10 0 NaN NaN 1|20 4 NaN NaN 1|", 2 - h1, 2 + h1, 12 - h2, 12 + h2 }')
got=$(awk '/^# / || !NF {next} {
	printf "%s %s", $1, $2
	for (i = 3; i <= 4; i++) printf " %s", ($i == "NaN" ? "NaN" : sprintf("%.12g", $i))
	printf " %s|", $5 }' "$T/f/ci.dat")
[ "$want" = "$got" ] && ok ci-dat-values || fail ci-dat-values "want $want, got $got"
[ "$want" = "10 2 -0.48413771175 4.48413771175 3|20 12 -13.4124094723 37.4124094723 2|40 5 NaN NaN 1|10 0 NaN NaN 1|20 4 NaN NaN 1|" ] \
	&& ok ci-hand-values || fail ci-hand-values "$want"
[ "$(grep -c 'using 1:2:3:4 with yerrorbars' "$T/f/ci.gp")" -eq 2 ] && ok ci-error-bars || fail ci-error-bars "$(grep plot -A3 "$T/f/ci.gp")"
"$B" plot line "$T/hand.csv" --x workload.rate --y p99_ttft_ms --script-only -o "$T/f/noci"
awk '/^# / || !NF {next} NF != 2 {exit 1}' "$T/f/noci.dat" && ! grep -q yerrorbars "$T/f/noci.gp" && ok ci-off-two-columns || fail ci-off-two-columns "$(cat "$T/f/noci.dat")"
expect_exit 0 plot-ci-throughput "$B" plot throughput "$T/s/sweep.csv" --ci 0.9 --script-only -o "$T/f/cit"
awk '/^# / || !NF {next} NF != 5 || $5 != 2 || !($3 <= $2 && $2 <= $4) {exit 1}' "$T/f/cit.dat" && ok ci-throughput-two-seeds || fail ci-throughput-two-seeds "$(cat "$T/f/cit.dat")"
for bad in 0 1 0.95x -0.5; do
	expect_exit 2 "plot-ci-bad-$bad" "$B" plot line "$T/hand.csv" --x workload.rate --y p99_ttft_ms --ci "$bad" -o "$T/f/x"
done
expect_stderr plot-ci-bad-msg "--ci: expected a level between 0 and 1"
expect_exit 2 plot-ci-capacity-dir "$B" plot attainment "$T/cap" --ci 0.95 -o "$T/f/x"

# Log axes: values > 0 on the axis, else an error naming the column; the kinds that refuse.
expect_exit 3 plot-logy-zero "$B" plot line "$T/hand.csv" --x workload.rate --y p99_ttft_ms --logy -o "$T/f/x"
expect_stderr plot-logy-zero-msg "hand.csv: field 'p99_ttft_ms': --logy needs values > 0 on the y axis, got 0 \(series 'distserve', x = 10\)"
sed 's/^vllm,40,/vllm,0,/' "$T/hand.csv" >"$T/hand0.csv"
expect_exit 3 plot-logx-zero "$B" plot line "$T/hand0.csv" --x workload.rate --y p99_ttft_ms --logx -o "$T/f/x"
expect_stderr plot-logx-zero-msg "field 'workload.rate': --logx needs values > 0 on the x axis, got 0"
expect_exit 0 plot-logxy "$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms --logx --logy --ci 0.95 -o "$T/f/log"
rendered logxy-rendered "$T/f/log"
grep -q 'set logscale x' "$T/f/log.gp" && grep -q 'set logscale y' "$T/f/log.gp" && ok logxy-script || fail logxy-script "$(grep logscale "$T/f/log.gp")"
"$B" plot attainment "$T/r/sweep.csv" --logx --script-only -o "$T/f/attlog"
grep -q 'set yrange \[0:1.05\]' "$T/f/attlog.gp" && grep -q 'set logscale x' "$T/f/attlog.gp" && ok attainment-logx || fail attainment-logx "$(grep -E 'range|logscale' "$T/f/attlog.gp")"
"$B" plot attainment "$T/cap" --logx --script-only -o "$T/f/caplog"
# the x range of a capacity directory on a log axis: from the lowest probe (padded) to 1.6 x the
# largest capacity
capmax=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(repr(1.6 * max(s['capacity_req_s'] for s in d['systems'])))" "$T/cap/capacity.json")
xr=$(sed -n 's/^  set xrange \[\([^:]*\):\([^]]*\)\]$/\1 \2/p' "$T/f/caplog.gp")
awk -v m="$capmax" -v r="$xr" 'BEGIN {split(r, a, " "); exit !(a[1] > 0 && a[1] < 50 && (a[2] - m) / m < 1e-8 && (m - a[2]) / m < 1e-8)}' \
	&& grep -q 'set logscale x' "$T/f/caplog.gp" && ok capacity-logx || fail capacity-logx "$capmax: $(grep -E 'range|logscale' "$T/f/caplog.gp")"
expect_exit 0 plot-cdf-logx "$B" plot cdf "$T/a" --logx --script-only -o "$T/f/cdflog"
expect_exit 2 plot-logx-compiles "$B" plot compiles "$T/c/sweep.csv" --logx -o "$T/f/x"
expect_stderr plot-logx-compiles-msg "--logx does not apply to a compiles plot"
expect_exit 2 plot-logy-cdf "$B" plot cdf "$T/a" --logy -o "$T/f/x"
expect_exit 2 plot-logy-heatmap "$B" plot heatmap "$T/a" --logy -o "$T/f/x"
expect_exit 2 plot-logx-timeline "$B" plot timeline "$T/a" --logx -o "$T/f/x"
expect_exit 2 plot-logy-bubbles "$B" plot bubbles "$T/pp" --logy -o "$T/f/x"
# the other options are refused by the kinds that do not use them, never ignored
expect_exit 2 plot-target-cdf "$B" plot cdf "$T/a" --target 0.5 -o "$T/f/x"
expect_stderr plot-target-cdf-msg "--target does not apply to a cdf plot"
expect_exit 2 plot-target-throughput "$B" plot throughput "$T/r/sweep.csv" --target 0.5 -o "$T/f/x"
expect_exit 2 plot-window-timeline "$B" plot timeline "$T/a" --window 1 -o "$T/f/x"
expect_stderr plot-window-timeline-msg "--window does not apply to a timeline plot"
expect_exit 2 plot-series-heatmap "$B" plot heatmap "$T/a" --series preset -o "$T/f/x"
expect_exit 2 plot-y-compiles "$B" plot compiles "$T/c/sweep.csv" --y warmup_s -o "$T/f/x"
expect_exit 2 plot-x-capacity-dir "$B" plot attainment "$T/cap" --x workload.rate -o "$T/f/x"
expect_stderr plot-x-capacity-dir-msg "capacity directory"
expect_exit 0 plot-window-bubbles "$B" plot bubbles "$T/pp" --window 0.5 --script-only -o "$T/f/bw"
expect_exit 2 plot-ylabel-compiles "$B" plot compiles "$T/c/sweep.csv" --ylabel y -o "$T/f/x"
expect_exit 2 plot-xlabel-cdf "$B" plot cdf "$T/a" --xlabel x -o "$T/f/x"
expect_exit 2 plot-ci-cdf "$B" plot cdf "$T/a" --ci 0.95 -o "$T/f/x"

# Legend position.
expect_exit 0 plot-key "$B" plot attainment "$T/r/sweep.csv" --key 'top right' -o "$T/f/key"
rendered key-rendered "$T/f/key"
awk '/^  set key inside top right$/ {f = 1} /^  plot / {exit !f}' "$T/f/key.gp" && ok key-after-kind-default || fail key-after-kind-default "$(grep key "$T/f/key.gp")"
"$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms --key off --script-only -o "$T/f/keyoff"
grep -q '^  unset key$' "$T/f/keyoff.gp" && ok key-off || fail key-off "$(grep key "$T/f/keyoff.gp")"
"$B" plot compiles "$T/c/sweep.csv" --key outside --script-only -o "$T/f/keyc"
[ "$(grep -c 'set key outside right top' "$T/f/keyc.gp")" -eq 2 ] && ok key-every-panel || fail key-every-panel "$(grep key "$T/f/keyc.gp")"
"$B" plot timeline "$T/a" --key below --script-only -o "$T/f/keyt"
[ "$(grep -c 'set key below' "$T/f/keyt.gp")" -eq 1 ] && ok key-timeline-first-panel || fail key-timeline-first-panel "$(grep key "$T/f/keyt.gp")"
expect_exit 2 plot-key-bad "$B" plot line "$T/r/sweep.csv" --x workload.rate --y p99_ttft_ms --key middle -o "$T/f/x"
expect_stderr plot-key-bad-msg "--key: unknown position 'middle' \(choices: 'top left', 'top center', 'top right', 'bottom left', 'bottom center', 'bottom right', 'outside', 'above', 'below', 'off'\)"
expect_exit 2 plot-key-heatmap "$B" plot heatmap "$T/a" --key 'top left' -o "$T/f/x"
expect_exit 2 plot-key-bubbles "$B" plot bubbles "$T/pp" --key off -o "$T/f/x"
# a text column on a numeric axis: the error quotes the value (it printed freed memory)
expect_exit 3 plot-line-text-x "$B" plot line "$T/s/sweep.csv" --x preset --y p99_ttft_ms -o "$T/f/x"
expect_stderr plot-line-text-x-msg "sweep.csv:2: field 'preset': x value '(vllm|distserve)' is not a number"
expect_exit 3 plot-line-text-y "$B" plot line "$T/s/sweep.csv" --x server.max_num_seqs --y trace -o "$T/f/x"
expect_stderr plot-line-text-y-msg "sweep.csv:2: field 'trace': 'alpaca' is not a finite number"
# a capacity.json without a field the plot reads: one error naming it (it crashed)
mkdir -p "$T/capbad"
sed '0,/"system":/s//"sys":/' "$T/cap/capacity.json" > "$T/capbad/capacity.json"
expect_exit 3 plot-capacity-bad "$B" plot attainment "$T/capbad" -o "$T/f/x"
expect_stderr plot-capacity-bad-msg "capbad/capacity.json: field 'systems\[0\].system': missing or not of its type"
# every refusal says which option and kind (exit 2 alone would also be a mistyped option)
for c in "cdf --logy" "heatmap --logy" "timeline --logx" "heatmap --key top\ left" "cdf --ci 0.9" "compiles --ylabel y" "cdf --xlabel x"; do
	set -- $c; k=$1; shift
	in="$T/a"; [ "$k" = compiles ] && in="$T/c/sweep.csv"
	eval "\"\$B\" plot $k \"\$in\" $* -o \"\$T/f/x\"" >"$E2E_TMP/stdout" 2>"$E2E_TMP/stderr"
	grep -q -- "${1} does not apply to a $k plot" "$E2E_TMP/stderr" && ok "plot-refuse-msg-$k-$1" || fail "plot-refuse-msg-$k-$1" "$(head -1 "$E2E_TMP/stderr")"
done
# Nothing to plot: one error line before any file is written (gnuplot failed, leaving OUT.dat,
# OUT.gp and a broken OUT.pdf, with its messages on stderr)
"$B" run -q --set sim.stop_s=0 --set monitor.interval_s=0.5 -o "$T/z0"
"$B" run -q --set sim.stop_s=0 --set bucketing.strategy=none -o "$T/zn"
"$B" run -q --set sim.stop_s=0 --set cluster.pp=2 --set workload.num_requests=10 -o "$T/zp"
"$B" run -q --set bucketing.strategy=unified --set workload.num_requests=20 -o "$T/zu"
empty_plot() { # NAME PATTERN ARGS...: exit 3, one line matching PATTERN, nothing written
	local name=$1 pat=$2; shift 2
	rm -rf "$T/fe"
	expect_exit 3 "$name" "$B" plot "$@" -o "$T/fe/x"
	expect_stderr "$name-msg" "$pat"
	[ "$(wc -l < "$T/stderr")" = 1 ] && ok "$name-one-line" || fail "$name-one-line" "$(cat "$T/stderr")"
	[ ! -e "$T/fe" ] && ok "$name-nothing-written" || fail "$name-nothing-written" "$(ls "$T/fe")"
}
empty_plot plot-empty-cdf "z0/requests.csv: field 'ttft_ms': no request has a value in this column \(no finished request\)" cdf "$T/z0"
empty_plot plot-empty-cdf-second "z0/requests.csv: field 'ttft_ms'" cdf "$T/a" "$T/z0"
empty_plot plot-empty-timeline "z0/monitor.csv: one sample only: nothing to plot" timeline "$T/z0"
empty_plot plot-empty-heatmap-unused "z0/buckets.csv: field 'uses': no pass ran at any bucket" heatmap "$T/z0"
empty_plot plot-empty-heatmap-none "zn/buckets.csv: field 'phase': no prompt or decode bucket" heatmap "$T/zn"
empty_plot plot-empty-heatmap-unified "zu/buckets.csv: field 'phase': no prompt or decode bucket" heatmap "$T/zu"
empty_plot plot-empty-bubbles "zp/batches.csv: no pass: nothing to plot" bubbles "$T/zp"
cp -r "$T/a" "$T/a1"
head -1 "$T/a/monitor.csv" > "$T/a1/monitor.csv"
empty_plot plot-empty-timeline-rows "a1/monitor.csv: no sample: nothing to plot" timeline "$T/a1"
# a sweep whose points all failed has no y to plot
printf '{"systems": [], "target": 0.8}\n' > "$T/capempty.json"; mkdir -p "$T/capempty"; mv "$T/capempty.json" "$T/capempty/capacity.json"
empty_plot plot-empty-capacity "capempty/capacity.json: field 'systems': no system" attainment "$T/capempty"
# OUT must name files: '' or a trailing '/' wrote hidden .dat and .gp files
AB=$(cd "$(dirname "$B")" && pwd)/$(basename "$B")
( cd "$T" && "$AB" plot cdf a -o '' ) >/dev/null 2>"$T/stderr"; rc=$?
[ $rc = 2 ] && [ ! -e "$T/.dat" ] && [ ! -e "$T/.gp" ] && ok plot-out-empty || fail plot-out-empty "exit $rc, $(ls -a "$T" | head)"
expect_stderr plot-out-empty-msg "-o OUT is a path prefix"
expect_exit 2 plot-out-slash "$B" plot cdf "$T/a" -o "$T/fs/"
[ ! -e "$T/fs" ] && ok plot-out-slash-clean || fail plot-out-slash-clean "$(ls -a "$T/fs")"
expect_exit 2 plot-out-dot "$B" plot cdf "$T/a" -o "$T/f/."
# a run directory without its .bucketsim.done is incomplete: refused, not plotted
cp -r "$T/a" "$T/inc"; rm "$T/inc/.bucketsim.done"
for k in cdf heatmap timeline; do
	expect_exit 3 "plot-incomplete-$k" "$B" plot $k "$T/inc" -o "$T/fi/x"
	expect_stderr "plot-incomplete-$k-msg" "inc: the run directory is incomplete \(no .bucketsim.done"
done
expect_exit 3 plot-incomplete-cdf-second "$B" plot cdf "$T/a" "$T/inc" -o "$T/fi/x"
[ ! -e "$T/fi" ] && ok plot-incomplete-nothing-written || fail plot-incomplete-nothing-written "$(ls "$T/fi")"
# A cell that is neither empty (a null metric, a failed point: left out) nor a finite number is
# an error naming the file, line and column (nan, inf, 1e999, abc were dropped unseen)
yc=$(head -1 "$T/s/sweep.csv" | tr ',' '\n' | grep -nx output_throughput | cut -d: -f1)
for bad in nan inf 1e999 abc; do
	awk -F, -v OFS=, -v c="$yc" -v v="$bad" 'NR == 3 { $c = v } 1' "$T/s/sweep.csv" > "$T/bad-$bad.csv"
	expect_exit 3 "plot-sweep-cell-$bad" "$B" plot throughput "$T/bad-$bad.csv" -o "$T/fb/x"
	expect_stderr "plot-sweep-cell-$bad-msg" "bad-$bad.csv:3: field 'output_throughput': '$bad' is not a finite number"
done
xc=$(head -1 "$T/s/sweep.csv" | tr ',' '\n' | grep -nx server.max_num_seqs | cut -d: -f1)
awk -F, -v OFS=, -v c="$xc" 'NR == 4 { $c = "inf" } 1' "$T/s/sweep.csv" > "$T/bad-x.csv"
expect_exit 3 plot-sweep-x-inf "$B" plot throughput "$T/bad-x.csv" -o "$T/fb/x"
expect_stderr plot-sweep-x-inf-msg "bad-x.csv:4: field 'server.max_num_seqs': x value 'inf' is not a number"
# an empty y cell is a null metric: that row is left out, the plot is drawn
awk -F, -v OFS=, -v c="$yc" 'NR == 3 { $c = "" } 1' "$T/s/sweep.csv" > "$T/null-y.csv"
expect_exit 0 plot-sweep-null-y "$B" plot throughput "$T/null-y.csv" --script-only -o "$T/fb/null"
[ ! -e "$T/fb/x.dat" ] && ok plot-sweep-cell-nothing-written || fail plot-sweep-cell-nothing-written "$(ls "$T/fb")"
tc=$(head -1 "$T/a/requests.csv" | tr ',' '\n' | grep -nx tpot_ms | cut -d: -f1)
for bad in nan inf 1e999 abc -3; do
	rm -rf "$T/rq"; cp -r "$T/a" "$T/rq"
	awk -F, -v OFS=, -v c="$tc" -v v="$bad" 'NR == 5 { $c = v } 1' "$T/a/requests.csv" > "$T/rq/requests.csv"
	expect_exit 3 "plot-cdf-cell-$bad" "$B" plot cdf "$T/rq" -o "$T/fb/x"
	expect_stderr "plot-cdf-cell-$bad-msg" "rq/requests.csv:5: field 'tpot_ms': "
done
rm -rf "$T/mo"; cp -r "$T/a" "$T/mo"
awk -F, -v OFS=, 'NR == 3 { $1 = "nan" } 1' "$T/a/monitor.csv" > "$T/mo/monitor.csv"
expect_exit 3 plot-timeline-cell-nan "$B" plot timeline "$T/mo" -o "$T/fb/x"
expect_stderr plot-timeline-cell-nan-msg "mo/monitor.csv:3: field 'time_s': 'nan' is not a finite number"
e2e_done
