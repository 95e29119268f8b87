#!/usr/bin/env bash
# End-to-end: inputs that never end.  Every file reader stops on /dev/zero at once (its first
# byte is a NUL, reported at line 1), a file read whole stops at 64 MiB, a trace or calibration
# line at 16 MiB (a pipe without a newline), and a NUL far into a large sparse trace is found
# without the rest being read.  Each command runs under a timeout: a reader that does not stop
# fails its case instead of hanging the suite.
. "$(dirname "$0")/e2e_lib.sh"
B=$BUCKETSIM
T=$E2E_TMP
lim() { timeout 20 "$@"; }

lim_case() { # NAME PATTERN CMD...: exit 3, stderr matches PATTERN, one line
	local name=$1 pat=$2; shift 2
	expect_exit 3 "$name" lim "$@"
	expect_stderr "$name-msg" "$pat"
	[ "$(wc -l <"$E2E_TMP/stderr")" -eq 1 ] && ok "$name-one-line" ||
		fail "$name-one-line" "$(head -c 300 "$E2E_TMP/stderr")"
}

lim_case zero-config '^bucketsim: error: /dev/zero:1: NUL byte in the file$' \
	"$B" validate -c /dev/zero
lim_case zero-trace '^bucketsim: error: /dev/zero:1: NUL byte in the header$' \
	"$B" run --trace /dev/zero -q -o "$T/o"
lim_case zero-hardware "^bucketsim: error: /dev/zero:1: field 'hardware': NUL byte in the file$" \
	"$B" run --set hardware=/dev/zero -q -o "$T/o"
lim_case zero-bucket-file '^bucketsim: error: /dev/zero:1: NUL byte in the file$' \
	"$B" run --set bucketing.strategy=file --set bucketing.file=/dev/zero -q -o "$T/o"
lim_case zero-bucket-env '^bucketsim: error: /dev/zero:1: NUL byte in the file$' \
	"$B" run --env VLLM_BUCKETING_FROM_FILE=/dev/zero -q -o "$T/o"
lim_case zero-mix '^bucketsim: error: /dev/zero:1: NUL byte in the header$' \
	"$B" run --set workload.mix=alpaca:1,/dev/zero:1 -q -o "$T/o"
lim_case zero-output-trace '^bucketsim: error: /dev/zero:1: NUL byte in the header$' \
	"$B" run --trace alpaca --set workload.output_trace=/dev/zero -q -o "$T/o"
lim_case zero-calibrate "^bucketsim: error: /dev/zero:1: field 'source': NUL byte in the value$" \
	"$B" calibrate --data /dev/zero --hardware gaudi2 -o "$T/p.json"
lim_case zero-sweep-points '^bucketsim: error: /dev/zero:1: NUL byte in the file$' \
	"$B" sweep -f /dev/zero -o "$T/sw"
[ ! -e "$T/o" ] && [ ! -e "$T/p.json" ] && ok zero-nothing-written ||
	fail zero-nothing-written "$(ls "$T")"

# Endless streams without a NUL: a file read whole stops past 64 MiB, a line past 16 MiB.
lim_case endless-config '^bucketsim: error: /dev/stdin: larger than 64 MiB, the limit of a file read whole' \
	bash -c "yes | $B validate -c /dev/stdin"
lim_case endless-trace-line '^bucketsim: error: /dev/stdin:1: line longer than the limit of 16 MiB$' \
	bash -c "yes | tr -d '\\n' | $B run --trace /dev/stdin -q -o $T/o"
lim_case endless-trace-header '^bucketsim: error: /dev/stdin:2: line longer than the limit of 16 MiB$' \
	bash -c "{ echo prompt_tokens,output_tokens; yes 1, | tr -d '\\n'; } | $B run --trace /dev/stdin -q -o $T/o"
lim_case endless-calib-line '^bucketsim: error: /dev/stdin:1: line longer than the limit of 16 MiB$' \
	bash -c "yes | tr -d '\\n' | $B calibrate --data /dev/stdin --hardware gaudi2 -o $T/p.json"

# Regular files: a 10 GiB sparse trace (NULs from its 3rd line) is refused at once, as is a
# record over 16 MiB (a long ignored text column).
printf 'prompt_tokens,output_tokens\n5,1\n' >"$T/sparse.csv"
truncate -s 10G "$T/sparse.csv"
lim_case sparse-trace "^bucketsim: error: $T/sparse\\.csv:3: field 'prompt_tokens': NUL byte in the value$" \
	"$B" run --trace "$T/sparse.csv" -q -o "$T/o"
rm -f "$T/sparse.csv"
{ echo prompt_tokens,output_tokens,text; echo 5,1,a; printf '5,1,'; head -c 17000000 /dev/zero | tr '\0' x; echo; } >"$T/long.csv"
lim_case long-record "^bucketsim: error: $T/long\\.csv:3: record longer than the limit of 16 MiB$" \
	"$B" run --trace "$T/long.csv" -q -o "$T/o"
# JSON Lines: a NUL is an error at its column (cJSON would skip it as a blank).
printf '{"prompt_tokens": 5, "output_tokens": 1}\n{"prompt_tokens": 5, "output_tokens":\0001}\n' >"$T/nul.jsonl"
lim_case jsonl-nul "^bucketsim: error: $T/nul\\.jsonl:2: NUL byte at column 38$" \
	"$B" run --trace "$T/nul.jsonl" -q -o "$T/o"
# "\u0000" in a JSON string: cJSON decodes it into a NUL that cut the value or the name there
# (a mix "alpaca:1\u0000,longbench:1" ran alpaca alone, "max_num_seqs\u0000x" set
# max_num_seqs); every JSON reader refuses it with its line.  An escaped backslash before "u0000"
# is text, not the escape.
M='\u0000 (a NUL character) in a string: it would cut the text there'
printf '{"workload":\n {"mix": "alpaca:1\\u0000,longbench:1"}}\n' > "$T/u0.json"
lim_case u0000-config "^bucketsim: error: $T/u0\.json:2: $(printf '%s' "$M" | sed 's/[\\()]/\\&/g')\$" "$B" validate -c "$T/u0.json"
printf '{"server": {"max_num_seqs\\u0000x": 8}}\n' > "$T/u0k.json"
expect_exit 3 u0000-config-key "$B" validate -c "$T/u0k.json"
printf '{"workload": {"mix": "a\\\\u0000"}}\n' > "$T/u0esc.json"
"$B" validate -c "$T/u0esc.json" 2> "$T/u0esc.err"
grep -q "field 'workload.mix': entry 1 ('a\\\\u0000'): no such file" "$T/u0esc.err" && ! grep -q 'NUL character' "$T/u0esc.err" && ok u0000-escaped-backslash || fail u0000-escaped-backslash "$(cat "$T/u0esc.err")"
printf '{"prompt_tokens": 5, "output_tokens": 1}\n{"prompt_tokens": 5, "output_tokens": 1, "task": "online\\u0000x"}\n' > "$T/u0.jsonl"
lim_case u0000-jsonl "^bucketsim: error: $T/u0\.jsonl:2: .*NUL character.* \(column 57\)\$" "$B" run --trace "$T/u0.jsonl" -q -o "$T/o"
expect_exit 2 u0000-axis "$B" sweep --axis 'workload.mix=["alpaca:1\u0000x"]'
expect_stderr u0000-axis-msg "field 'workload.mix': .*NUL character"
python3 - "$(dirname "$0")/../models/data/gaudi2.json" "$T/u0hw.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["description"] = "x\u0000y"
json.dump(d, open(sys.argv[2], "w"), indent=1)
PY
expect_exit 3 u0000-hardware "$B" validate --set "hardware=$T/u0hw.json"
expect_stderr u0000-hardware-msg "u0hw.json:[0-9]+: field 'hardware': .*NUL character"
e2e_done
