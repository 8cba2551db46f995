"""A trial, not kept (docs/copying.md, 2026-12-08): lookup's draft length chosen per pass by expected kept tokens per
unit of cost, from the text's own history of kept drafts, against the registry's rule; replayed on the cached texts.

    PYTHONPATH=$PWD .venv/bin/python docs/trials/costlen_replay.py V_JSON [float32|bfloat16]

The match is lookup's (from 2 matched tokens, following the copy); the length L maximises (1 + Σ_j≤L S(j)) ÷ v(L)
over the continuation's 24 tokens, S the survival of a drafted position estimated from the earlier passes of the
same text (a Kaplan-Meier estimate per bucket: match length 2 / 3 / ≥4 and whether the copy is followed, or one
bucket), with a prior hazard h of weight w. v is the file's v, linearly interpolated to every k ≤ 24. No model, no
clock.
"""
import itertools
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))

import copy_bound as C  # noqa: E402
import lookup_cap_replay as LC  # noqa: E402
import torch  # noqa: E402

from specviz.core import copybound as cb  # noqa: E402
from specviz.core.costmodel import passes_speedup  # noqa: E402
from specviz.proposers.base import draft_on  # noqa: E402
from specviz.proposers.lookup import PromptLookup  # noqa: E402

CAP = 24


class CostLength:
    """A replay drafter: lookup's match, its length chosen by the survival estimated so far."""

    def __init__(self, prompt: list[int], v: dict, h: float, w: float, buckets: bool):
        self.pr = PromptLookup(n_min=2, k_rule="match", factor=100.0, follow=True)   # the whole continuation
        self.pr.reset(torch.tensor(prompt))
        self.v, self.h, self.w, self.buckets = v, h, w, buckets
        self.fail: dict = {}
        self.risk: dict = {}
        self.last = None

    def _counts(self, b) -> tuple[list, list]:
        return self.fail.setdefault(b, [0.0] * (CAP + 2)), self.risk.setdefault(b, [0.0] * (CAP + 2))

    def __call__(self, ids: list[int]):
        if self.last is not None:                        # what the last draft kept: its prefix the text went on with
            b, d, t0 = self.last
            new = ids[t0:]
            kept = 0
            while kept < len(d) and kept < len(new) - 1 and d[kept] == new[kept]:
                kept += 1
            f, r = self._counts(b)
            for j in range(1, min(len(d), kept + 1) + 1):
                r[j] += 1
            if kept < len(d):
                f[kept + 1] += 1
        toks, _ = draft_on(self.pr, ids, CAP)
        self.last = None
        if not toks:
            return [], None
        b = (min(self.pr.last_n, 4), self.pr._near is not None) if self.buckets else 0
        f, r = self._counts(b)
        best, length, s, gain = 1.0, 0, 1.0, 1.0
        for j in range(1, len(toks) + 1):
            s *= 1 - (f[j] + self.h * self.w) / (r[j] + self.w)
            gain += s
            if gain / self.v[j] > best + 1e-12:
                best, length = gain / self.v[j], j
        if length:
            self.last = (b, toks[:length], len(ids))
        return toks[:length], None


def v_every_k(v: dict) -> dict:
    ks = sorted(v)
    out = {0: 1.0}
    for k in range(1, CAP + 1):
        lo = max((x for x in ks if x <= k), default=None)
        hi = min((x for x in ks if x >= k), default=None)
        if lo is None or hi is None or lo == hi:
            out[k] = v[hi if lo is None else lo]
        else:
            out[k] = v[lo] + (v[hi] - v[lo]) * (k - lo) / (hi - lo)
    return out


def main() -> None:
    v = v_every_k({int(k): x for k, x in json.load(open(sys.argv[1]))["v"].items()})
    copy, _ = C.cached_texts(list(C.BY_NAME), sys.argv[2] if len(sys.argv) > 2 else "float32", 128, False)
    novel = LC.novel_texts()
    four = [w.name for w in C.workloads.of_kind(C.workloads.COPY)]
    ceil = {n: passes_speedup(len(t), cb.ceiling(p, t, min_match=2), v) for n, (p, t) in copy.items()}

    def report(name: str, make) -> None:
        sp = {n: passes_speedup(len(t), cb.replay(p, t, make(p)), v) for n, (p, t) in {**copy, **novel}.items()}
        r = {n: sp[n] / ceil[n] for n in copy}
        held = [r[x] for x in r if x not in four]
        nv = [sp[n] for n in novel]
        print(f"{name:34s} ÷ m≥2 ceiling: four {statistics.median(r[x] for x in four):.3f} held "
              f"{statistics.median(held):.3f} all {statistics.median(r.values()):.3f}; × plain: copy-heavy median "
              f"{statistics.median(sp[n] for n in copy):.3f}, novel lowest {min(nv):.3f} median "
              f"{statistics.median(nv):.3f}", flush=True)

    def registry(sole: bool):
        def make(p):
            pr = PromptLookup(n_min=2, k_rule="match", sole=sole, follow=True)
            pr.reset(torch.tensor(p))
            return lambda c: draft_on(pr, c, CAP)
        return make

    report("lookup's rule, sole off", registry(False))
    report("lookup's rule, sole on", registry(True))
    for h, w, buckets in itertools.product((0.05, 0.1, 0.2), (1.0, 4.0), (True, False)):
        report(f"cost length h {h} w {w} buckets {buckets}", lambda p: CostLength(p, v, h, w, buckets))


if __name__ == "__main__":
    main()
