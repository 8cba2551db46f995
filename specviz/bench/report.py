"""The bench's outputs: results.json (stable, diffable), results.md (tables), results.html (plotly).

`results(...)` turns one bench run into a plain dict; markdown() and html() read only that dict, so
both can be rebuilt from a results.json alone (`bench_report.rebuild(folder)`).
"""
from __future__ import annotations

import json
import os
import statistics

from specviz.bench.plan import BLOCK
from specviz.bench.results import RULE, default_choice
from specviz.core import fmt as F
from specviz.core.costmodel import alpha_for_tau, speedup_from_tau, tau_needed
from specviz.core.repetition import repetition
from specviz.core.roofline import share_of_limit
from specviz.core.stats import median, ratio
from specviz.engine.device import describe_machine
from specviz.engine.methods import DEFAULT_METHOD, REGISTRY, names
from specviz.engine.workloads import BY_NAME

FORMAT = 2   # 2: the cost-model rows price each run's passes, v̄ (core/costmodel.mean_v); 1: v(k̄)
GREEDY, SAMPLED = "greedy", "sampled"
# the learned proposers the bench runs (the method registry): chains, each followed by the tree of the same heads
LEARNED = tuple(x for m in names(trained=True, tree=False, bench=True)
                for x in (m, *(t for t in names(tree=True, bench=True) if REGISTRY[t].chain == m)))


def where(m: dict) -> str:
    """The machine a run was measured on (engine/device.describe_machine) and why its dtype; runs before issue 33
    recorded neither."""
    if not m.get("machine"):
        return "not recorded (a run before the machine was recorded)"
    why = f" ({m['dtype_reason']})" if m.get("dtype_reason") else ""
    linears = f"; linear layers: {m['linears']}" if m.get("linears") else ""   # engine/packed.label (since 2026-12-06)
    sole = f"; lookup here: {m['sole_rule']}" if m.get("sole_rule") else ""     # methods.lookup_sole (since 2026-12-07)
    body = f"; decoder body: {m['body']}" if m.get("body") else ""              # engine/llama.LABEL (since 2026-12-08)
    return describe_machine(m["machine"]) + why + linears + body + sole


def threads_line(m: dict) -> str:
    """How the run chose its threads (older runs recorded only the count and the wait policy)."""
    return m.get("thread_policy") or f"{m['threads']} threads (OMP_WAIT_POLICY={m.get('wait_policy', 'not recorded')})"


def _r(x, nd: int = 4):
    """Round floats (recursively) so two runs diff line by line."""
    if isinstance(x, float):
        return round(x, nd) if x == x else None
    if isinstance(x, dict):
        return {str(k): _r(v, nd) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_r(v, nd) for v in x]
    return x


# -- results dict --------------------------------------------------------------------------------------
def results(b, costs: list, sp_greedy: dict, sp_sampled: dict) -> dict:
    kind_of = {w.name: w.kind for w in b.plan.workloads}
    out = {"format": FORMAT, "meta": dict(b.meta), "skipped": dict(b.skipped),
           "v": {str(k): v for k, v in sorted(b.v.items())},
           "v_spread": {str(k): getattr(b.v, "spread", {}).get(k) for k in sorted(b.v)},
           "v_tree": {str(k): v for k, v in sorted(b.v_tree.items())},
           "v_tree_spread": {str(k): getattr(b.v_tree, "spread", {}).get(k) for k in sorted(b.v_tree)}}
    out["meta"]["workloads"] = [[w.name, w.kind] for w in b.plan.workloads]  # a list: keeps the order
    out["meta"]["load_average"] = [dict(phase=p, at_s=t, load1=la) for p, t, la in b.load]
    plain_cv = [statistics.pstdev([r.wall_s for r in rs]) / statistics.mean([r.wall_s for r in rs])
                for (m, _, label), rs in b.runs.items() if label == "plain" and len(rs) > 1 and m == GREEDY]
    out["meta"]["plain_wall_cv_median"] = median(plain_cv)
    out["chosen"] = [dict(mode=m, kind=k, method=meth, setting=s.setting, k=s.k,
                          n=s.n if meth == "lookup" else None, adaptive=s.adaptive)
                     for (m, k, meth), s in sorted(b.chosen.items())]
    out["tuning"] = [{k: v for k, v in t.items() if k != "spec"} for t in b.tuning]
    out["speedup"] = {}
    out["per_run"] = {}
    for mode, sp in ((GREEDY, sp_greedy), (SAMPLED, sp_sampled)):
        labels = sorted({lab for (_, lab) in sp}, key=_order)
        per_w = {lab: {w: x for (w, l2), x in sp.items() if l2 == lab} for lab in labels}
        by_kind = {lab: {kind: median([x for w, x in d.items() if kind_of[w] == kind])
                         for kind in sorted({kind_of[w] for w in d})} for lab, d in per_w.items()}
        out["speedup"][mode] = {"per_workload": per_w, "by_kind": by_kind}
        rows = {}
        for w, lab, rs in b.runs_of(mode):
            s = b.specs[(mode, w, lab)]
            rows.setdefault(lab, {})[w] = dict(
                engine=s.engine, setting=s.setting, tokens=median([r.tokens for r in rs]),
                tokens_per_s=median([r.tokens_per_s for r in rs]), wall_s=median([r.wall_s for r in rs]),
                tokens_per_pass=median([r.tokens_per_pass for r in rs]),
                draft_acceptance_rate=median([r.draft_acceptance_rate for r in rs]),
                alpha=median([r.alpha for r in rs]),
                mean_k=median([r.mean_k for r in rs]),
                k_at_floor_share=median([r.k_at_floor / r.passes for r in rs if r.k_at_floor is not None and r.passes]))
        out["per_run"][mode] = rows
    # recording overhead: 1 - (recording on tokens/s ÷ recording off tokens/s), per repeat, medians
    rec = {}
    for (m, w, lab), rs in b.runs.items():
        if m == GREEDY and lab == "lookup (recording off)":
            on = b.runs[(m, w, "lookup")]
            rec[w] = median([1.0 - ratio(a.tokens_per_s, o.tokens_per_s) for a, o in zip(on, rs)])
    out["recording_overhead"] = {"per_workload": rec, "median": median(list(rec.values()))}
    # how much plain decoding's own output loops (share of its 4-grams seen earlier in it): what
    # lookup can copy even on a "novel" prompt
    out["output_repetition"] = {mode: {w: median([repetition(r.ids) for r in rs])
                                       for w, lab, rs in b.runs_of(mode) if lab == "plain"}
                                for mode in (GREEDY, SAMPLED)}
    out["cost_model"] = [c.as_dict() | {"kind": kind_of[c.workload]} for c in costs]
    out["equality"] = [e.as_dict() for e in b.equality]
    out["runs"] = [dict(mode=m, workload=w, method=lab, round=i, wall_s=r.wall_s, tokens=r.tokens)
                   for (m, w, lab), rs in sorted(b.runs.items()) for i, r in enumerate(rs)]
    out["sessions"] = [dict(r) for r in getattr(b, "sessions", [])]
    out["same_text"] = [dict(r) for r in getattr(b, "same_text", [])]
    out["copying"] = copying(out, BY_NAME)
    out["block"], out["plain_roof"] = block_vs_token(b, kind_of, sp_sampled), plain_roof(b)
    out["targets"] = targets(out, BY_NAME)
    return _r(out)


def plain_roof(b) -> dict | None:
    """Plain decoding (greedy, decode only: prefill left out) against the memory limit the run measured at its start
    (meta.roof: bandwidth ÷ bytes per token, engine/peaks.roof): per workload the median over repeats, then the
    median over workloads (issue 33 §5). None for a run that did not measure its bandwidth."""
    roof = b.meta.get("roof")
    if not roof:
        return None
    per_w = {w: median([r.decode_tokens_per_s for r in rs if r.decode_tokens_per_s])
             for (m, w, lab), rs in b.runs.items() if m == GREEDY and lab == "plain"}
    per_w = {w: x for w, x in per_w.items() if x}
    shares = {w: share_of_limit(x, roof["bandwidth"], roof["bytes_per_token"]) for w, x in per_w.items()}
    return dict(decode_tokens_per_s=per_w, share=shares, median_share=median(list(shares.values())),
                limit_tok_s=roof["limit_tok_s"])


def block_vs_token(b, kind_of: dict, sp: dict) -> list[dict]:
    """Issue 35 §2: every sampled chain row beside its block twin (same setting, same seeds), per workload kind:
    τ (median over seeds, then over the kind's workloads) and speedup both ways; over every run, the drafts block
    kept against what token-wise would have kept on the same drafts with the same uniforms."""
    rows = []
    for (mode, w, lab), rs in sorted(b.runs.items()):
        if mode != SAMPLED or not lab.endswith(BLOCK) or (mode, w, lab.removesuffix(BLOCK)) not in b.runs:
            continue
        token = b.runs[(mode, w, lab.removesuffix(BLOCK))]
        rows.append(dict(method=lab.removesuffix(BLOCK), workload=w, kind=kind_of[w],
                         tau_token=median([r.tokens_per_pass for r in token]),
                         tau_block=median([r.tokens_per_pass for r in rs]),
                         speedup_token=sp.get((w, lab.removesuffix(BLOCK))), speedup_block=sp.get((w, lab)),
                         kept_block=sum(r.block_kept or 0 for r in rs),
                         kept_token_same_draws=sum(r.token_wise_kept or 0 for r in rs),
                         expected_block=sum(r.block_expected or 0.0 for r in rs),
                         expected_token=sum(r.token_wise_expected or 0.0 for r in rs)))
    out = []
    for m, kind in dict.fromkeys((r["method"], r["kind"]) for r in rows):
        mine = [r for r in rows if r["method"] == m and r["kind"] == kind]
        agg = {k: median([r[k] for r in mine if r[k] is not None])
               for k in ("tau_token", "tau_block", "speedup_token", "speedup_block")}
        kb, kt = sum(r["kept_block"] for r in mine), sum(r["kept_token_same_draws"] for r in mine)
        eb, et = sum(r["expected_block"] for r in mine), sum(r["expected_token"] for r in mine)
        out.append(dict(method=m, kind=kind, workloads=[r["workload"] for r in mine], **agg,
                        tau_ratio=agg["tau_block"] / agg["tau_token"] if agg["tau_token"] else None,
                        kept_block=kb, kept_token_same_draws=kt,
                        expected_block=eb, expected_token=et, expected_ratio=eb / et if et else None))
    return out


def block_table(res: dict) -> list[str]:
    rows = res.get("block") or []
    if not rows:
        return []
    m = res["meta"]
    body = [[r["method"], r["kind"], str(len(r["workloads"])), _f(r["tau_token"]), _f(r["tau_block"]),
             _f(r["tau_ratio"], "{:.3f}"), _f(r["speedup_token"]), _f(r["speedup_block"]),
             f"{r['kept_block']} / {r['kept_token_same_draws']}",
             _f(r.get("expected_ratio"), "{:.3f}")] for r in rows]
    return [f"## Sampled at T={m['temperature']}: token-wise vs block verification",
            "Every chain row run a second time verified as one block (Sun et al. 2024, arXiv 2403.10444; "
            "core/block.py), "
            f"same setting, same seeds ({', '.join(map(str, m['seeds']))}), {m['max_new_tokens']} new tokens. τ and "
            "speedup: median over seeds, then over the kind's workloads. The last column counts, over the block runs' "
            "drafting steps, the drafts block kept against those token-wise verification would have kept on the same "
            "drafts with the same uniforms (paired, so far less noisy than the two runs' τ); the last, what each rule "
            "keeps in expectation over its uniforms on those same drafts, exactly (core/block.expected_kept: no "
            "noise from the draws nor from two texts), block ÷ token-wise.",
            _table(["method", "kind", "workloads", "τ token-wise", "τ block", "τ block ÷ token", "speedup token-wise",
                    "speedup block", "kept: block / token-wise, same draws",
                    "expected kept, same drafts: block ÷ token-wise"], body)]


COPYING = ("lookup", "suffix", "hf lookup k=10")   # the copying methods, and transformers' prompt lookup at its usual k


def copying(out: dict, by_name: dict) -> list[dict]:
    """Each copying method on the copy-heavy workloads (greedy), medians over them: τ, k̄, c, speedup, and its
    speedup ÷ transformers' prompt lookup at k = 10 on the same workloads (median of the per-workload ratios).
    transformers' τ is its tokens ÷ its target's forward passes (counted in bench/runs.run_hf)."""
    g = out["speedup"].get(GREEDY, {})
    pw, per_run = g.get("per_workload", {}), out["per_run"].get(GREEDY, {})
    costs = {(c["method"], c["workload"]): c for c in out["cost_model"]}
    hf = pw.get("hf lookup k=10", {})
    rows = []
    for lab in COPYING:
        ws = [w for w in pw.get(lab, {}) if by_name[w].kind == "copy-heavy"]
        if not ws:
            continue
        runs = per_run.get(lab, {})
        rows.append(dict(
            method=lab, workloads=len(ws),
            setting="; ".join(sorted({runs[w]["setting"] for w in ws if w in runs and runs[w]["setting"]})),
            tau=median([runs[w]["tokens_per_pass"] for w in ws if w in runs]),
            k_bar=median([costs[(lab, w)]["k_bar"] for w in ws if (lab, w) in costs]),
            c=median([costs[(lab, w)]["c"] for w in ws if (lab, w) in costs]),
            speedup=median([pw[lab][w] for w in ws]),
            vs_hf_lookup=median([pw[lab][w] / hf[w] for w in ws if hf.get(w)])))
    return rows


def _order(label: str) -> tuple:
    first = ["plain", "hf plain", "lookup", "suffix", "lookup (recording off)", "hf lookup k=10"]
    return (first.index(label) if label in first else len(first), label)


def targets(out: dict, by_name: dict) -> list[dict]:
    """The issue's targets, each with its measured value and whether it is met."""
    t = []

    def add(name, value, threshold, ok_if, note=""):
        met = None if value is None else (value >= threshold if ok_if == ">=" else value <= threshold)
        t.append(dict(target=name, value=value, threshold=threshold, rule=ok_if, met=met, note=note))

    copying_targets(out, by_name, add)
    check_targets(out, add)
    learned_targets(out, add)
    plain_targets(out, add)
    training_free_targets(out, by_name, add)
    return t


def training_free_targets(out: dict, by_name: dict, add) -> None:
    """Issue 35's targets (recycle, the training-free default, block verification) and issue 33's default lookup
    against transformers' prompt lookup; each row names the rows it divides."""
    sp = {mode: out["speedup"].get(mode, {}) for mode in (GREEDY, SAMPLED)}
    for mode, threshold in ((GREEDY, 1.4), (SAMPLED, 1.15)):
        add(f"issue 35: recycle on novel workloads, × plain ({mode}, median over workloads)",
            sp[mode].get("by_kind", {}).get("recycle", {}).get("novel"), threshold, ">=")
    d, choice = DEFAULT_METHOD, default_choice(out)
    low = choice["lowest"][d] if choice else None
    add(f"issue 35: the default ({d}) on every workload, × plain (the lowest, greedy and sampled)",
        low[0] if low else None, RULE, ">=", f"{low[1]}, {low[2]}" if low else "")
    for share, kind, mode, part, x in (choice["vs_part"] if choice else []):
        add(f"issue 35: the default ({d}) ÷ the better of its parts, {kind} ({mode})", share, RULE, ">=",
            f"{part} {x:.2f}×")
    for r in out.get("block") or []:
        exact = r.get("expected_ratio") is not None       # results written before it have the τ ratio only
        add(f"issue 35: block ÷ token-wise, {r['method']} ({r['kind']}, sampled): "
            + ("drafts kept in expectation on the same drafts" if exact else "τ"),
            r["expected_ratio"] if exact else r["tau_ratio"], 1.03, ">=",
            f"τ ratio {_f(r['tau_ratio'], '{:.3f}')}; speedup {_f(r['speedup_block'])}× against "
            f"{_f(r['speedup_token'])}×; same draws: block kept {r['kept_block']}, token-wise would have kept "
            f"{r['kept_token_same_draws']}")
    pw = sp[GREEDY].get("per_workload", {})
    hf = pw.get("hf lookup k=10", {})
    for lab in dict.fromkeys(("lookup", d)):
        ratios = [pw[lab][w] / hf[w] for w in hf if by_name[w].kind == "copy-heavy" and pw.get(lab, {}).get(w)
                  and hf[w]]
        add(f"issue 33: {lab} ÷ hf lookup k=10 on copy-heavy workloads (greedy, median of per-workload ratios)",
            median(ratios), 1.1, ">=", f"{len(ratios)} workload(s)")


def copying_targets(out: dict, by_name: dict, add) -> None:
    """Issue 23 §4: the default lookup and suffix, beside transformers' prompt lookup at k = 10."""
    g = out["speedup"].get(GREEDY, {})
    bk, pw = g.get("by_kind", {}), g.get("per_workload", {})
    copy = "copy-heavy"
    add("§4 default lookup on copy-heavy workloads, × specviz plain (greedy, median over workloads)",
        bk.get("lookup", {}).get(copy), 3.0, ">=")
    ratios = [pw["lookup"][w] / pw["hf lookup k=10"][w] for w in pw.get("hf lookup k=10", {})
              if by_name[w].kind == copy and w in pw.get("lookup", {}) and pw["hf lookup k=10"][w]]
    add("§4 default lookup ÷ hf lookup k=10 on copy-heavy workloads (greedy, median of per-workload ratios)",
        median(ratios), 1.25, ">=")
    sampled = out["speedup"].get(SAMPLED, {}).get("per_workload", {}).get("lookup", {})
    novel = [x for w, x in sampled.items() if by_name[w].kind == "novel"]
    add("§4 default lookup on each sampled novel workload, × plain (the lowest)", min(novel) if novel else None,
        0.95, ">=", f"{len(novel)} workload(s)")
    lk, sf = pw.get("lookup", {}), pw.get("suffix", {})
    diffs = [sf[w] / lk[w] for w in sf if by_name[w].kind == copy and lk.get(w)]
    add("§4 suffix ÷ lookup on every copy-heavy workload (greedy, the lowest)", min(diffs) if diffs else None,
        1.0, ">=", f"{len(diffs)} workload(s)")
    st = {(r["method"], r["workload"]): r["model_speedup"] for r in out.get("same_text", []) if r["kind"] == copy}
    same = [st[("suffix", w)] / st[("lookup", w)] for m, w in st if m == "suffix" and st.get(("lookup", w))]
    if same:
        add("§4 the same, on the same text (float32 pass: plain's own text; τ with the bench's v, decode only)",
            min(same), 1.0, ">=", f"{len(same)} workload(s); explains the row above when bfloat16 texts differ")
    sess = {}
    for r in out.get("sessions", []):
        sess.setdefault(r["session"], {})[r["label"]] = r["speedup"]
    per = [d["suffix (cache on)"] / d["lookup"] for d in sess.values() if d.get("lookup") and "suffix (cache on)" in d]
    add("§4 suffix (cross-request cache on) ÷ lookup on the session workloads (the lowest session)",
        min(per) if per else None, 1.5, ">=", f"{len(per)} session(s); median {_f(median(per))}")


def check_targets(out: dict, add) -> None:
    """The checks on the measuring itself: recording overhead, novel text, the cost model, greedy equality."""
    add("recording overhead (lookup, greedy, median over workloads)", out["recording_overhead"]["median"], 0.05, "<=")
    for mode in (GREEDY, SAMPLED):
        for lab, d in out["speedup"].get(mode, {}).get("by_kind", {}).items():
            eng = next(iter(out["per_run"][mode][lab].values()))["engine"]
            if eng == "specviz" and lab != "plain" and "novel" in d:
                add(f"{lab} on novel workloads, × plain ({mode})", d["novel"], 0.9, ">=")
    for meth in sorted({c["method"] for c in out["cost_model"]}, key=_order):
        for key, how in (("error", "end to end"), ("error_decode", "decode only")):
            errs = [abs(c[key]) for c in out["cost_model"] if c["method"] == meth and c.get(key) is not None]
            add(f"cost model vs measured ({how}), {meth}: worst |error| over workloads",
                max(errs) if errs else None, 0.15, "<=")
    for dt in sorted({e["dtype"] for e in out["equality"]}):
        rows = [e for e in out["equality"] if e["dtype"] == dt]
        bad = sum(not e["ok"] for e in rows)
        rule = "identical to plain" if dt == "float32" else "identical or a near-tie"
        add(f"greedy equality ({dt}): outputs not {rule}", float(bad), 0.0, "<=",
            f"{len(rows)} method×workload pairs, {sum(not e['identical'] for e in rows)} differ")


def plain_targets(out: dict, add) -> None:
    """§0: specviz plain against transformers' plain; the full bench's wall time."""
    hf = out["speedup"].get(GREEDY, {}).get("per_workload", {}).get("hf plain", {})
    add("§0 specviz plain ÷ transformers plain (greedy, median over workloads)",
        median([1.0 / x for x in hf.values() if x]), 0.95, ">=",
        "the bench's own threads; §0's loaded-machine and app targets are measured outside the bench")
    roof = out.get("plain_roof")
    if roof:
        r = out["meta"]["roof"]
        add("§5 plain decoding ÷ the bandwidth limit (greedy, decode only, median over workloads)",
            roof["median_share"], 0.4, ">=", f"limit {r['limit_tok_s']:.1f} tok/s = {r['bandwidth'] / 1e9:.1f} GB/s "
            f"({r['copy_mib']} MiB copy, median of {r['tries']}) ÷ {r['bytes_per_token'] / 2**20:.0f} MiB per token "
            f"at {r['context']} tokens of context")
    if not out["meta"].get("quick") and out["meta"].get("complete", True):
        add("full bench wall time (minutes)", out["meta"]["wall_s"] / 60, 30.0, "<=")


# issue 24 §4's targets (issue 11's were 1.5 / 1.2 / 1.2): the best learned proposer on novel text, greedy
# and sampled at T = 0.8, and each learned proposer alone on the copy-heavy workloads (greedy)
LEARNED_GOAL = {"novel": 1.5, "copy-heavy": 1.3}
LEARNED_GOAL_SAMPLED = 1.3


def learned_targets(out: dict, add) -> None:
    """Issue 24's speed targets: the best learned proposer on novel text (greedy >= 1.5x, sampled
    >= 1.3x), and each learned proposer alone >= 1.3x on the copy-heavy workloads (greedy)."""
    for mode, threshold in ((GREEDY, LEARNED_GOAL["novel"]), (SAMPLED, LEARNED_GOAL_SAMPLED)):
        bk = out["speedup"].get(mode, {}).get("by_kind", {})
        xs = {lab: bk[lab].get("novel") for lab in LEARNED if bk.get(lab, {}).get("novel") is not None}
        if xs:
            best = max(xs, key=xs.get)
            add(f"best learned proposer on novel workloads, × plain ({mode})", xs[best], threshold, ">=",
                f"{best}")
    bk = out["speedup"].get(GREEDY, {}).get("by_kind", {})
    for lab in LEARNED:
        x = bk.get(lab, {}).get("copy-heavy")
        if x is not None:
            add(f"{lab} on copy-heavy workloads, × plain (greedy)", x, LEARNED_GOAL["copy-heavy"], ">=")


def learned_table(res: dict) -> list[str]:
    """Every learned proposer's τ and speedup beside lookup's, chain beside tree (same runs, same
    heads), medians over the workloads of a kind."""
    kind_of = dict(res["meta"]["workloads"])
    cols = [(GREEDY, "copy-heavy"), (GREEDY, "novel"), (SAMPLED, "novel")]
    labels = [lab for lab in ("lookup",) + LEARNED
              if any(lab in res["per_run"].get(mode, {}) for mode, _ in cols)]
    if not any(lab in LEARNED for lab in labels):
        return []

    def cells(lab: str, col: tuple[str, str]) -> list[str]:
        mode, kind = col
        per_w = res["per_run"].get(mode, {}).get(lab, {})
        tau = median([r["tokens_per_pass"] for w, r in per_w.items() if kind_of.get(w) == kind])
        k_bar = median([r["mean_k"] for w, r in per_w.items() if kind_of.get(w) == kind])
        sp = res["speedup"].get(mode, {}).get("by_kind", {}).get(lab, {}).get(kind)
        return [_f(tau), _f(k_bar, "{:.1f}"), _f(sp)]

    rows = _grid(labels, cols, cells)
    head = ["method"] + [f"{mode} {kind} {x}" for mode, kind in cols for x in ("τ", "drafted/pass", "×")]
    return ["## Learned proposers beside lookup; chain vs tree on the same heads",
            "Medians over the workloads of a kind, from the timed runs above. A tree row drafts from the same "
            "weights as the chain above it; its drafted/pass counts the tree's nodes, which one target pass "
            "verifies together (tree attention mask), so its pass costs v(nodes) — see v for trees below.",
            _table(head, rows)]


def _v_term(res: dict) -> str:
    """The verify-cost term of the cost-model rows as the results were computed: v̄ (format 2 on), v(k̄) before."""
    return "v̄" if res.get("format", 1) >= 2 else "v(k̄)"


def _v_means(res: dict) -> str:
    """What the verify-cost term was, said once in the text."""
    if res.get("format", 1) >= 2:
        return (", v̄ the mean of v(kᵢ) over a run's passes (each pass priced at the drafts it verified; v(k) for a "
                "fixed k; the median over repeats)")
    return (", v(k̄) one pass of the mean draft length (these results predate pricing each pass, docs/metrics.md: "
            "for a method that sizes its drafts it prices mostly empty passes too high, and v was held flat beyond "
            "k = 16)")


def needs_table(res: dict) -> list[str]:
    """What the learned targets would take at today's costs (greedy, from the cost-model rows): the
    tokens per pass needed, τ_needed = goal · (v̄ + k̄·c), the speedup if drafting were free,
    τ ÷ v̄, and for a chain the per-position α whose E[τ] at k̄ reaches τ_needed."""
    cm, v = res.get("cost_model", []), _v_term(res)
    bk = res["speedup"].get(GREEDY, {}).get("by_kind", {})
    rows = []
    for lab in LEARNED:
        for kind, goal in LEARNED_GOAL.items():
            sel = [c for c in cm if c["method"] == lab and c.get("kind") == kind]
            if not sel:
                continue
            need = median([tau_needed(goal, c["k_bar"], c["c"], c["v"]) for c in sel])
            k_bar = median([c["k_bar"] for c in sel])
            a_need = None if REGISTRY[lab].tree else alpha_for_tau(need, k_bar)
            rows.append([lab, kind, f"≥ {goal}", _f(bk.get(lab, {}).get(kind)), _f(median([c["tau"] for c in sel])),
                         _f(k_bar, "{:.1f}"), _f(median([c["v"] for c in sel])),
                         _f(median([c["k_bar"] * c["c"] for c in sel])),
                         _f(median([speedup_from_tau(c["tau"], c["k_bar"], 0.0, c["v"]) for c in sel])), _f(need),
                         _f(median([c["alpha"] for c in sel])),
                         "–" if REGISTRY[lab].tree else ("beyond k̄ + 1" if a_need is None else _f(a_need))])
    if not rows:
        return []
    return ["## What the learned targets would take",
            "Greedy, the decode-phase cost model of the cost-model check below, medians over the workloads of a kind. "
            f"*τ needed* = goal × ({v} + k̄·c): the tokens per pass the method would have to keep at the draft "
            f"and verify costs it has now{_v_means(res)}. *Free-draft ceiling* = τ ÷ {v}: "
            "its speedup if drafting cost nothing; "
            "where that is below the goal, no cheaper draft reaches it and only more tokens per pass can. "
            "*α needed* (chains): the per-position acceptance whose E[τ] at k̄ equals τ needed, beside the α "
            "measured (kept ÷ tested).",
            _table(["method", "kind", "goal ×", "measured ×", "τ", "k̄", v, "k̄·c", "free-draft ceiling",
                    "τ needed", "α measured", "α needed"], rows)]


# -- markdown -------------------------------------------------------------------------------------------
def _f(x, fmt="{:.2f}"):
    return F.DASH if x is None else fmt.format(x)


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def _grid(keys: list[str], cols: list, cells) -> list[list[str]]:
    """A table's rows: per key, the key, then the cells(key, col) strings of each column in turn."""
    return [[key] + [x for col in cols for x in cells(key, col)] for key in keys]


def copying_tables(res: dict) -> list[str]:
    """'Copying methods side by side' and the session phase's table (results without them: nothing)."""
    parts = []
    if res.get("copying"):
        parts += ["## Copying methods side by side (greedy, copy-heavy workloads)",
                  "Medians over the copy-heavy workloads. τ = tokens per target pass (transformers': its tokens ÷ "
                  "its target model's forward passes, prefill included as in specviz's count); k̄ = tokens drafted "
                  "per step; c = drafting time per drafted token ÷ a plain step (docs/metrics.md); speedup × specviz "
                  "plain in the same repeat; the last column divides each workload's speedup by transformers' "
                  "prompt lookup at k = 10 on the same workload. Neither copying method is tuned: each runs its "
                  "default.",
                  _table(["method", "setting", "τ", "k̄", "c", "speedup", "÷ hf lookup k=10"],
                         [[r["method"], r["setting"] or "–", _f(r["tau"]), _f(r["k_bar"]), _f(r["c"], "{:.3f}"),
                           _f(r["speedup"]), _f(r["vs_hf_lookup"])] for r in res["copying"]])]
    if res.get("same_text"):
        m = res["meta"]
        rows = sorted(res["same_text"], key=lambda r: (r["kind"] != "copy-heavy", r["workload"], r["method"]))
        parts += [f"### Copying on the same text (the float32 pass, {m.get('equality_tokens', '?')} new tokens)",
                  "Every method writes plain decoding's own text here (float32; the timed bfloat16 runs do too, "
                  "unless the equality rows above say otherwise), so τ and the cost model's decode-only speedup "
                  "(tokens ÷ Σ v(drafted) with this bench's v; v_tree for suffix's trees) compare the rules alone, "
                  "without the prefill and the clock.",
                  _table(["workload", "kind", "method", "setting", "τ", "k̄", "model speedup", "same text as plain"],
                         [[r["workload"], r["kind"], r["method"], r["setting"] or "–", _f(r["tau"]), _f(r["mean_k"]),
                           _f(r["model_speedup"]), "yes" if r["identical"] else "no"] for r in rows])]
    if res.get("sessions"):
        m = res["meta"]
        parts += [f"## Sessions: several requests in order (greedy, {m.get('session_new_tokens', '?')} new tokens per "
                  f"request, {m.get('session_repeats', '?')} interleaved repeat(s))",
                  "Each session sends its requests in order, each restating the material; plain decoding runs every "
                  "request too. *cache on*: suffix remembers each finished request's output for the next ones; "
                  "*cache off*: every request starts with an empty cache; lookup only sees the request itself. "
                  "Speedup = the whole session's tokens/s ÷ plain's whole session in the same repeat, median over "
                  "repeats; per request likewise.",
                  _table(["session", "method", "τ", "k̄", "c", "tokens/s", "speedup", "per request", "same as plain"],
                         [[r["session"], r["label"], _f(r["tokens_per_pass"]), _f(r["mean_k"]),
                           _f(r.get("c"), "{:.3f}"),
                           _f(r["tokens_per_s"], "{:.1f}"), _f(r["speedup"]),
                           " ".join(_f(x) for x in r["request_speedups"]),
                           ("–" if None in r["same_as_plain"]
                            else f"{sum(r['same_as_plain'])}/{len(r['same_as_plain'])}")]
                          for r in res["sessions"]])]
    return parts


def roof_line(res: dict) -> str:
    """The memory limit the run measured and plain decoding's share of it (older runs measured neither)."""
    r, p = res["meta"].get("roof"), res.get("plain_roof")
    if not r or not p:
        return "Memory limit: not measured (a run before issue 33 §5)."
    return (f"Memory limit: {r['bandwidth'] / 1e9:.1f} GB/s ({r['copy_mib']} MiB copy, median of {r['tries']}) ÷ "
            f"{r['bytes_per_token'] / 2**20:.0f} MiB read per token (weights + KV at {r['context']} tokens) = "
            f"{r['limit_tok_s']:.1f} tok/s; plain greedy decoding (prefill left out) reaches "
            f"{_f(p['median_share'], '{:.2f}')} of it (median over workloads).")


def _header(res: dict) -> list[str]:
    """The run's settings, the machine's noise, what a speedup is, and the targets."""
    m = res["meta"]
    la = [x["load1"] for x in m["load_average"]]
    return [
        "# specviz bench results",
        f"{m['target']} · {m['dtype']} · {m['device']} · {threads_line(m)} · torch {m['torch']} · "
        f"{m['max_new_tokens']} max new tokens ({m.get('tuning_tokens', '?')} when tuning) · {m['repeats']} greedy "
        f"repeats · seeds {m['seeds']} at "
        f"T={m['temperature']} · started {m['started']} · {m['wall_s'] / 60:.1f} min"
        + (" · **quick run**" if m.get("quick") else "")
        + ("" if m.get("complete", True) else " · **partial: written before the run finished**"),
        (f"Command: `{m['command']}`" if m.get("command") else ""),
        f"Machine: {where(m)}.",
        f"Machine noise: 1-minute load average {min(la):.1f}–{max(la):.1f} across phases "
        f"(2 cores); plain runs' wall-time coefficient of variation (median over workloads): "
        f"{_f(m.get('plain_wall_cv_median'), '{:.1%}')}.",
        roof_line(res),
        "Speedup = method tokens/s ÷ specviz plain tokens/s in the same repeat (end to end, prefill "
        "included, model load excluded), median over repeats (greedy) or seeds (sampled), then median "
        "over the workloads of a kind. Rows starting with *hf* are transformers' own `generate()`, run on the "
        "same model object with specviz's attention and KV cache (engine/attention.py): they differ from "
        "specviz's rows in the decode loop (and in their prefill, which also computes the prompt's last token).",
        "## Targets",
        _table(["target", "measured", "threshold", "met"],
               [[t["target"], _f(t["value"], "{:.3f}"), f"{t['rule']} {t['threshold']}",
                 {True: "yes", False: "**no**", None: "–"}[t["met"]]] for t in res["targets"]]),
    ]


def _speedup_tables(res: dict, mode: str) -> list[str]:
    """One decoding mode's speedups per workload and kind, then what the specviz runs did."""
    m = res["meta"]
    ws = [w for w, _ in m["workloads"]]
    kind_of = dict(m["workloads"])
    parts = []
    sp = res["speedup"].get(mode)
    if not sp or not sp["per_workload"]:
        return []
    wl = [w for w in ws if any(w in d for d in sp["per_workload"].values())]
    kinds = sorted({kind_of[w] for w in wl})
    rep = res.get("output_repetition", {}).get(mode, {})
    rows = [["*plain output's repeated 4-grams*", ""] + [_f(rep.get(w), "{:.0%}") for w in wl] + [""] * len(kinds)]
    for lab, d in sorted(sp["per_workload"].items(), key=lambda x: _order(x[0])):
        setting = "; ".join(sorted({r["setting"] for r in res["per_run"][mode][lab].values() if r["setting"]}))
        rows.append([lab, setting] + [_f(d.get(w)) for w in wl] + [_f(sp["by_kind"][lab].get(k)) for k in kinds])
    title = ("## Greedy speedup (× plain)" if mode == GREEDY else
             f"## Sampled at T={m['temperature']} speedup (× plain), novel workloads")
    note = ("Greedy decoding of a small model loops even on open-ended prompts (first row: the share of "
            "plain's output 4-grams already seen earlier in it), and lookup copies those loops, so the "
            "novel column flatters lookup here; the sampled table below is the novel-text case."
            if mode == GREEDY else
            "Sampling breaks the loops: this is where lookup has little to copy. Same seeds for every method.")
    parts += [title, note, _table(["method", "setting"] + wl + [f"median {k}" for k in kinds], rows)]
    rows = []
    for lab, d in sorted(res["per_run"][mode].items(), key=lambda x: _order(x[0])):
        for w in wl:
            r = d.get(w)
            if r and r["engine"] == "specviz" and lab != "plain":
                rows.append([lab, w, _f(r["tokens_per_pass"]), _f(r.get("alpha")), _f(r["draft_acceptance_rate"]),
                             _f(r["mean_k"]),
                             _f(r["k_at_floor_share"], "{:.0%}"), _f(r["tokens_per_s"], "{:.1f}"),
                             _f(r["tokens"], "{:.0f}")])
    parts += [f"### {mode}: what the specviz runs did",
              _table(["method", "workload", "tokens/pass τ", "α (kept ÷ tested)", "α̂ (kept ÷ drafted)", "mean k̄",
                      "k at floor",
                      "tokens/s", "tokens"], rows)]
    return parts


def _tuning_tables(res: dict) -> list[str]:
    """The trained chain proposers' tuning grid, the chosen setting in bold."""
    m = res["meta"]
    parts = [f"## Tuning (a separate repeat of {m.get('tuning_tokens', '?')} new tokens; medians over the "
              "workloads of a kind; the chosen setting in bold)",
              "Only the trained chain proposers are tuned. The copying methods (lookup, suffix) are not: each runs "
              "its default at every workload (their settings: the tables above)."]
    chosen = {(c["mode"], c["kind"], c["method"]): c["setting"] for c in res["chosen"]}
    cols = sorted({(t["mode"], t["kind"]) for t in res["tuning"]})

    def cell(meth: str, st: str, col: tuple[str, str]) -> list[str]:
        mode, kind = col
        x = _f(median([t["speedup"] for t in res["tuning"]
                       if (t["method"], t["setting"], t["mode"], t["kind"]) == (meth, st, mode, kind)]))
        return [f"**{x}**" if chosen.get((mode, kind, meth)) == st else x]

    for meth in sorted({t["method"] for t in res["tuning"]}, key=_order):
        settings = list(dict.fromkeys(t["setting"] for t in res["tuning"] if t["method"] == meth))
        rows = _grid(settings, cols, lambda st, col, meth=meth: cell(meth, st, col))
        parts += [f"### {meth}", _table(["setting"] + [f"{mode} {kind}" for mode, kind in cols], rows)]
    return parts


def _recording_overhead(res: dict) -> list[str]:
    ws = [w for w, _ in res["meta"]["workloads"]]
    ro = res["recording_overhead"]
    return ["## Recording overhead (lookup, greedy)",
              _table(["workload", "overhead"],
                     [[w, _f(ro["per_workload"][w], "{:.1%}")] for w in ws if w in ro["per_workload"]]
                     + [["**median**", _f(ro["median"], "{:.1%}")]])]


def _cost_model_section(res: dict) -> list[str]:
    """docs/metrics.md's cost model against the measured speedups, and the independence check."""
    v = _v_term(res)
    return ["## Cost-model check (greedy) and independence check",
              f"docs/metrics.md's model predicts the decode phase: τ ÷ ({v} + k̄·c), with v(k) measured by timing "
              f"decode-loop steps that verify k+1 positions against plain steps (t₁){_v_means(res)}, and c from "
              "the run's own draft times. It is compared two ways, each like with like: "
              "*decode only* against the measured speedup with both prefills left out, and *end to end* (the "
              f"target) with the measured prefill P added to both sides, (P + N·t₁) ÷ (P + N/τ·({v} + k̄·c)·t₁), "
              "against the measured end-to-end speedup. error = predicted ÷ measured − 1: a positive error is "
              "time the model does not see (overhead). The independence check (a lesson, not a target): "
              "E[τ](α) = (1 − α^(k̄+1)) ÷ (1 − α), with α = accepted ÷ tested, is what τ would be if each tested "
              "position were kept independently; beside it the per-position acceptance a_1 … a_m (flat = "
              "independent, rising = bursty, as lookup's copies are right or wrong in whole runs). α̂ = accepted "
              "÷ drafted is shown for reference only: τ = 1 + α̂·k̄ holds for every run, so E[τ](α̂) would fall "
              "short of τ by construction.",
              "v(k) measured (median over interleaved rounds; spread = IQR over rounds; *noisy* = spread larger "
              "than the distance from 1, too noisy to quote on its own): " + ", ".join(
                  f"v({k})={v:.2f}" + ("" if res.get("v_spread", {}).get(k) is None else
                                       f" ±{res['v_spread'][k]:.2f}"
                                       + (" *noisy*" if res["v_spread"][k] > abs(v - 1) else ""))
                  for k, v in sorted(res["v"].items(), key=lambda x: int(x[0])))
              + ("" if not res.get("v_tree") else
                 ". v for trees (k drafted nodes verified with a tree mask, so a tree of m nodes costs the entry for "
                 "m − 1; the tree rows' cost check uses these): " + ", ".join(
                     f"v_tree({k})={v:.2f}" + ("" if res.get("v_tree_spread", {}).get(k) is None else
                                               f" ±{res['v_tree_spread'][k]:.2f}")
                     for k, v in sorted(res["v_tree"].items(), key=lambda x: int(x[0])))),
              _table(["method", "workload", "τ", "k̄", "c", v, "predicted decode", "measured decode",
                      "error decode", "predicted end to end", "measured end to end", "error end to end",
                      "α", "E[τ](α)", "a_1 … a_m", "α̂"],
                     [[c["method"], c["workload"], _f(c["tau"]), _f(c["k_bar"]), _f(c["c"], "{:.3f}"),
                       _f(c["v"]), _f(c["predicted"]), _f(c.get("measured_decode")),
                       _f(c.get("error_decode"), "{:+.1%}"), _f(c.get("predicted_with_prefill")),
                       _f(c["measured"]), _f(c["error"], "{:+.1%}"), _f(c["alpha"]), _f(c["tau_iid"]),
                       " ".join(f"{a:.2f}" for a in (c.get("per_position") or [])) or "–",
                       _f(c.get("draft_acceptance_rate"))]
                      for c in res["cost_model"]])]


def _equality_section(res: dict) -> list[str]:
    """Greedy equality with plain decoding, and what was not run."""
    parts = []
    diffs = [e for e in res["equality"] if not e["identical"]]
    n32 = sum(e["dtype"] == "float32" for e in res["equality"])
    parts += ["## Greedy equality with plain decoding",
              f"{len(res['equality'])} method×workload comparisons ({n32} in float32); "
              f"{len(diffs)} differ. A difference is acceptable only in bfloat16 and only at a near-tie "
              "(top1 − top2 ≤ 2 bf16 ulps of top1 in the plain run's logits at the first differing token)."]
    if diffs:
        parts.append(_table(["dtype", "method", "workload", "first differing token d", "top1", "gap", "verdict"],
                            [[e["dtype"], e["method"], e["workload"], str(e["position"]), _f(e["top1"], "{:.3f}"),
                              _f(e["gap"], "{:.3f}"), e["note"]] for e in diffs]))
    if res["skipped"]:
        parts += ["## Not run", _table(["method", "why"], [[k, v] for k, v in sorted(res["skipped"].items())])]
    return parts


def markdown(res: dict) -> str:
    parts = _header(res)
    for mode in (GREEDY, SAMPLED):
        parts += _speedup_tables(res, mode)
    parts += block_table(res)
    parts += learned_table(res)
    parts += needs_table(res)
    parts += _tuning_tables(res)
    parts += copying_tables(res)
    parts += _recording_overhead(res)
    parts += _cost_model_section(res)
    parts += _equality_section(res)
    return "\n\n".join(parts) + "\n"

# -- html (plotly) ----------------------------------------------------------------------------------------
def figures(res: dict) -> list:
    import plotly.graph_objects as go

    figs = []
    for mode in (GREEDY, SAMPLED):
        sp = res["speedup"].get(mode)
        if not sp or not sp["per_workload"]:
            continue
        fig = go.Figure()
        ws = [w for w, _ in res["meta"]["workloads"]]
        for lab, d in sorted(sp["per_workload"].items(), key=lambda x: _order(x[0])):
            if lab == "plain":
                continue
            xs = [w for w in ws if w in d]
            fig.add_bar(name=lab, x=xs, y=[d[w] for w in xs],
                        hovertemplate="%{x}<br>" + lab + ": %{y:.2f}× plain<extra></extra>")
        fig.add_hline(y=1.0, line_dash="dot", annotation_text="plain")
        title = "Greedy" if mode == GREEDY else f"Sampled (T={res['meta']['temperature']})"
        fig.update_layout(barmode="group", title=f"{title}: speedup over specviz plain decoding, per workload",
                          yaxis_title="× plain (tokens/s ratio)", legend_title="method")
        figs.append(fig)
    cm = res["cost_model"]
    if cm:
        fig = go.Figure()
        pred = {id(c): c.get("predicted_with_prefill") or c["predicted"] for c in cm}  # end to end when known
        for meth in sorted({c["method"] for c in cm}):
            rows = [c for c in cm if c["method"] == meth]
            fig.add_scatter(mode="markers", name=meth, x=[c["measured"] for c in rows],
                            y=[pred[id(c)] for c in rows], text=[c["workload"] for c in rows],
                            hovertemplate="%{text}<br>measured %{x:.2f}×, predicted %{y:.2f}×<extra></extra>")
        hi = max([c["measured"] for c in cm] + list(pred.values()) + [1.0]) * 1.1
        for f, dash in ((1.0, "solid"), (1.15, "dot"), (0.85, "dot")):
            fig.add_scatter(x=[0, hi], y=[0, hi * f], mode="lines", line=dict(dash=dash, color="grey"),
                            showlegend=False, hoverinfo="skip")
        fig.update_layout(title=f"Cost model (τ ÷ ({_v_term(res)} + k̄·c), prefill added) against the measured "
                                "end-to-end speedup (±15% dotted)",
                          xaxis_title="measured speedup", yaxis_title="predicted speedup")
        figs.append(fig)
    return figs


def html(res: dict) -> str:
    figs = figures(res)
    body = "".join(f.to_html(full_html=False, include_plotlyjs=("directory" if i == 0 else False))
                   for i, f in enumerate(figs))
    m = res["meta"]
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>specviz bench</title></head><body>"
            f"<h1>specviz bench</h1><p>{m['target']} · {m['dtype']} · {m['device']} · started {m['started']}; "
            f"tables in results.md, numbers in results.json.</p>{body}</body></html>")


def write(b, folder: str, costs: list, sp_greedy: dict, sp_sampled: dict) -> list[str]:
    return write_results(results(b, costs, sp_greedy, sp_sampled), folder)


def write_results(res: dict, folder: str) -> list[str]:
    res = json.loads(json.dumps(res, sort_keys=True))  # exactly what a rebuild from the file will see
    os.makedirs(folder, exist_ok=True)
    paths = [os.path.join(folder, f) for f in ("results.json", "results.md", "results.html")]
    with open(paths[0], "w") as fh:
        json.dump(res, fh, indent=1, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    with open(paths[1], "w") as fh:
        fh.write(markdown(res))
    with open(paths[2], "w") as fh:
        fh.write(html(res))
    js = os.path.join(folder, "plotly.min.js")  # the chart works offline: plotly.js sits beside it
    if not os.path.exists(js):
        from plotly.offline import get_plotlyjs
        with open(js, "w") as fh:
            fh.write(get_plotlyjs())
    return paths


def rebuild(folder: str) -> list[str]:
    """Rewrite results.md and results.html from results.json, adding the rows of targets set since it was written
    (each computed from the file's own figures; the rows it has keep their values)."""
    with open(os.path.join(folder, "results.json")) as fh:
        res = json.load(fh)
    if "speedup" in res and "targets" in res:
        have = {t["target"] for t in res["targets"]}
        res["targets"] += [t for t in targets(res, BY_NAME) if t["target"] not in have]
    return write_results(_r(res), folder)
