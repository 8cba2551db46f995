"""python -m specviz train {corpus,card,drafter,medusa,eagle,eagle3,lora,evaluate,readme}: resumable jobs with progress bars."""
from __future__ import annotations

import argparse
import json
import sys


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("train", help="build the self-distillation corpus and train the proposers")
    jobs = p.add_subparsers(dest="job", required=True)

    def common(j: argparse.ArgumentParser, run: str) -> None:
        j.add_argument("--target", default="default", help="'default' (embedded SmolLM2-135M) or a HF id/folder")
        j.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (a CUDA GPU if any, else the CPU)")
        j.add_argument("--dtype", default="auto", help="the frozen target's dtype (auto: bfloat16, or float16 on a "
                       "CUDA GPU without native bfloat16); training autocasts to the same type")
        j.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: $SPECVIZ_THREADS, else one per core up to 8)")
        j.add_argument("--run", default=run, help="run folder (checkpoints; rerun to resume)")
        j.add_argument("--max-minutes", type=float, default=None, help="stop (and ship) after this much training")

    c = jobs.add_parser("corpus", help="the target answers a seeded prompt set; label every position")
    common(c, "runs/corpus")
    c.add_argument("--prompts", type=int, default=256)
    c.add_argument("--batch", type=int, default=16)
    c.add_argument("--max-new-tokens", type=int, default=128)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--sampled-share", type=float, default=0.5, help="share of shards sampled at --temperature")
    c.add_argument("--temperature", type=float, default=0.8)
    c.set_defaults(func=cmd_corpus)
    dc = jobs.add_parser("card", help="write models/corpus.md, the data card of the corpus the proposers train on")
    dc.add_argument("--corpus", default="runs/corpus", help="corpus folder, or several comma-separated")
    dc.add_argument("--out", default="models/corpus.md")
    dc.add_argument("--models", default=None, help="folder of the artefact cards to name (default: models/; "
                    "a run that wrote its artefacts elsewhere, e.g. scripts/gpu.sh, names its own)")
    dc.set_defaults(func=cmd_card)

    for name, steps, tokens in (("drafter", 300, 1024), ("medusa", 300, 512), ("eagle", 300, 768),
                                ("eagle3", 300, 768)):
        j = jobs.add_parser(name, help=f"train the {name} on the corpus and ship it to models/")
        common(j, f"runs/{name}")
        j.add_argument("--corpus", default="runs/corpus", help="corpus folder, or several comma-separated")
        j.add_argument("--out", default=None, help="artifact folder (default: models/)")
        j.add_argument("--steps", type=int, default=steps)
        j.add_argument("--tokens-per-step", type=int, default=tokens)
        j.add_argument("--lr", type=float, default=1e-3)
        j.add_argument("--vocab", type=int, default=8192, help="draft vocabulary size (most frequent ids)")
        if name == "drafter":
            j.add_argument("--layers", type=int, default=2)
            j.add_argument("--loss", choices=["ce", "kl"], default="ce",
                           help="ce: the target's greedy tokens; kl: its top-8 distribution")
        if name == "medusa":
            j.add_argument("--heads", type=int, default=4)
        if name in ("eagle", "eagle3"):
            j.add_argument("--passes", type=int, default=3, help="unrolled passes on its own features")
            j.add_argument("--init", choices=["identity", "last-layer", "random"], default="identity",
                           help="identity: start as 'next feature = this feature'")
            j.add_argument("--loss", choices=["ce", "kl"], default="ce" if name == "eagle" else "kl",
                           help="ce: the target's greedy tokens; kl: its whole distribution on the draft vocabulary")
        if name == "eagle3":
            j.add_argument("--layers", default=None,
                           help="target decoder layers (0-based) whose outputs the head fuses, comma-separated "
                                "(default: a low, a middle and the last: 2,15,29 for SmolLM2-135M's 30)")
        j.set_defaults(func=cmd_job)

    lo = jobs.add_parser("lora", help="LoRA fine-tune of the target on Python's documentation (a 2nd checkpoint)")
    common(lo, "runs/lora")
    lo.add_argument("--out", default=None)
    lo.add_argument("--corpus", default="runs/corpus", help="for the chat fluency check (skipped if absent)")
    lo.add_argument("--steps", type=int, default=120)
    lo.add_argument("--batch", type=int, default=2)
    lo.add_argument("--chunk", type=int, default=128)
    lo.add_argument("--lr", type=float, default=2e-3)
    lo.add_argument("--rank", type=int, default=8)
    lo.add_argument("--modules", default="q_proj,v_proj",
                    help="comma-separated linear layers to adapt (e.g. add o_proj,gate_proj,up_proj,down_proj "
                         "for a stronger fine-tune)")
    lo.set_defaults(func=cmd_job)
    _add_evaluate(jobs)


def _add_evaluate(jobs) -> None:
    e = jobs.add_parser("evaluate", help="measure the shipped proposers on the workloads (real decode loop)")
    e.add_argument("--target", default="default")
    e.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (a CUDA GPU if any, else the CPU)")
    e.add_argument("--dtype", default="auto", help="auto: bfloat16, or float16 on a CUDA GPU without native bfloat16")
    e.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: $SPECVIZ_THREADS, else one per core up to 8)")
    e.add_argument("--part", choices=["greedy", "sampled", "finetuned"], default="greedy")
    e.add_argument("--max-new-tokens", type=int, default=64)
    e.add_argument("--run", default="runs/eval", help="folder for the per-run JSON lines and tables")
    e.add_argument("--only", default="", help="comma-separated method names to keep, e.g. plain,medusa")
    e.add_argument("--tag", default="", help="suffix for the output files")
    e.set_defaults(func=cmd_evaluate)
    r = jobs.add_parser("readme", help="write models/README.md from the cards and the evaluation tables")
    r.add_argument("--run", default="runs/eval")
    r.add_argument("--notes", default="models/notes.md", help="a markdown file with the notes to include")
    r.set_defaults(func=cmd_readme)


def cmd_readme(a) -> int:
    from pathlib import Path

    from specviz.train.readme import write

    print(write(eval_dir=a.run, notes=Path(a.notes).read_text() if a.notes and Path(a.notes).exists() else ""))
    return 0


def cmd_evaluate(a) -> int:
    from specviz.train.evaluate import markdown, run_part

    tab = run_part(_target(a), a.part, a.run, a.max_new_tokens, a.only, a.tag)
    print(markdown(tab, a.part))
    return 0


def _target(a):
    from specviz.engine.models import load_model
    from specviz.train.common import set_threads

    set_threads(a.threads)
    return load_model(a.target, a.device, a.dtype)


def cmd_card(a) -> int:
    from pathlib import Path

    from specviz.engine import artifacts
    from specviz.train import corpus

    if not corpus.shards(a.corpus):
        print(f"specviz: error: no corpus shards in {a.corpus}", file=sys.stderr)
        return 2
    cards = {n: artifacts.card(n, a.models) for n, ok in artifacts.available(a.models).items() if ok}
    Path(a.out).write_text(corpus.data_card(a.corpus, cards))
    print(f"wrote {a.out}")
    return 0


def cmd_corpus(a) -> int:
    from specviz.train import corpus

    t = _target(a)
    meta = corpus.build(t, a.run, n_prompts=a.prompts, batch=a.batch, max_new=a.max_new_tokens, seed=a.seed,
                        sampled_share=a.sampled_share, temperature=a.temperature,
                        max_minutes=a.max_minutes)
    print(json.dumps(meta, indent=1))
    return 0


def cmd_job(a) -> int:
    from pathlib import Path

    from specviz.train import jobs

    if a.job == "eagle3" and a.layers is not None:   # the format now, before the target loads; the range below
        from specviz.proposers.eagle import check_feature_layers
        check_feature_layers(a.layers, 10 ** 6)
    t = _target(a)
    kw = dict(run_dir=a.run, out_dir=a.out, steps=a.steps, lr=a.lr, max_minutes=a.max_minutes)
    if a.job == "lora":
        corpus = a.corpus if Path(a.corpus).exists() else None
        card = jobs.lora(t, batch=a.batch, chunk=a.chunk, rank=a.rank, alpha=2.0 * a.rank,
                         modules=tuple(m.strip() for m in a.modules.split(",") if m.strip()),
                         corpus_dir=corpus, **kw)
    else:
        kw.update(corpus_dir=a.corpus, tokens=a.tokens_per_step, vocab=a.vocab)
        if a.job == "drafter":
            card = jobs.drafter(t, n_layers=a.layers, mode=a.loss, **kw)
        elif a.job == "medusa":
            card = jobs.medusa(t, n_heads=a.heads, **kw)
        elif a.job == "eagle3":
            card = jobs.eagle3(t, n_passes=a.passes, init=a.init, mode=a.loss, layers=a.layers, **kw)
        else:
            card = jobs.eagle(t, n_passes=a.passes, init=a.init, mode=a.loss, **kw)
    print(json.dumps(card, indent=1))
    return 0
