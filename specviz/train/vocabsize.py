"""Sizing the draft vocabulary by measurement (issue 24, §2).

A head drafts through the target's own output layer restricted to its draft vocabulary (proposers.vocab):
a larger vocabulary keeps more of the target's choices reachable (held-out top-1 and Σ min(p, q) rise)
but costs more per drafted token (c rises: the output layer is most of a head's step). For each size the
sweep measures, with one EAGLE head held fixed (a shipped one, or one trained quickly here at the
largest size):

- held-out top-1 and Σ min(p, q) at T = 0.8 per drafting step (train.eagle.evaluate, the split of
  train.data: prompts never trained on), the vocabulary being the size's most frequent training labels;
- c, the drafting time per drafted token ÷ one plain decode step t1, from real decode-loop runs (the
  proposer drafting over the size's ids plus the prompt's, as it does in the app)
  (engine.measure.run, timed by engine.measure.timed), interleaved with plain runs, median over repeats
  (core.costmodel.draft_cost and plain_step_time);
- v(k) through engine.passcost.measure_v;

and predicts the speedup with core.costmodel.speedup(α, k, c, v) = E[τ] ÷ (v(k) + k·c), α being the mean
held-out acceptance over the k drafting steps (top-1 for greedy decoding, Σ min(p, q) for T = 0.8). The
chosen size maximises the greedy prediction.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

from specviz.core import costmodel
from specviz.core.stats import median
from specviz.engine import measure
from specviz.engine.decode import DecodeConfig
from specviz.engine.models import LoadedModel


def parse_sizes(text: str) -> list[int]:
    """'2048,4096' -> [2048, 4096]; a clear error for anything else."""
    try:
        sizes = sorted({int(x) for x in str(text).split(",") if x.strip()})
    except ValueError:
        raise ValueError(f"--sizes must be comma-separated whole numbers, got '{text}'") from None
    if not sizes or sizes[0] < 1:
        raise ValueError(f"--sizes must be positive whole numbers, got '{text}'")
    return sizes


def _head(target: LoadedModel, corpus_dir, head_dir, run_dir: Path, steps: int, size: int, progress: bool,
          features_cache=None):
    """The EAGLE proposer to size: the one in head_dir, else one trained here for `steps` steps."""
    from specviz.engine import artifacts
    from specviz.train import jobs

    if head_dir is not None and artifacts.available(head_dir).get("eagle"):
        return artifacts.load_eagle(target, head_dir), str(head_dir)
    out = run_dir / "head"
    jobs.eagle(target, corpus_dir, run_dir / "head-run", out, steps=steps, vocab=size, progress=progress,
               features_cache=features_cache)
    return artifacts.load_eagle(target, out), f"trained here for {steps} steps at {size:,} ids"


def sweep(target: LoadedModel, corpus_dir, sizes: list[int], run_dir, head_dir=None, steps: int = 200,
          k: int = 2, passes: int = 3, repeats: int = 5, max_new: int = 32, progress: bool = False,
          features_cache=None) -> dict:
    """The table: one row per size (held-out acceptance, c, predicted speedup) and the chosen size."""
    from specviz.proposers.vocab import SubsetHead
    from specviz.train import eagle as te, jobs
    from specviz.train.data import load_split

    if not 1 <= k <= passes:
        raise ValueError(f"k must be between 1 and the evaluated passes ({passes}), got {k}")
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    train, held = load_split(corpus_dir, target=target, cache=features_cache)
    proposer, head_from = _head(target, corpus_dir, head_dir, run_dir, steps, max(sizes), progress, features_cache)
    head = copy.deepcopy(proposer.head).float()                  # evaluated in float32, as the trainer does
    embed, weight = target.model.get_input_embeddings(), target.model.get_output_embeddings().weight
    vocabs = {n: jobs._vocab(target, train, n) for n in sizes}
    rows = {}
    for n, ids in vocabs.items():
        ev = te.evaluate(head, embed, SubsetHead(weight, ids), held, train, passes)
        rows[n] = dict(size=n, ids=len(ids), top1_per_step=ev["heldout_top1_per_step"],
                       sum_min_pq_t08_per_step=ev["heldout_sum_min_pq_t08_per_step"],
                       heldout_positions=ev["heldout_positions"])
    # c per size: the proposer drafting over each vocabulary in the real decode loop, beside plain runs
    prompt = next(s["ids"][: s["prompt_len"]] for s in held).long()                 # (P,)
    cfg = lambda kk: DecodeConfig(k=kk, max_new_tokens=max_new, record=False, stop_at_eos=False)  # noqa: E731

    def run_one(n):
        if n is not None:
            proposer.base_ids = vocabs[n].to(proposer.base_ids.device)
            proposer.out.set_ids(vocabs[n])
        return measure.run(target, proposer if n is not None else None, prompt, cfg(1 if n is None else k))[1]

    run_one(sizes[0])                                                               # warm-up
    costs = {n: [] for n in sizes}
    for r in range(repeats):
        got = measure.one_repeat([None, *sizes], r, run_one)
        t1 = costmodel.plain_step_time(got[None])
        for n in sizes:
            costs[n].append(costmodel.draft_cost(got[n], t1))
    from specviz.engine.passcost import measure_v
    v = measure_v(target, ks=tuple(range(1, k + 1)), repeats=repeats)
    for n, row in rows.items():
        c = median(costs[n])
        a_greedy = sum(row["top1_per_step"][:k]) / k
        a_t08 = sum(row["sum_min_pq_t08_per_step"][:k]) / k
        row.update(c=round(c, 4), alpha_greedy=round(a_greedy, 4), alpha_t08=round(a_t08, 4),
                   tau_greedy=round(costmodel.expected_tokens_per_pass(a_greedy, k), 3),
                   speedup_greedy=round(costmodel.speedup(a_greedy, k, c, v), 3),
                   speedup_t08=round(costmodel.speedup(a_t08, k, c, v), 3))
    table = [rows[n] for n in sizes]
    best = max(table, key=lambda r: r["speedup_greedy"])["size"]
    out = dict(target=target.name, corpus=str(corpus_dir), head=head_from, k=k, passes=passes, repeats=repeats,
               max_new_tokens=max_new, v={int(a): round(b, 4) for a, b in v.items()}, rows=table, chosen=best)
    (run_dir / "vocab_size.json").write_text(json.dumps(out, indent=1))
    (run_dir / "vocab_size.md").write_text(markdown(out) + "\n")
    return out


def markdown(res: dict) -> str:
    k = res["k"]
    lines = [f"Draft vocabulary sizes for the EAGLE head ({res['head']}), k = {k}, v({k}) = {res['v'][k]:.3f}; "
             f"c is drafting time per token ÷ one plain step (median of {res['repeats']} interleaved repeats); "
             "predicted speedup = E[τ] ÷ (v(k) + k·c) from core.costmodel, α the mean held-out acceptance over "
             f"the {k} drafting steps.", "",
             "| draft vocabulary | held-out top-1 per step | Σ min(p, q) T = 0.8 per step | c | α greedy | "
             "E[τ] greedy | predicted speedup greedy | predicted speedup T = 0.8 |",
             "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        mark = " **(chosen)**" if r["size"] == res["chosen"] else ""
        lines.append(f"| {r['size']:,}{mark} | {' / '.join(f'{x:.3f}' for x in r['top1_per_step'])} | "
                     f"{' / '.join(f'{x:.3f}' for x in r['sum_min_pq_t08_per_step'])} | {r['c']:.3f} | "
                     f"{r['alpha_greedy']:.3f} | {r['tau_greedy']:.2f} | {r['speedup_greedy']:.2f}× | "
                     f"{r['speedup_t08']:.2f}× |")
    lines += ["", f"Chosen: {res['chosen']:,} ids (the highest predicted greedy speedup)."]
    return "\n".join(lines)
