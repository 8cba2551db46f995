"""Lookup's rule against transformers' prompt lookup rule (k = 10) on the same texts, priced with one machine's v.

    PYTHONPATH=$PWD .venv/bin/python docs/trials/hf_rule_replay.py V_JSON [float32|bfloat16]

transformers' PromptLookupCandidateGenerator, as its source reads (generation/candidate_generator.py): for n from
max_matching_ngram_size (2) down to 1, the earliest earlier window equal to the last n tokens that has a non-empty
continuation, and up to 10 tokens after it. specviz's lookup: the registry's rule (from 2 matched tokens, 4 × the
match, following the copy), with and without the sole option. Each text's cost-model decode-only speedup (tokens ÷
Σ v(drafted)), no model, no clock; the cached texts of data/copy_texts and data/novel_texts (scripts/copy_bound.py,
scripts/lookup_cap_replay.py).
"""
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


def hf_draft(ids: list[int], k: int = 10, n_max: int = 2) -> tuple[list[int], None]:
    T = len(ids)
    for n in range(n_max, 0, -1):
        tail = ids[T - n:]
        for i in range(0, T - n):
            if ids[i:i + n] == tail and i + n < T:
                return ids[i + n:min(i + n + k, T)], None
    return [], None


def main() -> None:
    v = {int(k): x for k, x in json.load(open(sys.argv[1]))["v"].items()}
    v[0] = 1.0
    copy, _ = C.cached_texts(list(C.BY_NAME), sys.argv[2] if len(sys.argv) > 2 else "float32", 128, False)
    novel = LC.novel_texts()
    four = [w.name for w in C.workloads.of_kind(C.workloads.COPY)]
    for sole in (False, True):
        r = {}
        for n, (p, t) in {**copy, **novel}.items():
            pr = PromptLookup(n_min=2, k_rule="match", sole=sole, follow=True)
            pr.reset(torch.tensor(p))
            ours = passes_speedup(len(t), cb.replay(p, t, lambda c: draft_on(pr, c, 24)), v)
            hf = passes_speedup(len(t), cb.replay(p, t, hf_draft), v)
            r[n] = ours / hf
            print(f"sole {'on ' if sole else 'off'} {n:26s} lookup {ours:.3f} hf {hf:.3f} ratio {r[n]:.3f}")
        med = {name: statistics.median(r[n] for n in names) for name, names in
               (("the bench's four", four), ("all eleven copy-heavy", copy), ("novel", novel))}
        said = ", ".join(f"{k} {x:.3f}" for k, x in med.items())
        print(f"sole {'on' if sole else 'off'}: lookup ÷ hf, median: {said}")


if __name__ == "__main__":
    main()
