"""Sessions: several requests in order through one proposer, the cross-request cache on or off (issue 23
§3), each request a measure.run, against plain decoding of every request in the same rotation.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from specviz.core.errors import InputError
from specviz.core.records import RunSummary, StepRecord, combine
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import median, speedup
from specviz.engine import measure, methods as M
from specviz.engine.comparisons import RunCount, decode_config
from specviz.engine.decode import DecodeConfig
from specviz.engine.models import LoadedModel
from specviz.engine.workloads import Session


# -- sessions: several requests in order, one proposer, the cross-request cache on or off (issue 23 §3) ----------
@dataclass
class SessionRun:
    """One session run to the end: every request once, in order, each timed by measure.run."""
    session: str
    method: str
    cache: bool                                  # the proposer remembered each request for the next ones
    requests: list[RunSummary] = field(repr=False)
    steps: list[list[StepRecord]] = field(repr=False)
    names: list[str] = field(default_factory=list)

    @property
    def total(self) -> RunSummary:
        """The whole session as one run (records.combine): tokens/s = every request's tokens ÷ every request's wall
        time (prefills included), τ = tokens ÷ target passes over all requests, k̄ = drafted ÷ steps."""
        return combine(self.method, self.requests, [st for sts in self.steps for st in sts])


def run_session(target: LoadedModel, session: Session, make: Callable[[], object | None], cfg: DecodeConfig,
                cache: bool = True, method: str = "") -> SessionRun:
    """The session's requests in order through measure.run. cache=True: one proposer for the whole session,
    told to remember() each finished request (a proposer without that method simply has no cross-request
    memory); cache=False: a fresh proposer per request. make() is called anew for every session run, so a
    cache never carries over from an earlier run of the same session."""
    eos = target.tokenizer.eos_token_id
    prop = make() if cache else None
    sums, steps = [], []
    for w in session.requests:
        p = prop if cache else make()
        ids = M.encode_prompt(target.tokenizer, w.prompt, w.chat)
        s, st = measure.run(target, p, ids, cfg, eos)
        sums.append(s)
        steps.append(st)
        if cache and hasattr(p, "remember"):
            p.remember()
    name = method or (sums[0].method if sums else "")
    return SessionRun(session.name, name, cache, sums, steps, [w.name for w in session.requests])


SessionContender = tuple[Callable[[], object | None], DecodeConfig, bool]   # (proposer factory, settings, cache)


@dataclass
class SessionMeasured(measure.Measured):
    """One session contender against plain decoding over interleaved repeats (plain runs every request too): a
    Measured whose repeats are the whole sessions (SessionRun.total against the same repeat's plain session), with
    the session runs themselves beside."""
    runs: list[SessionRun] = field(default_factory=list, repr=False)
    plains: list[SessionRun] = field(default_factory=list, repr=False)
    same_as_plain: list[bool | None] = field(default_factory=list)  # per request, first repeat; None when sampling

    @classmethod
    def of(cls, label: str, runs: list[SessionRun], plains: list[SessionRun], same_as_plain: list[bool | None],
           compared: bool) -> SessionMeasured:
        whole = lambda r: (r.total, [st for sts in r.steps for st in sts])  # noqa: E731
        repeats = [measure.Repeat(*whole(r), *whole(p)) for r, p in zip(runs, plains)]
        return cls(label, repeats, None, compared, runs, plains, same_as_plain)

    @property
    def identical(self) -> bool:
        """Greedy: every request wrote plain decoding's tokens (first repeat)."""
        return self.compared and bool(self.same_as_plain) and all(self.same_as_plain)

    @property
    def typical_run(self) -> SessionRun:
        """The session run of the repeat whose ratio is the median."""
        return self.runs[self.typical_index()]

    def request_speedups(self) -> list[float]:
        """Per request: the median over repeats of its tokens/s ÷ plain's on the same request, same repeat."""
        n = len(self.runs[0].requests) if self.runs else 0
        return [speedup((r.requests[i].tokens_per_s, p.requests[i].tokens_per_s)
                        for r, p in zip(self.runs, self.plains) if p.requests[i].tokens_per_s) or 0.0
                for i in range(n)]

    def row(self) -> dict:
        """Totals in docs/metrics.md names (medians over repeats)."""
        whole = [rp.summary for rp in self.repeats]
        return {"session": self.runs[0].session if self.runs else "", "label": self.label,
                "cache": self.runs[0].cache if self.runs else None,
                "tokens_per_pass": median(w.tokens_per_pass for w in whole),
                "mean_k": median(w.mean_k for w in whole),
                "draft_share": median(w.draft_s / w.wall_s if w.wall_s else 0.0 for w in whole),
                "tokens_per_s": median(w.tokens_per_s for w in whole),
                "plain_tokens_per_s": median(rp.plain.tokens_per_s for rp in self.repeats),
                "speedup": self.speedup, "spread": self.spread, "repeats": len(self.runs),
                "request_speedups": self.request_speedups(),
                "same_as_plain": list(self.same_as_plain)}


def session_runs(n_requests: int, n_contenders: int, repeats: int = 1) -> RunCount:
    """The decoding runs session_against_plain() makes: per repeat plain and every contender over every
    request; before them one short warm-up of plain and of every contender on the first request."""
    return RunCount(repeats * (1 + n_contenders) * n_requests, 1 + n_contenders)


def session_against_plain(target: LoadedModel, session: Session, contenders: dict[str, SessionContender],
                          plain_cfg: DecodeConfig, repeats: int = 1, progress=None
                          ) -> tuple[dict[str, SessionMeasured], list[SessionRun]]:
    """Every contender's whole session against plain decoding's, interleaved as measure.interleaved does:
    each repeat runs the plain session (every request) once and every contender's session once, in an order
    rotated per repeat (measure.one_repeat). Returns ({label: SessionMeasured}, the plain session runs)."""
    if repeats < 1:
        raise InputError("repeats must be >= 1")
    if not session.requests:
        raise InputError(f"session '{session.name}' has no requests")
    labels = list(contenders)
    order = [None, *labels]
    first = M.encode_prompt(target.tokenizer, session.requests[0].prompt, session.requests[0].chat)
    measure.warm_up(target, first, {x: (c[0], c[1]) for x, c in contenders.items()}, plain_cfg,
                    target.tokenizer.eos_token_id)

    def run_one(x):
        if x is None:
            return run_session(target, session, lambda: None, plain_cfg, cache=False, method="plain")
        make, cfg, cache = contenders[x]
        return run_session(target, session, make, cfg, cache, method=x)

    runs: dict[str, list[SessionRun]] = {x: [] for x in labels}
    plains: list[SessionRun] = []
    for got in measure.each_repeat(order, repeats, run_one, progress, f"{session.name} "):
        plains.append(got[None])
        for x in labels:
            runs[x].append(got[x])
    out = {}
    for x in labels:
        greedy = contenders[x][1].sampling.greedy and plain_cfg.sampling.greedy
        same = [a.token_ids == b.token_ids if greedy else None
                for a, b in zip(runs[x][0].requests, plains[0].requests)]
        out[x] = SessionMeasured.of(x, runs[x], plains, same, greedy)
    return out, plains


def session_config(k: int, sampling: SamplingConfig, max_new_tokens: int, seed: int = 0) -> DecodeConfig:
    """A session request's settings (the same for every request)."""
    return decode_config(k, sampling, max_new_tokens, seed)
