#!/usr/bin/env bash
# Regenerates the golden files that come from bucketsim's own output (`make update-golden`).
# tests/golden/buckets_seed_docs.log is NOT regenerated: it is copied from the seed document's
# server log and is the independent expected value.
set -eu
cd "$(dirname "$0")/.."
B=${BUCKETSIM:-build/bucketsim}
SEED=(--set server.max_model_len=1024 --set server.max_num_seqs=4 --set server.num_kv_blocks=5781)
"$B" buckets "${SEED[@]}" --set bucketing.version=current > tests/golden/buckets_current.log
"$B" buckets "${SEED[@]}" --set bucketing.version=current --format json \
	--lookup prompt:1,1000,0 --lookup prompt:1,900,0 --lookup decode:3,1,100 \
	> tests/golden/buckets_current_lookups.json
git status --short tests/golden
