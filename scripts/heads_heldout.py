"""Held-out top-1 and Σ min(p, q) at T = 0.8 of shipped (or candidate) EAGLE / EAGLE-3 / Medusa / drafter artefacts,
on the held-out sequences of one corpus folder, so artefacts trained on different corpora compare on the same text.

    .venv/bin/python scripts/heads_heldout.py --corpus runs/corpus,runs/corpus-s1 --folder corpus-s1 \
        --models models runs/eagle-kl/models [--kinds eagle,eagle3,medusa,drafter] [--unseen-by runs/corpus,...]

The held-out split is the training jobs' own (a hash of the prompt: 6% of distinct prompts); only sequences
from --folder are scored. --unseen-by drops every sequence whose prompt occurs anywhere in those folders, so
artefacts trained on them (under any split) are scored on prompts they never saw.
"""
import argparse
import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from specviz.engine import artifacts  # noqa: E402
from specviz.engine.models import load_model  # noqa: E402
from specviz.train import corpus, drafter as td, eagle as te, medusa as tm  # noqa: E402
from specviz.train.data import load_split, prompt_key  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--corpus", required=True)
ap.add_argument("--folder", required=True)
ap.add_argument("--models", nargs="+", default=["models"])
ap.add_argument("--kinds", default="eagle")
ap.add_argument("--features-cache", default="runs/features", help="the training jobs' feature cache ('' for none)")
ap.add_argument("--unseen-by", default="", help="folders whose prompts are left out of the scoring")
a = ap.parse_args()

t = load_model("default", "cpu", "bfloat16")
layers = sorted({j for folder in a.models
                 if artifacts.available(folder).get("eagle3") and "eagle3" in a.kinds.split(",")
                 for j in artifacts.card("eagle3", folder).get("feature_layers", [])})
# one load for every kind: the final features, plus the tapped layers' outputs an EAGLE-3 head reads (recomputed
# from the ids through t once, and kept in --features-cache like the training jobs keep them)
train, held = load_split(a.corpus, ("ids", "hidden", "label"), t, layers=layers or None, cache=a.features_cache or None)
held = [s for s in held if s["folder"] == a.folder]
if a.unseen_by:
    seen = corpus.prompt_keys(a.unseen_by)
    held = [s for s in held if prompt_key(s) not in seen]
print(f"{len(held)} held-out sequences from {a.folder}", file=sys.stderr)
rows = []
for folder in a.models:
    for kind in a.kinds.split(","):
        if not artifacts.available(folder).get(kind):
            continue
        card = artifacts.card(kind, folder)
        if kind in ("eagle", "eagle3"):
            p = artifacts.load_eagle(t, folder, kind=kind)
            ev = te.evaluate(p.head.float(), t.model.get_input_embeddings(), p.out, held, train, 3)
            top1, ov = ev["heldout_top1_per_step"], ev["heldout_sum_min_pq_t08_per_step"]
        elif kind == "drafter":   # loaded as the app loads it (layers in the target's dtype)
            d = artifacts.load_drafter(t, folder)
            ev = td.evaluate(d.model, d.model.lm_head, held, train)
            top1, ov = [ev["heldout_top1"]], [ev["heldout_sum_min_pq_t08"]]
        else:
            p = artifacts.load_medusa(t, folder)
            ev = tm.evaluate(p.heads.float(), p.out, held, train)
            top1, ov = ev["heldout_top1_per_head"], ev["heldout_sum_min_pq_t08_per_head"]
        c = card.get("corpus") or {}
        rows.append(dict(artifact=f"{folder}/{kind}", loss=card.get("loss", "ce"), corpus_tokens=c.get("tokens"),
                         steps=card["steps"], wall_min=round(card["wall_s"] / 60, 1), top1=top1, sum_min_t08=ov,
                         positions=ev["heldout_positions"]))
        print(json.dumps(rows[-1]), flush=True)
print("| artifact | loss | corpus tokens | steps | wall (min) | held-out top-1 per step | held-out Σmin(p,q) T=0.8 per "
      "step |")
print("|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['artifact']} | {r['loss']} | {r['corpus_tokens']:,} | {r['steps']} | {r['wall_min']} | "
          f"{r['top1']} | {r['sum_min_t08']} |")
