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
# a sweep file's base: the same key nested and dotted, named at the sweep file's lines
printf '{"axes": {"workload.rate": [1]},\n "workload": {"num_requests": 5},\n "workload.num_requests": 6}\n' >"$T/dup-sweep.json"
expect_exit 3 dup-sweep-base "$B" sweep -f "$T/dup-sweep.json"
expect_stderr dup-sweep-base-msg "dup-sweep\.json:3: field 'workload\.num_requests': member given twice \(first on line 2\)"

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
# the orders that read priorities, as the binary finds them (each order in turn: the weights
# are read, validate --strict is silent); the message names exactly those, in registry order
readers=""
for o in $("$B" list policies | awk '/^order /{f = 1; next} /^[a-z]/{f = 0} f {print $1}'); do
	"$B" validate --strict --set workload.priority_weights=1,3 --set workload.priority=random \
		--set scheduler.order="$o" >/dev/null 2>&1 && readers="$readers${readers:+, }$o"
done
case ", $readers, " in *", priority, "*) case ", $readers, " in *", slo_output, "*) r=1 ;; *) r= ;; esac ;; *) r= ;; esac
[ -n "$r" ] && ok weights-readers || fail weights-readers "priority and slo_output not among the orders reading priorities: $readers"
expect_stderr weights-fcfs-why "scheduler\.order is 'fcfs' \(only $readers read priorities\)"
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
unread log-strategy bucketing.log --set bucketing.log=tests/logs/seed_docs.log
expect_stderr log-strategy-why "only bucketing strategy log reads it, and the strategy is 'exponential'"
unread log-off bucketing.log --set bucketing.strategy=log --set bucketing.log=tests/logs/seed_docs.log --env VLLM_ENABLE_BUCKETING=false
read_ log-used --set bucketing.strategy=log --set bucketing.log=tests/logs/seed_docs.log --set server.max_model_len=1024
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

# --- messages: control characters escaped, every error on one line with its place ---
# (inputs from a hostile pass over the readers; the escape sequence \e[2J clears a terminal)
one_line() { [ "$(wc -l <"$T/stderr")" -eq "${2:-1}" ] && ok "$1" || fail "$1" "$(cat -A "$T/stderr" | head -5)"; }
expect_exit 2 esc-value "$B" validate --set "$(printf 'workload.num_requests=1\033[2J')"
expect_stderr esc-value-msg "got '1\\\\x1b\[2J'$"
one_line esc-value-one-line
grep -q "$(printf '\033')" "$T/stderr" && fail esc-value-raw "an ESC byte on stderr" || ok esc-value-raw
expect_exit 3 esc-file "$B" validate --trace "$(printf 'no\033]0;t\007such.csv')"
expect_stderr esc-file-msg "^bucketsim: error: no\\\\x1b\]0;t\\\\x07such\.csv: cannot open"
expect_exit 2 esc-command "$B" "$(printf 'ru\033[2Jn')"
expect_stderr esc-command-msg "unknown command 'ru\\\\x1b\[2Jn'"
expect_exit 2 esc-option "$B" run "$(printf -- '--x\033[2J')"
expect_stderr esc-option-msg "unknown option '--x\\\\x1b\[2J'"
# a quoted CSV value holding a newline: the message stays on one line
printf 'prompt_tokens,output_tokens\n"10\n",5\n' >"$T/nl.csv"
expect_exit 3 csv-newline "$B" trace stats "$T/nl.csv"
expect_stderr csv-newline-msg "nl\.csv:2: field 'prompt_tokens': expected a positive integer, got '10\\\\n'$"
one_line csv-newline-one-line
# a NUL byte in a bucket file is placed on its line
printf '(1, 128, 0)\n(1, 1, 128)\n(1, 1\000, 256)\n' >"$T/nul.txt"
expect_exit 3 bucketfile-nul "$B" buckets --set bucketing.strategy=file --set "bucketing.file=$T/nul.txt"
expect_stderr bucketfile-nul-msg "nul\.txt:3: NUL byte in the file$"
# a workload.mix of numbers names the entry and the line of the configuration file
printf '{"workload.mix": [1, 2]}\n' >"$T/mix.json"
expect_exit 3 mix-numbers "$B" validate -c "$T/mix.json"
expect_stderr mix-numbers-msg "mix\.json:1: field 'workload\.mix': entry 1 \('1'\): no such file and no bundled trace of that name"
expect_exit 3 mix-missing "$B" validate --set workload.mix=alpaca,nope.csv
expect_stderr mix-missing-msg "^bucketsim: error: field 'workload\.mix': entry 2 \('nope\.csv'\): cannot open"
# two vllm-bench timestamps 0.4 s apart are printed so that they differ
printf ',start_time,prompt_len,output_tokens,ttft,latency\n0,1700000000.5,10,5,0.1,0.3\n1,1700000000.1,12,6,0.1,0.2\n' >"$T/vb.csv"
expect_exit 3 vllm-bench-digits "$B" trace stats "$T/vb.csv"
expect_stderr vllm-bench-digits-msg "vb\.csv:3: field 'start_time': 1700000000\.1 s is earlier than the previous record's 1700000000\.5 s"
# an empty configuration file, and one cut short
: >"$T/empty.json"
expect_exit 3 config-empty "$B" validate -c "$T/empty.json"
expect_stderr config-empty-msg "empty\.json: empty file \(a configuration is a JSON object, \{\} when it sets nothing\)"
printf '{"workload": {\n  "rate": ' >"$T/cut.json"
expect_exit 3 config-cut "$B" validate -c "$T/cut.json"
expect_stderr config-cut-msg "cut\.json:2: invalid JSON: the file ends inside a value"
# environment variables no environment can hold
printf '{"env": {"": "1"}}\n' >"$T/env1.json"
expect_exit 3 env-empty-name "$B" validate -c "$T/env1.json"
expect_stderr env-empty-name-msg "env1\.json:1: field 'env': an empty variable name"
printf '{"env": {\n "A=B\\nC": "x"}}\n' >"$T/env2.json"
expect_exit 3 env-odd-name "$B" validate -c "$T/env2.json"
expect_stderr env-odd-name-msg "env2\.json: field 'A=B\\\\nC': not a variable name"
printf '{"env": {\n "VLLM_SKIP_WARMUP": "true\\u001b[2J"}}\n' >"$T/env3.json"
expect_exit 3 env-control-value "$B" validate -c "$T/env3.json"
expect_stderr env-control-value-msg "env3\.json:2: field 'VLLM_SKIP_WARMUP': a control character in the value"
expect_exit 2 env-arg-name "$B" validate --env "A B=1"
expect_stderr env-arg-name-msg "field 'A B': not a variable name"
expect_exit 2 env-arg-value "$B" validate --env "$(printf 'VLLM_SKIP_WARMUP=1\nX')"
expect_stderr env-arg-value-msg "field 'VLLM_SKIP_WARMUP': a control character in the value"
expect_exit 0 env-arg-ok "$B" validate --env VLLM_SKIP_WARMUP=true --env _X1=a

# --- auto, repeated --set, booleans, JSON numbers ---
# a key whose default is auto can be set back to auto: a -c value undone on the command line
printf '{"server": {"max_model_len": 4096}}\n' >"$T/mml.json"
expect_exit 0 auto-undo "$B" validate -c "$T/mml.json" --set server.max_model_len=auto --print-config
grep -qE '^server\.max_model_len +131072 +\(derived\)$' "$T/stdout" && ok auto-undo-value || fail auto-undo-value "$(grep max_model_len "$T/stdout")"
expect_exit 0 auto-undo-file "$B" validate --set server.max_model_len=auto -c "$T/mml.json" --print-config
grep -qE '^server\.max_model_len +131072 +\(derived\)$' "$T/stdout" && ok auto-undo-file-value || fail auto-undo-file-value "$(grep max_model_len "$T/stdout")"
printf '{"server": {"max_model_len": "auto", "contiguous_pa": "auto"}, "slo": {"e2e_ms": "auto"}}\n' >"$T/auto.json"
expect_exit 0 auto-in-file "$B" validate -c "$T/auto.json"
expect_exit 0 auto-bool "$B" validate --set server.contiguous_pa=true --set server.contiguous_pa=auto --print-config
grep -qE '^server\.contiguous_pa +false +\(derived\)$' "$T/stdout" && ok auto-bool-value || fail auto-bool-value "$(grep contiguous_pa "$T/stdout")"
# ... and only such a key
expect_exit 2 auto-not-default "$B" validate --set server.max_num_seqs=auto
expect_stderr auto-not-default-msg "field 'server\.max_num_seqs': expected an integer"
# --set of one key twice: the command line is read left to right, the last wins (documented)
expect_exit 0 set-twice "$B" validate --set server.max_num_seqs=4 --set server.max_num_seqs=8 --print-config
grep -qE '^server\.max_num_seqs +8 +\(command line\)$' "$T/stdout" && ok set-twice-last || fail set-twice-last "$(grep max_num_seqs "$T/stdout")"
# booleans: the message names every spelling taken
expect_exit 2 bool-spellings "$B" validate --set server.prefix_caching=maybe
expect_stderr bool-spellings-msg "expected true or false, got 'maybe' \(1/0, yes/no and on/off are taken too, in any case\)$"
expect_exit 0 bool-yes "$B" validate --set server.prefix_caching=Off --print-config
grep -qE '^server\.prefix_caching +false ' "$T/stdout" && ok bool-yes-value || fail bool-yes-value "$(grep prefix_caching "$T/stdout")"
# numbers JSON does not have (cJSON takes them): a JSON Lines trace, a JSON array, a config file
printf '{"prompt_tokens": 12, "output_tokens": 5}\n{"prompt_tokens": 010, "output_tokens": 5}\n' >"$T/lz.jsonl"
expect_exit 3 jsonl-leading-zero "$B" trace stats "$T/lz.jsonl"
expect_stderr jsonl-leading-zero-msg "lz\.jsonl:2: '010' is not a JSON number \(no leading zeros; digits on both sides of a '\.'\) \(column 19\)$"
printf '[{"prompt_tokens": 12,\n  "output_tokens": 5.}]\n' >"$T/dot.json"
expect_exit 3 json-trailing-dot "$B" trace stats "$T/dot.json"
expect_stderr json-trailing-dot-msg "dot\.json:2: '5\.' is not a JSON number"
printf '{"server":\n {"max_num_seqs": 010}}\n' >"$T/lz.json"
expect_exit 3 config-leading-zero "$B" validate -c "$T/lz.json"
expect_stderr config-leading-zero-msg "lz\.json:2: '010' is not a JSON number"

e2e_done
