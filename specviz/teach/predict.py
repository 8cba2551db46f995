"""Predict first, on every concept: the question each lesson asks before it measures, naming the experiment
it will be scored against, and the measured number (or the learner's own table) that answers it.

The pages run the measurements (engine/); these functions say what is asked (the experiment named by an
engine.experiment.Experiment's describe(), the value the page then runs) and what answers it.
"""
from __future__ import annotations

from dataclasses import dataclass

from specviz.core.records import StepRecord
from specviz.engine import sweeps as SW
from specviz.engine.experiment import Experiment, Setting
from specviz.teach.guess import Guess


# -- trees: chain vs tree on the same heads ------------------------------------------------------------
def tree_plan(chain: str, tree: str, k: int, temperature: float, tokens: int, workload: str,
              repeats: int = 1) -> Experiment:
    """teach.trees.chain_vs_tree's run: the chain and the tree at depth k, each against plain decoding."""
    return Experiment((Setting.resolve(chain, k), Setting.resolve(tree, k)), (workload,), tokens, temperature,
                      repeats=repeats)


def tree_guess(chain: str, tree: str, k: int, temperature: float, tokens: int, workload: str,
               repeats: int = 1) -> Guess:
    return Guess(f"how many more tokens per pass the tree keeps than the chain, τ({tree}) − τ({chain})",
                 "tau_gain", lo=-4.0, hi=8.0, step=0.1, rel=0.25, abs_tol=0.2,
                 experiment=tree_plan(chain, tree, k, temperature, tokens, workload, repeats).describe())


def tree_truth(rows) -> dict:
    """rows: teach.trees.chain_vs_tree's (chain first, then tree)."""
    return {"tau_gain": rows[1].tokens_per_pass - rows[0].tokens_per_pass}


# -- the anatomy of a verification pass --------------------------------------------------------------
def anatomy_guess(rec: StepRecord, method: str) -> Guess:
    fed = rec.target_cache[1] - rec.target_cache[0]
    return Guess(f"this pass fed {fed} tokens and wrote {fed} entries into the target's KV cache: how many "
                 "of them stay after the rollback?", "kept", lo=0.0, hi=float(max(fed, 1)), step=1.0, rel=0.0,
                 abs_tol=0.0,
                 experiment=f"step {rec.index + 1} of this {method} run, "
                            f"{'greedy' if rec.greedy else 'sampled'}, k = {rec.k}, {rec.n_drafted} drafted, "
                            f"{rec.n_accepted} accepted; the target cache's length measured before the pass and "
                            "after its rollback")


def anatomy_truth(rec: StepRecord) -> dict:
    """Entries the step left in the target's cache: its measured length after the rollback minus before."""
    return {"kept": rec.target_cache[2] - rec.target_cache[0]}


# -- α vs α̂ by hand, from a three-step table ----------------------------------------------------------
KEPT, REJECTED, UNTESTED = "✓ kept", "✗ rejected", "· not tested"


def pick_three(steps: list[StepRecord]) -> list[StepRecord]:
    """Three chain steps that drafted and emitted all they could (no EOS or length cut), in run order; one of
    them, when the run has one, rejects before its last draft, so some drafts go untested (α ≠ α̂)."""
    ok = [s for s in steps if s.n_drafted and not s.is_tree and s.n_emitted == s.n_accepted + 1]
    early = [s for s in ok if s.n_accepted < s.n_drafted - 1]
    chosen = early[:1] + [s for s in ok if s not in early[:1]][:3 - len(early[:1])]
    return sorted(chosen, key=lambda s: s.index)


def hand_rows(steps: list[StepRecord]) -> list[dict]:
    """The table the learner works from: each draft of each step as kept / rejected / not tested."""
    width = max((s.n_drafted for s in steps), default=0)
    rows = []
    for s in steps:
        row = {"step": s.index + 1}
        for i in range(width):
            row[f"d{i + 1}"] = ("" if i >= s.n_drafted else KEPT if i < s.n_accepted
                                else REJECTED if i < len(s.decisions) else UNTESTED)
        rows.append(row)
    return rows


@dataclass
class ByHand:
    accepted: int
    tested: int
    drafted: int
    passes: int
    alpha: float       # accepted ÷ tested
    alpha_hat: float   # accepted ÷ drafted (vLLM: Avg Draft acceptance rate)
    tau: float         # tokens per pass = 1 + accepted ÷ passes (vLLM: Mean acceptance length)


def by_hand(rows: list[dict]) -> ByHand:
    """α, α̂ and τ from the table alone (what the learner can do with a pencil)."""
    cells = [v for r in rows for c, v in r.items() if c != "step"]
    acc, rej, unt = (sum(v == x for v in cells) for x in (KEPT, REJECTED, UNTESTED))
    tested, drafted, passes = acc + rej, acc + rej + unt, len(rows)
    return ByHand(acc, tested, drafted, passes, acc / tested if tested else 0.0,
                  acc / drafted if drafted else 0.0, 1 + acc / passes if passes else 0.0)


def hand_guesses(run: Setting) -> list[Guess]:
    """The three answers asked of a dealt table of `run`'s steps (ui/byhand.setting)."""
    k = run.k
    ex = f"the three steps in the table ({run.describe()}, greedy), counted from the table"
    return [Guess("α = accepted ÷ tested (0 to 1)", "alpha", lo=0.0, hi=1.0, step=0.01, rel=0.0, abs_tol=0.02,
                  experiment=ex),
            Guess("α̂ = accepted ÷ drafted (0 to 1)", "alpha_hat", lo=0.0, hi=1.0, step=0.01, rel=0.0, abs_tol=0.02,
                  experiment=ex),
            Guess("τ = tokens per pass", "tau", lo=1.0, hi=float(k + 1), step=0.01, rel=0.0, abs_tol=0.02,
                  experiment=ex)]


# -- heads tied to a checkpoint ------------------------------------------------------------------------
def heads_guess(head: str, workload: str, k: int, tokens: int) -> Guess:
    ex = Experiment((Setting.resolve(head, k),), (workload,), tokens,
                    target="the base target and on its fine-tune (heads trained on the base)")
    return Guess(f"τ the {head} heads lose on the fine-tuned checkpoint (τ on base − τ on fine-tuned)", "tau_lost",
                 lo=-4.0, hi=8.0, step=0.1, rel=0.25, abs_tol=0.2, experiment=ex.describe())


def heads_truth(rows: list[dict], head: str) -> dict:
    """rows: teach.checkpoints.checkpoint_swap's."""
    tau = {r["target"]: r["tokens_per_pass"] for r in rows if r["method"] == head}
    return {"tau_lost": tau["base"] - tau["fine-tuned"]}


# -- k = 0: the sweep's best k, 0 when no k beat plain ---------------------------------------------------
def sweep_plan(method: str | None, workload: str, ks: list[int], ns: list[int] | None, temperature: float,
               tokens: int, knob: str | None = None, values: list[float] | None = None) -> Experiment:
    """The k / n page's sweep: the settings sweep() (suffix_sweep() for suffix) measures, one run each against one
    plain run, on one workload; no settings without a method or with no knob values."""
    settings = ([] if method is None else SW.suffix_settings(ks, knob, values or []) if method == "suffix"
                else SW.sweep_settings(method, ks, ns))
    return Experiment(tuple(settings), (workload,), tokens, temperature)


def kzero_guess(plan: Experiment, k_max: int) -> Guess:
    """The sweep's best k, asked before sweep_plan's run; k_max: the sweep's largest k (recycle: tree size)."""
    return Guess("the best k (type 0 if no k beats plain decoding: k = 0 is plain, exactly 1.0×)", "best_k",
                 lo=0.0, hi=float(k_max), step=1.0, rel=0.0, abs_tol=0.0,
                 experiment=plan.describe())


def best_k_or_zero(points) -> int:
    """The sweep's fastest k, or 0 when no setting was faster than plain (speedup ≤ 1: don't speculate)."""
    best = max(points, key=lambda p: p.speedup)
    return best.k if best.speedup > 1.0 else 0


# -- serving cost: a drafter's memory, on this app's own models ------------------------------------------
def serving_guess(target: str, drafter: str, memory_gb: float, context: int) -> Guess:
    return Guess("the share of concurrent sequences the drafter costs (%)", "lost_pct", lo=0.0, hi=100.0, step=1.0,
                 rel=0.0, abs_tol=5.0,
                 experiment=f"this app's target ({target}) with its drafter ({drafter}), weights and KV cache per "
                            f"token measured on the loaded models, {memory_gb:g} GB, {context} tokens per sequence")


def vllm_names(bh: ByHand, v) -> list[dict]:
    """The learner's three numbers beside what vLLM logs for the same passes (v: teach.acceptance.ServerView).
    vLLM has no α; with every pass drafting k it follows from its counters: a pass that did not keep all k had
    one rejection, so tested = accepted + num_drafts × (1 − rate_k)."""
    rates = ", ".join(f"{r:.3f}" for r in v.per_position)
    rows = [{"by hand": f"α̂ = {bh.accepted} ÷ {bh.drafted} = {bh.alpha_hat:.2f}",
             "vLLM logs": "Avg Draft acceptance rate", "value": f"{100 * v.draft_acceptance_rate:.1f}%"},
            {"by hand": f"τ = 1 + {bh.accepted} ÷ {bh.passes} = {bh.tau:.2f}",
             "vLLM logs": "Mean acceptance length", "value": f"{v.mean_acceptance_length:.2f}"},
            {"by hand": "share of passes keeping at least i drafts",
             "vLLM logs": "Per-position acceptance rate", "value": rates}]
    same_k = bool(v.per_position) and bh.drafted == bh.passes * len(v.per_position)   # every pass drafted k
    alpha = (f"not logged; = {bh.accepted} ÷ ({bh.accepted} + {bh.passes} × (1 − {v.per_position[-1]:.3f}))"
             if same_k else "not logged (the passes drafted different k)")
    rows.insert(0, {"by hand": f"α = {bh.accepted} ÷ {bh.tested} = {bh.alpha:.2f}", "vLLM logs": "–",
                    "value": alpha})
    return rows


# -- Compare proposers: which method is fastest here ------------------------------------------------------
NONE_WINS = "plain decoding (no method beats it)"


def compare_plan(methods: list[str], ks: list[int], n: int, workloads: list[str], temperature: float, tokens: int,
                 repeats: int) -> Experiment:
    """engine.comparisons.compare's runs: every contender it makes (compare_settings) on these workloads."""
    from specviz.engine import comparisons as E

    settings = tuple(E.setting_of(m, k, n if m == "lookup" else None) for m, k in E.compare_settings(methods, ks))
    return Experiment(settings, tuple(workloads), tokens, temperature, repeats=repeats)


def compare_guess(ex: Experiment) -> Guess:
    methods = tuple(dict.fromkeys(s.method for s in ex.settings))
    return Guess("which method runs fastest here (its best setting, median speedup over the workloads)", "fastest",
                 choices=(*methods, NONE_WINS), experiment=ex.describe())


def fastest_method(rows: list[dict]) -> str:
    """From comparisons.table rows: the method whose best setting has the highest median speedup over the
    workloads; NONE_WINS when even that is not above plain decoding (1.0×)."""
    from specviz.core.stats import median

    best_by: dict[str, float] = {}
    for m in {r["method"] for r in rows if r["method"] != "plain"}:
        per_k: dict = {}
        for r in rows:
            if r["method"] == m:
                per_k.setdefault(r["k"], []).append(r["speedup"])
        best_by[m] = max(median(v) for v in per_k.values())
    if not best_by or max(best_by.values()) <= 1.0:
        return NONE_WINS
    return max(best_by, key=best_by.get)
