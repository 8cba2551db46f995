"""Step through's Play in a real browser against the CLI, same run (issue 13 §1 target: ≥ half the CLI's tokens/s).

    .venv/bin/python scripts/play_vs_cli.py [--workload story] [--method plain] [--repeats 3] [--code DIR ...]

Starts the app (as `make app` does), loads the model, then alternates: the CLI's `generate` (its own
tokens/s, model load excluded) and one browser session pressing Play on Step through with the same
preset and method (tokens ÷ seconds from the click until the finished page is drawn, by the browser's own clock:
harness/loadtest.Session.browser_s; the figure by the harness's 0.2 s polling is printed beside it). Medians.

--code DIR (repeatable): one app server per checkout (e.g. a `git worktree` of the commit before a change), each
Play of a repeat on every server in turn, the order reversed every repeat; the CLI runs from this checkout. Beside
each Play the CPU seconds the browser (every Chromium process) and the server spent during it, from /proc: what
the page costs the 2 cores the run shares, less noisy than the wall time.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from specviz.harness import loadtest as L

TICK = os.sysconf("SC_CLK_TCK")


def cli_tps(workload: str, method: str, tokens: int) -> float:
    cmd = [sys.executable, "-m", "specviz", "generate", "--workload", workload, "--method", method,
           "--max-new-tokens", str(tokens), "--json"]
    out = subprocess.run(cmd, cwd=L.ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["summary"]["tokens_per_s"]


def cpu_s(pid: int) -> float:
    """utime + stime of one process, seconds (0 if it is gone)."""
    try:
        f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(f[11]) + int(f[12])) / TICK


def browser_cpu_s() -> float:
    """CPU seconds of every Chromium process now running (the only browser on the machine during a measurement)."""
    total = 0.0
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if (d / "comm").read_text().startswith(("chrom", "headless")):
                    total += cpu_s(int(d.name))
            except OSError:
                pass
    return total


def play_once(browser, base: str, server_pid: int, workload: str, method: str) -> dict:
    ctx = browser.new_context()
    s = L.Session(workload, method)
    L.open_step(ctx, base, s, 600)
    b0, s0 = browser_cpu_s(), cpu_s(server_pid)
    L.play_together([s], 600)
    b1, s1 = browser_cpu_s(), cpu_s(server_pid)
    ctx.close()
    secs = s.browser_s or s.seconds   # the browser's own clock when it answered (loadtest.Session.browser_s)
    return {"tokens": s.tokens, "seconds": secs, "polled_s": s.seconds, "tps": s.tokens / secs,
            "polled_tps": s.tokens / s.seconds, "browser_cpu": b1 - b0, "server_cpu": s1 - s0, "problems": s.problems}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="story")
    ap.add_argument("--method", default="plain")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--code", action="append", type=Path, help="a checkout to run the app from (repeatable)")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    codes = [c.resolve() for c in (a.code or [L.ROOT])]
    log_dir = Path(tempfile.mkdtemp(prefix="specviz-play-"))
    servers = []
    cli, play = [], {c: [] for c in codes}
    try:
        for i, c in enumerate(codes):   # every Play live, never a replay
            servers.append((c, *L.start_server(log_dir / f"server{i}.log", run_cache=False, root=c)))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=L.CHROMIUM, headless=True, args=L.FLAGS)
            for _, _, base in servers:
                ctx = browser.new_context()
                home = ctx.new_page()
                home.goto(base + "/", wait_until="domcontentloaded", timeout=60_000)
                L.wait_ready(home, "Target model loaded", 600)
                ctx.close()
            for r in range(a.repeats):
                for c, proc, base in (servers if r % 2 == 0 else servers[::-1]):
                    m = play_once(browser, base, proc.pid, a.workload, a.method)
                    play[c].append(m)
                    print(f"repeat {r + 1} {c.name}: browser Play {m['tokens']} tokens in {m['seconds']:.2f} s = "
                          f"{m['tps']:.2f} tokens/s (polled every 0.2 s: {m['polled_s']:.2f} s); CPU s during it: "
                          f"browser {m['browser_cpu']:.2f}, server "
                          f"{m['server_cpu']:.2f} {m['problems'] or ''}", flush=True)
                cli.append(cli_tps(a.workload, a.method, play[codes[0]][-1]["tokens"]))
                print(f"repeat {r + 1}: CLI {cli[-1]:.2f} tokens/s", flush=True)
            browser.close()
    finally:
        for _, proc, _ in servers:
            L.stop_server(proc)
    c = statistics.median(cli)
    for code, ms in play.items():
        b = statistics.median(m["tps"] for m in ms)
        p = statistics.median(m["polled_tps"] for m in ms)
        print(f"median {code.name}: CLI {c:.2f} tokens/s, browser Play {b:.2f} tokens/s ({b / c:.0%} of the CLI; "
              f"by the 0.2 s polling {p:.2f} tokens/s, {p / c:.0%}); "
              f"CPU s per Play: browser {statistics.median(m['browser_cpu'] for m in ms):.2f}, "
              f"server {statistics.median(m['server_cpu'] for m in ms):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
