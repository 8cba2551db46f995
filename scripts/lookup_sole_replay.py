"""Where lookup's sole option stops paying, by replay: the threshold behind proposers/lookup.SOLE_MAX_V.

    PYTHONPATH=$PWD .venv/bin/python scripts/lookup_sole_replay.py [V_JSON]

Replays the registry's lookup at cap 24 with and without the sole option (a 2-token match seen once before drafts
all 24) on greedy plain decoding's own texts — the eleven copy-heavy texts of data/copy_texts and the four novel
bench workloads of data/novel_texts (float32, 128 tokens; lookup_cap_replay.py) — and prices every pass with a v
scaled between free passes and one machine's own, v_s(k) = 1 + s·(v(k) − 1) (v from V_JSON's "v", default the AVX2
EPYC's v to 24), then with each committed bench's v (held flat beyond its largest k, as the cost model does).
Decode only, no clock (core.costmodel.passes_speedup). Prints, per v, the novel lowest and median and the copy-heavy
median with the option and without: the copy-heavy median (what the option was kept for) says where it pays.
"""
import glob
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))

import copy_bound as C  # noqa: E402
import lookup_cap_replay as L  # noqa: E402

from specviz.core.costmodel import passes_speedup  # noqa: E402
from specviz.proposers.lookup import MAX_MATCH, SOLE_MAX_V  # noqa: E402

SCALES = (0.0, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6, 0.8, 1.0, 1.2)


def row(label: str, v: dict, runs: dict, novel: list, copy: list) -> str:
    cells = []
    for sole in (True, False):
        sp = {n: passes_speedup(T, d, v) for n, (T, d) in runs[sole].items()}
        nv, cp = [sp[n] for n in novel], [sp[n] for n in copy]
        cells.append(f"{min(nv):.3f} | {statistics.median(nv):.3f} | {statistics.median(cp):.3f}")
    wide = v.get(MAX_MATCH, v[max(v)])
    return f"| {label} | {wide:.2f} | " + " | ".join(cells) + " |"


def main() -> None:
    v0 = {int(k): x for k, x in json.load(open(sys.argv[1] if len(sys.argv) > 1 else L.V_DEFAULT))["v"].items()}
    copy, _ = C.cached_texts(list(C.BY_NAME), "float32", 128, False)
    novel = L.novel_texts()
    texts = {**novel, **copy}
    runs = {sole: L.drafted_passes(texts, sole, MAX_MATCH) for sole in (True, False)}
    print(f"SOLE_MAX_V = {SOLE_MAX_V}; v(k) of {sys.argv[1] if len(sys.argv) > 1 else L.V_DEFAULT}: {v0}")
    print("| v | v(24) | on: novel lowest | on: novel median | on: copy-heavy median (11) | off: novel lowest "
          "| off: novel median | off: copy-heavy median (11) |\n|---|---|---|---|---|---|---|---|")
    for s in SCALES:
        print(row(f"scaled {s:g}", {k: 1 + s * (x - 1) for k, x in v0.items()}, runs, list(novel), list(copy)))
    for path in sorted(glob.glob("bench/results/*/results.json")):
        v = {int(k): float(x) for k, x in (json.load(open(path)).get("v") or {}).items()}
        if v:
            v[MAX_MATCH] = v.get(MAX_MATCH, v[max(v)])                     # flat beyond the largest measured k
            print(row(f"bench {os.path.basename(os.path.dirname(path))}", v, runs, list(novel), list(copy)))


if __name__ == "__main__":
    main()
