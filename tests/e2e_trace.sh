#!/usr/bin/env bash
# End-to-end: reading a large CSV trace from a file (read in blocks as it is parsed, in two parts
# on two threads above 256 KiB).  The same rows written with LF or CRLF line ends, with quoted
# notes that hold newlines and commas, and with blank lines between records give the same
# requests.csv; errors placed at known lines of the first and the second half are reported on
# those lines (counted here by the script that placed them).
. "$(dirname "$0")/e2e_lib.sh"
T=$E2E_TMP
# 20000 rows (about 700 KiB, above the two-part threshold).
expect_exit 0 synth "$BUCKETSIM" trace synth --trace alpaca --set workload.lengths=empirical \
	--set workload.num_requests=20000 --set workload.arrival=poisson --set workload.rate=20 \
	--seed 5 -o "$T/lf.csv"
rows=$(($(wc -l <"$T/lf.csv") - 1))
[ "$rows" -eq 20000 ] && ok rows || fail rows "$rows rows, expected 20000"
# The same records: CRLF line ends, a note column (quoted, with a newline, a comma and a doubled
# quote on one row in five), a blank line after one record in seven.
awk 'NR == 1 { printf "%s,note\r\n", $0; next }
     { printf "%s,%s\r\n", $0, (NR % 5 ? "x" : "\"two\nlines, \"\"q\"\"\"") }
     NR % 7 == 0 { printf "\r\n" }' "$T/lf.csv" >"$T/crlf.csv"
[ "$(wc -c <"$T/crlf.csv")" -gt 262144 ] && ok crlf-size || fail crlf-size "below 256 KiB"
run() { "$BUCKETSIM" run --trace "$1" -o "$2" --no-batches -q; }
expect_exit 0 run-lf run "$T/lf.csv" "$T/o_lf"
expect_exit 0 run-crlf run "$T/crlf.csv" "$T/o_crlf"
cmp -s "$T/o_lf/requests.csv" "$T/o_crlf/requests.csv" && ok same-requests ||
	fail same-requests "requests.csv differs between the LF and the CRLF/quoted file"
n=$(($(wc -l <"$T/o_lf/requests.csv") - 1))
[ "$n" -eq 20000 ] && ok requests-rows || fail requests-rows "$n rows in requests.csv"

# bad_at FILE LINE TEXT: FILE with its physical line LINE replaced by TEXT.
bad_at() { awk -v l="$2" -v t="$3" 'NR == l { print t; next } { print }' "$T/lf.csv" >"$1"; }
# A line in the second half (line 15001 of 20001), then one in each half: the first is reported.
bad_at "$T/late.csv" 15001 "1.0,12,3,0,online,-1,0"
expect_exit 3 late run "$T/late.csv" "$T/o_late"
expect_stderr late-line "late\\.csv:15001: field 'arrival_time_s': 1 s is earlier than"
bad_at "$T/two.csv" 15001 "1.0,12,x,0,online,-1,0"
awk 'NR == 101 { print "1,2"; next } { print }' "$T/two.csv" >"$T/both.csv"
expect_exit 3 both run "$T/both.csv" "$T/o_both"
expect_stderr both-first "both\\.csv:101: expected 7 fields as in the header, got 2"
# The second half alone bad, in the CRLF file: its line counted with the blank lines and the
# quoted notes' lines.
awk 'NR >= 15001 && !done && sub(/,online,/, ",onlin,") { done = 1 } { print }' \
	"$T/crlf.csv" >"$T/crlf_bad.csv"
line=$(awk '/onlin,/ && !/online/ { print NR; exit }' "$T/crlf_bad.csv")
expect_exit 3 crlf-late run "$T/crlf_bad.csv" "$T/o_crlf_bad"
expect_stderr crlf-late-line "crlf_bad\\.csv:$line: field 'task': expected 'online' or 'offline', got 'onlin'"
# A UTF-8 byte-order mark before a quoted first name, from a file and from a pipe.
printf '\357\273\277"prompt_tokens",output_tokens\n5,1\n7,2\n' >"$T/bomq.csv"
expect_exit 0 bom-quoted run "$T/bomq.csv" "$T/o_bomq"
expect_exit 0 bom-quoted-pipe bash -c "cat '$T/bomq.csv' | '$BUCKETSIM' run --trace /dev/stdin -o '$T/o_bomq2' --no-batches -q"
[ "$(($(wc -l <"$T/o_bomq2/requests.csv" 2>/dev/null) - 1))" -eq 2 ] && ok bom-quoted-rows || fail bom-quoted-rows "not 2 requests"
# ... and before a JSON array (it was "expected a JSON object"); JSON Lines took it already.
printf '\357\273\277[{"prompt_tokens": 5, "output_tokens": 1},\n {"prompt_tokens": 7, "output_tokens": 2}]\n' >"$T/bom.json"
expect_exit 0 bom-json-array run "$T/bom.json" "$T/o_bomj"
[ "$(($(wc -l <"$T/o_bomj/requests.csv" 2>/dev/null) - 1))" -eq 2 ] && ok bom-json-array-rows || fail bom-json-array-rows "not 2 requests"
# An output that exists and is not a regular file (a device, /dev/stdout, a FIFO) is written in
# place: a temporary renamed onto it replaced it with a regular file (as root, /dev/null).
mkfifo "$T/fifo"
( timeout 10 cat "$T/fifo" > "$T/fifo.out" ) & # bounded: the old code never opened it
reader=$!
expect_exit 0 synth-fifo "$BUCKETSIM" trace synth --trace alpaca --set workload.num_requests=7 -o "$T/fifo"
wait "$reader"
[ -p "$T/fifo" ] && [ "$(wc -l < "$T/fifo.out")" -eq 8 ] && ok synth-fifo-kept || fail synth-fifo-kept "$(ls -l "$T/fifo"; wc -l < "$T/fifo.out")"
# A link to the standard output (as /dev/stdout is), made here so that a regression replaces
# only this link, never the system's /dev/stdout.
ln -s /proc/self/fd/1 "$T/stdout-link"
[ "$("$BUCKETSIM" trace synth --trace alpaca --set workload.num_requests=3 -o "$T/stdout-link" | wc -l)" -eq 4 ] \
	&& [ -L "$T/stdout-link" ] && ok synth-stdout-link || fail synth-stdout-link "not 4 lines on the standard output, or the link replaced"
# A link to a regular file: the file is replaced, the link kept (the link was replaced by a file).
echo old > "$T/link-target.csv"
ln -s "$T/link-target.csv" "$T/link.csv"
expect_exit 0 synth-link "$BUCKETSIM" trace synth --trace alpaca --set workload.num_requests=3 -o "$T/link.csv"
[ -L "$T/link.csv" ] && [ "$(wc -l < "$T/link-target.csv")" -eq 4 ] && ok synth-link-kept || fail synth-link-kept "$(ls -l "$T/link.csv" "$T/link-target.csv")"
expect_exit 2 synth-to-dir "$BUCKETSIM" trace synth --trace alpaca --set workload.num_requests=3 -o "$T"
expect_stderr synth-to-dir-msg "is a directory, not a file"
# A FIFO as the trace is read from the descriptor opened to look at it: the reader closed it and
# opened it again by name, and when the writer had written everything and gone before that close
# the bytes were lost and the second open waited for ever for a writer (about one try in two).
# Ten tries each of CSV and JSON Lines, each bounded by 3 s; every one must give the 2 requests.
fifo_ok=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	for ext in csv jsonl; do
		rm -f "$T/in.$ext"; mkfifo "$T/in.$ext"
		if [ $ext = csv ]; then
			(printf 'prompt_tokens,output_tokens\n10,5\n12,6\n' > "$T/in.$ext" &)
		else
			(printf '{"prompt_tokens": 10, "output_tokens": 5}\n{"prompt_tokens": 12, "output_tokens": 6}\n' > "$T/in.$ext" &)
		fi
		timeout 3 "$BUCKETSIM" trace stats "$T/in.$ext" > "$T/fifo_stats.txt" 2>&1 &&
			grep -qx 'rows: 2' "$T/fifo_stats.txt" && fifo_ok=$((fifo_ok + 1))
	done
done
rm -f "$T/in.csv" "$T/in.jsonl"
[ "$fifo_ok" -eq 20 ] && ok fifo-trace || fail fifo-trace "$fifo_ok of 20 FIFO reads gave the 2 requests (the rest blocked or failed)"
# Nothing written on an error.
[ ! -e "$T/o_late/requests.csv" ] && [ ! -e "$T/o_both/requests.csv" ] && ok no-output ||
	fail no-output "an output file was written on an error"
# --- vllm bench serve --save-result --save-detailed files as traces (workloads/trace_vllm.c) ---
# A result as main_async() of vllm/benchmarks/serve.py writes it (json.dump of one object): four
# requests, the second failed.  Hand-worked: the three others, prompts 10 30 40, outputs 5 7 9,
# sent at 0, 0.5 and 2 s (start_times 1000.5, 1001, 1002.5 made relative to the earliest).
python3 - "$T" <<'PY'
import json, sys
r = {"date": "20261128-120000", "endpoint_type": "vllm", "backend": "vllm", "label": None,
     "model_id": "meta-llama/Llama-3.1-8B-Instruct", "tokenizer_id": "meta-llama/Llama-3.1-8B-Instruct",
     "num_prompts": 4, "request_rate": 2.0, "burstiness": 1.0, "max_concurrency": None,
     "duration": 3.1, "completed": 3, "failed": 1, "total_input_tokens": 80, "total_output_tokens": 21,
     "request_throughput": 0.97, "request_goodput": None, "output_throughput": 6.8,
     "total_token_throughput": 32.6, "input_lens": [10, 20, 30, 40], "output_lens": [5, 0, 7, 9],
     "ttfts": [0.02, 0.0, 0.03, 0.02], "itls": [[0.01] * 4, [], [0.01] * 6, [0.01] * 8],
     "latencies": [0.06, 0.0, 0.09, 0.1], "start_times": [1000.5, 1000.75, 1001.0, 1002.5],
     "queue_times": [0.0] * 4, "generated_texts": ["a", "", "b", "c"],
     "errors": ["", "Traceback: timeout", "", ""], "max_output_tokens_per_s": 9.0,
     "max_concurrent_requests": 1, "rtfx": 0.0, "mean_ttft_ms": 23.3}
t = sys.argv[1]
json.dump(r, open(t + "/vb.json", "w"))
def bad(name, **ch):
    d = dict(r)
    for k, v in ch.items():
        if v is None:
            d.pop(k)
        else:
            d[k] = v
    json.dump(d, open(t + "/vb_" + name + ".json", "w"))
bad("summary", input_lens=None, output_lens=None, start_times=None, errors=None, ttfts=None,
    itls=None, latencies=None, generated_texts=None)
bad("len", output_lens=[5, 0, 7])
bad("str", input_lens=[10, 20, "x", 40])
bad("zero", input_lens=[10, 20, 0, 40])
bad("count", completed=4)
bad("errtype", errors=["", 5, "", ""])
bad("back", start_times=[1000.5, 1000.75, 1001.0, 1000.9])
open(t + "/vb_two.json", "w").write(json.dumps(r) + "\n" + json.dumps(r) + "\n")
PY
expect_exit 0 vllm-result-run "$BUCKETSIM" run --trace "$T/vb.json" -o "$T/vb"
[ "$(cut -d, -f2,6,7 "$T/vb/requests.csv" | tr '\n' ' ')" = "arrival_s,prompt_tokens,output_tokens 0.000000000,10,5 0.500000000,30,7 2.000000000,40,9 " ] \
	&& ok vllm-result-rows || fail vllm-result-rows "$(cut -d, -f2,6,7 "$T/vb/requests.csv")"
expect_stderr vllm-result-failed-warn "warning: $T/vb.json: 1 of the benchmark's 4 requests failed \(errors\): left out of the trace"
for c in "summary|field 'input_lens': missing: a vllm bench serve result keeps its requests' lists only with --save-detailed" \
	"len|field 'output_lens': 3 elements, but input_lens has 4" \
	"str|field 'input_lens\[2\]': expected a number, got '\"x\"'" \
	"zero|field 'input_lens\[2\]': expected a positive integer, got '0'" \
	"count|field 'completed': 4 completed and 1 failed requests, but the lists hold 4" \
	"errtype|field 'errors\[1\]': expected a string" \
	"back|field 'start_times\[3\]': 1000.9 s is earlier than the previous record's 1001 s" \
	"two|2: text after the vllm bench serve result \(a file of several, as --append-result writes, is not a trace"; do
	n=${c%%|*}
	expect_exit 3 "vllm-result-$n" "$BUCKETSIM" run --trace "$T/vb_$n.json" -o "$T/vb_$n"
	expect_stderr "vllm-result-$n-msg" "^bucketsim: error: $T/vb_$n.json: ?${c#*|}"
	[ ! -e "$T/vb_$n" ] && ok "vllm-result-$n-nothing" || fail "vllm-result-$n-nothing" "$(ls "$T/vb_$n")"
done
# timestamps that go backwards are sorted on request, as for any trace
expect_exit 0 vllm-result-sorted "$BUCKETSIM" run --trace "$T/vb_back.json" --set workload.sort_arrivals=true -o "$T/vbs"
[ "$(cut -d, -f2,6 "$T/vbs/requests.csv" | tr '\n' ' ')" = "arrival_s,prompt_tokens 0.000000000,10 0.400000000,40 0.500000000,30 " ] \
	&& ok vllm-result-sorted-rows || fail vllm-result-sorted-rows "$(cat "$T/vbs/requests.csv")"

e2e_done
