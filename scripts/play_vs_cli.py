"""Step through's Play in a real browser against the CLI, same run (issue 13 §1 target: ≥ half the CLI's tokens/s).

    .venv/bin/python scripts/play_vs_cli.py [--workload story] [--method plain] [--repeats 3]

Starts the app (as `make app` does), loads the model, then alternates: the CLI's `generate` (its own
tokens/s, model load excluded) and one browser session pressing Play on Step through with the same
preset and method (tokens ÷ seconds from the click until the finished page is drawn). Medians.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from specviz.harness import loadtest as L


def cli_tps(workload: str, method: str, tokens: int) -> float:
    cmd = [sys.executable, "-m", "specviz", "generate", "--workload", workload, "--method", method,
           "--max-new-tokens", str(tokens), "--json"]
    out = subprocess.run(cmd, cwd=L.ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["summary"]["tokens_per_s"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="story")
    ap.add_argument("--method", default="plain")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    log_dir = Path(tempfile.mkdtemp(prefix="specviz-play-"))
    proc, base = L.start_server(log_dir / "server.log", run_cache=False)   # every Play live, never a replay
    cli, play = [], []
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=L.CHROMIUM, headless=True, args=L.FLAGS)
            ctx = browser.new_context()
            home = ctx.new_page()
            home.goto(base + "/", wait_until="domcontentloaded", timeout=60_000)
            L.wait_ready(home, "Target model loaded", 600)
            ctx.close()
            for r in range(a.repeats):
                ctx = browser.new_context()
                s = L.Session(a.workload, a.method)
                L.open_step(ctx, base, s, 600)
                L.play_together([s], 600)
                ctx.close()
                play.append(s.tokens / s.seconds)
                cli.append(cli_tps(a.workload, a.method, s.tokens))
                print(f"repeat {r + 1}: browser Play {s.tokens} tokens in {s.seconds:.1f} s = {play[-1]:.2f} tokens/s; "
                      f"CLI {cli[-1]:.2f} tokens/s {s.problems or ''}", flush=True)
            browser.close()
    finally:
        L.stop_server(proc)
    c, b = statistics.median(cli), statistics.median(play)
    print(f"median: CLI {c:.2f} tokens/s, browser Play {b:.2f} tokens/s ({b / c:.0%} of the CLI)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
