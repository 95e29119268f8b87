#!/usr/bin/env bash
# End-to-end tests of the execution modes (server.execution_mode, policies/README.md
# "Execution modes"): hardware=a100 runs cuda_graphs by default (no Gaudi compiles, captures
# reported apart, block 16, the GPU KV sizing, one forward per step), with one warning for an
# uncalibrated GPU profile (a100 itself is calibrated); Gaudi's auto mode follows PT_HPU_LAZY_MODE and the version; the
# conflicts are errors naming the setting.
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
SMALL=(--set workload.num_requests=60 --set workload.rate=4 --seed 3)
m() { jq -r ".metrics.$2" "$T/$1/summary.json"; }
c() { jq -r ".config[\"$2\"]" "$T/$1/summary.json"; }
is() { # is NAME GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "got '$2', expected '$3'"; fi
}

# hardware=a100: cuda_graphs by default
expect_exit 0 a100-run "$BUCKETSIM" run --set hardware=a100 "${SMALL[@]}" -o "$T/a"
is a100-mode "$(c a server.execution_mode)" cuda_graphs
is a100-block "$(c a server.block_size)" 16
# 0.9 x 79.1 GiB - 16,059,990,016 B weights - 2 GiB - 86 captures x 26 MiB over 2 MiB blocks
is a100-kv "$(c a server.num_kv_blocks)" 26649
is a100-no-warmup-compiles "$(m a compiles_warmup)" 0
is a100-no-runtime-compiles "$(m a compiles_runtime)" 0
# 51 PIECEWISE sizes (1, 2, 4, 8..248, 256..512) + 35 FULL (those up to max_num_seqs 256)
is a100-captures "$(m a cuda_graph_captures)" 86
is a100-capture-time "$(m a capture_s)" 4.902
is a100-no-prefill-passes "$(m a prefill_passes)" 0
is a100-no-decode-passes "$(m a decode_passes)" 0
steps=$(m a engine_steps)
is a100-one-forward-per-step "$(m a unified_passes)" "$steps"
is a100-batches-rows "$(($(wc -l < "$T/a/batches.csv") - 1))" "$steps"
# every forward padded to a capture size (or not at all above 512 tokens)
bad=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ t = $col["real_tokens"]; p = $col["padded_tokens"]
	  if (t <= 512 && p != (t <= 4 ? (t == 3 ? 4 : t) : t <= 248 ? int((t + 7) / 8) * 8 : int((t + 15) / 16) * 16)) n++
	  if (t > 512 && p != t) n++ } END { print n + 0 }' "$T/a/batches.csv")
is a100-padding "$bad" 0
# a100 is calibrated (models/README.md, "GPU profiles"): no warning in its own mode
is a100-no-warning "$(grep -c 'warning: hardware a100' "$T/stderr")" 0
# an uncalibrated GPU profile: one warning saying so
sed 's/"calibrated":[[:space:]]*true/"calibrated": false/' "$(dirname "$0")/../models/data/a100.json" > "$T/a100u.json"
expect_exit 0 a100-uncalibrated "$BUCKETSIM" run --set "hardware=$T/a100u.json" "${SMALL[@]}"
n=$(grep -c 'warning: hardware .*a100u.json: its profile is not calibrated' "$T/stderr")
is a100-uncalibrated-one-warning "$n" 1

# Gaudi bucketing keys are not read by cuda_graphs: a warning, an error under --strict
expect_exit 0 a100-bucketing-unread "$BUCKETSIM" run --set hardware=a100 --set bucketing.strategy=linear \
	"${SMALL[@]}" -o "$T/au"
expect_stderr a100-bucketing-unread-msg "field 'bucketing.strategy': set but never read: the execution mode pads to CUDA-graph capture sizes"
expect_exit 3 a100-bucketing-strict "$BUCKETSIM" run --strict --set hardware=a100 \
	--set bucketing.strategy=linear "${SMALL[@]}" -o "$T/x7"

# a Gaudi mode on GPU hardware: one warning saying so
expect_exit 0 a100-gaudi-mode "$BUCKETSIM" run --set hardware=a100 \
	--set server.execution_mode=hpu_graphs "${SMALL[@]}" -o "$T/ag"
is a100-gaudi-one-warning "$(grep -c 'warning: hardware a100' "$T/stderr")" 1
expect_stderr a100-gaudi-warning 'warning: hardware a100: it runs Gaudi semantics'
is a100-gaudi-block "$(c ag server.block_size)" 128

# Gaudi: auto follows the version and PT_HPU_LAZY_MODE; no warning, no capture
expect_exit 0 gaudi-default "$BUCKETSIM" run "${SMALL[@]}" -o "$T/g"
is gaudi-default-mode "$(c g server.execution_mode)" hpu_compile
is gaudi-default-block "$(c g server.block_size)" 128
is gaudi-no-captures "$(m g cuda_graph_captures)" 0
is gaudi-no-warning "$(grep -c warning "$T/stderr")" 0
if [ "$(m g compiles_warmup)" -gt 0 ]; then ok gaudi-compiles; else fail gaudi-compiles "no warm-up compile"; fi
expect_exit 0 gaudi-lazy "$BUCKETSIM" run --env PT_HPU_LAZY_MODE=1 "${SMALL[@]}" -o "$T/gl"
is gaudi-lazy-mode "$(c gl server.execution_mode)" hpu_graphs
expect_exit 0 gaudi-docs "$BUCKETSIM" run --set bucketing.version=docs "${SMALL[@]}" -o "$T/gd"
is gaudi-docs-mode "$(c gd server.execution_mode)" hpu_graphs
expect_exit 0 gaudi-eager "$BUCKETSIM" run --set server.enforce_eager=true "${SMALL[@]}" -o "$T/ge"
is gaudi-eager-mode "$(c ge server.execution_mode)" hpu_eager
expect_exit 0 gaudi-eager-mode "$BUCKETSIM" run --set server.execution_mode=hpu_eager "${SMALL[@]}" -o "$T/gm"
is gaudi-eager-implies "$(c gm server.enforce_eager)" true
# lazy, eager and compile modes run the same passes here (no prompt above the capture size):
# the eager host time makes every step of hpu_eager longer
if awk -v a="$(m gm mean_tpot_ms)" -v b="$(m gl mean_tpot_ms)" 'BEGIN { exit !(a > b) }'; then
	ok gaudi-eager-slower; else fail gaudi-eager-slower "hpu_eager not slower than hpu_graphs"; fi

# conflicts and bad values
expect_exit 3 mode-lazy-conflict "$BUCKETSIM" run --env PT_HPU_LAZY_MODE=0 \
	--set server.execution_mode=hpu_graphs "${SMALL[@]}" -o "$T/x1"
expect_stderr mode-lazy-conflict-msg 'PT_HPU_LAZY_MODE.*hpu_graphs runs PT_HPU_LAZY_MODE=1'
expect_exit 3 mode-eager-conflict "$BUCKETSIM" run --set server.enforce_eager=true \
	--set server.execution_mode=hpu_compile "${SMALL[@]}" -o "$T/x2"
expect_stderr mode-eager-conflict-msg "server.enforce_eager.*hpu_eager"
expect_exit 2 mode-unknown "$BUCKETSIM" run --set server.execution_mode=tpu "${SMALL[@]}" -o "$T/x3"
# the registered modes, as the binary lists them (a new mode adds to the list: no edit here)
valid=$("$BUCKETSIM" list policies | awk '/^mode /{f = 1; next} /^[a-z]/{f = 0} f {printf "%s%s", sep, $1; sep = ", "}')
case ", $valid, " in *", hpu_graphs, "*) case ", $valid, " in *", cuda_graphs, "*) ok mode-list ;; *) fail mode-list "$valid" ;; esac ;; *) fail mode-list "$valid" ;; esac
expect_stderr mode-unknown-lists "unknown mode 'tpu'; valid: $valid\$"
expect_exit 3 mode-gpu-contiguous "$BUCKETSIM" run --set hardware=a100 --set server.contiguous_pa=true \
	"${SMALL[@]}" -o "$T/x4"
expect_stderr mode-gpu-contiguous-msg 'server.contiguous_pa.*block tables'
for d in x1 x2 x3 x4; do
	if [ -e "$T/$d" ]; then fail "no-output-$d" "output written on error"; else ok "no-output-$d"; fi
done

# contiguous PA turns prefix caching off, as vllm-gaudi's platform does (check_and_update_config)
expect_exit 0 cpa-no-prefix-caching "$BUCKETSIM" run --set server.contiguous_pa=true "${SMALL[@]}" -o "$T/cp"
is cpa-prefix-caching-off "$(c cp server.prefix_caching)" false
expect_exit 0 cpa-env-no-prefix-caching "$BUCKETSIM" run --env VLLM_CONTIGUOUS_PA=true "${SMALL[@]}" -o "$T/ce"
is cpa-env-prefix-caching-off "$(c ce server.prefix_caching)" false
expect_exit 0 no-cpa-prefix-caching "$BUCKETSIM" run "${SMALL[@]}" -o "$T/nc"
is no-cpa-prefix-caching-on "$(c nc server.prefix_caching)" true
expect_exit 3 cpa-and-prefix-caching "$BUCKETSIM" run --set server.contiguous_pa=true \
	--set server.prefix_caching=true "${SMALL[@]}" -o "$T/x5"
expect_stderr cpa-and-prefix-caching-msg "field 'server.prefix_caching': true, but contiguous PA \(server.contiguous_pa\) turns prefix caching off: vllm-gaudi's platform"
expect_exit 3 cpa-env-and-prefix-caching "$BUCKETSIM" run --env VLLM_CONTIGUOUS_PA=1 \
	--set server.prefix_caching=true "${SMALL[@]}" -o "$T/x6"
expect_stderr cpa-env-and-prefix-caching-msg 'contiguous PA \(VLLM_CONTIGUOUS_PA\)'
for d in x5 x6; do
	if [ -e "$T/$d" ]; then fail "no-output-$d" "output written on error"; else ok "no-output-$d"; fi
done

# the registry: list policies and list keys name the family and its members
"$BUCKETSIM" list policies >"$T/lp" 2>&1
for mode in hpu_graphs hpu_compile hpu_eager cuda_graphs; do
	if grep -q "$mode" "$T/lp"; then ok "list-$mode"; else fail "list-$mode" "not listed"; fi
done
"$BUCKETSIM" list keys >"$T/lk" 2>&1
if grep -q 'server.execution_mode' "$T/lk"; then ok list-keys-mode; else fail list-keys-mode "not listed"; fi
# The readable summary names the mode that ran; under cuda_graphs it reports the captures and
# names no Gaudi bucketing (nothing pads to a bucket), on Gaudi the bucketing and compiles.
"$BUCKETSIM" run --set hardware=a100 "${SMALL[@]}" > "$T/human-gpu.txt" 2>/dev/null
grep -q '^  llama-3.1-8b on a100 (tp 1), cuda_graphs, max_num_seqs 256,' "$T/human-gpu.txt" && ok human-gpu-mode || fail human-gpu-mode "$(sed -n 2p "$T/human-gpu.txt")"
grep -q '^graphs      86 CUDA graphs captured at start-up (4.9 s), none compiled at run time$' "$T/human-gpu.txt" && ok human-gpu-captures || fail human-gpu-captures "$(grep '^graphs' "$T/human-gpu.txt")"
"$BUCKETSIM" run "${SMALL[@]}" > "$T/human-hpu.txt" 2>/dev/null
grep -q '^  llama-3.1-8b on gaudi2 (tp 1), hpu_compile, bucketing exponential/current, max_num_seqs' "$T/human-hpu.txt" && ok human-hpu-mode || fail human-hpu-mode "$(sed -n 2p "$T/human-hpu.txt")"
grep -q '^graphs      [0-9]* compiled at warm-up' "$T/human-hpu.txt" && ok human-hpu-compiles || fail human-hpu-compiles "$(grep '^graphs' "$T/human-hpu.txt")"
e2e_done
