"""Chain vs tree on the same heads: the Trees lesson's live measurement (also a script's).

Each family (Medusa, EAGLE) drafts a chain and a tree from the same shipped weights; every run is
measured against plain decoding by engine.measure (same prompt, same settings, interleaved).
"""
from __future__ import annotations

from dataclasses import dataclass

from specviz.engine.decode import DecodeConfig
from specviz.engine.measure import against_plain
from specviz.engine.methods import make_proposer, tree_pairs

PAIRS = tree_pairs()   # {heads: (chain method, tree method)}, from the method registry


@dataclass
class ChainVsTree:
    method: str
    tokens_per_pass: float       # τ
    nodes_per_pass: float        # drafted tokens per target pass (k̄; for a tree, its nodes)
    speedup: float               # tokens/s ÷ plain tokens/s, measured alongside
    identical: bool | None       # greedy: same tokens as plain (None when sampling)
    divergence: str = ""         # greedy, not identical: where and whether at a near-tie (neartie.Divergence)


def chain_vs_tree(target, family: str, prompt_ids, cfg: DecodeConfig, eos=None, repeats: int = 1,
                  progress=None) -> list[ChainVsTree]:
    out = []
    for j, m in enumerate(PAIRS[family]):
        chk = against_plain(target, lambda m=m: make_proposer(m, target), prompt_ids, cfg, eos, repeats=repeats,
                            progress=(lambda f, t, j=j: progress((j + f) / 2, f"{PAIRS[family][j]}: {t}"))
                            if progress else None)
        s = chk.summary
        out.append(ChainVsTree(m, s.tokens_per_pass, s.mean_k, chk.speedup, chk.identical if chk.compared else None,
                               chk.divergence.describe() if chk.divergence else ""))
    return out
