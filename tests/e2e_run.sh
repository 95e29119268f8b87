#!/usr/bin/env bash
# End-to-end tests of `bucketsim run` and `bucketsim validate`: outputs and their columns,
# conservation, determinism, runtime compiles past the largest bucket, every bad-input case
# (exit 3, FILE:LINE and field named, no partial output), usage errors (exit 2), help.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM

# --- a default run on a bundled trace writes four files ---
expect_exit 0 run-alpaca "$B" run --trace alpaca -o "$T/a"
for f in summary.json requests.csv batches.csv buckets.csv; do
	[ -s "$T/a/$f" ] && ok "file-$f" || fail "file-$f" "missing"
done
grep -q '^requests ' "$T/stdout" && ok human-summary || fail human-summary "no summary on stdout"
[ "$(wc -l < "$T/a/requests.csv")" -eq 5001 ] && ok requests-rows || fail requests-rows "$(wc -l < "$T/a/requests.csv")"
head -1 "$T/a/requests.csv" | grep -qx 'id,arrival_s,scheduled_s,first_token_s,finish_s,prompt_tokens,output_tokens,preemptions,ttft_ms,tpot_ms,e2e_ms,instance,prefill_instance,kv_transfer_ms' \
	&& ok requests-header || fail requests-header "$(head -1 "$T/a/requests.csv")"
head -1 "$T/a/batches.csv" | grep -qx 'pass,start_s,end_s,phase,bs,query,blocks,bucket_bs,bucket_query,bucket_blocks,real_tokens,padded_tokens,compile_ms,instance,causal,bucket_causal' \
	&& ok batches-header || fail batches-header "$(head -1 "$T/a/batches.csv")"

# Conservation: every request once; output tokens equal the trace's (alpaca: outputs of 0
# are raised to 1, four rows).
ids=$(tail -n +2 "$T/a/requests.csv" | cut -d, -f1 | sort -n | uniq | wc -l)
[ "$ids" -eq 5000 ] && ok requests-unique || fail requests-unique "$ids distinct ids"
out=$(tail -n +2 "$T/a/requests.csv" | awk -F, '{s+=$7} END {print s}')
want=$(awk -F, 'NR>1 {s += ($3 > 0 ? $3 : 1)} END {print s}' workloads/data/alpaca.csv)
[ "$out" = "$want" ] && ok output-tokens || fail output-tokens "$out != $want"
grep -q "\"total_output_tokens\":	$want" "$T/a/summary.json" && ok summary-tokens || fail summary-tokens "summary disagrees"
# Passes in batches.csv never overlap and time never decreases.
awk -F, 'NR>2 && $2+0 < prev {bad=1} NR>1 {prev=$3+0} END {exit bad}' "$T/a/batches.csv" \
	&& ok passes-ordered || fail passes-ordered "a pass starts before the previous one ends"
# Every key of the summary that the README promises.
for k in completed request_throughput output_throughput total_token_throughput mean_ttft_ms \
	median_ttft_ms std_ttft_ms p90_ttft_ms p99_ttft_ms mean_tpot_ms p99_tpot_ms mean_itl_ms \
	p99_itl_ms mean_e2el_ms p99_e2el_ms slo_attainment real_tokens padded_tokens \
	padding_waste_ratio compiles_warmup compiles_runtime preemptions simulated_s; do
	grep -q "\"$k\":" "$T/a/summary.json" && ok "key-$k" || fail "key-$k" "missing in summary.json"
done

# --- determinism: same config and seed, byte-identical files ---
mv "$T/a" "$T/a1"
expect_exit 0 run-again "$B" run --trace alpaca -o "$T/a"
for f in summary.json requests.csv batches.csv buckets.csv; do
	cmp -s "$T/a/$f" "$T/a1/$f" && ok "same-$f" || fail "same-$f" "differs between two runs"
done
expect_exit 0 run-seed "$B" run --trace alpaca --set workload.lengths=empirical --seed 9 -o "$T/s1"
expect_exit 0 run-seed2 "$B" run --trace alpaca --set workload.lengths=empirical --seed 9 -o "$T/s2"
sed -i 's/s2/s1/' "$T/s2/summary.json"
cmp -s "$T/s1/requests.csv" "$T/s2/requests.csv" && cmp -s "$T/s1/summary.json" "$T/s2/summary.json" \
	&& ok seeded-identical || fail seeded-identical "differs"

# --- a prompt past the largest bucket compiles exactly once at run time ---
# docs version, max_model_len 4096, budget 2048: the warmed prompt queries stop at 1792 (the
# legacy exponential range over [128, 4096] has no 2048, and the filter bs*(q + ctx*128) <=
# 2048 drops everything above), so a 2000-token prompt creates the fallback (1, 2048, 0),
# compiled once; a later 1900-token prompt reuses it; a 100-token prompt is warm.
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,2000,4\n5,1900,4\n10,100,4\n' > "$T/long.csv"
expect_exit 0 run-long "$B" run --trace "$T/long.csv" --set server.max_model_len=4096 \
	--set bucketing.version=docs -o "$T/l"
grep -q '"compiles_runtime":	1,' "$T/l/summary.json" && ok one-runtime-compile || fail one-runtime-compile "$(grep compiles_runtime "$T/l/summary.json")"
grep -q '"fallback_buckets":	1,' "$T/l/summary.json" && ok one-fallback || fail one-fallback "$(grep fallback_buckets "$T/l/summary.json")"
grep -q '^prompt,1,2048,0,,0,1,1,2,3900,4096,' "$T/l/buckets.csv" && ok fallback-bucket-row || fail fallback-bucket-row "$(grep '^prompt,1,2048,' "$T/l/buckets.csv")"
[ "$(awk -F, 'NR>1 && $13+0 > 0' "$T/l/batches.csv" | wc -l)" -eq 1 ] && ok one-compiling-pass || fail one-compiling-pass "compile charged on several passes"
# Skipping warm-up compiles every distinct shape on first use instead.
expect_exit 0 run-skip "$B" run --trace "$T/long.csv" --set server.max_model_len=4096 --set bucketing.skip_warmup=true -o "$T/k"
grep -q '"compiles_warmup":	0,' "$T/k/summary.json" && ok skip-warmup || fail skip-warmup "warm-up compiled"

# --- bad input: exit 3, FILE:LINE, the field, and no partial output ---
bad() { # name, file content, pattern, extra args...
	local name=$1 content=$2 pat=$3; shift 3
	printf "$content" > "$T/$name.csv"
	rm -rf "$T/o-$name"
	expect_exit 3 "bad-$name" "$B" run --trace "$T/$name.csv" -o "$T/o-$name" "$@"
	expect_stderr "bad-$name-msg" "$pat"
	if [ -z "$(ls -A "$T/o-$name" 2>/dev/null)" ]; then ok "bad-$name-clean"; else fail "bad-$name-clean" "left $(ls "$T/o-$name")"; fi
}
bad malformed 'arrival_time_s,prompt_tokens,output_tokens\n0,10,5\n1,"12,5\n' "^bucketsim: error: .*malformed\.csv:[0-9]+: "
bad negative 'arrival_time_s,prompt_tokens,output_tokens\n0,10,5\n1,-3,5\n' "negative\.csv:3: field 'prompt_tokens'"
bad nonnum 'arrival_time_s,prompt_tokens,output_tokens\n0,10,x5\n' "nonnum\.csv:2: field 'output_tokens'"
bad toolong 'arrival_time_s,prompt_tokens,output_tokens\n0,5000,5\n' "toolong\.csv:2: field 'prompt_tokens'" --set server.max_model_len=4096
expect_exit 3 missing-file "$B" run --trace "$T/nope.csv" -o "$T/o-missing"
expect_stderr missing-file-msg "nope\.csv"
printf '{\n  "server": {\n    "max_num_seqs": 8,\n    "bogus_key": 1\n  }\n}\n' > "$T/unknown.json"
expect_exit 3 unknown-key "$B" run -c "$T/unknown.json" -o "$T/o-unknown"
expect_stderr unknown-key-msg "unknown\.json:4: field 'server\.bogus_key': unknown config key"
printf '{\n  "server": {\n    "max_num_seqs": "many"\n  }\n}\n' > "$T/wrongtype.json"
expect_exit 3 wrong-type "$B" run -c "$T/wrongtype.json" -o "$T/o-wrongtype"
expect_stderr wrong-type-msg "wrongtype\.json:3: field 'server\.max_num_seqs': expected an integer, got 'many'"
printf '{ "server": { "max_num_seqs": 8, }\n' > "$T/badjson.json"
expect_exit 3 bad-json "$B" run -c "$T/badjson.json"
expect_stderr bad-json-msg "badjson\.json:1: invalid JSON"
[ -z "$(ls -A "$T"/o-unknown "$T"/o-wrongtype 2>/dev/null)" ] && ok bad-config-clean || fail bad-config-clean "output left"
expect_exit 3 vllm-rule "$B" run --set server.max_num_seqs=4096
expect_stderr vllm-rule-msg "field 'server\.max_num_batched_tokens'"

# --- usage errors: exit 2 ---
expect_exit 2 unknown-option "$B" run --frobnicate
expect_stderr unknown-option-msg "see 'bucketsim run --help'"
expect_exit 2 set-unknown "$B" run --set nosuch.key=1
expect_exit 2 set-badvalue "$B" run --set server.max_num_seqs=-1
expect_exit 2 set-noequals "$B" run --set server.max_num_seqs
expect_exit 2 unknown-command "$B" frobnicate
expect_exit 2 no-command "$B"

# --- help, version, validate, print-config ---
expect_exit 0 help "$B" --help
expect_exit 0 run-help "$B" run --help
grep -q '^Examples:' "$T/stdout" && ok run-help-examples || fail run-help-examples "no examples"
expect_exit 0 help-cmd "$B" help run
expect_exit 0 version "$B" --version
grep -q '^bucketsim [0-9]' "$T/stdout" && ok version-text || fail version-text "$(cat "$T/stdout")"
printf '{"server": {"max_num_seqs": 8}, "bucketing": {"strategy": "linear"}}\n' > "$T/good.json"
expect_exit 0 validate-ok "$B" validate -c "$T/good.json"
[ ! -s "$T/stdout" ] && ok validate-silent || fail validate-silent "printed $(cat "$T/stdout")"
expect_exit 3 validate-bad "$B" validate -c "$T/unknown.json"
expect_exit 3 validate-trace "$B" validate -c "$T/good.json" --trace "$T/negative.csv"
expect_exit 0 print-config "$B" run -c "$T/good.json" --set server.max_num_seqs=16 --print-config
grep -qE '^server\.max_num_seqs +16 +\(command line\)' "$T/stdout" && ok print-config-origin || fail print-config-origin "$(grep max_num_seqs "$T/stdout")"
grep -qE '^bucketing\.strategy +linear +\(file\)' "$T/stdout" && ok print-config-file || fail print-config-file "$(grep strategy "$T/stdout")"
grep -qE '^server\.num_kv_blocks +[0-9]+ +\(derived\)' "$T/stdout" && ok print-config-derived || fail print-config-derived "$(grep num_kv "$T/stdout")"

e2e_done
