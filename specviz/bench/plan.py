"""The bench's plan: what it runs (the tuning grid, the trained methods and trees, the reference rows)
and how many times. bench.main runs a Plan; bench.estimate prices one from a previous run's times."""
from __future__ import annotations

from dataclasses import dataclass

from specviz.bench.runs import Spec
from specviz.engine import workloads as W

GREEDY, SAMPLED = "greedy", "sampled"
KS, NS = (2, 4, 8), (2, 3, 4)
# a model's every drafted token costs c of about 0.04-0.11 of a plain step here, and no trained
# proposer was ever chosen at k = 8 (bench/results.md), so its grid stops at 4 (adaptive reaches 8)
KS_MODEL = (2, 4)
# adaptive k's ceiling: lookup drafts cost nothing and come right or wrong in runs, so it may grow
# further than a model's drafts, whose every token costs a draft step
ADAPTIVE_MAX_LOOKUP, ADAPTIVE_MAX_MODEL = 16, 8
QUICK_KS, QUICK_NS = (2,), (3,)          # --quick: k = 2 and adaptive only, to keep the bench working
QUICK_V_KS = (1, 4, 16)                  # --quick: v(k) at a few sizes (interpolated between)
TRAINED_METHODS = ("draft", "medusa", "eagle")  # the trained proposers the bench runs when they build
# the same heads drafting a tree (one target pass verifies it with a tree mask), at a fixed shape, not
# tuned here: Medusa's 8-node static tree (depth <= 4, one level per head); EAGLE-2's dynamic tree of 12
# nodes, depth <= 5, width 3 (proposers/medusa.py, proposers/eagle_tree.py; chosen by scripts/tree_shape.py)
TREE_DEPTH = {"medusa-tree": 4, "eagle-tree": 5}    # its chain: engine.methods.ARTIFACT[tree]
TREE_V_KS = (4, 8, 12, 16, 20, 24)       # v of a tree of m nodes is the entry for m - 1 drafted nodes
REFERENCE_LABELS = ("hf plain", "hf lookup k=10", "hf lookup (specviz's k)", "hf assisted (drafter)",
                    "lookup (recording off)")   # rows run in the first ref_repeats greedy repeats only


@dataclass
class Plan:
    workloads: list
    repeats: int = 3         # greedy timed repeats
    ref_repeats: int = 2     # of which the reference rows (REFERENCE_LABELS) run in the first ref_repeats
    seeds: tuple = (1, 2, 3)
    tune_seed: int = 0
    tune_per_kind: int = 1   # tuning runs on the first workload(s) of each kind; timing on all
    max_new: int = 128
    tune_new: int = 48       # tuning only ranks settings
    equality_new: int = 64   # float32 equality pass
    temperature: float = 0.8
    quick: bool = False

    def tuning_workloads(self, mode: str) -> list:
        ws = self.workloads if mode == GREEDY else [w for w in self.workloads if w.kind == W.NOVEL]
        kinds = dict.fromkeys(w.kind for w in ws)
        return [w for kind in kinds for w in [x for x in ws if x.kind == kind][: self.tune_per_kind]]


def is_tree(method: str) -> bool:
    return method in TREE_DEPTH


def tree_spec(method: str) -> Spec:
    return Spec(method, "specviz", method, TREE_DEPTH[method])


def candidates(method: str, quick: bool = False) -> list[Spec]:
    """The fixed tuning grid: k in {2,4,8} (x n in {2,3,4} for lookup), and adaptive k (up to 16 for
    lookup, 8 for the model-based proposers); a tree's one fixed shape."""
    if is_tree(method):
        return [tree_spec(method)]
    ks, ns = (QUICK_KS, QUICK_NS) if quick else (KS, NS)
    if method == "lookup":
        fixed = [Spec(method, "specviz", method, k, n) for k in ks for n in ns]
        return fixed + [Spec(method, "specviz", method, ADAPTIVE_MAX_LOOKUP, n, adaptive=True) for n in ns]
    return [Spec(method, "specviz", method, k) for k in (QUICK_KS if quick else KS_MODEL)] + \
        [Spec(method, "specviz", method, ADAPTIVE_MAX_MODEL, adaptive=True)]
