"""How far copying could go on the model's own texts, against how far the default rules go: no clock.

    .venv/bin/python scripts/copy_bound.py [--new 128] [--dtype bfloat16] [--kind copy-heavy|novel]
    .venv/bin/python scripts/copy_bound.py --sessions [--new 64]
    .venv/bin/python scripts/copy_bound.py --suffix-factor 4 --suffix-factor 12   (suffix with other factors too)
    .venv/bin/python scripts/copy_bound.py --held-out [--regenerate]

--held-out: the bench's copy-heavy four and workloads.HELD_OUT_COPY, with each rule's share of its ceiling
(lookup, with and without its sole and follow options, ÷ the m≥2 ceiling; suffix ÷ the m≥1 ceiling) and the
medians over the old, the new and all. The texts are generated once and cached (data/copy_texts/<dtype>-<new>.json:
token ids, the model's fingerprint, the settings); later runs replay from the cache without loading the model
(--regenerate writes it again).

Plain greedy decoding writes each workload's text once (bfloat16 by default, as the bench times it; every
specviz method writes that same text, bench/results.md's equality row). On that text greedy speculation's
outcome is fixed by the drafts alone, so drafting rules are replayed without the model (core/copybound.py):
  lookup   the default match rule (engine.methods.make_proposer's lookup);
  suffix   the default suffix tree (its cost with the bench's v_tree);
  ceiling m≥2 / m≥1   at every pass the longest run of the coming text (at most 24 tokens) that the
           searched text holds right after 2 (lookup's evidence) or 1 (suffix's) tokens equal to the
           context's tail: no rule that waits for that evidence keeps more per pass;
  anywhere the same with no evidence at all (it knows the future: no rule reaches it).
--sessions: each session's requests in order, 64 tokens each; suffix and the ceilings also search the
earlier requests (their prompts and outputs: more than suffix's cache keeps, so the ceiling stays one).
τ is tokens per target pass; the speedup column is the cost model's decode-only tokens ÷ Σ v(drafted),
v(k) and v_tree(k) of the machine the figures describe: by default the bench results of this machine's kind
(bench/results/<kind>/results.json, else the top-level bench/results.json, named in the output with where it was
measured), or with --measure-v timed here and now (passcost.measure_v, as the bench does); held at their last
entry beyond the measured sizes.
"""
import argparse
import json
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.bench.plan import TREE_V_KS
from specviz.bench.results import bench_where, latest_bench
from specviz.core import copybound as cb
from specviz.core.costmodel import passes_speedup, v_at
from specviz.core.suffix import SessionCache
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import describe_machine, machine
from specviz.engine.measure import run
from specviz.engine.methods import SELF_SIZED_CAP, encode_prompt, make_proposer
from specviz.engine.models import load_model
from specviz.engine.passcost import V_KS, measure_v
from specviz.proposers.base import draft_on
from specviz.proposers.lookup import MATCH_MIN, PromptLookup


def measure(t, prompt, text, earlier, caches, v, v_tree) -> dict:
    """{column: (tokens, Σ v)} for one request; `earlier` = earlier requests' prompts and outputs; caches =
    {suffix column: (its SessionCache, its factor or None for the default)}."""
    lk = make_proposer("lookup", t)
    lk.reset(torch.tensor(prompt))
    out = {"lookup": (len(text), sum(v_at(v, n) for n in cb.replay(prompt, text,
                                                                   lambda ctx: draft_on(lk, ctx, SELF_SIZED_CAP))))}
    for col, (cache, factor) in caches.items():
        sx = make_proposer("suffix", t, spec_factor=factor, suffix={"cache": cache})
        sx.reset(torch.tensor(prompt))
        out[col] = (len(text), sum(v_at(v_tree, n) for n in cb.replay(prompt, text,
                                                                      lambda ctx: draft_on(sx, ctx, SELF_SIZED_CAP))))
        sx.remember()
    for col, m in (("ceiling m≥2", 2), ("ceiling m≥1", 1), ("anywhere", 0)):
        out[col] = (len(text), sum(v_at(v, n) for n in cb.ceiling(prompt, text, earlier, min_match=m)))
    return out


BY_NAME = {w.name: w for w in workloads.of_kind(workloads.COPY) + workloads.HELD_OUT_COPY}
TEXTS = os.path.join(os.path.dirname(__file__), "..", "data", "copy_texts")


def cached_texts(names: list[str], dtype: str, new: int, regenerate: bool) -> tuple[dict, dict]:
    """({workload: (prompt ids, text ids)}, the cache's header): read from data/copy_texts, or generated
    with the default model (greedy, plain decoding) and written there when missing or asked to."""
    path = os.path.join(TEXTS, f"{dtype}-{new}.json")
    have = json.load(open(path)) if os.path.exists(path) and not regenerate else {"texts": {}}
    missing = [n for n in names if n not in have["texts"]]
    if missing:
        t = load_model("default", device="cpu", dtype=dtype)
        have.update(model=t.name, fingerprint=t.fingerprint(), dtype=dtype, new_tokens=new, decoding="greedy, plain",
                    torch=torch.__version__.split("+")[0], machine=describe_machine(machine(t.device, t.dtype)))
        for n in missing:
            prompt, text = plain_text(t, BY_NAME[n], new)
            have["texts"][n] = {"prompt_ids": prompt, "text_ids": text}
            print(f"generated {n}: {len(text)} tokens", flush=True)
        os.makedirs(TEXTS, exist_ok=True)
        with open(path, "w") as f:
            json.dump(have, f)
    return {n: (have["texts"][n]["prompt_ids"], have["texts"][n]["text_ids"]) for n in names}, \
        {k: v for k, v in have.items() if k != "texts"}


def plain_text(t, w, new) -> tuple[list[int], list[int]]:
    ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
    s, _ = run(t, None, ids, DecodeConfig(k=1, max_new_tokens=new, record=False), t.tokenizer.eos_token_id)
    return list(ids), list(s.token_ids)


def show(name: str, res: dict) -> dict:
    sp = {c: n / cost for c, (n, cost) in res.items()}
    print(f"{name:28s} " + "  ".join(f"{c} ×{x:.2f}" for c, x in sp.items()) +
          f"   (m≥1 ceiling ÷ lookup {sp['ceiling m≥1'] / sp['lookup']:.2f})", flush=True)
    return sp


class Described:
    """The machine a v table describes, as the registry's lookup asks about it (methods.lookup_sole): a verify pass
    of 1 + SELF_SIZED_CAP rows costs v(SELF_SIZED_CAP) one-token steps there. So the "lookup" column is the default
    as it runs on that machine (the sole option on or off), not as on a machine never timed."""

    def __init__(self, v):
        self.wide = v_at(v, SELF_SIZED_CAP)

    def v_wide(self) -> float:
        return self.wide


def shares(prompt, text, v, v_tree) -> dict:
    """{column: the rule's cost-model speedup ÷ its ceiling's} on one text: lookup ÷ the m≥2 ceiling (the default as
    it runs on the machine v describes; with the sole option only; neither sole nor follow, the default before issue
    35), suffix ÷ the m≥1 one."""
    ceil = {m: passes_speedup(len(text), cb.ceiling(prompt, text, min_match=m), v) for m in (2, 1)}
    rules = {"lookup": (make_proposer("lookup", Described(v)), v, 2),
             "lookup, sole only": (PromptLookup(n_min=MATCH_MIN, k_rule="match", sole=True), v, 2),
             "lookup before": (PromptLookup(n_min=MATCH_MIN, k_rule="match"), v, 2),
             "suffix": (make_proposer("suffix", None), v_tree, 1)}
    out = {}
    for col, (pr, vv, m) in rules.items():
        pr.reset(torch.tensor(prompt))
        lengths = cb.replay(prompt, text, lambda ctx: draft_on(pr, ctx, SELF_SIZED_CAP))
        out[col] = passes_speedup(len(text), lengths, vv) / ceil[m]
    return out


def held_out(a, new: int) -> None:
    """Each rule's share of its ceiling on the copy-heavy four and the held-out set, from cached texts."""
    texts, head = cached_texts(list(BY_NAME), a.dtype, new, a.regenerate)
    v, v_tree, where = v_tables(None, a.measure_v, a.dtype) if not a.measure_v else \
        v_tables(load_model("default", device="cpu", dtype=a.dtype), True)
    print(f"{head['model']} (fingerprint {head['fingerprint'][:12]}…), {head['dtype']}, {head['new_tokens']} new "
          f"tokens, greedy plain decoding's texts (data/copy_texts); cost-model decode-only speedup ÷ its ceiling's "
          f"(lookup ÷ the m≥2 ceiling, suffix ÷ the m≥1 ceiling), v and v_tree {where}")
    print(f"lookup there (the registry's default): {make_proposer('lookup', Described(v)).sole_reason}")
    rows = {n: shares(*texts[n], v, v_tree) for n in BY_NAME}
    cols = list(next(iter(rows.values())))
    print(f"{'workload':26s} " + " ".join(f"{c:>16s}" for c in cols))
    for n, r in rows.items():
        print(f"{n:26s} " + " ".join(f"{r[c]:16.3f}" for c in cols))
    old = [w.name for w in workloads.of_kind(workloads.COPY)]
    for label, names in (("median, bench's four", old), ("median, held-out", [n for n in rows if n not in old]),
                         ("median, all", list(rows))):
        print(f"{label:26s} " + " ".join(f"{statistics.median(rows[n][c] for n in names):16.3f}" for c in cols))


def v_tables(t, here: bool, dtype: str = "bfloat16") -> tuple[dict, dict, str]:
    """v and v_tree of this machine: timed now (t: the loaded model), or the bench of this machine's kind
    (bench_where says which; t may be None)."""
    m = machine(t.device, t.dtype) if t is not None else machine("cpu", dtype)
    if here:
        v = measure_v(t, ks=V_KS, repeats=7)
        v_tree = measure_v(t, ks=TREE_V_KS, repeats=5, tree=True)
        return dict(v), dict(v_tree), f"timed here now on {describe_machine(m)}"
    found = latest_bench(os.path.join(os.path.dirname(__file__), ".."), here=m)
    if found is None:
        raise SystemExit("no bench results to read v(k) from: run `python -m specviz bench --out bench` "
                         "or pass --measure-v")
    path, bench = found
    return bench["v"], bench["v_tree"], f"from {os.path.relpath(path)}, {bench_where(bench, here=m)}"


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--new", type=int, default=None, help="new tokens per request (default 128; 64 with --sessions)")
    a.add_argument("--dtype", default="bfloat16")
    a.add_argument("--kind", default=workloads.COPY, choices=[workloads.COPY, workloads.NOVEL])
    a.add_argument("--sessions", action="store_true", help="the multi-request sessions instead")
    a.add_argument("--measure-v", action="store_true", help="time v(k) and v_tree(k) here instead of reading a bench")
    a.add_argument("--suffix-factor", type=float, action="append", default=[], metavar="F",
                   help="also replay suffix with this spec factor (repeatable)")
    a.add_argument("--held-out", action="store_true", help="the copy-heavy four and the held-out copy-heavy set, "
                   "replayed from cached texts (data/copy_texts), each rule against its ceiling")
    a.add_argument("--regenerate", action="store_true", help="with --held-out: generate the cached texts again")
    a = a.parse_args()
    new = a.new or (64 if a.sessions else 128)
    torch.set_num_threads(min(2, torch.get_num_threads()))
    if a.held_out:
        return held_out(a, new)
    t = load_model("default", device="cpu", dtype=a.dtype)
    v, v_tree, where = v_tables(t, a.measure_v)
    print(f"{a.dtype}, {new} new tokens per request, greedy; cost-model decode-only speedup (× plain) with "
          f"v and v_tree {where}")
    factors = {"suffix": None, **{f"suffix f={f:g}": f for f in a.suffix_factor}}
    rows = []
    if a.sessions:
        for s in workloads.SESSIONS:
            caches = {col: (SessionCache(), f) for col, f in factors.items()}
            earlier, tot = [], {}
            for w in s.requests:
                prompt, text = plain_text(t, w, new)
                for c, (n, cost) in measure(t, prompt, text, list(earlier), caches, v, v_tree).items():
                    tot[c] = (tot.get(c, (0, 0.0))[0] + n, tot.get(c, (0, 0.0))[1] + cost)
                earlier += [prompt, text]
            rows.append(show(s.name, tot))
    else:
        for w in workloads.of_kind(a.kind):
            prompt, text = plain_text(t, w, new)
            caches = {col: (SessionCache(), f) for col, f in factors.items()}
            rows.append(show(w.name, measure(t, prompt, text, [], caches, v, v_tree)))
    print("median  " + "  ".join(f"{c} ×{statistics.median(r[c] for r in rows):.2f}" for c in rows[0]))


if __name__ == "__main__":
    main()
