#!/usr/bin/env bash
# End-to-end tests of the scheduling policies and topologies through `bucketsim run`: presets,
# disaggregation, data-parallel instances, BucketServe grouping and memory-safe batching,
# static (UELLM) batching, unified attention, the monitor and boundaries logs, and their errors.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
B=$BUCKETSIM
# summary value of KEY in DIR/summary.json
val() { sed -n "s/^[[:space:]]*\"$2\":[[:space:]]*\\([^,]*\\),\\{0,1\\}\$/\\1/p" "$1/summary.json" | head -n 1; }
LB=(--trace longbench --set workload.truncate=true --set server.max_model_len=4096
	--set workload.num_requests=400 --set workload.arrival=offline --set server.num_kv_blocks=300)

# --- presets ---
for p in vllm distserve uellm bucketserve bucketserve-offline; do
	expect_exit 0 "preset-$p" "$B" run --preset "$p" --set workload.num_requests=500 -o "$T/p-$p" -q
	[ "$(val "$T/p-$p" completed)" = 500 ] && ok "preset-$p-completed" || fail "preset-$p-completed" "$(val "$T/p-$p" completed)"
done
[ "$(val "$T/p-distserve" instances)" = 2 ] && ok distserve-instances || fail distserve-instances "$(val "$T/p-distserve" instances)"
[ "$(val "$T/p-distserve" kv_transfers)" -gt 0 ] && ok distserve-transfers || fail distserve-transfers "none"
[ "$(val "$T/p-vllm" kv_transfers)" = 0 ] && ok vllm-no-transfers || fail vllm-no-transfers "$(val "$T/p-vllm" kv_transfers)"
expect_exit 2 preset-unknown "$B" run --preset nosuch
expect_stderr preset-unknown-msg "unknown preset 'nosuch'"
expect_exit 0 preset-print "$B" run --preset uellm --set scheduler.static_batch_size=4 --print-config
grep -qE '^scheduler\.batching +static +\(preset\)' "$T/stdout" && ok preset-origin || fail preset-origin "$(grep batching "$T/stdout")"
grep -qE '^scheduler\.static_batch_size +4 +\(command line\)' "$T/stdout" && ok preset-set-wins || fail preset-set-wins "$(grep static_batch "$T/stdout")"
# `list presets`: every preset, each line's keys exactly what --preset NAME sets (origin preset)
expect_exit 0 list-presets "$B" list presets
cp "$T/stdout" "$T/presets.txt"
[ "$(awk '{print $2}' "$T/presets.txt" | tr '\n' ' ')" = "vllm distserve uellm bucketserve bucketserve-offline " ] \
	&& ok list-presets-names || fail list-presets-names "$(awk '{print $2}' "$T/presets.txt" | tr '\n' ' ')"
while read -r _ name rest; do
	listed=$(printf '%s\n' "$rest" | sed 's/.*the total)://' | tr ' ' '\n' | grep = | sort)
	"$B" run --preset "$name" --print-config >"$T/pc.txt" 2>/dev/null
	applied=$(awk '$3 == "(preset)" {print $1 "=" $2}' "$T/pc.txt" | sort)
	[ -n "$listed" ] && [ "$listed" = "$applied" ] && ok "list-presets-$name" \
		|| fail "list-presets-$name" "listed [$listed] applied [$applied]"
done <"$T/presets.txt"
# `list` alone: every list under its heading, each as the list of that name prints it
expect_exit 0 list-all "$B" list
cp "$E2E_TMP/stdout" "$T/list-all"
for part in policies models workloads keys env; do
	"$B" list "$part" > "$T/list-one"
	awk -v h="== bucketsim list $part ==" '$0 == h {f = 1; next} /^== bucketsim list / {f = 0} f' "$T/list-all" |
		sed '${/^$/d}' | cmp -s - "$T/list-one" && ok "list-all-$part" || fail "list-all-$part" "differs from 'list $part'"
done
expect_exit 2 list-two "$B" list policies keys
# an option after the list's name: help, or an unknown option (it read as a second list)
expect_exit 0 list-name-help "$B" list keys -h
grep -q '^Usage: bucketsim list' "$T/stdout" && ok list-name-help-text || fail list-name-help-text "$(head -2 "$T/stdout")"
expect_exit 2 list-name-option "$B" list keys --strict
expect_stderr list-name-option-msg "unknown option '--strict'"
# `list env`: the variables --env reads (policies/bucket_env.c); the one naming a file marked so
# (a sweep makes it absolute)
expect_exit 0 list-env "$B" list env
grep -qE '^VLLM_BUCKETING_FROM_FILE +read the buckets from this file .*\[file\]$' "$T/stdout" \
	&& [ "$(grep -c '\[file\]$' "$T/stdout")" = 1 ] && ok list-env-file || fail list-env-file "$(grep FROM_FILE "$T/stdout")"

# --- disaggregation: every finished request with more than one token was transferred ---
expect_exit 0 disagg "$B" run "${LB[@]}" --set cluster.mode=disaggregated \
	--set cluster.prefill_instances=2 --set cluster.decode_instances=2 -o "$T/d"
multi=$(awk -F, 'NR>1 && $7 > 1' "$T/d/requests.csv" | wc -l)
pre=$(val "$T/d" preemptions)
tr=$(val "$T/d" kv_transfers)
[ "$tr" -ge "$multi" ] && [ "$tr" -le $((multi + pre)) ] && ok disagg-transfers || fail disagg-transfers "$tr transfers for $multi multi-token requests ($pre preemptions)"
[ "$(val "$T/d" instances)" = 4 ] && ok disagg-instances || fail disagg-instances "$(val "$T/d" instances)"
# prefill passes on instances 0-1, decode passes on 2-3
bad=$(awk -F, 'NR>1 && (($4 == "prompt" && $14 > 1) || ($4 == "decode" && $14 < 2))' "$T/d/batches.csv" | wc -l)
[ "$bad" -eq 0 ] && ok disagg-roles || fail disagg-roles "$bad passes on the wrong instance"
mv "$T/d" "$T/d1"
expect_exit 0 disagg-again "$B" run "${LB[@]}" --set cluster.mode=disaggregated \
	--set cluster.prefill_instances=2 --set cluster.decode_instances=2 -o "$T/d"
for f in summary.json requests.csv batches.csv; do
	cmp -s "$T/d/$f" "$T/d1/$f" && ok "disagg-same-$f" || fail "disagg-same-$f" "differs"
done

# --- data-parallel colocated instances ---
expect_exit 0 dp "$B" run --trace alpaca --set cluster.instances=3 --set workload.rate=40 -o "$T/dp" -q
[ "$(cut -d, -f14 "$T/dp/batches.csv" | tail -n +2 | sort -u | tr '\n' ' ')" = "0 1 2 " ] && ok dp-all-instances || fail dp-all-instances "not every instance ran"

# --- BucketServe: memory-safe batches never overflow the KV cache ---
expect_exit 0 memsafe "$B" run "${LB[@]}" --set scheduler.batching=memory_safe \
	--set scheduler.grouping=adaptive --set scheduler.kv_charge=total -o "$T/m"
[ "$(val "$T/m" preemptions)" = 0 ] && ok memsafe-no-preemption || fail memsafe-no-preemption "$(val "$T/m" preemptions)"
expect_exit 0 continuous "$B" run "${LB[@]}" -o "$T/c" -q
[ "$(val "$T/c" preemptions)" -gt 0 ] && ok continuous-preempts || fail continuous-preempts "the same queue did not stress the cache"
# adaptive grouping: splits are logged, one row per change
expect_exit 0 adaptive "$B" run --trace alpaca --set workload.mix=alpaca:0.8,longbench:0.2 \
	--set workload.truncate=true --set server.max_model_len=4096 --set workload.num_requests=2000 \
	--set workload.arrival=poisson --set workload.rate=30 --set server.max_num_seqs=16 \
	--set scheduler.n_max=8 --set scheduler.grouping=adaptive \
	--set scheduler.order=earliest_bucket --set monitor.interval_s=5 -o "$T/a"
# every row: the bucket count matches the boundaries, which run from 0 to L_max (4096) upwards;
# N_max is the one set (scheduler.n_max=8)
bad=$(awk -F, 'NR>1 {n = split($7, b, " "); up = 1; for (i = 2; i <= n; i++) if (b[i] <= b[i-1]) up = 0;
	if (n != $6 + 1 || b[1] != 0 || b[n] != 4096 || !up || $5 != 8) c++} END {print c + 0}' "$T/a/boundaries.csv")
[ "$(wc -l < "$T/a/boundaries.csv")" -gt 1 ] && [ "$bad" = 0 ] && ok boundaries-file || fail boundaries-file "$bad malformed rows"
sp=$(val "$T/a" bucket_splits)
rows=$(awk -F, 'NR>1 {s += $3} END {print s + 0}' "$T/a/boundaries.csv")
[ "$sp" -gt 0 ] && [ "$sp" = "$rows" ] && ok boundaries-splits || fail boundaries-splits "summary $sp, log $rows"
# A run whose adaptive grouping never split says so, with its N_max: five 100-token prompts at
# t = 0 on one prefill instance of 100 blocks of 128 tokens: Eq. 5 M_safe = 0.9 x 12800 = 11520
# tokens, Eq. 6 N_max = floor(11520 / 100) = 115 at each of the 5 arrivals, and the five
# leave the queue in one batch formed under the last of those adjustments (the one counted);
# two prefill instances with scheduler.nmax_memory=sum: 230.
# (Gaudi's one-prompt passes, OP: the preset's prefill batches would bound N_max by the 16
# prompts a warmed pass holds.)
OP=(--set scheduler.batching=memory_safe --set server.max_num_prefill_seqs=1)
"$B" run --preset bucketserve --set workload.lengths=constant --set workload.prompt_mean=100 \
	--set workload.output_mean=10 --set workload.num_requests=5 --set workload.arrival=offline \
	--set server.num_kv_blocks=100 --set server.max_model_len=4096 "${OP[@]}" > "$T/ns.txt" 2>&1
grep -qx 'buckets     adaptive grouping never split: N_max 115 to 115 (mean 115.0) over 1 adjustment, no bucket held more' "$T/ns.txt" \
	&& ok never-split-line || fail never-split-line "$(grep buckets "$T/ns.txt")"
"$B" run --preset bucketserve --set workload.lengths=constant --set workload.prompt_mean=100 \
	--set workload.output_mean=10 --set workload.num_requests=5 --set workload.arrival=offline \
	--set server.num_kv_blocks=100 --set server.max_model_len=4096 --set cluster.prefill_instances=2 \
	--set scheduler.nmax_memory=sum "${OP[@]}" -o "$T/ns" > /dev/null 2>&1
got="$(val "$T/ns" n_max_adjustments) $(val "$T/ns" n_max_min) $(val "$T/ns" n_max_max) $(val "$T/ns" n_max_mean) $(val "$T/ns" bucket_splits)"
[ "$got" = "1 230 230 230 0" ] && ok nmax-sum-json || fail nmax-sum-json "$got"
head -1 "$T/a/boundaries.csv" | grep -qx 'time_s,queue,splits,merged,n_max,buckets,boundaries' && ok boundaries-header || fail boundaries-header "$(head -1 "$T/a/boundaries.csv")"
# monitor: one row per interval from 0 to the end
head -1 "$T/a/monitor.csv" | grep -qx 'time_s,waiting,running,transferring,kv_used_blocks,kv_max_block_id,kv_total_blocks,kv_utilization,arrival_rate,mean_waiting_prompt_tokens,batch_latency_ms,buckets,microbatches_in_flight' \
	&& ok monitor-header || fail monitor-header "$(head -1 "$T/a/monitor.csv")"
end=$(val "$T/a" simulated_s)
n=$(($(wc -l < "$T/a/monitor.csv") - 1))
want=$(awk -v e="$end" 'BEGIN {printf "%d", e / 5 + 1}')
[ "$n" -ge "$want" ] && [ "$n" -le $((want + 1)) ] && ok monitor-rows || fail monitor-rows "$n rows for $end s"
arr=$(awk -F, 'NR>1 {s += $9 * 5} END {printf "%.0f", s}' "$T/a/monitor.csv")
[ "$arr" = 2000 ] && ok monitor-arrivals || fail monitor-arrivals "arrival rates sum to $arr"
# fixed grouping
expect_exit 0 fixed "$B" run --trace alpaca --set scheduler.grouping=fixed --set scheduler.boundaries=0,64,128,max -q -o "$T/f"
grep -q '"bucket_boundaries":	\[0, 64, 128, ' "$T/f/summary.json" && ok fixed-boundaries || fail fixed-boundaries "$(grep -A1 bucket_boundaries "$T/f/summary.json" | head -2)"

# --- static batching (UELLM): never more than static_batch_size running ---
expect_exit 0 static "$B" run --trace alpaca --preset uellm --set workload.arrival=offline \
	--set workload.num_requests=300 --set scheduler.static_batch_size=7 -o "$T/s"
[ "$(val "$T/s" running_peak)" -le 7 ] && ok static-peak || fail static-peak "$(val "$T/s" running_peak)"

# --- unified attention ---
expect_exit 0 unified "$B" run --trace alpaca --set bucketing.strategy=unified --set workload.num_requests=500 -o "$T/u"
[ "$(val "$T/u" unified_passes)" -gt 0 ] && [ "$(val "$T/u" prefill_passes)" = 0 ] && ok unified-passes || fail unified-passes "$(val "$T/u" unified_passes)"
[ "$(grep -c ',unified,' "$T/u/batches.csv")" = "$(val "$T/u" unified_passes)" ] && ok unified-rows || fail unified-rows "$(grep -c ',unified,' "$T/u/batches.csv") rows for $(val "$T/u" unified_passes) passes"

# --- automatic prefix caching: a shared prefix is computed once while cached ---
{ echo "arrival_time_s,prompt_tokens,output_tokens,prefix_group,prefix_tokens"
  for i in 0 1 2 3 4 5 6 7 8 9; do echo "$i,1000,8,3,700"; done; } > "$T/prefix.csv"
expect_exit 0 prefix "$B" run --trace "$T/prefix.csv" --set server.max_model_len=4096 -o "$T/px"
[ "$(val "$T/px" prefix_cache_hit_tokens)" = $((9 * 640)) ] && ok prefix-hits || fail prefix-hits "$(val "$T/px" prefix_cache_hit_tokens)"
# later prompts run as (1, 1000 - 640 = 360 tokens, 5 context blocks)
[ "$(awk -F, '$4 == "prompt" && $5 == 1 && $6 == 360 && $7 == 5' "$T/px/batches.csv" | wc -l)" -eq 9 ] && ok prefix-shapes || fail prefix-shapes "$(grep ',prompt,' "$T/px/batches.csv" | head -3)"
expect_exit 0 prefix-off "$B" run --trace "$T/prefix.csv" --set server.max_model_len=4096 --set server.prefix_caching=false -o "$T/px0"
[ "$(val "$T/px0" prefix_cache_hit_tokens)" = 0 ] && ok prefix-off-nohits || fail prefix-off-nohits "$(val "$T/px0" prefix_cache_hit_tokens)"

# --- pipeline-parallel engine loops: every registered one (list policies), the shipped among them ---
loops=$("$B" list policies | awk '/^loop /{f = 1; next} /^[a-z]/{f = 0} f {print $1}')
for l in async atomic virtual; do
	case " $(echo $loops) " in *" $l "*) ok "pp-listed-$l" ;; *) fail "pp-listed-$l" "not in: $loops" ;; esac
done
for loop in $loops; do
	expect_exit 0 "pp-$loop" "$B" run --trace alpaca --set workload.num_requests=600 --set workload.rate=10 \
		--set cluster.pp=4 --set cluster.engine_loop=$loop -o "$T/pp-$loop" -q
	[ "$(val "$T/pp-$loop" completed)" = 600 ] && ok "pp-$loop-completed" || fail "pp-$loop-completed" "$(val "$T/pp-$loop" completed)"
	[ "$(val "$T/pp-$loop" pipeline_stages)" = 4 ] && ok "pp-$loop-stages" || fail "pp-$loop-stages" "$(val "$T/pp-$loop" pipeline_stages)"
done
# more than one microbatch in flight: lanes overlap in time
ov=$(awk -F, 'NR>1 {if ($14 != lane && $2 + 0 < end) o = 1; lane = $14; end = $3 + 0} END {print o + 0}' "$T/pp-async/batches.csv")
[ "$ov" = 1 ] && ok pp-overlap || fail pp-overlap "no two microbatches in flight"
expect_exit 3 pp-disagg "$B" run --set cluster.pp=2 --set cluster.mode=disaggregated
expect_stderr pp-disagg-msg "field 'cluster\.pp'"
expect_exit 3 pp-virtual-grouped "$B" run --set cluster.pp=2 --set cluster.engine_loop=virtual --set scheduler.grouping=adaptive
expect_stderr pp-virtual-grouped-msg "field 'cluster\.engine_loop': virtual engines keep one plain queue each"

# --- the decode-jump fast path equals the step-by-step reference (sim.decode_jumps=false) ---
expect_exit 0 disagg-reference "$B" run "${LB[@]}" --set cluster.mode=disaggregated \
	--set cluster.prefill_instances=2 --set cluster.decode_instances=2 --set sim.decode_jumps=false -o "$T/dr" -q
for f in requests.csv batches.csv; do
	cmp -s "$T/d/$f" "$T/dr/$f" && ok "disagg-reference-$f" || fail "disagg-reference-$f" "differs from the fast path"
done
expect_exit 0 pp-reference "$B" run --trace alpaca --set workload.num_requests=600 --set workload.rate=10 \
	--set cluster.pp=4 --set cluster.engine_loop=async --set sim.decode_jumps=false -o "$T/ppr" -q
cmp -s "$T/pp-async/requests.csv" "$T/ppr/requests.csv" && ok pp-reference || fail pp-reference "differs from the fast path"
# A transfer that completes while the decode instance runs identical steps joins at the next
# step: request 1 (1 s, 50 prompt, 5 output) decodes with request 0 (500 output), so its TPOT
# is about one two-sequence decode step, as colocated (it was ~560 ms: it waited for request
# 0's next KV-block boundary).
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,100,500\n1,50,5\n' > "$T/two.csv"
expect_exit 0 two-vllm "$B" run --preset vllm --trace "$T/two.csv" --set model=llama-2-13b -o "$T/two-v" -q
expect_exit 0 two-distserve "$B" run --preset distserve --trace "$T/two.csv" --set model=llama-2-13b -o "$T/two-d" -q
tv=$(awk -F, '$1 == 1 {print $10}' "$T/two-v/requests.csv")
td=$(awk -F, '$1 == 1 {print $10}' "$T/two-d/requests.csv")
awk -v v="$tv" -v d="$td" 'BEGIN {exit !(d > 0.9 * v && d < 1.25 * v)}' && ok two-tpot || fail two-tpot "request 1 TPOT $td ms disaggregated, $tv ms colocated"

# --- the policy registry: one list of names ---
expect_exit 2 order-unknown "$B" run --set scheduler.order=lfw
valid=$("$B" list policies | awk '/^order /{f = 1; next} /^[a-z]/{f = 0} f {printf "%s%s", sep, $1; sep = ", "}')
expect_stderr order-unknown-msg "unknown order 'lfw'; valid: $valid\$"
# every shipped order is listed (a new one adds to the list: no edit here)
missing=""
for o in fcfs sjf ljf sjf_total ljf_total priority earliest_bucket slo_output; do
	case ", $valid, " in *", $o, "*) ;; *) missing="$missing $o" ;; esac
done
[ -z "$missing" ] && ok order-members || fail order-members "missing:$missing in: $valid"
# policies/README.md describes every registered policy: each name appears there in backquotes
# in a table row (its family's row of "Policies and topologies", or the strategies' table)
undocumented=""; nnames=0
for name in $("$B" list policies | awk '/^[a-z]+ \([a-z_.]+\):/{f = 1; next} /^[^ ]/{f = 0} f {print $1}'); do
	nnames=$((nnames + 1))
	grep -qE "^\|.*\`$name\`" "$(dirname "$0")/../policies/README.md" || undocumented="$undocumented $name"
done
[ "$nnames" -gt 20 ] && [ -z "$undocumented" ] && ok policies-readme-names || fail policies-readme-names "$nnames names read from 'list policies'; not in a table row of policies/README.md:$undocumented"
# Every configuration key (a policy's own keys included) is described in a README, in
# backquotes: the key tables of sim/README.md and the modules' READMEs.
undocumented=""; nkeys=0
for k in $("$B" list keys | awk '{print $1}'); do
	nkeys=$((nkeys + 1))
	grep -qF "\`$k\`" "$(dirname "$0")"/../README.md "$(dirname "$0")"/../*/README.md || undocumented="$undocumented $k"
done
[ "$nkeys" -gt 60 ] && [ -z "$undocumented" ] && ok keys-readme || fail keys-readme "$nkeys keys read from 'list keys'; in no README:$undocumented"
# list keys: a choice key with the values it takes; a policy family's are its members as
# list policies lists them, and a key whose default is auto takes auto too.
"$B" list keys > "$T/lk"
fam=$("$B" list policies | awk '/^batching \(scheduler\.batching\):/{f = 1; next} /^[^ ]/{f = 0} f {printf "%s%s", s, $1; s = "|"}')
[ "$fam" = "continuous|static|memory_safe|prefill_batch|unified|token_budget|queue_budget" ] \
	&& grep -qxE "scheduler\.batching +choice +continuous +batch controller \(one of: ${fam//|/\\|}\)" "$T/lk" \
	&& grep -qE '^server\.execution_mode +choice +auto .* \(one of: auto\|hpu_graphs\|hpu_compile\|hpu_eager\|cuda_graphs\)$' "$T/lk" \
	&& grep -qxE 'model\.precision +choice +bf16 +.* \(one of: bf16\|fp8\)' "$T/lk" \
	&& grep -qxE 'scheduler\.l_max +int +auto +L_max: buckets cover \[0, L_max\]; auto = server\.max_model_len \[tokens\]' "$T/lk" \
	&& ok list-keys-choices || fail list-keys-choices "$fam / $(grep -E '^(scheduler\.batching|server\.execution_mode|model\.precision|scheduler\.l_max) ' "$T/lk")"
# list policies: the families, then the other choice keys under their heading (indented).
"$B" list policies > "$T/lp"
awk '/^other choice keys \(not policies\)/{h = 1; next} h && /^  cluster\.mode  +colocated\|disaggregated$/{found = 1} END {exit !found}' "$T/lp" \
	&& ok list-policies-other-choices || fail list-policies-other-choices "$(tail -n 15 "$T/lp")"
# A policy's own key reaches it (policies/policy.h, par[]): sjf_aging with no aging is FCFS,
# and with every request waiting from t = 0 it is SJF whatever the weight.
AG=(--trace alpaca --set workload.num_requests=400 --seed 2 -q --no-batches)
expect_exit 0 aging-0 "$B" run "${AG[@]}" --set workload.rate=75 --set scheduler.order=sjf_aging --set scheduler.sjf_aging_ms=0 -o "$T/ag0"
expect_exit 0 aging-fcfs "$B" run "${AG[@]}" --set workload.rate=75 --set scheduler.order=fcfs -o "$T/agf"
cmp -s "$T/ag0/requests.csv" "$T/agf/requests.csv" && ok aging-0-is-fcfs || fail aging-0-is-fcfs "requests.csv differs"
expect_exit 0 aging-1 "$B" run "${AG[@]}" --set workload.rate=75 --set scheduler.order=sjf_aging -o "$T/ag1"
cmp -s "$T/ag1/requests.csv" "$T/agf/requests.csv" && fail aging-1-not-fcfs "the default weight changed nothing" || ok aging-1-not-fcfs
expect_exit 0 aging-offline "$B" run "${AG[@]}" --set workload.arrival=offline --set scheduler.order=sjf_aging --set scheduler.sjf_aging_ms=0.5 -o "$T/ago"
expect_exit 0 aging-sjf "$B" run "${AG[@]}" --set workload.arrival=offline --set scheduler.order=sjf -o "$T/ags"
cmp -s "$T/ago/requests.csv" "$T/ags/requests.csv" && ok aging-offline-is-sjf || fail aging-offline-is-sjf "requests.csv differs"
# Inside buckets an order is the same key (policies/order.h): sjf_aging with no aging is FCFS
# there too, and with every request waiting from t = 0 it is SJF.
GB=(--set scheduler.grouping=adaptive --set scheduler.batching=memory_safe)
expect_exit 0 aging-grouped-0 "$B" run "${AG[@]}" "${GB[@]}" --set workload.rate=75 --set scheduler.order=sjf_aging --set scheduler.sjf_aging_ms=0 -o "$T/agb0"
expect_exit 0 aging-grouped-fcfs "$B" run "${AG[@]}" "${GB[@]}" --set workload.rate=75 --set scheduler.order=fcfs -o "$T/agbf"
cmp -s "$T/agb0/requests.csv" "$T/agbf/requests.csv" && ok aging-grouped-0-is-fcfs || fail aging-grouped-0-is-fcfs "requests.csv differs"
expect_exit 0 aging-grouped-offline "$B" run "${AG[@]}" "${GB[@]}" --set workload.arrival=offline --set scheduler.order=sjf_aging --set scheduler.sjf_aging_ms=0.5 -o "$T/agbo"
expect_exit 0 aging-grouped-sjf "$B" run "${AG[@]}" "${GB[@]}" --set workload.arrival=offline --set scheduler.order=sjf -o "$T/agbs"
cmp -s "$T/agbo/requests.csv" "$T/agbs/requests.csv" && ok aging-grouped-offline-is-sjf || fail aging-grouped-offline-is-sjf "requests.csv differs"
cmp -s "$T/agbs/requests.csv" "$T/agbf/requests.csv" && fail aging-grouped-sjf-not-fcfs "requests.csv equal" || ok aging-grouped-sjf-not-fcfs
expect_exit 0 aging-key-unread "$B" validate --set scheduler.sjf_aging_ms=5
expect_stderr aging-key-unread-msg "set but never read: only order 'sjf_aging' reads it"
expect_exit 0 slo-output-grouped "$B" run -q --set workload.num_requests=50 --set scheduler.order=slo_output --set scheduler.grouping=adaptive
# keys set but never read: one warning per key; --strict makes the first an error
expect_exit 0 unread-warn "$B" validate --set scheduler.theta=0.3 --set cluster.mode=disaggregated --set cluster.instances=2
[ "$(grep -c 'warning' "$T/stderr")" = 2 ] && ok unread-warn-count || fail unread-warn-count "$(cat "$T/stderr")"
expect_stderr unread-warn-theta "warning: field 'scheduler\.theta': set but never read: only grouping 'adaptive' reads it, and scheduler\.grouping is 'none'"
expect_stderr unread-warn-instances "warning: field 'cluster\.instances': set but never read: cluster\.mode is disaggregated"
expect_exit 3 unread-strict "$B" validate --strict --set scheduler.theta=0.3
expect_stderr unread-strict-msg "error: field 'scheduler\.theta': set but never read"
expect_exit 0 unread-preset-silent "$B" validate --preset uellm --set scheduler.batching=continuous
[ ! -s "$T/stderr" ] && ok unread-preset-silent-msg || fail unread-preset-silent-msg "$(cat "$T/stderr")"

# --- errors ---
expect_exit 3 unified-needs-buckets "$B" run --set scheduler.batching=unified
expect_stderr unified-needs-buckets-msg "field 'scheduler\.batching'"
expect_exit 3 fixed-needs-boundaries "$B" run --set scheduler.grouping=fixed
expect_stderr fixed-needs-boundaries-msg "field 'scheduler\.boundaries'"
expect_exit 3 lmax-too-small "$B" run --set scheduler.grouping=adaptive --set scheduler.l_max=100
expect_stderr lmax-too-small-msg "field 'scheduler\.l_max'"
expect_exit 3 unified-disagg "$B" run --set bucketing.strategy=unified --set cluster.mode=disaggregated
expect_stderr unified-disagg-msg "field 'cluster\.mode': unified attention runs prefill and decode together"
expect_exit 2 instances-zero "$B" run --set cluster.instances=0
expect_stderr instances-zero-msg "field 'cluster\.instances': expected an integer in \[1, 1024\], got '0'"

# --- the paper's prefill batch (scheduler.batching=prefill_batch), worked by hand ---
# Five prompts at t = 0 in this order: r0 100, r1 900, r2 200, r3 300, r4 250 tokens; one
# prefill instance of 100 blocks of 128 tokens with mem_safe_fraction 0.08: M_safe =
# floor(0.08 x 12800) = 1024 tokens, and a batch fits while N x S_max <= 1024 (Eq. 1).  No
# Gaudi buckets (bucketing.strategy=none), so a pass is the batch's own (N, S_max):
#   one bucket, arrival order (distserve): {r0} (1 x 100; r1 would make 2 x 900),
#     {r1} (1 x 900), {r2, r3, r4} (3 x 300: 750 real, 900 padded);
#   buckets [0, 512) and [512, 4096] (fcfs picks the bucket of the oldest request):
#     {r0, r2, r3} (3 x 300: 600 real, 900 padded; r4 would make 4 x 300 = 1200),
#     {r1} (1 x 900: its bucket is then empty), {r4} (1 x 250).
# With Gaudi's one-prompt passes (scheduler.batching=continuous) every pass holds one prompt.
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,100,2\n0,900,2\n0,200,2\n0,300,2\n0,250,2\n' > "$T/pb.csv"
PB=(--trace "$T/pb.csv" --set workload.arrival=trace --set server.num_kv_blocks=100
	--set server.max_model_len=2048 --set bucketing.strategy=none --set scheduler.mem_safe_fraction=0.08 --set scheduler.batching=prefill_batch)
passes() { awk -F, '$4 == "prompt" { printf "%s%sx%s:%s/%s", n++ ? " " : "", $5, $6, $11, $12 }' "$1/batches.csv"; }
"$B" run --preset distserve "${PB[@]}" -o "$T/pb1" > /dev/null 2>&1
got=$(passes "$T/pb1")
[ "$got" = "1x100:100/100 1x900:900/900 3x300:750/900" ] && ok prefill-batch-arrival || fail prefill-batch-arrival "$got"
"$B" run --preset distserve "${PB[@]}" --set scheduler.grouping=fixed --set scheduler.boundaries=0,512,max -o "$T/pb2" > /dev/null 2>&1
got=$(passes "$T/pb2")
[ "$got" = "3x300:600/900 1x900:900/900 1x250:250/250" ] && ok prefill-batch-buckets || fail prefill-batch-buckets "$got"
"$B" run --preset distserve "${PB[@]:0:8}" --set scheduler.batching=continuous --set server.max_num_prefill_seqs=1 -o "$T/pb3" > /dev/null 2>&1
got=$(passes "$T/pb3" | sed 's|/[0-9]*||g')
[ "$got" = "1x100:100 1x900:900 1x200:200 1x300:300 1x250:250" ] && ok prefill-batch-gaudi-passes || fail prefill-batch-gaudi-passes "$got"
# On Gaudi a prefill batch stays in the prompt grid the server warms (vllm-gaudi's
# _can_merge_prefill_contents: bucket bs <= max_num_prefill_seqs, bs x query <=
# max_num_batched_tokens).  The presets run it at their defaults with max_num_prefill_seqs 16:
# llama-3.1-8b with max_model_len 4096, max_num_batched_tokens 2048; prompt buckets (reference
# 2.1/2.2) bs ExpRange(1,2,16,5) = {1,2,4,6,10,16}, query ExpRange(128,128,2048,11) =
# {128,256,384,512,768,896,1280,1664,2048}, kept when bs x query <= 2048.  Eighteen prompts at
# t = 0 in this order: r0 100, r1 2000, r2..r17 100 tokens.
#   distserve (one bucket, arrival order): {r0} (r1 would make the pass (2, 2000): no bucket
#     of bs >= 2 holds 2000 tokens within 2048), {r1} (r2 would make (2, 2000) again),
#     {r2..r17} (16 x 100 in bucket (16, 128)).
#   bucketserve: N_max = min(Eq. 6, 16 prompts a warmed pass holds) = 16; at the 17th arrival
#     the bucket [0, 4096] holds 17 > 16, 16 of them (r1's 2000 included) below 2048: split at
#     2048; at the 18th, [0, 2048) holds 18, 17 below 1024: split at 1024.  The oldest request
#     (r0) is in [0, 1024): {r0, r2..r16} (16 x 100; a 17th would need bs 17 > 16), then the
#     oldest left is r1: {r1} (1 x 2000), then {r17} (1 x 100).
# Padded prompt tokens: 128 + 2048 + 2048 = 4224 in both; nothing compiles at run time.
{ echo arrival_time_s,prompt_tokens,output_tokens; echo 0,100,2; echo 0,2000,2
  for i in $(seq 16); do echo 0,100,2; done; } > "$T/grid.csv"
GR=(--trace "$T/grid.csv" --set workload.arrival=trace --set server.max_model_len=4096)
shapes() { awk -F, '$4 == "prompt" { printf "%s%sx%s:%sx%s", n++ ? " " : "", $5, $6, $8, $9 }' "$1/batches.csv"; }
"$B" run --preset distserve "${GR[@]}" -o "$T/grd" > /dev/null 2>&1
got="$(shapes "$T/grd") $(val "$T/grd" compiles_runtime)"
[ "$got" = "1x100:1x128 1x2000:1x2048 16x100:16x128 0" ] && ok prefill-batch-grid-distserve || fail prefill-batch-grid-distserve "$got"
"$B" run --preset bucketserve "${GR[@]}" -o "$T/grb" > /dev/null 2>&1
got="$(shapes "$T/grb") $(val "$T/grb" compiles_runtime) $(val "$T/grb" bucket_splits) $(val "$T/grb" n_max_max)"
[ "$got" = "16x100:16x128 1x2000:1x2048 1x100:1x128 0 2 16" ] && ok prefill-batch-grid-bucketserve || fail prefill-batch-grid-bucketserve "$got"
# The same batch controller and prompt buckets set by key (before the grid bound, the
# eighteen prompts ran as one (18, 2000) pass, compiled at run time).
"$B" run --preset distserve "${GR[@]}" --set scheduler.batching=prefill_batch --set server.max_num_prefill_seqs=16 -o "$T/grk" > /dev/null 2>&1
got="$(shapes "$T/grk") $(val "$T/grk" compiles_runtime)"
[ "$got" = "1x100:1x128 1x2000:1x2048 16x100:16x128 0" ] && ok prefill-batch-grid-by-key || fail prefill-batch-grid-by-key "$got"
# Gaudi's one-prompt passes stay available by key: within the 2048-token budget r0 and the
# first 1948 tokens of r1, then r1's last 52 (16 blocks of context: bucket (1, 128, 16)) and
# the 16 others, each its own pass.
"$B" run --preset bucketserve "${GR[@]}" --set scheduler.batching=memory_safe --set server.max_num_prefill_seqs=1 -o "$T/gro" > /dev/null 2>&1
got=$(shapes "$T/gro" | tr ' ' '\n' | sort | uniq -c | tr -s ' ' | tr '\n' ';')
[ "$got" = " 17 1x100:1x128; 1 1x1948:1x2048; 1 1x52:1x128;" ] && ok prefill-batch-one-prompt-passes || fail prefill-batch-one-prompt-passes "$got"

# The presets at their defaults on Mixed (300 requests at t = 0, llama-2-13b, 4 cards): their
# batches differ (bucketserve's Algorithm 1 splits once the queue exceeds N_max = 16), and
# what each reports follows from its own passes: every fresh prompt pass in a bucket of the
# grid above (ctx blocks 0; bs x query <= 2048), several prompts only in fresh passes, the
# padded tokens the sum of bucket bs x query over every pass, the prompt tokens computed once
# each (no preemption), and the only shapes compiled at run time chunk tails whose context
# (32 blocks) is beyond the grid's 31 ((4096 - 128) // 128), as under Gaudi's one-prompt passes.
MX=(--set model=llama-2-13b --set workload.truncate=true --set workload.mix=alpaca:0.8,longbench:0.2
	--set cluster.cards=4 --seed 1 --set workload.arrival=offline --set workload.num_requests=300)
"$B" run --preset distserve "${MX[@]}" -o "$T/mxd" > /dev/null 2>&1
"$B" run --preset bucketserve "${MX[@]}" -o "$T/mxb" > /dev/null 2>&1
cmp -s "$T/mxd/batches.csv" "$T/mxb/batches.csv" && fail presets-differ-mixed "identical batches.csv" || ok presets-differ-mixed
for d in mxd mxb; do
	bad=$(awk -F, 'BEGIN { split("1 2 4 6 10 16", b, " "); for (i in b) B[b[i]] = 1
		split("128 256 384 512 768 896 1280 1664 2048", q, " "); for (i in q) Q[q[i]] = 1 }
		$4 == "prompt" && $10 == 0 && !(($8 in B) && ($9 in Q) && $8 * $9 <= 2048) { n++ }
		$4 == "prompt" && $5 > 1 && $7 != 0 { n++ }
		END { print n + 0 }' "$T/$d/batches.csv")
	pad=$(awk -F, 'NR > 1 { s += $8 * $9 } END { print s }' "$T/$d/batches.csv")
	pr=$(awk -F, '$4 == "prompt" { s += $11 } END { print s }' "$T/$d/batches.csv")
	want=$(awk -F, 'NR > 1 { s += $6 } END { print s }' "$T/$d/requests.csv")
	late=$(awk -F, 'NR > 1 && $8 == 1 && !($1 == "prompt" && $4 > 31) { n++ } END { print n + 0 }' "$T/$d/buckets.csv")
	got="$bad $late $(val "$T/$d" preemptions) $((pad - $(val "$T/$d" padded_tokens))) $((pr - want))"
	[ "$got" = "0 0 0 0 0" ] && ok presets-mixed-derived-$d || fail presets-mixed-derived-$d "$got"
done

# A livelock ends the run (it used to loop for ever): eight prompts on 12 blocks of 128 tokens
# with a three-stage pipeline; after five finish, the three left (1360, 1113 and 922 tokens:
# 11, 9 and 8 blocks) preempt each other's chunks for ever.  The run stops after 100000
# preemptions without a prefill completing, says so, and counts the three unfinished, the
# same on the fast path and the step-by-step reference.
printf 'arrival_time_s,prompt_tokens,output_tokens\n0,48,2\n0,508,93\n0,542,2\n0,1360,10\n0,1012,11\n0,1113,59\n0,983,3\n0,922,78\n' > "$T/ll.csv"
LL=(--trace "$T/ll.csv" --set workload.arrival=offline --set server.max_model_len=1536 --set cluster.pp=3
	--set server.max_num_batched_tokens=256 --set server.num_kv_blocks=12 --set server.prefix_caching=false)
for j in true false; do
	timeout 60 "$B" run "${LL[@]}" --set sim.decode_jumps=$j -o "$T/ll-$j" > /dev/null 2> "$T/ll-$j.err"
	echo "rc=$?" >> "$T/ll-$j.err"
done
grep -q "100001 preemptions without a prefill completing.*3 of 8 requests unfinished" "$T/ll-true.err" &&
	grep -q "^rc=0" "$T/ll-true.err" && ok livelock-stops || fail livelock-stops "$(cat "$T/ll-true.err")"
[ "$(val "$T/ll-true" unfinished) $(val "$T/ll-true" completed)" = "3 5" ] && ok livelock-unfinished || fail livelock-unfinished "$(val "$T/ll-true" unfinished) $(val "$T/ll-true" completed)"
cmp -s "$T/ll-true/requests.csv" "$T/ll-false/requests.csv" && ok livelock-both-paths || fail livelock-both-paths "requests.csv differs"

e2e_done
