"""python -m specviz train {corpus,corpus-ids,features,card,drafter,medusa,eagle,eagle3,lora,vocab-size,evaluate,
readme}: resumable jobs with progress bars."""
from __future__ import annotations

import argparse
import json
import sys


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("train", help="build the self-distillation corpus and train the proposers")
    jobs = p.add_subparsers(dest="job", required=True)
    _add_data_jobs(jobs)
    _add_training_jobs(jobs)
    _add_vocab_size(jobs)
    _add_lora(jobs)
    _add_evaluate(jobs)


def _common(j: argparse.ArgumentParser, run: str) -> None:
    j.add_argument("--target", default="default", help="'default' (embedded SmolLM2-135M) or a HF id/folder")
    j.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (a CUDA GPU if any, else the CPU)")
    j.add_argument("--dtype", default="auto", help="the frozen target's dtype (auto: bfloat16, or float16 on a "
                   "CUDA GPU without native bfloat16); training autocasts to the same type")
    j.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (0: $SPECVIZ_THREADS, else one per core up to 8)")
    j.add_argument("--run", default=run, help="run folder (checkpoints; rerun to resume)")
    j.add_argument("--max-minutes", type=float, default=None, help="stop (and ship) after this much training")


def _add_data_jobs(jobs) -> None:
    """corpus, corpus-ids, features, prompts, card: the data the proposers train on."""
    c = jobs.add_parser("corpus", help="the target answers a seeded prompt set; label every position")
    _common(c, "runs/corpus")
    c.add_argument("--prompts", type=int, default=256)
    c.add_argument("--batch", type=int, default=16)
    c.add_argument("--max-new-tokens", type=int, default=128)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--sampled-share", type=float, default=0.5, help="share of shards sampled at --temperature")
    c.add_argument("--temperature", type=float, default=0.8)
    c.set_defaults(func=cmd_corpus)
    x = jobs.add_parser("corpus-ids", help="copy a corpus folder keeping only its token ids (the committable form)")
    x.add_argument("--corpus", required=True, help="corpus folder (e.g. an old one with stored features)")
    x.add_argument("--out", required=True, help="the new folder, e.g. data/corpus/corpus-s2")
    x.set_defaults(func=cmd_corpus_ids)
    f = jobs.add_parser("features", help="time the teacher-forced recompute of the corpus features (tokens/s)")
    _common(f, "runs/features")
    f.add_argument("--tiny", action="store_true", help="a tiny random model instead of --target (for a quick check)")
    f.add_argument("--corpus", default=None, help="time on this corpus's sequences (default: random ids)")
    f.add_argument("--sequences", type=int, default=16, help="how many sequences to time")
    f.add_argument("--length", type=int, default=256, help="tokens per random sequence (without --corpus)")
    f.add_argument("--batch", type=int, default=8)
    f.add_argument("--layers", default="", help="also capture these decoder layers, e.g. 2,15,29")
    f.set_defaults(func=cmd_features)
    pr = jobs.add_parser("prompts", help="count the distinct prompts and word-for-word repeats of a seeded prompt set")
    pr.add_argument("--prompts", type=int, default=4400)
    pr.add_argument("--seed", type=int, default=2)
    pr.set_defaults(func=cmd_prompts)
    dc = jobs.add_parser("card", help="write models/corpus.md, the data card of the corpus the proposers train on")
    dc.add_argument("--corpus", default="runs/corpus", help="corpus folder, or several comma-separated")
    dc.add_argument("--out", default="models/corpus.md")
    dc.add_argument("--models", default=None, help="folder of the artefact cards to name (default: models/; "
                    "a run that wrote its artefacts elsewhere, e.g. scripts/gpu.sh, names its own)")
    dc.set_defaults(func=cmd_card)


def _add_training_jobs(jobs) -> None:
    """drafter, medusa, eagle, eagle3: one trained proposer each, shipped to models/."""
    for name, steps, tokens in (("drafter", 300, 1024), ("medusa", 300, 512), ("eagle", 300, 768),
                                ("eagle3", 300, 768)):
        j = jobs.add_parser(name, help=f"train the {name} on the corpus and ship it to models/")
        _common(j, f"runs/{name}")
        j.add_argument("--corpus", default="runs/corpus", help="corpus folder, or several comma-separated")
        j.add_argument("--out", default=None, help="artifact folder (default: models/)")
        j.add_argument("--steps", type=int, default=steps)
        j.add_argument("--tokens-per-step", type=int, default=tokens)
        j.add_argument("--lr", type=float, default=1e-3)
        j.add_argument("--vocab", type=int, default=8192, help="draft vocabulary size (most frequent ids)")
        j.add_argument("--features-cache", default="runs/features", help="folder keeping the features recomputed "
                       "from an ids-only corpus for the next job ('' to recompute every time)")
        if name == "drafter":
            j.add_argument("--layers", type=int, default=2)
            j.add_argument("--loss", choices=["ce", "kl"], default="ce",
                           help="ce: the target's greedy tokens; kl: its top-8 distribution")
        if name == "medusa":
            j.add_argument("--heads", type=int, default=4)
        if name in ("eagle", "eagle3"):
            j.add_argument("--passes", type=int, default=3, help="unrolled passes on its own features")
            j.add_argument("--warm-from", default=None, help="start from the EAGLE head in this folder "
                           "(e.g. models): a fine-tune; eagle3 takes its layer and reads the top layer at first")
            j.add_argument("--init", choices=["identity", "last-layer", "random"], default="identity",
                           help="identity: start as 'next feature = this feature'")
            j.add_argument("--loss", choices=["ce", "kl"], default="ce" if name == "eagle" else "kl",
                           help="ce: the target's greedy tokens; kl: its whole distribution on the draft vocabulary")
        if name == "eagle":
            j.add_argument("--reg", type=float, default=1.0, help="weight of the feature-regression term beside the "
                           "token loss, >= 0 (default 1.0; 0: the token objective only, as eagle3 trains)")
        if name == "eagle3":
            j.add_argument("--layers", default=None,
                           help="target decoder layers (0-based) whose outputs the head fuses, comma-separated "
                                "(default: a low, a middle and the last: 2,15,29 for SmolLM2-135M's 30)")
        j.set_defaults(func=cmd_job)


def _add_vocab_size(jobs) -> None:
    vs = jobs.add_parser("vocab-size", help="measure held-out acceptance and draft cost at several draft "
                         "vocabulary sizes; predict the speedup with the cost model; pick the best size")
    _common(vs, "runs/vocab-size")
    vs.add_argument("--corpus", default="runs/corpus", help="corpus folder, or several comma-separated")
    vs.add_argument("--sizes", default="2048,4096,8192,16384")
    vs.add_argument("--head", default="models", help="folder with the EAGLE head to size (trained here if absent)")
    vs.add_argument("--steps", type=int, default=200, help="steps of the quick head, when --head has none")
    vs.add_argument("--k", type=int, default=2, help="draft length of the prediction (<= 3)")
    vs.add_argument("--repeats", type=int, default=5, help="interleaved timed repeats for c and v(k)")
    vs.add_argument("--max-new-tokens", type=int, default=32)
    vs.add_argument("--features-cache", default="runs/features", help="as for the training jobs")
    vs.set_defaults(func=cmd_vocab_size)


def _add_lora(jobs) -> None:
    lo = jobs.add_parser("lora", help="LoRA fine-tune of the target on Python's documentation (a 2nd checkpoint)")
    _common(lo, "runs/lora")
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


def _add_evaluate(jobs) -> None:
    e = jobs.add_parser("evaluate", help="measure the shipped proposers on the workloads (real decode loop)")
    e.add_argument("--target", default="default")
    e.add_argument("--device", default="auto", help="cpu, cuda, cuda:N or auto (a CUDA GPU if any, else the CPU)")
    e.add_argument("--dtype", default="auto", help="auto: bfloat16, or float16 on a CUDA GPU without native bfloat16")
    e.add_argument("--threads", type=int, default=0,
                   help="torch CPU threads (0: $SPECVIZ_THREADS, else one per core up to 8)")
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


def _fail(msg: str) -> int:
    print(f"specviz: error: {msg}", file=sys.stderr)
    return 2


def cmd_prompts(a) -> int:
    from specviz.train.prompts import make_prompts, repeats

    if a.prompts < 1:
        return _fail("--prompts must be >= 1")
    print(json.dumps(dict(seed=a.seed, **repeats(make_prompts(a.prompts, a.seed))), indent=1))
    return 0


def cmd_corpus_ids(a) -> int:
    from specviz.train import corpus

    if not corpus.shards(a.corpus):
        return _fail(f"no corpus shards in {a.corpus}")
    meta = corpus.keep_ids(a.corpus, a.out)
    print(f"wrote {meta['shards']} shards, {meta['tokens']:,} tokens, {meta['bytes']:,} bytes to {a.out}")
    return 0


def cmd_features(a) -> int:
    import random

    from specviz.train import corpus

    if a.sequences < 1 or a.batch < 1 or a.length < 2:
        return _fail("--sequences and --batch must be >= 1, --length >= 2")
    if a.tiny:
        from specviz.engine.models import tiny_llama
        t = tiny_llama(vocab_size=96, layers=4, hidden=64, seed=0, max_positions=max(512, a.length + 1))
    else:
        t = _target(a)
    try:
        layers = [int(x) for x in a.layers.split(",") if x.strip()]
        corpus.check_layers(t, layers)
    except ValueError as e:
        return _fail(f"--layers: {e}")
    if a.corpus:
        if not corpus.shards(a.corpus):
            return _fail(f"no corpus shards in {a.corpus}")
        seqs = [ids for ids, _ in corpus.token_ids(a.corpus)][: a.sequences]
    else:
        r = random.Random(0)
        seqs = [[r.randrange(t.vocab_size) for _ in range(a.length)] for _ in range(a.sequences)]
    rate = corpus.features_rate(t, seqs, a.batch, layers)
    real = 1_690_325          # the tokens of the corpus the shipped heads were trained on (models/corpus.md)
    print(json.dumps(dict(target=t.name, layers=layers, **rate,
                          minutes_for_the_1_7m_token_corpus=round(real / rate["tokens_per_s"] / 60, 1)), indent=1))
    return 0


def cmd_vocab_size(a) -> int:
    from specviz.train import corpus, vocabsize

    try:
        sizes = vocabsize.parse_sizes(a.sizes)
    except ValueError as e:
        return _fail(str(e))
    if not corpus.shards(a.corpus):
        return _fail(f"no corpus shards in {a.corpus}")
    t = _target(a)
    if sizes[-1] > t.vocab_size:
        return _fail(f"--sizes: {sizes[-1]:,} is more than the target's {t.vocab_size:,} ids")
    try:
        res = vocabsize.sweep(t, a.corpus, sizes, a.run, head_dir=a.head, steps=a.steps, k=a.k,
                              repeats=a.repeats, max_new=a.max_new_tokens, progress=True,
                              features_cache=a.features_cache or None)
    except ValueError as e:
        return _fail(str(e))
    print(vocabsize.markdown(res))
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

    from specviz.core.errors import InputError
    from specviz.train import jobs

    if a.job == "eagle" and not a.reg >= 0:
        raise InputError(f"--reg must be >= 0, got {a.reg}")
    if a.job == "eagle3" and a.layers is not None:   # the format now, before the target loads; the range below
        from specviz.proposers.eagle import check_feature_layers
        check_feature_layers(a.layers, 10 ** 6)
    if getattr(a, "warm_from", None):   # checked before the target loads
        jobs.warm_head_file(a.warm_from)
    t = _target(a)
    kw = dict(run_dir=a.run, out_dir=a.out, steps=a.steps, lr=a.lr, max_minutes=a.max_minutes)
    if a.job == "lora":
        corpus = a.corpus if Path(a.corpus).exists() else None
        card = jobs.lora(t, batch=a.batch, chunk=a.chunk, rank=a.rank, alpha=2.0 * a.rank,
                         modules=tuple(m.strip() for m in a.modules.split(",") if m.strip()),
                         corpus_dir=corpus, **kw)
    else:
        kw.update(corpus_dir=a.corpus, tokens=a.tokens_per_step, vocab=a.vocab, features_cache=a.features_cache or None)
        if a.job == "drafter":
            card = jobs.drafter(t, n_layers=a.layers, mode=a.loss, **kw)
        elif a.job == "medusa":
            card = jobs.medusa(t, n_heads=a.heads, **kw)
        elif a.job == "eagle3":
            card = jobs.eagle3(t, n_passes=a.passes, init=a.init, mode=a.loss, layers=a.layers,
                               warm_from=a.warm_from, **kw)
        else:
            card = jobs.eagle(t, n_passes=a.passes, init=a.init, mode=a.loss, reg=a.reg, warm_from=a.warm_from, **kw)
    print(json.dumps(card, indent=1))
    return 0
