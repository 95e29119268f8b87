#!/usr/bin/env bash
# End to end: KV block ids with contiguous paged attention and the online defragmenter
# (sim/kernel_defrag.c) from the command line: server.defrag_threshold and
# VLLM_DEFRAG_THRESHOLD change the reported fragmentation the same way, monitor.csv's highest
# block id, and the input errors.
cd "$(dirname "$0")/.." || exit 1
. tests/e2e_lib.sh
B=$BUCKETSIM
T=$E2E_TMP
W=(--set server.prefix_caching=false --set server.contiguous_pa=true --set workload.num_requests=400 --set workload.rate=20
   --set monitor.interval_s=0.05 --seed 3)
key() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); m=d.get('metrics', d); print(m[sys.argv[2]])" "$1" "$2"; }

expect_exit 0 run-off "$B" run "${W[@]}" --set server.defrag=false -o "$T/off"
expect_exit 0 run-default "$B" run "${W[@]}" -o "$T/def"
expect_exit 0 run-env0 "$B" run "${W[@]}" --env VLLM_DEFRAG_THRESHOLD=0 -o "$T/env0"
expect_exit 0 run-key0 "$B" run "${W[@]}" --set server.defrag_threshold=0 -o "$T/key0"

off=$(key "$T/off/summary.json" kv_fragmentation)
def=$(key "$T/def/summary.json" kv_fragmentation)
env0=$(key "$T/env0/summary.json" kv_fragmentation)
key0=$(key "$T/key0/summary.json" kv_fragmentation)
# without the defragmenter the free-block queue spreads the ids over the pool
python3 -c "import sys; o,d,z=map(float,sys.argv[1:]); sys.exit(0 if o > 2 * d and d > z >= 1 else 1)" \
	"$off" "$def" "$env0" && ok frag-order || fail frag-order "off $off, threshold 32 $def, 0 $env0"
[ "$env0" = "$key0" ] && ok env-equals-key || fail env-equals-key "env $env0, key $key0"
cmp -s "$T/env0/batches.csv" "$T/key0/batches.csv" && ok env-equals-key-batches \
	|| fail env-equals-key-batches "batches.csv differ"
[ "$(key "$T/off/summary.json" defrag_swaps)" = 0 ] && ok off-no-swaps || fail off-no-swaps "swaps with the defragmenter off"
sw=$(key "$T/env0/summary.json" defrag_swaps)
[ "$sw" -gt 0 ] && ok env0-swaps || fail env0-swaps "no swap at threshold 0"
# threshold 0, one instance: whenever sampled, the ids in use are 1..used (no gap)
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ n++; if ($c["kv_max_block_id"] != $c["kv_used_blocks"]) bad++ }
	END { exit !(n > 100 && !bad) }' "$T/env0/monitor.csv" && ok monitor-compact \
	|| fail monitor-compact "kv_max_block_id differs from kv_used_blocks at threshold 0"
# without it the highest id runs ahead of the blocks in use
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ if ($c["kv_max_block_id"] > 2 * $c["kv_used_blocks"] + 32) far++ }
	END { exit !(far > 0) }' "$T/off/monitor.csv" && ok monitor-spread \
	|| fail monitor-spread "no sample with the highest id far above the blocks in use"
# contiguous PA off (prefix caching on): no block ids, no fragmentation keys
expect_exit 0 run-gather "$B" run --set workload.num_requests=50 -o "$T/gather"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); m=d.get('metrics', d); sys.exit('kv_fragmentation' in m)" \
	"$T/gather/summary.json" && ok gather-no-keys || fail gather-no-keys "fragmentation reported without block ids"

expect_exit 3 env-negative "$B" run "${W[@]}" --env VLLM_DEFRAG_THRESHOLD=-1
expect_stderr env-negative-msg "field 'VLLM_DEFRAG_THRESHOLD': expected an integer"
expect_exit 3 defrag-without-cpa "$B" run --set server.defrag=true
expect_stderr defrag-without-cpa-msg "field 'server\.defrag': the defragmenter compacts"
expect_exit 3 defrag-unified "$B" run --set scheduler.batching=unified --set bucketing.strategy=unified --set server.defrag=true
expect_stderr defrag-unified-msg "not modelled under unified attention"
"$B" run "${W[@]}" --print-config >"$T/pc" 2>&1
grep -qE '^server\.defrag +true +\(derived\)' "$T/pc" && ok print-config-defrag || fail print-config-defrag "$(grep defrag "$T/pc")"
e2e_done
