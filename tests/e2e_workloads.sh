#!/usr/bin/env bash
# End-to-end tests of `bucketsim trace synth|stats` and `bucketsim list workloads`: outputs,
# determinism, replay, error messages and exit codes, and no partial output after an error.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP

# --- list workloads ---
expect_exit 0 list-workloads "$BUCKETSIM" list workloads
for row in "alpaca 5000" "alpaca-outputs 20000" "longbench 4750" "azure-conv 19366" \
	"azure-code 8819" "mooncake-conv 12031" "mooncake-synthetic 3993" "sharegpt 10000" \
	"arxiv 28257"; do
	set -- $row
	if grep -qE "^$1 +$2 " "$T/stdout"; then ok "list-$1"; else fail "list-$1" "no row '$1 $2'"; fi
done
if grep -qE '^alpaca +5000 no +61\.8 +53 +84 +136 +301 +60\.9 +41 +135 +289 +557$' "$T/stdout"; then
	ok list-alpaca-stats
else
	fail list-alpaca-stats "$(grep '^alpaca ' "$T/stdout")"
fi

# --- help and usage ---
expect_exit 0 trace-help "$BUCKETSIM" trace --help
expect_exit 0 synth-help "$BUCKETSIM" trace synth --help
grep -q '^Examples:' "$T/stdout" && ok synth-help-examples || fail synth-help-examples "no Examples"
expect_exit 0 stats-help "$BUCKETSIM" trace stats --help
expect_exit 2 trace-nosub "$BUCKETSIM" trace
expect_exit 2 trace-badsub "$BUCKETSIM" trace frobnicate
expect_stderr trace-badsub-msg "unknown trace subcommand 'frobnicate'"
expect_exit 2 synth-no-output "$BUCKETSIM" trace synth --trace alpaca
expect_stderr synth-no-output-msg "see 'bucketsim trace synth --help'"
expect_exit 2 synth-badopt "$BUCKETSIM" trace synth --bogus -o "$T/x.csv"
expect_exit 2 stats-noarg "$BUCKETSIM" trace stats
expect_exit 2 stats-badformat "$BUCKETSIM" trace stats alpaca --format xml

# --- synth: determinism, columns, replay ---
expect_exit 0 synth-a "$BUCKETSIM" trace synth --trace alpaca --rate 4 -n 3000 --seed 5 -o "$T/a.csv"
expect_exit 0 synth-b "$BUCKETSIM" trace synth --trace alpaca --rate 4 -n 3000 --seed 5 -o "$T/b.csv"
cmp -s "$T/a.csv" "$T/b.csv" && ok synth-deterministic || fail synth-deterministic "differ"
[ "$(head -n 1 "$T/a.csv")" = "arrival_time_s,prompt_tokens,output_tokens,priority,task,prefix_group,prefix_tokens" ] \
	&& ok synth-header || fail synth-header "$(head -n 1 "$T/a.csv")"
[ "$(wc -l <"$T/a.csv")" -eq 3001 ] && ok synth-rows || fail synth-rows "$(wc -l <"$T/a.csv")"
if grep -qvE '^[0-9]+\.[0-9]{9},[0-9]+,[0-9]+,[0-9]+,(online|offline),-?[0-9]+,[0-9]+$' <(tail -n +2 "$T/a.csv"); then
	fail synth-format "bad row"
else
	ok synth-format
fi
expect_exit 0 synth-seed6 "$BUCKETSIM" trace synth --trace alpaca --rate 4 -n 3000 --seed 6 -o "$T/c.csv"
cmp -s "$T/a.csv" "$T/c.csv" && fail synth-seed-differs "same output for another seed" || ok synth-seed-differs
# Lengths come from the trace in order whatever the seed; only arrivals change.
if diff <(cut -d, -f2- "$T/a.csv") <(cut -d, -f2- "$T/c.csv") >/dev/null; then ok synth-streams; else fail synth-streams "lengths changed with the seed"; fi
# Replay: the written trace read back gives the same trace.
expect_exit 0 replay "$BUCKETSIM" trace synth --trace "$T/a.csv" -o "$T/r.csv"
cmp -s "$T/a.csv" "$T/r.csv" && ok replay-identical || fail replay-identical "differs"
expect_exit 0 synth-stdout "$BUCKETSIM" trace synth --set workload.lengths=lognormal -n 10 -o -
[ "$(wc -l <"$T/stdout")" -eq 11 ] && ok synth-stdout-rows || fail synth-stdout-rows "$(wc -l <"$T/stdout")"
expect_exit 0 synth-mix "$BUCKETSIM" trace synth --set workload.mix=alpaca:0.8,longbench:0.2:offline \
	--set workload.truncate=true --set server.max_model_len=4096 -n 2000 -v -o "$T/mix.csv"
expect_stderr synth-mix-verbose "prompts truncated [1-9][0-9]*"
grep -q ',offline,' "$T/mix.csv" && ok synth-mix-offline || fail synth-mix-offline "no offline rows"
expect_exit 0 synth-offline "$BUCKETSIM" trace synth --trace sharegpt --set workload.arrival=offline -n 5 -o "$T/off.csv"
[ "$(cut -d, -f1 "$T/off.csv" | sort -u | grep -c .)" -eq 2 ] && ok synth-offline-zero || fail synth-offline-zero "times"

# Pinned output: stream seeds and generators must not drift between machines or versions.
expect_exit 0 synth-pinned "$BUCKETSIM" trace synth --trace alpaca -n 5 --rate 2 -o -
printf '%s\n' arrival_time_s,prompt_tokens,output_tokens,priority,task,prefix_group,prefix_tokens \
	0.751194531,45,53,0,online,-1,0 1.147918011,42,12,0,online,-1,0 \
	1.964541573,43,73,0,online,-1,0 2.457383552,43,92,0,online,-1,0 \
	3.109781990,48,159,0,online,-1,0 >"$T/pinned.csv"
cmp -s "$T/stdout" "$T/pinned.csv" && ok synth-pinned-bytes || fail synth-pinned-bytes "$(cat "$T/stdout")"

# --- stats ---
expect_exit 0 stats-text "$BUCKETSIM" trace stats alpaca
grep -qE '^prompt_tokens +5000 +39 +53 +61\.79 +84 +136\.01 +301$' "$T/stdout" && ok stats-text-row || fail stats-text-row "$(grep prompt_tokens "$T/stdout")"
grep -q 'length histogram' "$T/stdout" && ok stats-hist || fail stats-hist "no histogram"
expect_exit 0 stats-json "$BUCKETSIM" trace stats --format json azure-conv
grep -q '"has_timestamps":	true' "$T/stdout" && ok stats-json-ts || fail stats-json-ts "no has_timestamps"
grep -q '"inter_arrival_s"' "$T/stdout" && ok stats-json-ia || fail stats-json-ia "no inter_arrival_s"
expect_exit 0 stats-file "$BUCKETSIM" trace stats "$T/a.csv" -o "$T/stats.txt"
grep -q "^rows: 3000$" "$T/stats.txt" && ok stats-file-rows || fail stats-file-rows "rows"
expect_exit 0 stats-outputs-only "$BUCKETSIM" trace stats alpaca-outputs

# --- input errors: exit 3, precise message, no partial output ---
printf 'prompt_tokens,output_tokens\n5,1\n-3,4\n' >"$T/bad.csv"
expect_exit 3 bad-trace "$BUCKETSIM" trace synth --trace "$T/bad.csv" -o "$T/out1.csv"
expect_stderr bad-trace-msg "^bucketsim: error: $T/bad.csv:3: field 'prompt_tokens': expected a positive integer, got '-3'$"
[ ! -e "$T/out1.csv" ] && ok bad-trace-no-output || fail bad-trace-no-output "file left"
[ -z "$(ls "$T" | grep 'out1.csv.tmp')" ] && ok bad-trace-no-tmp || fail bad-trace-no-tmp "temporary left"
expect_exit 3 bad-stats "$BUCKETSIM" trace stats "$T/bad.csv" -o "$T/out2.txt"
[ ! -e "$T/out2.txt" ] && ok bad-stats-no-output || fail bad-stats-no-output "file left"
printf 'prompt_tokens,output_tokens\n1,2\n3,"4\n' >"$T/quote.csv"
expect_exit 3 bad-quote "$BUCKETSIM" trace stats "$T/quote.csv"
expect_stderr bad-quote-msg "quote.csv:3: malformed CSV"
printf 'arrival_time_s,prompt_tokens,output_tokens\n2,1,1\n1,1,1\n' >"$T/mono.csv"
expect_exit 3 bad-mono "$BUCKETSIM" trace synth --trace "$T/mono.csv" -o "$T/out3.csv"
expect_stderr bad-mono-msg "mono.csv:3: field 'arrival_time_s'"
expect_exit 0 sort-mono "$BUCKETSIM" trace synth --trace "$T/mono.csv" --set workload.sort_arrivals=true -o "$T/out3.csv"
printf '{"prompt_tokens": 3, "output_tokens": 1}\n{"prompt_tokens": 3 "output_tokens": 1}\n' >"$T/bad.jsonl"
expect_exit 3 bad-jsonl "$BUCKETSIM" trace stats "$T/bad.jsonl"
expect_stderr bad-jsonl-msg "bad.jsonl:2: invalid JSON at column"
expect_exit 3 missing-file "$BUCKETSIM" trace synth --trace "$T/none.csv" -o "$T/out4.csv"
expect_stderr missing-file-msg "none.csv: cannot open"
expect_exit 3 unknown-name "$BUCKETSIM" trace stats alpacaa
expect_stderr unknown-name-msg "bundled: alpaca"
expect_exit 3 too-long "$BUCKETSIM" trace synth --trace longbench --set server.max_model_len=4096 -o "$T/out5.csv"
expect_stderr too-long-msg "^bucketsim: error: longbench:2: field 'prompt_tokens': prompt of 34115 tokens does not fit"
[ ! -e "$T/out5.csv" ] && ok too-long-no-output || fail too-long-no-output "file left"
expect_exit 3 bad-mix "$BUCKETSIM" trace synth --set workload.mix=alpaca:zero -o "$T/out6.csv"
expect_stderr bad-mix-msg "field 'workload.mix'"
expect_exit 2 bad-key "$BUCKETSIM" trace synth --set workload.lengths=gaussian -o "$T/out7.csv"
[ ! -e "$T/out7.csv" ] && ok bad-key-no-output || fail bad-key-no-output "file left"
expect_exit 3 empty-trace "$BUCKETSIM" trace stats /dev/null
expect_stderr empty-trace-msg "empty file"

# --- the closed-loop client and the random dataset (vllm bench serve --max-concurrency 8) ---
expect_exit 0 closed-loop "$BUCKETSIM" run --set workload.lengths=random --set workload.random_input_len=256 \
	--set workload.random_output_len=64 --set workload.random_range_ratio=0.5 --set workload.concurrency=8 \
	--set workload.num_requests=120 -o "$T/cl"
# From requests.csv alone: at each send, the requests in flight (sent, not finished) including it
# number at most 8, exactly 8 at some send, and after the first 8 every send is a completion.
inflight=$(awk -F, 'NR > 1 {a[NR] = $2 + 0; f[NR] = $5 + 0; n = NR}
	END {m = 0; for (i = 2; i <= n; i++) {c = 0; for (j = 2; j <= n; j++) if (a[j] <= a[i] && a[i] < f[j]) c++; if (c > m) m = c}; print m}' "$T/cl/requests.csv")
[ "$inflight" = 8 ] && ok closed-loop-in-flight || fail closed-loop-in-flight "at most $inflight in flight"
late=$(awk -F, 'NR > 1 {a[NR] = $2; f[$5] = 1; n = NR} END {c = 0; for (i = 10; i <= n; i++) if (!(a[i] in f)) c++; print c}' "$T/cl/requests.csv")
[ "$late" = 0 ] && ok closed-loop-sends || fail closed-loop-sends "$late sends at no completion"
lens=$(awk -F, 'NR > 1 && ($6 < 128 || $6 > 384 || $7 < 32 || $7 > 96) {c++} END {print c + 0}' "$T/cl/requests.csv")
[ "$lens" = 0 ] && ok random-lengths || fail random-lengths "$lens rows outside [128, 384] x [32, 96]"
grep -q '"source":.*"random dataset (vllm bench serve)"' "$T/cl/summary.json" && ok random-source || fail random-source "$(grep source "$T/cl/summary.json")"
expect_exit 3 random-ratio "$BUCKETSIM" run --set workload.lengths=random --set workload.random_range_ratio=1
expect_stderr random-ratio-msg "field 'workload.random_range_ratio': must be below 1"

# A generated workload names no trace: meta.trace is empty (the bundled Alpaca trace is the
# default input only when lengths come from a trace), for vLLM's random dataset as for the
# distributions; an explicit --trace is still recorded.
for l in random lognormal; do
	"$BUCKETSIM" run --set workload.lengths=$l --set workload.num_requests=20 -q -o "$E2E_TMP/gen-$l"
	tr -d ' \t' < "$E2E_TMP/gen-$l/summary.json" | grep -qx '"trace":"",' && ok "generated-no-trace-$l" \
		|| fail "generated-no-trace-$l" "$(grep '"trace"' "$E2E_TMP/gen-$l/summary.json")"
done
"$BUCKETSIM" run --trace alpaca --set workload.lengths=random --set workload.num_requests=20 -q -o "$E2E_TMP/gen-given"
tr -d ' \t' < "$E2E_TMP/gen-given/summary.json" | grep -qx '"trace":"alpaca",' && ok generated-given-trace \
	|| fail generated-given-trace "$(grep '"trace"' "$E2E_TMP/gen-given/summary.json")"

e2e_done
