"""Step through's settings: the widgets' defaults and presets, the per-method choices (drafter, lookup, suffix,
session), and the Settings they add up to, with the app's own ranges (Settings.check; everything else is the
engine's to check: DecodeConfig.check, make_proposer, encode_prompt, the Decoder's context window)."""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from specviz.bench.results import default_method
from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.core.suffix import MAX_TREE_DEPTH, MIN_TOKEN_PROB, SUFFIX_FACTOR
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import machine
from specviz.engine.methods import DEFAULT_METHOD, MATCH_MIN, SELF_SIZED_CAP, check_verify, draft_cap
from specviz.proposers.lookup import MATCH_FACTOR, SOLE_MAX_V
from specviz.ui import loading, sessions

K_MAX, N_MAX, NEW_MAX = 16, 8, 256  # the app's ranges: a class shares one machine
OWN = "(your own prompt)"
PRESETS = ([OWN] + [f"{w.name} · {w.kind}" for w in workloads.ALL]
           + [f"{s.name} · {len(s.requests)} requests, the last one here" for s in workloads.SESSIONS])
FIRST = workloads.of_kind(workloads.COPY)[0]  # a copy-heavy preset: lookup has something to copy on the first Play
DEFAULTS = {"stp_prompt": FIRST.prompt, "stp_preset": f"{FIRST.name} · {FIRST.kind}",
            "stp_chat": FIRST.chat, "stp_k": 4, "stp_new": 16 if loading.TINY else 48,
            "stp_n": MATCH_MIN, "stp_nmin": 1, "stp_nmax": 4, "stp_temp": 0.0, "stp_seed": 0,
            "stp_krule": "match", "stp_factor": MATCH_FACTOR,
            "stp_depth": MAX_TREE_DEPTH, "stp_sfactor": SUFFIX_FACTOR, "stp_minprob": MIN_TOKEN_PROB}
DEPTH_MAX = 64  # suffix's depth cap: match + draft (vLLM's default is 24)
OTHER_DRAFTER = "another model (type its folder or id)"


def init_state(offered: list[str]) -> None:
    """The widgets' defaults, set once per session (their state outlives a page); the method opens on
    something speculative."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    if "stp_method" not in st.session_state:          # reads the kind's bench file: once per session
        st.session_state["stp_method"] = first_method(offered)


def first_method(offered: list[str]) -> str:
    """The method Step through opens on: the default for this machine's kind (bench/results.default_method, as the
    CLI's; Home says why), else the registry's, else lookup, else the first."""
    here = default_method(machine(None))[0]
    return next((m for m in (here, DEFAULT_METHOD, "lookup") if m in offered), offered[0])


def use_preset() -> None:
    """The preset selectbox's on_change: copy the workload's prompt and chat flag into the widgets."""
    name = st.session_state["stp_preset"]
    ses = sessions.session_of(name)
    if ses is not None:
        w = ses.requests[-1]
        st.session_state["stp_prompt"], st.session_state["stp_chat"] = w.prompt, w.chat
    elif name != OWN:
        w = workloads.get(name.split(" · ")[0])
        st.session_state["stp_prompt"], st.session_state["stp_chat"] = w.prompt, w.chat


def drafter_choice() -> str:
    """Method 'draft': the draft model to use, picked from those offered or typed in ('' when none typed)."""
    pick = st.selectbox("Draft model", loading.drafter_names() + [OTHER_DRAFTER], key="stp_drafter_pick",
                        persist_state="session")
    if pick != OTHER_DRAFTER:
        return pick
    return st.text_input("Draft model folder or Hugging Face id", key="stp_drafter_path",
                         persist_state="session").strip()


def lookup_choice() -> tuple[str, int | None, int | None, int | None, str, float | None]:
    """Method 'lookup': (which earlier occurrence to copy, n, n-min, n-max, k rule, factor); a fixed n or an
    n-min..n-max; k tokens per match, or as many as the match length justifies."""
    k_rule = st.radio("Draft length", ["fixed", "match"], horizontal=True, key="stp_krule", persist_state="session",
                      format_func={"fixed": "fixed k", "match": "follows the match length"}.get,
                      help="fixed: k tokens whenever the last n tokens occurred before (transformers' and vLLM's "
                           "n-gram lookup). Match length: find the longest earlier match of the context's tail "
                           f"(m tokens) and draft factor × m tokens, at most {SELF_SIZED_CAP}; n is then the "
                           "shortest match that drafts. A long match is a copy in progress; a short one is a guess, "
                           f"unless its last n tokens occurred only once before: then all {SELF_SIZED_CAP}, on a "
                           f"machine where a verify pass of {SELF_SIZED_CAP + 1} rows costs at most {SOLE_MAX_V:g} "
                           "one-token steps (the sidebar's *Lookup here* line says which holds here). It copies "
                           "from where its last copy left off when a match starts there.")
    factor = None
    if k_rule == "match":
        factor = st.number_input("Spec factor (draft ≤ factor × match length)", step=0.5, key="stp_factor",
                                 persist_state="session", help="SuffixDecoding's rule (vLLM: "
                                 "suffix_decoding_max_spec_factor). Above 0; specviz's default for lookup is "
                                 f"{MATCH_FACTOR:g}.")
    rule = st.radio("Copy from which earlier occurrence", ["recent", "earliest"], horizontal=True,
                    key="stp_rule", persist_state="session",
                    format_func={"recent": "most recent (specviz)", "earliest": "earliest of the longest (vLLM)"}.get)
    if st.radio("Match length", ["fixed n", "widest of n-min..n-max"], horizontal=True,
                key="stp_nmode", persist_state="session") == "fixed n":
        return rule, st.number_input("n (shortest match that drafts)" if k_rule == "match" else "n (tokens matched)",
                                     step=1, key="stp_n", persist_state="session", help=f"1 to {N_MAX}"
                                     + ("; the draft then grows with the match" if k_rule == "match" else "")), \
            None, None, k_rule, factor
    c1, c2 = st.columns(2)
    return (rule, None, c1.number_input("n-min", step=1, key="stp_nmin", persist_state="session"),
            c2.number_input("n-max", step=1, key="stp_nmax", persist_state="session"), k_rule, factor)


def suffix_choice() -> tuple[int, float, float]:
    """Method 'suffix': (depth cap, spec factor, minimum probability), with vLLM's names in the help."""
    c = st.columns(3)
    depth = c[0].number_input("Depth cap", step=1, key="stp_depth", persist_state="session",
                              help=f"Match plus draft stay within this many tokens (2 to {DEPTH_MAX}; vLLM: "
                                   f"suffix_decoding_max_tree_depth, default {MAX_TREE_DEPTH}). k caps the tree's "
                                   "nodes.")
    factor = c[1].number_input("Spec factor", step=0.5, key="stp_sfactor", persist_state="session",
                               help="A match of m tokens drafts a tree of at most factor × m tokens (vLLM: "
                                    f"suffix_decoding_max_spec_factor, default 1.0; specviz's {SUFFIX_FACTOR:g}).")
    min_prob = c[2].number_input("Minimum probability", step=0.05, key="stp_minprob", persist_state="session",
                                 help="A continuation is drafted only if it followed at least this share of the "
                                      "times its path did (0 to 1; vLLM: suffix_decoding_min_token_prob, default "
                                      f"{MIN_TOKEN_PROB:g}).")
    return depth, factor, min_prob


@dataclass(frozen=True)
class Settings:
    """What the widgets say. Two equal Settings (and the same sidebar model) mean the same run."""
    prompt: str
    chat: bool
    method: str
    drafter: str | None          # method 'draft': a folder, an id or the trained drafter's label
    k: int
    max_new: int
    adaptive: bool
    n: int | None                # lookup with a fixed n ...
    n_min: int | None            # ... or the widest match of n-min..n-max
    n_max: int | None
    temperature: float
    seed: int
    rule: str = "recent"         # lookup: which earlier occurrence to copy
    k_rule: str = "match"        # lookup: 'match' (factor x the match length, at most the cap) or 'fixed' (k per match)
    factor: float | None = None  # lookup's match rule, or suffix: the spec factor
    max_depth: int | None = None  # suffix: match + draft within this many tokens
    min_prob: float | None = None  # suffix: continuations below this share are not drafted
    session: str | None = None   # a session preset: this prompt is its last request ...
    cache: bool = False          # ... and suffix's cache holds the earlier ones (run first, in order)
    verify: str = "token"        # "token" or "block" (chains only: a tree method is refused in check())

    def check(self) -> None:
        """The app's ranges; the rest (n-min <= n-max, an empty prompt, the context window) is the engine's."""
        for name, val, lo, hi in (("k", self.k, 1, K_MAX), ("max new tokens", self.max_new, 1, NEW_MAX),
                                  ("n", self.n, 1, N_MAX), ("n-min", self.n_min, 1, N_MAX),
                                  ("n-max", self.n_max, 1, N_MAX), ("the depth cap", self.max_depth, 2, DEPTH_MAX)):
            if val is not None and not lo <= val <= hi:
                raise InputError(f"{name} must be between {lo} and {hi}, got {val}"
                                 + (" (an empty field, or one with letters, reads as 0)" if val == 0 else ""))
        if self.factor is not None and not 0 < self.factor <= 16:
            raise InputError(f"the spec factor must be above 0 and at most 16, got {self.factor:g}")
        if self.min_prob is not None and not 0 <= self.min_prob <= 1:
            raise InputError(f"the minimum probability must be between 0 and 1, got {self.min_prob:g}")
        check_verify(self.method, self.verify)
        if self.method == "draft" and not self.drafter:
            raise InputError("type the folder or id of a draft model")

    def config(self) -> DecodeConfig:
        return DecodeConfig(k=draft_cap(self.method, int(self.k), self.k_rule), max_new_tokens=int(self.max_new),
                            seed=int(self.seed),
                            sampling=SamplingConfig(float(self.temperature)), adaptive=self.adaptive, record=True,
                            verify=self.verify)

    def suffix_opts(self) -> dict | None:
        """Method 'suffix': the proposer's depth cap and minimum probability (the factor goes as spec_factor)."""
        if self.method != "suffix":
            return None
        return {k: v for k, v in (("max_depth", self.max_depth), ("min_prob", self.min_prob)) if v is not None}

    @property
    def n_label(self):
        """lookup's n as the runs remembered for other pages carry it: n, 'n-min..n-max' or None."""
        return self.n if self.n is not None else (f"{self.n_min}..{self.n_max}" if self.n_min is not None else None)


def k_meaning(method: str, n, k_rule: str) -> str | None:
    """What k means for a method that sizes its own drafts (lookup's match rule, suffix): the cap a run gets, in
    words rendered from the resolved settings; None when k is the draft length itself."""
    from specviz.engine.experiment import Setting
    from specviz.engine.methods import self_sized
    if not self_sized(method, k_rule):
        return None
    r = Setting.resolve(method, None, n, k_rule if method == "lookup" else None)
    return (f"k for this run: a cap of {r.k} tokens a step, not a draft length: {r.describe()}. The Draft length "
            f"k field applies to fixed k and the other methods.")


def range_error(s: Settings) -> None:
    """st.error as soon as a number is out of the app's range (Streamlit turns a number field that is left empty or
    holds letters into its default, 0 here, without a word), not only when a run is started."""
    try:
        s.check()
    except InputError as e:
        st.error(f"Check the settings: {e}")


def session_choice(preset: str) -> tuple[str | None, bool]:
    """A session preset: (its name, whether suffix's cache holds its earlier requests); (None, False) otherwise."""
    ses = sessions.session_of(preset)
    if ses is None:
        return None, False
    cache = st.checkbox(f"Suffix remembers the session's {len(ses.requests) - 1} earlier requests", value=True,
                        key="stp_cache", persist_state="session",
                        help=f"{ses.task}. On: the earlier requests run first, in order, and suffix's cache keeps "
                             "their outputs, so this last request can copy from them (Step through names the "
                             "request each branch came from). Off: an empty cache. Lookup copies within this "
                             "request only.")
    return ses.name, cache
