#!/usr/bin/env bash
# End-to-end tests of fair comparisons and SLO metrics: the cards each preset uses and
# cluster.cards holding the total fixed; requests.csv's instance and KV-transfer columns;
# batches.csv in time order with several instances; slo_attainment, goodput and unfinished
# recomputed from requests.csv (unfinished requests failing), with and without slo.e2e_ms.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
W=(--trace alpaca --set workload.num_requests=200 --set workload.rate=20)

# Cards: the presets' own, and cluster.cards deriving the instances.
for p in vllm:1:1 distserve:2:2 uellm:1:1 bucketserve:2:2; do
	IFS=: read -r name cards inst <<< "$p"
	"$B" run "${W[@]}" --preset "$name" --json > "$T/s.json"
	[ "$(jq_ "$T/s.json" "d['metrics']['cards'], d['metrics']['instances']")" = "$cards $inst" ] \
		&& ok "cards-$name" || fail "cards-$name" "$(jq_ "$T/s.json" "d['metrics']['cards'], d['metrics']['instances']")"
done
card_case() { # NAME EXPECT(cards instances prefill decode) ARGS...
	local name=$1 want=$2; shift 2
	"$B" run "${W[@]}" "$@" --json > "$T/s.json" 2>"$T/stderr"
	got=$(jq_ "$T/s.json" "d['metrics']['cards'], d['metrics']['instances'], d['config']['cluster.prefill_instances'], d['config']['cluster.decode_instances']" 2>/dev/null)
	[ "$got" = "$want" ] && ok "$name" || fail "$name" "$got; $(head -c 200 "$T/stderr")"
}
card_case cards4-vllm "4 4 1 1" --preset vllm --set cluster.cards=4
card_case cards4-distserve "4 4 2 2" --preset distserve --set cluster.cards=4
card_case cards5-bucketserve "5 5 2 3" --preset bucketserve --set cluster.cards=5
card_case cards5-prefill3 "5 5 3 2" --preset distserve --set cluster.cards=5 --set cluster.prefill_instances=3
card_case cards5-decode4 "5 5 1 4" --preset distserve --set cluster.cards=5 --set cluster.decode_instances=4
card_case cards4-tp2 "4 2 1 1" --preset vllm --set cluster.cards=4 --set hardware.tp=2
card_case cards4-pp2 "4 2 1 1" --set cluster.cards=4 --set cluster.pp=2
expect_exit 3 cards-not-multiple "$B" run --preset vllm --set cluster.cards=3 --set hardware.tp=2
expect_stderr cards-not-multiple-msg "field 'cluster.cards': 3 cards are not a whole number"
expect_exit 3 cards-one-disagg "$B" run --preset distserve --set cluster.cards=1
expect_exit 3 cards-vs-instances "$B" run --set cluster.cards=4 --set cluster.instances=2
expect_exit 3 cards-vs-split "$B" run --preset distserve --set cluster.cards=4 \
	--set cluster.prefill_instances=1 --set cluster.decode_instances=2
expect_exit 3 cards-no-room "$B" run --preset distserve --set cluster.cards=3 --set cluster.prefill_instances=3

# requests.csv: instances and KV-transfer time.
"$B" run "${W[@]}" --preset distserve --set cluster.cards=4 -q -o "$T/d"
col() { head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }
ci=$(col "$T/d/requests.csv" instance); cp=$(col "$T/d/requests.csv" prefill_instance); ck=$(col "$T/d/requests.csv" kv_transfer_ms)
awk -F, -v i="$ci" -v p="$cp" 'NR > 1 && !($p == 0 || $p == 1) || NR > 1 && !($i == 2 || $i == 3) {bad++} END {exit bad}' "$T/d/requests.csv" \
	&& ok req-instances-disagg || fail req-instances-disagg "$(head -3 "$T/d/requests.csv")"
[ "$(cut -d, -f"$cp" "$T/d/requests.csv" | sort -u | tr '\n' ' ')" = "0 1 prefill_instance " ] && ok req-both-prefill || fail req-both-prefill "$(cut -d, -f"$cp" "$T/d/requests.csv" | sort | uniq -c)"
mean=$(awk -F, -v k="$ck" 'NR > 1 && $k > 0 {s += $k; n++} END {printf "%.9f", s / n}' "$T/d/requests.csv")
want=$(jq_ "$T/d/summary.json" "d['metrics']['mean_kv_transfer_ms']")
awk -v a="$mean" -v b="$want" 'BEGIN {d = a - b; if (d < 0) d = -d; exit !(b > 0 && d < 1e-6)}' && ok req-transfer-mean || fail req-transfer-mean "$mean vs $want"
"$B" run "${W[@]}" --set cluster.instances=3 -q -o "$T/c"
awk -F, -v i="$ci" -v p="$cp" -v k="$ck" 'NR > 1 && ($p != "" || $k != "0.000000" || $i < 0 || $i > 2) {bad++} END {exit bad}' "$T/c/requests.csv" \
	&& ok req-colocated || fail req-colocated "$(sed -n 2p "$T/c/requests.csv")"
[ "$(cut -d, -f"$ci" "$T/c/requests.csv" | tail -n +2 | sort -u | tr '\n' ' ')" = "0 1 2 " ] && ok req-three-instances || fail req-three-instances "differs"

# batches.csv in time order (start, then instance) with several instances.
for d in d c; do
	awk -F, 'NR > 2 && ($2 + 0 < s || ($2 + 0 == s && $14 + 0 < i)) {bad++} NR > 1 {s = $2 + 0; i = $14 + 0} END {exit bad}' "$T/$d/batches.csv" \
		&& ok "batches-ordered-$d" || fail "batches-ordered-$d" "out of order"
	[ "$(cut -d, -f14 "$T/$d/batches.csv" | tail -n +2 | sort -u | wc -l)" -ge 3 ] && ok "batches-instances-$d" || fail "batches-instances-$d" "one instance"
done

# SLO metrics recomputed from requests.csv: a stop before the end leaves requests unfinished.
slo_case() { # NAME E2E_MS ARGS...
	local name=$1 e2e=$2; shift 2
	"$B" run "${W[@]}" "$@" -q -o "$T/u"
	n=200
	read -r done met dur < <(awk -F, -v e="$e2e" 'NR > 1 {n++; ok = $9 <= 1000 && ($10 == "" || $10 <= 100) && (e == 0 || $11 <= e); m += ok;
		if (first == "" || $2 < first) first = $2; if ($5 > last) last = $5} END {printf "%d %d %.9f\n", n, m, last - first}' "$T/u/requests.csv")
	python3 - "$T/u/summary.json" "$n" "$done" "$met" "$dur" <<'PY' && ok "$name" || fail "$name" "requests.csv: $done done, $met met, $dur s"
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
n, done, met, dur = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
assert m["completed"] == done and m["unfinished"] == n - done, (m["completed"], m["unfinished"])
assert abs(m["slo_attainment"] - met / n) < 1e-12, (m["slo_attainment"], met / n)
assert abs(m["goodput"] - met / dur) < 1e-6 * met / dur, (m["goodput"], met / dur)
PY
}
slo_case slo-complete 0
[ "$(jq_ "$T/u/summary.json" "d['metrics']['unfinished']")" = 0 ] && ok slo-none-unfinished || fail slo-none-unfinished "unfinished"
slo_case slo-stopped 0 --set sim.stop_s=6
[ "$(jq_ "$T/u/summary.json" "d['metrics']['unfinished'] > 50")" = True ] && ok slo-some-unfinished || fail slo-some-unfinished "$(jq_ "$T/u/summary.json" "d['metrics']['unfinished']")"
slo_case slo-e2e 900 --set slo.e2e_ms=900
slo_case slo-e2e-stopped 900 --set slo.e2e_ms=900 --set sim.stop_s=6
e2e_done
