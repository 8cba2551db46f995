"""A classroom in a box: N browser sessions press Play on Step through together, against one server.

    python -m specviz.harness.loadtest --sessions 20        # classroom size: figures, exit 1 on a miss
    (tests/browser/test_load.py runs it with 4 sessions under `make test`: correctness asserted, the
    timings only reported; the timing targets below are checked here, by `make classroom`)

Starts the app as `make app` does (specviz.ui.launch, loopback only, the real default model),
drives Debian's chromium through Playwright (one browser context per session: its own cookies,
so its own Streamlit session), and measures:

1. alone: each distinct setting played by one session with nothing else running (reference text
   and time);
2. together: N sessions press Play within a second of each other; settings are assigned
   round-robin from N/2 of them (at most 8), so neighbours differ and each setting runs at least
   twice (4 sessions: summarise-passage/lookup, story/plain, and again).

Figures: each session's completion time, the spread, fairness (actual finish ÷ fair-share finish,
where fair share is round-robin over target passes, the unit the turns hand out: equal work
finishes together, a run with fewer passes first; and, where settings repeat, slowest ÷ fastest
among equal work), total tokens/s together vs one session alone, and the server's resident memory
(baseline after the model loaded, peak over the run, growth per session).
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[2]
THROUGHPUT_MIN = 0.8          # total tokens/s together ÷ one session alone
EQUAL_WORK_SPREAD_MAX = 1.5   # among sessions with the same settings: slowest ÷ fastest
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
# (preset name, method): copy-heavy and novel prompts, lookup and plain and the trained proposers
SETTINGS = [("summarise-passage", "lookup"), ("story", "plain"), ("edit-code", "lookup"), ("chat", "plain"),
            ("quote-document", "lookup"), ("explain", "plain"), ("csv-to-json", "lookup"), ("brainstorm", "plain")]

# Finished: connected, script not running, nothing still loading, every plotly chart drawn.
READY_JS = """(waitText) => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app) return false;
  const st = app.getAttribute('data-test-script-state');
  if (st !== 'notRunning' && st !== 'compilationError') return false;
  if (app.getAttribute('data-test-connection-state') !== 'CONNECTED') return false;
  const vis = (e) => !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
  const q = (s) => Array.from(document.querySelectorAll(s)).filter(vis);
  if (q('[data-testid="stStatusWidget"]').some(e => /Running/i.test(e.innerText))) return false;
  if (q('[data-testid="stAppSkeleton"], [data-testid="stSkeleton"], [data-testid="stSpinner"]').length) return false;
  if (q('[data-testid="stPlotlyChart"]').some(e => !e.querySelector('.main-svg'))) return false;
  if (waitText && !document.body.innerText.includes(waitText)) return false;
  return true;
}"""
TEXT_CSS = 'div[style*="pre-wrap"][style*="monospace"]'  # the coloured generated text (viz.step.text_html)
# Armed just before Play is clicked: the browser's own clock at the click and when the page first shows a step: the
# tally's "Target passes" above 0 (Play redraws it after a step), Play's progress line "step 1: drafted …", or the
# finished run's detail. (The progress line alone misses it under load: a session waiting for its turn shows the
# queue note in its place, and the two can reach the page in one render.)
FIRST_STEP_JS = """(ready) => {
  window.__armed = Date.now(); window.__firstStep = null; window.__clicked = null; window.__done = null;
  document.addEventListener('click', () => { if (window.__clicked === null) window.__clicked = Date.now(); },
                            {capture: true, once: true});
  const check = eval(ready);   // READY_JS: the page drawn to its end, by the browser's own clock every 50 ms
  const timer = setInterval(() => {
    if (window.__clicked !== null && check("One step in detail")) { window.__done = Date.now(); clearInterval(timer); }
  }, 50);
  const seen = () => /Target passes[^0-9]{0,80}[1-9]|step \\d+: drafted|One step in detail/.test(
    document.body.textContent);
  const obs = new MutationObserver(() => {
    if (window.__firstStep === null && seen()) { window.__firstStep = Date.now(); obs.disconnect(); }
  });
  obs.observe(document.body, {childList: true, subtree: true, characterData: true});
}"""
STATS = "specviz-stats:"   # engine/runcache.STATS (the harness imports no specviz package: it drives the app)
DEFAULT = ("(page default)", "(page default)")   # Step through as it opens: what the walkthrough sends a class to


@dataclass
class Session:
    preset: str
    method: str
    page: object = None
    problems: list = field(default_factory=list)
    started: float = 0.0
    finished: float | None = None
    text: str = ""
    tokens: int = 0
    passes: int = 0
    first_step: float | None = None   # seconds from the click until the page showed its first step
    browser_s: float | None = None    # seconds from the click to the finished page by the browser's clock (checked
                                      # every 50 ms in the page), without the 0.2 s polling of `seconds`

    @property
    def seconds(self) -> float:
        return (self.finished or time.time()) - self.started


# -- the server -----------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_path: Path, tiny: bool = False, run_cache: bool | None = None,
                 root: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """The app on a free loopback port. run_cache: the server-wide run cache (engine/runcache.py) on or off; None:
    the server's default (on, in memory). root: the checkout it runs from (another worktree, to compare code)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("SPECVIZ_TINY", "SPECVIZ_RUN_CACHE")}
    env["HF_HUB_OFFLINE"] = "1"
    if run_cache is not None:
        env["SPECVIZ_RUN_CACHE"] = "" if run_cache else "off"
    if tiny:
        env["SPECVIZ_TINY"] = "1"
    cmd = [sys.executable, "-m", "specviz.ui.launch", "--server.headless", "true", "--server.address", "127.0.0.1",
           "--server.port", str(port), "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    log = open(log_path, "w")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    end = time.time() + 90
    while True:
        try:
            with urllib.request.urlopen(base + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc, base
        except OSError:
            pass
        if proc.poll() is not None or time.time() > end:
            stop_server(proc)
            raise RuntimeError(f"streamlit did not start:\n{log_path.read_text()[-3000:]}")
        time.sleep(0.3)


def stop_server(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def rss_mib(pid: int) -> tuple[float, float]:
    """(resident now, peak resident) of a process in MiB, from /proc (VmRSS, VmHWM)."""
    vals = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            vals[line.split(":")[0]] = int(line.split()[1]) / 1024
    return vals.get("VmRSS", 0.0), vals.get("VmHWM", 0.0)


# -- one browser session --------------------------------------------------------------------
def open_step(ctx, base: str, s: Session, timeout_s: float) -> None:
    page = ctx.new_page()
    s.page = page

    def on_console(m):
        src = (m.location or {}).get("url", "")
        if m.type == "error" and not ("/_stcore/" in src and "404" in m.text):
            s.problems.append(f"console error: {m.text[:300]}")

    page.on("console", on_console)
    page.on("pageerror", lambda e: s.problems.append(f"page error: {e}"))
    page.goto(base + "/step", wait_until="domcontentloaded", timeout=60_000)
    wait_ready(page, "Play to the end", timeout_s)
    if (s.preset, s.method) != DEFAULT:
        choose(page, "Workload preset", s.preset)
        choose(page, "Method", s.method)
        wait_ready(page, None, timeout_s)


def choose(page, label: str, option_starts: str) -> None:
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    box.locator('[role="combobox"], input').first.click()
    page.get_by_role("option", name=re.compile("^" + re.escape(option_starts))).first.click()
    page.wait_for_timeout(300)
    wait_ready(page, None, 120)


def wait_ready(page, text: str | None, timeout_s: float) -> None:
    for _ in range(2):  # twice, 0.5 s apart, so a just-queued rerun is not missed
        page.wait_for_function(READY_JS, arg=text, polling=250, timeout=timeout_s * 1000)
        page.wait_for_timeout(500)


def is_done(page) -> bool:
    """The run drawn to its end. READY_JS first: while the script runs it answers from one attribute, where reading
    the body's innerText makes the browser lay the page out (polled five times a second, that was work a user's own
    browser does not do, on the cores the run shares)."""
    return bool(page.evaluate(READY_JS, None)) and bool(
        page.evaluate("(t) => document.body.innerText.includes(t)", "One step in detail"))


def read_result(s: Session) -> None:
    s.text = s.page.locator(TEXT_CSS).first.inner_text()
    m = re.search(r"Tokens generated\s*\n\s*(\d+)", s.page.inner_text("body"))
    s.tokens = int(m.group(1)) if m else 0
    m = re.search(r"Target passes\s*\n\s*(\d+)", s.page.inner_text("body"))
    s.passes = int(m.group(1)) if m else 0
    s.problems += [f"exception box: {t[:300]}" for t in s.page.locator('[data-testid="stException"]').all_inner_texts()]


def play_together(sessions: list[Session], timeout_s: float) -> None:
    """Press Play on every session within a moment, then poll until each has finished."""
    for s in sessions:
        s.page.evaluate(FIRST_STEP_JS, READY_JS)
        s.page.get_by_role("button", name="Play to the end").click(no_wait_after=True)
        s.started = time.time()
    end = time.time() + timeout_s
    pending = list(sessions)
    while pending and time.time() < end:
        time.sleep(0.2)
        for s in list(pending):
            if time.time() - s.started > 1.0 and is_done(s.page):
                s.finished = time.time()
                pending.remove(s)
    for s in pending:
        s.problems.append(f"did not finish within {timeout_s:.0f} s")
    for s in sessions:
        if s.finished:
            read_result(s)
            t = s.page.evaluate("() => window.__firstStep === null ? null : window.__firstStep - window.__armed")
            s.first_step = None if t is None else t / 1000
            t = s.page.evaluate("() => window.__done === null || window.__clicked === null ? null : "
                                "window.__done - window.__clicked")
            s.browser_s = None if t is None else t / 1000


# -- the whole test -------------------------------------------------------------------------
def fair_share(work: list[float]) -> list[float]:
    """Finish times (in units of work) under round-robin sharing, all starting together: sum_j min(w_j, w_i)."""
    return [sum(min(w, wi) for w in work) for wi in work]


def run(n: int, timeout_s: float = 600, tiny: bool = False, log_dir: Path | None = None,
        run_cache: bool = False, defaults: bool = False) -> dict:
    """The load test. The run cache is off unless asked for: with it on, the sessions after phase 1 replay the runs
    phase 1 made (no target pass), which measures the cache, not the turns. defaults: every session plays Step
    through as it opens (the walkthrough's "open the page" link), instead of presets and methods round-robin."""
    from playwright.sync_api import sync_playwright

    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="specviz-load-"))
    log = log_dir / "server.log"
    proc, base = start_server(log, tiny, run_cache)
    out: dict = {"sessions": n, "server_log": str(log), "run_cache": run_cache, "defaults": defaults}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
            warm(browser, base, timeout_s)  # the model loaded once, so neither phase pays for the load
            out["rss_baseline_mib"] = rss_mib(proc.pid)[0]
            # every setting at least twice (equal work to judge fairness by), at most the 8 presets
            kinds = [DEFAULT] if defaults else SETTINGS[: max(1, min(n // 2, len(SETTINGS)))]
            alone = {kind: play_alone(browser, base, kind, timeout_s) for kind in kinds}   # 1. each setting alone
            out["stats_alone"] = server_stats(log)
            sessions = [Session(*kinds[i % len(kinds)]) for i in range(n)]                # 2. together
            out.update(play_class(browser, base, sessions, timeout_s, proc.pid))
            out["stats_together"] = server_stats(log)
            browser.close()
    finally:
        stop_server(proc)
    out.update(figures(sessions, alone, out))
    return out


def warm(browser, base: str, timeout_s: float) -> None:
    """Home, once: it loads the model."""
    ctx = browser.new_context()
    home = ctx.new_page()
    home.goto(base + "/", wait_until="domcontentloaded", timeout=60_000)
    wait_ready(home, "Target model loaded", timeout_s)
    ctx.close()


def play_alone(browser, base: str, kind: tuple, timeout_s: float) -> Session:
    ctx = browser.new_context()
    s = Session(*kind)
    open_step(ctx, base, s, timeout_s)
    play_together([s], timeout_s)
    ctx.close()
    return s


def play_class(browser, base: str, sessions: list[Session], timeout_s: float, pid: int) -> dict:
    """Every session opens Step through in its own browser context, then all press Play together. The server's
    memory before and after."""
    ctxs = [browser.new_context() for _ in sessions]
    for c, s in zip(ctxs, sessions):
        open_step(c, base, s, timeout_s)
    rss_before = rss_mib(pid)[0]
    play_together(sessions, timeout_s)
    rss_after, peak = rss_mib(pid)
    for c in ctxs:
        c.close()
    return {"rss_before_play_mib": rss_before, "rss_after_mib": rss_after, "rss_peak_mib": peak}


def server_stats(log: Path) -> dict:
    """The last 'specviz-stats:' line of the server's log (engine/runcache.stats_line) as {name: int or str}:
    the target passes the server has run so far, the run cache's hits, misses and entries. {} when none yet."""
    lines = [x for x in log.read_text(errors="replace").splitlines() if x.startswith(STATS)]
    if not lines:
        return {}
    pairs = (kv.split("=", 1) for kv in lines[-1].split(";", 1)[1].split() if "=" in kv)
    return {k: int(v) if v.isdigit() else v for k, v in pairs}


def figures(sessions: list[Session], alone: dict, out: dict) -> dict:
    """The phase-2 figures: each session against the same settings alone and its fair share, the spreads,
    throughput, the time to the first step, the server's target passes and memory per session."""
    ref = [alone[(s.preset, s.method)] for s in sessions]
    times = [s.seconds for s in sessions]
    # Turns are handed out one target pass at a time, so a session's work is its number of passes:
    # equal work finishes together, a run with fewer passes first. Fairness = max/min of actual ÷ fair share.
    fair_passes = fair_share([float(s.passes) for s in sessions])
    scale = sum(times) / sum(fair_passes) if sum(fair_passes) else 0.0
    fair = [f * scale for f in fair_passes]
    ratio = [t / f if f else float("inf") for t, f in zip(times, fair)]
    groups: dict = {}
    for s in sessions:
        groups.setdefault((s.preset, s.method), []).append(s.seconds)
    same = [max(g) / min(g) for g in groups.values() if len(g) > 1]
    alone_tps = sum(r.tokens for r in alone.values()) / sum(r.seconds for r in alone.values())
    together_tps = sum(s.tokens for s in sessions) / max(times)
    firsts = [s.first_step for s in sessions if s.first_step is not None]
    passes = [out.get(k, {}).get("target_passes") for k in ("stats_alone", "stats_together")]
    return {
        "per_session": [{"preset": s.preset, "method": s.method, "tokens": s.tokens, "passes": s.passes,
                         "seconds": round(s.seconds, 2), "first_step_s": s.first_step,
                         "alone_seconds": round(r.seconds, 2), "fair_share_seconds": round(f, 2),
                         "same_text_as_alone": s.text == r.text and bool(s.text), "problems": s.problems}
                        for s, r, f in zip(sessions, ref, fair)],
        "alone_problems": [p for r in alone.values() for p in r.problems],
        "alone_first_step_s": [r.first_step for r in alone.values()],
        "fastest_s": min(times), "slowest_s": max(times),
        "first_step_s": {"min": min(firsts), "median": median(firsts), "max": max(firsts)} if firsts else None,
        "target_passes_alone": passes[0], "target_passes_together":
            None if None in passes else passes[1] - passes[0],
        "fairness_spread": max(ratio) / min(ratio),
        "equal_work_spread": max(same) if same else None,
        "alone_tokens_per_s": alone_tps, "together_tokens_per_s": together_tps,
        "throughput_ratio": together_tps / alone_tps,
        "rss_growth_per_session_mib": (out["rss_after_mib"] - out["rss_baseline_mib"]) / len(sessions),
    }


def report(r: dict) -> str:
    lines = [f"{r['sessions']} sessions pressed Play together on Step through"
             + (" with its defaults" if r.get("defaults") else "") + ", run cache "
             f"{'on' if r.get('run_cache') else 'off'} (server log: {r['server_log']})"]
    for i, s in enumerate(r["per_session"]):
        ok = "same text as alone" if s["same_text_as_alone"] else "TEXT DIFFERS from the run made alone"
        lines.append(f"  {i + 1:2d}. {s['preset']:18s} {s['method']:7s} {s['tokens']:3d} tokens, {s['passes']:3d} "
                     f"passes, {s['seconds']:6.1f} s (first step {_s(s['first_step_s'])}) "
                     f"(alone {s['alone_seconds']:.1f} s, fair share {s['fair_share_seconds']:.1f} s) · {ok}"
                     + ("" if not s["problems"] else " · " + "; ".join(s["problems"])))
    lines += [
        f"completion: fastest {r['fastest_s']:.1f} s, slowest {r['slowest_s']:.1f} s; "
        f"fairness (actual ÷ fair-share finish by passes, max/min) {r['fairness_spread']:.2f}"
        + ("" if r["equal_work_spread"] is None else
           f"; same settings, slowest ÷ fastest {r['equal_work_spread']:.2f}"),
        f"throughput: {r['together_tokens_per_s']:.1f} tokens/s together vs {r['alone_tokens_per_s']:.1f} alone "
        f"({r['throughput_ratio']:.0%})",
        "time to the first step: " + ("not seen" if not r["first_step_s"] else
                                      "min {min:.1f} s, median {median:.1f} s, max {max:.1f} s".format(
                                          **r["first_step_s"])) + f" (alone: {_s(r['alone_first_step_s'][0])})",
        f"target passes on the server: {r['target_passes_together']} while the sessions played together "
        f"({r['target_passes_alone']} before, phase 1 included); run cache at the end: "
        + ", ".join(f"{k} {v}" for k, v in r.get("stats_together", {}).items() if k != "target_passes"),
        f"server memory: {r['rss_baseline_mib']:.0f} MiB after the model loaded, {r['rss_after_mib']:.0f} MiB after, "
        f"peak {r['rss_peak_mib']:.0f} MiB; {r['rss_growth_per_session_mib']:.1f} MiB per session",
    ]
    return "\n".join(lines)


def _s(x: float | None) -> str:
    return "not seen" if x is None else f"{x:.1f} s"


def problems(r: dict) -> list[str]:
    """What went wrong, not how fast: a session's text differs from the same settings played alone,
    an exception box, a page or console error, a session that did not finish."""
    out = r["alone_problems"] + [f"session {i + 1}: {p}" for i, s in enumerate(r["per_session"]) for p in s["problems"]]
    out += [f"session {i + 1}: finished without the page ever showing a step" for i, s in enumerate(r["per_session"])
            if s["tokens"] > 0 and s["first_step_s"] is None]
    return out + [f"session {i + 1} ({s['preset']}, {s['method']}): text differs from the same run alone"
                  for i, s in enumerate(r["per_session"]) if not (s["tokens"] > 0 and s["same_text_as_alone"])]


def missed_targets(r: dict) -> list[str]:
    """The timing targets this run missed (a benchmark's verdict: the machine's load moves it)."""
    out = []
    if r["throughput_ratio"] < THROUGHPUT_MIN:
        out.append(f"total tokens/s together {r['throughput_ratio']:.0%} of one session alone (target "
                   f">= {THROUGHPUT_MIN:.0%})")
    if r["equal_work_spread"] is None or r["equal_work_spread"] > EQUAL_WORK_SPREAD_MAX:
        got = ("not measured (no setting ran twice)" if r["equal_work_spread"] is None
               else f"{r['equal_work_spread']:.2f}")
        out.append(f"equal work, slowest ÷ fastest {got} (target <= {EQUAL_WORK_SPREAD_MAX})")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m specviz.harness.loadtest", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=20, help="browser sessions pressing Play together (default 20)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds to wait for a phase (default 900)")
    ap.add_argument("--tiny", action="store_true", help="the tiny random test model instead of the real one")
    ap.add_argument("--run-cache", default="off", choices=("on", "off"),
                    help="the server-wide run cache: off (default: every session makes its own run, which is what "
                         "the turns' figures need) or on (the sessions after the first replay its recording)")
    ap.add_argument("--defaults", action="store_true",
                    help="every session plays Step through as it opens (what the walkthrough sends a class to), "
                         "instead of presets and methods round-robin")
    a = ap.parse_args(argv)
    if a.sessions < 1:
        print("loadtest: error: --sessions must be >= 1", file=sys.stderr)
        return 2
    if not Path(CHROMIUM).exists():
        print(f"loadtest: error: chromium not found at {CHROMIUM} (apt-get install -y chromium)", file=sys.stderr)
        return 2
    r = run(a.sessions, a.timeout, a.tiny, run_cache=a.run_cache == "on", defaults=a.defaults)
    print(report(r))
    bad = problems(r) + missed_targets(r)
    for line in bad:
        print(f"loadtest: FAILED: {line}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
