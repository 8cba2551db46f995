"""Recorded runs as files: one JSON schema, written and read here, with no model and no pickle.

A recording holds what decided a run (its settings, the target's fingerprint, the environment: torch, device,
dtype, threads, specviz's code version), and what the run did: every step record and the run's summary, timings
included. The same file replays in the app (Step through, Compare) and in the CLI (`specviz replay FILE`).

A recording is input from a stranger, so `loads` trusts nothing: JSON only, at most MAX_BYTES, the format's name
and VERSION, every field's type (schema), and then the run's own arithmetic (consistency): a step's emitted
tokens are its accepted path's drafts plus the next token, its decisions accept exactly that path, each step
starts where the last one ended, and the summary's counts are the steps'. Any failure is one RecordingError
naming the first problem; nothing is returned, so a caller's earlier state stays as it was.

Full-vocabulary p and q vectors (StepRecord.p_rejected / q_rejected) are not written: a replayed step keeps
the top tokens of p and q, so the residual chart of a sampled correction is not drawn from a recording.
"""
from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field

from specviz.core.block import BlockVerdict, BlockWeights
from specviz.core.errors import InputError
from specviz.core.records import RunSummary, StepRecord, TopTokens, summarize

FORMAT = "specviz-recording"
VERSION = 1
MAX_BYTES = 16 * 2**20   # 16 MiB: a 256-step run with its top tokens is well under 1 MiB
MAX_RUNS = 512           # a comparison of every method on every workload, repeated, stays far below
MAX_STEPS = 4096
KINDS = ("step", "compare", "sweep")


class RecordingError(InputError):
    """A file that is not a valid recording: the message says what is wrong with it."""


@dataclass
class RecordedRun:
    """One run of a recording: what it was (labels: workload, method, k, ...), its summary and steps, and the
    plain run measured beside it (a comparison's repeat), if any."""
    label: dict
    summary: RunSummary
    steps: list[StepRecord] = field(repr=False)
    plain: RunSummary | None = None


@dataclass
class Recording:
    kind: str                    # "step" (Step through), "compare" (Compare proposers), "sweep" (k / n)
    settings: dict               # what decided the run(s): method, prompt, k, n, T, seed, tokens, ...
    model: dict                  # {"name", "fingerprint"}
    environment: dict            # {"torch", "device", "dtype", "threads", "code"}
    recorded_at: float           # seconds since the epoch
    runs: list[RecordedRun]
    prompt_ids: list[int] = field(default_factory=list)   # kind "step": the run's prompt
    tokens: dict[int, str] = field(default_factory=dict)  # every token id the runs show -> its text
    extra: dict = field(default_factory=dict)             # the page's own context (a comparison's mode, ...)

    @property
    def when(self) -> str:
        return time.strftime("%H:%M", time.localtime(self.recorded_at))


# -- writing -----------------------------------------------------------------------------------------
def step_dict(rec: StepRecord) -> dict:
    """Every field of a step record but the full-vocabulary vectors, as JSON types."""
    d = {f.name: getattr(rec, f.name) for f in dataclasses.fields(rec) if f.name not in ("p_rejected", "q_rejected")}
    d["p_top"] = [{"ids": t.ids, "probs": t.probs} for t in rec.p_top]
    d["q_top"] = [{"ids": t.ids, "probs": t.probs} for t in rec.q_top]
    d["target_cache"] = list(rec.target_cache)
    d["drafter_cache"] = None if rec.drafter_cache is None else list(rec.drafter_cache)
    d["block"] = None if rec.block is None else dataclasses.asdict(rec.block)
    return d


def token_ids_shown(runs: list[RecordedRun], prompt_ids: list[int]) -> set[int]:
    """Every token id a replay may label: the prompt, drafts, emitted tokens and the top tokens of p and q."""
    out = set(prompt_ids)
    for r in runs:
        for s in r.steps:
            out.update(s.drafted, s.emitted, [s.next_token, s.last_token])
            for t in (*s.p_top, *s.q_top):
                out.update(t.ids)
    out.discard(-1)
    return out


def dumps(rec: Recording) -> str:
    doc = {"format": FORMAT, "version": VERSION, "kind": rec.kind, "recorded_at": rec.recorded_at,
           "settings": rec.settings, "model": rec.model, "environment": rec.environment,
           "prompt_ids": rec.prompt_ids, "tokens": {str(k): v for k, v in sorted(rec.tokens.items())},
           "extra": rec.extra,
           "runs": [{"label": r.label, "summary": r.summary.as_dict(), "steps": [step_dict(s) for s in r.steps],
                     "plain": None if r.plain is None else r.plain.as_dict()} for r in rec.runs]}
    return json.dumps(doc, separators=(",", ":"))


# -- reading: schema ---------------------------------------------------------------------------------
def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool))


def _is_token(x) -> bool:
    return _is_int(x) and 0 <= x < 2**31


def _list_of(check: Callable) -> Callable:
    return lambda x: isinstance(x, list) and all(check(v) for v in x)


def _optional(check: Callable) -> Callable:
    return lambda x: x is None or check(x)


def _top(x) -> bool:
    return (isinstance(x, dict) and set(x) == {"ids", "probs"} and _list_of(_is_token)(x["ids"])
            and _list_of(_is_num)(x["probs"]) and len(x["ids"]) == len(x["probs"]))


def _triple(x) -> bool:
    return isinstance(x, list) and len(x) == 3 and all(_is_int(v) and v >= 0 for v in x)


def _block(x) -> bool:
    """Block verification's record (core/block.BlockVerdict as a dict)."""
    w = x.get("weights") if isinstance(x, dict) else None
    return (isinstance(w, dict) and set(w) == {"backed", "residual_mass", "h", "ratios"}
            and all(_list_of(_is_num)(w[k]) and len(w[k]) == len(w["h"]) for k in w)
            and set(x) == {"n_accepted", "next_token", "origin", "weights", "draws", "token_wise_kept"}
            and _is_int(x["n_accepted"]) and _is_token(x["next_token"]) and _list_of(_optional(_is_num))(x["draws"])
            and _is_int(x["token_wise_kept"]))


STEP_SCHEMA: dict[str, Callable] = {
    "index": _is_int, "k": _is_int, "context_len": _is_int, "drafted": _list_of(_is_token),
    "decisions": _list_of(lambda v: isinstance(v, bool)), "draws": _list_of(_optional(_is_num)),
    "ratios": _list_of(_is_num), "n_accepted": _is_int, "next_token": _is_token,
    "next_origin": lambda v: v in ("correction", "bonus"), "emitted": _list_of(_is_token),
    "draft_s": lambda v: _is_num(v) and v >= 0, "verify_s": lambda v: _is_num(v) and v >= 0,
    "logit_top1": _list_of(_is_num), "logit_gap": _list_of(_is_num), "greedy": lambda v: isinstance(v, bool),
    "q_deterministic": lambda v: isinstance(v, bool), "parents": _list_of(_is_int), "tested": _list_of(_is_int),
    "path": _list_of(_is_int), "seen_in": _optional(_list_of(lambda v: isinstance(v, str))),
    "p_top": _list_of(_top), "q_top": _list_of(_top), "last_token": _is_int, "target_cache": _triple,
    "drafter_cache": _optional(_triple), "feature_layers": _optional(_list_of(_is_int)),
    "verify": lambda v: v in ("token", "block"), "block": _optional(lambda v: _block(v)),
    "table_rows": _optional(_is_int), "held": _optional(lambda v: isinstance(v, str)),
}
SUMMARY_SCHEMA: dict[str, Callable] = {
    "method": lambda v: isinstance(v, str), "text": lambda v: isinstance(v, str), "token_ids": _list_of(_is_token),
    "prompt_tokens": _is_int, "target_passes": _is_int, "drafted": _is_int, "accepted": _is_int,
    "draft_acceptance_rate": _optional(_is_num), "tested": _is_int, "alpha": _optional(_is_num),
    "tokens_per_pass": _is_num, "per_position_acceptance": _list_of(_is_num), "wall_s": _is_num,
    "tokens_per_s": _is_num, "prefill_s": _is_num, "draft_s": _is_num, "verify_s": _is_num, "mean_k": _is_num,
    "k_at_floor": _is_int, "stopped_at_eos": lambda v: isinstance(v, bool),
}
TOP_SCHEMA: dict[str, Callable] = {
    "format": lambda v: v == FORMAT, "version": _is_int, "kind": lambda v: v in KINDS, "recorded_at": _is_num,
    "settings": lambda v: isinstance(v, dict), "model": lambda v: isinstance(v, dict),
    "environment": lambda v: isinstance(v, dict), "prompt_ids": _list_of(_is_token),
    "tokens": lambda v: isinstance(v, dict) and all(k.isdigit() and isinstance(t, str) for k, t in v.items()),
    "extra": lambda v: isinstance(v, dict), "runs": lambda v: isinstance(v, list) and 0 < len(v) <= MAX_RUNS,
}
RUN_SCHEMA: dict[str, Callable] = {
    "label": lambda v: isinstance(v, dict), "summary": lambda v: isinstance(v, dict),
    "steps": lambda v: isinstance(v, list) and len(v) <= MAX_STEPS, "plain": lambda v: v is None or isinstance(v, dict),
}


def _check(d, schema: dict, where: str) -> None:
    if not isinstance(d, dict):
        raise RecordingError(f"{where} is not a JSON object")
    missing = [k for k in schema if k not in d]
    if missing:
        raise RecordingError(f"{where} lacks the field '{missing[0]}'")
    extra = [k for k in d if k not in schema]
    if extra:
        raise RecordingError(f"{where} has an unknown field '{extra[0]}'")
    for k, ok in schema.items():
        if not ok(d[k]):
            raise RecordingError(f"{where}: the field '{k}' has the wrong type or value")


def _step(d: dict, where: str) -> StepRecord:
    d = ({"verify": "token", "block": None, "table_rows": None, "held": None, **d}   # recorded before block
         if isinstance(d, dict) else d)                                          # verification, tables or gates
    _check(d, STEP_SCHEMA, where)
    d = dict(d)
    if d["block"] is not None:
        b = dict(d["block"])
        d["block"] = BlockVerdict(**{**b, "weights": BlockWeights(**b["weights"])})
    d["p_top"] = [TopTokens(**t) for t in d["p_top"]]
    d["q_top"] = [TopTokens(**t) for t in d["q_top"]]
    d["target_cache"] = tuple(d["target_cache"])
    d["drafter_cache"] = None if d["drafter_cache"] is None else tuple(d["drafter_cache"])
    return StepRecord(**d)


def _summary(d: dict, where: str) -> RunSummary:
    _check(d, SUMMARY_SCHEMA, where)
    return RunSummary(**d)


# -- reading: consistency ------------------------------------------------------------------------------
def check_step(s: StepRecord, where: str) -> None:
    """A step's own arithmetic: its decisions accept exactly its path, and it emits that path's drafts and then
    its next token."""
    n = len(s.drafted)
    if not len(s.decisions) == len(s.tested) == len(s.draws) == len(s.ratios):
        raise RecordingError(f"{where}: its decisions, tested nodes, draws and ratios differ in number")
    if len(s.parents) != n or any(not -1 <= p < i for i, p in enumerate(s.parents)):
        raise RecordingError(f"{where}: its draft's tree is malformed")
    if any(not 0 <= t < n for t in (*s.tested, *s.path)):
        raise RecordingError(f"{where}: a tested or kept node is not in its draft")
    if s.n_accepted != len(s.path):
        raise RecordingError(f"{where}: it says {s.n_accepted} drafts were accepted, its path holds {len(s.path)}")
    if any(s.parents[j] != (s.path[i - 1] if i else -1) for i, j in enumerate(s.path)):
        raise RecordingError(f"{where}: its accepted path is not a path down its draft's tree")
    accepted = {t for t, ok in zip(s.tested, s.decisions) if ok}
    if accepted != set(s.path) or sum(s.decisions) != len(s.path):
        raise RecordingError(f"{where}: its decisions do not accept exactly its kept tokens")
    kept = [s.drafted[j] for j in s.path] + [s.next_token]
    if not s.emitted or s.emitted != kept[: len(s.emitted)]:
        raise RecordingError(f"{where}: its emitted tokens are not its accepted drafts and next token")


def check_run(r: RecordedRun, where: str) -> None:
    """Every step, the steps one after another, and the summary's counts against the steps'."""
    s, steps = r.summary, r.steps
    for i, st in enumerate(steps):
        check_step(st, f"{where}, step {i + 1}")
        if st.index != i:
            raise RecordingError(f"{where}, step {i + 1}: numbered {st.index + 1}")
        if i and st.context_len != steps[i - 1].context_len + len(steps[i - 1].emitted):
            raise RecordingError(f"{where}, step {i + 1}: does not start where step {i} ended")
    if steps and steps[0].context_len != s.prompt_tokens:
        raise RecordingError(f"{where}: its first step does not start after its prompt")
    emitted = [t for st in steps for t in st.emitted]
    if emitted != s.token_ids:
        raise RecordingError(f"{where}: the summary's tokens are not the steps' emitted tokens")
    again = summarize(s.method, s.text, s.token_ids, s.prompt_tokens, steps, s.wall_s, s.prefill_s)
    for name in ("target_passes", "drafted", "accepted", "tested"):
        if getattr(again, name) != getattr(s, name):
            raise RecordingError(f"{where}: the summary's {name.replace('_', ' ')} ({getattr(s, name)}) is not the "
                                 f"steps' ({getattr(again, name)})")


def loads(data: bytes | str, max_bytes: int = MAX_BYTES) -> Recording:
    """A recording from a file's bytes, every check passed; else RecordingError, and nothing is returned."""
    if len(data) > max_bytes:
        raise RecordingError(f"the file is {len(data) / 2**20:.1f} MiB; a recording may be at most "
                             f"{max_bytes / 2**20:.0f} MiB")
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RecordingError(f"not a JSON file, or a truncated one ({e})") from None
    except RecursionError:
        raise RecordingError("not a recording: its JSON nests too deeply") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise RecordingError("not a specviz recording (its 'format' is not 'specviz-recording')")
    if doc.get("version") != VERSION:
        raise RecordingError(f"a recording of version {doc.get('version')!r}; this specviz reads version {VERSION}")
    _check(doc, TOP_SCHEMA, "the recording")
    runs = []
    for i, r in enumerate(doc["runs"]):
        where = f"run {i + 1}"
        _check(r, RUN_SCHEMA, where)
        run = RecordedRun(dict(r["label"]), _summary(r["summary"], f"{where}'s summary"),
                          [_step(s, f"{where}, step {j + 1}") for j, s in enumerate(r["steps"])],
                          None if r["plain"] is None else _summary(r["plain"], f"{where}'s plain run"))
        check_run(run, where)
        runs.append(run)
    if doc["kind"] == "step" and (len(runs) != 1 or len(doc["prompt_ids"]) != runs[0].summary.prompt_tokens):
        raise RecordingError("a Step-through recording holds one run and its prompt")
    if any(not math.isfinite(x) for x in (doc["recorded_at"],)):
        raise RecordingError("the recording's time is not a number")
    return Recording(kind=doc["kind"], settings=doc["settings"], model=doc["model"], environment=doc["environment"],
                     recorded_at=float(doc["recorded_at"]), runs=runs, prompt_ids=doc["prompt_ids"],
                     tokens={int(k): v for k, v in doc["tokens"].items()}, extra=doc["extra"])


# -- replaying -------------------------------------------------------------------------------------------
class RecordedTokenizer:
    """The recording's own token texts, for labels and text: a replay needs no tokenizer files."""

    def __init__(self, tokens: dict[int, str]):
        self.tokens = tokens

    def decode(self, ids, skip_special_tokens: bool = False) -> str:
        return "".join(self.tokens.get(int(t), "") for t in ids)


@dataclass
class _Target:
    tokenizer: RecordedTokenizer
    name: str


@dataclass
class _Cfg:
    sampling: object
    max_new_tokens: int


@dataclass
class _Sampling:
    greedy: bool


class Replay:
    """A recorded run stepped through as the Decoder is (step(), run(), steps, finished, summary()), with no
    model: each step hands out the next recorded step record."""
    replay = True

    def __init__(self, rec: Recording, run: int = 0):
        self.recording, self.recorded = rec, rec.runs[run]
        s = self.recorded.summary
        greedy = all(st.greedy for st in self.recorded.steps) if self.recorded.steps else True
        self.target = _Target(RecordedTokenizer(rec.tokens), str(rec.model.get("name", "")))
        self.cfg = _Cfg(_Sampling(greedy), int(rec.settings.get("max_new", len(s.token_ids)) or len(s.token_ids)))
        self.prompt = list(rec.prompt_ids)
        self.steps: list[StepRecord] = []

    @property
    def finished(self) -> bool:
        return len(self.steps) == len(self.recorded.steps)

    @property
    def new_tokens(self) -> list[int]:
        return [t for s in self.steps for t in s.emitted]

    def step(self) -> StepRecord | None:
        if self.finished:
            return None
        rec = self.recorded.steps[len(self.steps)]
        self.steps.append(rec)
        return rec

    def run(self, around: Callable[[], AbstractContextManager] = nullcontext) -> Iterator[StepRecord]:
        while not self.finished:
            yield self.step()

    def summary(self) -> RunSummary:
        """The recording's summary once every step is out (its timings: the recording's); before that, the steps
        so far, their times as recorded."""
        s = self.recorded.summary
        if self.finished:
            return s
        return summarize(s.method, self.target.tokenizer.decode(self.new_tokens), self.new_tokens, s.prompt_tokens,
                         self.steps, sum(st.draft_s + st.verify_s for st in self.steps) + s.prefill_s, s.prefill_s)
