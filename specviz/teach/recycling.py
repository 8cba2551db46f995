"""The lesson "the target's trash is a free drafter" (lessons.md concept 18): guess τ of token recycling on a
novel prompt with an empty table, run it, then watch the adjacency table fill over a session of novel prompts.

Token recycling: Luo et al. 2024, "Turning Trash into Treasure" (arXiv 2408.08696); the proposer is
proposers/recycle.py, the table core/recycle.py. Every number here comes from step records: each carries the table's
size when that step drafted (StepRecord.table_rows, the proposer's own state) and the nodes it could read.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from specviz.core.errors import InputError
from specviz.core.records import RunSummary, StepRecord
from specviz.engine import methods as M, sessions as SE
from specviz.engine.comparisons import decode_config, run_one
from specviz.engine.experiment import Experiment, Setting
from specviz.engine.workloads import NOVEL, SESSION, Session, get, of_kind
from specviz.teach.guess import Guess

METHOD = "recycle"


def novel_prompts() -> list[str]:
    """The workloads the lesson offers: the novel ones (nothing to copy from the context)."""
    return [w.name for w in of_kind(NOVEL)]


def setting(nodes: int | None = None) -> Setting:
    """recycle at its registry settings, with this tree size (None: the registry's); refused outside 1..64, as the
    proposer itself refuses it (checked here before any model work)."""
    s = Setting.resolve(METHOD)
    s = s if nodes is None else replace(s, knobs=(("nodes", int(nodes)),))
    M.check_settings(METHOD, recycle=dict(nodes=s.nodes))
    return s


def plan(workload: str, new_tokens: int, nodes: int | None = None) -> Experiment:
    """One greedy run of recycle on one novel prompt, its table empty at the start."""
    if workload not in novel_prompts():
        raise InputError(f"'{workload}' is not a novel workload (choose from: {', '.join(novel_prompts())})")
    return Experiment((setting(nodes),), (workload,), new_tokens, against_plain=False,
                      target="the loaded target, its adjacency table empty at the start")


def guess(ex: Experiment) -> Guess:
    return Guess("τ, the tokens per pass token recycling will keep on this novel prompt (plain decoding: 1.0)",
                 "tau", lo=1.0, hi=8.0, step=0.05, rel=0.1, abs_tol=0.1, experiment=ex.describe())


def proposer(target, ex: Experiment):
    return M.make_proposer(METHOD, target, recycle=dict(nodes=ex.settings[0].nodes))


def run(target, ex: Experiment) -> tuple[RunSummary, list[StepRecord]]:
    """The plan's run through engine/measure.run (engine.comparisons.run_one: the measuring path)."""
    s = ex.settings[0]
    return run_one(target, get(ex.workloads[0]), METHOD, s.k, None, ex.sampling, ex.new_tokens,
                   proposer=proposer(target, ex))


def truth(summary: RunSummary) -> dict:
    return {"tau": summary.tokens_per_pass}


def session_plan(new_tokens: int, nodes: int | None = None) -> Experiment:
    """Every novel prompt in order through one recycle proposer that keeps its table between requests."""
    return Experiment((setting(nodes),), tuple(novel_prompts()), new_tokens, against_plain=False,
                      target="the loaded target, one request after another, the table kept from one to the next")


def session_of(ex: Experiment) -> Session:
    return Session("novel-session", SESSION, "the novel prompts in order", tuple(get(w) for w in ex.workloads))


def run_session(target, ex: Experiment, cache: bool = True) -> SE.SessionRun:
    """The session through engine/sessions.run_session (each request a measure.run). cache on: remember()
    after each request, so the next one starts from the table the earlier ones filled; off: a fresh proposer, its
    table empty but for its own prompt's rows, for every request."""
    s = ex.settings[0]
    cfg = decode_config(s.k, ex.sampling, ex.new_tokens, 0)
    return SE.run_session(target, session_of(ex), lambda: proposer(target, ex), cfg, cache=cache,
                          method=METHOD)


@dataclass
class PassRow:
    request: str
    pass_in_session: int       # 1-based, over the whole session
    table_rows: int            # token ids with a row when this pass drafted
    nodes: int                 # nodes the table could fill this pass
    hit: float                 # nodes ÷ the tree's size
    kept: int                  # drafts kept


def filling(names: list[str], steps: list[list[StepRecord]], tree_nodes: int) -> list[PassRow]:
    """One row per target pass of the session, from the step records alone."""
    out, i = [], 0
    for name, run_steps in zip(names, steps):
        for r in run_steps:
            i += 1
            out.append(PassRow(name, i, r.table_rows or 0, r.n_drafted, r.n_drafted / tree_nodes, r.n_accepted))
    return out


def per_request(names: list[str], summaries: list[RunSummary], rows: list[PassRow]) -> list[dict]:
    """τ, mean nodes read and the table's size at the start and the end of each request."""
    out = []
    for name, s in zip(names, summaries):
        mine = [r for r in rows if r.request == name]
        out.append({"request": name, "tokens per pass τ": round(s.tokens_per_pass, 2),
                    "nodes read per pass": round(sum(r.nodes for r in mine) / len(mine), 1) if mine else 0.0,
                    "table rows at its first pass": mine[0].table_rows if mine else 0,
                    "at its last pass": mine[-1].table_rows if mine else 0})
    return out


def side_by_side(names: list[str], kept: list[RunSummary], fresh: list[RunSummary], kept_rows: list[PassRow],
                 fresh_rows: list[PassRow]) -> list[dict]:
    """Per request, the same greedy text decoded with the table kept from the earlier requests and with a fresh one:
    τ and the table's rows at the request's first pass, both ways."""
    out = []
    for name, k, f in zip(names, kept, fresh):
        first = {w: next((r.table_rows for r in rows if r.request == name), 0)
                 for w, rows in (("kept", kept_rows), ("fresh", fresh_rows))}
        out.append({"request": name, "τ, table kept": round(k.tokens_per_pass, 2),
                    "τ, fresh table": round(f.tokens_per_pass, 2),
                    "rows at its first pass, kept": first["kept"], "rows at its first pass, fresh": first["fresh"]})
    return out
