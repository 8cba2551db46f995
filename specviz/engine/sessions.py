"""Sessions: several requests in order through one proposer, the cross-request cache on or off (issue 23
§3), each request a measure.run, against plain decoding of every request in the same rotation.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from specviz.core.errors import InputError
from specviz.core.records import RunSummary, StepRecord
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import median, ratio, speedup
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
    def tokens(self) -> int:
        return sum(len(s.token_ids) for s in self.requests)

    @property
    def wall_s(self) -> float:
        return sum(s.wall_s for s in self.requests)

    @property
    def tokens_per_s(self) -> float:
        """Whole-session tokens/s: every request's tokens over every request's wall time (prefills included)."""
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def target_passes(self) -> int:
        return sum(s.target_passes for s in self.requests)

    @property
    def tokens_per_pass(self) -> float:
        """Whole-session tau: tokens emitted / target passes over all requests."""
        return self.tokens / self.target_passes if self.target_passes else 0.0

    @property
    def draft_s(self) -> float:
        return sum(s.draft_s for s in self.requests)

    @property
    def mean_k(self) -> float:
        """Drafted tokens per step over the session (k-bar)."""
        steps = sum(len(st) for st in self.steps)
        return sum(s.drafted for s in self.requests) / steps if steps else 0.0


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
class SessionMeasured(measure.AgainstPlain):
    """One session contender against plain decoding over interleaved repeats (plain runs every request too)."""
    label: str
    runs: list[SessionRun]
    plains: list[SessionRun] = field(repr=False)
    same_as_plain: list[bool | None] = field(default_factory=list)  # per request, first repeat; None when sampling

    @property
    def ratios(self) -> list[float]:
        """Per repeat: whole-session tokens/s ÷ the same repeat's plain whole-session tokens/s."""
        return [ratio(r.tokens_per_s, p.tokens_per_s) for r, p in zip(self.runs, self.plains)]

    def request_speedups(self) -> list[float]:
        """Per request: the median over repeats of its tokens/s ÷ plain's on the same request, same repeat."""
        n = len(self.runs[0].requests) if self.runs else 0
        return [speedup((r.requests[i].tokens_per_s, p.requests[i].tokens_per_s)
                        for r, p in zip(self.runs, self.plains) if p.requests[i].tokens_per_s) or 0.0
                for i in range(n)]

    @property
    def typical(self) -> SessionRun:
        return self.runs[self.typical_index()]

    def row(self) -> dict:
        """Totals in docs/metrics.md names (medians over repeats)."""
        return {"session": self.runs[0].session if self.runs else "", "label": self.label,
                "cache": self.runs[0].cache if self.runs else None,
                "tokens_per_pass": median(r.tokens_per_pass for r in self.runs),
                "mean_k": median(r.mean_k for r in self.runs),
                "draft_share": median(r.draft_s / r.wall_s if r.wall_s else 0.0 for r in self.runs),
                "tokens_per_s": median(r.tokens_per_s for r in self.runs),
                "plain_tokens_per_s": median(p.tokens_per_s for p in self.plains),
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
        out[x] = SessionMeasured(x, runs[x], plains, same)
    return out, plains


def session_config(k: int, sampling: SamplingConfig, max_new_tokens: int, seed: int = 0) -> DecodeConfig:
    """A session request's settings (the same for every request)."""
    return decode_config(k, sampling, max_new_tokens, seed)
