"""Lookup's match rule replayed with other settings on the cached copy texts, priced with one machine's v(k).

    PYTHONPATH=$PWD .venv/bin/python scripts/lookup_rule_sweep.py [V_JSON]

Each setting's cost-model speedup ÷ the m≥2 ceiling's (as scripts/copy_bound.py --held-out), on the float32 texts of
data/copy_texts (the bench's four copy-heavy workloads and the seven held-out ones); v from a bench or cost-check
JSON's "v" (default: data/costcheck/cpu-avx2-2026-12-07.json, the AVX2 EPYC's v to 24). No model, no clock.
"""
import itertools
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))

import copy_bound as C  # noqa: E402
import torch  # noqa: E402

from specviz.core import copybound as cb  # noqa: E402
from specviz.core.costmodel import passes_speedup  # noqa: E402
from specviz.proposers.base import draft_on  # noqa: E402
from specviz.proposers.lookup import PromptLookup  # noqa: E402

V_DEFAULT = "data/costcheck/cpu-avx2-2026-12-07.json"


def main() -> None:
    texts, _ = C.cached_texts(list(C.BY_NAME), "float32", 128, False)
    v = {int(k): x for k, x in json.load(open(sys.argv[1] if len(sys.argv) > 1 else V_DEFAULT))["v"].items()}
    v[0] = 1.0
    four = [w.name for w in C.workloads.of_kind(C.workloads.COPY)]
    ceil = {n: passes_speedup(len(t), cb.ceiling(p, t, min_match=2), v) for n, (p, t) in texts.items()}
    for n_min, factor, sole, cap in itertools.product((2, 3, 4), (2.0, 4.0, 8.0), (True, False), (24, 16)):
        r = {}
        for n, (p, t) in texts.items():
            pr = PromptLookup(n_min=n_min, k_rule="match", factor=factor, sole=sole, follow=True)
            pr.reset(torch.tensor(p))
            r[n] = passes_speedup(len(t), cb.replay(p, t, lambda ctx: draft_on(pr, ctx, cap)), v) / ceil[n]
        held = [r[x] for x in r if x not in four]
        print(f"n_min {n_min} factor {factor} sole {sole} cap {cap}: four {statistics.median(r[x] for x in four):.3f} "
              f"held {statistics.median(held):.3f} all {statistics.median(r.values()):.3f}", flush=True)


if __name__ == "__main__":
    main()
