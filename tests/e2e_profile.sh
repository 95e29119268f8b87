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
# A member given twice (cJSON read the first) or not known (a misspelt one was ignored) is
# refused, naming the file, its line and the member: in params, in spec, at the top.
cat > "$T/dup.json" <<'J'
{"kind": "hardware", "name": "gaudi2",
 "spec": {"peak_bf16_tflops": 432, "peak_fp8_tflops": 865, "hbm_gib": 94.62, "hbm_tb_s": 2.46,
  "scaleup_gb_s": 262.5, "scaleout_gb_s": 37.5, "scaleup_peers": 7},
 "params": {"eta_compute": 0.83, "n_half_tokens": 46.4, "eta_weights": 0.86,
  "eta_kv": 0.05,
  "eta_kv": 0.745, "eta_attn": 0.27, "t_pass_ms": 0.79, "t_allreduce_us": 109, "ar_overlap": 0.35,
  "compile_c0_s": 0.19, "compile_c1_ms_per_token": 0.47, "capture_s": 0.33, "runtime_penalty_s": 0.3,
  "fp8_compile_factor": 7.6, "kv_link_latency_us": 50}}
J
expect_exit 3 profile-dup "$B" validate --set "hardware=$T/dup.json"
expect_stderr profile-dup-msg "dup\.json:6: field 'params\.eta_kv': given twice \(first on line 5\)"
sed '5d' "$T/dup.json" > "$T/once.json"
expect_exit 0 profile-once "$B" validate --set "hardware=$T/once.json"
sed 's/"hbm_gib"/"hbm_gb"/' "$T/once.json" > "$T/unk.json"
expect_exit 3 profile-unknown "$B" validate --set "hardware=$T/unk.json"
expect_stderr profile-unknown-msg "unk\.json:2: field 'spec\.hbm_gb': unknown member of a hardware profile's spec \(valid: peak_bf16_tflops, .*, sources\)"
sed 's/"name": "gaudi2",/"name": "gaudi2", "name": "x",/' "$T/once.json" > "$T/dupname.json"
expect_exit 3 profile-dup-top "$B" validate --set "hardware=$T/dupname.json"
expect_stderr profile-dup-top-msg "dupname\.json:1: field 'name': given twice \(first on line 1\)"
sed 's/"kv_link_latency_us": 50}}/"kv_link_latency_us": 50}, "notes": "x"}/' "$T/once.json" > "$T/unktop.json"
expect_exit 3 profile-unknown-top "$B" validate --set "hardware=$T/unktop.json"
expect_stderr profile-unknown-top-msg "unktop\.json:7: field 'notes': unknown member of a hardware profile \(valid: kind, name, description, calibrated, device, spec, params, fit\)"
# Model profiles the same way; every entry of the bundled models.json, as a file, loads.
cat > "$T/model.json" <<'J'
{"name": "llama-3.1-8b", "hf": "meta-llama/Llama-3.1-8B",
 "layers": 2,
 "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128, "ffn": 14336,
 "gated_mlp": true, "vocab": 128256, "experts": 1, "experts_per_token": 1,
 "max_context": 131072, "tied_embeddings": false, "learned_positions": 0}
J
expect_exit 3 model-dup "$B" validate --set "model=$T/model.json"
expect_stderr model-dup-msg "model\.json:3: field 'layers': given twice \(first on line 2\)"
sed '2d; s/"vocab"/"vocab_size"/' "$T/model.json" > "$T/model_unk.json"
expect_exit 3 model-unknown "$B" validate --set "model=$T/model_unk.json"
expect_stderr model-unknown-msg "model_unk\.json:3: field 'vocab_size': unknown member of a model profile \(valid: layers, .*, hf\)"
python3 - "$(dirname "$0")/../models/data/models.json" "$T" <<'PY'
import json, sys
for m in json.load(open(sys.argv[1]))["models"]:
    json.dump(m, open("%s/m_%s.json" % (sys.argv[2], m["name"]), "w"))
PY
nm=0 want=$(ls "$T"/m_*.json | wc -l)
for f in "$T"/m_*.json; do
	# (8 cards and FP8 weights: the 405B model fits)
	v=("$B" validate --set "model=$f" --set hardware.tp=8 --set model.precision=fp8)
	"${v[@]}" > /dev/null 2>&1 && nm=$((nm + 1)) || fail model-shipped "$f: $("${v[@]}" 2>&1)"
done
[ "$nm" -eq "$want" ] && [ "$want" -ge 13 ] && ok models-shipped || fail models-shipped "$nm of $want bundled models load from a file"
printf '{"kind": ' > "$T/trunc.json"
expect_exit 3 profile-json "$B" run --set "hardware=$T/trunc.json"
e2e_done
