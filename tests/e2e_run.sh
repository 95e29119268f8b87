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
head -1 "$T/a/batches.csv" | grep -qx 'pass,start_s,end_s,phase,bs,query,blocks,bucket_bs,bucket_query,bucket_blocks,real_tokens,padded_tokens,compile_ms,instance,causal,bucket_causal,unified_phase,query_tokens,shared_blocks,unique_blocks,num_logits,bucket_query_tokens,bucket_shared_blocks,bucket_unique_blocks,bucket_num_logits' \
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
# The bucketing that ran, when the environment chooses the strategy: meta.bucketing and the
# readable summary name it (the key bucketing.strategy stays as set).
for env in VLLM_BUCKETING_STRATEGY=lin VLLM_EXPONENTIAL_BUCKETING=false; do
	expect_exit 0 "run-env-strategy-$env" "$B" run --trace alpaca --set workload.num_requests=50 --env "$env" -o "$T/lin"
	grep -q 'bucketing linear/current,' "$E2E_TMP/stdout" && ok "run-env-strategy-human-$env" || fail "run-env-strategy-human-$env" "$(sed -n 2p "$E2E_TMP/stdout")"
	tr -d ' \t\n' < "$T/lin/summary.json" | grep -q '"bucketing":{"strategy":"linear","version":"current","enabled":true}' \
		&& ok "run-env-strategy-meta-$env" || fail "run-env-strategy-meta-$env" "$(grep -A4 '"bucketing"' "$T/lin/summary.json")"
done
expect_exit 0 run-none-strategy "$B" run --trace alpaca --set workload.num_requests=50 --set bucketing.strategy=none
grep -q 'bucketing none/current (off),' "$E2E_TMP/stdout" && ok run-none-strategy-human || fail run-none-strategy-human "$(sed -n 2p "$E2E_TMP/stdout")"
expect_exit 0 run-seed "$B" run --trace alpaca --set workload.lengths=empirical --seed 9 -o "$T/s1"
expect_exit 0 run-seed2 "$B" run --trace alpaca --set workload.lengths=empirical --seed 9 -o "$T/s2"
sed -i 's/s2/s1/' "$T/s2/summary.json"
cmp -s "$T/s1/requests.csv" "$T/s2/requests.csv" && cmp -s "$T/s1/summary.json" "$T/s2/summary.json" \
	&& ok seeded-identical || fail seeded-identical "differs"
# The same on a machine without AVX, AVX2 or FMA: glibc's libm then runs other code for exp, log
# and log1p (the generators' lognormal, gamma and exponential draws), which must give the same
# bits (a difference of one ulp in one draw would move later arrival times by a nanosecond).
G=(--trace alpaca --set workload.lengths=lognormal --set workload.arrival=gamma --set workload.rate=30
	--set workload.num_requests=20000 --seed 4)
"$B" run "${G[@]}" -o "$T/g1" >/dev/null 2>&1
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-FMA,-AVX,-AVX_Usable,-AVX2_Usable,-FMA_Usable "$B" run "${G[@]}" -o "$T/g2" >/dev/null 2>&1
sed -i 's/g2/g1/' "$T/g2/summary.json"
cmp -s "$T/g1/requests.csv" "$T/g2/requests.csv" && cmp -s "$T/g1/batches.csv" "$T/g2/batches.csv" && cmp -s "$T/g1/summary.json" "$T/g2/summary.json" \
	&& ok same-without-fma || fail same-without-fma "differs"

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

# Values checked after loading are placed at their config-file line (or the command line).
printf '{\n  "scheduler": {\n    "grouping": "fixed",\n    "boundaries": "5,x"\n  }\n}\n' > "$T/bounds.json"
# validate --print-config prints what run --print-config prints (it printed nothing), and
# nothing for an invalid configuration.
"$B" run --set server.max_num_seqs=7 --preset distserve --print-config > "$T/pc.run"
expect_exit 0 validate-print-config "$B" validate --set server.max_num_seqs=7 --preset distserve --print-config
cmp -s "$T/pc.run" "$T/stdout" && grep -q '^server.max_num_seqs  *7  *(command line)$' "$T/stdout" \
	&& ok validate-print-config-same || fail validate-print-config-same "$(diff "$T/pc.run" "$T/stdout" | head -5)"
expect_exit 3 validate-print-config-invalid "$B" validate --set server.max_num_seqs=7 --set server.max_num_batched_tokens=4 --print-config
[ ! -s "$T/stdout" ] && ok validate-print-config-invalid-silent || fail validate-print-config-invalid-silent "$(head -3 "$T/stdout")"
expect_exit 3 late-boundaries "$B" validate -c "$T/bounds.json"
expect_stderr late-boundaries-msg "^bucketsim: error: .*bounds\.json:4: field 'scheduler\.boundaries': "
printf '{\n  "server": {"max_num_seqs": 8},\n  "model": "nope"\n}\n' > "$T/model.json"
expect_exit 3 late-model "$B" validate -c "$T/model.json"
expect_stderr late-model-msg "model\.json:3: field 'model': unknown model 'nope'"
expect_exit 3 late-model-cmdline "$B" validate -c "$T/model.json" --set model=nope2
expect_stderr late-model-cmdline-msg "^bucketsim: error: field 'model': unknown model 'nope2'"
printf '{\n  "bucketing": {"strategy": "linear"},\n  "env": {\n    "VLLM_EXPONENTIAL_BUCKETING": "false",\n    "VLLM_DECODE_BLOCK_BUCKET_STEP": 0\n  }\n}\n' > "$T/envstep.json"
expect_exit 3 late-env "$B" validate -c "$T/envstep.json"
expect_stderr late-env-msg "envstep\.json:5: field 'VLLM_DECODE_BLOCK_BUCKET_STEP': decode block linear bucket config"
expect_exit 3 env-named "$B" validate --env VLLM_EXPONENTIAL_BUCKETING=false --env VLLM_DECODE_BLOCK_BUCKET_STEP=0
expect_stderr env-named-msg "^bucketsim: error: field 'VLLM_DECODE_BLOCK_BUCKET_STEP': "
expect_exit 3 env-named-pad "$B" validate --set bucketing.version=current --set bucketing.strategy=padding_aware --env VLLM_DECODE_BLOCK_BUCKET_PAD_PERCENT=70
expect_stderr env-named-pad-msg "^bucketsim: error: field 'VLLM_DECODE_BLOCK_BUCKET_PAD_PERCENT': decode block padding-aware"
printf '{\n "env": {\n  "VLLM_SKIP_WARMUP": "perhaps"\n }\n}\n' > "$T/envbool.json"
expect_exit 3 late-env-bool "$B" validate -c "$T/envbool.json"
expect_stderr late-env-bool-msg "envbool\.json:3: field 'VLLM_SKIP_WARMUP'"

# Numbers beyond the int64 nanosecond range are refused when set, never converted.
expect_exit 2 stop-overflow "$B" run --set sim.stop_s=1e10 -q
expect_stderr stop-overflow-msg "field 'sim\.stop_s': expected a number in \[0, 9\.2e\+09\], got '1e10'"
printf '{"server.max_num_seqs": 1e300}\n' > "$T/huge.json"
expect_exit 3 int-overflow "$B" validate -c "$T/huge.json"
expect_stderr int-overflow-msg "huge\.json:1: field 'server\.max_num_seqs': integer '1\.0000000000000001e\+300' is out of range"
printf '{"server": {"max_num_seqs": 8}}\n\000{"x": 1}\n' > "$T/nul.json"
expect_exit 3 config-nul "$B" validate -c "$T/nul.json"
expect_stderr config-nul-msg "nul\.json:2: NUL byte in the file"
expect_exit 2 hex-key "$B" validate --set server.max_num_seqs=0x10
expect_stderr hex-key-msg "expected an integer, got '0x10'"
# Bounded outputs: a monitor interval below 1 ms, absurd request counts.
expect_exit 3 monitor-tiny "$B" run --set monitor.interval_s=1e-9 -q -o "$T/o-mon"
expect_stderr monitor-tiny-msg "field 'monitor\.interval_s': expected 0 \(off\) or at least 0\.001 s, got '1e-9'"
[ ! -e "$T/o-mon" ] && ok monitor-tiny-clean || fail monitor-tiny-clean "output directory created"
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,10,5\n3000,10,5\n' > "$T/span.csv"
expect_exit 3 monitor-rows "$B" validate --trace "$T/span.csv" --set monitor.interval_s=0.001
expect_stderr monitor-rows-msg "field 'monitor\.interval_s': 3000000 monitor rows for 2 requests"
expect_exit 2 requests-absurd "$B" validate --set workload.num_requests=1000000000
expect_stderr requests-absurd-msg "field 'workload\.num_requests': expected an integer in \[1, 100000000\]"
# A bucket file whose product explodes is refused at its line, at once.
printf '# buckets\n(1, 128, 0)\n(range(1, 10001), 128, range(0, 10000))\n' > "$T/blowup.txt"
expect_exit 3 bucket-product "$B" validate --set bucketing.strategy=file --set bucketing.file="$T/blowup.txt"
expect_stderr bucket-product-msg "blowup\.txt:3: this line expands to 10000 x 1 x 10000 = 100000000 buckets"
# calibrate: a card count beyond int is an error of its row, not a conversion.
head -n 1 models/data/gaudi_measurements.csv > "$T/cal.csv"
echo 'src,Gaudi2,1e300,Llama-2-7B,fp8,fw,128,128,1230,throughput_generated_tokens,13137,tokens/s,' >> "$T/cal.csv"
expect_exit 3 calib-cards "$B" calibrate --data "$T/cal.csv" --hardware gaudi2 -o "$T/cal.json"
expect_stderr calib-cards-msg "cal\.csv:2: field 'cards': expected a card count in \[1, 65536\], got '1e300'"
{ head -n 1 models/data/gaudi_measurements.csv; echo; echo; echo 'src,Gaudi2,1e300,Llama-2-7B,fp8,fw,128,128,1230,throughput_generated_tokens,13137,tokens/s,'; } > "$T/cal2.csv"
expect_exit 3 calib-line "$B" calibrate --data "$T/cal2.csv" --hardware gaudi2 -o "$T/cal.json"
expect_stderr calib-line-msg "cal2\.csv:4: field 'cards'"
{ head -n 1 models/data/gaudi_measurements.csv; printf 'src,Gaudi2,1,Llama\0002,fp8,fw,128,128,1230,throughput_generated_tokens,13137,tokens/s,\n'; } > "$T/cal3.csv"
expect_exit 3 calib-nul "$B" calibrate --data "$T/cal3.csv" --hardware gaudi2 -o "$T/cal.json"
expect_stderr calib-nul-msg "cal3\.csv:2: field 'model': NUL byte in the value"
[ ! -e "$T/cal.json" ] && ok calib-nothing-written || fail calib-nothing-written "profile written"

# validate accepts exactly what run accepts: the workload keys too, without --trace.
expect_exit 3 validate-mix "$B" validate --set workload.mix=nonexistent
expect_exit 3 run-mix "$B" run --set workload.mix=nonexistent -q
expect_exit 3 validate-lengths "$B" validate --set workload.lengths=uniform --set workload.prompt_min=9 --set workload.prompt_max=3
expect_exit 3 run-lengths "$B" run -q --set workload.lengths=uniform --set workload.prompt_min=9 --set workload.prompt_max=3

# -o "": an error before any work, naming the problem.
expect_exit 2 empty-out "$B" run -o "" -q
expect_stderr empty-out-msg "^bucketsim: error: empty output directory name$"
expect_exit 2 empty-out-synth "$B" trace synth --trace alpaca -o ""
expect_stderr empty-out-synth-msg "empty -o FILE"
expect_exit 2 empty-out-calibrate "$B" calibrate --data models/data/gaudi_measurements.csv --hardware gaudi2 -o ""
expect_stderr empty-out-calibrate-msg "empty -o FILE"

# config_hash: the effective configuration (100 = 1e2), env values and not their order.
h() { "$B" run --trace "$T/long.csv" --set server.max_model_len=4096 --json "$@" | sed -n 's/.*"config_hash":[[:space:]]*"\([0-9a-f]*\)".*/\1/p'; }
h1=$(h --set server.max_num_seqs=100); h2=$(h --set server.max_num_seqs=1e2); h3=$(h --set server.max_num_seqs=101)
[ -n "$h1" ] && [ "$h1" = "$h2" ] && [ "$h1" != "$h3" ] && ok hash-canonical || fail hash-canonical "$h1 $h2 $h3"
e1=$(h --env VLLM_SKIP_WARMUP=true --env VLLM_PROMPT_BS_BUCKET_MAX=2); e2=$(h --env VLLM_PROMPT_BS_BUCKET_MAX=2 --env VLLM_SKIP_WARMUP=true)
e3=$(h --env VLLM_SKIP_WARMUP=true --env VLLM_PROMPT_BS_BUCKET_MAX=4)
[ -n "$e1" ] && [ "$e1" = "$e2" ] && [ "$e1" != "$e3" ] && ok hash-env || fail hash-env "$e1 $e2 $e3"

# --- -o DIR: one complete run per directory, atomically ---
expect_exit 0 reuse-1 "$B" run --trace "$T/long.csv" --set server.max_model_len=4096 -q -o "$T/re"
[ "$(cat "$T/re/.bucketsim.done")" = "$(printf 'summary.json\nrequests.csv\nbatches.csv\nbuckets.csv')" ] && ok marker-list || fail marker-list "$(cat "$T/re/.bucketsim.done")"
expect_exit 0 reuse-2 "$B" run --trace "$T/long.csv" --set server.max_model_len=4096 -q --no-batches -o "$T/re"
[ ! -e "$T/re/batches.csv" ] && ok reuse-stale-removed || fail reuse-stale-removed "batches.csv of the earlier run left"
[ "$(ls -A "$T/re" | tr '\n' ' ')" = ".bucketsim.done .bucketsim.lock buckets.csv requests.csv summary.json " ] && ok reuse-only-this-run || fail reuse-only-this-run "$(ls -A "$T/re")"
# Interrupted runs leave no temporaries: SIGTERM and SIGINT clean up, the output directories
# the run created (new/a/b) included, never one that was there ($T/int); SIGKILL's are swept by
# the next run.  (A 10^6-request run simulates for well over a second after its temporaries
# appear.)
big=(run --trace alpaca --set workload.lengths=empirical --set workload.num_requests=1000000 --set workload.arrival=poisson --set workload.rate=20 -q)
for sig in TERM INT KILL; do
	rm -rf "$T/int"
	mkdir "$T/int"
	out=$T/int/new/a/b
	# A script's background job starts with SIGINT ignored (and keeps it so): restore it.
	python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
		"$B" "${big[@]}" -o "$out" & pid=$!
	for _ in $(seq 200); do [ -d "$out/.bucketsim.tmp.$pid" ] && break; sleep 0.05; done
	kill -s $sig $pid; wait $pid 2>/dev/null
	if [ $sig = KILL ]; then
		left=$(ls -A "$out" 2>/dev/null | tr '\n' ' ')
		echo "$left" | grep -q "^\.bucketsim\.tmp\.$pid $" && ok "sigkill-leaves-tmp" || fail sigkill-leaves-tmp "left '$left'"
		expect_exit 0 sweep-run "$B" run --trace "$T/long.csv" --set server.max_model_len=4096 -q -o "$out"
		[ ! -e "$out/.bucketsim.tmp.$pid" ] && ok sweep-stale || fail sweep-stale "$(ls -A "$out")"
	else
		left=$(ls -A "$T/int" 2>/dev/null | tr '\n' ' ')
		[ -d "$T/int" ] && [ -z "$left" ] && ok "sig$sig-clean" || fail "sig$sig-clean" "left '$left' in $T/int"
	fi
done

# The commit is whole or undone (strace injects at each rename of the commit: there are 10,
# the earlier run's marker and 4 files moved aside, the 4 new files and the marker moved in):
# SIGTERM there waits for the commit to finish (then ends the process), so DIR holds the new
# run, complete; an error there (EIO) puts the earlier run back, so DIR holds it, complete.
# Either way nothing is left beside it (no temporary, nothing moved aside).
small=(run -q --set workload.num_requests=300 --set workload.rate=20)
"$B" "${small[@]}" --seed 1 -o "$T/cm-old" && "$B" "${small[@]}" --seed 2 -o "$T/cm-new" || fail commit-refs "reference runs failed"
same_run() { # DIR REF: every file of REF's marker identical (but for -o DIR in the summary's
	# argv), the same marker, nothing else
	local f
	cmp -s "$1/.bucketsim.done" "$2/.bucketsim.done" || return 1
	for f in $(cat "$2/.bucketsim.done"); do cmp -s <(grep -v '"argv":' "$1/$f") <(grep -v '"argv":' "$2/$f") || return 1; done
	[ "$(ls -A "$1" | tr '\n' ' ')" = "$(ls -A "$2" | tr '\n' ' ')" ]
}
# (LeakSanitizer cannot run under ptrace: the sanitizer pass turns it off for the traced runs.)
for n in 1 2 3 4 5 6 7 8 9 10; do
	rm -rf "$T/cm"; cp -r "$T/cm-old" "$T/cm"
	{ ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o /dev/null -e trace=rename -e inject=rename:signal=TERM:when=$n \
		"$B" "${small[@]}" --seed 2 -o "$T/cm"; rc=$?; } 2>/dev/null
	[ $rc -eq 143 ] && same_run "$T/cm" "$T/cm-new" && ok "commit-sigterm-$n" || fail "commit-sigterm-$n" "rc $rc, $(ls -A "$T/cm" | tr '\n' ' ')"
	rm -rf "$T/cm"; cp -r "$T/cm-old" "$T/cm"
	ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o /dev/null -e trace=rename -e inject=rename:error=EIO:when=$n \
		"$B" "${small[@]}" --seed 2 -o "$T/cm" 2>"$T/cm.err"
	rc=$?
	[ $rc -eq 1 ] && same_run "$T/cm" "$T/cm-old" && grep -q "Input/output error" "$T/cm.err" && ok "commit-error-$n" || fail "commit-error-$n" "rc $rc, $(ls -A "$T/cm" | tr '\n' ' '): $(cat "$T/cm.err")"
done
# An earlier file that cannot be replaced (a directory named buckets.csv): an error naming it,
# the earlier run untouched.
rm -rf "$T/cm"; cp -r "$T/cm-old" "$T/cm"; rm "$T/cm/batches.csv"; mkdir -p "$T/cm/batches.csv/x"
cp -r "$T/cm" "$T/cm-blocked"
expect_exit 1 commit-blocked "$B" "${small[@]}" --seed 2 -o "$T/cm"
expect_stderr commit-blocked-msg "cm/batches.csv: cannot replace the earlier run's output: it is a directory"
diff -r "$T/cm" "$T/cm-blocked" >/dev/null && ok commit-blocked-restored || fail commit-blocked-restored "$(diff -r "$T/cm" "$T/cm-blocked" | head -3)"
# Two runs committing into one DIR take turns (the lock): run A's renames are slowed (0.3 s
# each) and run B starts once A's commit has begun; B waits for it, then commits its own run
# whole.  Without the lock B's files land among A's and the marker says complete over a mix.
rm -rf "$T/cc"; cp -r "$T/cm-old" "$T/cc"
ASAN_OPTIONS=detect_leaks=0 strace -f -qq -o /dev/null -e trace=rename -e inject=rename:delay_enter=300000 \
	"$B" "${small[@]}" --seed 1 --set workload.num_requests=301 -o "$T/cc" & apid=$!
"$B" "${small[@]}" --seed 1 --set workload.num_requests=301 -o "$T/cc-a"
for _ in $(seq 200); do [ -e "$T/cc/.bucketsim.done" ] || break; sleep 0.05; done
"$B" "${small[@]}" --seed 2 -o "$T/cc"; brc=$?
wait $apid; arc=$?
[ $arc -eq 0 ] && [ $brc -eq 0 ] && same_run "$T/cc" "$T/cm-new" && ok commit-concurrent || fail commit-concurrent "rc A $arc B $brc; $(for f in requests.csv batches.csv buckets.csv; do cmp -s "$T/cc/$f" "$T/cm-new/$f" && echo "$f:B" || { cmp -s "$T/cc/$f" "$T/cc-a/$f" && echo "$f:A" || echo "$f:?"; }; done | tr '\n' ' ')"

# Single-file outputs: the temporary FILE.tmp.PID a killed process left (PID no longer running)
# goes when FILE is next written, as a directory's temporaries do; another process's (running)
# stays.
sh -c 'exit 0' & dead=$!; wait $dead
live=$$
mkdir -p "$T/sf"
single=("trace synth -n 10 -o $T/sf/t.csv" "trace stats alpaca -o $T/sf/s.txt" "buckets -o $T/sf/b.txt"
	"calibrate --data models/data/gaudi_measurements.csv --hardware gaudi2 -o $T/sf/c.json")
for cmd in "${single[@]}"; do
	f=${cmd##* }
	echo partial > "$f.tmp.$dead"; echo other > "$f.tmp.$live"
	"$B" $cmd >/dev/null 2>"$T/sf/err"; rc=$?
	n=$(basename "$f")
	[ $rc -eq 0 ] && [ -s "$f" ] && [ "$(ls -A "$T/sf" | grep -c "^$n\.tmp\.")" -eq 1 ] && [ -e "$f.tmp.$live" ] \
		&& ok "single-file-stale-$n" || fail "single-file-stale-$n" "rc $rc: $(ls -A "$T/sf" | tr '\n' ' ') $(cat "$T/sf/err")"
	rm -f "$f.tmp.$live"
done

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

# Contiguous PA as it runs: unified attention reads a contiguous slice, whatever prefix caching
# (which makes auto false) says; a user's false cannot apply.
expect_exit 0 print-config-cpa "$B" run --set scheduler.batching=unified --set bucketing.strategy=none --print-config
grep -qE '^server\.contiguous_pa +true +\(derived\)' "$T/stdout" && ok print-config-cpa-unified || fail print-config-cpa-unified "$(grep contiguous_pa "$T/stdout")"
expect_exit 0 print-config-cpa-default "$B" run --print-config
grep -qE '^server\.contiguous_pa +false +\(derived\)' "$T/stdout" && ok print-config-cpa-off || fail print-config-cpa-off "$(grep contiguous_pa "$T/stdout")"
expect_exit 3 cpa-unified-false "$B" run --set scheduler.batching=unified --set bucketing.strategy=unified --set server.contiguous_pa=false
expect_stderr cpa-unified-false-msg "field 'server\.contiguous_pa': unified attention always reads a contiguous slice"

# The monitor observes: it does not change the results (the run ends with its last work, not
# with a later sample; simulated_s, utilization and kv_utilization_mean were stretched to it).
for X in 0 1 100; do
	"$B" run --trace alpaca --preset bucketserve --set workload.num_requests=400 --set workload.rate=30 --seed 7 --set monitor.interval_s=$X --json |
		grep -v '"config_hash"\|"argv"\|"monitor.interval_s"' > "$T/mon$X.json"
done
cmp -s "$T/mon0.json" "$T/mon1.json" && cmp -s "$T/mon0.json" "$T/mon100.json" && ok monitor-observes || fail monitor-observes "$(diff "$T/mon0.json" "$T/mon100.json" | head -5)"
# ITL is every gap between two consecutive tokens: its mean is the requests' decode time over
# their gaps, sum(finish - first token) / sum(output - 1), colocated and disaggregated (where a
# transferred request's first decode gap holds its transfer and wait)
for p in vllm distserve; do
	"$B" run --trace alpaca --preset $p --set workload.num_requests=1500 --set workload.rate=30 -q -o "$T/itl-$p"
	want=$(awk -F, 'NR > 1 && $7 > 1 {t += $5 - $4; n += $7 - 1} END {printf "%.9f", 1000 * t / n}' "$T/itl-$p/requests.csv")
	got=$(tr -d ' \t' < "$T/itl-$p/summary.json" | sed -n 's/^"mean_itl_ms":\([0-9.e+-]*\),*$/\1/p')
	awk -v a="$want" -v b="$got" 'BEGIN {d = a - b; exit !(b > 0 && (d < 0 ? -d : d) < 1e-6 * a)}' && ok "itl-mean-$p" || fail "itl-mean-$p" "requests.csv gives $want ms, summary $got ms"
done
# --- help names every file -o can write; make demo builds the tool alone ---
"$B" help run > "$T/help-run.txt"
for f in summary.json requests.csv batches.csv buckets.csv monitor.csv boundaries.csv analysis/README.md; do
	grep -qF "$f" "$T/help-run.txt" && ok "help-run-names-$f" || fail "help-run-names-$f" "help run does not mention $f"
done
# The recipe of `make demo` (dry run, into a scratch build directory): it links the tool and
# runs it, and compiles no test, bench or fuzz program (building those took most of its time).
if [ -f Makefile ] && command -v make > /dev/null; then
	make -n --no-print-directory demo BUILD="$T/demo-build" > "$T/demo-n.txt" 2>&1 || true
	grep -q "demo-build/bucketsim run --trace alpaca" "$T/demo-n.txt" && ok demo-runs-tool || fail demo-runs-tool "$(tail -3 "$T/demo-n.txt")"
	if grep -q 'tests/check_\|tests/bench_\|tests/fuzz/' "$T/demo-n.txt"; then
		fail demo-tool-only "make demo builds $(grep -o 'tests/[a-z_/]*' "$T/demo-n.txt" | sort -u | head -3 | tr '\n' ' ')"
	else
		ok demo-tool-only
	fi
fi
e2e_done
