"""The lesson "token-wise verification is not optimal" (lessons.md concept 19): the paper's toy example by hand,
then block vs token-wise verification on real sampled runs of one chain method at the same seeds.

Source: Sun et al. 2024, "Block Verification Accelerates Speculative Decoding" (arXiv 2403.10444), section 2: a
context-free target p = (1/3, 2/3) and drafter q = (2/3, 1/3) over two tokens, k = 2 drafts. Token-wise verification
keeps 10/9 drafts per step in expectation, block verification 11/9. The weights come from core/block.py, the
functions the decode loop verifies with.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import torch

from specviz.core.block import block_weights, stop_probabilities
from specviz.core.errors import InputError
from specviz.core.records import RunSummary, StepRecord
from specviz.core.stats import median
from specviz.engine import measure, methods as M
from specviz.engine.decode import DecodeConfig
from specviz.engine.experiment import Experiment, Setting
from specviz.engine.workloads import get
from specviz.teach.guess import Guess

TOY_P = (1 / 3, 2 / 3)   # the target over tokens A, B, whatever came before
TOY_Q = (2 / 3, 1 / 3)   # the drafter
TOY_K = 2
TOKENS = "AB"
# the last rule is a shortcut for the tests' negative control: stop at i with weight p_i instead of h_i (it ignores
# the residual mass rho_i, keeps more than block verification, and its output does not follow p)
RULES = ("token", "block", "backed only")


def toy_rows(p=TOY_P, q=TOY_Q, k: int = TOY_K) -> list[dict]:
    """Every draft of k tokens: its probability under q, the token-wise ratios, block's p_i and h_i, and the drafts
    each rule keeps in expectation given that draft."""
    V = len(p)
    P = torch.tensor([p] * (k + 1), dtype=torch.float64)   # (k+1, V): context-free, every row the same
    Q = torch.tensor([q] * k, dtype=torch.float64)         # (k, V)
    rows = []
    for draft in itertools.product(range(V), repeat=k):
        w = block_weights(torch.tensor(draft), Q, P)
        reach, token = 1.0, 0.0
        for r in w.ratios:                                 # token-wise: X_i kept while every test so far passed
            reach *= min(1.0, r)
            token += reach
        rows.append({"draft": "".join(TOKENS[x] if V <= len(TOKENS) else str(x) for x in draft),
                     "q(draft)": float(torch.prod(torch.tensor([q[x] for x in draft], dtype=torch.float64))),
                     "ratios p/q": [round(r, 3) for r in w.ratios], "p_i (backed)": [round(b, 3) for b in w.backed],
                     "h_i": [round(h, 3) for h in w.h],
                     "token": token,
                     "block": sum(i * s for i, s in enumerate(stop_probabilities(w.h))),
                     "backed only": sum(i * s for i, s in enumerate(stop_probabilities(w.backed)))})
    return rows


def expected_kept(rows: list[dict], rule: str) -> float:
    """E[drafts kept per step] under `rule`: Σ over drafts of q(draft) × what the rule keeps given it."""
    if rule not in RULES:
        raise InputError(f"unknown rule '{rule}' (choose from: {', '.join(RULES)})")
    return sum(r["q(draft)"] * r[rule] for r in rows)


def as_fraction(x: float) -> str:
    f = Fraction(x).limit_denominator(1000)
    return f"{f.numerator}/{f.denominator}"


# -- measured: the same chain method and seeds, verified both ways ---------------------------------------------
CHAIN_METHODS = ("draft", "eagle", "eagle3", "medusa")   # chains whose q is a real distribution (not one-hot)
VERIFIES = ("token", "block")
MORE = ("block verification", "token-wise verification", "the same")
SAME = 0.03      # τ within 3% either way counts as "the same": separate sampled runs differ by more than the rule


def plan(method: str, workload: str, k: int, new_tokens: int, seeds: tuple[int, ...],
         temperature: float = 0.8) -> Experiment:
    if method not in CHAIN_METHODS:
        raise InputError(f"block verification here compares chain drafters with a real q: {', '.join(CHAIN_METHODS)}")
    if not seeds:
        raise InputError("at least one seed")
    if temperature <= 0:
        raise InputError("block and token-wise verification keep the same tokens when greedy: sample (T > 0)")
    return Experiment(tuple(Setting.resolve(method, k, verify=v) for v in VERIFIES), (workload,), new_tokens,
                      temperature, seeds=tuple(seeds), against_plain=False)


def guess(ex: Experiment) -> Guess:
    return Guess(f"which keeps more tokens per pass τ (the median over these seeds; 'the same': within {SAME:.0%})",
                 "more", choices=MORE, experiment=ex.describe())


@dataclass
class BlockComparison:
    """Block against token-wise verification on the same seeds: the lesson's table and each verification's τ, the
    median over seeds of each run's τ (docs/metrics.md "Over several runs"; not a measured speedup:
    engine/measure.Measured is that)."""
    rows: list[dict]          # one per (seed, verify): τ, kept, passes
    tau: dict                 # {verify: the median over seeds of each run's τ (emitted ÷ passes)}
    paired_block: int         # in the block runs: drafts kept by block verification ...
    paired_token: int         # ... and by token-wise verification on the same drafts with the same uniforms
    paired_steps: int


def run(target, ex: Experiment, drafter=None, progress=None) -> BlockComparison:
    """Every seed verified both ways through engine/measure.run (the measuring path, inside the model's turn)."""
    s0, w = ex.settings[0], get(ex.workloads[0])
    ids = M.encode_prompt(target.tokenizer, w.prompt, w.chat)
    rows, runs = [], {v: [] for v in VERIFIES}
    pb = pt = n = 0
    total, done = len(ex.seeds) * len(VERIFIES), 0
    for seed in ex.seeds:
        for v in VERIFIES:
            prop = M.make_proposer(s0.method, target, drafter=drafter)
            cfg = DecodeConfig(k=s0.k, max_new_tokens=ex.new_tokens, sampling=ex.sampling, seed=seed, verify=v,
                               record=False)
            summary, steps = measure.run(target, prop, ids, cfg, target.tokenizer.eos_token_id)
            runs[v].append(summary)
            rows.append(_row(seed, v, summary))
            if v == "block":
                b, t, m = paired(steps)
                pb, pt, n = pb + b, pt + t, n + m
            done += 1
            if progress:
                progress(done / total, f"seed {seed}, {v}-wise")
    tau = {v: median(s.tokens_per_pass for s in runs[v]) or 0.0 for v in VERIFIES}
    return BlockComparison(rows, tau, pb, pt, n)


def _row(seed: int, verify: str, s: RunSummary) -> dict:
    return {"seed": seed, "verification": verify + "-wise" if verify == "token" else "block",
            "tokens per pass τ": round(s.tokens_per_pass, 3), "drafts kept": s.accepted,
            "target passes": s.target_passes}


def paired(steps: list[StepRecord]) -> tuple[int, int, int]:
    """(drafts block kept, drafts token-wise would have kept with the same uniforms, steps that drafted)."""
    drafted = [r for r in steps if r.block is not None and r.n_drafted]
    return (sum(r.block.n_accepted for r in drafted), sum(r.block.token_wise_kept for r in drafted), len(drafted))


def truth(m: BlockComparison) -> dict:
    b, t = m.tau["block"], m.tau["token"]
    return {"more": MORE[2] if abs(b - t) <= SAME * t else MORE[0] if b > t else MORE[1]}
