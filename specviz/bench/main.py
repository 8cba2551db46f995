"""python -m specviz bench: measured speedups against plain decoding and transformers' own paths.

Phases (each printed with its elapsed time; results are written even when a check fails):
  1. load the target, warm up, measure v(k)                         (passcost.measure_v)
  2. tune k for every trained chain proposer on separate runs (48 new tokens), per workload kind, on the
     first workload of each kind (the timed phases then run every workload, so three in four are
     held out): greedy, and sampled on the novel kind. Grid: k in {2,4} and adaptive k up to 8. Never
     picked from the timed repeats. Nothing else is tuned: the copying methods (lookup's match rule,
     suffix) run at their defaults, drafting up to 24 tokens as far as the match goes; the tree rows
     (the same Medusa and EAGLE heads drafting a tree) run at one fixed shape (their registry entry's k).
  3. greedy, timed: 3 interleaved repeats of every specviz method on every workload, one plain run
     per repeat shared by all; transformers' rows, 'lookup (recording off)' (references) and the tree
     rows in the first 2 repeats
  4. sampled at T=0.8, timed: 3 seeds of every specviz method on the novel workloads
  5. sessions, greedy: each session's requests in order (engine/sessions.session_against_plain),
     plain decoding, suffix with its cross-request cache on and off, and lookup, interleaved
  6. equality pass in float32 (64 new tokens): every chosen method's greedy ids against plain
     decoding's (the bfloat16 timed runs are checked too, over all 128 tokens: differences only at
     near-ties); a failure exits with code 1
Speedup (engine/measure.py, docs/metrics.md) = method tokens/s ÷ plain tokens/s within one repeat (or
seed), median over repeats, then median over the workloads of a kind.
Threads: the bench runs as the CLI and the app do (specviz/runtime.py: OpenMP's default wait policy,
a thread per core that the rest of the machine leaves free); it records each phase's load average and
how many times the thread count changed.
Results go to runs/bench-quick/ (--quick) or runs/bench/; the committed bench/ only with --out bench.
`--estimate` prints the plan's expected wall time from a previous full run's measured run times.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field

import torch

from specviz import runtime
from specviz.bench import report as bench_report
from specviz.bench.checks import compare_ids
from specviz.bench.estimate import estimate, reference
from specviz.bench.plan import (
    GREEDY,
    QUICK_V_KS,
    SAMPLED,
    SESSION_ROWS,
    TRAINED_METHODS,
    TREE_V_KS,
    TREES,
    UNTUNED,
    Plan,
    block_rows,
    candidates,
    is_tree,
    tuned,
)
from specviz.bench.results import kind_folder
from specviz.bench.runs import Env, Spec, run
from specviz.core.costmodel import cost_check, draft_cost, mean_v, passes_speedup, plain_step_time
from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import median, ratio, speedup
from specviz.engine import (
    artifacts,
    autodtype,
    llama,
    measure,
    methods as M,
    packed,
    peaks,
    sessions as SE,
    workloads as W,
)
from specviz.engine.device import machine
from specviz.engine.methods import REGISTRY, encode_prompt, make_proposer
from specviz.engine.models import DEFAULT, LoadedModel, load_tokenizer, resolve_dtype, tiny_llama
from specviz.engine.passcost import V_KS, measure_v


@dataclass
class Bench:
    """Everything measured in one bench run (bench_report turns it into JSON, markdown, HTML)."""
    plan: Plan
    meta: dict = field(default_factory=dict)
    v: dict = field(default_factory=dict)
    v_tree: dict = field(default_factory=dict)       # v of a tree with k drafted nodes (tree mask), when trees run
    tuning: list = field(default_factory=list)       # rows: mode, kind, workload, method, setting, speedup...
    chosen: dict = field(default_factory=dict)       # {(mode, kind, method): Spec}
    runs: dict = field(default_factory=dict)         # {(mode, workload, label): [Result per repeat/seed]}
    specs: dict = field(default_factory=dict)        # {(mode, workload, label): Spec}
    equality: list = field(default_factory=list)     # Equality rows (float32 pass and bfloat16 timed runs)
    skipped: dict = field(default_factory=dict)      # {method: why}
    load: list = field(default_factory=list)         # (phase, elapsed_s, loadavg 1 min)
    sessions: list = field(default_factory=list)     # session rows (SessionMeasured.row() + per-request names)
    same_text: list = field(default_factory=list)    # copying methods in the float32 pass: plain's own text
    t0: float = field(default_factory=time.perf_counter)

    def runs_of(self, mode: str) -> list[tuple[str, str, list]]:
        """(workload, label, results per repeat/seed) of every row run in `mode`, in the order they ran."""
        return [(wn, label, rs) for (m, wn, label), rs in self.runs.items() if m == mode]

    def log(self, msg: str) -> None:
        el = time.perf_counter() - self.t0
        print(f"[{int(el // 60):02d}:{int(el % 60):02d}] {msg}", file=sys.stderr, flush=True)

    def phase(self, name: str) -> None:
        la = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        self.load.append((name, time.perf_counter() - self.t0, la))
        self.log(f"== {name} (load average {la:.1f})")


# -- models ----------------------------------------------------------------------------------------
def load_env(target_name: str, device: str, dtype: str) -> tuple[Env, dict]:
    """Target, drafter (trained one, or a tiny one for --target tiny) and the proposer builder."""
    skipped: dict = {}
    if target_name == "tiny":
        tok = load_tokenizer(DEFAULT)
        dt = resolve_dtype(dtype, torch.device("cpu"))
        target = tiny_llama(vocab_size=len(tok), layers=2, hidden=32, seed=0, dtype=dt, max_positions=2048)
        target.tokenizer = tok
        drafter = tiny_llama(vocab_size=len(tok), layers=1, hidden=32, seed=1, dtype=dt, max_positions=2048)
        drafter.tokenizer = tok
    else:
        target = autodtype.load(target_name, device, dtype, "speculative")   # auto: timed once per machine
        drafter = trained_drafter(target, skipped)
    env = Env(target=target, drafter=drafter)
    env.build = lambda method, n: make_proposer(method, target, n=n, drafter=drafter)
    return env, skipped


def trained_drafter(target: LoadedModel, skipped: dict) -> LoadedModel | None:
    """methods.trained_drafter, with why it is missing written into skipped."""
    try:
        drafter = M.trained_drafter(target)
    except Exception as e:  # noqa: BLE001 - a broken artifact skips the method, with the reason shown
        skipped["draft"] = f"{type(e).__name__}: {e}"
        return None
    if drafter is None:
        skipped["draft"] = "no trained drafter in models/"
    return drafter


def trained_methods(env: Env, skipped: dict, keep: set | None = None, trees: bool = True) -> list[str]:
    """The trained proposers that build for this target (the others land in skipped, with why): the
    chains, then the trees of the chains that built (unless trees=False)."""
    out = []
    for m in list(TRAINED_METHODS) + (list(TREES) if trees else []):
        chain = REGISTRY[m].chain if m in REGISTRY else None
        if chain is not None and chain not in out:
            skipped.setdefault(m, f"its heads ({chain}) did not build or were left out")
            continue
        if m not in REGISTRY:
            skipped.setdefault(m, "not registered in specviz.engine.methods")
            continue
        if m == "draft" and env.drafter is None:
            skipped.setdefault(m, "no drafter")
            continue
        if keep is not None and m not in keep and chain not in keep:
            skipped[m] = "left out of this run (--methods)"
            continue
        try:
            env.proposer(m, 3)
            out.append(m)
        except Exception as e:  # noqa: BLE001
            skipped[m] = f"{type(e).__name__}: {e}"
    return out


# -- the method grid ---------------------------------------------------------------------------------
def timed_specs(b: Bench, mode: str, kind: str, trained: list[str], has_drafter: bool,
                references: bool = True) -> list[Spec]:
    """Every row of one timed repeat on one workload of this kind. The reference rows (transformers'
    generate() and lookup with recording off) run in greedy mode only, and only when `references`."""
    lk = b.chosen[(mode, kind, "lookup")]
    # greedy: the tree rows, like the references, run in the first ref_repeats repeats only (bench time)
    out = [Spec("plain", "specviz", "plain"), lk] + [b.chosen[(mode, kind, m)] for m in UNTUNED if m != "lookup"] + \
        [b.chosen[(mode, kind, m)] for m in trained if mode == SAMPLED or references or not is_tree(m)]
    if mode == SAMPLED:                       # token vs block verification on the same chain rows and seeds
        out += block_rows(out)
    if mode == GREEDY and references:
        out += [Spec("hf plain", "hf", "plain"),  # transformers' plain greedy: what specviz plain is held to
                Spec("lookup (recording off)", "specviz", "lookup", lk.k, lk.n, lk.adaptive, record=False),
                Spec("hf lookup k=10", "hf", "lookup", 10)]   # transformers' usual prompt_lookup_num_tokens
        if has_drafter and "draft" in trained:
            out.append(Spec("hf assisted (drafter)", "hf", "assisted", b.chosen[(mode, kind, "draft")].k))
    return out


def sampling_of(plan: Plan, mode: str) -> SamplingConfig:
    return SamplingConfig() if mode == GREEDY else SamplingConfig(temperature=plan.temperature)


# -- phases --------------------------------------------------------------------------------------------
def tune(b: Bench, env: Env, prompts: dict, methods: list[str]) -> None:
    """One separate repeat per mode and tuning workload (measure.one_repeat: plain and every candidate
    once, each against that plain run, the order rotated per workload); per kind, keep the setting
    with the best median speedup."""
    plan = b.plan
    for mode in (GREEDY, SAMPLED):
        ws = plan.tuning_workloads(mode)
        samp = sampling_of(plan, mode)
        for wi, w in enumerate(ws):   # the order rotates from one tuning workload to the next
            plain = Spec("plain", "specviz", "plain")
            specs = [plain] + [s for m in methods if tuned(m) for s in candidates(m, plan.quick)]
            got = measure.one_repeat(specs, wi, lambda s: run(env, s, prompts[w.name], plan.tune_new, samp,
                                                            plan.tune_seed))
            ref = got[plain]
            for s in specs[1:]:
                r = got[s]
                b.tuning.append(dict(mode=mode, kind=w.kind, workload=w.name, method=s.method, setting=s.setting,
                                     k=s.k, n=s.n if s.method == "lookup" else None, adaptive=s.adaptive,
                                     speedup=ratio(r.tokens_per_s, ref.tokens_per_s),
                                     tokens_per_pass=r.tokens_per_pass, draft_acceptance_rate=r.draft_acceptance_rate,
                                     alpha=r.alpha,
                                     k_at_floor=r.k_at_floor, passes=r.passes, spec=s))
            b.log(f"tuned {mode} {w.name}")
        for kind in {w.kind for w in ws}:
            for m in methods:
                if not tuned(m):                    # a tree's one shape, a copying method's default
                    b.chosen[(mode, kind, m)] = candidates(m)[0]
                    continue
                best, best_sp = None, -1.0
                for s in candidates(m, plan.quick):
                    sp = median([t["speedup"] for t in b.tuning     # over the kind's tuning workloads
                                 if t["mode"] == mode and t["kind"] == kind and t["spec"] == s])
                    if sp is not None and sp > best_sp:
                        best, best_sp = s, sp
                b.chosen[(mode, kind, m)] = best
                b.log(f"chosen {mode} {kind} {m}: {best.setting} (tuning speedup {best_sp:.2f})")


def timed(b: Bench, env: Env, prompts: dict, mode: str, trained: list[str]) -> None:
    """Interleaved repeats (greedy) or seeds (sampled), per workload one measure.one_repeat: plain and
    every row once, the order rotated every repeat, every row against that repeat's plain run."""
    plan = b.plan
    samp = sampling_of(plan, mode)
    ws = plan.workloads if mode == GREEDY else [w for w in plan.workloads if w.kind == W.NOVEL]
    rounds = list(range(plan.repeats)) if mode == GREEDY else list(plan.seeds)
    for i, r in enumerate(rounds):
        seed = 0 if mode == GREEDY else r
        for w in ws:
            specs = timed_specs(b, mode, w.kind, trained, env.drafter is not None, references=i < plan.ref_repeats)
            got = measure.one_repeat(specs, i, lambda s: run(env, s, prompts[w.name], plan.max_new, samp, seed,
                                                             keep_logits=(s.label == "plain" and mode == GREEDY)))
            for s in specs:
                b.runs.setdefault((mode, w.name, s.label), []).append(got[s])
                b.specs[(mode, w.name, s.label)] = s
            b.log(f"{mode} {'repeat' if mode == GREEDY else 'seed'} {r}: {w.name}")


def bf16_equality(b: Bench, dtype_name: str) -> None:
    """Greedy timed runs in the bench's own dtype against plain's (first repeat): near-ties only."""
    exact = dtype_name == "float32"
    for w in b.plan.workloads:
        plain = b.runs[(GREEDY, w.name, "plain")][0]
        for (mode, wn, label), rs in b.runs.items():
            if mode != GREEDY or wn != w.name or label == "plain":
                continue
            b.equality.append(compare_ids(w.name, label, dtype_name, rs[0].ids, plain.ids,
                                          plain.top1, plain.gap, exact))


def equality_pass(b: Bench, env32: Env, prompts: dict) -> None:
    """float32: every specviz method, at the greedy setting the bench chose for this kind of workload,
    must match plain decoding exactly; so must transformers' own greedy generate()."""
    plan = b.plan
    samp = SamplingConfig()
    for w in plan.workloads:
        plain = run(env32, Spec("plain", "specviz", "plain"), prompts[w.name], plan.equality_new, samp, 0,
                    keep_logits=True)
        specs = {(s.label, s.setting): s for (mode, kind, _), s in b.chosen.items()
                 if kind == w.kind and mode == GREEDY}
        specs[("hf plain", "")] = Spec("hf plain", "hf", "plain")
        for (label, setting), s in sorted(specs.items()):
            r = run(env32, s, prompts[w.name], plan.equality_new, samp, 0)
            name = f"{label} ({setting})" if setting else label
            b.equality.append(compare_ids(w.name, name, "float32", r.ids, plain.ids, plain.top1, plain.gap, True))
            if label in SAME_TEXT:
                b.same_text.append(same_text_row(b, w, label, setting, r, r.ids == plain.ids))
        b.log(f"equality float32 {w.name}")


SAME_TEXT = UNTUNED   # the copying methods (the registry's), compared on plain decoding's own text


def same_text_row(b: Bench, w, label: str, setting: str, r, identical: bool) -> dict:
    """A copying method on the float32 pass, where its text is plain decoding's: τ and the cost model's
    decode-only speedup, tokens ÷ Σ v(drafted) over its steps with the bench's own v (v_tree for a tree).
    The timed runs in the bench's dtype may each write a different text (a bfloat16 near-tie), so this is
    the comparison of the drafting rules alone."""
    table = b.v_tree if label in REGISTRY and REGISTRY[label].tree and b.v_tree else b.v
    return dict(workload=w.name, kind=w.kind, method=label, setting=setting, tokens=r.tokens,
                tau=r.tokens_per_pass, mean_k=r.mean_k,
                model_speedup=passes_speedup(r.tokens, [st.n_drafted for st in r.steps], table),
                identical=identical)


def sessions(b: Bench, env: Env) -> None:
    """Each session's requests in order, greedy: plain, suffix with its cross-request cache on and off, lookup,
    interleaved over plan.session_repeats (engine/sessions.session_against_plain: plain runs every request)."""
    plan = b.plan
    cfg = SE.session_config(M.SELF_SIZED_CAP, SamplingConfig(), plan.session_new)
    plain_cfg = SE.session_config(1, SamplingConfig(), plan.session_new)
    for s in plan.sessions:
        contenders = {lab: ((lambda m=m: make_proposer(m, env.target)), cfg, cache) for lab, m, cache in SESSION_ROWS}
        got, _ = SE.session_against_plain(env.target, s, contenders, plain_cfg, plan.session_repeats)
        for meas in got.values():
            row = meas.row()
            row.update(requests=[w.name for w in s.requests], kind=s.kind, task=s.task,
                       tokens=median([rp.summary.tokens for rp in meas.repeats]),
                       c=median([draft_cost(rp.steps, plain_step_time(rp.plain_steps)) for rp in meas.repeats]))
            b.sessions.append(row)
        b.log(f"session {s.name}: " + ", ".join(f"{lab} {m.speedup:.2f}×" for lab, m in got.items()))


# -- aggregation -------------------------------------------------------------------------------------------
def speedups(b: Bench, mode: str) -> dict:
    """{(workload, label): median over repeats of (label tokens/s ÷ plain tokens/s in the same repeat)}."""
    out = {}
    for wn, label, rs in b.runs_of(mode):
        plain = b.runs[(mode, wn, "plain")]  # a reference row ran in the first repeats: zip pairs them
        out[(wn, label)] = speedup((r.tokens_per_s, p.tokens_per_s) for r, p in zip(rs, plain))
    return out


def cost_checks(b: Bench) -> list:
    """docs/metrics.md's cost-model check for every specviz method that drafts, per workload (greedy)."""
    sp = speedups(b, GREEDY)
    out = []
    for (mode, wn, label), rs in b.runs.items():
        s = b.specs[(mode, wn, label)]
        if mode != GREEDY or s.engine != "specviz" or s.method == "plain":
            continue
        plain = b.runs[(mode, wn, "plain")]
        t1 = plain_step_time([st for p in plain for st in p.steps])
        steps = [st for r in rs for st in r.steps]
        c = draft_cost(steps, t1)
        tau = median([r.tokens_per_pass for r in rs])
        k_bar = median([r.mean_k for r in rs])
        alpha = median([r.alpha for r in rs])
        m = min((len(r.per_position) for r in rs), default=0)
        a_i = [median([r.per_position[i] for r in rs]) for i in range(m)]
        decode = speedup((r.decode_tokens_per_s, p.decode_tokens_per_s) for r, p in zip(rs, plain)
                         if r.decode_tokens_per_s and p.decode_tokens_per_s)
        v_table = b.v_tree if REGISTRY[s.method].tree and b.v_tree else b.v   # a tree's v: the tree-mask table
        v_bar = median([mean_v([st.n_drafted for st in r.steps], v_table) for r in rs])   # what its passes cost
        out.append(cost_check(wn, label, tau, k_bar, c, v_table, sp[(wn, label)], alpha,
                              tokens=median([r.tokens for r in rs]), prefill_s=median([r.prefill_s for r in rs]),
                              t1=t1, measured_decode=decode,
                              draft_acceptance_rate=median([r.draft_acceptance_rate for r in rs]), per_position=a_i,
                              v_bar=v_bar))
    return out


# -- the command ---------------------------------------------------------------------------------------------
def make_plan(a) -> Plan:
    names = [x.strip() for x in a.workloads.split(",")] if a.workloads else None
    if names:
        ws = [W.get(x) for x in names]
    elif a.quick:
        ws = [W.of_kind(W.COPY)[0], W.of_kind(W.NOVEL)[0]]
    else:
        ws = list(W.WORKLOADS)
    plan = Plan(workloads=ws, quick=a.quick)
    if a.quick:
        plan.repeats, plan.ref_repeats, plan.seeds = 1, 1, (1,)
        plan.max_new, plan.tune_new, plan.equality_new = 24, 16, 24
        # one session (four requests), 8 tokens each
        plan.sessions, plan.session_new, plan.session_repeats = [W.SESSIONS[1]], 8, 1
    if a.no_sessions:
        plan.sessions = []
    if a.repeats is not None:
        plan.repeats = a.repeats
        plan.ref_repeats = min(plan.ref_repeats, a.repeats)
    if a.seeds is not None:
        plan.seeds = tuple(range(1, a.seeds + 1))
    if a.max_new_tokens is not None:
        plan.max_new = a.max_new_tokens
        plan.tune_new = max(2, plan.max_new // 2)
    if a.tune_tokens is not None:
        plan.tune_new = a.tune_tokens
    if plan.repeats < 1 or not plan.seeds or min(plan.max_new, plan.tune_new) < 2:
        raise InputError("repeats and seeds must be >= 1, max new tokens and tuning tokens >= 2")
    return plan


def print_estimate(a, plan: Plan) -> int:
    """bench --estimate: each phase's minutes, priced from the last run's times, for the methods that will run."""
    ref = reference()
    shipped = artifacts.available()          # a trained method without its artifact will not run: not priced
    methods = [m for m in TRAINED_METHODS if (a.methods is None or m in a.methods.split(","))
               and shipped.get(REGISTRY[m].artifact, False)]
    methods += [] if a.no_trees else [t for t in TREES if REGISTRY[t].chain in methods]
    phases = estimate(plan, ref, methods)
    for name, sec in phases.items():
        print(f"{name:28s} {sec / 60:5.1f} min")
    print(f"{'total':28s} {sum(phases.values()) / 60:5.1f} min  (from the run times of {ref['source']})")
    return 0


def run_meta(plan: Plan, env: Env, dtype_name: str, trained: list[str]) -> dict:
    """What results.json says of the run: target, machine, threads, the plan's sizes, the methods, the command."""
    return dict(target=env.target.name, device=str(env.target.device), dtype=dtype_name,
                machine=machine(env.target.device, env.target.dtype), dtype_reason=env.target.dtype_reason,
                linears=packed.label(env.target.device),   # F.linear or oneDNN-packed weights (engine/packed.py)
                body=llama.LABEL,                          # the decoder body module by module (engine/llama.py, 12-08)
                sole_rule=M.lookup_sole(env.target)[1],    # lookup's sole option on this machine, and why (since 12-07)
                threads=torch.get_num_threads(), wait_policy=os.environ.get("OMP_WAIT_POLICY") or "default",
                thread_policy=runtime.describe(),
                torch=torch.__version__, quick=plan.quick,
                repeats=plan.repeats, ref_repeats=plan.ref_repeats, seeds=list(plan.seeds),
                max_new_tokens=plan.max_new, equality_tokens=plan.equality_new, tune_per_kind=plan.tune_per_kind,
                tuning_tokens=plan.tune_new,
                temperature=plan.temperature, methods=["plain", *UNTUNED] + trained,
                sessions=[s.name for s in plan.sessions], session_repeats=plan.session_repeats,
                session_new_tokens=plan.session_new,
                started=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                command=(("python -m specviz " + " ".join(sys.argv[1:]))
                         if sys.argv[0].endswith("__main__.py") else None))


def cmd_bench(a) -> int:
    plan = make_plan(a)
    if a.out is None:
        a.out = os.path.join("runs", "bench-quick" if plan.quick else "bench")
    if os.path.normpath(a.out) == "bench":          # the committed results: one set per kind of machine
        a.out = os.path.join("bench", "results", kind_folder(machine(None if a.target == "tiny" else a.device)))
    if a.estimate:
        return print_estimate(a, plan)
    b = Bench(plan)
    b.phase("load")
    env, b.skipped = load_env(a.target, a.device, a.dtype)
    dtype_name = str(env.target.dtype).replace("torch.", "")
    prompts = {w.name: encode_prompt(env.target.tokenizer, w.prompt, w.chat) for w in plan.workloads}
    keep = None if a.methods is None else {x.strip() for x in a.methods.split(",") if x.strip()}
    trained = trained_methods(env, b.skipped, keep, trees=not a.no_trees)
    b.meta = run_meta(plan, env, dtype_name, trained)
    context = int(median([len(p) for p in prompts.values()])) + plan.max_new // 2     # a plain run's middle
    b.meta["roof"] = peaks.roof(env.target, context)                  # plain's share of it: report.plain_roof
    for s in (Spec("plain", "specviz", "plain"), Spec("hf plain", "hf", "plain")):  # warm-up
        run(env, s, prompts[plan.workloads[0].name], 8, SamplingConfig(), 0)
    b.phase("v(k)")
    b.v = measure_v(env.target, ks=QUICK_V_KS if plan.quick else V_KS, repeats=3 if plan.quick else 15,
                    prompt_ids=prompts[plan.workloads[0].name])
    if any(is_tree(m) for m in trained):
        b.v_tree = measure_v(env.target, ks=QUICK_V_KS if plan.quick else TREE_V_KS, repeats=3 if plan.quick else 9,
                             prompt_ids=prompts[plan.workloads[0].name], tree=True)
    b.phase("tuning")
    tune(b, env, prompts, [*UNTUNED] + trained)
    b.phase("greedy")
    timed(b, env, prompts, GREEDY, trained)
    bf16_equality(b, dtype_name)
    save(b, a.out, complete=False)
    b.phase("sampled")
    timed(b, env, prompts, SAMPLED, trained)
    save(b, a.out, complete=False)
    if plan.sessions:
        b.phase("sessions")
        sessions(b, env)
        save(b, a.out, complete=False)
    if not a.skip_equality:
        b.phase("equality (float32)")
        env32 = env if dtype_name == "float32" else load_env(a.target, a.device, "float32")[0]
        equality_pass(b, env32, prompts)
        del env32
    b.phase("done")
    save(b, a.out, complete=True)
    return report_failures(b.equality)


def save(b: Bench, out: str, complete: bool) -> None:
    """Write the three result files; called after each timed phase too, so a long run leaves something."""
    b.meta["wall_s"] = time.perf_counter() - b.t0
    b.meta["complete"] = complete
    b.meta["thread_changes"] = runtime.thread_changes()
    paths = bench_report.write(b, out, cost_checks(b), speedups(b, GREEDY), speedups(b, SAMPLED))
    b.log("wrote " + ", ".join(paths) + ("" if complete else " (partial)"))


def report_failures(equality: list) -> int:
    """Loudly: one stderr line per greedy output that is not plain's (or not a near-tie); exit code."""
    bad = [e for e in equality if not e.ok]
    for e in bad:
        print(f"specviz bench: EQUALITY FAILED: {e.method} on {e.workload} ({e.dtype}) differs from plain "
              f"at new token {e.position}: {e.method_token} vs {e.plain_token}, top1 {e.top1}, gap {e.gap} "
              f"— {e.note}", file=sys.stderr)
    return 1 if bad else 0


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="measure every method against plain decoding and transformers",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true",
                   help="one workload per kind, one repeat, one seed, 24 new tokens (16 when tuning) (keeps the bench "
                        "working; writes runs/bench-quick/ unless --out says otherwise)")
    p.add_argument("--out", default=None, help="folder for results.json, results.md, results.html (default "
                   "runs/bench-quick with --quick, else runs/bench; the committed results: --out bench)")
    p.add_argument("--estimate", action="store_true", help="print the plan's expected wall time, estimated from "
                   "the run times measured by a previous full run (bench/results.json), and exit")
    p.add_argument("--target", default=DEFAULT, help="'default', a HF id/folder, or 'tiny' (random test model)")
    p.add_argument("--device", default="auto")
    p.add_argument("--dtype", default="auto", help="auto (the faster of float32 and bfloat16 for speculative "
                   "decoding on this machine, timed once and remembered: engine/autodtype.py), bfloat16, float32, "
                   "float16")
    p.add_argument("--workloads", default=None, help="comma-separated workload names (default: all)")
    p.add_argument("--repeats", type=int, default=None, help="timed greedy repeats (default 3)")
    p.add_argument("--seeds", type=int, default=None, help="sampled seeds (default 3)")
    p.add_argument("--max-new-tokens", type=int, default=None, help="default 128")
    p.add_argument("--tune-tokens", type=int, default=None, help="new tokens per tuning run (default 48)")
    p.add_argument("--methods", default=None,
                   help="trained proposers to include, comma-separated, '' for none (default: all that load: "
                        "draft,medusa,eagle)")
    p.add_argument("--threads", type=int, default=None,
                   help="torch CPU threads (default: $SPECVIZ_THREADS, else one per core up to 8)")
    p.add_argument("--skip-equality", action="store_true", help="skip the float32 equality pass")
    p.add_argument("--no-trees", action="store_true", help="leave out the tree rows (medusa-tree, eagle-tree)")
    p.add_argument("--no-sessions", action="store_true", help="leave out the session phase (several requests in order)")
    p.set_defaults(func=cmd_bench)
