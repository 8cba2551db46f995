"""Step through's session: the decoder built for the page's Settings (ui/step_settings.py) and kept, one step
or Play in turns on the shared model, and the run remembered for other pages (its panels: ui/step_panels.py).

The page (pages/step_through.py) lays out the widgets and draws; these modules hold what happens between
a click and a drawing; the page shows the engine's InputError / ModelError as they are.
"""
from __future__ import annotations

import dataclasses
import sys
import time

import streamlit as st

from specviz.core import recording as R
from specviz.core.errors import InputError, ModelError
from specviz.engine import recorder, runcache, workloads
from specviz.engine.decode import Decoder
from specviz.engine.experiment import Setting, mode_words
from specviz.engine.methods import encode_prompt, self_sized
from specviz.ui import lecture, loading, memory, sessions, state, waiting
from specviz.ui.step_settings import Settings
from specviz.ui.turns import TURNS

REDRAW_S = 1.0    # Play redraws the text and tally once a second (and at the end), not per pass:
BAR_S = 0.25      # the progress bar (a small message) moves four times a second. Measured: redrawing the
                  # text twice a second made a 48-token Play ~15% slower (the browser shares the 2 cores)
KEY = "stp"       # the session's run: {"sig", "dec", "recipe", "method", "k", "n", "check", ...}


def signature(s: Settings) -> tuple:
    """The sidebar's model and the page's settings: a run is kept while this stays the same."""
    return tuple(loading.settings().values()), s


def target_and_prompt(s: Settings):
    """The checked settings' target and prompt ids; InputError when the settings are bad or the target did not
    load."""
    s.check()
    tgt = loading.target()
    if tgt is None:
        raise InputError("the target model did not load (see above)")
    return tgt, encode_prompt(tgt.tokenizer, s.prompt, s.chat)


def build(s: Settings) -> tuple[Decoder, dict]:
    """(Decoder, recipe) for these settings; raises InputError / ModelError on bad input."""
    tgt, ids = target_and_prompt(s)
    dm = None
    if s.method == "draft":
        dm = loading.drafter(s.drafter)
        if dm is None:
            raise InputError("the draft model did not load (see above)")

    cfg = s.config()
    cache = None
    if s.method == "suffix" and s.session and s.cache:  # the session's earlier requests first, remembered in order
        ses = workloads.SESSION_BY_NAME[s.session]
        with st.spinner(f"Running the session's {len(ses.requests) - 1} earlier requests to fill suffix's cache…"), \
                TURNS.turn(waiting.waiter(st.empty())):
            cache = sessions.prime(tgt, ses, lambda c: loading.proposer_for(
                "suffix", tgt, spec_factor=s.factor, suffix={**s.suffix_opts(), "cache": c}), cfg)

    def make():
        opts = s.suffix_opts() if cache is None else {**s.suffix_opts(), "cache": cache}
        return loading.proposer_for(s.method, tgt, s.n, s.n_min, s.n_max, dm, lookup_rule=s.rule,
                                    k_rule=s.k_rule, spec_factor=s.factor, suffix=opts)

    dec = Decoder(tgt, make(), ids, cfg, eos_token_id=tgt.tokenizer.eos_token_id)
    return dec, {"make": make, "ids": ids, "cfg": cfg, "target": tgt}


def current() -> dict | None:
    """The session's run (the last one built), whatever the settings say now."""
    return st.session_state.get(KEY)


def session(s: Settings, fresh: bool = False, live: bool = False) -> dict | None:
    """The session's run for these settings (a new one if they changed, or when fresh): the server's recording
    of the same run when it has one (engine/runcache), else a live one (always when `live`). A recording opened
    from a file stays until closed (fresh: replayed from its start). st.error and None on bad input: the earlier
    run stays."""
    sig = signature(s)
    cur = current()
    if opened_file(cur):
        return load_replay(cur["replay"]) if fresh else cur
    if cur is not None and cur["sig"] == sig and not fresh:
        return cur
    if lecture.on():
        st.info(f"A live run {lecture.NEEDS_MODEL} Open one of the recordings below.", icon=":material/co_present:")
        return None
    try:
        key = cache_key(s)
        hit = None if live else runcache.RUNS.get(key)
        if hit is not None:  # made before on this server: its steps, no target pass
            run = {"dec": R.Replay(hit), "replay": hit, "recipe": None}
        else:
            dec, recipe_ = build(s)
            run = {"dec": dec, "recipe": recipe_}
    except (InputError, ModelError, ValueError) as e:
        st.error(f"Cannot start a run: {e}")
        return None
    st.session_state[KEY] = {**run, "sig": sig, "key": key, "settings": s, "method": s.method,
                             "k": s.config().k,    # the run's own cap: 24 for lookup's match rule and suffix,
                             "self_sized": self_sized(s.method, s.k_rule),   # as in the CLI and the bench
                             "mode": mode_words(s.temperature),
                             "n": s.n_label, "check": None}
    return st.session_state[KEY]


def cache_key(s: Settings) -> str:
    """What decides this run (engine/runcache.run_key): the target's fingerprint, dtype and device, the resolved
    settings and the prompt's tokens. Every Step-through run is deterministic: greedy, or sampled with its seed."""
    tgt, ids = target_and_prompt(s)
    resolved = {**dataclasses.asdict(s), "decode": repr(s.config())}
    return runcache.run_key(tgt.fingerprint(), str(tgt.dtype), str(tgt.device), resolved, list(ids))


def load_replay(rec) -> dict:
    """A recording opened on the page becomes the session's run: stepped through as a live one, with no model."""
    st.session_state[KEY] = {"sig": None, "dec": R.Replay(rec), "replay": rec, "method": rec.runs[0].summary.method,
                             "k": rec.settings.get("k"), "n": rec.settings.get("n"), "check": None}
    return st.session_state[KEY]


def opened_file(run: dict | None) -> bool:
    """The run is a recording opened from a file (it stays whatever the settings say, until closed)."""
    return run is not None and run.get("replay") is not None and run.get("sig") is None


def served(run: dict | None) -> bool:
    """The run is the server's recording of a run another session (or this one) made before."""
    return run is not None and run.get("replay") is not None and run.get("sig") is not None


def recipe(run: dict) -> dict:
    """The run's recipe (what a live run of its settings needs), built when a served run first needs one."""
    if run.get("recipe") is None:
        run["recipe"] = build(run["settings"])[1]
    return run["recipe"]


def stale(run: dict | None, s: Settings) -> bool:
    """True when the settings changed since `run` was built (the next click starts a new one)."""
    return run is not None and not opened_file(run) and run["sig"] != signature(s)


# -- stepping ----------------------------------------------------------------------------------
def one_step(dec: Decoder, box) -> None:
    """One step, in a turn on the shared model (a waiting note in `box` meanwhile); a replay needs no turn."""
    if getattr(dec, "replay", False):
        dec.step()
        return
    with TURNS.turn(waiting.waiter(box)):
        dec.step()
    box.empty()


def play(dec: Decoder, box, redraw) -> None:
    """Step to the end, one turn on the shared model per step. A progress bar in `box` moves BAR_S apart;
    redraw() (the page's text and tally) runs REDRAW_S apart and after the last step."""
    bar, note, waited = box.progress(0.0, "playing…"), [waiting.waiter(box)], [False]
    last = last_bar = 0.0

    def on_wait(ahead):
        waited[0] = True
        note[0](ahead)

    for rec in dec.run(lambda: TURNS.turn(on_wait)):  # each step in its own turn; redraws outside it
        if waited[0]:  # the waiting note took the bar's place: bring the bar back
            waited[0], bar, note[0] = False, box.progress(0.0, "playing…"), waiting.waiter(box)
        now = time.monotonic()
        if now - last >= REDRAW_S or dec.finished:
            last = now
            redraw()
        if now - last_bar >= BAR_S or dec.finished:
            last_bar = now
            bar.progress(min(1.0, len(dec.new_tokens) / dec.cfg.max_new_tokens),
                         f"step {rec.index + 1}: drafted {rec.n_drafted}, accepted {rec.n_accepted}")
    box.empty()


def step_to_show(dec: Decoder, played: bool) -> int:
    """The step the detail opens on: after a Play the last step that drafted, else the newest step."""
    drafted = [r.index + 1 for r in dec.steps if r.n_drafted] if played else []
    return drafted[-1] if drafted else len(dec.steps)


def setting_of(run: dict) -> Setting:
    """What the run ran: read back from its proposer and config (Setting.of); a replay (no proposer): resolved from
    the page's settings that made it, or from a recording's method and k."""
    dec, s = run["dec"], run.get("settings")
    if hasattr(dec, "proposer"):
        return Setting.of(dec.proposer, dec.cfg)
    if s is None:
        return Setting.resolve(run["method"], run.get("k"))
    return Setting.resolve(s.method, s.config().k, s.n if s.n is not None else s.n_min,
                           s.k_rule if s.method == "lookup" else None, s.adaptive, verify=s.verify)


def remember(run: dict) -> None:
    """A finished run, once, for the calculator and the other pages."""
    dec = run["dec"]
    if dec.finished and not run.get("remembered"):
        state.remember_run(run["method"], dec.summary(), list(dec.steps), k=run["k"], n=run["n"],
                           self_sized=run.get("self_sized", False), mode=run.get("mode"), setting=setting_of(run))
        run["remembered"] = True
        if run.get("replay") is None and run.get("key"):  # made live here: every later session gets it at once
            runcache.RUNS.put(run["key"], recording_of(run))
        print(runcache.stats_line("a Step-through run finished " + ("live" if run.get("replay") is None else
                                  "from a recording")), file=sys.stderr, flush=True)   # the server's log


def recording_of(run: dict):
    """The session's run as a recording (core/recording.py): a replay's own, or one made from the live run."""
    if run.get("replay") is not None:
        return run["replay"]
    dec, r = run["dec"], run["recipe"]
    settings = {**dataclasses.asdict(run["sig"][1]), **dict(zip(("target", "device", "dtype"), run["sig"][0]))}
    return recorder.step_recording(r["target"], settings, r["ids"], dec.summary(), memory.lean(dec.steps),
                                   extra={"page": "step"})
