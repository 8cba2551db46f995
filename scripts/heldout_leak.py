"""How much the old held-out split flattered the shipped artefacts (models/notes.md, "A correction first").

    .venv/bin/python scripts/heldout_leak.py [--corpus runs/corpus,runs/corpus-s1] [--models models]

Rebuilds the split the artefacts were trained under (6% of the sequences by position, seed 0:
specviz.train.common.split) and scores EAGLE, Medusa and the drafter on its held-out sequences in three
groups: all of them, those whose prompt also occurs on the training side, and those whose prompt does not.
"""
import argparse
import json
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from specviz.engine import artifacts  # noqa: E402
from specviz.engine.models import load_model  # noqa: E402
from specviz.train import corpus, drafter as td, eagle as te, medusa as tm  # noqa: E402
from specviz.train.common import split  # noqa: E402
from specviz.train.data import prompt_key  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--corpus", default="runs/corpus,runs/corpus-s1")
ap.add_argument("--models", default="models")
a = ap.parse_args()

t = load_model("default", "cpu", "bfloat16")
train, held = split(corpus.load(a.corpus, ("ids", "hidden", "label"), target=t))
seen = {prompt_key(s) for s in train}
groups = {"all": held, "prompt also trained on": [s for s in held if prompt_key(s) in seen],
          "prompt never trained on": [s for s in held if prompt_key(s) not in seen]}
eagle, medusa = artifacts.load_eagle(t, a.models), artifacts.load_medusa(t, a.models)
drafter = artifacts.load_drafter(t, a.models)
for name, h in groups.items():
    e = te.evaluate(eagle.head.float(), t.model.get_input_embeddings(), eagle.out, h, train, 3)
    m = tm.evaluate(medusa.heads.float(), medusa.out, h, train)
    d = td.evaluate(drafter.model, drafter.model.lm_head, h, train)
    print(json.dumps(dict(group=name, sequences=len(h), positions=e["heldout_positions"],
                          eagle_top1=e["heldout_top1_per_step"], medusa_top1=m["heldout_top1_per_head"],
                          drafter_top1=d["heldout_top1"])), flush=True)
