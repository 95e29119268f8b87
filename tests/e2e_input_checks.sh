#!/usr/bin/env bash
# End-to-end tests of what bucketsim refuses or reports instead of silently dropping or
# clamping a value the user gave; each section below says what it checks.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
# silent NAME: the last command wrote nothing to stderr.
silent() { [ ! -s "$T/stderr" ] && ok "$1" || fail "$1" "$(head -c 300 "$T/stderr")"; }

# --- options given twice; presets do not stack ---
expect_exit 2 preset-twice "$B" run --preset bucketserve --preset vllm --print-config
expect_stderr preset-twice-msg "option '--preset' given twice \('bucketserve', then 'vllm'\): presets do not stack"
[ ! -s "$T/stdout" ] && ok preset-twice-nothing || fail preset-twice-nothing "$(head -3 "$T/stdout")"
for cmd in validate buckets predict capacity sweep "trace synth"; do
	# shellcheck disable=SC2086
	expect_exit 2 "preset-twice-$cmd" "$B" $cmd --preset bucketserve --preset vllm
	expect_stderr "preset-twice-$cmd-msg" "presets do not stack"
done
# replayed options (a sweep point) are refused as well: the sweep file's preset and --preset
printf '{"preset": "vllm", "axes": {"workload.rate": [1]}, "workload.num_requests": 5}\n' >"$T/pre.json"
expect_exit 2 preset-twice-sweep-file "$B" sweep -f "$T/pre.json" --preset bucketserve
expect_stderr preset-twice-sweep-file-msg "field '--preset': point 0001 .*'vllm' after 'bucketserve': presets do not stack"
expect_exit 0 preset-once "$B" run --preset vllm --print-config
grep -qE '^scheduler\.task_aware +false ' "$T/stdout" && ok preset-once-value || fail preset-once-value "$(grep task_aware "$T/stdout")"

BABS=$(cd "$(dirname "$B")" && pwd)/$(basename "$B")
# (in $T: whatever a command given twice might write lands there)
while IFS='|' read -r name pat args; do
	# shellcheck disable=SC2086
	expect_exit 2 "twice-$name" env -C "$T" "$BABS" $args
	expect_stderr "twice-$name-msg" "$pat"
done <<'EOF'
run-trace|option '--trace' given twice \('a', then 'b'\): it takes one value|run --trace a --trace b
run-out|option '--output' given twice \('x', then 'y'\)|run -o x -o y
run-seed|option '--seed' given twice \('1', then '2'\)|run --seed 1 --seed 2
run-json|option '--json' given twice|run --json --json
validate-trace|option '--trace' given twice|validate --trace alpaca --trace sharegpt
predict-batch|option '--batch' given twice \('1', then '2'\)|predict --batch 1 --batch 2 --input 4 --output 4
predict-format|option '--format' given twice|predict --format json --format text --batch 1 --input 4 --output 4
plot-y|option '--y' given twice \('a', then 'b'\)|plot line --y a --y b --x c in -o out
sweep-emit|option '--emit' given twice \('parallel', then 'slurm'\)|sweep --emit parallel --emit slurm -o x --axis seed=1
capacity-target|option '--target' given twice|capacity --target 0.5 --target 0.9
buckets-format|option '--format' given twice|buckets --format json --format csv
synth-out|option '--output' given twice|trace synth -o a.csv -o b.csv
stats-format|option '--format' given twice|trace stats alpaca --format json --format text
calibrate-out|option '--output' given twice|calibrate -o a.json -o b.json
EOF
[ ! -e "$T/x" ] && [ ! -e "$T/y" ] && ok twice-nothing-written || fail twice-nothing-written "x or y was created"
expect_exit 2 json-quiet "$B" run --json -q
expect_stderr json-quiet-msg "--json prints the summary and --quiet prints nothing"
# the repeatable ones stay repeatable
printf '{"workload": {"num_requests": 7}}\n' >"$T/a.json"
printf '{"workload": {"rate": 3}}\n' >"$T/b.json"
expect_exit 0 repeat-config "$B" run -c "$T/a.json" -c "$T/b.json" --set slo.ttft_ms=100 --set slo.tpot_ms=50 \
	--env VLLM_SKIP_WARMUP=1 --env VLLM_CONTIGUOUS_PA=1 --print-config
grep -qE '^workload\.num_requests +7 ' "$T/stdout" && grep -qE '^workload\.rate +3 ' "$T/stdout" \
	&& grep -qE '^slo\.tpot_ms +50 ' "$T/stdout" && ok repeat-config-values || fail repeat-config-values "$(grep -E 'num_requests|rate|tpot' "$T/stdout")"

# --- a key given twice in one config file ---
printf '{"workload.num_requests": 5,\n "workload": {"num_requests": 7}}\n' >"$T/dup1.json"
printf '{\n  "server": {"max_num_seqs": 8},\n  "sim": {"strict": false},\n  "sim.strict": true\n}\n' >"$T/dup2.json"
printf '{"env": {"VLLM_SKIP_WARMUP": "1",\n  "VLLM_SKIP_WARMUP": "0"}}\n' >"$T/dup3.json"
for cmd in run validate; do
	expect_exit 3 "dup-nested-$cmd" "$B" $cmd -c "$T/dup1.json"
	expect_stderr "dup-nested-$cmd-msg" "^bucketsim: error: $T/dup1\.json:2: field 'workload\.num_requests': given twice in the file \(first on line 1\)$"
done
expect_exit 3 dup-plain "$B" validate -c "$T/dup2.json"
expect_stderr dup-plain-msg "dup2\.json:4: field 'sim\.strict': given twice in the file \(first on line 3\)"
expect_exit 3 dup-env "$B" validate -c "$T/dup3.json"
expect_stderr dup-env-msg "dup3\.json:2: field 'VLLM_SKIP_WARMUP': given twice"
[ "$(wc -l <"$T/stderr")" = 1 ] && ok dup-one-line || fail dup-one-line "$(cat "$T/stderr")"
expect_exit 3 dup-run-nothing "$B" run -c "$T/dup1.json" -o "$T/dup-out"
[ ! -e "$T/dup-out" ] && ok dup-run-nothing-written || fail dup-run-nothing-written "$(ls "$T/dup-out")"
# a sweep's base configuration goes through the same loader
printf '{"axes": {"workload.rate": [1]},\n "workload": {"num_requests": 5},\n "workload.num_requests": 6}\n' >"$T/dup-sweep.json"
expect_exit 3 dup-sweep-base "$B" sweep -f "$T/dup-sweep.json"
expect_stderr dup-sweep-base-msg "base\.json:[0-9]+: field 'workload\.num_requests': .*given twice in the file"

# --- --strict: variables given but not read, a key and its variable at odds ---
expect_exit 0 env-ignored-warn "$B" validate --env VLLM_PROMPT_BS_BUCKET_STEP=5
expect_stderr env-ignored-warn-msg "warning: VLLM_PROMPT_BS_BUCKET_STEP=5 is not used by the exponential strategy"
expect_exit 3 env-ignored-strict "$B" validate --env VLLM_PROMPT_BS_BUCKET_STEP=5 --strict
expect_stderr env-ignored-strict-msg "^bucketsim: error: field 'VLLM_PROMPT_BS_BUCKET_STEP': given but never read: .*\(--strict\)$"
expect_exit 3 env-ignored-strict-run "$B" run --env VLLM_PROMPT_BS_BUCKET_STEP=5 --strict
expect_exit 0 env-read-strict "$B" validate --env VLLM_PROMPT_BS_BUCKET_STEP=5 --env VLLM_BUCKETING_STRATEGY=lin --strict
silent env-read-strict-silent
printf '{"sim.strict": true,\n "env": {"VLLM_BUCKETING_STRATEGY": "lin"},\n "bucketing.version": "docs"}\n' >"$T/strict-docs.json"
expect_exit 3 env-strategy-docs-strict "$B" validate -c "$T/strict-docs.json"
expect_stderr env-strategy-docs-strict-msg "strict-docs\.json:2: field 'VLLM_BUCKETING_STRATEGY': given but never read"
for cmd in run validate buckets; do
	expect_exit 3 "env-key-conflict-$cmd" "$B" $cmd --env VLLM_SKIP_WARMUP=true --set bucketing.skip_warmup=false
	expect_stderr "env-key-conflict-$cmd-msg" "field 'bucketing\.skip_warmup': 'false' conflicts with the environment variable VLLM_SKIP_WARMUP=true"
done
expect_exit 0 env-key-agree "$B" validate --env VLLM_SKIP_WARMUP=1 --set bucketing.skip_warmup=true
silent env-key-agree-silent
printf '{"bucketing": {"skip_warmup": false},\n "env": {"VLLM_SKIP_WARMUP": "yes"}}\n' >"$T/conflict.json"
expect_exit 3 env-key-conflict-file "$B" validate -c "$T/conflict.json"
expect_stderr env-key-conflict-file-msg "conflict\.json:1: field 'bucketing\.skip_warmup'"
expect_exit 3 env-key-conflict-threshold "$B" validate --set server.defrag_threshold=5 --env VLLM_DEFRAG_THRESHOLD=7
expect_exit 3 env-key-conflict-strategy "$B" validate --set bucketing.strategy=linear --env VLLM_BUCKETING_STRATEGY=exp
expect_exit 0 env-over-preset "$B" validate --preset uellm --env VLLM_BUCKETING_STRATEGY=pad
# predict reads the cost model alone: --strict refused; unknown --env names warn there and in
# trace synth as in run
expect_exit 2 predict-strict "$B" predict --batch 1 --input 8 --output 8 --strict
expect_stderr predict-strict-msg "field 'sim\.strict': --strict checks the keys a simulation reads"
expect_exit 2 predict-strict-set "$B" predict --batch 1 --input 8 --output 8 --set sim.strict=true
expect_exit 0 predict-unknown-env "$B" predict --batch 1 --input 8 --output 8 --env VLLM_PROMT_BS_BUCKET_MAX=4
expect_stderr predict-unknown-env-msg "warning: --env VLLM_PROMT_BS_BUCKET_MAX is not a variable bucketsim reads; did you mean VLLM_PROMPT_BS_BUCKET_MAX\?"
expect_exit 0 synth-unknown-env "$B" trace synth -n 5 --env VLLM_NOPE=1 -o "$T/s0.csv"
expect_stderr synth-unknown-env-msg "warning: --env VLLM_NOPE is not a variable bucketsim reads"
# every command that takes a configuration applies run's check of the keys set but never read
expect_exit 0 buckets-unread-warn "$B" buckets --set scheduler.theta=0.3
expect_stderr buckets-unread-warn-msg "warning: field 'scheduler\.theta': set but never read"
expect_exit 3 buckets-unread-strict "$B" buckets --set scheduler.theta=0.3 --strict
[ ! -s "$T/stdout" ] && ok buckets-unread-strict-nothing || fail buckets-unread-strict-nothing "$(head -2 "$T/stdout")"
CAP=(capacity --trace alpaca --set workload.num_requests=300 --tol 0.2)
expect_exit 0 capacity-unread-warn "$B" "${CAP[@]}" --set scheduler.theta=0.3
[ "$(grep -c "warning: field 'scheduler\.theta': set but never read" "$T/stderr")" = 1 ] \
	&& ok capacity-unread-warn-once || fail capacity-unread-warn-once "$(cat "$T/stderr")"
expect_exit 3 capacity-unread-strict "$B" "${CAP[@]}" --set scheduler.theta=0.3 --strict -o "$T/cap"
expect_stderr capacity-unread-strict-msg "error: field 'scheduler\.theta': set but never read"
[ ! -e "$T/cap" ] && ok capacity-unread-strict-nothing || fail capacity-unread-strict-nothing "$(ls "$T/cap")"
# sweep --strict reaches every point (it crashed, a flag's missing value saved as text)
expect_exit 3 sweep-strict "$B" sweep --strict --set scheduler.theta=0.3 --axis workload.rate=1,2 \
	--set workload.num_requests=5 -j 1 -o "$T/sw"
grep -q "error: field 'scheduler\.theta': point 0001 (workload.rate=1 seed=1): set but never read" "$T/stderr" \
	&& [ ! -e "$T/sw/points/0001" ] && ok sweep-strict-point || fail sweep-strict-point "$(cat "$T/stderr")"
expect_exit 0 sweep-strict-ok "$B" sweep --strict --axis workload.rate=1 --set workload.num_requests=5 -j 1

# --- hardware.tp ---
for tp in 3 64; do
	expect_exit 3 "tp-$tp" "$B" validate --set hardware.tp=$tp
	expect_stderr "tp-$tp-msg" "field 'hardware\.tp': $tp does not divide the 32 attention heads of llama-3\.1-8b: vLLM requires num_attention_heads % tensor_parallel_size == 0"
done
expect_exit 3 tp-box "$B" predict --set hardware=gaudi3 --set hardware.tp=16 --set model=llama-3.1-405b --batch 1 --input 8 --output 8
expect_stderr tp-box-msg "field 'hardware\.tp': 16 cards, more than the 8 of one gaudi3 box"
printf '{"hardware.tp": 3}\n' >"$T/tp.json"
expect_exit 3 tp-file "$B" run -c "$T/tp.json"
expect_stderr tp-file-msg "tp\.json:1: field 'hardware\.tp'"
# every bundled model at the degrees the docs and tests use
models=$("$B" list models | awk '/^models:/ { m = 1; next } m && NF { print $1 }')
[ "$(echo "$models" | wc -w)" -ge 11 ] && ok tp-models-listed || fail tp-models-listed "$models"
for m in $models; do
	for tp in 1 2 8; do
		"$B" predict --set model="$m" --set hardware.tp=$tp --batch 1 --input 8 --output 8 >/dev/null 2>"$T/stderr" \
			&& ok "tp-$m-$tp" || fail "tp-$m-$tp" "$(cat "$T/stderr")"
	done
done

# the KV heads split or replicated (QKVParallelLinear): a 24-head, 8-KV-head model at tp 3
# (3 divides 24, but neither of 3 and 8 the other), accepted at tp 4 and 8
printf '{"kind": "model", "layers": 32, "hidden": 3072, "heads": 24, "kv_heads": 8, "head_dim": 128, "ffn": 8192, "gated_mlp": true, "vocab": 128256, "experts": 1, "experts_per_token": 1, "max_context": 131072, "tied_embeddings": false, "learned_positions": 0}\n' >"$T/m24.json"
expect_exit 3 tp-kv-heads "$B" validate --set model="$T/m24.json" --set hardware.tp=3
expect_stderr tp-kv-heads-msg "field 'hardware\.tp': 3 and the 8 KV heads of m24: .*one must divide the other"
expect_exit 0 tp-kv-heads-4 "$B" validate --set model="$T/m24.json" --set hardware.tp=4
expect_exit 0 tp-kv-heads-8 "$B" validate --set model="$T/m24.json" --set hardware.tp=8

# --- a model profile from a file ---
printf '{"kind": "model", "layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128, "ffn": 14336, "gated_mlp": true, "vocab": 128256, "experts": 1, "experts_per_token": 1, "max_context": 131072, "tied_embeddings": false, "learned_positions": 0}\n' >"$T/my-8b.json"
expect_exit 0 model-file "$B" predict --set model="$T/my-8b.json" --batch 8 --input 128 --output 128 --format json
grep -qE '"model":[[:space:]]*"my-8b"' "$T/stdout" && ok model-file-name || fail model-file-name "$(grep model "$T/stdout")"
grep -v '"model"' "$T/stdout" >"$T/p-file"
"$B" predict --set model=llama-3.1-8b --batch 8 --input 128 --output 128 --format json | grep -v '"model"' >"$T/p-bundled"
cmp -s "$T/p-file" "$T/p-bundled" && ok model-file-same || fail model-file-same "$(diff "$T/p-file" "$T/p-bundled" | head)"
(cd "$T" && "$BABS" run --set model=./my-8b.json --set workload.num_requests=20 -o run-m >/dev/null 2>"$T/stderr") \
	&& grep -q '"model":	"my-8b"' "$T/run-m/summary.json" && ok model-file-run || fail model-file-run "$(cat "$T/stderr")"
sed 's/"heads": 32/"heads": 30/' "$T/my-8b.json" >"$T/bad-heads.json"
expect_exit 3 model-file-kv "$B" validate --set model="$T/bad-heads.json"
expect_stderr model-file-kv-msg "bad-heads\.json: field 'kv_heads': 8 does not divide the 30 attention heads"
sed 's/"ffn": 14336, //' "$T/my-8b.json" >"$T/no-ffn.json"
expect_exit 3 model-file-missing "$B" validate --set model="$T/no-ffn.json"
expect_stderr model-file-missing-msg "no-ffn\.json: field 'ffn': missing or not an integer"
expect_exit 3 model-file-absent "$B" validate --set model="$T/none.json"
expect_stderr model-file-absent-msg "none\.json: field 'model': cannot open"
expect_exit 3 model-file-hw "$B" validate --set model="$(pwd)/models/data/gaudi2.json"
expect_stderr model-file-hw-msg "field 'kind': not a model profile"
expect_exit 0 model-list-keys "$B" list keys
grep -E '^model ' "$T/stdout" | grep -q 'name or file' && ok model-list-keys-unit || fail model-list-keys-unit "$(grep -E '^model ' "$T/stdout")"

# --- keys set but never read: each rule both ways; validate reports what run reports ---
# unread NAME KEY ARGS...: validate warns about KEY and exits 0; with --strict exits 3 naming it.
unread() {
	local name=$1 key=$2; shift 2
	expect_exit 0 "$name-warn" "$B" validate "$@"
	expect_stderr "$name-warn-msg" "^bucketsim: warning: field '$key': (set|given) but never read: "
	expect_exit 3 "$name-strict" "$B" validate --strict "$@"
	expect_stderr "$name-strict-msg" "^bucketsim: error: field '$key': (set|given) but never read: .*\(--strict\)$"
}
# read NAME ARGS...: validate --strict is silent.
read_() {
	local name=$1; shift
	expect_exit 0 "$name-read" "$B" validate --strict "$@"
	silent "$name-read-silent"
}
unread rate-trace workload.rate --trace azure-conv --set workload.rate=5
expect_stderr rate-trace-why "the arrivals are the trace's timestamps"
unread rate-offline workload.rate --set workload.arrival=offline --set workload.rate=5
read_ rate-poisson --trace azure-conv --set workload.rate=5 --set workload.arrival=poisson
read_ rate-default --trace alpaca --set workload.rate=5
read_ rate-gamma --trace azure-conv --set workload.rate=5 --set workload.arrival=gamma
read_ rate-closed-loop --set workload.concurrency=4 --set workload.rate=5
unread cv-poisson workload.cv --set workload.cv=3
expect_stderr cv-poisson-why "only gamma arrivals read it, and the arrivals are poisson"
unread cv-trace workload.cv --trace azure-conv --set workload.cv=3
read_ cv-gamma --set workload.cv=3 --set workload.arrival=gamma
unread frac-auto workload.offline_fraction --set workload.offline_fraction=0.3
expect_stderr frac-auto-why "only workload\.task=random reads it, and workload\.task is 'auto'"
unread frac-no-policy workload.offline_fraction --set workload.offline_fraction=0.3 --set workload.task=random
expect_stderr frac-no-policy-why "only scheduler\.task_aware=true does"
read_ frac-task-aware --set workload.offline_fraction=0.3 --set workload.task=random --set scheduler.task_aware=true
read_ frac-bucketserve --preset bucketserve --set workload.offline_fraction=0.3 --set workload.task=random
unread weights-auto workload.priority_weights --set workload.priority_weights=1,3
unread weights-fcfs workload.priority_weights --set workload.priority_weights=1,3 --set workload.priority=random
expect_stderr weights-fcfs-why "scheduler\.order is 'fcfs' \(only priority, slo_output read priorities\)"
read_ weights-priority --set workload.priority_weights=1,3 --set workload.priority=random --set scheduler.order=priority
read_ weights-slo-output --set workload.priority_weights=1,3 --set workload.priority=random --set scheduler.order=slo_output
unread prefix-auto workload.random_prefix_len --set workload.random_prefix_len=16
unread input-len-auto workload.random_input_len --set workload.random_input_len=16
read_ prefix-random --set workload.random_prefix_len=16 --set workload.lengths=random
unread threshold-off server.defrag_threshold --set server.defrag_threshold=8
expect_stderr threshold-off-why "the defragmenter is off"
read_ threshold-on --set server.defrag_threshold=8 --env VLLM_CONTIGUOUS_PA=true
unread threshold-env-off VLLM_DEFRAG_THRESHOLD --env VLLM_DEFRAG_THRESHOLD=8
read_ threshold-env-on --env VLLM_DEFRAG_THRESHOLD=8 --set server.contiguous_pa=true
printf '(1, 128, 0)\n(1, 1, 8)\n' >"$T/b.txt"
unread file-strategy bucketing.file --set bucketing.file="$T/b.txt"
expect_stderr file-strategy-why "only bucketing strategy file reads it, and the strategy is 'exponential'"
unread file-env-strategy bucketing.file --set bucketing.strategy=file --set bucketing.file="$T/b.txt" --env VLLM_UNIFIED_ATTN=true
expect_stderr file-env-strategy-why "the strategy is 'unified' \(chosen by the VLLM_\* environment\)"
unread file-off bucketing.file --set bucketing.strategy=file --set bucketing.file="$T/b.txt" --env VLLM_ENABLE_BUCKETING=false
read_ file-used --set bucketing.strategy=file --set bucketing.file="$T/b.txt"
read_ file-same-env --set bucketing.strategy=file --set bucketing.file="$T/b.txt" --env VLLM_BUCKETING_FROM_FILE="$T/b.txt"
# the generated lengths' keys by the length source; the outputs of workload.output_trace
unread mean-uniform workload.prompt_mean --set workload.lengths=uniform --set workload.prompt_mean=80
expect_stderr mean-uniform-why "only lognormal and constant lengths read it, and the lengths are uniform"
unread min-lognormal workload.prompt_min --set workload.lengths=lognormal --set workload.prompt_min=5
unread cv-constant workload.prompt_cv --set workload.lengths=constant --set workload.prompt_cv=2
unread max-trace workload.output_max --trace alpaca --set workload.output_max=100
unread out-mean-output-trace workload.output_mean --set workload.lengths=lognormal --set workload.output_trace=alpaca --set workload.output_mean=7
expect_stderr out-mean-output-trace-why "workload\.output_trace draws every output length"
read_ min-uniform --set workload.lengths=uniform --set workload.prompt_min=5 --set workload.output_max=100
read_ cv-lognormal --set workload.lengths=lognormal --set workload.prompt_cv=0.3 --set workload.output_mean=70
read_ mean-constant --set workload.lengths=constant --set workload.prompt_mean=20 --set workload.output_mean=20
read_ prompt-mean-output-trace --set workload.lengths=lognormal --set workload.output_trace=alpaca --set workload.prompt_mean=70
# the adjustment period, the host-time keys, the transfer link, INC's scale patching
unread period-arrival scheduler.adjust_period_s --set scheduler.grouping=adaptive --set scheduler.adjust_period_s=2
read_ period-period --set scheduler.grouping=adaptive --set scheduler.adjust=period --set scheduler.adjust_period_s=2
unread async-no-host server.async_scheduling --set sim.host_time=false --set server.async_scheduling=false
read_ async-host --set server.async_scheduling=false
unread capture-eager server.max_cudagraph_capture_size --set server.enforce_eager=true --set server.max_cudagraph_capture_size=64
unread capture-no-host server.max_cudagraph_capture_size --set sim.host_time=false --set server.max_cudagraph_capture_size=64
# read by the lazy mode's _use_graphs (hpu_graphs) and by cuda_graphs' capture sizes; not by
# torch.compile (hpu_compile, the default), which uses no HPU graph
read_ capture-used --env PT_HPU_LAZY_MODE=1 --set server.max_cudagraph_capture_size=64
unread capture-compile server.max_cudagraph_capture_size --set server.max_cudagraph_capture_size=64
unread link-colocated hardware.kv_link_gb_s --set hardware.kv_link_gb_s=10
read_ link-disaggregated --preset distserve --set hardware.kv_link_gb_s=10
read_ link-pipeline --set cluster.pp=2 --set hardware.kv_link_gb_s=10
unread rsp-bf16 RUNTIME_SCALE_PATCHING --env RUNTIME_SCALE_PATCHING=0
read_ rsp-fp8 --set model.precision=fp8 --env RUNTIME_SCALE_PATCHING=0
# a sweep warns on its own standard error, once however many points set the key (the warning
# reached only each point's NNNN.err, lost without -o)
expect_exit 0 sweep-unread-warn "$B" sweep --set workload.num_requests=10 --set scheduler.theta=0.3 --axis workload.rate=1,2,3
[ "$(grep -c "warning: field 'scheduler\.theta': set but never read" "$T/stderr")" = 1 ] && ok sweep-unread-warn-once || fail sweep-unread-warn-once "$(cat "$T/stderr")"
# any warning is printed once per process: an unknown --env in a sweep (once per point before)
# and in a capacity search (once per probe before)
expect_exit 0 sweep-env-warn "$B" sweep --set workload.num_requests=10 --env VLLM_NOPE=1 --axis workload.rate=1,2,3
[ "$(grep -c "warning: --env VLLM_NOPE is not a variable bucketsim reads" "$T/stderr")" = 1 ] && ok sweep-env-warn-once || fail sweep-env-warn-once "$(cat "$T/stderr")"
expect_exit 0 capacity-env-warn "$B" capacity --set workload.num_requests=2000 --env VLLM_NOPE=1
[ "$(grep -c "warning: --env VLLM_NOPE is not a variable bucketsim reads" "$T/stderr")" = 1 ] && ok capacity-env-warn-once || fail capacity-env-warn-once "$(cat "$T/stderr")"
# trace synth applies the workload's rules
expect_exit 0 synth-unread-warn "$B" trace synth --trace azure-conv -n 5 --rate 3 -o "$T/s1.csv"
expect_stderr synth-unread-warn-msg "warning: field 'workload\.rate': set but never read: only poisson and gamma arrivals read it, and the arrivals are the trace's timestamps"
expect_exit 3 synth-unread-strict "$B" trace synth --trace azure-conv -n 5 --rate 3 --strict -o "$T/s2.csv"
[ ! -e "$T/s2.csv" ] && ok synth-unread-strict-nothing || fail synth-unread-strict-nothing "written"
# trace synth writes the tasks it draws, whatever reads them: no task_aware needed
expect_exit 0 synth-task-random "$B" trace synth -n 5 --set workload.task=random \
	--set workload.offline_fraction=0.2 --strict -o "$T/s3.csv"
silent synth-task-random-silent

# run reports exactly what validate reports, from a config file too (file and line)
printf '{"workload": {"num_requests": 20,\n  "cv": 3}}\n' >"$T/cv.json"
"$B" validate --strict -c "$T/cv.json" 2>"$T/v.err"; v=$?
"$B" run --strict -c "$T/cv.json" -o "$T/cv-out" >/dev/null 2>"$T/r.err"; r=$?
[ "$v" = 3 ] && [ "$r" = 3 ] && cmp -s "$T/v.err" "$T/r.err" && grep -q "cv\.json:2: field 'workload\.cv'" "$T/r.err" \
	&& [ ! -e "$T/cv-out" ] && ok run-validate-same || fail run-validate-same "$v $r $(cat "$T/v.err" "$T/r.err")"
"$B" validate -c "$T/cv.json" 2>"$T/v.err"; v=$?
"$B" run -q -c "$T/cv.json" 2>"$T/r.err"; r=$?
[ "$v" = 0 ] && [ "$r" = 0 ] && cmp -s "$T/v.err" "$T/r.err" && [ -s "$T/v.err" ] \
	&& ok run-validate-same-warn || fail run-validate-same-warn "$v $r $(cat "$T/v.err" "$T/r.err")"

e2e_done
