#!/bin/sh
# Cross-check of bucketsim's bucket lists (bucketing.version=current) against vllm-gaudi's own
# bucketing Python on N random configurations (not part of `make check`: it needs an export of
# upstream, see tests/README.md, "Cross-check against upstream").
#
#   tests/upstream_buckets.sh UPSTREAM_DIR [N] [SEED]
#
# UPSTREAM_DIR holds vllm_gaudi/extension of vllm-gaudi main (UPSTREAM_VERSION=docs: instead
# vllm_hpu_extension of the July 2025 extension, compared with bucketing.version=docs).
# UPSTREAM_UNIFIED_DIR, when set, holds the vllm_gaudi/extension export of the commit whose
# unified bucketing the version reproduces; unified configurations are then drawn too.
# BUCKETSIM names the binary (default build/bucketsim).  The draws are settings a user could give
# bucketsim, but for a small share with one deliberate conflict, which bucketsim must refuse
# with the rule's message ("refused by design").  Prints one line per mismatch with a
# reproducer and a summary per strategy and phase; exits 1 on any mismatch.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 UPSTREAM_DIR [N] [SEED]" >&2; exit 2; }
UP=$1
N=${2:-1000}
SEED=${3:-1}
here=$(dirname "$0")
BUCKETSIM=${BUCKETSIM:-build/bucketsim}
[ -f "$UP/vllm_gaudi/extension/bucketing/common.py" ] || [ -f "$UP/vllm_hpu_extension/bucketing/common.py" ] || {
	echo "$0: $UP/vllm_gaudi/extension/bucketing/common.py not found (export upstream first:" \
	     "git -C VLLM_GAUDI archive HEAD vllm_gaudi/extension | tar -x -C $UP)" >&2; exit 2; }
[ -x "$BUCKETSIM" ] || { echo "$0: $BUCKETSIM not built (make all)" >&2; exit 2; }
# the exports are read, never written (no __pycache__ in them)
export PYTHONDONTWRITEBYTECODE=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
set -- "$UP" "$BUCKETSIM" "$N" "$SEED" --workdir "$work"
[ -n "${UPSTREAM_VERSION:-}" ] && set -- "$@" --version "$UPSTREAM_VERSION"
[ -n "${UPSTREAM_UNIFIED_DIR:-}" ] && set -- "$@" --unified-dir "$UPSTREAM_UNIFIED_DIR"
python3 "$here/upstream_buckets.py" compare "$@"
