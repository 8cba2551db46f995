"""The bench's plan: what it runs (the tuning grid of the trained methods, the copying methods at their
defaults, the trees, the reference rows, the sessions) and how many times. bench.main runs a Plan; bench.estimate
prices one from a previous run's times."""
from __future__ import annotations

from dataclasses import dataclass, replace

from specviz.bench.runs import Spec
from specviz.engine import workloads as W
from specviz.engine.methods import COPY, REGISTRY, names

GREEDY, SAMPLED = "greedy", "sampled"
KS = (2, 4, 8)
# the copying methods run at their defaults, untuned (issue 23 §1): lookup's match rule and suffix size
# their own drafts, up to SELF_SIZED_CAP tokens (vLLM's suffix depth, 24); lookup drafts from a MATCH_MIN-token match
UNTUNED = tuple(names(family=COPY, bench=True))
# a model's every drafted token costs c of about 0.04-0.11 of a plain step here, and no trained
# proposer was ever chosen at k = 8 (bench/results.md), so its grid stops at 4 (adaptive reaches 8)
KS_MODEL = (2, 4)
# adaptive k's ceiling for the model-based proposers (each drafted token costs a draft step)
ADAPTIVE_MAX_MODEL = 8
QUICK_KS = (2,)                          # --quick: k = 2 and adaptive only, to keep the bench working
QUICK_V_KS = (1, 4, 16)                  # --quick: v(k) at a few sizes (interpolated between)
TRAINED_METHODS = tuple(names(trained=True, tree=False, bench=True))  # the trained chains the bench tunes
# the same heads drafting a tree (one target pass verifies it with a tree mask), at the fixed shape of their
# registry entry (k = the depth), not tuned here
TREES = tuple(names(trained=True, tree=True, bench=True))
TREE_V_KS = (4, 8, 12, 16, 20, 24)       # v of a tree of m nodes is the entry for m - 1 drafted nodes
REFERENCE_LABELS = ("hf plain", "hf lookup k=10", "hf assisted (drafter)",
                    "lookup (recording off)")   # rows run in the first ref_repeats greedy repeats only
# the session phase (issue 23 §3): each session's requests in order, plain and these rows, greedy
# token vs block verification (issue 35 §2): on the sampled workloads every chain row also runs verified as one block
# (core/block.py), same setting and seeds; greedy needs none (block keeps the same prefix as token-wise there)
BLOCK = " (block)"
BLOCK_CHAINS = ("lookup",) + TRAINED_METHODS
SESSION_ROWS = (("suffix (cache on)", "suffix", True), ("suffix (cache off)", "suffix", False),
                ("lookup", "lookup", False))


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
    sessions: list = None    # the session workloads (None: every one in engine.workloads.SESSIONS)
    session_repeats: int = 2
    session_new: int = 64    # new tokens per request

    def __post_init__(self):
        if self.sessions is None:
            self.sessions = list(W.SESSIONS)

    def tuning_workloads(self, mode: str) -> list:
        ws = self.workloads if mode == GREEDY else [w for w in self.workloads if w.kind == W.NOVEL]
        kinds = dict.fromkeys(w.kind for w in ws)
        return [w for kind in kinds for w in [x for x in ws if x.kind == kind][: self.tune_per_kind]]


def block_spec(spec: Spec) -> Spec:
    """The same chain row verified as one block: label 'eagle (block)'."""
    return replace(spec, label=spec.label + BLOCK, verify="block")


def block_rows(specs: list[Spec]) -> list[Spec]:
    """The block twins of the specviz chain rows among `specs`."""
    return [block_spec(s) for s in specs if s.engine == "specviz" and s.method in BLOCK_CHAINS and s.verify == "token"]


def is_tree(method: str) -> bool:
    """A trained tree, run at one fixed shape (suffix, a copying tree, runs at its defaults like lookup)."""
    return method in TREES


def tree_spec(method: str) -> Spec:
    return Spec(method, "specviz", method, REGISTRY[method].k)


def default_spec(method: str) -> Spec:
    """A copying method at its registry defaults (UNTUNED): drafts as far as the match goes, at most its k."""
    d = REGISTRY[method].defaults
    return Spec(method, "specviz", method, d["k"], d.get("n", 3))


def tuned(method: str) -> bool:
    """Whether the bench tunes this method (the trained chains); trees and the copying methods run one setting."""
    return not is_tree(method) and method not in UNTUNED


def candidates(method: str, quick: bool = False) -> list[Spec]:
    """The fixed tuning grid of the trained chains: k in {2,4} and adaptive k up to 8; a tree's one fixed
    shape; a copying method's default."""
    if is_tree(method):
        return [tree_spec(method)]
    if method in UNTUNED:
        return [default_spec(method)]
    return [Spec(method, "specviz", method, k) for k in (QUICK_KS if quick else KS_MODEL)] + \
        [Spec(method, "specviz", method, ADAPTIVE_MAX_MODEL, adaptive=True)]
