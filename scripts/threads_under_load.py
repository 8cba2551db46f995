"""Plain decoding tokens/s through the CLI, quiet and beside a second decoding process, against
transformers' own `generate()` in an ordinary Python process (issue 23, §0).

    .venv/bin/python scripts/threads_under_load.py [--code DIR ...] [--tokens 64] [--repeats 2]

Each repeat runs, alternately, the CLI (`python -m specviz generate --method plain --json`, as a user
runs it) and transformers' `generate()` (greedy, default settings: torch is imported before specviz,
so nothing specviz sets changes its threads), quiet and then beside the load; `--lookup` adds
`generate --method lookup` and transformers' prompt lookup at k = 10. tokens/s counts prefill.

Each --code DIR is a copy of the repository to run (default: this one); pass an older checkout
(e.g. `git archive <commit> | tar -x -C /tmp/before`) to compare before/after. The load is a
second process decoding plain text in a loop with that same code. Prints one line per run and a
table of medians; a contender's speed against transformers is the median of its per-repeat ratios (each
repeat runs them one after the other, so a slow spell of the machine hits both). The machine's other
users add noise: read ratios, not absolute figures.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOAD = ("from specviz.engine.models import load_model\n"
        "from specviz.engine.decode import DecodeConfig, Decoder\n"
        "from specviz.engine.methods import encode_prompt\n"
        "from specviz.engine import workloads\n"
        "import sys\nt = load_model('default', 'cpu', 'bfloat16'); w = workloads.get('story')\n"
        "ids = encode_prompt(t.tokenizer, w.prompt, w.chat)\n"
        "print('loaded', flush=True)\n"
        "while True:\n    for _ in Decoder(t, None, ids, DecodeConfig(k=1, max_new_tokens=64)).run(): pass\n")


LOAD_NAME = "a second process decoding plain text in a loop (specviz, this code)"


def env_for(code: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code), HF_HUB_OFFLINE="1")
    env.pop("SPECVIZ_TINY", None)
    return env


def measure(code: Path, tokens: int, workload: str, method: str = "plain", env: dict | None = None) -> float:
    cmd = [sys.executable, "-m", "specviz", "generate", "--method", method, "--workload", workload,
           "--max-new-tokens", str(tokens), "--json"]
    out = subprocess.run(cmd, cwd=code, env={**env_for(code), **(env or {})}, capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)["summary"]["tokens_per_s"]


TRANSFORMERS = ("import torch, transformers, time, sys, json\n"  # torch first: OpenMP keeps its defaults
                "from specviz.engine.models import load_model\n"
                "from specviz.engine.methods import encode_prompt\n"
                "from specviz.engine import workloads\n"
                "n, w, look = int(sys.argv[1]), workloads.get(sys.argv[2]), int(sys.argv[3])\n"
                "t = load_model('default', 'cpu', 'bfloat16')\n"
                "t.model.set_attn_implementation('sdpa')\n"   # transformers' own default attention
                "ids = torch.tensor([encode_prompt(t.tokenizer, w.prompt, w.chat)])\n"
                "kw = dict(prompt_lookup_num_tokens=10) if look else {}\n"
                "t0 = time.perf_counter()\n"
                "out = t.model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False,"
                " pad_token_id=t.tokenizer.eos_token_id, **kw)\n"
                "dt = time.perf_counter() - t0\n"
                "print(json.dumps({'tokens_per_s': (out.shape[1] - ids.shape[1]) / dt, 'threads': "
                "torch.get_num_threads()}))\n")


def measure_transformers(code: Path, tokens: int, workload: str, lookup: bool = False) -> float:
    cmd = [sys.executable, "-c", TRANSFORMERS, str(tokens), workload, str(int(lookup))]
    out = subprocess.run(cmd, cwd=code, env=env_for(code), capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["tokens_per_s"]


def with_load(code: Path, fn):
    load = subprocess.Popen([sys.executable, "-c", LOAD], cwd=code, env=env_for(code), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        load.stdout.readline()  # "loaded": from here on it decodes without pause
        time.sleep(2)
        return fn()
    finally:
        load.terminate()
        load.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code", action="append", default=None, help="repository copy to run (repeatable)")
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--workload", default="summarise-passage")
    ap.add_argument("--lookup", action="store_true",
                    help="also specviz lookup and transformers' prompt lookup (k = 10)")
    ap.add_argument("--no-load", action="store_true", help="quiet runs only")
    ap.add_argument("--spin", action="append", default=[], metavar="COUNT",
                    help="also the first --code with GOMP_SPINCOUNT=COUNT (repeatable)")
    a = ap.parse_args()
    codes = [Path(c).resolve() for c in (a.code or [str(ROOT)])]
    contenders = {}
    for code in codes:
        contenders[f"{code.name}: specviz plain"] = lambda code=code: measure(code, a.tokens, a.workload)
        if a.lookup:
            contenders[f"{code.name}: specviz lookup"] = lambda code=code: measure(code, a.tokens, a.workload, "lookup")
    for spin in a.spin:
        contenders[f"{codes[0].name}: plain, spin {spin}"] = lambda spin=spin: measure(
            codes[0], a.tokens, a.workload, env={"GOMP_SPINCOUNT": spin})
    contenders["transformers plain"] = lambda: measure_transformers(codes[0], a.tokens, a.workload)
    if a.lookup:
        contenders["transformers lookup k=10"] = lambda: measure_transformers(codes[0], a.tokens, a.workload, True)
    conds = ("quiet",) if a.no_load else ("quiet", "loaded")
    res: dict = {}
    for r in range(a.repeats):
        for cond in conds:
            for name, fn in contenders.items():
                tps = fn() if cond == "quiet" else with_load(codes[0], fn)
                res.setdefault((name, cond), []).append(tps)
                print(f"repeat {r + 1} {cond:6} {name}: {tps:.2f} tokens/s", flush=True)
    print(f"\nmedian tokens/s, {a.tokens} tokens of {a.workload}, {a.repeats} repeats (load: {LOAD_NAME}):")
    refs = res[("transformers plain", "quiet")]
    for name in contenders:
        q = statistics.median(res[(name, "quiet")])
        # same repeat, one after the other
        paired = statistics.median(a / b for a, b in zip(res[(name, "quiet")], refs))
        line = f"  {name:32} quiet {q:6.2f} ({paired:.2f}x transformers plain, median of per-repeat ratios)"
        if not a.no_load:
            loaded = statistics.median(res[(name, "loaded")])
            line += f", loaded {loaded:6.2f} ({loaded / q:.2f}x its quiet speed)"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
