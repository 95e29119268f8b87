#!/usr/bin/env bash
# End-to-end tests of `bucketsim buckets`: the seed log byte for byte, formats, look-ups,
# bucket files, env variables, errors and exit codes, --help.
cd "$(dirname "$0")/.." || exit 1
. tests/e2e_lib.sh
G=tests/golden
SEED=(--set server.max_model_len=1024 --set server.max_num_seqs=4 --set server.num_kv_blocks=5781)
B() { "$BUCKETSIM" buckets "$@"; }

# 1. The seed's two "Generated ..." lines (and its config line), byte for byte.
expect_exit 0 seed_log B "${SEED[@]}"
if grep -v '^#' "$E2E_TMP/stdout" | cmp -s - $G/buckets_seed_docs.log; then ok seed_bytes
else fail seed_bytes "$(grep -v '^#' "$E2E_TMP/stdout" | diff - $G/buckets_seed_docs.log | head -5)"; fi
grep -q '^# warm-up compiles: prompt 36, decode 42, total 78$' "$E2E_TMP/stdout" && ok seed_compiles \
	|| fail seed_compiles "$(grep compiles "$E2E_TMP/stdout")"
# the same from a JSON config file with an env object
cat > "$E2E_TMP/seed.json" <<'J'
{"server": {"max_model_len": 1024, "max_num_seqs": 4, "num_kv_blocks": 5781},
 "env": {"VLLM_EXPONENTIAL_BUCKETING": "true"}}
J
expect_exit 0 seed_config B -c "$E2E_TMP/seed.json"
grep -v '^#' "$E2E_TMP/stdout" | cmp -s - $G/buckets_seed_docs.log && ok seed_config_bytes \
	|| fail seed_config_bytes "differs"

# 2. Version current on the same settings: 30 prompt and 13 decode buckets.
expect_exit 0 current_log B "${SEED[@]}" --set bucketing.version=current
if grep -q '^Generated 30 prompt buckets' "$E2E_TMP/stdout" && grep -q '^Generated 13 decode buckets' "$E2E_TMP/stdout"
then ok current_counts; else fail current_counts "$(cut -c1-60 "$E2E_TMP/stdout")"; fi
cmp -s "$E2E_TMP/stdout" $G/buckets_current.log && ok current_golden || fail current_golden "differs from $G/buckets_current.log"

# 3. JSON: keys, counts, look-ups with fallbacks seen by later look-ups.
expect_exit 0 json B "${SEED[@]}" --set bucketing.version=current --format json \
	--lookup prompt:1,1000,0 --lookup prompt:1,900,0 --lookup decode:3,1,100
cmp -s "$E2E_TMP/stdout" $G/buckets_current_lookups.json && ok json_golden || fail json_golden "differs"
python3 - "$E2E_TMP/stdout" <<'P' && ok json_keys || fail json_keys "json check failed"
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d)[:2] == ["version", "strategy"]
assert len(d["prompt"]) == 30 and len(d["decode"]) == 13
assert d["prompt"] == sorted(d["prompt"])
assert d["warmup_compiles"] == {"prompt": 30, "decode": 13, "total": 43}
l = d["lookups"]
assert l[0] == {"phase": "prompt", "shape": [1, 1000, 0], "bucket": [1, 1280, 0], "fallback": True}
assert l[1]["bucket"] == [1, 1280, 0] and l[1]["fallback"] is False
assert l[2]["bucket"] == [4, 1, 32]
P

# 4. CSV, with and without look-ups; -o writes atomically.
expect_exit 0 csv B "${SEED[@]}" --format csv -o "$E2E_TMP/b.csv"
[ ! -s "$E2E_TMP/stdout" ] && head -1 "$E2E_TMP/b.csv" | grep -qx 'phase,bs,query,num_blocks' \
	&& [ "$(wc -l < "$E2E_TMP/b.csv")" -eq 79 ] && ok csv_file || fail csv_file "$(head -2 "$E2E_TMP/b.csv")"
expect_exit 0 csv_lookup B "${SEED[@]}" --format csv --lookup prompt:1,1100,3
tail -1 "$E2E_TMP/stdout" | grep -qx 'lookup_prompt,1,1152,4,1,1100,3,true' && ok csv_lookup_row \
	|| fail csv_lookup_row "$(tail -1 "$E2E_TMP/stdout")"
head -1 "$E2E_TMP/stdout" | grep -qx 'phase,bs,query,num_blocks,shape_bs,shape_query,shape_num_blocks,fallback' \
	&& ok csv_lookup_header || fail csv_lookup_header "$(head -1 "$E2E_TMP/stdout")"

# 5. Log-format look-ups.
expect_exit 0 log_lookup B "${SEED[@]}" --lookup prompt:3,412,0 --lookup decode:5,1,7000
grep -q '^# lookup prompt (3, 412, 0) -> (4, 512, 0) fallback' "$E2E_TMP/stdout" && ok log_lookup_fb \
	|| fail log_lookup_fb "$(grep lookup "$E2E_TMP/stdout")"
grep -q '^# lookup decode (5, 1, 7000) -> (8, 1, 7000) fallback' "$E2E_TMP/stdout" && ok log_lookup_dec \
	|| fail log_lookup_dec "$(grep lookup "$E2E_TMP/stdout")"

# 6. Unified: 375 (docs, alpha) and 167 (current, last version); a miss runs unpadded.
expect_exit 0 unified B --set server.max_model_len=1024 --set server.max_num_seqs=32 \
	--set server.num_kv_blocks=5781 --env VLLM_UNIFIED_ATTN=true --format json --lookup unified:3000,0,0,1
python3 - "$E2E_TMP/stdout" <<'P' && ok unified_json || fail unified_json "unified json"
import json, sys
d = json.load(open(sys.argv[1]))
assert "prompt" not in d and len(d["unified"]) == 375
assert d["unified"][0] == [8, 0, 0, 1]
assert d["lookups"][0]["bucket"] == [3000, 0, 0, 1] and d["lookups"][0]["fallback"] is False
P
expect_exit 0 unified_last B --set server.max_model_len=1024 --set server.max_num_seqs=32 \
	--set server.num_kv_blocks=5781 --set bucketing.strategy=unified --set bucketing.version=current
grep -q '^Generated 167 unified buckets \[query, shared_blocks, unique_blocks\]: \[(32, 0, 0, 1), ' \
	"$E2E_TMP/stdout" && ok unified_last_log || fail unified_last_log "$(cut -c1-80 "$E2E_TMP/stdout")"
expect_exit 0 unified_csv B --set server.max_model_len=1024 --set server.max_num_seqs=32 \
	--set server.num_kv_blocks=5781 --set bucketing.strategy=unified --format csv
head -1 "$E2E_TMP/stdout" | grep -qx 'phase,query,shared_blocks,unique_blocks,causal' && ok unified_csv_header \
	|| fail unified_csv_header "$(head -1 "$E2E_TMP/stdout")"

# 7. Bucket file: the sample with mml=4096 under current collapses range(256,512,32).
cat > "$E2E_TMP/buckets.txt" <<'F'
# sample bucket file
(1, 2048, 0)
(1, [256, 512], [0, 4, 8])
(64, 1, 1024)
(32, 1, 512)
(1, 1, range(256, 512, 32))
F
expect_exit 0 file_current B --set server.max_model_len=4096 --set server.max_num_seqs=64 \
	--set server.num_kv_blocks=3593 --set bucketing.version=current --env VLLM_BUCKETING_FROM_FILE="$E2E_TMP/buckets.txt"
grep -qx 'Generated 3 decode buckets \[bs, query, num_blocks\]: \[(1, 1, 32), (32, 1, 512), (64, 1, 1024)\]' \
	"$E2E_TMP/stdout" && ok file_collapse || fail file_collapse "$(grep decode "$E2E_TMP/stdout")"
printf '(1, 2048, 0)\n\n(1, [256, 512, 0)\n' > "$E2E_TMP/bad.txt"
expect_exit 3 file_bad B --set server.max_model_len=4096 --set server.num_kv_blocks=3593 \
	--set bucketing.strategy=file --set bucketing.file="$E2E_TMP/bad.txt"
expect_stderr file_bad_line "^bucketsim: error: .*bad.txt:3: "
expect_exit 3 file_missing B --set server.max_model_len=4096 --set server.num_kv_blocks=3593 \
	--set bucketing.strategy=file --set bucketing.file="$E2E_TMP/none.txt"
expect_exit 3 file_unset B --set server.max_model_len=4096 --set server.num_kv_blocks=3593 --set bucketing.strategy=file
expect_stderr file_unset_msg "bucketing.file"

# 8. Env variables and their errors; warnings on stderr only.
expect_exit 0 env_dep B "${SEED[@]}" --set bucketing.version=current --env VLLM_BUCKETING_STRATEGY=lin \
	--env VLLM_EXPONENTIAL_BUCKETING=true
expect_stderr env_dep_warn "deprecated"
expect_stderr env_override_warn "Overriding bucketing strategy LinearBucketingStrategy with ExponentialBucketingStrategy"
grep -q '^Generated 30 prompt' "$E2E_TMP/stdout" && ok env_dep_exp || fail env_dep_exp "not exponential"
grep -q warning "$E2E_TMP/stdout" && fail env_stdout_clean "warning on stdout" || ok env_stdout_clean
expect_exit 3 env_bad_int B "${SEED[@]}" --env VLLM_PROMPT_BS_BUCKET_MAX=four
expect_stderr env_bad_int_msg "VLLM_PROMPT_BS_BUCKET_MAX"
expect_exit 3 env_bad_strategy B "${SEED[@]}" --set bucketing.version=current --env VLLM_BUCKETING_STRATEGY=fast
expect_stderr env_bad_strategy_msg "VLLM_BUCKETING_STRATEGY"
expect_exit 3 pad_docs B "${SEED[@]}" --set bucketing.strategy=padding_aware
expect_stderr pad_docs_msg "'bucketing.strategy'.*padding_aware"
expect_exit 0 pad_current B "${SEED[@]}" --set bucketing.strategy=padding_aware --set bucketing.version=current
expect_exit 0 lin_docs B "${SEED[@]}" --env VLLM_EXPONENTIAL_BUCKETING=false
grep -q '^Prompt bucket config (min, step, max_warmup) bs:\[1, 32, 1\], seq:\[128, 128, 1024\]$' "$E2E_TMP/stdout" \
	&& ok lin_docs_cfg || fail lin_docs_cfg "$(head -1 "$E2E_TMP/stdout")"
expect_exit 0 off B "${SEED[@]}" --env VLLM_ENABLE_BUCKETING=false --lookup prompt:3,100,2
grep -q '^Bucketing is off - skipping prompt buckets generation$' "$E2E_TMP/stdout" \
	&& grep -q '^# lookup prompt (3, 100, 2) -> (3, 100, 2)$' "$E2E_TMP/stdout" && ok off_identity \
	|| fail off_identity "$(cat "$E2E_TMP/stdout")"
expect_exit 0 skip B "${SEED[@]}" --env VLLM_SKIP_WARMUP=true
grep -q 'total 0 (warm-up skipped)' "$E2E_TMP/stdout" && grep -q '^Generated 36 prompt' "$E2E_TMP/stdout" \
	&& ok skip_warmup || fail skip_warmup "$(grep '#' "$E2E_TMP/stdout")"

# 9. Usage errors and help.
expect_exit 2 bad_format B "${SEED[@]}" --format xml
expect_exit 2 bad_lookup_phase B "${SEED[@]}" --lookup batch:1,2,3
expect_exit 2 bad_lookup_arity B "${SEED[@]}" --lookup prompt:1,2
expect_exit 2 bad_lookup_decode B "${SEED[@]}" --lookup decode:1,2,3
expect_exit 2 bad_lookup_num B "${SEED[@]}" --lookup prompt:1,x,3
expect_exit 2 lookup_phase_mismatch B "${SEED[@]}" --lookup unified:1,2,3,0
expect_exit 2 extra_arg B "${SEED[@]}" extra
expect_exit 2 bad_option B --no-such-option
expect_exit 0 help B --help
grep -q '^Examples:' "$E2E_TMP/stdout" && grep -q -- '--lookup PHASE:SHAPE' "$E2E_TMP/stdout" && ok help_text \
	|| fail help_text "help lacks examples"
expect_exit 0 print_config B "${SEED[@]}" --print-config
grep -q 'bucketing.version' "$E2E_TMP/stdout" && ok print_config_keys || fail print_config_keys "no bucketing keys"

# 10. num_kv_blocks derived when unset (resolved like every command).
expect_exit 0 derived B --set server.max_model_len=1024 --set server.max_num_seqs=4
grep -q '^Generated 36 prompt' "$E2E_TMP/stdout" && ok derived_prompt || fail derived_prompt "no prompt list"

e2e_done
