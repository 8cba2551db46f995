"""How far copying could go on the model's own texts, against how far the default rules go: no clock.

    .venv/bin/python scripts/copy_bound.py [--new 128] [--dtype bfloat16] [--kind copy-heavy|novel]
    .venv/bin/python scripts/copy_bound.py --sessions [--new 64]
    .venv/bin/python scripts/copy_bound.py --suffix-factor 4 --suffix-factor 12   (suffix with other factors too)

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
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.bench.plan import TREE_V_KS
from specviz.bench.results import bench_where, latest_bench
from specviz.core import copybound as cb
from specviz.core.costmodel import v_at
from specviz.core.suffix import SessionCache
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import describe_machine, machine
from specviz.engine.measure import run
from specviz.engine.methods import SELF_SIZED_CAP, encode_prompt, make_proposer
from specviz.engine.models import load_model
from specviz.engine.passcost import V_KS, measure_v
from specviz.proposers.base import draft_on


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


def plain_text(t, w, new) -> tuple[list[int], list[int]]:
    ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
    s, _ = run(t, None, ids, DecodeConfig(k=1, max_new_tokens=new, record=False), t.tokenizer.eos_token_id)
    return list(ids), list(s.token_ids)


def show(name: str, res: dict) -> dict:
    sp = {c: n / cost for c, (n, cost) in res.items()}
    print(f"{name:28s} " + "  ".join(f"{c} ×{x:.2f}" for c, x in sp.items()) +
          f"   (m≥1 ceiling ÷ lookup {sp['ceiling m≥1'] / sp['lookup']:.2f})", flush=True)
    return sp


def v_tables(t, here: bool) -> tuple[dict, dict, str]:
    """v and v_tree of this machine: timed now, or the bench of this machine's kind (bench_where says which)."""
    m = machine(t.device, t.dtype)
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
    a = a.parse_args()
    new = a.new or (64 if a.sessions else 128)
    torch.set_num_threads(min(2, torch.get_num_threads()))
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
