"""The capstone: configure a fleet. Four traffic pools, each mapped to one of the project's workloads; the learner
picks a method and k per pool (or none), predicts tokens/s, and every pool is then run for real on the model
through engine/measure.interleaved: the learner's choice beside a fixed set of reference options and plain decoding.
Each choice is scored against the fastest measured option of its pool that fits the memory budget; the memory of
the whole fleet is priced with teach/reality's code (weights + KV cache for `batch` sequences of `context`
tokens)."""
from __future__ import annotations

from dataclasses import dataclass, replace

from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure, methods as M
from specviz.engine.decode import DecodeConfig
from specviz.engine.experiment import Experiment, Setting
from specviz.engine.workloads import get
from specviz.proposers.gated import Gate
from specviz.teach import reality as R

K_MAX = 16
GATE = Gate(threshold=0.3, window=8, probe_every=4)   # the gated lookup's rule, one for the whole lab


@dataclass(frozen=True)
class Pool:
    name: str
    workload: str      # engine/workloads.py
    share: float       # of the fleet's requests
    why: str           # what the traffic is, and why this workload stands for it


POOLS = (
    Pool("RAG answers", "quote-document", 0.35, "answers that quote the retrieved passage"),
    Pool("code edits", "edit-code", 0.25, "an edit that echoes the whole file back"),
    Pool("open chat", "chat", 0.25, "short open-ended chat: nothing in the prompt to copy"),
    Pool("translation", "translate", 0.15, "grounded in the input, but the output's words are not in it"),
)


@dataclass(frozen=True)
class Choice:
    """One option for a pool: a method at k (lookup: the fixed or the match rule, gated or not)."""
    method: str
    k: int = 4
    k_rule: str = M.DEFAULT_K_RULE
    gated: bool = False

    def setting(self) -> Setting:
        rule = self.k_rule if self.method == "lookup" else None
        return Setting.resolve(self.method, self.k, k_rule=rule, gate=GATE if self.gated else None)

    def label(self) -> str:
        return self.setting().describe()

    def short(self) -> str:
        """A chart's axis label: the method and its length rule in a few characters (the table names it fully)."""
        if self.method == "plain":
            return "plain"
        if self.method == "lookup":
            rule = "lookup match" if self.k_rule == "match" else f"lookup k={self.k}"
            return rule + (" gated" if self.gated else "")
        return f"{self.method} k={self.k}"

    def check(self, pool: str) -> None:
        M.spec(self.method)
        if not 1 <= self.k <= K_MAX:
            raise InputError(f"k for {pool} must be between 1 and {K_MAX}, got {self.k}")
        if self.gated and self.method != "lookup":
            raise InputError(f"the hit-rate gate is for lookup; {pool} runs {self.method}")


def references(offered: list[str]) -> list[Choice]:
    """The options every pool is measured with besides the learner's: plain, lookup three ways, and the shipped
    draft model and EAGLE head at k = 4 when this target has them."""
    out = [Choice("plain"), Choice("lookup", M.SELF_SIZED_CAP, "match"), Choice("lookup", 4, "fixed"),
           Choice("lookup", M.SELF_SIZED_CAP, "match", gated=True)]
    return out + [Choice(m, 4) for m in ("draft", "eagle") if m in offered]


def options(choice: Choice, offered: list[str]) -> list[Choice]:
    """The learner's choice first, then the references it is not one of (same resolved settings = same option)."""
    return [choice] + [c for c in references(offered) if c.setting() != choice.setting()]


# -- memory ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cost:
    weights: float      # bytes, once per server
    kv: float           # bytes per token per sequence that uses it


def method_cost(method: str, target, drafter, head_bytes: dict[str, int]) -> Cost:
    """What a method adds to the target's memory: a draft model its weights and its KV cache (read from a real
    cache, teach/reality); heads their weights file, EAGLE also its own one-layer cache (one target layer's KV);
    copying methods nothing."""
    s = M.spec(method)
    if s.family == M.DRAFT_MODEL:
        return Cost(drafter.param_bytes(), R.measured_kv_bytes_per_token(drafter.model))
    if s.family == M.HEADS:
        layer_kv = R.measured_kv_bytes_per_token(target.model) / target.model.config.num_hidden_layers
        return Cost(head_bytes.get(s.artifact, 0), layer_kv if method.startswith(("eagle", "hybrid")) else 0.0)
    return Cost(0.0, 0.0)


def costs_for(methods, target, drafter) -> tuple[Cost, dict[str, Cost]]:
    """(the target's own cost, {method: what it adds}) for these methods."""
    from specviz.teach.interview import artifact_bytes
    heads = artifact_bytes()
    return (Cost(target.param_bytes(), R.measured_kv_bytes_per_token(target.model)),
            {m: method_cost(m, target, drafter, heads) for m in set(methods)})


def fleet_budget(choices: dict[str, Choice], costs: dict[str, Cost], target_cost: Cost, context: int,
                 memory_gb: float) -> R.Budget:
    """Sequences that fit (teach/reality.fit) with these choices: each extra method's weights once, its KV in the
    share of sequences its pools serve."""
    shares = {p.name: p.share for p in POOLS}
    used = {c.method for c in choices.values()}
    weights = sum(costs[m].weights for m in used)
    kv = sum(shares[p] * costs[c.method].kv for p, c in choices.items())
    return R.fit(target_cost.weights, target_cost.kv, weights, kv, memory_gb, context)


def fits(b: R.Budget, batch: int) -> bool:
    return b.sequences_with >= batch


def fitting(pool: str, opts: list[Choice], costs: dict[str, Cost], target_cost: Cost, batch: int, context: int,
            memory_gb: float) -> set[str]:
    """The labels of the options that fit the budget on their own: `pool` running the option, the other pools plain
    (whether the learner's whole fleet fits is fleet_budget's question)."""
    alone = {p.name: Choice("plain") for p in POOLS}
    return {o.label() for o in opts
            if fits(fleet_budget({**alone, pool: o}, costs, target_cost, context, memory_gb), batch)}


# -- running a pool ------------------------------------------------------------------------------------------
def experiment(pool: Pool, opts: list[Choice], tokens: int, temperature: float) -> Experiment:
    return Experiment(tuple(o.setting() for o in opts), (pool.workload,), tokens, temperature)


def run_options(target, workload: str, opts: list[Choice], tokens: int, temperature: float, drafter=None,
                progress=None, repeats: int = 1) -> list[dict]:
    """Every option on one workload against plain decoding, interleaved (engine/measure.interleaved); a row per
    option, labelled with its own Experiment's describe(): tokens/s and τ of its median repeat (plain: the median
    of the plain runs), speedup the median of its per-repeat ratios."""
    w = get(workload)
    ids = M.encode_prompt(target.tokenizer, w.prompt, w.chat)
    sampling = SamplingConfig(float(temperature))
    plain_cfg = DecodeConfig(k=1, max_new_tokens=int(tokens), sampling=sampling, record=False)
    runs = {o.label(): (_factory(o, target, drafter), replace(plain_cfg, k=M.draft_cap(o.method, o.k, o.k_rule)))
            for o in opts if o.method != "plain"}
    got, plains = measure.interleaved(target, ids, runs, plain_cfg, repeats=repeats,
                                      eos_token_id=target.tokenizer.eos_token_id, progress=progress)
    plain = sorted((p for p, _ in plains), key=lambda p: p.tokens_per_s)[(len(plains) - 1) // 2]
    rows = []
    for o in opts:
        s = plain if o.method == "plain" else got[o.label()].summary
        rows.append({"option": o, "label": o.label(), "short": o.short(), "tokens_per_s": s.tokens_per_s,
                     "tau": s.tokens_per_pass,
                     "alpha_hat": s.draft_acceptance_rate,
                     "speedup": 1.0 if o.method == "plain" else got[o.label()].speedup,
                     "mean_k": s.mean_k, "passes": s.target_passes,
                     "run": Experiment((o.setting(),), (workload,), int(tokens), float(temperature), repeats=repeats,
                                       against_plain=o.method != "plain").describe()})
    return rows


def run_pool(target, pool: Pool, opts: list[Choice], tokens: int, temperature: float, drafter=None,
             progress=None) -> list[dict]:
    return run_options(target, pool.workload, opts, tokens, temperature, drafter, progress)


# -- lookup's match rule beside fixed k on one copy-heavy prompt (concept 6) --------------------------------------
MATCH_VS_FIXED = (Choice("lookup", M.SELF_SIZED_CAP, "match"), Choice("lookup", 4, "fixed"), Choice("plain"))


def match_vs_fixed_plan(workload: str, tokens: int, temperature: float) -> Experiment:
    return Experiment(tuple(c.setting() for c in MATCH_VS_FIXED[:2]), (workload,), tokens, temperature)


def match_vs_fixed_truth(rows: list[dict]) -> dict:
    """rows: run_options over MATCH_VS_FIXED (the match rule, fixed k = 4, plain)."""
    return {"tau_gain": rows[0]["tau"] - rows[1]["tau"]}


def _factory(o: Choice, target, drafter):
    rule = o.k_rule if o.method == "lookup" else M.DEFAULT_K_RULE
    prop = M.make_proposer(o.method, target, drafter=drafter, k_rule=rule, gate=GATE if o.gated else None)
    return lambda: prop   # the decoder resets it before each run


# -- scoring ----------------------------------------------------------------------------------------------
def score_pool(rows: list[dict], fitting: set[str]) -> dict:
    """The learner's option (rows[0]) against the fastest measured option that fits the budget."""
    ok = [r for r in rows if r["label"] in fitting] or rows[:1]
    best = max(ok, key=lambda r: r["tokens_per_s"])
    mine = rows[0]
    return {"best": best["label"], "best_tps": best["tokens_per_s"], "mine_tps": mine["tokens_per_s"],
            "share_of_best": min(1.0, mine["tokens_per_s"] / best["tokens_per_s"]) if best["tokens_per_s"] else 0.0,
            "picked_best": best is mine}


def fleet_score(pool_scores: dict[str, dict], fleet_fits: bool) -> float:
    """Traffic-weighted share of the best tokens/s, 0 for a fleet that does not fit its memory."""
    shares = {p.name: p.share for p in POOLS}
    return sum(shares[p] * s["share_of_best"] for p, s in pool_scores.items()) if fleet_fits else 0.0
