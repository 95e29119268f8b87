# Shared by the study scripts (analysis/pipeline.sh, analysis/reproduce_bucketserve.sh,
# analysis/online_gap.sh): their command line, `[--quick] [-o OUTDIR] [BUCKETSIM]`.  Source it, then call
#   study_args NAME HELP_LAST_LINE DEFAULT_OUT QUICK_OUT "$@"
# which sets QUICK (0/1), OUT (created), BIN (checked executable) and TMP (a temporary
# directory removed on exit).  NAME prefixes the messages; --help prints the script's header
# comment, lines 2 to HELP_LAST_LINE.  Usage errors exit 2.
study_args() {
	local name=$1 help_last=$2 def_out=$3 quick_out=$4 script=$0
	shift 4
	QUICK=0
	OUT=
	BIN=
	while [ $# -gt 0 ]; do
		case "$1" in
		--quick) QUICK=1 ;;
		-o) [ $# -ge 2 ] || { echo "$name: -o needs a directory" >&2; exit 2; }
		    OUT=$2; shift ;;
		-o*) OUT=${1#-o} ;;
		-h|--help) sed -n "2,${help_last}p" "$script" | sed 's/^# \{0,1\}//'; exit 0 ;;
		-*) echo "$name: unknown option '$1'" >&2; exit 2 ;;
		*) [ -z "$BIN" ] || { echo "$name: one binary only" >&2; exit 2; }
		   BIN=$1 ;;
		esac
		shift
	done
	local here
	here=$(cd "$(dirname "$script")" && pwd)
	[ -n "$BIN" ] || BIN=$here/../build/bucketsim
	[ -n "$OUT" ] || { [ $QUICK = 1 ] && OUT=$quick_out || OUT=$def_out; }
	[ -x "$BIN" ] || { echo "$name: no executable bucketsim at '$BIN' (run make)" >&2; exit 2; }
	mkdir -p "$OUT"
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
	trap 'rm -rf "$TMP"' EXIT
}

# study_metrics NAME CMD...: runs CMD (a `bucketsim run ... --json`) and prints its summary's
# scalar metrics, one "key value" line each; a failed run prints its command and error and
# exits 1.  study_get KEY < metrics prints KEY's value, or nan.
study_metrics() {
	local name=$1
	shift
	if ! "$@" >"$TMP/out.json" 2>"$TMP/err.txt"; then
		echo "$name: run failed: $*" >&2
		cat "$TMP/err.txt" >&2
		exit 1
	fi
	awk '/"metrics"/ { m = 1; next }
	     m && /^[ \t]*"[a-z_0-9]+":[ \t]*[-0-9.eE+null]+,?[ \t]*$/ {
		k = $1; gsub(/[":]/, "", k); v = $2; sub(/,$/, "", v); print k, v }' "$TMP/out.json"
}
study_get() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print "nan" }'; }

# study_testbed NAME "ALLOWED" ARGS...: takes `--testbed T` (or `--testbed=T`) out of ARGS:
# sets TESTBED (gaudi2 when not given) and ARGS (the array of the other arguments, for
# study_args).  A missing value or a testbed not in ALLOWED (space-separated) is a usage error
# (exit 2).
study_testbed() {
	local name=$1 allowed=$2 list
	shift 2
	list=${allowed// /, }
	TESTBED=gaudi2
	ARGS=()
	while [ $# -gt 0 ]; do
		case "$1" in
		--testbed) [ $# -ge 2 ] || { echo "$name: --testbed needs one of $list" >&2; exit 2; }
			   TESTBED=$2; shift ;;
		--testbed=*) TESTBED=${1#--testbed=} ;;
		*) ARGS+=("$1") ;;
		esac
		shift
	done
	case " $allowed " in
	*" $TESTBED "*) ;;
	*) echo "$name: unknown testbed '$TESTBED' ($list)" >&2; exit 2 ;;
	esac
}

# study_hardware NAME: after study_args, the bucketsim options of $TESTBED in the array HW and
# a one-line description in HWDESC.  gaudi2, gaudi3: the Gaudi card with vllm-gaudi's buckets and
# compiles.  a100: the BucketServe paper's testbed, A100 SXM4 40 GB (profile a100-40gb) without
# Gaudi's buckets and compiles: the disaggregated systems cannot run under the GPU execution
# mode (cuda_graphs is modelled colocated only), so every system runs the Gaudi pass structure
# at its real shape (bucketing.strategy=none: a prefill batch is exactly N x S_max, Eq. 1), at
# no compile cost (a GPU runs a new shape without compiling); the profile with its compile terms
# set to 0 is written to $OUT/a100-40gb-nocompile.json.
study_hardware() {
	local name=$1 src
	case "$TESTBED" in
	a100)
		src=$(cd "$(dirname "$0")/.." && pwd)/models/data/a100-40gb.json
		[ -r "$src" ] || { echo "$name: no profile $src" >&2; exit 2; }
		sed -e 's/"compile_c0_s":[^,]*/"compile_c0_s": 0/' \
		    -e 's/"compile_c1_ms_per_token":[^,]*/"compile_c1_ms_per_token": 0/' \
		    -e 's/"runtime_penalty_s":[^,]*/"runtime_penalty_s": 0/' "$src" >"$OUT/a100-40gb-nocompile.json"
		HW=(--set hardware="$OUT/a100-40gb-nocompile.json" --set server.execution_mode=hpu_compile
		    --set bucketing.strategy=none)
		HWDESC="A100 SXM4 40 GB (a100-40gb profile, passes at their own shape, no compile cost)" ;;
	*)	HW=(--set hardware=$TESTBED)
		HWDESC="$TESTBED (vllm-gaudi buckets, compiles)" ;;
	esac
}
