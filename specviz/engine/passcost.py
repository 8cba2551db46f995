"""Measured costs, relative to one plain target decode step t1 (docs/metrics.md): v(k) and c.

v(k) = time of one target pass over k+1 new positions / t1, one definition (`v_of_rounds`): sizes
       interleaved in rounds (the rotation of engine/measure.one_repeat), each round's t(k) / t1 of the same
       round, the median over rounds with the spread (IQR, or range, over rounds) beside it. Timed two ways:
       `measure_v` as decode-loop steps at batch 1 (the verify pass with its acceptance and cache rollback),
       as the bench's runs are; `measure_v_batch` as a bare forward of B sequences over a KV cache (the batch
       and roofline labs: the decode loop runs one sequence).
c    = time to draft one token / t1 (from a run's step records).
These machines are noisy: a v(k) whose spread is larger than its distance from 1 is too noisy to quote.
"""
from __future__ import annotations

import torch
from transformers import DynamicCache

from specviz.core.stats import median, spread
from specviz.engine import measure
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import LoadedModel
from specviz.proposers.base import Context, Draft, Proposer

V_KS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24)  # the draft lengths whose v(k) the app and the bench measure:
# up to 24, the longest draft lookup and suffix make (the cost model holds v flat beyond the largest measured k)


class VTable(dict):
    """{k: v(k)}, each the median over interleaved rounds of that round's ratio; `spread` {k: IQR
    (or range, with fewer than 4 rounds) of those ratios}; `t1` the median seconds of the one-token pass (None
    when not kept). Use it as the calculator's table; quote a single v(k) through quote(k), which refuses when
    the spread exceeds |v(k) - 1|."""

    def __init__(self, v: dict[int, float], spread: dict[int, float | None], rounds: int, t1: float | None = None):
        super().__init__(v)
        self.spread, self.rounds, self.t1 = spread, rounds, t1

    def too_noisy(self, k: int) -> bool:
        return measure.too_noisy(self[k], self.spread.get(k))

    def quote(self, k: int) -> str:
        return measure.quote(self[k], self.spread.get(k), self.rounds, unit="")


def v_of_rounds(rounds: list[dict[int, float]]) -> VTable:
    """v(k) from interleaved rounds, the one definition: each round's {k: seconds} (k = 0: the one-token pass
    t1) gives t(k) / t1 of that round; v(k) = the median over rounds, with their spread; t1 = its median."""
    ks = [k for k in rounds[0] if k] if rounds else []
    ratios = {k: [r[k] / r[0] for r in rounds] for k in ks}
    return VTable({k: median(ratios[k]) for k in ks}, {k: spread(ratios[k]) for k in ks}, len(rounds),
                  median(r[0] for r in rounds))


class RandomDraft(Proposer):
    """A measuring device: always drafts exactly k random tokens (almost surely rejected), so every
    step is a verify pass over k+1 positions followed by the same rollback a real rejection does.
    tree=True: the k tokens form a binary tree (node i under node (i-1)//2), verified with the tree mask."""

    name = "random-draft"
    deterministic = True

    def __init__(self, vocab: int, seed: int = 0, tree: bool = False):
        self.vocab, self.g, self.tree = vocab, torch.Generator().manual_seed(seed), tree

    def propose(self, ctx: Context, k: int) -> Draft:
        parents = [(i - 1) // 2 for i in range(k)] if self.tree else None
        return Draft(tokens=torch.randint(0, self.vocab, (k,), generator=self.g), parents=parents)  # (k,)


def measure_v(target: LoadedModel, ks=V_KS, context: int = 256, repeats: int = 7,
              progress=None, prompt_ids=None, steps_per_round: int = 2, tree: bool = False) -> VTable:
    """v(k) measured through the decode loop itself (decode.Decoder), not a bare forward: in each
    round, t(k) = median verify time of that round's steps that fed k+1 positions and t1 = the same
    for plain steps (0 drafted); v(k) = median over rounds of t(k)/t1, with the IQR over rounds.
    tree=True: k drafted nodes in a tree, so v of an m-node tree is the entry for k = m - 1.
    Every decoder runs over the same prompt (`prompt_ids`, else `context` random tokens). Rounds
    interleave the sizes, so a noisy minute hits all of them alike."""
    room = (repeats + 1) * steps_per_round * (max(ks) + 1) + 2
    if prompt_ids is None:
        context = max(1, min(context, target.context_window - room - max(ks) - 2))  # fits small test models
        g = torch.Generator().manual_seed(0)
        prompt_ids = torch.randint(0, target.vocab_size, (context,), generator=g)  # (context,)
    decoders = {}
    for k in (0, *ks):  # one prefill per size, outside the timing
        cfg = DecodeConfig(k=max(1, k), max_new_tokens=room, record=False, stop_at_eos=False)
        decoders[k] = Decoder(target, RandomDraft(target.vocab_size, k, tree) if k else None, prompt_ids, cfg)
        decoders[k].prefill()
    for d in decoders.values():  # warm-up step
        d.step()
    rounds = []
    for r in range(repeats):  # interleaved as every measurement is: plain (k = 0) and each size once, rotated
        with measure.turn():   # a round's sizes timed inside the session's turn (ui/turns.py, in the app)
            rounds.append(measure.one_repeat([0, *ks], r, lambda k: median(decoders[k].step().verify_s
                                                                           for _ in range(steps_per_round))))
        if progress:
            progress((r + 1) / repeats)
    return v_of_rounds(rounds)


def measure_v_batch(model, vocab: int, batch: int, ks=(1, 4, 8), context: int = 128, repeats: int = 5,
                    generator: torch.Generator | None = None) -> VTable:
    """v_B(k) at one batch size B, as a bare forward (the decode loop runs one sequence): each size's pass feeds
    k + 1 random tokens to each of B sequences over a KV cache of `context` tokens, timed by measure.timed and
    cropped back; rounds as v_of_rounds takes them (the first one warms up and is dropped). VTable.t1: the
    batch's one-token pass, seconds."""
    dev = next(model.parameters()).device
    g = generator if generator is not None else torch.Generator().manual_seed(0)
    ids = torch.randint(0, vocab, (batch, context), generator=g).to(dev)           # (B, context)
    cache = DynamicCache(config=model.config)

    def one_pass(k: int) -> float:
        x = torch.randint(0, vocab, (batch, k + 1), generator=g).to(dev)           # (B, k+1)
        _, secs = measure.timed(dev, lambda: model(input_ids=x, cache=cache, use_cache=True))
        cache.crop(-(k + 1))
        return secs

    with torch.inference_mode():
        model(input_ids=ids, cache=cache, use_cache=True, logits_to_keep=1)
        rounds = [measure.one_repeat([0, *ks], r, one_pass) for r in range(repeats + 1)]
    return v_of_rounds(rounds[1:])
