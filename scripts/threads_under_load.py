"""Plain decoding tokens/s through the CLI, quiet and beside a second decoding process.

    .venv/bin/python scripts/threads_under_load.py [--code DIR ...] [--tokens 24] [--repeats 1]

Each --code DIR is a copy of the repository to run (default: this one); pass an older checkout
(e.g. `git archive <commit> | tar -x -C /tmp/before`) to compare before/after. The load is a
second process decoding plain text in a loop with that same code. Prints one line per run and a
table of medians. The machine's other users add noise: read ratios, not absolute figures.
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
        "import sys\n"
        "t = load_model('default', 'cpu', 'bfloat16'); w = workloads.get('story')\n"
        "ids = encode_prompt(t.tokenizer, w.prompt, w.chat)\n"
        "print('loaded', flush=True)\n"
        "while True:\n"
        "    for _ in Decoder(t, None, ids, DecodeConfig(k=1, max_new_tokens=64)).run(): pass\n")


def env_for(code: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(code), HF_HUB_OFFLINE="1")
    env.pop("SPECVIZ_TINY", None)
    return env


def measure(code: Path, tokens: int, workload: str) -> float:
    cmd = [sys.executable, "-m", "specviz", "generate", "--method", "plain", "--workload", workload,
           "--max-new-tokens", str(tokens), "--json"]
    out = subprocess.run(cmd, cwd=code, env=env_for(code), capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["summary"]["tokens_per_s"]


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
    ap.add_argument("--tokens", type=int, default=24)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--workload", default="summarise-passage")
    a = ap.parse_args()
    codes = [Path(c).resolve() for c in (a.code or [str(ROOT)])]
    res: dict = {}
    for r in range(a.repeats):
        for code in codes:
            for cond in ("quiet", "loaded"):
                run = lambda: measure(code, a.tokens, a.workload)  # noqa: E731
                tps = run() if cond == "quiet" else with_load(code, run)
                res.setdefault((str(code), cond), []).append(tps)
                print(f"repeat {r + 1} {code} {cond}: {tps:.2f} tokens/s", flush=True)
    print(f"\nmedian plain tokens/s, {a.tokens} tokens of {a.workload}:")
    for code in codes:
        q, l = (statistics.median(res[(str(code), c)]) for c in ("quiet", "loaded"))
        print(f"  {code}: quiet {q:.2f}, beside a second decoding process {l:.2f} ({q / l:.1f}x slower)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
