#!/usr/bin/env bash
# End-to-end tests of `bucketsim capacity`: the capacity it reports agrees with `run` at the
# bracket's ends (the same configuration and seed: common random numbers), its curve file, seeds
# and the interval, the end-to-end objective, and errors before any probe.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
W=(--trace alpaca --set workload.num_requests=300)
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

expect_exit 0 capacity "$B" capacity "${W[@]}" --system vllm --system distserve --target 0.8 -o "$T/c"
[ "$(jq_ "$T/c/capacity.json" "len(d['systems'])")" = 2 ] && ok cap-systems || fail cap-systems "$(cat "$T/c/capacity.json" | head -20)"
for i in 0 1; do
	sys=$(jq_ "$T/c/capacity.json" "d['systems'][$i]['system']")
	lo=$(jq_ "$T/c/capacity.json" "repr(d['systems'][$i]['seeds'][0]['bracket_lo_req_s'])")
	hi=$(jq_ "$T/c/capacity.json" "repr(d['systems'][$i]['seeds'][0]['bracket_hi_req_s'])")
	cap=$(jq_ "$T/c/capacity.json" "repr(d['systems'][$i]['capacity_req_s'])")
	[ "$cap" = "$lo" ] && ok "cap-is-lo-$sys" || fail "cap-is-lo-$sys" "$cap vs $lo"
	awk -v a="$lo" -v b="$hi" 'BEGIN {exit !(b > a && b - a <= 0.01 * b)}' && ok "cap-bracket-$sys" || fail "cap-bracket-$sys" "[$lo, $hi]"
	# `run` at the bracket's ends: attainment >= 0.8 at lo, < 0.8 at hi.
	for end in lo hi; do
		r=$([ $end = lo ] && echo "$lo" || echo "$hi")
		"$B" run "${W[@]}" --preset "$sys" --set workload.arrival=poisson --set "workload.rate=$r" --json > "$T/run.json"
		att=$(jq_ "$T/run.json" "d['metrics']['slo_attainment']")
		curve=$(awk -F, -v s="$sys" -v r="$r" '$1 == s && $3 + 0 == r + 0 {print $4}' "$T/c/capacity_curve.csv")
		awk -v a="$att" -v c="$curve" 'BEGIN {exit !(a + 0 == c + 0)}' && ok "cap-curve-is-run-$sys-$end" || fail "cap-curve-is-run-$sys-$end" "run $att, curve $curve"
		if [ $end = lo ]; then cond='a >= 0.8'; else cond='a < 0.8'; fi
		awk -v a="$att" "BEGIN {exit !($cond)}" && ok "cap-run-$sys-$end" || fail "cap-run-$sys-$end" "attainment $att at $r"
	done
done
# The curve: sorted by rate within a system, meets_target consistent, no probe above hi meets.
awk -F, 'NR > 1 { if ($1 == s && $3 + 0 <= p) bad = 1; s = $1; p = $3 + 0; if (($4 >= 0.8) != $5) bad = 1 } END {exit bad}' "$T/c/capacity_curve.csv" \
	&& ok cap-curve-sorted || fail cap-curve-sorted "$(head "$T/c/capacity_curve.csv")"
head -1 "$T/c/capacity_curve.csv" | grep -qx 'system,seed,rate,slo_attainment,meets_target' && ok cap-curve-header || fail cap-curve-header "$(head -1 "$T/c/capacity_curve.csv")"

# Seeds: K searches, the mean and a t interval around it.
expect_exit 0 capacity-seeds "$B" capacity "${W[@]}" --system vllm --seeds 3 --json
python3 - "$T/stdout" <<'PY' && ok cap-seeds || fail cap-seeds "$(head -c 400 "$T/stdout")"
import json, math, statistics, sys
d = json.load(open(sys.argv[1]))["systems"][0]
caps = [s["capacity_req_s"] for s in d["seeds"]]
assert [s["seed"] for s in d["seeds"]] == [1, 2, 3]
m = sum(caps) / 3
assert abs(d["capacity_req_s"] - m) < 1e-9 * m
h = 4.302652729749464 * statistics.stdev(caps) / math.sqrt(3)
assert abs(d["ci95_hi_req_s"] - (m + h)) < 1e-6 * m and abs(d["ci95_lo_req_s"] - (m - h)) < 1e-6 * m
PY

# An end-to-end objective only lowers the capacity.
expect_exit 0 capacity-e2e "$B" capacity "${W[@]}" --system vllm --target 0.8 --set slo.e2e_ms=3000 --json
e2e=$(python3 -c "import json,sys; print(json.load(sys.stdin)['systems'][0]['capacity_req_s'])" < "$T/stdout")
base=$(jq_ "$T/c/capacity.json" "d['systems'][0]['capacity_req_s']")
awk -v a="$e2e" -v b="$base" 'BEGIN {exit !(a < b)}' && ok cap-e2e-lower || fail cap-e2e-lower "$e2e vs $base"

# Errors before any probe.
expect_exit 2 cap-target "$B" capacity --target 0
expect_exit 2 cap-rate-set "$B" capacity --set workload.rate=5
expect_stderr cap-rate-set-msg "capacity chooses the rate"
expect_exit 2 cap-arrival "$B" capacity --set workload.arrival=trace
expect_exit 2 cap-preset "$B" capacity --system nosuch
expect_exit 2 cap-preset-twice "$B" capacity --preset bucketserve --system vllm
expect_exit 3 cap-rule "$B" capacity --set server.max_num_seqs=4096 --system vllm
expect_exit 3 cap-never "$B" capacity "${W[@]}" --set slo.ttft_ms=0.001 --rate 1 --target 0.9
expect_stderr cap-never-msg "even at"

# A system applies over the shared options: its own value of a key wins over a shared --set
# (and a shared config file); the shared value holds for a system that does not set the key.
printf '{\n  "server": {"max_num_seqs": 2}\n}\n' > "$T/sys2.json"
expect_exit 0 cap-layer "$B" capacity "${W[@]}" --set server.max_num_seqs=256 --system "$T/sys2.json" --system vllm --json
python3 - "$T/stdout" <<'PY' && ok cap-layer-config || fail cap-layer-config "$(head -c 400 "$T/stdout")"
import json, sys
s = json.load(open(sys.argv[1]))["systems"]
assert [x["system"] for x in s] == ["sys2.json", "vllm"]
assert s[0]["config"]["server.max_num_seqs"] == 2 and s[1]["config"]["server.max_num_seqs"] == 256
assert s[0]["config"]["workload.num_requests"] == 300 and s[0]["config"]["workload.rate"] is None
assert s[0]["capacity_req_s"] < s[1]["capacity_req_s"] / 10
PY
expect_exit 0 cap-layer-alone "$B" capacity "${W[@]}" --system "$T/sys2.json" --json
python3 - "$T/stdout" <<'PY' && ok cap-layer-same || fail cap-layer-same "$(head -c 400 "$T/stdout")"
import json, sys
a = json.load(open(sys.argv[1]))["systems"][0]
assert a["config"]["server.max_num_seqs"] == 2
PY
cp "$T/stdout" "$T/alone.json"
expect_exit 0 cap-layer-shared "$B" capacity "${W[@]}" --set server.max_num_seqs=256 --system "$T/sys2.json" --json
cmp -s "$T/stdout" "$T/alone.json" && ok cap-layer-shared-same || fail cap-layer-shared-same "$(diff "$T/stdout" "$T/alone.json" | head)"
# a path without the .json ending is a file too (it was taken for a preset's name)
cp "$T/sys2.json" "$T/sys2.conf"
expect_exit 0 cap-system-path "$B" capacity "${W[@]}" --system "$T/sys2.conf" --json
printf '{\n  "scheduler": {"order": "sjf"}\n}\n' > "$T/shared.json"
expect_exit 0 cap-layer-preset "$B" capacity "${W[@]}" -c "$T/shared.json" --set scheduler.order=ljf --system vllm --json
python3 -c "import json,sys; c = json.load(open(sys.argv[1]))['systems'][0]['config']; assert c['scheduler.order'] == 'fcfs' and c['workload.num_requests'] == 300, c['scheduler.order']" "$T/stdout" \
	&& ok cap-layer-preset-order || fail cap-layer-preset-order "$(head -c 300 "$T/stdout")"

# A closed-loop client or a rate in a file: refused by name, not a search that runs away.
expect_exit 2 cap-concurrency "$B" capacity "${W[@]}" --set workload.concurrency=4
expect_stderr cap-concurrency-msg "^bucketsim: error: field 'workload.concurrency': a closed-loop client keeps at most 4 requests in flight"
grep -q rate-max "$T/stderr" && fail cap-concurrency-not-rate-max "$(cat "$T/stderr")" || ok cap-concurrency-not-rate-max
printf '{\n  "workload": {"concurrency": 8}\n}\n' > "$T/conc.json"
expect_exit 3 cap-concurrency-file "$B" capacity "${W[@]}" --system "$T/conc.json"
expect_stderr cap-concurrency-file-msg "^bucketsim: error: $T/conc.json:2: field 'workload.concurrency': a closed-loop client keeps at most 8"
printf '{\n  "workload": {"rate": 8}\n}\n' > "$T/rate.json"
expect_exit 3 cap-rate-file "$B" capacity "${W[@]}" -c "$T/rate.json"
expect_stderr cap-rate-file-msg "^bucketsim: error: $T/rate.json:2: field 'workload.rate': capacity chooses the rate"
# -o DIR is one set, as run's: capacity.json and capacity_curve.csv with .bucketsim.done
# listing them; a path that cannot be a directory fails before the search (the search here
# would fail too: its message would come first were -o checked after it).
c3=(capacity --set workload.num_requests=300 --system vllm)
expect_exit 0 cap-set "$B" "${c3[@]}" -o "$T/cs-old"
[ "$(cat "$T/cs-old/.bucketsim.done" 2>/dev/null | tr '\n' ' ')" = "capacity.json capacity_curve.csv " ] && ok cap-set-marker || fail cap-set-marker "$(ls -A "$T/cs-old")"
expect_exit 0 cap-set-new "$B" "${c3[@]}" --target 0.5 -o "$T/cs-new"
echo x > "$T/notdir"
expect_exit 1 cap-out-first "$B" "${c3[@]}" --rate 0.5 --rate-max 0.5 -o "$T/notdir/sub"
expect_stderr cap-out-first-msg "^bucketsim: error: $T/notdir/sub: cannot create directory: Not a directory$"
expect_exit 3 cap-search-fails "$B" "${c3[@]}" --rate 0.5 --rate-max 0.5 -o "$T/cs-none/a"
[ ! -e "$T/cs-none" ] && ok cap-search-fails-nothing || fail cap-search-fails-nothing "$(ls -AR "$T/cs-none")"
# A signal during the commit's renames waits for it (the new set, complete); an error there
# puts the earlier set back (strace injects at each of the 6 renames: the marker and 2 files
# aside, 2 files and the marker in).
for n in 1 2 3 4 5 6; do
	rm -rf "$T/cs"; cp -r "$T/cs-old" "$T/cs"
	{ ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o /dev/null -e trace=rename -e inject=rename:signal=TERM:when=$n \
		"$B" "${c3[@]}" --target 0.5 -o "$T/cs" >/dev/null; rc=$?; } 2>/dev/null
	[ $rc -eq 143 ] && diff -r "$T/cs" "$T/cs-new" >/dev/null && ok "cap-commit-sigterm-$n" || fail "cap-commit-sigterm-$n" "rc $rc, $(ls -A "$T/cs" | tr '\n' ' ')"
	rm -rf "$T/cs"; cp -r "$T/cs-old" "$T/cs"
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o /dev/null -e trace=rename -e inject=rename:error=EIO:when=$n \
		"$B" "${c3[@]}" --target 0.5 -o "$T/cs" >/dev/null 2>&1; rc=$?
	[ $rc -eq 1 ] && diff -r "$T/cs" "$T/cs-old" >/dev/null && ok "cap-commit-error-$n" || fail "cap-commit-error-$n" "rc $rc, $(ls -A "$T/cs" | tr '\n' ' ')"
done
# --- Comparisons that cannot mislead ---
# The first example of `help capacity` and the README's Commands-table example compare the
# systems on equal cards with enough requests: run as printed (with --json), each system's
# `cards` is the same and neither check warns.
ex=$("$B" help capacity | sed -n '/^Examples:/,/^$/p' | sed -n '2,/[^\\]$/p' | sed 's/\\$//' | tr -s ' \n' ' ')
read -r -a EX <<< "${ex#*bucketsim }"
expect_exit 0 cap-help-example "$B" "${EX[@]}" --json
python3 - "$T/stdout" "${EX[*]}" <<'PY' && ok cap-help-example-fair || fail cap-help-example-fair "$ex: $(head -c 300 "$T/stdout")"
import json, sys
d = json.load(open(sys.argv[1]))["systems"]
assert len(d) == 3 and "cluster.cards=2" in sys.argv[2], sys.argv[2]
assert [s["cards"] for s in d] == [2, 2, 2], [s["cards"] for s in d]
assert all(not s["checks"]["moves_with_requests"] and not s["checks"]["ceiling_near_target"] for s in d)
PY
! grep -q warning "$T/stderr" && ok cap-help-example-no-warning || fail cap-help-example-no-warning "$(cat "$T/stderr")"
rex=$(grep '^| `capacity` |' README.md | sed 's/.*| `\(bucketsim capacity [^`]*\)` |$/\1/')
read -r -a EX <<< "${rex#bucketsim }"
expect_exit 0 cap-readme-example "$B" "${EX[@]}" --json
python3 - "$T/stdout" <<'PY' && ok cap-readme-example-fair || fail cap-readme-example-fair "$rex: $(head -c 300 "$T/stdout")"
import json, sys
d = json.load(open(sys.argv[1]))["systems"]
assert len(d) == 2 and len({s["cards"] for s in d}) == 1, [s["cards"] for s in d]
PY
! grep -q warning "$T/stderr" && ok cap-readme-example-no-warning || fail cap-readme-example-no-warning "$(cat "$T/stderr")"

# Systems on different cards (vllm 1, distserve 2 by default): cards in the table and the
# JSON, and a warning naming each.
expect_exit 0 cap-cards "$B" capacity "${W[@]}" --system vllm --system distserve --target 0.8 -o "$T/cc"
expect_stderr cap-cards-warn "warning: the systems run on different numbers of cards \(vllm 1, distserve 2\): their capacities are not comparable; give them equal cards with --set cluster.cards=N"
[ "$(awk 'NR == 2 {print $2} NR > 2 {print $1, $2}' "$T/stdout" | tr '\n' ' ')" = "cards vllm 1 distserve 2 " ] && ok cap-cards-table || fail cap-cards-table "$(cat "$T/stdout")"
[ "$(jq_ "$T/cc/capacity.json" "[s['cards'] for s in d['systems']]")" = "[1, 2]" ] && ok cap-cards-json || fail cap-cards-json "$(head -c 300 "$T/cc/capacity.json")"
expect_exit 0 cap-cards-equal "$B" capacity "${W[@]}" --set cluster.cards=2 --system vllm --system distserve --target 0.8
! grep -q 'different numbers of cards' "$T/stderr" && ok cap-cards-equal-quiet || fail cap-cards-equal-quiet "$(cat "$T/stderr")"

# The request-count check: 300 requests arrive in a burst the server absorbs, so with 600 the
# capacity falls by more than 5 %: a warning; its two probes are `run`s with 600 requests at
# lo x 0.95 and hi x 1.05 (the same seed).
expect_exit 0 cap-moves "$B" capacity "${W[@]}" --system vllm --target 0.8 --json
expect_stderr cap-moves-warn "warning: system vllm: the capacity moves by more than 5% when the request count doubles: with 600 requests, attainment"
cp "$T/stdout" "$T/moves.json"
lo=$(jq_ "$T/moves.json" "repr(d['systems'][0]['seeds'][0]['bracket_lo_req_s'])")
hi=$(jq_ "$T/moves.json" "repr(d['systems'][0]['seeds'][0]['bracket_hi_req_s'])")
python3 - "$T/moves.json" <<'PY' && ok cap-moves-json || fail cap-moves-json "$(head -c 600 "$T/moves.json")"
import json, sys
s = json.load(open(sys.argv[1]))["systems"][0]
c, b = s["checks"], s["seeds"][0]
assert c["requests"] == 300 and c["doubled_requests"] == 600
assert c["doubled_lo_rate_req_s"] == b["bracket_lo_req_s"] * 0.95
assert c["doubled_hi_rate_req_s"] == b["bracket_hi_req_s"] * 1.05
assert c["moves_with_requests"] and (c["doubled_lo_attainment"] < 0.8 or c["doubled_hi_attainment"] >= 0.8)
PY
for end in lo hi; do
	r=$(jq_ "$T/moves.json" "repr(d['systems'][0]['checks']['doubled_${end}_rate_req_s'])")
	want=$(jq_ "$T/moves.json" "repr(d['systems'][0]['checks']['doubled_${end}_attainment'])")
	"$B" run --trace alpaca --set workload.num_requests=600 --preset vllm --set workload.arrival=poisson --set "workload.rate=$r" --json > "$T/run.json"
	[ "$(jq_ "$T/run.json" "repr(d['metrics']['slo_attainment'])")" = "$want" ] && ok "cap-moves-probe-$end" || fail "cap-moves-probe-$end" "run $(jq_ "$T/run.json" "d['metrics']['slo_attainment']") at $r, checks $want"
done

# The low-load ceiling: with a fifth of LongBench prompts, 9.6 % of the requests miss the
# default 1 s TTFT objective even at a sixteenth of the capacity, more than a third of the 20 %
# that --target 0.8 allows: a warning; the probe is a `run` at lo / 16.
M=(--set workload.mix=alpaca:0.8,longbench:0.2 --set workload.num_requests=1000)
expect_exit 0 cap-ceiling "$B" capacity "${M[@]}" --system vllm --target 0.8 --json
expect_stderr cap-ceiling-warn "warning: system vllm: SLO attainment at low load \([0-9.]+ requests/s, 1/16 of the capacity\) is already 0.904: a third or more of the failures --target 0.8 allows happen unloaded"
cp "$T/stdout" "$T/ceil.json"
python3 - "$T/ceil.json" <<'PY' && ok cap-ceiling-json || fail cap-ceiling-json "$(head -c 600 "$T/ceil.json")"
import json, sys
s = json.load(open(sys.argv[1]))["systems"][0]
c = s["checks"]
assert c["low_load_rate_req_s"] == s["seeds"][0]["bracket_lo_req_s"] / 16
assert c["low_load_attainment"] == 0.904 and c["ceiling_near_target"]
PY
r=$(jq_ "$T/ceil.json" "repr(d['systems'][0]['checks']['low_load_rate_req_s'])")
"$B" run "${M[@]}" --preset vllm --set workload.arrival=poisson --set "workload.rate=$r" --json > "$T/run.json"
[ "$(jq_ "$T/run.json" "d['metrics']['slo_attainment']")" = 0.904 ] && ok cap-ceiling-probe || fail cap-ceiling-probe "$(jq_ "$T/run.json" "d['metrics']['slo_attainment']")"
# the same mix at --target 0.7: 0.904 - 0.7 > 2/3 x 0.3, no warning
expect_exit 0 cap-ceiling-low-target "$B" capacity "${M[@]}" --system vllm --target 0.7
! grep -q 'at low load' "$T/stderr" && ok cap-ceiling-low-target-quiet || fail cap-ceiling-low-target-quiet "$(cat "$T/stderr")"

e2e_done
