#!/usr/bin/env python3
"""Cross-check of bucketsim's warm-up bucket lists against vllm-gaudi's own bucketing code.

Not part of `make check`: it needs an export of upstream's Python (never committed here), see
tests/README.md, "Cross-check against upstream".

  upstream_buckets.py one UPSTREAM_DIR [--set KEY=VALUE]... [--env NAME=VALUE]...
                         [--lookup PHASE:SHAPE]...
      Runs upstream's HPUBucketingManager on one configuration, given with the same --set/--env
      arguments as `bucketsim buckets`, and prints {"prompt": [...], "decode": [...]} (or
      {"unified": [...]}, or {"error": "..."} when upstream raises) as bucketsim's
      --format json spells those keys, and "lookups": the bucket of each look-up in order
      (find_prompt_bucket, find_decode_bucket, find_unified_bucket; a fallback is appended to
      the list and seen by later look-ups).
  upstream_buckets.py compare UPSTREAM_DIR BUCKETSIM N SEED [--version current|docs]
                             [--unified-dir DIR] [--workdir DIR]
      Draws N random configurations and six look-ups each, runs both, prints one line per
      mismatch with a reproducer and a summary of the configurations compared per strategy and
      phase.  The draws are settings a user could give bucketsim (settle()), but for
      CONFLICT_SHARE of them with one deliberate conflict, which bucketsim must refuse with the
      rule's own message (conflicts(): "refused by design"; so is a phase over 10^6 buckets
      when upstream's own list is that long, size_refusal()); any other refusal is a mismatch.

UPSTREAM_DIR holds vllm_gaudi/extension of vllm-gaudi (version current = main), or, with
--version docs, vllm_hpu_extension of the July 2025 extension.  Unified bucketing was removed from
main; --unified-dir holds a vllm_gaudi/extension export that has it (bucketing/unified.py: the
last commit with it for current, the alpha commit for docs), used for unified configurations.

How a bucketsim configuration maps to upstream's inputs (what the runner passes, see
HPUModelRunner.__init__ and warmup_model in vllm_gaudi/v1/worker/hpu_model_runner.py):
  server.max_num_seqs, max_num_batched_tokens, max_model_len, block_size -> initialize();
  server.num_kv_blocks -> manager.num_hpu_blocks (set when the KV cache is allocated, before
  warm-up); server.max_num_prefill_seqs -> the runner's max_prefill_batch_size (which upstream
  takes from VLLM_PROMPT_BS_BUCKET_MAX, default 1; the variable wins here too), max_num_seqs with
  merged prefill; server.merged_prefill -> VLLM_MERGED_PREFILL; server.contiguous_pa ->
  VLLM_CONTIGUOUS_PA (unset when the key is unset); bucketing.strategy -> VLLM_BUCKETING_STRATEGY
  (exp, lin, pad), `file` -> VLLM_BUCKETING_FROM_FILE=bucketing.file, `unified` ->
  VLLM_UNIFIED_ATTN; a variable given with --env wins over the key it stands for.
  server.prefix_caching is vLLM's --enable-prefix-caching, given to the runtime config as
  set_vllm_config does; vllm-gaudi main's runtime config ignores it (its prefix_caching value is
  derived from VLLM_CONTIGUOUS_PA), the July 2025 one derives contiguous PA from it.

Stubs: only what the bucketing modules import and this machine may lack: numpy (float_power is
C pow(), as math.pow; arange of integers is range) and packaging (only used by features that
bucketing never evaluates); for the July 2025 extension also habana_frameworks (device type and
bridge mode, evaluated by its runtime config) and its torch-dependent utils module (the kernel
loaders take only the logger from it).
"""
import json
import math
import os
import random
import subprocess
import sys
import time
import types

STRATEGY_ENV = {"exponential": "exp", "linear": "lin", "padding_aware": "pad"}


def install_stubs():
    try:
        import numpy  # noqa: F401
    except ImportError:
        np = types.ModuleType("numpy")
        np.float_power = lambda a, b: math.pow(float(a), float(b))
        np.arange = lambda start, stop, step=1: range(start, stop, step)   # integer arguments
        sys.modules["numpy"] = np
    try:
        import packaging.version  # noqa: F401
        import packaging.specifiers  # noqa: F401
    except ImportError:
        pk = types.ModuleType("packaging")
        ver = types.ModuleType("packaging.version")
        spec = types.ModuleType("packaging.specifiers")

        class _Opaque:
            def __init__(self, *a, **k):
                pass

            def __contains__(self, _):
                return False

        ver.Version = _Opaque
        ver.parse = _Opaque
        ver.InvalidVersion = ValueError
        spec.SpecifierSet = _Opaque
        pk.version, pk.specifiers = ver, spec
        sys.modules.update({"packaging": pk, "packaging.version": ver,
                            "packaging.specifiers": spec})


def install_habana_stub():
    """The July 2025 runtime config evaluates every value at once, the device type and the
    PyTorch bridge mode included: a Gaudi 3 in lazy mode (neither reaches bucketing)."""
    mods = {n: types.ModuleType(n) for n in (
        "habana_frameworks", "habana_frameworks.torch", "habana_frameworks.torch.utils",
        "habana_frameworks.torch.utils.experimental", "habana_frameworks.torch.utils.internal")}
    exp = mods["habana_frameworks.torch.utils.experimental"]
    exp.synDeviceType = types.SimpleNamespace(synDeviceGaudi2=2, synDeviceGaudi3=3)
    exp._get_device_type = lambda: 3
    mods["habana_frameworks.torch.utils.internal"].is_lazy = lambda: True
    mods["habana_frameworks"].torch = mods["habana_frameworks.torch"]
    mods["habana_frameworks.torch"].utils = mods["habana_frameworks.torch.utils"]
    mods["habana_frameworks.torch.utils"].experimental = exp
    mods["habana_frameworks.torch.utils"].internal = mods["habana_frameworks.torch.utils.internal"]
    for n, m in mods.items():
        sys.modules.setdefault(n, m)


def parse_args(argv):
    """--set KEY=VALUE / --env NAME=VALUE pairs into two dicts, --lookup PHASE:SHAPE into a list."""
    sets, env, lookups = {}, {}, []
    i = 0
    while i < len(argv):
        opt = argv[i]
        if opt == "--lookup" and i + 1 < len(argv):
            lookups.append(argv[i + 1])
            i += 2
            continue
        if opt not in ("--set", "--env") or i + 1 >= len(argv) or "=" not in argv[i + 1]:
            raise SystemExit(f"upstream_buckets: bad argument {opt!r}")
        k, v = argv[i + 1].split("=", 1)
        (sets if opt == "--set" else env)[k] = v
        i += 2
    return sets, env, lookups


def as_bool(s):
    return s.lower() in ("true", "1", "yes", "on")


class Upstream:
    """Upstream's bucketing package imported from one export directory: vllm_gaudi/extension
    (vllm-gaudi) or vllm_hpu_extension (the July 2025 extension, bucketing.version docs)."""

    def __init__(self, root):
        install_stubs()
        sys.path.insert(0, os.path.abspath(root))
        self.legacy = os.path.isdir(os.path.join(root, "vllm_hpu_extension"))
        if self.legacy:
            install_habana_stub()
            # its utils module needs torch; the kernel loaders only take logger from it
            from vllm_hpu_extension.logger import logger
            ut = types.ModuleType("vllm_hpu_extension.utils")
            ut.logger, ut.is_fake_hpu = logger, lambda: False
            sys.modules["vllm_hpu_extension.utils"] = ut
        pkg = "vllm_hpu_extension" if self.legacy else "vllm_gaudi.extension"
        import importlib
        self.runtime = importlib.import_module(pkg + ".runtime")
        self.environment = importlib.import_module(pkg + ".environment")
        self.common = importlib.import_module(pkg + ".bucketing.common")
        self.unified = os.path.exists(os.path.join(root, pkg.replace(".", "/"),
                                                   "bucketing/unified.py"))

    def run(self, sets, env, lookups=()):
        for k in list(os.environ):
            if k.startswith(("VLLM_", "PT_HPU_")):
                del os.environ[k]
        strategy = sets.get("bucketing.strategy", "exponential")
        e = {}
        if self.legacy and strategy in ("exponential", "linear"):
            e["VLLM_EXPONENTIAL_BUCKETING"] = "true" if strategy == "exponential" else "false"
        elif strategy in STRATEGY_ENV and not self.legacy:
            e["VLLM_BUCKETING_STRATEGY"] = STRATEGY_ENV[strategy]
        elif strategy == "file" and not self.legacy:
            e["VLLM_BUCKETING_FROM_FILE"] = sets["bucketing.file"]
        elif strategy == "unified" and not self.legacy:
            e["VLLM_UNIFIED_ATTN"] = "true"
        else:
            return {"error": f"strategy {strategy} is not in this upstream export"}
        if "server.merged_prefill" in sets:
            e["VLLM_MERGED_PREFILL"] = sets["server.merged_prefill"]
        if "server.contiguous_pa" in sets:
            e["VLLM_CONTIGUOUS_PA"] = sets["server.contiguous_pa"]
        if self.legacy:
            e["VLLM_BUILD"] = "1.21.0"   # else read from `pip show habana-torch-plugin`
        e.update(env)
        os.environ.update(e)
        self.runtime.RUNTIME_CONFIG = None
        self.runtime.DETECTED = None
        # vLLM's --enable-prefix-caching (set_vllm_config); read by the legacy runtime config only
        self.environment._VLLM_VALUES["prefix_caching"] = \
            as_bool(sets.get("server.prefix_caching", "true"))
        self.environment._VLLM_VALUES.setdefault("model_type", "llama")
        unified = as_bool(os.environ.get("VLLM_UNIFIED_ATTN", "false"))
        try:
            cfg = self.runtime.get_config()
            mns = int(sets["server.max_num_seqs"])
            mpbs = cfg.VLLM_PROMPT_BS_BUCKET_MAX
            if mpbs is None:
                mpbs = int(sets.get("server.max_num_prefill_seqs", "1"))
            merged = cfg.merged_prefill
            mgr = self.common.HPUBucketingManager()
            mgr.initialize(max_num_seqs=mns,
                           max_num_prefill_seqs=mns if merged else mpbs,
                           block_size=int(sets["server.block_size"]),
                           max_num_batched_tokens=int(sets["server.max_num_batched_tokens"]),
                           max_model_len=int(sets["server.max_model_len"]))
            mgr.num_hpu_blocks = int(sets["server.num_kv_blocks"])
            if unified:
                if not self.unified:
                    return {"error": "this export has no unified bucketing"}
                mgr.generate_unified_buckets()
                res = {"unified": [list(b) for b in mgr.unified_buckets]}
                return self.look(mgr, res, lookups)
            if not cfg.use_bucketing:
                return {"prompt": [], "decode": []}
            mgr.generate_prompt_buckets()
            mgr.generate_decode_buckets()
            res = {"prompt": [list(b) for b in mgr.prompt_buckets],
                   "decode": [list(b) for b in mgr.decode_buckets]}
            return self.look(mgr, res, lookups)
        except Exception as ex:  # upstream's own failure is a result too
            return {"error": f"{type(ex).__name__}: {ex}".splitlines()[0]}


    @staticmethod
    def look(mgr, res, lookups):
        """The runner's look-ups, in order (a fallback bucket is appended to the list and seen
        by later look-ups); LOOKUPS as bucketsim's --lookup PHASE:SHAPE."""
        out = []
        for lk in lookups:
            ph, shape = lk.split(":")
            v = [int(x) for x in shape.split(",")]
            if ph == "prompt":
                b = mgr.find_prompt_bucket(v[0], v[1], v[2])
            elif ph == "decode":
                b = mgr.find_decode_bucket(v[0], v[2])
            else:
                b = mgr.find_unified_bucket(v[0], v[1], v[2], v[3])
            out.append(list(b))
        res["lookups"] = out
        return res


def worker_main(root):
    """Serves configurations as JSON lines on stdin ([sets, env]) -> results on stdout."""
    import logging
    logging.disable(logging.CRITICAL)
    up = Upstream(root)
    for line in sys.stdin:
        sets, env, lookups = json.loads(line)
        sys.stdout.write(json.dumps(up.run(sets, env, lookups)) + "\n")
        sys.stdout.flush()


class Worker:
    def __init__(self, root):
        self.p = subprocess.Popen([sys.executable, os.path.abspath(__file__), "_worker", root],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def run(self, sets, env, lookups):
        self.p.stdin.write(json.dumps([sets, env, lookups]) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise SystemExit("upstream_buckets: the upstream worker died")
        return json.loads(line)

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def bucketsim_args(sets, env):
    a = []
    for k, v in sets.items():
        a += ["--set", f"{k}={v}"]
    for k, v in env.items():
        a += ["--env", f"{k}={v}"]
    return a


def run_bucketsim(exe, version, sets, env, lookups):
    r = subprocess.run([exe, "buckets", "--format", "json", "--set", f"bucketing.version={version}"]
                       + bucketsim_args(sets, env) + [a for lk in lookups for a in ("--lookup", lk)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        err = [l for l in r.stderr.splitlines() if "error" in l]
        return {"error": (err[-1] if err else r.stderr.strip()) + f" (exit {r.returncode})"}
    j = json.loads(r.stdout)
    res = {k: j[k] for k in ("prompt", "decode", "unified") if k in j}
    res["lookups"] = [lk["bucket"] for lk in j["lookups"]]
    return res


# ---- random configurations ----

def log_uniform(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def draw_file(rng, path, B, mml, mns):
    lines = ["# random bucket file"]
    for _ in range(rng.randint(1, 6)):
        kind = rng.random()
        bs = rng.choice([1, 2, 4, [1, 2, 4], f"range(1, {rng.randint(2, 9)})"])
        if kind < 0.5:   # decode
            st = rng.choice([B, 32, 7])
            c = rng.choice([rng.randint(0, 4 * mml // B + 1),
                            f"range({B}, {B + st * rng.randint(1, 40)}, {st})",
                            [rng.randint(0, 64) for _ in range(3)]])
            dbs = rng.choice([rng.randint(1, mns + 2), [1, 8, 64], f"range(1, {min(mns + 2, 60)}, 3)"])
            lines.append(f"({dbs}, 1, {c})")
        else:
            q = rng.choice([rng.randint(2, mml + 64), [B, 2 * B, 4 * B],
                            f"range({B}, {min(2 * mml, B + 16 * max(B, 100))}, {rng.choice([B, 100])})"])
            c = rng.choice([0, rng.randint(0, mml // B + 2), [0, 1, 2, 4],
                            f"range(0, {min(mml // B + 3, 64)})"])
            lines.append(f"({bs}, {q}, {c})" if rng.random() < 0.7 else f"{bs}, {q}, {c}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def draw(rng, workdir, idx, with_unified, version):
    """One random configuration: (sets, env), realistic and edge values."""
    B = rng.choice([128, 128, 64, 64, 32, 256, 16])
    r = rng.random()
    if r < 0.15:
        mml = rng.randint(1, 4 * B)
    elif r < 0.55:
        mml = rng.choice([512, 1024, 2048, 4096, 8191, 8192, 8193, 16384, 32768])
    elif r < 0.8:
        mml = log_uniform(rng, 128, 65536)
    else:
        mml = rng.choice([65536, 131072, 100000, 262144])
    mns = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, log_uniform(rng, 1, 1024)])
    mnbt = rng.choice([256, 512, 1024, 2048, 2048, 4096, 8192, 16384, mml, max(mml, 2048),
                       log_uniform(rng, 32, 65536)])
    nhb = rng.choice([log_uniform(rng, 1, 200000), log_uniform(rng, 100, 20000),
                      rng.randint(1, 64), 5781, 3593])
    sets = {
        "server.max_model_len": mml, "server.max_num_seqs": mns,
        "server.max_num_batched_tokens": mnbt, "server.block_size": B,
        "server.num_kv_blocks": nhb,
        "server.max_num_prefill_seqs": rng.choice([1, 1, 1, 2, 4, 16, log_uniform(rng, 1, 64)]),
        "server.prefix_caching": rng.choice(["true", "false"]),
        "server.merged_prefill": "true" if rng.random() < 0.25 else "false",
    }
    if rng.random() < 0.7:
        sets["server.contiguous_pa"] = rng.choice(["true", "false"])
    s = rng.random()
    strategies = ["exponential", "linear"] + \
        (["padding_aware", "file"] if version == "current" else []) + \
        (["unified"] if with_unified else [])
    strategy = rng.choice(strategies)
    sets["bucketing.strategy"] = strategy
    env = {}
    if strategy == "file":
        path = os.path.join(workdir, f"buckets_{idx}.txt")
        draw_file(rng, path, B, mml, mns)
        sets["bucketing.file"] = path
    if s < 0.1 and strategy in STRATEGY_ENV:
        # the strategy chosen by the variables instead of the key
        env["VLLM_BUCKETING_STRATEGY"] = rng.choice(["exp", "lin", "pad"])
    if s > 0.93 and strategy in STRATEGY_ENV:
        env["VLLM_EXPONENTIAL_BUCKETING"] = rng.choice(["true", "false"])
    if rng.random() < 0.1:
        env["VLLM_PROMPT_BS_BUCKET_MAX"] = str(rng.choice([1, 2, 4, 8, log_uniform(rng, 1, 128)]))
    if version == "docs":
        return settle(rng, *startable(sets, draw_docs_env(rng, strategy, env, B)), version)
    if strategy == "exponential" or env.get("VLLM_BUCKETING_STRATEGY") == "exp":
        if rng.random() < 0.2:
            env["VLLM_PROMPT_QUERY_BUCKET_MIN"] = str(rng.choice([1, 1, 2, B]))
    if rng.random() < 0.15:
        env["VLLM_PROMPT_CTX_BUCKET_MAX"] = str(rng.choice([1, 4, mml // B, mml // B + 5,
                                                            rng.randint(0, 600)]))
    lin_family = strategy in ("linear", "padding_aware") or \
        env.get("VLLM_BUCKETING_STRATEGY") in ("lin", "pad")
    if lin_family and rng.random() < 0.6:
        for phase, dim, dflt in (("PROMPT", "BS", 4), ("PROMPT", "QUERY", B),
                                 ("PROMPT", "SEQ", B), ("PROMPT", "CTX", 4),
                                 ("DECODE", "BS", 32), ("DECODE", "BLOCK", B)):
            for param in ("MIN", "STEP", "MAX", "PAD_MAX", "PAD_PERCENT"):
                if rng.random() < 0.12:
                    if param == "MIN":
                        v = rng.choice([0, 1, 2, dflt, rng.randint(0, 4 * dflt)])
                    elif param == "STEP":
                        v = rng.choice([1, 2, dflt, rng.randint(1, 4 * dflt)])
                    elif param == "MAX":
                        v = rng.choice([dflt * rng.randint(1, 64), rng.randint(1, 8 * dflt)])
                    elif param == "PAD_MAX":
                        v = rng.choice([0, dflt, rng.randint(1, 8 * dflt)])
                    else:
                        v = rng.choice([0, 10, 25, 50, rng.randint(0, 50)])
                    env[f"VLLM_{phase}_{dim}_BUCKET_{param}"] = str(v)
    if rng.random() < 0.05:
        env["VLLM_MERGED_PREFILL"] = rng.choice(["true", "false"])
    if rng.random() < 0.05:
        env["VLLM_CONTIGUOUS_PA"] = rng.choice(["true", "false"])
    return settle(rng, *startable(sets, env), version)


def startable(sets, env):
    """The drawn configuration raised where vLLM would refuse to start, as `bucketsim buckets`
    (like run and validate) refuses it: a token budget of at least max_num_seqs (SchedulerConfig),
    a KV cache holding one request of max_model_len, contiguous PA under unified attention.
    Drawn first and raised after, so the random stream, and every other value, is unchanged."""
    mml, B = sets["server.max_model_len"], sets["server.block_size"]
    sets["server.max_num_batched_tokens"] = max(sets["server.max_num_batched_tokens"],
                                                 sets["server.max_num_seqs"])
    sets["server.num_kv_blocks"] = max(sets["server.num_kv_blocks"], -(-mml // B))
    if sets["bucketing.strategy"] == "unified":
        if sets.get("server.contiguous_pa") == "false":
            sets["server.contiguous_pa"] = "true"
        if env.get("VLLM_CONTIGUOUS_PA") == "false":
            env["VLLM_CONTIGUOUS_PA"] = "true"
    return {k: str(v) for k, v in sets.items()}, env


# The variables that set the same thing as a config key (bucketsim's env_var_defs[].key, those
# the draws give): bucketsim refuses the two given with different values.
ENV_KEYS = {"VLLM_BUCKETING_STRATEGY": "bucketing.strategy",
            "VLLM_PROMPT_BS_BUCKET_MAX": "server.max_num_prefill_seqs",
            "VLLM_MERGED_PREFILL": "server.merged_prefill",
            "VLLM_CONTIGUOUS_PA": "server.contiguous_pa"}
STRATEGY_NAME = {v: k for k, v in STRATEGY_ENV.items()}
# Share of the draws given one deliberate conflict (checked as refused by design).
CONFLICT_SHARE = 0.04


def is_unified(sets, env):
    return sets["bucketing.strategy"] == "unified" or as_bool(env.get("VLLM_UNIFIED_ATTN", "false"))


def key_value(name, value, version):
    """The config key's text that says what variable NAME=VALUE says (None: the variable is not
    compared with its key, as bucketsim's env_key_conflicts: the strategy variable outside
    version current, or a value upstream does not know)."""
    if name == "VLLM_BUCKETING_STRATEGY":
        return STRATEGY_NAME.get(value) if version == "current" else None
    if name in ("VLLM_MERGED_PREFILL", "VLLM_CONTIGUOUS_PA"):
        return "true" if as_bool(value) else "false"
    return str(int(value))


def contiguous_pa(sets, env, version):
    """Contiguous PA as bucketsim resolves it (bucket_params_resolve): the variable, else the
    key, else the version's default (docs: on without prefix caching; current: off), and the
    source that set it."""
    if "VLLM_CONTIGUOUS_PA" in env:
        return as_bool(env["VLLM_CONTIGUOUS_PA"]), "VLLM_CONTIGUOUS_PA"
    if "server.contiguous_pa" in sets:
        return as_bool(sets["server.contiguous_pa"]), "server.contiguous_pa"
    return version == "docs" and not as_bool(sets["server.prefix_caching"]), None


def conflicts(sets, env, version):
    """The settings of a drawn configuration that contradict each other, as the one-line error
    bucketsim documents for each (policies/README.md): a key and its variable given different
    values (bucketing.c, env_key_conflicts), prefix caching asked for with contiguous PA on
    outside unified attention (upstream's platform check_and_update_config turns it off).
    Worked out here from the settings alone, not from bucketsim's answer."""
    out = []
    for name, value in env.items():
        key = ENV_KEYS.get(name)
        if key not in sets:
            continue
        want = key_value(name, value, version)
        if want is not None and want != sets[key]:
            out.append(f"bucketsim: error: field '{key}': '{sets[key]}' conflicts with the "
                       f"environment variable {name}={value}, which sets the same thing: give "
                       f"one of them (or the same value) (exit 3)")
    cpa, src = contiguous_pa(sets, env, version)
    if cpa and as_bool(sets["server.prefix_caching"]) and not is_unified(sets, env):
        out.append(f"bucketsim: error: field 'server.prefix_caching': true, but contiguous PA "
                   f"({src}) turns prefix caching off: vllm-gaudi's platform "
                   f"check_and_update_config disables it whenever VLLM_CONTIGUOUS_PA is on (exit 3)")
    return out


def settle(rng, sets, env, version):
    """Makes a draw a configuration a user could give bucketsim: a key and its variable agree
    (the key takes the variable's value), and with contiguous PA on (outside unified attention)
    prefix caching is off, as upstream's platform turns it off.  Then, in CONFLICT_SHARE of the
    draws, one deliberate conflict of either kind, which bucketsim must refuse."""
    for name, value in env.items():
        key = ENV_KEYS.get(name)
        want = key_value(name, value, version) if key in sets else None
        if want is not None:
            sets[key] = want
    unified = is_unified(sets, env)
    if contiguous_pa(sets, env, version)[0] and not unified:
        sets["server.prefix_caching"] = "false"
    if rng.random() >= CONFLICT_SHARE:
        return sets, env
    kinds = ["VLLM_PROMPT_BS_BUCKET_MAX", "VLLM_MERGED_PREFILL"]
    if not unified:   # unified attention needs contiguous PA on, and keeps prefix caching
        kinds += ["VLLM_CONTIGUOUS_PA", "prefix_caching"]
    if version == "current" and sets["bucketing.strategy"] in STRATEGY_ENV and \
            "VLLM_EXPONENTIAL_BUCKETING" not in env:
        kinds.append("VLLM_BUCKETING_STRATEGY")
    kind = rng.choice(kinds)
    if kind == "prefix_caching":
        sets["server.prefix_caching"] = "true"
        if rng.random() < 0.5:
            sets["server.contiguous_pa"] = "true"
            env.pop("VLLM_CONTIGUOUS_PA", None)
        else:
            env["VLLM_CONTIGUOUS_PA"] = "true"
            sets.pop("server.contiguous_pa", None)
    elif kind == "VLLM_PROMPT_BS_BUCKET_MAX":
        env[kind] = str(int(sets["server.max_num_prefill_seqs"]) + rng.choice([1, 3, 15]))
    elif kind == "VLLM_BUCKETING_STRATEGY":
        env[kind] = rng.choice([v for k, v in STRATEGY_ENV.items()
                                if k != sets["bucketing.strategy"]])
    else:
        key = ENV_KEYS[kind]
        cur = as_bool(sets.get(key, "false"))
        sets[key] = "true" if cur else "false"
        env[kind] = "false" if cur else "true"
        if kind == "VLLM_CONTIGUOUS_PA":   # prefix caching off either way: one conflict only
            sets["server.prefix_caching"] = "false"
    return sets, env


def draw_docs_env(rng, strategy, env, B):
    """The variables the July 2025 code read: LIMIT (exponential), MIN/STEP/MAX (linear) of
    PROMPT_BS, PROMPT_SEQ, DECODE_BS, DECODE_BLOCK."""
    env.pop("VLLM_BUCKETING_STRATEGY", None)
    exp = strategy == "exponential"
    if "VLLM_EXPONENTIAL_BUCKETING" in env:
        exp = as_bool(env["VLLM_EXPONENTIAL_BUCKETING"])
    if strategy == "unified" or rng.random() < 0.4:
        return env
    for phase, dim, dflt in (("PROMPT", "BS", 4), ("PROMPT", "SEQ", B), ("DECODE", "BS", 32),
                             ("DECODE", "BLOCK", B)):
        for param in (("LIMIT",) if exp else ("MIN", "STEP", "MAX")):
            if rng.random() < 0.2:
                if param == "LIMIT":
                    v = rng.choice([1, 2, 3, 5, 8, 12, 20])
                elif param == "MIN":
                    v = rng.choice([1, 2, dflt, rng.randint(1, 4 * dflt)])
                elif param == "STEP":
                    v = rng.choice([1, 2, dflt, rng.randint(1, 4 * dflt)])
                else:
                    v = rng.choice([dflt * rng.randint(1, 64), rng.randint(1, 8 * dflt)])
                env[f"VLLM_{phase}_{dim}_BUCKET_{param}"] = str(v)
    return env


def draw_lookups(rng, sets, env, unified):
    """Six runtime shapes around and beyond the lists' limits, as --lookup arguments."""
    mml, B = int(sets["server.max_model_len"]), int(sets["server.block_size"])
    mns, mnbt = int(sets["server.max_num_seqs"]), int(sets["server.max_num_batched_tokens"])
    mnps = int(env.get("VLLM_PROMPT_BS_BUCKET_MAX", sets["server.max_num_prefill_seqs"]))
    nhb = int(sets["server.num_kv_blocks"])
    out = []
    for _ in range(6):
        if unified:
            q = rng.randint(1, int(mnbt * 1.2) + 1)
            out.append(f"unified:{q},{rng.randint(0, mml // B + 2)},{rng.randint(0, nhb + 2)},"
                       f"{rng.randint(0, 1)}")
        elif rng.random() < 0.5:
            out.append(f"prompt:{rng.randint(1, max(mnps, 1) + 1)},{rng.randint(1, int(mnbt * 1.2) + 1)},"
                       f"{rng.randint(0, mml // B + 2) if rng.random() < 0.6 else 0}")
        else:
            out.append(f"decode:{rng.randint(1, mns + 3)},1,"
                       f"{rng.randint(1, max(mml * mns // B, 1) * 2 if rng.random() < 0.2 else max(nhb, 1) + 2)}")
    return out


def too_big_docs(sets, env):
    """The July 2025 prompt triangle: bs x seq x ctx values (upper estimate), skipped when
    large."""
    mml, B = int(sets["server.max_model_len"]), int(sets["server.block_size"])
    lin = sets["bucketing.strategy"] == "linear"
    if "VLLM_EXPONENTIAL_BUCKETING" in env:
        lin = not as_bool(env["VLLM_EXPONENTIAL_BUCKETING"])
    if sets["bucketing.strategy"] == "unified":
        return False
    step = int(env.get("VLLM_PROMPT_SEQ_BUCKET_STEP", B)) if lin else B
    smax = int(env.get("VLLM_PROMPT_SEQ_BUCKET_MAX", mml)) if lin else mml
    if lin and as_bool(env.get("VLLM_MERGED_PREFILL", sets["server.merged_prefill"])):
        smax = min(int(sets["server.max_num_seqs"]) * smax,
                   int(sets["server.max_num_batched_tokens"]))
    nseq = (max(smax, 1) // max(step, 1) + 8) if lin else int(env.get("VLLM_PROMPT_SEQ_BUCKET_LIMIT", 20))
    nctx = max(smax, 1) // B + 1 if as_bool(sets["server.prefix_caching"]) else 1
    mns, nhb = int(sets["server.max_num_seqs"]), int(sets["server.num_kv_blocks"])
    dstep = int(env.get("VLLM_DECODE_BLOCK_BUCKET_STEP", B)) if lin else B
    dmax = int(env.get("VLLM_DECODE_BLOCK_BUCKET_MAX", nhb)) if lin else nhb
    decode = (mns // 2 + 8) * (max(dmax, 1) // max(dstep, 1) + 8)
    # the July 2025 code lists its omitted buckets in quadratic time: keep the lists small
    return nseq * nctx * 8 > 30000 or decode > 150000


def too_big(sets, env):
    """Linear-family configurations whose lists run to hundreds of thousands of buckets (slow in
    both, and no different in kind from smaller ones): skipped.  An upper estimate."""
    strat = sets["bucketing.strategy"]
    strat = {"lin": "linear", "pad": "padding_aware", "exp": "exponential"}.get(
        env.get("VLLM_BUCKETING_STRATEGY"), strat)
    if "VLLM_EXPONENTIAL_BUCKETING" in env:
        strat = "exponential" if as_bool(env["VLLM_EXPONENTIAL_BUCKETING"]) else "linear"
    if strat not in ("linear", "padding_aware"):
        return False
    mml, B = int(sets["server.max_model_len"]), int(sets["server.block_size"])
    mnbt, mns = int(sets["server.max_num_batched_tokens"]), int(sets["server.max_num_seqs"])
    nhb = int(sets["server.num_kv_blocks"])
    mnps = int(env.get("VLLM_PROMPT_BS_BUCKET_MAX", sets["server.max_num_prefill_seqs"]))

    def n(phase, dim, mn, step, mx):
        def knob(p, d):
            v = env.get(f"VLLM_{phase}_{dim}_BUCKET_{p}")
            if v is None and dim == "QUERY":
                v = env.get(f"VLLM_{phase}_SEQ_BUCKET_{p}")
            return int(v) if v is not None else d
        mn, step, mx = knob("MIN", mn), max(knob("STEP", step), 1), knob("MAX", mx)
        return int(math.log2(step)) + 2 + max(mx, 0) // step

    cpa = as_bool(env.get("VLLM_CONTIGUOUS_PA", sets.get("server.contiguous_pa", "false")))
    merged = as_bool(env.get("VLLM_MERGED_PREFILL", sets["server.merged_prefill"]))
    prompt = (1 if merged else n("PROMPT", "BS", 1, 1, mnps)) * \
        n("PROMPT", "QUERY", B, B, mnbt) * \
        n("PROMPT", "CTX", 0, 4 if merged else 1, max(mml, 1) // B * (mns if merged else 1))
    decode = n("DECODE", "BS", 1, 32 if strat == "linear" else 2, mns) * \
        n("DECODE", "BLOCK", 1, B, nhb if cpa else max(mml * mns // B, B))
    return prompt > 150000 or decode > 150000


def size_refusal(err, up):
    """bucketsim's refusal of a phase of more than BUCKET_GEN_MAX (10^6) buckets
    (policies/README.md), where upstream's own list of that phase is longer than that."""
    if "no server warms up that many" not in err and "spans more than" not in err:
        return False
    phase = next((p for p in ("prompt", "decode", "unified") if p in err), None)
    return phase is not None and len(up.get(phase, ())) > 1000000


def phase_summary(res):
    if "error" in res:
        return "error"
    return ", ".join(f"{k} {len(v)}" for k, v in res.items() if k != "lookups")


def compare_main(argv):
    if len(argv) < 4:
        raise SystemExit("usage: upstream_buckets.py compare UPSTREAM_DIR BUCKETSIM N SEED "
                         "[--version current|docs] [--unified-dir DIR] [--workdir DIR]")
    root, exe, n, seed = argv[0], argv[1], int(argv[2]), int(argv[3])
    opts = dict(zip(argv[4::2], argv[5::2]))
    workdir = opts.get("--workdir") or os.environ.get("TMPDIR", "/tmp")
    version = opts.get("--version", "current")
    os.makedirs(workdir, exist_ok=True)
    head = Worker(root)
    uni = Worker(opts["--unified-dir"]) if opts.get("--unified-dir") else None
    rng = random.Random(seed)
    stats = {}   # strategy -> phase -> [compared, mismatched]
    refused = {}  # rule -> configurations refused by design
    mismatches = 0
    skipped = 0
    for i in range(n):
        sets, env = draw(rng, workdir, i, uni is not None, version)
        if (too_big_docs if version == "docs" else too_big)(sets, env):
            skipped += 1
            continue
        unified = sets["bucketing.strategy"] == "unified" or \
            as_bool(env.get("VLLM_UNIFIED_ATTN", "false"))
        lookups = draw_lookups(rng, sets, env, unified)
        t0 = time.monotonic()
        up = (uni if unified else head).run(sets, env, lookups)
        if os.environ.get("UPSTREAM_BUCKETS_VERBOSE") and time.monotonic() - t0 > 2:
            print(f"slow #{i}: upstream took {time.monotonic() - t0:.1f} s: "
                  f"{' '.join(bucketsim_args(sets, env))}", flush=True)
        bs = run_bucketsim(exe, version, sets, env, lookups)
        strat = sets["bucketing.strategy"]
        if env.get("VLLM_EXPONENTIAL_BUCKETING"):
            strat = "exponential" if as_bool(env["VLLM_EXPONENTIAL_BUCKETING"]) else "linear"
        elif env.get("VLLM_BUCKETING_STRATEGY") and strat in STRATEGY_ENV and version == "current":
            strat = {v: k for k, v in STRATEGY_ENV.items()}[env["VLLM_BUCKETING_STRATEGY"]]
        phases = ["unified"] if unified else ["prompt", "decode"]
        st = stats.setdefault(strat, {})
        bad = []
        expect = conflicts(sets, env, version)
        if expect:
            # settings that contradict each other: bucketsim must refuse them with the rule's
            # own message (upstream silently lets one setting win)
            rec = st.setdefault("refused by design", [0, 0])
            rec[0] += 1
            if bs.get("error") in expect:
                why = "prefix caching" if "prefix_caching" in bs["error"] else "key and variable"
                refused[why] = refused.get(why, 0) + 1
            else:
                rec[1] += 1
                bad.append("refusal")
            phases = []
        elif "error" in bs and "error" not in up and size_refusal(bs["error"], up):
            # more than BUCKET_GEN_MAX buckets in a phase, as upstream's own list shows
            st.setdefault("refused by design", [0, 0])[0] += 1
            refused["over 10^6 buckets"] = refused.get("over 10^6 buckets", 0) + 1
            phases = []
        elif "error" not in up and "error" not in bs:
            phases.append("lookups")
            if unified:   # a miss: upstream returns the 3-tuple (query, shared, unique)
                bs["lookups"] = [b[:len(u)] for b, u in zip(bs["lookups"], up["lookups"])]
        for ph in phases + (["error"] if phases else []):
            if ph == "error":
                a, b = "error" in up, "error" in bs
                rec = st.setdefault("both rejected", [0, 0])
                if a and b:
                    rec[0] += 1
                    if os.environ.get("UPSTREAM_BUCKETS_VERBOSE"):
                        print(f"both rejected #{i}: upstream {up['error']} | bucketsim {bs['error']}")
                if a != b:
                    bad.append("error")
                continue
            if "error" in up or "error" in bs:
                continue
            rec = st.setdefault(ph, [0, 0])
            rec[0] += 1
            if up.get(ph) != bs.get(ph):
                rec[1] += 1
                bad.append(ph)
        if bad:
            mismatches += 1
            detail = []
            for ph in bad:
                if ph == "refusal":
                    detail.append(f"expected: {expect[0]} | bucketsim: "
                                  f"{bs.get('error', phase_summary(bs))}")
                elif ph == "error":
                    detail.append(f"upstream: {up.get('error', phase_summary(up))} | "
                                  f"bucketsim: {bs.get('error', phase_summary(bs))}")
                elif ph == "lookups":
                    detail.append("lookups: " + ", ".join(
                        f"{lk} -> upstream {u} bucketsim {b}"
                        for lk, u, b in zip(lookups, up[ph], bs[ph]) if u != b))
                else:
                    u, b = set(map(tuple, up[ph])), set(map(tuple, bs[ph]))
                    detail.append(f"{ph}: upstream {len(up[ph])} bucketsim {len(bs[ph])}; "
                                  f"only upstream {sorted(u - b)[:4]} only bucketsim "
                                  f"{sorted(b - u)[:4]}")
            print(f"MISMATCH #{i} [{strat}] {'; '.join(detail)}")
            look = " ".join(f"--lookup {lk}" for lk in lookups)
            print(f"  repro: bucketsim buckets --format json --set bucketing.version={version} "
                  f"{' '.join(bucketsim_args(sets, env))} {look}")
    head.close()
    if uni:
        uni.close()
    print(f"# version {version}: {n} configurations drawn (seed {seed}), {skipped} skipped as too large, "
          f"{mismatches} with a mismatch")
    for strat in sorted(stats):
        for ph, (c, m) in sorted(stats[strat].items()):
            print(f"# {strat:17s} {ph:17s} compared {c:6d}  mismatched {m}")
    print("# refused by design, by rule: " + (", ".join(
        f"{k} {v}" for k, v in sorted(refused.items())) or "none"))
    return 1 if mismatches else 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "_worker":
        return worker_main(sys.argv[2])
    if len(sys.argv) >= 3 and sys.argv[1] == "one":
        import logging
        logging.disable(logging.CRITICAL)
        sets, env, lookups = parse_args(sys.argv[3:])
        print(json.dumps(Upstream(sys.argv[2]).run(sets, env, lookups)))
        return 0
    if len(sys.argv) >= 2 and sys.argv[1] == "compare":
        return compare_main(sys.argv[2:])
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
