#!/usr/bin/env bash
# Pipeline parallelism end to end: VLLM_PP_LAYER_PARTITION and cluster.pp against the model's
# layers (input errors), and analysis/pipeline.sh --quick: every table written, deterministic,
# and the values theory fixes (no empty microbatch outside the atomic loop; the atomic loop
# without empty microbatches loses pp - 1 slots; no KV fragmentation outside virtual engines).
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
expect_exit 3 partition-count "$B" run --set cluster.pp=2 --env VLLM_PP_LAYER_PARTITION=10,10 -q -o "$T/x"
expect_stderr partition-count-msg "field 'VLLM_PP_LAYER_PARTITION': .*2 counts summing to 20; the model has 32 layers over 2 stages"
expect_exit 3 partition-bad "$B" run --set cluster.pp=2 --env VLLM_PP_LAYER_PARTITION=16,x -q -o "$T/x"
expect_stderr partition-bad-msg "field 'VLLM_PP_LAYER_PARTITION'"
expect_exit 3 pp-too-deep "$B" run --set cluster.pp=33 -q -o "$T/x"
expect_stderr pp-too-deep-msg "field 'cluster\.pp': 33 pipeline stages for a model of 32 layers"
[ ! -e "$T/x" ] && ok partition-nothing-written || fail partition-nothing-written "$T/x exists"
expect_exit 0 partition-uneven "$B" run --set cluster.pp=2 --env VLLM_PP_LAYER_PARTITION=20,12 \
	--set workload.num_requests=50 -q -o "$T/u"
grep -q '"pp_stage_utilization"' "$T/u/summary.json" && ok partition-uneven-metrics || fail partition-uneven-metrics "no per-stage metrics"
expect_exit 0 pp1-no-pipeline-keys "$B" run --set workload.num_requests=20 -q -o "$T/one"
grep -q '"pp_' "$T/one/summary.json" && fail pp1-no-pipeline-keys "pp keys with pp = 1" || ok pp1-no-pipeline-keys

expect_exit 0 pipeline-quick analysis/pipeline.sh --quick -o "$T/p1" "$B"
for f in loops.csv chunks.csv kv.csv summary.md; do
	[ -s "$T/p1/$f" ] && ok "pipeline-$f" || fail "pipeline-$f" "missing"
done
[ "$(($(wc -l < "$T/p1/loops.csv") - 1))" = 32 ] && ok pipeline-rows || fail pipeline-rows "$(wc -l < "$T/p1/loops.csv")"
# columns: pp,workload,load,rate,loop,tok/s,ttft50,ttft99,tpot50,tpot99,bubble,empty,lost,preempt,frag,free
bad=$(awk -F, 'NR > 1 && (($5 != "atomic" && $12 != 0) || ($5 == "atomic-noempty" && $13 != $1 - 1) ||
	($5 != "atomic-noempty" && $13 != 0) || $15 != 0) { print NR": "$0 }' "$T/p1/loops.csv")
[ -z "$bad" ] && ok pipeline-theory || fail pipeline-theory "$bad"
bad=$(awk -F, 'NR > 1 && $4 == "async" && ($14 != 0 || $15 != 0) { print NR": "$0 }' "$T/p1/kv.csv")
[ -z "$bad" ] && ok pipeline-async-no-fragmentation || fail pipeline-async-no-fragmentation "$bad"
expect_exit 0 pipeline-again analysis/pipeline.sh --quick -o "$T/p2" "$B"
for f in loops.csv chunks.csv kv.csv; do
	cmp -s "$T/p1/$f" "$T/p2/$f" && ok "pipeline-same-$f" || fail "pipeline-same-$f" "differs"
done
expect_exit 1 pipeline-failing-binary analysis/pipeline.sh --quick -o "$T/p3" /bin/false
e2e_done
