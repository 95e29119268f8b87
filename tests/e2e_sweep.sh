#!/usr/bin/env bash
# End-to-end tests of `bucketsim sweep`: point order, seeds, agreement with `run`, worker count
# and resumption not changing a byte, failing points, configuration checked before any run,
# axes of any key (trace, preset, text keys as JSON lists), sweep files, and the GNU parallel
# path (--emit parallel, parallel, --collect) equal to -j byte for byte.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
A=(--trace alpaca --set workload.num_requests=300 --axis bucketing.strategy=exponential,none
   --axis workload.rate=2,20 --seeds 2)

expect_exit 0 sweep "$B" sweep "${A[@]}" -j 2 -o "$T/s"
[ "$(wc -l < "$T/s/sweep.csv")" -eq 9 ] && ok sweep-rows || fail sweep-rows "$(wc -l < "$T/s/sweep.csv") lines"
head -1 "$T/s/sweep.csv" | grep -q '^bucketing.strategy,workload.rate,trace,preset,seed,config_hash,error,completed,' \
	&& ok sweep-header || fail sweep-header "$(head -1 "$T/s/sweep.csv")"
order=$(tail -n +2 "$T/s/sweep.csv" | cut -d, -f1-5 | tr '\n' ' ')
want="exponential,2,alpaca,,1 exponential,2,alpaca,,2 exponential,20,alpaca,,1 exponential,20,alpaca,,2 none,2,alpaca,,1 none,2,alpaca,,2 none,20,alpaca,,1 none,20,alpaca,,2 "
[ "$order" = "$want" ] && ok sweep-order || fail sweep-order "$order"
# Non-tty progress: one line per point.
[ "$(grep -c '^sweep: [0-9]/8 point' "$T/stderr")" -eq 8 ] && ok sweep-progress-lines || fail sweep-progress-lines "$(head -3 "$T/stderr")"

# On a terminal (script(1) gives one): a progress line rewritten in place, with rate and ETA.
if command -v script >/dev/null; then
	script -qec "$B sweep --set workload.num_requests=50 --axis workload.rate=1,2,3 --metrics completed -j 1 -o $T/tty" /dev/null > "$T/tty.out"
	[ "$(tr '\r' '\n' < "$T/tty.out" | grep -cE '^sweep: [1-3]/3 points, [0-9.]+ points/s, ETA [0-9]+ s')" -eq 3 ] \
		&& ! grep -q 'point 0001' "$T/tty.out" && ok sweep-progress-tty || fail sweep-progress-tty "$(od -c "$T/tty.out" | head -5)"
fi

# A row equals the same configuration run alone (same double, and same config_hash).
expect_exit 0 run-point "$B" run --trace alpaca --set workload.num_requests=300 \
	--set bucketing.strategy=none --set workload.rate=20 --seed 2 \
	--set output.requests=false --set output.batches=false -o "$T/r"
col() { head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }
c=$(col "$T/s/sweep.csv" mean_ttft_ms)
mean=$(sed -n 's/^[[:space:]]*"mean_ttft_ms":[[:space:]]*\([^,]*\),$/\1/p' "$T/r/summary.json")
row=$(grep '^none,20,alpaca,,2,' "$T/s/sweep.csv" | cut -d, -f"$c")
awk -v a="$mean" -v b="$row" 'BEGIN {exit !(a + 0 == b + 0 && a > 0)}' \
	&& ok sweep-equals-run || fail sweep-equals-run "run $mean, sweep $row"
hash=$(sed -n 's/^[[:space:]]*"config_hash":[[:space:]]*"\([0-9a-f]*\)",$/\1/p' "$T/r/summary.json")
grep -q "^none,20,alpaca,,2,$hash,," "$T/s/sweep.csv" && ok sweep-hash || fail sweep-hash "$hash"

# One worker gives the same bytes as two.
expect_exit 0 sweep-j1 "$B" sweep "${A[@]}" -j 1 -o "$T/s1"
cmp -s "$T/s/sweep.csv" "$T/s1/sweep.csv" && ok sweep-j-independent || fail sweep-j-independent "differs"
# Without -o: the CSV on stdout, no directory left behind.
before=$(ls "${TMPDIR:-/tmp}" | grep -c bucketsim-sweep)
expect_exit 0 sweep-stdout "$B" sweep "${A[@]}" -j 2
cmp -s "$T/s/sweep.csv" "$T/stdout" && ok sweep-stdout-same || fail sweep-stdout-same "differs"
[ "$(ls "${TMPDIR:-/tmp}" | grep -c bucketsim-sweep)" -eq "$before" ] && ok sweep-tmp-removed || fail sweep-tmp-removed "left"

# Resumable: a rerun skips finished points; a removed point is run again, nothing else.
expect_exit 0 sweep-rerun "$B" sweep "${A[@]}" -j 2 -o "$T/s"
expect_stderr sweep-rerun-skips '^sweep: 8 of 8 points already finished'
rm -r "$T/s/points/0006"
expect_exit 0 sweep-resume "$B" sweep "${A[@]}" -j 2 -o "$T/s"
[ "$(grep -c 'point 0006 .* done' "$T/stderr")" -eq 1 ] && [ "$(grep -c ' done in ' "$T/stderr")" -eq 1 ] \
	&& ok sweep-resume-one || fail sweep-resume-one "$(cat "$T/stderr")"
cmp -s "$T/s/sweep.csv" "$T/s1/sweep.csv" && ok sweep-resume-same || fail sweep-resume-same "differs"
expect_exit 2 sweep-other-dir "$B" sweep --axis workload.rate=1,2 -o "$T/s"
expect_stderr sweep-other-dir-msg 'holds a different sweep'

# Metric selection.
expect_exit 0 sweep-metrics "$B" sweep --set workload.num_requests=100 --metrics completed,preemptions
[ "$(cut -d, -f1-3,5- "$T/stdout")" = "$(printf 'trace,preset,seed,error,completed,preemptions\nalpaca,,1,,100,0')" ] \
	&& ok sweep-metrics-out || fail sweep-metrics-out "$(cat "$T/stdout")"
expect_exit 2 sweep-bad-metric "$B" sweep --set workload.num_requests=10 --metrics nope -o "$T/m"
expect_stderr sweep-bad-metric-msg "field '--metrics': unknown metric 'nope'"
# Points that report different metrics (kv_fragmentation only with contiguous PA's block ids):
# the union of their columns, an empty cell where a point has none (the sweep failed with
# "unknown metric" though no --metrics was given).
expect_exit 0 sweep-metrics-union "$B" sweep --set workload.num_requests=20 --axis server.contiguous_pa=true,false
c=$(head -1 "$T/stdout" | tr ',' '\n' | grep -nx kv_fragmentation | cut -d: -f1)
[ -n "$c" ] && [ "$(cut -d, -f1,"$c" "$T/stdout" | tail -n +2 | tr '\n' ' ' | sed -E 's/true,[0-9.]+ /true,N /')" = "true,N false, " ] \
	&& ok sweep-metrics-union-cells || fail sweep-metrics-union-cells "$(cat "$T/stdout")"
expect_exit 2 sweep-metrics-none-reports "$B" sweep --set workload.num_requests=20 --axis server.contiguous_pa=true,false --metrics completed,nosuch
expect_stderr sweep-metrics-none-reports-msg "unknown metric 'nosuch': no point reports it"
# The points stay: the same sweep with a corrected list reuses them.
expect_exit 0 sweep-metric-fixed "$B" sweep --set workload.num_requests=10 --metrics completed -o "$T/m"
expect_stderr sweep-metric-reused '^sweep: 1 of 1 points already finished'
[ "$(cut -d, -f6 "$T/m/sweep.csv" | tr '\n' ' ')" = "completed 10 " ] && ok sweep-metric-fixed-csv || fail sweep-metric-fixed-csv "$(cat "$T/m/sweep.csv")"

# A failing point: its row holds the error, the others run, one error line naming the point.
printf 'timestamp,prompt_tokens,output_tokens\n0,10,x\n' > "$T/bad.csv"
expect_exit 3 sweep-point-fails "$B" sweep --axis "trace=alpaca,$T/bad.csv,alpaca" \
	--set workload.num_requests=20 --metrics completed
[ "$(sed -n 2p "$T/stdout" | cut -d, -f1,5-)" = "alpaca,,20" ] && ok sweep-fail-others-run || fail sweep-fail-others-run "$(cat "$T/stdout")"
[ "$(sed -n 4p "$T/stdout" | cut -d, -f1,5-)" = "alpaca,,20" ] && ok sweep-fail-later-runs || fail sweep-fail-later-runs "$(cat "$T/stdout")"
sed -n 3p "$T/stdout" | grep -q "bad.csv:2: field 'output_tokens': expected a non-negative integer" \
	&& ok sweep-fail-row || fail sweep-fail-row "$(sed -n 3p "$T/stdout")"
[ "$(grep -c '^bucketsim: error: ' "$T/stderr")" -eq 1 ] && [ "$(grep -vc '^sweep: ' "$T/stderr")" -eq 1 ] \
	&& ok sweep-fail-one-line || fail sweep-fail-one-line "$(cat "$T/stderr")"
expect_stderr sweep-fail-names-point "^bucketsim: error: 1 of the sweep's points failed; first: point 0002 \(trace=.*bad.csv seed=1\)"

# Configuration rules are checked for every point before the first run; nothing is left.
expect_exit 3 sweep-rule "$B" sweep --axis server.max_num_seqs=8,4096 -o "$T/bad3"
[ ! -e "$T/bad3" ] && ok sweep-rule-clean || fail sweep-rule-clean "directory left"
expect_stderr sweep-rule-point "point 0002 \(server.max_num_seqs=4096 seed=1\)"
[ "$(wc -l < "$T/stderr")" -eq 1 ] && ok sweep-rule-one-line || fail sweep-rule-one-line "$(cat "$T/stderr")"
expect_exit 2 sweep-bad-value "$B" sweep --axis workload.rate=1,x -o "$T/bad"
[ ! -e "$T/bad" ] && ok sweep-bad-clean || fail sweep-bad-clean "directory left"

# Axes: --grid refused; a text key takes a JSON list; trace and preset as axes.
expect_exit 2 sweep-grid "$B" sweep --grid workload.mix=alpaca:0.8,longbench:0.2
expect_stderr sweep-grid-msg 'replaced by --axis'
expect_exit 2 sweep-text-commas "$B" sweep --axis workload.mix=alpaca:0.8,longbench:0.2
expect_exit 0 sweep-json-list "$B" sweep --axis 'workload.mix=["alpaca:0.8,longbench:0.2","alpaca:1"]' \
	--set workload.num_requests=20 --metrics completed
[ "$(sed 's/,[0-9a-f]\{16\},/,H,/' "$T/stdout" | tail -n +2)" = "$(printf '"alpaca:0.8,longbench:0.2",,,1,H,,20\nalpaca:1,,,1,H,,20')" ] \
	&& ok sweep-json-list-rows || fail sweep-json-list-rows "$(cat "$T/stdout")"
expect_exit 0 sweep-preset-axis "$B" sweep --axis trace=alpaca,longbench --axis preset=vllm,distserve \
	--set workload.num_requests=20 --metrics instances
[ "$(cut -d, -f1-3,6 "$T/stdout" | tail -n +2 | tr '\n' ' ')" = "alpaca,vllm,1,1 alpaca,distserve,1,2 longbench,vllm,1,1 longbench,distserve,1,2 " ] \
	&& ok sweep-preset-rows || fail sweep-preset-rows "$(cat "$T/stdout")"
expect_exit 0 sweep-seed-axis "$B" sweep --axis seed=5,9 --set workload.num_requests=10 --metrics completed
[ "$(cut -d, -f3 "$T/stdout" | tail -n +2 | tr '\n' ' ')" = "5 9 " ] && ok sweep-seed-rows || fail sweep-seed-rows "$(cat "$T/stdout")"
expect_exit 2 sweep-preset-twice "$B" sweep --preset bucketserve --axis preset=vllm,distserve
expect_exit 2 sweep-seed-twice "$B" sweep --axis seed=5,9 --seeds 2

# An input file that changed makes another sweep, not a resumption with stale points.
printf '{"server.max_num_seqs": 32}\n' > "$T/cfg.json"
expect_exit 0 sweep-cfg "$B" sweep -c "$T/cfg.json" --set workload.num_requests=10 -o "$T/cfg"
expect_exit 0 sweep-cfg-same "$B" sweep -c "$T/cfg.json" --set workload.num_requests=10 -o "$T/cfg"
printf '{"server.max_num_seqs": 16}\n' > "$T/cfg.json"
expect_exit 2 sweep-cfg-changed "$B" sweep -c "$T/cfg.json" --set workload.num_requests=10 -o "$T/cfg"
expect_stderr sweep-cfg-changed-msg 'holds a different sweep'

# Sweep files: listed points in their order over a base configuration; a grid.
cat > "$T/pts.json" <<'EOF'
{"server": {"max_num_seqs": 64}, "workload.num_requests": 50, "trace": "alpaca",
 "points": [{"preset": "distserve", "workload.rate": 10}, {"preset": "vllm", "workload.rate": 5}]}
EOF
expect_exit 0 sweep-file-points "$B" sweep -f "$T/pts.json" -o "$T/f" --metrics completed,instances
[ "$(cut -d, -f1-3,7- "$T/f/sweep.csv")" = "$(printf 'workload.rate,trace,preset,completed,instances\n10,alpaca,distserve,50,2\n5,alpaca,vllm,50,1')" ] \
	&& ok sweep-file-points-rows || fail sweep-file-points-rows "$(cat "$T/f/sweep.csv")"
grep -q '"server.max_num_seqs":[[:space:]]*64,' "$T/f/points/0001/summary.json" && ok sweep-file-base || fail sweep-file-base "base not applied"
# Another sweep file in the same directory is refused, and its base leaves the first intact.
sed 's/"max_num_seqs": 64/"max_num_seqs": 32/' "$T/pts.json" > "$T/pts2.json"
cp "$T/f/base.json" "$T/base.before"
expect_exit 2 sweep-file-other "$B" sweep -f "$T/pts2.json" -o "$T/f"
cmp -s "$T/f/base.json" "$T/base.before" && ok sweep-file-base-kept || fail sweep-file-base-kept "overwritten"
expect_exit 2 sweep-file-into-other-dir "$B" sweep -f "$T/pts.json" -o "$T/s1"
[ ! -e "$T/s1/base.json" ] && ok sweep-file-into-other-clean || fail sweep-file-into-other-clean "base.json left"
printf '{"workload.num_requests": 30, "axes": {"workload.rate": [1, 2.5], "bucketing.strategy": ["linear"]}, "seeds": 2}\n' > "$T/grid.json"
expect_exit 0 sweep-file-grid "$B" sweep -f "$T/grid.json" --metrics completed
[ "$(cut -d, -f1,2,5,8 "$T/stdout" | tail -n +2 | tr '\n' ' ')" = "1,linear,1,30 1,linear,2,30 2.5,linear,1,30 2.5,linear,2,30 " ] \
	&& ok sweep-file-grid-rows || fail sweep-file-grid-rows "$(cat "$T/stdout")"
# Listed points times --axis: every point at every axis value (the point slowest), each run at
# its rate (the run's duration shrinks with it); a key in both places is refused.
printf '{"workload.num_requests": 40, "points": [{"bucketing.strategy": "linear"}, {"bucketing.strategy": "exponential"}]}\n' > "$T/px.json"
expect_exit 0 sweep-points-axis "$B" sweep -f "$T/px.json" --axis workload.rate=2,50 --metrics completed,request_throughput
[ "$(cut -d, -f1,2,8 "$T/stdout" | tr '\n' ' ')" = "workload.rate,bucketing.strategy,completed 2,linear,40 50,linear,40 2,exponential,40 50,exponential,40 " ] \
	&& ok sweep-points-axis-rows || fail sweep-points-axis-rows "$(cat "$T/stdout")"
awk -F, 'NR > 1 && (($1 == 2 && ($9 < 1 || $9 > 3)) || ($1 == 50 && $9 < 5)) { bad = 1 } END { exit bad }' "$T/stdout" \
	&& ok sweep-points-axis-applied || fail sweep-points-axis-applied "$(cat "$T/stdout")"
expect_exit 2 sweep-points-axis-twice "$B" sweep -f "$T/px.json" --axis bucketing.strategy=linear
expect_stderr sweep-points-axis-twice-msg "px.json: field 'bucketing.strategy': set by the sweep file's points and by an axis"
# The file's "trace", "seed" and "seeds" act as the options: given both ways, refused (the file's
# seeds won over --seeds, --trace over the file's trace, silently).
printf '{"seeds": 2, "seed": 4, "trace": "longbench", "workload.num_requests": 10, "axes": {"workload.rate": [1]}}\n' > "$T/fo.json"
for o in "--seeds 3" "--seed 5" "--trace alpaca"; do
	n=${o%% *}; n=${n#--}
	expect_exit 2 "sweep-file-and-$n" "$B" sweep -f "$T/fo.json" $o
	expect_stderr "sweep-file-and-$n-msg" "fo.json: field '$n': given by the sweep file and by --$n: give it in one place"
done
printf '{"axes": {"workload.rate": [1]}, "points": [{}]}\n' > "$T/both.json"
expect_exit 3 sweep-file-both "$B" sweep -f "$T/both.json"

# GNU parallel: --emit parallel's commands, run by parallel, merged by --collect, equal -j.
expect_exit 2 sweep-emit-needs-o "$B" sweep "${A[@]}" --emit parallel
"$B" sweep "${A[@]}" -o "$T/p" --emit parallel > "$T/cmds" 2>"$T/stderr"
[ "$(wc -l < "$T/cmds")" -eq 8 ] && ok emit-lines || fail emit-lines "$(wc -l < "$T/cmds")"
if command -v parallel >/dev/null; then
	parallel --will-cite -j 2 --joblog "$T/joblog" < "$T/cmds" && ok parallel-ran || fail parallel-ran "exit $?"
	[ "$(tail -n +2 "$T/joblog" | awk '$7 == 0' | wc -l)" -eq 8 ] && ok parallel-joblog || fail parallel-joblog "$(cat "$T/joblog")"
	# the emitted commands keep a point's NNNN.err only when the run wrote to it, as -j does
	[ "$(ls "$T/p/points" | tr '\n' ' ')" = "0001 0002 0003 0004 0005 0006 0007 0008 " ] && ok parallel-no-empty-err || fail parallel-no-empty-err "$(ls "$T/p/points" | tr '\n' ' ')"
	expect_exit 0 collect "$B" sweep --collect "$T/p"
	cmp -s "$T/s/sweep.csv" "$T/p/sweep.csv" && ok parallel-equals-j || fail parallel-equals-j "$(diff "$T/s/sweep.csv" "$T/p/sweep.csv" | head -3)"
	# A rerun of --emit prints only the unfinished points.
	rm -r "$T/p/points/0003"
	"$B" sweep "${A[@]}" -o "$T/p" --emit parallel > "$T/cmds2"
	[ "$(wc -l < "$T/cmds2")" -eq 1 ] && grep -q 'points/0003 ' "$T/cmds2" && ok emit-resume || fail emit-resume "$(cat "$T/cmds2")"
else
	fail parallel-ran "GNU parallel not installed (make deps)"
fi
expect_exit 0 sweep-help "$B" sweep --help
# The files a configuration names by a key (a mix's traces, a hardware profile) are inputs of
# the sweep: changed, a rerun is refused naming the file; relative, every point's words (and
# emitted commands) name them by their absolute path, so they run from any directory.
mkdir -p "$T/rel/sub"
AB=$(cd "$(dirname "$B")" && pwd)/$(basename "$B")
head -30 workloads/data/alpaca.csv > "$T/rel/m.csv"
cp models/data/gaudi2.json "$T/rel/myhw.json"
REL=(sweep --set workload.mix=m.csv:1 --set hardware=myhw.json --set workload.num_requests=20 --axis workload.rate=1,2)
( cd "$T/rel" && "$AB" "${REL[@]}" -o D ) >/dev/null 2>&1 && ok sweep-rel || fail sweep-rel "exit $?"
grep -q "\"$T/rel/m.csv\":" "$T/rel/D/sweep.json" && ok sweep-mix-input || fail sweep-mix-input "$(grep -A4 inputs "$T/rel/D/sweep.json")"
sed -i '2s/^\([0-9]*\),[0-9]*,/\1,999,/' "$T/rel/m.csv"
( cd "$T/rel" && "$AB" "${REL[@]}" -o D ) >"$E2E_TMP/stdout" 2>"$E2E_TMP/stderr"; rc=$?
[ $rc = 2 ] && ok sweep-mix-changed || fail sweep-mix-changed "exit $rc"
expect_stderr sweep-mix-changed-msg "input file $T/rel/m.csv changed since it was written"
( cd "$T/rel" && "$AB" "${REL[@]}" -o E --emit parallel ) > "$T/rel/cmds.txt" 2>/dev/null
( cd "$T/rel/sub" && bash -c "$(head -1 "$T/rel/cmds.txt")" ) && [ -f "$T/rel/E/points/0001/summary.json" ] \
	&& ok sweep-emit-elsewhere || fail sweep-emit-elsewhere "$(cat "$T/rel/E/points/0001.err" 2>/dev/null)"
# the same for an --env variable naming a file (VLLM_BUCKETING_FROM_FILE): hashed, and set
# again with its absolute path (it was left relative: the command failed from elsewhere)
printf '(1, 128, 0)\n(1, 256, 0)\n(8, 1, 64)\n(16, 1, 128)\n' > "$T/rel/b.txt"
RELB=(sweep --env VLLM_BUCKETING_FROM_FILE=b.txt --set workload.num_requests=20 --axis workload.rate=1)
( cd "$T/rel" && "$AB" "${RELB[@]}" -o F --emit parallel ) > "$T/rel/cmdsb.txt" 2>/dev/null
grep -q -- "--env VLLM_BUCKETING_FROM_FILE=$T/rel/b.txt" "$T/rel/cmdsb.txt" && grep -q "\"$T/rel/b.txt\":" "$T/rel/F/sweep.json" \
	&& ok sweep-env-file-abs || fail sweep-env-file-abs "$(cat "$T/rel/cmdsb.txt")"
( cd "$T/rel/sub" && bash -c "$(head -1 "$T/rel/cmdsb.txt")" ) && grep -q '"strategy":	"file"' "$T/rel/F/points/0001/summary.json" \
	&& ok sweep-env-file-elsewhere || fail sweep-env-file-elsewhere "$(cat "$T/rel/F/points/0001.err" 2>/dev/null)"
# a bundled name stays a name even when a file of that name is in the directory
touch "$T/rel/alpaca"
( cd "$T/rel" && "$AB" sweep --set workload.mix=alpaca:1 --set workload.num_requests=10 --axis workload.rate=1 -o N ) >/dev/null 2>&1
grep -q "$T/rel/alpaca" "$T/rel/N/sweep.json" && fail sweep-bundled-name "alpaca taken as $T/rel/alpaca" || ok sweep-bundled-name
# Slurm: at most 1000 array tasks (the default MaxArraySize is 1001), each running its share
# of consecutive points: 2002 points give 668 tasks of 3 (with a task time that the estimate
# of one point already exceeds); the last task runs the last point
"$B" sweep --set workload.num_requests=5 --axis workload.rate=$(seq -s, 1 1001) --seeds 2 -o "$T/big" --emit slurm --task-seconds 0.001 >/dev/null 2>&1
grep -q '^#SBATCH --array=1-668$' "$T/big/sweep.sbatch" && grep -q '^per=3$' "$T/big/sweep.sbatch" && [ "$(wc -l < "$T/big/commands.txt")" = 2002 ] \
	&& ok slurm-chunks || fail slurm-chunks "$(grep -E 'array|^per' "$T/big/sweep.sbatch")"
SLURM_ARRAY_TASK_ID=668 sh "$T/big/sweep.sbatch" && [ -f "$T/big/points/2002/summary.json" ] && [ ! -e "$T/big/points/2001/summary.json" ] \
	&& ok slurm-last-task || fail slurm-last-task "$(ls "$T/big/points" | tail -3)"
SLURM_ARRAY_TASK_ID=1 sh "$T/big/sweep.sbatch" && [ -f "$T/big/points/0003/summary.json" ] && [ ! -e "$T/big/points/0004/summary.json" ] \
	&& ok slurm-first-task || fail slurm-first-task "$(ls "$T/big/points" | head -4)"
# a rerun emits only what is left
"$B" sweep --set workload.num_requests=5 --axis workload.rate=$(seq -s, 1 1001) --seeds 2 -o "$T/big" --emit slurm --task-seconds 0.001 >/dev/null 2>&1
[ "$(wc -l < "$T/big/commands.txt")" = 1998 ] && grep -q '^# bucketsim sweep: 1998 unfinished points' "$T/big/sweep.sbatch" \
	&& ok slurm-rerun-left || fail slurm-rerun-left "$(wc -l < "$T/big/commands.txt")"
# Points per array task by the time estimate (sim/README.md: 0.02 s + 1 us a request, and
# --task-seconds, default 600): 10 points of 100000 requests are 0.12 s each, 5000 to a task
# of 600 s: one task runs them all; within 0.5 s, floor(0.5 / 0.12) = 4 a task, 3 tasks.
NL=$'\n'
SL=(--set workload.num_requests=100000 --axis workload.rate=$(seq -s, 1 10))
"$B" sweep "${SL[@]}" -o "$T/est1" --emit slurm >/dev/null 2>&1
[ "$(grep -E '^(#SBATCH --array|per)=?' "$T/est1/sweep.sbatch" | tr '\n' ' ')" = "#SBATCH --array=1-1 per=10 " ] \
	&& ok slurm-estimate-one-task || fail slurm-estimate-one-task "$(head -12 "$T/est1/sweep.sbatch")"
"$B" sweep "${SL[@]}" -o "$T/est2" --emit slurm --task-seconds 0.5 >/dev/null 2>&1
[ "$(grep -E '^(#SBATCH --array|per)=?' "$T/est2/sweep.sbatch" | tr '\n' ' ')" = "#SBATCH --array=1-3 per=4 " ] \
	&& grep -qx '# estimated at most 0.12 s a point (0.02 s + 1e-06 s a request), 0.48 s a task' "$T/est2/sweep.sbatch" \
	&& ok slurm-estimate-tasks || fail slurm-estimate-tasks "$(head -12 "$T/est2/sweep.sbatch")"
# an automatic request count is the workload's: alpaca's 5000 rows, 0.025 s a point, 4 in 0.11 s
"$B" sweep --trace alpaca --axis workload.rate=$(seq -s, 1 10) -o "$T/est3" --emit slurm --task-seconds 0.11 >/dev/null 2>&1
grep -q '^per=4$' "$T/est3/sweep.sbatch" && ok slurm-estimate-trace-rows || fail slurm-estimate-trace-rows "$(head -12 "$T/est3/sweep.sbatch")"
# sbatch options pass through, after the script's own; its log names carry the job id (%A)
"$B" sweep "${SL[@]}" -o "$T/sb" --emit slurm --sbatch --time=01:00:00 --sbatch '--account=my proj' --sbatch '-J mine' >/dev/null 2>&1
[ "$(grep '^#SBATCH' "$T/sb/sweep.sbatch" | tr '\n' '|')" = "#SBATCH --array=1-1|#SBATCH --output=$T/sb/points/slurm-%A_%a.out|#SBATCH --time=01:00:00|#SBATCH --account=my proj|#SBATCH -J mine|" ] \
	&& ok slurm-sbatch-options || fail slurm-sbatch-options "$(grep '^#SBATCH' "$T/sb/sweep.sbatch")"
grep -qx "#SBATCH --output=$T/est1/points/slurm-%A_%a.out" "$T/est1/sweep.sbatch" && grep -qx '#SBATCH --job-name=bucketsim-sweep' "$T/est1/sweep.sbatch" \
	&& ok slurm-log-job-id || fail slurm-log-job-id "$(grep '^#SBATCH' "$T/est1/sweep.sbatch")"
expect_exit 2 slurm-sbatch-needs-slurm "$B" sweep "${SL[@]}" -o "$T/sb2" --emit parallel --sbatch --time=1
expect_stderr slurm-sbatch-needs-slurm-msg "error: --sbatch is for --emit slurm"
expect_exit 2 slurm-sbatch-array "$B" sweep "${SL[@]}" -o "$T/sb3" --emit slurm --sbatch --array=1-5
expect_stderr slurm-sbatch-array-msg "error: --sbatch --array=1-5: the script sets the job array and its log"
expect_exit 2 slurm-sbatch-output "$B" sweep "${SL[@]}" -o "$T/sb3" --emit slurm --sbatch "-o x.log"
expect_exit 2 slurm-sbatch-not-option "$B" sweep "${SL[@]}" -o "$T/sb3" --emit slurm --sbatch time=1
expect_stderr slurm-sbatch-not-option-msg "error: --sbatch takes an sbatch option beginning with '-'"
expect_exit 2 slurm-sbatch-newline "$B" sweep "${SL[@]}" -o "$T/sb3" --emit slurm --sbatch "--time=1${NL}touch $T/PWNED2"
expect_stderr slurm-sbatch-newline-msg "field '--emit': --sbatch '--time=1\\\\x0atouch .*' holds a control character \(\\\\x0a\)"
[ ! -e "$T/sb3" ] && [ ! -e "$T/PWNED2" ] && ok slurm-sbatch-nothing || fail slurm-sbatch-nothing "$(ls "$T/sb3" 2>&1)"
# --no-batches as for run: what it sets, in its place among the options
"$B" sweep --set output.batches=true --no-batches --set workload.num_requests=10 --axis workload.rate=1 -o "$T/nb" >/dev/null 2>&1 \
	&& [ -f "$T/nb/points/0001/summary.json" ] && [ ! -e "$T/nb/points/0001/batches.csv" ] && ok sweep-no-batches || fail sweep-no-batches "$(ls "$T/nb/points/0001" 2>&1)"
# a sweep killed with SIGKILL takes its workers with it; successful points leave no empty .err
"$B" sweep --set workload.num_requests=2000000 --axis workload.rate=10,20 -j 2 -o "$T/kill" >/dev/null 2>&1 &
spid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ "$(pgrep -f "$T/kill/points" | wc -l)" -ge 2 ] && break; sleep 0.2; done
kill -9 $spid; wait $spid 2>/dev/null
sleep 1
[ "$(pgrep -f "$T/kill/points" | wc -l)" = 0 ] && ok sweep-kill-workers || { fail sweep-kill-workers "$(pgrep -af "$T/kill/points")"; pkill -f "$T/kill/points"; }
# SIGINT or SIGTERM sent to the sweep alone (not to a terminal's process group) stops its
# running points too, which remove their temporaries; the status is 128 + the signal
for sig in INT TERM; do
	"$B" sweep --set workload.num_requests=2000000 --axis workload.rate=10,20 -j 2 -o "$T/sig$sig" >/dev/null 2>"$T/sig.err" &
	spid=$!
	for _ in $(seq 1 50); do [ "$(pgrep -f "$T/sig$sig/points" | wc -l)" -ge 2 ] && break; sleep 0.1; done
	t0=$EPOCHREALTIME
	kill -$sig $spid; wait $spid; rc=$?
	dt=$(echo "$EPOCHREALTIME - $t0" | bc -l)
	want=$((128 + $(kill -l $sig)))
	[ $rc = $want ] && [ "$(echo "$dt < 3" | bc -l)" = 1 ] && [ "$(pgrep -f "$T/sig$sig/points" | wc -l)" = 0 ] \
		&& [ -z "$(ls -A "$T/sig$sig/points")" ] && ok "sweep-sig$sig-stops-points" \
		|| { fail "sweep-sig$sig-stops-points" "rc $rc (want $want), ${dt}s, $(ls -A "$T/sig$sig/points")"; pkill -f "$T/sig$sig/points"; }
	# the interrupted points are reported stopped, not failed
	[ "$(grep -c '^sweep: [12]/2 point 000[12] (workload.rate=[12]0 seed=1) stopped in' "$T/sig.err")" = 2 ] \
		&& ! grep -q failed "$T/sig.err" && ok "sweep-sig$sig-says-stopped" || fail "sweep-sig$sig-says-stopped" "$(cat "$T/sig.err")"
done
"$B" sweep --set workload.num_requests=10 --axis workload.rate=1,2 -o "$T/noerr" >/dev/null 2>&1
[ -f "$T/noerr/points/0001/summary.json" ] && [ ! -e "$T/noerr/points/0001.err" ] && ok sweep-no-empty-err || fail sweep-no-empty-err "$(ls "$T/noerr/points")"
# --strict takes no argument: it is given to every point's run (the sweep crashed on it), and
# under it a key set but never read is refused for the point before any run, nothing left
expect_exit 0 sweep-strict "$B" sweep --strict --set workload.num_requests=10 --axis workload.rate=1,2 -o "$T/strict"
[ "$(grep -c '"--strict"' "$T/strict/sweep.json")" = 2 ] && ok sweep-strict-words || fail sweep-strict-words "$(grep -A12 '"run"' "$T/strict/sweep.json" | head -14)"
expect_exit 3 sweep-strict-unread "$B" sweep --strict --set cluster.prefill_instances=2 --axis workload.rate=1,2 -o "$T/strict2"
expect_stderr sweep-strict-unread-msg "field 'cluster.prefill_instances': point 0001 \(workload.rate=1 seed=1\): set but never read"
[ ! -e "$T/strict2" ] && ok sweep-strict-clean || fail sweep-strict-clean "directory left"
"$B" sweep --strict --set workload.num_requests=10 --axis workload.rate=1 -o "$T/strict3" --emit parallel > "$T/cmds.strict" 2>/dev/null
grep -q -- ' --strict ' "$T/cmds.strict" && ok sweep-strict-emit || fail sweep-strict-emit "$(cat "$T/cmds.strict")"
expect_exit 0 sweep-unread-warns "$B" sweep --set cluster.prefill_instances=2 --set workload.num_requests=10 --axis workload.rate=1 --metrics completed
# An axis value that is not a scalar: one error (the list was freed twice)
expect_exit 2 sweep-axis-null "$B" sweep --axis 'workload.rate=[5, null]'
expect_stderr sweep-axis-null-msg "field 'workload.rate': axis values must be strings, numbers or booleans"
expect_exit 2 sweep-axis-nested "$B" sweep --axis 'workload.rate=[5, [1]]'
expect_exit 2 sweep-axis-trailing "$B" sweep --axis 'workload.rate=[5],7'
# What a point would override, given once for all, is refused (it was dropped unseen): --set,
# --env or --trace of a key an axis or a listed point sets
expect_exit 2 sweep-set-axis "$B" sweep --axis workload.rate=5 --set workload.rate=10
expect_stderr sweep-set-axis-msg "field 'workload.rate': given by --set workload.rate=10 and by an axis"
expect_exit 2 sweep-env-axis "$B" sweep --axis env.VLLM_BUCKETING_STRATEGY=lin --env VLLM_BUCKETING_STRATEGY=exp
expect_exit 2 sweep-trace-axis "$B" sweep --trace longbench --axis trace=alpaca
printf '{"points": [{"workload.rate": 2}]}\n' > "$T/pset.json"
expect_exit 2 sweep-set-points "$B" sweep -f "$T/pset.json" --set workload.rate=3
expect_stderr sweep-set-points-msg "given by --set workload.rate=3 and by the sweep file's points"
# (a -c file's key is a base the axes vary: allowed)
printf '{"workload": {"rate": 7, "num_requests": 10}}\n' > "$T/base7.json"
expect_exit 0 sweep-c-axis "$B" sweep -c "$T/base7.json" --axis workload.rate=3 --metrics completed
# Points that set their seed, as a seed axis: --seed/--seeds (or "seeds") refused; a seed
# that is not an integer >= 0 refused (it was read as 0 or wrapped)
printf '{"workload.num_requests": 10, "points": [{"seed": 2}]}\n' > "$T/pseed.json"
expect_exit 2 sweep-points-seed-seeds "$B" sweep -f "$T/pseed.json" --seeds 3
expect_stderr sweep-points-seed-seeds-msg "points set seed: --seed and --seeds"
expect_exit 2 sweep-points-seed-seed "$B" sweep -f "$T/pseed.json" --seed 4
printf '{"points": [{"seed": 2}], "seeds": 2}\n' > "$T/pseed2.json"
expect_exit 2 sweep-points-seed-file-seeds "$B" sweep -f "$T/pseed2.json"
printf '{"points": [{"seed": -1}]}\n' > "$T/pseed3.json"
expect_exit 3 sweep-points-seed-bad "$B" sweep -f "$T/pseed3.json"
expect_stderr sweep-points-seed-bad-msg "pseed3.json: field 'seed': a point's seed"
expect_exit 0 sweep-points-seed "$B" sweep -f "$T/pseed.json" --metrics completed
[ "$(cut -d, -f3 "$T/stdout" | tail -n +2)" = 2 ] && ok sweep-points-seed-row || fail sweep-points-seed-row "$(cat "$T/stdout")"
# --collect takes no other option than --metrics (-j and --seeds were accepted and ignored)
expect_exit 2 sweep-collect-jobs "$B" sweep --collect "$T/strict" -j 3 --seeds 4
expect_stderr sweep-collect-jobs-msg "takes no other option than --metrics, got --jobs"
expect_exit 2 sweep-collect-strict "$B" sweep --collect "$T/strict" --strict
expect_exit 0 sweep-collect-metrics "$B" sweep --collect "$T/strict" --metrics completed
# an empty --metrics list or name (a CSV without metric columns was written)
expect_exit 2 sweep-metrics-empty "$B" sweep --metrics '' -o "$T/me"
expect_stderr sweep-metrics-empty-msg "none of them empty"
[ ! -e "$T/me" ] && ok sweep-metrics-empty-clean || fail sweep-metrics-empty-clean "directory left"
expect_exit 2 sweep-metrics-empty-name "$B" sweep --metrics 'completed,,duration'
expect_exit 2 sweep-metrics-trailing "$B" sweep --metrics 'completed,'
# A member given twice anywhere in a sweep file names the file, line and member (the error
# named a removed temporary base.json, or the second value was run under the first's label)
printf '{"seeds": 2,\n "seeds": 3, "axes": {"workload.rate": [1]}}\n' > "$T/dup1.json"
expect_exit 3 sweep-dup-top "$B" sweep -f "$T/dup1.json"
expect_stderr sweep-dup-top-msg "dup1.json:2: field 'seeds': member given twice \(first on line 1\)"
grep -q bucketsim-sweep "$T/stderr" && fail sweep-dup-no-tmp "$(cat "$T/stderr")" || ok sweep-dup-no-tmp
printf '{"axes": {"workload.rate": [1]}, "axes": {"workload.rate": [2]}}\n' > "$T/dup2.json"
expect_exit 3 sweep-dup-axes "$B" sweep -f "$T/dup2.json"
expect_stderr sweep-dup-axes-msg "dup2.json:1: field 'axes': member given twice"
printf '{"axes": {"workload.rate": [1], "workload.rate": [2]}}\n' > "$T/dup3.json"
expect_exit 3 sweep-dup-in-axes "$B" sweep -f "$T/dup3.json"
expect_stderr sweep-dup-in-axes-msg "dup3.json:1: field 'axes.workload.rate': member given twice"
printf '{"points": [{"workload.rate": 1},\n {"workload.rate": 1, "workload.rate": 2}]}\n' > "$T/dup4.json"
expect_exit 3 sweep-dup-point "$B" sweep -f "$T/dup4.json"
expect_stderr sweep-dup-point-msg "dup4.json:2: field 'points\[1\].workload.rate': member given twice"
printf '{"server": {"max_num_seqs": 8, "max\\u005fnum_seqs": 16}, "points": [{}]}\n' > "$T/dup5.json"
expect_exit 3 sweep-dup-base "$B" sweep -f "$T/dup5.json"
expect_stderr sweep-dup-base-msg "dup5.json:1: field 'server.max_num_seqs': member given twice"
printf '{"points": [{}]}\njunk\n' > "$T/junk.json"
expect_exit 3 sweep-file-trailing "$B" sweep -f "$T/junk.json"
expect_stderr sweep-file-trailing-msg "junk.json:2: invalid JSON near 'junk'"

# --- Hardening of what sweep emits, reads and writes ---
NL='
'
# Control characters in anything --emit writes are refused before anything is made (a newline
# split the single-quoted word over two lines of commands.txt: GNU parallel and the Slurm
# script ran the second as a command; -o DIR also went unquoted into '#SBATCH --output=').
# After ../shared/reproducers/emit_newline_injection.sh.
expect_exit 2 sweep-emit-env-nl "$B" sweep --axis server.max_num_seqs=4 --set workload.num_requests=10 \
	--env "FOO=a${NL}touch $T/PWNED;#" -o "$T/en" --emit parallel
expect_stderr sweep-emit-env-nl-msg "field 'FOO': a control character in the value"
[ ! -e "$T/en" ] && [ ! -s "$T/stdout" ] && ok sweep-emit-env-nl-nothing || fail sweep-emit-env-nl-nothing "$(ls "$T/en" 2>&1; cat "$T/stdout")"
expect_exit 2 sweep-emit-dir-nl "$B" sweep --axis server.max_num_seqs=4 -o "$T/sl${NL}touch PWNED${NL}x" --emit slurm
expect_stderr sweep-emit-dir-nl-msg "field '--emit': -o DIR '.*/sl\\\\x0atouch PWNED\\\\x0ax' holds a control character \(\\\\x0a\)"
[ -z "$(ls "$T" | grep '^sl')" ] && ok sweep-emit-dir-nl-nothing || fail sweep-emit-dir-nl-nothing "$(ls "$T")"
cp "$T/cfg.json" "$T/c${NL}x.json"
expect_exit 2 sweep-emit-path-nl "$B" sweep -c "$T/c${NL}x.json" --axis server.max_num_seqs=4 -o "$T/pn" --emit parallel
expect_stderr sweep-emit-path-nl-msg "field '--emit': point 0001 \(server.max_num_seqs=4 seed=1\) '.*/c\\\\x0ax.json' holds a control character \(\\\\x0a\)"
[ ! -e "$T/pn" ] && ok sweep-emit-path-nl-nothing || fail sweep-emit-path-nl-nothing "directory left"
# ... while running such a sweep with -j (no shell reads the words) still works.
expect_exit 0 sweep-path-nl-runs "$B" sweep -c "$T/c${NL}x.json" --set workload.num_requests=10 --metrics completed
# --env names and values with control characters, and odd names, are refused everywhere: on
# the command line of run, and in a configuration file's "env" (line named).
expect_exit 2 run-env-esc "$B" run --set workload.num_requests=5 --env "$(printf 'A=\033[2J')"
expect_stderr run-env-esc-msg "field 'A': a control character in the value"
printf '{"workload.num_requests": 5,\n "env": {"A=B": "x"}}\n' > "$T/envname.json"
expect_exit 3 run-env-name-eq "$B" run -c "$T/envname.json"
expect_stderr run-env-name-eq-msg "envname.json:2: field 'A=B': not a variable name"
printf '{"env": {"VLLM_X": "a\\nb"}}\n' > "$T/envval.json"
expect_exit 3 run-env-file-nl "$B" run -c "$T/envval.json"
expect_stderr run-env-file-nl-msg "envval.json:1: field 'VLLM_X': a control character in the value"

# CSV cells a spreadsheet reads as a formula (=, +, -, @, tab, CR first) get a leading ';
# numbers (-3, +1e5) stay numbers.  After ../shared/reproducers/csv_formula_injection.sh.
# (listed points of a sweep file: an axis over a variable that nothing reads is refused)
cat > "$T/formula.json" <<'JSON'
{"workload": {"num_requests": 5}, "points": [{"env.FOO": "=HYPERLINK(\"http://x.invalid/\",1)"},
 {"env.FOO": "@SUM(1)"}, {"env.FOO": "-3"}, {"env.FOO": "+1e5"}, {"env.FOO": "-x"}, {"env.FOO": "a=b"}]}
JSON
expect_exit 0 sweep-formula "$B" sweep -f "$T/formula.json" --metrics completed
[ "$(cut -d, -f1 "$T/stdout" | tr '\n' ' ')" = "env.FOO \"'=HYPERLINK(\"\"http://x.invalid/\"\" '@SUM(1) -3 +1e5 '-x a=b " ] \
	&& ok sweep-formula-cells || fail sweep-formula-cells "$(cat "$T/stdout")"
expect_exit 3 sweep-formula-trace "$B" sweep --axis 'trace==1+1,alpaca' --set workload.num_requests=5 --metrics completed
[ "$(cut -d, -f1 "$T/stdout" | tr '\n' ' ')" = "trace '=1+1 alpaca " ] && grep -q "^'=1+1,.*\"'=1+1: no such file" "$T/stdout" \
	&& ok sweep-formula-trace-cells || fail sweep-formula-trace-cells "$(cat "$T/stdout")"
cp "$T/cfg.json" "$T/=1+1.json"
expect_exit 0 capacity-formula "$B" capacity --set workload.num_requests=100 --system "$T/=1+1.json" -o "$T/capf"
[ "$(cut -d, -f1 "$T/capf/capacity_curve.csv" | sort -u | tr '\n' ' ')" = "'=1+1.json system " ] \
	&& ok capacity-formula-cells || fail capacity-formula-cells "$(head -3 "$T/capf/capacity_curve.csv")"

# --collect checks sweep.json and every summary.json as input: exit 3 naming the file and the
# member (a point without dir or trace, a column not a string crashed; a point "dir" ../../x was
# read outside DIR; a garbage summary.json was collected as empty cells).  After
# ../shared/reproducers/collect_sweep_json_*.json and collect_garbage_summary/.
collect_bad() { # NAME SWEEP_JSON [SUMMARY_JSON] EXPECTED_MESSAGE
	rm -rf "$T/cb"; mkdir -p "$T/cb/points/0001"
	printf '%s\n' "$2" > "$T/cb/sweep.json"
	[ -n "$3" ] && printf '%s\n' "$3" > "$T/cb/points/0001/summary.json" && : > "$T/cb/points/0001/.bucketsim.done"
	expect_exit 3 "collect-$1" "$B" sweep --collect "$T/cb"
	expect_stderr "collect-$1-msg" "$4"
	[ ! -e "$T/cb/sweep.csv" ] && ok "collect-$1-no-csv" || fail "collect-$1-no-csv" "written"
}
P1='"set":{},"trace":"","preset":"","seed":"1","run":[]'
collect_bad column-not-string '{"bucketsim_sweep":"1","columns":[1],"inputs":{},"points":[{"dir":"0001",'"$P1"'}]}' '' \
	"cb/sweep.json: field 'columns\[0\]': must be a key name"
collect_bad no-dir '{"bucketsim_sweep":"1","columns":[],"inputs":{},"points":[{}]}' '' \
	"cb/sweep.json: field 'points\[0\].dir': must be \"0001\""
collect_bad no-trace '{"bucketsim_sweep":"1","columns":[],"inputs":{},"points":[{"dir":"0001"}]}' '' \
	"cb/sweep.json: field 'points\[0\].trace': must be a string"
collect_bad no-version '{"columns":[1],"points":[{"dir":"0001","set":{}}]}' '' \
	"cb/sweep.json: field 'bucketsim_sweep': not a sweep description"
collect_bad dotdot '{"bucketsim_sweep":"1","columns":[],"inputs":{},"points":[{"dir":"../../x",'"$P1"'}]}' '' \
	"cb/sweep.json: field 'points\[0\].dir': must be \"0001\""
collect_bad garbage-summary '{"bucketsim_sweep":"1","columns":[],"inputs":{},"points":[{"dir":"0001",'"$P1"'}]}' \
	'{"metrics": 5, "meta": []}' "cb/points/0001/summary.json: field 'meta': must be an object"
collect_bad summary-metrics '{"bucketsim_sweep":"1","columns":[],"inputs":{},"points":[{"dir":"0001",'"$P1"'}]}' \
	'{"meta": {"config_hash": "1"}, "metrics": 5}' "cb/points/0001/summary.json: field 'metrics': must be an object"
collect_bad summary-json '{"bucketsim_sweep":"1","columns":[],"inputs":{},"points":[{"dir":"0001",'"$P1"'}]}' \
	'{"meta": ' "cb/points/0001/summary.json: not valid JSON"
# A summary.json without its output set's marker is a run that did not finish: its row is an
# error, not its numbers.
rm -f "$T/cb/points/0001/.bucketsim.done"
printf '{"meta": {"config_hash": "1"}, "metrics": {"completed": 3}}\n' > "$T/cb/points/0001/summary.json"
expect_exit 1 collect-no-marker "$B" sweep --collect "$T/cb"
[ "$(tail -1 "$T/cb/sweep.csv")" = ",,1,,not run (no summary.json)" ] && ok collect-no-marker-row || fail collect-no-marker-row "$(cat "$T/cb/sweep.csv")"

# A cap on the points, checked as the product of the axes' lengths before expanding (10^9
# points grew memory until the OOM killer).  After ../shared/reproducers/sweep_file_1e9_points.json.
awk 'BEGIN { v = "1"; for (i = 2; i <= 1000; i++) v = v "," i
	printf "{\"axes\": {\"server.max_num_seqs\": [%s], \"slo.ttft_ms\": [%s], \"slo.tpot_ms\": [%s]}}\n", v, v, v }' > "$T/e9.json"
expect_exit 3 sweep-cap "timeout" 10 "$B" sweep -f "$T/e9.json" -o "$T/e9"
expect_stderr sweep-cap-msg "e9.json: 1000000000 points \(the product of the axes' lengths, times the seeds\): more than the 100000 a sweep may have"
[ ! -e "$T/e9" ] && ok sweep-cap-nothing || fail sweep-cap-nothing "directory left"
expect_exit 2 sweep-cap-axis "$B" sweep --axis server.max_num_seqs=1,2,3,4,5,6,7,8,9,10 --seeds 10001
expect_stderr sweep-cap-axis-msg "^bucketsim: error: 100010 points"

# Sweep-file errors in axes, points and the base name the user's file and line, exit 3 (they
# exited 2 naming nothing, or named the copy DIR/base.json and its line).  After
# ../shared/reproducers/sweep_file_axes_unknown_key.json and sweep_file_base_error_line6.json.
printf '{"workload.num_requests": 20,\n "axes": {\n  "server.max_num_seqs": [4, 8],\n  "bogus.key": [1]\n }\n}\n' > "$T/axk.json"
expect_exit 3 sweep-file-axis-key "$B" sweep -f "$T/axk.json"
expect_stderr sweep-file-axis-key-msg "axk.json:4: field 'bogus.key': point 0001 \(server.max_num_seqs=4 bogus.key=1 seed=1\): unknown config key"
printf '{\n  "workload.num_requests": 5,\n\n\n\n  "server.block_size": 0,\n  "axes": {"server.max_num_seqs": [4]}\n}\n' > "$T/b6.json"
for o in "" "-o $T/b6"; do
	expect_exit 3 "sweep-file-base-line${o:+-o}" "$B" sweep -f "$T/b6.json" $o
	expect_stderr "sweep-file-base-line${o:+-o}-msg" "^bucketsim: error: $T/b6.json:6: field 'server.block_size': point 0001"
done
[ ! -e "$T/b6" ] && ok sweep-file-base-clean || fail sweep-file-base-clean "directory left"
printf '{"server": {\n "block_size": 0}, "axes": {"server.max_num_seqs": [4]}}\n' > "$T/b7.json"
expect_exit 3 sweep-file-base-nested "$B" sweep -f "$T/b7.json"
expect_stderr sweep-file-base-nested-msg "b7.json:2: field 'server.block_size'"
printf '{"points": [{"server.max_num_seqs": 4},\n {"server.max_num_seqs": 0}]}\n' > "$T/pbad.json"
expect_exit 3 sweep-file-point-value "$B" sweep -f "$T/pbad.json"
expect_stderr sweep-file-point-value-msg "pbad.json:2: field 'server.max_num_seqs': point 0002"
printf '{"axes": {\n"server.max_num_seqs": [4, {}]}}\n' > "$T/axv.json"
expect_exit 3 sweep-file-axis-value "$B" sweep -f "$T/axv.json"
expect_stderr sweep-file-axis-value-msg "axv.json:2: field 'server.max_num_seqs': axis values must be strings"
printf '{"points": [{},\n 5]}\n' > "$T/pobj.json"
expect_exit 3 sweep-file-point-object "$B" sweep -f "$T/pobj.json"
expect_stderr sweep-file-point-object-msg "pobj.json:2: field 'points': every point is an object"

# Every point records the hash of each input file it read (summary.json meta.inputs); a file
# that changed while the sweep ran is an error naming it, and no sweep.csv is written (a trace
# edited mid-sweep was replayed half old, half new, exit 0).  The change falls between two
# points here by running the emitted commands one by one.  After
# ../shared/reproducers/trace_change_during_sweep.sh.
"$B" trace synth -n 20 --rate 5 -o "$T/tch.csv" 2>/dev/null
expect_exit 0 sweep-inputs-emit "$B" sweep --trace "$T/tch.csv" --axis server.max_num_seqs=4,8 -o "$T/tch" --emit parallel
sed -n 1p "$T/tch/commands.txt" | sh
h0=$(sed -n 's/^[[:space:]]*"\(.*tch.csv\)":[[:space:]]*"\([0-9a-f]*\)".*/\2/p' "$T/tch/sweep.json")
h1=$(sed -n 's/^[[:space:]]*".*tch.csv":[[:space:]]*"\([0-9a-f]*\)".*/\1/p' "$T/tch/points/0001/summary.json")
[ -n "$h0" ] && [ "$h0" = "$h1" ] && ok sweep-inputs-recorded || fail sweep-inputs-recorded "sweep $h0, point $h1"
cp "$T/tch.csv" "$T/tch.orig"
"$B" trace synth -n 20 --rate 9 -o "$T/tch.csv" 2>/dev/null
sed -n 2p "$T/tch/commands.txt" | sh
expect_exit 3 sweep-inputs-changed "$B" sweep --collect "$T/tch"
expect_stderr sweep-inputs-changed-msg "^bucketsim: error: $T/tch.csv: changed while the sweep ran: hash $h0 when it began, [0-9a-f]{16} as point 0002 read it \($T/tch/points/0002/summary.json\)"
[ ! -e "$T/tch/sweep.csv" ] && ok sweep-inputs-changed-no-csv || fail sweep-inputs-changed-no-csv "written"
# Both points read the first trace, which changed after them: the check before the CSV.
rm -r "$T/tch/points/0002"; cp "$T/tch.csv" "$T/tch.new"; cp "$T/tch.orig" "$T/tch.csv"
sed -n 2p "$T/tch/commands.txt" | sh
cp "$T/tch.new" "$T/tch.csv"
expect_exit 3 sweep-inputs-after "$B" sweep --collect "$T/tch"
expect_stderr sweep-inputs-after-msg "tch.csv: changed while the sweep ran: hash $h0 when it began, [0-9a-f]{16} now"
cp "$T/tch.orig" "$T/tch.csv"
expect_exit 0 sweep-inputs-same "$B" sweep --collect "$T/tch"

# A stopped sweep leaves no finished point in points/.NNNN.tmp/ and no empty NNNN.err (SIGKILL
# left both): the points run straight into points/NNNN, their standard error becomes NNNN.err
# only when not empty.
for sig in KILL TERM; do
	rm -rf "$T/stop"
	"$B" sweep --set workload.num_requests=8000 --axis workload.rate=1,2,3,4,5,6,7,8 --metrics completed -j 2 -o "$T/stop" 2>/dev/null &
	pid=$!
	# stopped once the first points are finished, while the next ones run
	for i in $(seq 400); do [ -e "$T/stop/points/0001/summary.json" ] || [ -e "$T/stop/points/0002/summary.json" ] && break; sleep 0.05; done
	kill -$sig $pid; wait $pid 2>/dev/null
	sleep 0.5
	left=$(find "$T/stop/points" \( -name '.*.tmp' -o -name '*.err' -empty \) | tr '\n' ' ')
	[ -z "$left" ] && ok "sweep-stop-$sig-clean" || fail "sweep-stop-$sig-clean" "$left"
	expect_exit 0 "sweep-stop-$sig-resume" "$B" sweep --set workload.num_requests=8000 --axis workload.rate=1,2,3,4,5,6,7,8 --metrics completed -j 2 -o "$T/stop"
	[ "$(cut -d, -f7 "$T/stop/sweep.csv" | tr '\n' ' ')" = "completed 8000 8000 8000 8000 8000 8000 8000 8000 " ] \
		&& ok "sweep-stop-$sig-rows" || fail "sweep-stop-$sig-rows" "$(cat "$T/stop/sweep.csv")"
done

# The points run with the program as it was started, not /proc/self/exe: under the dynamic
# loader (or valgrind) that is the loader, which took the point's words for a program.
ldso=$(readelf -l "$B" 2>/dev/null | sed -n 's/.*interpreter: \(.*\)]/\1/p')
if [ -x "$ldso" ]; then
	expect_exit 0 sweep-ldso "$ldso" "$B" sweep --set workload.num_requests=10 --axis server.max_num_seqs=4,8 --metrics completed -o "$T/ldso"
	[ "$(cut -d, -f1,7 "$T/ldso/sweep.csv" | tr '\n' ' ')" = "server.max_num_seqs,completed 4,10 8,10 " ] \
		&& ok sweep-ldso-rows || fail sweep-ldso-rows "$(cat "$T/ldso/sweep.csv")"
	expect_exit 0 sweep-ldso-emit "$ldso" "$B" sweep --set workload.num_requests=10 -o "$T/ldso2" --emit parallel
	[ "$(cut -d' ' -f1 "$T/stdout")" = "$(realpath "$B")" ] && ok sweep-ldso-emit-exe || fail sweep-ldso-emit-exe "$(cat "$T/stdout")"
fi
# An axis over a key or --env variable that no point reads runs identical points: refused
# before anything is made, naming the axis (exit 2 from --axis, 3 from a sweep file, with its
# line); an axis that some points read stays (a warning for the others).
expect_exit 2 sweep-axis-unread-env "$B" sweep --set workload.num_requests=10 --axis env.VLLM_NOT_A_KNOB=1,2 -o "$T/ua1"
expect_stderr sweep-axis-unread-env-msg "error: field 'env.VLLM_NOT_A_KNOB': an axis over a variable that no point reads \(the warning above says why\): its 2 values would give identical points"
[ ! -e "$T/ua1" ] && ok sweep-axis-unread-nothing || fail sweep-axis-unread-nothing "$(ls "$T/ua1")"
expect_exit 2 sweep-axis-unread-key "$B" sweep --set workload.num_requests=10 --axis cluster.prefill_instances=1,2 -o "$T/ua2"
expect_stderr sweep-axis-unread-key-msg "field 'cluster.prefill_instances': an axis over a key that no point reads"
printf '{\n  "workload": {"num_requests": 10},\n  "axes": {\n    "scheduler.l_max": [100, 200]\n  }\n}\n' > "$T/ua.json"
expect_exit 3 sweep-axis-unread-file "$B" sweep -f "$T/ua.json" -o "$T/ua3"
expect_stderr sweep-axis-unread-file-msg "ua.json:4: field 'scheduler.l_max': an axis over a key that no point reads"
# read at some points (cluster.mode=disaggregated), not at others: runs
expect_exit 0 sweep-axis-read-somewhere "$B" sweep --set workload.num_requests=10 --axis cluster.mode=colocated,disaggregated --axis cluster.prefill_instances=1,2 --metrics completed -o "$T/ua4"
[ "$(wc -l < "$T/ua4/sweep.csv")" = 5 ] && ok sweep-axis-read-somewhere-rows || fail sweep-axis-read-somewhere-rows "$(cat "$T/ua4/sweep.csv")"
# a mistyped key gets the nearest key, as a mistyped --env variable does
expect_exit 2 sweep-axis-typo "$B" sweep --axis server.max_num_seq=2,4
expect_stderr sweep-axis-typo-msg "field 'server.max_num_seq': point 0001 \(server.max_num_seq=2 seed=1\): unknown config key \(see 'bucketsim list keys'\); did you mean server.max_num_seqs\?"

e2e_done
