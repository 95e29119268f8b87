#!/usr/bin/env bash
# End-to-end tests of hardware profiles read at run time (--set hardware=FILE.json): a profile
# `calibrate` wrote gives the bundled profile's results when fitted on the same data, a changed
# parameter changes them, and broken files are input errors naming the file and member.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
W=(--trace alpaca --set workload.num_requests=100)
metric() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['metrics'][sys.argv[2]])" "$@"; }

expect_exit 0 calibrate "$B" calibrate --data models/data/gaudi_measurements.csv --hardware gaudi2 \
	--software 1.20 -o "$T/mine.json" -q
"$B" run "${W[@]}" --set hardware=gaudi2 --json > "$T/a.json"
expect_exit 0 run-file "$B" run "${W[@]}" --set "hardware=$T/mine.json" --json
cp "$T/stdout" "$T/b.json"
[ "$(metric "$T/a.json" mean_ttft_ms)" = "$(metric "$T/b.json" mean_ttft_ms)" ] && ok profile-same-fit || fail profile-same-fit "differs"
python3 -c "import json,sys; d = json.load(open(sys.argv[1])); print(d['meta']['hardware'], d['config']['hardware'])" "$T/b.json" | grep -qx "mine $T/mine.json" \
	&& ok profile-named || fail profile-named "meta.hardware"
# A fixed per-pass overhead 10 ms larger: every pass costs 10 ms more, so TTFT grows (with
# sim.host_time=false: with host time on, the engine charges host time instead of t_pass).
python3 - "$T/mine.json" "$T/slow.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["params"]["t_pass_ms"] += 10
json.dump(d, open(sys.argv[2], "w"))
PY
"$B" run "${W[@]}" --set hardware=gaudi2 --set sim.host_time=false --json > "$T/a0.json"
"$B" run "${W[@]}" --set "hardware=$T/slow.json" --set sim.host_time=false --json > "$T/c.json"
awk -v a="$(metric "$T/a0.json" mean_ttft_ms)" -v c="$(metric "$T/c.json" mean_ttft_ms)" 'BEGIN {exit !(c >= a + 10)}' \
	&& ok profile-param-used || fail profile-param-used "$(metric "$T/a0.json" mean_ttft_ms) -> $(metric "$T/c.json" mean_ttft_ms)"
# Errors.
expect_exit 3 profile-missing "$B" run --set "hardware=$T/nope.json"
expect_stderr profile-missing-msg "nope.json: field 'hardware': cannot open"
expect_exit 3 profile-not-hw "$B" run --set hardware=models/data/models.json
expect_stderr profile-not-hw-msg "field 'kind': not a hardware profile"
python3 - "$T/mine.json" "$T/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
del d["params"]["eta_kv"]
json.dump(d, open(sys.argv[2], "w"))
PY
expect_exit 3 profile-member "$B" run --set "hardware=$T/bad.json"
expect_stderr profile-member-msg "bad.json: field 'params.eta_kv': missing or not a number"
# Out-of-range members are refused by name (a peak of 0 gave a negative TTFT; an efficiency of 2
# beat peak; 7.5 scale-up peers), as are a null one that must be a number; the shipped profiles
# pass.
for c in "spec peak_bf16_tflops 0 (0, 1e+06]" "params eta_compute 2 (0, 1]" "spec hbm_tb_s -1 (0, 10000]" \
	"params t_pass_ms -0.5 [0, 1e+06]" "spec scaleup_peers 7.5 [0, 1024] and a whole number" \
	"params ar_overlap 1.5 [0, 1]" "spec vector_bf16_tflops 0 (0, 1e+06], or null"; do
	set -- $c
	python3 - "$T/mine.json" "$T/r.json" "$1" "$2" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d[sys.argv[3]][sys.argv[4]] = float(sys.argv[5])
json.dump(d, open(sys.argv[2], "w"))
PY
	expect_exit 3 "profile-range-$2" "$B" validate --set "hardware=$T/r.json"
	want="r.json: field '$1.$2': $3: must be in ${c#* * * }"
	grep -qF "$want" "$T/stderr" && ok "profile-range-$2-msg" || fail "profile-range-$2-msg" "$(cat "$T/stderr") (want: $want)"
done
for h in gaudi2 gaudi3 h100 a100; do
	expect_exit 0 "profile-shipped-$h" "$B" validate --set "hardware=$(dirname "$0")/../models/data/$h.json"
done
printf '{"kind": ' > "$T/trunc.json"
expect_exit 3 profile-json "$B" run --set "hardware=$T/trunc.json"
e2e_done
