#!/usr/bin/env bash
# End-to-end tests of `bucketsim buckets`: the seed log byte for byte, formats, look-ups,
# bucket files, env variables, errors and exit codes, --help; then the properties every
# registered strategy must have (looped over `bucketsim list policies`, no edit for a new one).
cd "$(dirname "$0")/.." || exit 1
. tests/e2e_lib.sh
G=tests/golden
SEED0=(--set server.max_model_len=1024 --set server.max_num_seqs=4 --set server.num_kv_blocks=5781)
# The seed document's log is of the docs version (no longer the default).
SEED=("${SEED0[@]}" --set bucketing.version=docs)
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
 "bucketing": {"version": "docs"},
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
	--set server.num_kv_blocks=5781 --set bucketing.version=docs --env VLLM_UNIFIED_ATTN=true --format json --lookup unified:3000,0,0,1
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
# upstream's generate_unified_buckets divides by zero at max_num_seqs = 1 (current: a query of 1
# with shared blocks, 1 // 2 = 0): an error naming the key, nothing on stdout
expect_exit 3 unified_mns1 B --set server.max_model_len=1024 --set server.max_num_seqs=1 \
	--set server.num_kv_blocks=500 --set bucketing.strategy=unified --set bucketing.version=current
expect_stderr unified_mns1_msg "field 'server.max_num_seqs': .*divide by zero"
[ -s "$E2E_TMP/stdout" ] && fail unified_mns1_stdout "output on an error" || ok unified_mns1_stdout

# 6b. Contiguous PA when server.contiguous_pa is unset: vllm-gaudi main derives it from
# VLLM_CONTIGUOUS_PA alone (off with prefix caching off); the July 2025 code from prefix caching.
expect_exit 0 cpa_auto_current B "${SEED[@]}" --set bucketing.version=current \
	--set server.prefix_caching=false --print-config
grep -qE '^server\.contiguous_pa +false +\(derived\)' "$E2E_TMP/stdout" && ok cpa_auto_current_off \
	|| fail cpa_auto_current_off "$(grep contiguous_pa "$E2E_TMP/stdout")"
expect_exit 0 cpa_auto_docs B "${SEED[@]}" --set bucketing.version=docs \
	--set server.prefix_caching=false --print-config
grep -qE '^server\.contiguous_pa +true +\(derived\)' "$E2E_TMP/stdout" && ok cpa_auto_docs_on \
	|| fail cpa_auto_docs_on "$(grep contiguous_pa "$E2E_TMP/stdout")"

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
expect_stderr file_missing_msg "^bucketsim: error: .*none.txt: cannot open: No such file or directory$"
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
# reference 4 on the seed: bs (1, 1, mnps=1, ceil(1/4), 25); query (B, B, mnbt, mnbt/4, 25);
# ctx (0, 2, ceil((1024-128)/128)=7, mnbt/B=16, 25); decode bs (1, 2, 4, 1, 25); blocks without
# contiguous PA (B, B, max(ceil(1024*4/128), B)=128, 128/4=32, 25)
grep -qx 'Prompt bucket config (min, step, max_warmup, pad_max, pad_percent) bs:\[1, 1, 1, 1, 25\], query:\[128, 128, 2048, 512, 25\], blocks:\[0, 2, 7, 16, 25\]' \
	"$E2E_TMP/stdout" && ok pad_current_prompt_cfg || fail pad_current_prompt_cfg "$(grep config "$E2E_TMP/stdout")"
grep -qx 'Decode bucket config (min, step, max_warmup, pad_max, pad_percent) bs:\[1, 2, 4, 1, 25\], blocks:\[128, 128, 128, 32, 25\]' \
	"$E2E_TMP/stdout" && ok pad_current_decode_cfg || fail pad_current_decode_cfg "$(grep config "$E2E_TMP/stdout")"
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
expect_stderr bad_format_msg "^bucketsim: error: --format 'xml': expected log, json or csv$"
expect_exit 2 bad_lookup_phase B "${SEED[@]}" --lookup batch:1,2,3
expect_stderr bad_lookup_phase_msg "phase must be prompt, decode or unified$"
expect_exit 2 bad_lookup_arity B "${SEED[@]}" --lookup prompt:1,2
expect_stderr bad_lookup_arity_msg "'prompt:1,2': prompt takes 3 numbers$"
expect_exit 2 bad_lookup_decode B "${SEED[@]}" --lookup decode:1,2,3
expect_stderr bad_lookup_decode_msg "a decode shape is BS,1,NUM_BLOCKS$"
expect_exit 2 bad_lookup_num B "${SEED[@]}" --lookup prompt:1,x,3
expect_stderr bad_lookup_num_msg "expected an integer, got 'x'$"
expect_exit 2 lookup_phase_mismatch B "${SEED[@]}" --lookup unified:1,2,3,0
expect_stderr lookup_phase_mismatch_msg "the resolved strategy is exponential, whose phases are prompt and decode$"
expect_exit 2 extra_arg B "${SEED[@]}" extra
expect_stderr extra_arg_msg "^bucketsim: error: unexpected argument 'extra'$"
expect_exit 2 bad_option B --no-such-option
expect_exit 0 help B --help
grep -q '^Examples:' "$E2E_TMP/stdout" && grep -q -- '--lookup PHASE:SHAPE' "$E2E_TMP/stdout" && ok help_text \
	|| fail help_text "help lacks examples"
expect_exit 0 print_config B "${SEED0[@]}" --print-config
grep -qE '^bucketing.version +current +\(default\)$' "$E2E_TMP/stdout" \
	&& grep -qE '^server.max_num_seqs +4 +\(command line\)$' "$E2E_TMP/stdout" && ok print_config_keys \
	|| fail print_config_keys "$(grep -E 'bucketing.version|max_num_seqs' "$E2E_TMP/stdout")"

# 10. num_kv_blocks derived when unset (resolved like every command).
expect_exit 0 derived B --set server.max_model_len=1024 --set server.max_num_seqs=4 \
	--set bucketing.version=docs
grep -q '^Generated 36 prompt' "$E2E_TMP/stdout" && ok derived_prompt || fail derived_prompt "no prompt list"

# 11. --env names bucketsim does not read: one warning naming the nearest variable, the
#     setting unused (the seed's 36 prompt buckets: max_num_prefill_seqs stays 1); an error
#     (exit 3, nothing on stdout) with sim.strict.
expect_exit 0 env_typo B "${SEED[@]}" --env VLLM_PROMT_BS_BUCKET_MAX=4
[ "$(cat "$E2E_TMP/stderr")" = "bucketsim: warning: --env VLLM_PROMT_BS_BUCKET_MAX is not a variable bucketsim reads; did you mean VLLM_PROMPT_BS_BUCKET_MAX?" ] \
	&& ok env_typo_warn_once || fail env_typo_warn_once "$(cat "$E2E_TMP/stderr")"
grep -v '^#' "$E2E_TMP/stdout" | cmp -s - $G/buckets_seed_docs.log && ok env_typo_unused || fail env_typo_unused "seed log differs"
expect_exit 3 env_typo_strict B "${SEED[@]}" --set sim.strict=true --env VLLM_PROMT_BS_BUCKET_MAX=4
[ "$(cat "$E2E_TMP/stderr")" = "bucketsim: error: field 'VLLM_PROMT_BS_BUCKET_MAX': --env VLLM_PROMT_BS_BUCKET_MAX is not a variable bucketsim reads; did you mean VLLM_PROMPT_BS_BUCKET_MAX?" ] \
	&& [ ! -s "$E2E_TMP/stdout" ] && ok env_typo_strict_msg || fail env_typo_strict_msg "$(cat "$E2E_TMP/stderr")"
expect_exit 0 env_known_strict B "${SEED[@]}" --set sim.strict=true --env VLLM_PROMPT_BS_BUCKET_MAX=2
[ ! -s "$E2E_TMP/stderr" ] && grep -q '^Prompt bucket config (min, step, max_warmup, limit) bs:\[1, 1, 2, 2\], ' "$E2E_TMP/stdout" \
	&& ok env_known_strict_used || fail env_known_strict_used "$(head -1 "$E2E_TMP/stdout"; cat "$E2E_TMP/stderr")"

# 12. pow2, worked out on the seed (B=128, mnbt=2048, mnps=1, prefix caching so no contiguous
#     PA): prompt bs [1], query 128..2048 less 2048 > max_model_len, ctx [0, 1, 2, 4, 8]
#     (8 = ceil(1023/128)): 20 buckets; decode bs [1, 2, 4] x blocks 1..32 (32 = 8 blocks x 4
#     seqs), dropping bs > blocks and capping blocks at 8 x bs: 4 + 4 + 4 = 12.
expect_exit 0 pow2 B "${SEED[@]}" --set bucketing.strategy=pow2 --format json \
	--lookup prompt:1,1000,0 --lookup decode:3,1,100 --lookup decode:3,1,40
python3 - "$E2E_TMP/stdout" <<'P' && ok pow2_lists || fail pow2_lists "pow2 lists"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["prompt"] == [[1, q, c] for q in (128, 256, 512, 1024) for c in (0, 1, 2, 4, 8)]
assert d["decode"] == [[1, 1, c] for c in (1, 2, 4, 8)] + [[2, 1, c] for c in (2, 4, 8, 16)] \
    + [[4, 1, c] for c in (4, 8, 16, 32)]
assert d["warmup_compiles"] == {"prompt": 20, "decode": 12, "total": 32}
# docs fallback for (3, 1, 100): (2^ceil(log2 3), 1, ceil(100/2)*2), then a hit for (3, 1, 40)
assert [l["bucket"] + [l["fallback"]] for l in d["lookups"]] == \
    [[1, 1024, 0, False], [4, 1, 100, True], [4, 1, 100, False]]
P

# 13. Every registered strategy, in both versions, on the seed and a long-context setting:
#     sorted duplicate-free lists of the phases it serves, warm-up counts as the lists (less
#     current's prompt queries above the token budget), and look-ups that return the smallest
#     listed bucket >= the shape in every dimension (version current first clamps a decode
#     ctx to the largest listed), else the fallback, flagged when it was not listed yet.
# The family's members: the indented lines under its "bucketing (bucketing.strategy)" heading.
STRATEGIES=$("$BUCKETSIM" list policies | awk '/^[^ ]/ { in_f = ($2 == "(bucketing.strategy):") } in_f && /^  [a-z]/ { printf "%s ", $1 }')
case " $STRATEGIES " in *" exponential "*" none "*) ok strategies_listed ;;
*) fail strategies_listed "cannot read the strategies from 'bucketsim list policies': '$STRATEGIES'" ;; esac
LONG=(--set server.max_model_len=8192 --set server.max_num_seqs=32 --set server.num_kv_blocks=3000
      --set server.prefix_caching=false --set server.max_num_batched_tokens=4096)
for st in $STRATEGIES; do
	for ver in docs current; do
		for cfg in seed long; do
			if [ $cfg = seed ]; then set -- "${SEED[@]}"; else set -- "${LONG[@]}"; fi
			"$BUCKETSIM" buckets "$@" --set bucketing.strategy=$st --set bucketing.version=$ver \
				--set bucketing.file="$E2E_TMP/buckets.txt" --set bucketing.log=tests/logs/seed_docs.log --format json \
				--lookup prompt:3,412,0 --lookup prompt:1,100,2 --lookup decode:5,1,70 \
				--lookup decode:1,1,1 >"$E2E_TMP/stdout" 2>"$E2E_TMP/stderr"
			rc=$?
			if [ $rc -eq 2 ]; then   # a unified strategy: unified look-ups only
				"$BUCKETSIM" buckets "$@" --set bucketing.strategy=$st --set bucketing.version=$ver \
					--format json --lookup unified:300,2,5,1 --lookup unified:17,0,3,0 \
					--lookup unified:1,0,1,0 >"$E2E_TMP/stdout" 2>"$E2E_TMP/stderr"
				rc=$?
			fi
			if [ $rc -eq 3 ]; then   # not in this version: the error says so
				expect_stderr "strategy_${st}_${ver}_${cfg}_absent" \
					"field 'bucketing.strategy': strategy $st does not exist in bucketing.version $ver"
				continue
			fi
			python3 - "$E2E_TMP/stdout" $ver <<'P' && ok "strategy_${st}_${ver}_${cfg}" \
				|| fail "strategy_${st}_${ver}_${cfg}" "rc $rc: $(head -c 300 "$E2E_TMP/stderr")"
import json, sys
d, ver = json.load(open(sys.argv[1])), sys.argv[2]
mnbt = d["params"]["max_num_batched_tokens"]
phases = [ph for ph in ("prompt", "decode", "unified") if ph in d]
assert d["enabled"] == bool(d.get("prompt") or d.get("unified")), "enabled"
lists = {ph: d[ph] for ph in phases}
for ph, l in lists.items():
    assert l == sorted(l) and len(set(map(tuple, l))) == len(l), ph + " not sorted"
    skip = ver == "current" and ph == "prompt"
    want = len([b for b in l if not (skip and b[1] > mnbt)])
    assert d["warmup_compiles"][ph] == want, (ph, d["warmup_compiles"], want)
maxctx = max([b[2] for b in d.get("decode", [])] or [0])
for lk in d["lookups"]:
    ph, s, b = lk["phase"], lk["shape"], lk["bucket"]
    if not d["enabled"]:
        assert b == s and not lk["fallback"], lk
        continue
    t = list(s)
    if ver == "current" and ph == "decode" and maxctx > 0:
        t[2] = min(t[2], maxctx)   # version current clamps the decode ctx first
    ge = [c for c in lists[ph] if all(x >= y for x, y in zip(c[:3], t[:3]))
          and (ph != "unified" or c >= t)]
    if ge:   # a hit: the smallest listed bucket >= the shape in every dimension
        assert b == min(ge) and not lk["fallback"], (lk, min(ge))
    elif ph == "unified":   # a unified miss runs unpadded
        assert b == s and not lk["fallback"], lk
    else:    # a miss: the version's fallback, flagged when it was not listed yet
        assert lk["fallback"] == (b not in lists[ph]), lk
        lists[ph] = sorted(lists[ph] + [b]) if lk["fallback"] else lists[ph]
P
		done
	done
done

# a bucket file with no bucket for a phase (version current refuses it): the error names the file
printf '(1, 1, 128)\n' > "$E2E_TMP/dec_only.txt"
expect_exit 3 file-no-prompt "$BUCKETSIM" buckets --env VLLM_BUCKETING_FROM_FILE="$E2E_TMP/dec_only.txt"
expect_stderr file-no-prompt-msg "dec_only.txt: the bucket file lists no prompt bucket"
expect_exit 3 file-no-prompt-docs "$BUCKETSIM" buckets --set bucketing.version=docs --env VLLM_BUCKETING_FROM_FILE="$E2E_TMP/dec_only.txt"
expect_stderr file-no-prompt-docs-msg "dec_only.txt: the bucket file lists no prompt bucket"
printf '(1, 128, 0)\n(4, 4096, 0)\n(1, 1, 128)\n' > "$E2E_TMP/big_prompt.txt"
expect_exit 3 file-filtered "$BUCKETSIM" buckets --set server.max_num_batched_tokens=64 --set server.max_num_seqs=16 --env VLLM_BUCKETING_FROM_FILE="$E2E_TMP/big_prompt.txt"
expect_stderr file-filtered-msg "big_prompt.txt: none of the 2 prompt buckets of the bucket file passes the prompt filter"
# the linear strategy reads the query dimension with the legacy SEQ names as a fallback, and
# warns as read_bucket_settings does (linear.py)
expect_exit 0 seq-fallback "$BUCKETSIM" buckets --env VLLM_BUCKETING_STRATEGY=lin --env VLLM_PROMPT_SEQ_BUCKET_MAX=512
expect_stderr seq-fallback-msg "warning: VLLM_PROMPT_QUERY_BUCKET_MAX not set, using VLLM_PROMPT_SEQ_BUCKET_MAX value \(512\) instead. This fallback behavior is deprecated"
expect_exit 0 seq-fallback-pad "$BUCKETSIM" buckets --env VLLM_BUCKETING_STRATEGY=pad --env VLLM_PROMPT_SEQ_BUCKET_PAD_MAX=256
expect_stderr seq-fallback-pad-msg "warning: VLLM_PROMPT_QUERY_BUCKET_PAD_MAX not set, using VLLM_PROMPT_SEQ_BUCKET_PAD_MAX value \(256\) instead"
expect_exit 0 seq-no-fallback "$BUCKETSIM" buckets --env VLLM_BUCKETING_STRATEGY=lin --env VLLM_PROMPT_SEQ_BUCKET_MAX=512 --env VLLM_PROMPT_QUERY_BUCKET_MAX=1024
grep -q 'fallback behavior' "$E2E_TMP/stderr" && fail seq-no-fallback-msg "warned with QUERY set" || ok seq-no-fallback-msg

# buckets checks a configuration with run's rules (run_setup): every invalid configuration gets
# the same exit code and the same error line from run, validate and buckets.
printf '{\n  "server": {\n    "contiguous_pa": false\n  },\n  "bucketing": {"strategy": "unified"}\n}\n' > "$E2E_TMP/cpa_unified.json"
i=0
while IFS= read -r args; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	set -- $args
	for cmd in run validate buckets; do
		"$BUCKETSIM" $cmd --set workload.num_requests=5 "$@" > /dev/null 2> "$E2E_TMP/rules_$cmd"
		echo $? >> "$E2E_TMP/rules_$cmd"
	done
	if [ "$(tail -1 "$E2E_TMP/rules_run")" = 3 ] && cmp -s "$E2E_TMP/rules_run" "$E2E_TMP/rules_validate" &&
	   cmp -s "$E2E_TMP/rules_run" "$E2E_TMP/rules_buckets" && [ "$(grep -c '^bucketsim: error: ' "$E2E_TMP/rules_buckets")" = 1 ]
	then ok "rules-$i"
	else fail "rules-$i" "$args: run $(tr '\n' ' ' < "$E2E_TMP/rules_run") | buckets $(tr '\n' ' ' < "$E2E_TMP/rules_buckets")"; fi
done <<RULES
--set server.contiguous_pa=false --set bucketing.strategy=unified
--set server.defrag=true --set bucketing.strategy=unified
--set server.defrag=true --set server.contiguous_pa=false
--env VLLM_CONTIGUOUS_PA=false --set bucketing.strategy=unified
--set scheduler.batching=unified --set bucketing.strategy=linear
--set server.max_num_seqs=4096
--set server.num_kv_blocks=3
--set cluster.mode=disaggregated --set bucketing.strategy=unified
--strict --set scheduler.l_max=100
-c $E2E_TMP/cpa_unified.json
RULES
grep -q "cpa_unified.json:3: field 'server.contiguous_pa'" "$E2E_TMP/rules_buckets" && ok rules-file-line || fail rules-file-line "$(cat "$E2E_TMP/rules_buckets")"
# the effective contiguous PA: unified batching runs it whatever bucketing says
expect_exit 0 cpa-effective B --set scheduler.batching=unified --set bucketing.strategy=none --format json
python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['params']['contiguous_pa'] is True" "$E2E_TMP/stdout" \
	&& ok cpa-effective-json || fail cpa-effective-json "$(grep contiguous "$E2E_TMP/stdout")"

# a bucket of batch size 0 or a prompt bucket of query 0 is no shape a server runs: the file's
# line and the bucket are named; a look-up likewise
printf '(1, 128, 0)\n(0, 0, 0)\n(1, 1, 128)\n' > "$E2E_TMP/zero.txt"
expect_exit 3 file-zero B --env VLLM_BUCKETING_FROM_FILE="$E2E_TMP/zero.txt"
expect_stderr file-zero-msg "^bucketsim: error: $E2E_TMP/zero.txt:2: prompt bucket \(0, 0, 0\): batch size 0 \(the minimum is 1\)$"
printf '(1, 128, 0)\n(0, 1, 0)\n(1, 1, 128)\n' > "$E2E_TMP/zero_dec.txt"
expect_exit 3 file-zero-decode B --env VLLM_BUCKETING_FROM_FILE="$E2E_TMP/zero_dec.txt"
expect_stderr file-zero-decode-msg "zero_dec.txt:2: decode bucket \(0, 1, 0\): batch size 0"
printf '(1, [0, 128], 0)\n(1, 1, 128)\n' > "$E2E_TMP/zero_q.txt"
expect_exit 3 file-zero-query B --set bucketing.strategy=file --set bucketing.file="$E2E_TMP/zero_q.txt"
expect_stderr file-zero-query-msg "zero_q.txt:1: prompt bucket \(1, 0, 0\): query 0"
for lk in prompt:0,128,0 prompt:1,0,0 decode:0,1,8 decode:4,1,0; do
	expect_exit 2 "lookup-zero-$lk" B --set server.max_model_len=2048 --lookup "$lk"
	expect_stderr "lookup-zero-msg-$lk" "^bucketsim: error: --lookup '$lk': (BS|QUERY|NUM_BLOCKS) must be at least 1 in a runtime (prompt|decode) shape$"
done
expect_exit 0 lookup-one-token B --set server.max_model_len=2048 --lookup prompt:1,1,0 --lookup decode:1,1,1
# Server logs: strategy log runs the buckets a server logged; --from-log compares them.
L=tests/logs/seed_docs.log
expect_exit 0 log-strategy B "${SEED[@]}" --set bucketing.strategy=log --set bucketing.log=$L
grep -v '^#' "$E2E_TMP/stdout" | cmp -s - $G/buckets_seed_docs.log && ok log_roundtrip \
	|| fail log_roundtrip "$(grep -v '^#' "$E2E_TMP/stdout" | diff - $G/buckets_seed_docs.log | head -3)"
grep -q '^# warm-up compiles: prompt 36, decode 42, total 78$' "$E2E_TMP/stdout" && ok log_compiles \
	|| fail log_compiles "$(grep compiles "$E2E_TMP/stdout")"
expect_exit 0 from-log-docs B "${SEED[@]}" --from-log $L
grep -q '^# prompt: 36 buckets in the log (Generated line 3; 0 distinct \[Warmup\] shapes), 36 generated by bucketsim: identical$' "$E2E_TMP/stdout" \
	&& grep -q '^# decode: 42 buckets in the log (Generated line 4; 0 distinct \[Warmup\] shapes), 42 generated by bucketsim: identical$' "$E2E_TMP/stdout" \
	&& ok from_log_docs || fail from_log_docs "$(cut -c1-120 "$E2E_TMP/stdout")"
expect_exit 0 from-log-current B "${SEED0[@]}" --from-log $L --format json
python3 - "$E2E_TMP/stdout" <<'P' && ok from_log_json || fail from_log_json "json check failed"
import json, sys
d = json.load(open(sys.argv[1]))
p, q = d["prompt"], d["decode"]
assert d["version"] == "current" and d["strategy"] == "exponential"
assert p["log_buckets"] == 36 and p["bucketsim_buckets"] == 30 and p["log_line"] == 3
# the July 2025 triangle against head's product of ranges (reference 2.5 and 8)
assert [1, 640, 0] in p["only_in_log"] and [1, 1024, 0] in p["only_in_log"]
assert len(p["only_in_log"]) == 14 and len(p["only_in_bucketsim"]) == 8
assert q["log_buckets"] == 42 and q["bucketsim_buckets"] == 13 and q["log_config"] is None
assert len(q["only_in_log"]) == 42 and len(q["only_in_bucketsim"]) == 13
P
printf 'x\nINFO [common.py:85] Generated 2 decode buckets [bs, query, num_blocks]: [(1, 1, 8), (2, 2, 8)]\n' > "$E2E_TMP/bad.log"
expect_exit 3 from-log-bad B --from-log "$E2E_TMP/bad.log"
expect_stderr from_log_bad_msg "^bucketsim: error: $E2E_TMP/bad.log:2: decode bucket \(2, 2, 8\): a decode bucket's query is 1$"
expect_exit 3 log-strategy-bad B --set bucketing.strategy=log --set bucketing.log="$E2E_TMP/bad.log"
expect_stderr log_strategy_bad_msg "^bucketsim: error: $E2E_TMP/bad.log:2: "
expect_exit 3 log-strategy-unset B --set bucketing.strategy=log
expect_stderr log_strategy_unset_msg "bucketing.log"
expect_exit 2 from-log-csv B --from-log $L --format csv
# The advisor: its stdout is a bucket file the file strategy loads into the report's lists,
# and at each baseline's bucket counts it never costs more than the baseline on the workload
# it was fitted to.
expect_exit 0 advise B --advise --max-buckets 16
cp "$E2E_TMP/stdout" "$E2E_TMP/advised.txt"
expect_exit 0 advise-load B --set bucketing.strategy=file --set bucketing.file="$E2E_TMP/advised.txt" --format json
python3 - "$E2E_TMP/advised.txt" "$E2E_TMP/stdout" <<'P' && ok advise_file_loads || fail advise_file_loads "lists differ"
import ast, json, sys
rep = {l.split(":")[0][2:]: ast.literal_eval(l.split(": ", 1)[1]) for l in open(sys.argv[1])
       if l.startswith("# prompt buckets: ") or l.startswith("# decode buckets: ")}
d = json.load(open(sys.argv[2]))
for ph in ("prompt", "decode"):
    assert [tuple(b) for b in d[ph]] == rep[ph + " buckets"], ph
    assert 1 <= len(d[ph]) <= 16
P
python3 - "$E2E_TMP/advised.txt" <<'P' && ok advise_never_worse || fail advise_never_worse "$(grep '^# [a-z@_]* ' "$E2E_TMP/advised.txt")"
import sys
rows = {}
for l in open(sys.argv[1]):
    f = l[2:].split()
    if l.startswith("# ") and len(f) == 15 and f[1].isdigit():
        rows[f[0]] = f
assert {"advised", "exponential", "linear", "padding_aware", "advised@exponential"} <= set(rows)
for base in ("exponential", "linear", "padding_aware"):
    a, b = rows["advised@" + base], rows[base]
    for col in (3, 4):   # expected padding cost, prompt and decode, seconds
        assert float(a[col]) <= float(b[col]), (base, col)
    for col in (1, 2):   # buckets per phase: at most the baseline's
        assert int(a[col]) <= int(b[col]), (base, col)
P
# The equivalent VLLM_* settings: at one bucket per phase the linear ranges are the advice
# itself; at 16 the printed settings, given to the linear strategy, warm the counts the report
# states and every bucket of the file.
expect_exit 0 advise-env-1 B --advise --max-buckets 1
grep -q '^# these ranges warm exactly the file.s buckets$' "$E2E_TMP/stdout" && ok advise_env_exact || fail advise_env_exact "$(grep -A1 '^# as VLLM' "$E2E_TMP/stdout")"
ENVS=$(sed -n 's/^# as VLLM_\* settings ([^)]*): //p' "$E2E_TMP/advised.txt")
NOTE=$(grep '^# not exact: ' "$E2E_TMP/advised.txt" || true)
ENVARGS=()
for e in $ENVS; do ENVARGS+=(--env "$e"); done
expect_exit 0 advise-env-16 B "${ENVARGS[@]}" --format json
python3 - "$E2E_TMP/advised.txt" "$E2E_TMP/stdout" "$NOTE" <<'P' && ok advise_env_linear || fail advise_env_linear "$NOTE"
import ast, json, re, sys
t = open(sys.argv[1]).read()
rep = {l.split(":")[0][2:]: ast.literal_eval(l.split(": ", 1)[1]) for l in t.splitlines()
       if l.startswith("# prompt buckets: ") or l.startswith("# decode buckets: ")}
d = json.load(open(sys.argv[2]))
np_, nd, fp, fd = map(int, re.match(r"# not exact: the smallest linear ranges holding every advised value warm (\d+) prompt and (\d+) decode buckets against the file's (\d+) and (\d+)", sys.argv[3]).groups())
assert (len(d["prompt"]), len(d["decode"])) == (np_, nd)
assert (len(rep["prompt buckets"]), len(rep["decode buckets"])) == (fp, fd)
for ph in ("prompt", "decode"):
    assert set(rep[ph + " buckets"]) <= {tuple(b) for b in d[ph]}, ph
P
# The advisor's figures for a set are what `run` gives with that set, under a batch controller
# with a set-up of its own too: prefill_batch (the bucketserve preset) forms each candidate's
# passes in that candidate's warmed prompt grid, as `run` does.  One advised bucket (bs 7 at
# 200 req/s) against prefill_batch's 16-prompt passes of the configured exponential grid gave
# the advised row 2 runtime compiles against 0 and 2989 tok/s against `run`'s 3888.
ADV=(--preset bucketserve --set workload.num_requests=500 --set workload.rate=200)
expect_exit 0 advise-prefill-batch B "${ADV[@]}" --advise --max-buckets 1
cp "$E2E_TMP/stdout" "$E2E_TMP/adv1.txt"
expect_exit 0 advise-prefill-batch-run "$BUCKETSIM" run "${ADV[@]}" --set bucketing.strategy=file \
	--set bucketing.file="$E2E_TMP/adv1.txt" --json
cp "$E2E_TMP/stdout" "$E2E_TMP/adv1.json"
expect_exit 0 advise-prefill-batch-linear "$BUCKETSIM" run "${ADV[@]}" --set bucketing.strategy=linear --json
python3 - "$E2E_TMP/adv1.txt" "$E2E_TMP/adv1.json" "$E2E_TMP/stdout" <<'P' && ok advise_equals_run || fail advise_equals_run "$(grep -E '^# (set|advised|linear) ' "$E2E_TMP/adv1.txt")"
import json, sys
rows = {}
for l in open(sys.argv[1]):
    f = l[2:].split()
    if l.startswith("# ") and len(f) == 15 and f[1].isdigit():
        rows[f[0]] = f
for name, path in (("advised", sys.argv[2]), ("linear", sys.argv[3])):
    m = json.load(open(path))["metrics"]
    r = rows[name]
    assert int(r[8]) == m["compiles_runtime"], (name, r[8], m["compiles_runtime"])
    for col, key, nd in ((10, "median_ttft_ms", 2), (11, "p99_ttft_ms", 2), (13, "p99_tpot_ms", 2),
                         (14, "output_throughput", 1)):
        assert r[col] == "%.*f" % (nd, m[key]), (name, key, r[col], m[key])
P
# The free set of points: loads through the file strategy into the report's lists (one line a
# bucket), costs no more than the product advice, and its lower bound is below its cost.
expect_exit 0 advise-free B --advise --max-buckets 16 --free-set
cp "$E2E_TMP/stdout" "$E2E_TMP/free.txt"
expect_exit 0 advise-free-load B --set bucketing.strategy=file --set bucketing.file="$E2E_TMP/free.txt" --format json
python3 - "$E2E_TMP/free.txt" "$E2E_TMP/stdout" "$E2E_TMP/advised.txt" <<'P' && ok advise_free_set || fail advise_free_set "$(grep -e '^# lower' -e '^# advised ' "$E2E_TMP/free.txt")"
import ast, json, re, sys
t = open(sys.argv[1]).read()
rep = {l.split(":")[0][2:]: ast.literal_eval(l.split(": ", 1)[1]) for l in t.splitlines()
       if l.startswith("# prompt buckets: ") or l.startswith("# decode buckets: ")}
d = json.load(open(sys.argv[2]))
body = [ast.literal_eval(l) for l in t.splitlines() if l and not l.startswith("#")]
for ph in ("prompt", "decode"):
    assert [tuple(b) for b in d[ph]] == rep[ph + " buckets"], ph
    assert 1 <= len(d[ph]) <= 16
assert all(isinstance(b, tuple) and all(isinstance(x, int) for x in b) for b in body)
assert len(body) == len(d["prompt"]) + len(d["decode"])
def rows(text):
    return {l[2:].split()[0]: l[2:].split() for l in text.splitlines()
            if l.startswith("# ") and len(l[2:].split()) == 15 and l[2:].split()[1].isdigit()}
free, prod = rows(t), rows(open(sys.argv[3]).read())
for name in ("advised", "advised@exponential", "advised@linear", "advised@padding_aware"):
    for col in (3, 4):
        assert float(free[name][col]) <= float(prod[name][col]), (name, col)
b = re.search(r"^# lower bound on the expected padding cost of any 16 buckets per phase \(fitted shapes\): "
              r"prompt ([0-9.]+) s, advice ([0-9.]+) s, gap ([0-9.]+) s \(([0-9.]+) %\); "
              r"decode ([0-9.]+) s, advice ([0-9.]+) s, gap ([0-9.]+) s", t, re.M).groups()
lb_p, ad_p, _, _, lb_d, ad_d, _ = map(float, b)
assert lb_p <= ad_p and lb_d <= ad_d
assert abs(ad_p - float(free["advised"][3])) < 1e-3 and abs(ad_d - float(free["advised"][4])) < 1e-3
P
expect_exit 2 advise-free-alone B --free-set
# Bucket budgets across strategies (--budgets): each row within its budget per phase, the
# knobs a row names warm its counts through the strategy itself, exponential in version current
# (no count knob) one row at its own lists, and at every budget the advice costs no more than
# any strategy on the workload it was fitted to, on three workloads.
BW1=()
BW2=(--seed 2 --set workload.lengths=lognormal --set workload.prompt_mean=700 --set workload.num_requests=600)
BW3=(--seed 3 --set workload.lengths=random --set workload.random_input_len=1024 --set workload.num_requests=300 --set workload.arrival=poisson --set workload.rate=4)
for w in 1 2 3; do
	eval "WARGS=(\"\${BW$w[@]}\")"
	expect_exit 0 advise-budgets-$w B --advise --budgets 16,64,256 "${WARGS[@]}"
	cp "$E2E_TMP/stdout" "$E2E_TMP/curve$w.csv"
	python3 - "$E2E_TMP/curve$w.csv" <<'P' && ok advise_budgets_$w || fail advise_budgets_$w "$(cut -d, -f1,2,5,6,12,13 "$E2E_TMP/curve$w.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert list(rows[0])[:7] == ["strategy", "budget", "bucketing.version", "knobs", "buckets_prompt",
                             "buckets_decode", "compiles_warmup"]
adv = {int(r["budget"]): r for r in rows if r["strategy"] == "advised"}
assert sorted(adv) == [16, 64, 256]
exp = [r for r in rows if r["strategy"] == "exponential"]
assert len(exp) == 1 and exp[0]["budget"] == "0" and exp[0]["knobs"] == "none (no count knob in version current)"
assert (exp[0]["buckets_prompt"], exp[0]["buckets_decode"]) == ("108", "111")
for r in rows:
    k = int(r["budget"])
    if k:
        assert int(r["buckets_prompt"]) <= k and int(r["buckets_decode"]) <= k, r
        for col in ("cost_prompt_s", "cost_decode_s"):
            assert float(adv[k][col]) <= float(r[col]), (r["strategy"], k, col)
    assert int(r["compiles_warmup"]) == int(r["buckets_prompt"]) + int(r["buckets_decode"])
assert {r["strategy"] for r in rows} == {"advised", "exponential", "linear", "padding_aware"}
P
done
for w in 2 3; do
	eval "WARGS=(\"\${BW$w[@]}\")"
	expect_exit 0 advise-report-$w B --advise --max-buckets 16 "${WARGS[@]}"
	python3 - "$E2E_TMP/stdout" <<'P' && ok advise_never_worse_$w || fail advise_never_worse_$w "$(grep '^# [a-z@_]* ' "$E2E_TMP/stdout")"
import sys
rows = {}
for l in open(sys.argv[1]):
    f = l[2:].split()
    if l.startswith("# ") and len(f) == 15 and f[1].isdigit():
        rows[f[0]] = f
for base in ("exponential", "linear", "padding_aware"):
    a, b = rows["advised@" + base], rows[base]
    assert all(float(a[c]) <= float(b[c]) for c in (3, 4)), base
    assert all(int(a[c]) <= int(b[c]) for c in (1, 2)), base
P
done
KN=$(python3 -c 'import csv,sys; print([r for r in csv.DictReader(open(sys.argv[1])) if r["strategy"] == "linear" and r["budget"] == "64"][0]["knobs"])' "$E2E_TMP/curve1.csv")
KARGS=()
for e in $KN; do KARGS+=(--env "$e"); done
expect_exit 0 advise-budgets-knobs B --set bucketing.strategy=linear "${KARGS[@]}" --format json
python3 - "$E2E_TMP/curve1.csv" "$E2E_TMP/stdout" <<'P' && ok advise_budgets_knobs || fail advise_budgets_knobs "$KN"
import csv, json, sys
r = [r for r in csv.DictReader(open(sys.argv[1])) if r["strategy"] == "linear" and r["budget"] == "64"][0]
d = json.load(open(sys.argv[2]))
assert (len(d["prompt"]), len(d["decode"])) == (int(r["buckets_prompt"]), int(r["buckets_decode"]))
P
expect_exit 0 advise-budgets-docs B --advise --budgets 32 --set bucketing.version=docs
python3 - "$E2E_TMP/stdout" <<'P' && ok advise_budgets_docs || fail advise_budgets_docs "$(cut -d, -f1-6 "$E2E_TMP/stdout")"
import csv, sys
rows = {r["strategy"]: r for r in csv.DictReader(open(sys.argv[1]))}
e = rows["exponential"]
assert e["budget"] == "32" and "VLLM_DECODE_BLOCK_BUCKET_LIMIT=" in e["knobs"]
assert int(e["buckets_prompt"]) <= 32 and int(e["buckets_decode"]) <= 32
assert "padding_aware" not in rows   # no padding-aware strategy in version docs
P
expect_exit 2 advise-budgets-with-k B --advise --budgets 16 --max-buckets 8
expect_exit 2 advise-budgets-zero B --advise --budgets 16,0
expect_exit 2 advise-budgets-trailing B --advise --budgets 16,
expect_exit 2 advise-budgets-alone B --budgets 16
expect_exit 0 advise-holdout B --advise --max-buckets 8 --holdout 0.3
grep -q '^# bucketsim buckets --advise: 3500 requests fitted (.*), 1500 evaluated (the held-out rest); at most 8 buckets per phase, a product of per-dimension lists$' "$E2E_TMP/stdout" \
	&& grep -q 'held_prompt_s held_decode_s' "$E2E_TMP/stdout" && ok advise_holdout || fail advise_holdout "$(grep '^# bucketsim' "$E2E_TMP/stdout")"
expect_exit 0 advise-warmup B --advise --max-warmup-s 60
python3 - "$E2E_TMP/stdout" <<'P' && ok advise_warmup_budget || fail advise_warmup_budget "$(grep -e '^# --max' -e '^# advised ' "$E2E_TMP/stdout")"
import re, sys
t = open(sys.argv[1]).read()
k, w = re.search(r"^# --max-warmup-s 60: (\d+) buckets per phase, the most whose advice warms up within it \(([0-9.]+) s", t, re.M).groups()
row = [l[2:].split() for l in t.splitlines() if l.startswith("# advised ")][0]
assert float(w) <= 60 and float(row[7]) <= 60.05 and abs(float(row[7]) - float(w)) < 0.1, (w, row)
assert int(row[1]) <= int(k) and int(row[2]) <= int(k)
P
expect_exit 2 advise-two-budgets B --advise --max-buckets 8 --max-warmup-s 60
expect_exit 3 advise-warmup-tiny B --advise --max-warmup-s 0.001
expect_stderr advise_warmup_tiny_msg "^bucketsim: error: --max-warmup-s 0.001: one bucket per phase already takes [0-9.]+ s to warm up$"
expect_exit 2 advise-k0 B --advise --max-buckets 0
expect_exit 2 advise-holdout-1 B --advise --holdout 1
expect_exit 2 advise-no-advise B --max-buckets 8
expect_exit 2 advise-format B --advise --format json
# 14. On Gaudi no prompt pass is longer than max_num_batched_tokens, whatever the batch
# controller: vLLM's token budget chunks a longer prompt, and prefill_batch on the warmed grid
# runs one longer than the grid's longest query alone in chunks (policies/README.md, "Look-up").
# So no prompt pass reaches the look-up beyond upstream's fallback, whose query is capped at
# max_num_batched_tokens.  Ten prompts (28097 tokens, five longer than 2048), max_model_len 8192,
# max_num_batched_tokens 2048: every batch controller but unified, on each preset, merged
# prefill off and on, then each prompt-and-decode strategy of both versions; every prompt row
# of batches.csv has query <= 2048 within its bucket, and the prompts' tokens are all computed.
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,100,2\n0,3000,2\n0,5000,2\n0,7000,2\n0,2100,2\n0,500,2\n0,2048,2\n0,2049,2\n0.5,6000,2\n0.5,300,2\n' > "$E2E_TMP/long.csv"
LONG=(--trace "$E2E_TMP/long.csv" --set workload.arrival=trace --set server.max_model_len=8192
	--set server.max_num_batched_tokens=2048)
# prompt rows: count, real tokens, longest query, rows whose bucket is shorter than the query
prompt_rows() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i }
		NR > 1 && $h["phase"] == "prompt" { n++; t += $h["real_tokens"]; if ($h["query"] > m) m = $h["query"]
			if ($h["bucket_query"] < $h["query"]) short++ }
		END { printf "%d %d %d", t, m, short }' "$1/batches.csv"
}
bad=""
batchings=$("$BUCKETSIM" list policies | awk '/^batching /{on=1; next} /^[a-z]/{on=0} on {print $1}' | grep -vx unified)
[ "$(echo $batchings)" = "continuous static memory_safe prefill_batch token_budget queue_budget" ] \
	&& ok long-prompts-controllers || fail long-prompts-controllers "$(echo $batchings)"
for pre in vllm distserve bucketserve; do
	for bat in $batchings; do
		for mp in false true; do
			"$BUCKETSIM" run --preset $pre "${LONG[@]}" --set scheduler.batching=$bat \
				--set server.merged_prefill=$mp -o "$E2E_TMP/lp" > /dev/null 2>&1 || { bad="$bad $pre/$bat/$mp:exit"; continue; }
			got=$(prompt_rows "$E2E_TMP/lp")
			[ "$got" = "28097 2048 0" ] || bad="$bad $pre/$bat/$mp:$got"
		done
	done
done
for v in "current exponential" "current linear" "current padding_aware" "current pow2" \
	 "docs exponential" "docs linear" "docs pow2"; do
	set -- $v
	for pre in vllm distserve; do
		"$BUCKETSIM" run --preset $pre "${LONG[@]}" --set bucketing.version=$1 --set bucketing.strategy=$2 \
			-o "$E2E_TMP/lp" > /dev/null 2>&1 || { bad="$bad $pre/$1/$2:exit"; continue; }
		got=$(prompt_rows "$E2E_TMP/lp")
		[ "$got" = "28097 2048 0" ] || bad="$bad $pre/$1/$2:$got"
	done
done
[ -z "$bad" ] && ok long-prompts-within-budget || fail long-prompts-within-budget "$bad"
# Off the grid (no buckets) the paper's batch runs whole prompts: a 7000-token pass, charged at
# its own shape as every pass there is.
"$BUCKETSIM" run --preset distserve "${LONG[@]}" --set bucketing.strategy=none -o "$E2E_TMP/lp" > /dev/null 2>&1
got=$(prompt_rows "$E2E_TMP/lp")
[ "$got" = "28097 7000 0" ] && ok long-prompts-whole-off-grid || fail long-prompts-whole-off-grid "$got"
e2e_done
