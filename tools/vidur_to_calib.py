#!/usr/bin/env python3
"""Vidur's public GPU operator profiles as `bucketsim calibrate` rows.

Two steps, standard library only (csv):

  extract   copies the rows of microsoft/vidur's profiling CSVs that the conversion uses into
            models/data/vidur/ (one CSV per source file, each row with the source commit, path
            and line), reading them from a git directory of microsoft/vidur with `git show`.
            Run once by hand; the committed copies are what `convert` reads.

      tools/vidur_to_calib.py extract --git /path/to/vidur.git --out models/data/vidur

  convert   composes, from those copies, the pass times of the calibration CSV
            (models/data/gpu_measurements.csv, columns as models/data/gaudi_measurements.csv):

      tools/vidur_to_calib.py convert --in models/data/vidur --out models/data/gpu_measurements.csv

Composition (times are Vidur's per-layer medians in ms, summed as Vidur's ExecutionTime does,
vidur/entities/execution_time.py, without its configured constants: no NCCL launch overhead,
no batching-overhead fraction, no CPU overhead):

  ops(T)   = input_layernorm + attn_pre_proj + attn_rope + attn_post_proj
             + post_attention_layernorm + mlp_up_proj + mlp_act + mlp_down_proj + add
             (mlp.csv at num_tokens = T; the embedding is not counted, as Vidur does not)
  ar(T)    = all_reduce median at T x hidden x 2 bytes, linear between the two nearest measured
             sizes (the DGX all_reduce.csv, num_workers = devices_per_node = tp, rank 0);
             0 at tp 1
  linear_forward_latency  (bs 1, input_len T)  = layers x (ops(T) + 2 ar(T))
  prefill_forward_latency (bs 1, input_len C)  = layers x (ops(C) + attn_prefill(kv 0, chunk C)
                                                 + 2 ar(C))
  decode_forward_latency  (bs B, input_len K)  = layers x (ops(B) + attn_decode(B, kv K)
                                                 + 2 ar(B))

Held-out shapes (HELD_* below) are written with "held out" in the notes: calibrate reports them
as checks and never fits them.
"""
import argparse
import csv
import io
import os
import subprocess
import sys

# microsoft/vidur commits: HEAD of the public snapshot (MLP and all-reduce profiles), and the
# older commit that still holds the A100 attention profile (8192 hidden, 64 q / 8 kv heads, TP 2).
HEAD = "7d47513363ec447a741ac5e47241580b47724fbf"
OLD = "e2d00e9afba96cec9f0e7ea560bbfc4a539fae6a"

# (device, Vidur model id, bucketsim model, tensor-parallel degrees of the no-attention rows)
MLP = [
    ("a100", "meta-llama/Llama-2-70b-hf", "llama-2-70b", (1, 2, 4, 8)),
    ("a100", "codellama/CodeLlama-34b-Instruct-hf", "codellama-34b", (1, 2, 4, 8)),
    ("a100", "meta-llama/Meta-Llama-3-70B", "llama-3-70b", (1, 2, 4, 8)),
    ("a100", "meta-llama/Llama-2-7b-hf", "llama-2-7b", (1, 2, 4, 8)),
    ("h100", "meta-llama/Llama-2-70b-hf", "llama-2-70b", (1, 2, 4, 8)),
    ("h100", "codellama/CodeLlama-34b-Instruct-hf", "codellama-34b", (1, 2, 4, 8)),
    ("h100", "meta-llama/Llama-2-7b-hf", "llama-2-7b", (1, 2, 4, 8)),
]
# Models the A100 attention profile fits (hidden 8192, 64 q / 8 kv heads) at TP 2.
ATTN_MODELS = ["llama-2-70b", "codellama-34b", "llama-3-70b"]
# NVSwitch boxes (DGX A100, DGX H100), the topology of the a100 and h100 profiles (switched
# scale-up); the pairwise-NVLink profiles reach a fourth card over PCIe.
NETWORK = {"a100": "a100_dgx", "h100": "h100_dgx"}
HW_LABEL = {"a100": "A100-SXM4-80GB", "h100": "H100-SXM5-80GB"}
LAYERS = {"llama-2-70b": 80, "codellama-34b": 48, "llama-3-70b": 80, "llama-2-7b": 32}
HIDDEN = {"llama-2-70b": 8192, "codellama-34b": 8192, "llama-3-70b": 8192, "llama-2-7b": 4096}

FIT_TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
HELD_TOKENS = [24, 96, 384, 1536, 3072]
FIT_CHUNKS = [64, 128, 256, 512, 1024, 2048, 4096]
HELD_CHUNKS = [96, 384, 768, 1536, 3072]
FIT_DECODE_BS = [1, 2, 4, 8, 16, 32, 64, 128]
FIT_DECODE_KV = [128, 512, 1024, 2048, 4032]
HELD_DECODE_BS = [24, 48, 96]
HELD_DECODE_KV = [256, 1536, 3008]

OPS = ["input_layernorm", "attn_pre_proj", "attn_rope", "attn_post_proj",
       "post_attention_layernorm", "mlp_up_proj", "mlp_act", "mlp_down_proj", "add"]
MLP_KEYS = ["n_head", "n_kv_head", "n_embd", "n_expanded_embd", "vocab_size", "use_gated_mlp",
            "num_tokens", "num_tensor_parallel_workers"]
ATTN_KEYS = ["n_embd", "n_q_head", "n_kv_head", "block_size", "num_tensor_parallel_workers",
             "max_model_len", "batch_size", "prefill_chunk_size", "kv_cache_size", "is_prefill"]
AR_KEYS = ["num_workers", "devices_per_node", "size", "collective"]
PROV = ["vidur_commit", "vidur_path", "vidur_line"]


def git_rows(git, commit, path):
    """Rows of PATH at COMMIT as dicts, each with its CSV line number (header = line 1)."""
    text = subprocess.run(["git", "--git-dir", git, "show", f"{commit}:{path}"], check=True,
                          capture_output=True, text=True).stdout
    out = []
    for i, row in enumerate(csv.DictReader(io.StringIO(text))):
        row["vidur_line"] = str(i + 2)  # no quoted newlines in these files
        out.append(row)
    return out


def write(path, cols, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def extract(args):
    os.makedirs(args.out, exist_ok=True)
    want_tokens = set(FIT_TOKENS + HELD_TOKENS + FIT_CHUNKS + HELD_CHUNKS + FIT_DECODE_BS
                      + HELD_DECODE_BS)
    for dev, vid, name, tps in MLP:
        path = f"data/profiling/compute/{dev}/{vid}/mlp.csv"
        rows = [r for r in git_rows(args.git, HEAD, path)
                if int(r["num_tokens"]) in want_tokens
                and int(r["num_tensor_parallel_workers"]) in tps]
        for r in rows:
            r["vidur_commit"], r["vidur_path"] = HEAD, path
        cols = PROV + MLP_KEYS + [f"time_stats.{o}.median" for o in OPS]
        write(f"{args.out}/{dev}_{name}_mlp.csv", cols, rows)
    for dev, net in NETWORK.items():
        path = f"data/profiling/network/{net}/all_reduce.csv"
        rows = [r for r in git_rows(args.git, HEAD, path)
                if r["collective"] == "all_reduce" and r["num_workers"] == r["devices_per_node"]
                and r["rank"] == "0"]
        # Keep the sizes that bracket the token counts used, for every hidden size.
        keep = set()
        for h in set(HIDDEN.values()):
            for t in want_tokens:
                for tp in (2, 4, 8):
                    near = bracket(rows, tp, t * h * 2)
                    keep.update(id(x) for x in near)
        rows = [r for r in rows if id(r) in keep]
        for r in rows:
            r["vidur_commit"], r["vidur_path"] = HEAD, path
        write(f"{args.out}/{dev}_all_reduce.csv", PROV + AR_KEYS + ["time_stats.all_reduce.median"],
              rows)
    path = "data/profiling/a100/attention.csv"
    rows = git_rows(args.git, OLD, path)
    dec = {(b, k) for b in FIT_DECODE_BS + HELD_DECODE_BS for k in FIT_DECODE_KV + HELD_DECODE_KV}
    keep = []
    for r in rows:
        if r["is_prefill"] == "True" and r["kv_cache_size"] == "0" and \
           int(r["prefill_chunk_size"]) in FIT_CHUNKS + HELD_CHUNKS:
            keep.append(r)
        elif r["is_prefill"] == "False" and (int(r["batch_size"]), int(r["kv_cache_size"])) in dec:
            keep.append(r)
    for r in keep:
        r["vidur_commit"], r["vidur_path"] = OLD, path
    write(f"{args.out}/a100_attention_tp2.csv",
          PROV + ATTN_KEYS + ["time_stats.attn_prefill.median", "time_stats.attn_decode.median"],
          keep)


def bracket(rows, tp, size):
    """The measured all-reduce rows of TP workers just below and above SIZE bytes."""
    cand = sorted(((int(r["size"]), r) for r in rows if int(r["num_workers"]) == tp),
                  key=lambda c: (c[0], int(r_line(c[1]))))
    lo = [c for c in cand if c[0] <= size]
    hi = [c for c in cand if c[0] >= size]
    out = []
    if lo:
        out.append(lo[-1][1])
    if hi:
        out.append(hi[0][1])
    return out


def mean(rows, col):
    """Mean of COL over ROWS: the profile repeats some shapes (identical rows, which Vidur's
    drop_duplicates() merges), so this is the repeated value."""
    return sum(float(r[col]) for r in rows) / len(rows)


def r_line(r):
    return r["vidur_line"]


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def src(rows):
    """Provenance text of the Vidur rows a composed value comes from."""
    by = {}
    for r in rows:
        by.setdefault((r["vidur_commit"][:12], r["vidur_path"]), []).append(r["vidur_line"])
    return "; ".join(f"github microsoft/vidur@{c}:{p} line {','.join(sorted(set(l), key=int))}"
                     for (c, p), l in by.items())


def convert(args):
    d = args.indir
    out = []
    ar = {dev: read(f"{d}/{dev}_all_reduce.csv") for dev in NETWORK}
    attn = read(f"{d}/a100_attention_tp2.csv")

    def allreduce(dev, tp, tokens, hidden):
        if tp == 1:
            return 0.0, []
        size = tokens * hidden * 2
        near = bracket(ar[dev], tp, size)
        if len(near) != 2:
            sys.exit(f"no all-reduce sizes around {size} bytes at tp {tp} ({dev})")
        (s0, t0), (s1, t1) = [(int(r["size"]), float(r["time_stats.all_reduce.median"]))
                              for r in near]
        t = t0 if s1 == s0 else t0 + (t1 - t0) * (size - s0) / (s1 - s0)
        return t, near

    for dev, vid, name, tps in MLP:
        mlp = read(f"{d}/{dev}_{name}_mlp.csv")
        ops = {}
        for r in mlp:
            ops[(int(r["num_tensor_parallel_workers"]), int(r["num_tokens"]))] = r

        def layer(tp, t):
            r = ops[(tp, t)]
            a, used = allreduce(dev, tp, t, HIDDEN[name])
            return sum(float(r[f"time_stats.{o}.median"]) for o in OPS) + 2 * a, [r] + used

        for tp in tps:
            for t in FIT_TOKENS + HELD_TOKENS:
                v, used = layer(tp, t)
                out.append(row(dev, tp, name, t, 0, 1, "linear_forward_latency",
                               LAYERS[name] * v, used, t in HELD_TOKENS,
                               "linear layers, norms, activation and all-reduces of one pass "
                               "(no attention, no LM head)"))
        if dev != "a100" or name not in ATTN_MODELS:
            continue
        for c in FIT_CHUNKS + HELD_CHUNKS:
            a = [r for r in attn if r["is_prefill"] == "True" and int(r["prefill_chunk_size"]) == c]
            if not a:
                sys.exit(f"attention prefill chunk {c}: no row")
            v, used = layer(2, c)
            v += mean(a, "time_stats.attn_prefill.median")
            out.append(row(dev, 2, name, c, 0, 1, "prefill_forward_latency", LAYERS[name] * v,
                           used + a, c in HELD_CHUNKS,
                           "one prefill pass of one prompt without context (attention: "
                           "FlashAttention prefill, block 16)"))
        for b in FIT_DECODE_BS + HELD_DECODE_BS:
            for k in FIT_DECODE_KV + HELD_DECODE_KV:
                held = b in HELD_DECODE_BS or k in HELD_DECODE_KV
                if (b in HELD_DECODE_BS) != (k in HELD_DECODE_KV):
                    continue  # held-out shapes differ from fitted ones in both dimensions
                a = [r for r in attn if r["is_prefill"] == "False" and
                     int(r["batch_size"]) == b and int(r["kv_cache_size"]) == k]
                if not a:
                    sys.exit(f"attention decode bs {b} kv {k}: no row")
                v, used = layer(2, b)
                v += mean(a, "time_stats.attn_decode.median")
                out.append(row(dev, 2, name, k, 0, b, "decode_forward_latency",
                               LAYERS[name] * v, used + a, held,
                               "one decode pass of batch_size sequences with input_len tokens "
                               "of context each (paged attention, block 16)"))
    cols = ["source", "hardware", "cards", "model", "precision", "framework", "input_len",
            "output_len", "batch_size", "metric", "value", "unit", "notes"]
    with open(args.out, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in out:
            w.writerow(r)


def row(dev, tp, model, inp, outp, bs, metric, ms, used, held, what):
    notes = (f"composed from Vidur operator medians (tools/vidur_to_calib.py): {what}"
             + ("; held out" if held else ""))
    return [src(used), HW_LABEL[dev], tp, model, "bf16", "Vidur profiler (vLLM/Sarathi kernels)",
            inp, outp, bs, metric, f"{ms:.4f}", "ms", notes]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("extract")
    e.add_argument("--git", required=True, help="git directory of microsoft/vidur")
    e.add_argument("--out", required=True)
    c = sub.add_parser("convert")
    c.add_argument("--in", dest="indir", required=True)
    c.add_argument("--out", required=True)
    args = ap.parse_args()
    extract(args) if args.cmd == "extract" else convert(args)


if __name__ == "__main__":
    main()
