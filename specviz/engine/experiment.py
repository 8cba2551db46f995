"""An experiment that describes itself: what a guess prompt, a table row, a chart title, the CLI and the bench
name, rendered from the very value that is run (issue 34 §2), so the words and the run cannot disagree.

    ex = Experiment((Setting.resolve("lookup"),), ("extract-json",), temperature=0.8, new_tokens=40)
    ex.describe()   # "lookup drafting as far as the match goes (4 × the matched length, ...) vs plain, ..."

Setting.resolve fills a method's settings from the method registry (engine/methods.REGISTRY); Setting.of reads
them back from a built proposer and the DecodeConfig it ran with, which is how tests check that what ran is what
was described.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from specviz.core.sampling import SamplingConfig
from specviz.engine import methods as M


@dataclass(frozen=True)
class Setting:
    """One method at resolved settings: k (a self-sized method's ceiling, a tree's depth), lookup's n, k rule
    and factor, suffix's factor, adaptive k."""
    method: str
    k: int = 1
    n: int | None = None
    k_rule: str | None = None
    factor: float | None = None
    adaptive: bool = False
    gate: object = None          # a proposers.gated.Gate: no draft while the running α̂ is low
    nodes: int | None = None        # token recycling's tree size (its registry default, or the proposer's own)
    verify: str = "token"           # "token" (token by token) or "block" (the chain verified jointly)

    @classmethod
    def resolve(cls, method: str, k: int | None = None, n: int | None = None, k_rule: str | None = None,
                adaptive: bool = False, gate=None, verify: str = "token") -> Setting:
        """The settings a run of `method` gets from make_proposer and methods.draft_cap, given these."""
        if gate is not None and method != "plain":
            return replace(cls.resolve(method, k, n, k_rule, adaptive, verify=verify), gate=gate)
        s = M.spec(method)
        d = s.defaults
        if method == "plain":
            return cls("plain")
        rule = (k_rule or d.get("k_rule")) if "k_rule" in d else None
        k = M.draft_cap(method, s.k if k is None else k, rule or M.DEFAULT_K_RULE)
        if method == "lookup":
            n = n if n is not None else (M.MATCH_MIN if rule == "match" else 3)
            return cls(method, k, n, rule, d["factor"] if rule == "match" else None, adaptive, verify=verify)
        return cls(method, k, None, None, d.get("factor"), adaptive, nodes=d.get("nodes"), verify=verify)

    @classmethod
    def of(cls, proposer, cfg) -> Setting:
        """What actually ran: the proposer's own settings and the DecodeConfig's k."""
        if proposer is None or proposer.name == "plain":
            return cls("plain")
        gate = getattr(proposer, "gate", None)
        if gate is not None:
            return replace(cls.of(proposer.inner, cfg), gate=gate)
        name = proposer.name
        if name == "lookup":
            match = proposer.k_rule == "match"
            return cls(name, cfg.k, proposer.n_min, proposer.k_rule, proposer.factor if match else None,
                       cfg.adaptive, verify=getattr(cfg, "verify", "token"))
        tree = name in ("recycle", "copy-recycle")                           # a recycling tree: its size
        nodes = getattr(getattr(proposer, "recycle", proposer), "nodes", None) if tree else None
        return cls(name, cfg.k, None, None, getattr(proposer, "factor", None), cfg.adaptive, nodes=nodes,
                   verify=getattr(cfg, "verify", "token"))

    def describe(self) -> str:
        if self.gate is not None:
            return f"{replace(self, gate=None).describe()}, gated: {self.gate.words()}"
        m, k = self.method, self.k
        if m == "plain":
            return "plain decoding"
        if m == "lookup" and self.k_rule == "match":
            return (f"lookup drafting as far as the match goes ({self.factor:g} × the matched length, at most {k} "
                    f"tokens, from a {self.n}-token match)")
        if m == "lookup":
            return f"lookup k = {k}, n = {self.n}" + (" (adaptive)" if self.adaptive else "")
        block = ", verified as one block" if self.verify == "block" else ""
        if m in ("recycle", "copy-recycle"):
            return (f"{m} (a static tree of up to {self.nodes} nodes read from the target's discarded candidates"
                    + (", or suffix's tree on a match of 2 tokens or more" if m == "copy-recycle" else "") + ")")
        if M.REGISTRY.get(m) is not None and M.REGISTRY[m].self_sized:
            return f"{m} (at most {self.factor:g} × the matched length, up to {k} nodes)"
        if M.REGISTRY.get(m) is not None and M.REGISTRY[m].tree:
            return f"{m} (tree, depth ≤ {k})"
        return (f"{m} k ≤ {k} (adaptive)" if self.adaptive else f"{m} k = {k}") + block


def mode_words(temperature: float, top_k: int = 0, top_p: float = 1.0) -> str:
    """'greedy' or 'sampled at T = 0.8' (with top-k / top-p when set): how every experiment names its mode."""
    if temperature <= 0:
        return "greedy"
    return (f"sampled at T = {temperature:g}" + (f", top-k {top_k}" if top_k else "")
            + (f", top-p {top_p:g}" if top_p < 1 else ""))


def runs_words(repeats: int) -> str:
    return "one run" if repeats == 1 else f"median of {repeats} repeats"


def _and(xs) -> str:
    xs = list(xs)
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


@dataclass(frozen=True)
class Experiment:
    """What is run: the methods at resolved settings, on which workloads (or prompt), in which mode, how many
    new tokens and repeats, against plain decoding or not, on which target ("" = the session's)."""
    settings: tuple[Setting, ...]
    workloads: tuple[str, ...]
    new_tokens: int
    temperature: float = 0.0
    top_k: int = 0
    top_p: float = 1.0
    repeats: int = 1
    against_plain: bool = True
    target: str = ""
    seeds: tuple[int, ...] = ()     # sampled runs at these seeds (each method once per seed); () = `repeats` runs

    @property
    def sampling(self) -> SamplingConfig:
        return SamplingConfig(self.temperature, self.top_k, self.top_p)

    def setting(self, method: str) -> Setting:
        return next(s for s in self.settings if s.method == method)

    def _who(self) -> str:
        s0 = self.settings[0]
        if len(self.settings) > 1 and all(replace(s, verify="token") == replace(s0, verify="token")
                                          for s in self.settings):   # one method, verified two ways
            ways = {"token": "token by token", "block": "as one block"}
            return f"{replace(s0, verify='token').describe()} verified " + _and([ways[s.verify] for s in self.settings])
        if len(self.settings) > 1 and all(replace(s, k=0) == replace(s0, k=0) for s in self.settings):
            at = "at k = " + _and([str(s.k) for s in self.settings])      # one method over a k grid
            return f"lookup n = {s0.n} {at}" if s0.method == "lookup" and s0.k_rule != "match" else f"{s0.method} {at}"
        return _and(s.describe() for s in self.settings)

    def _runs(self) -> str:
        if not self.seeds:
            return runs_words(self.repeats)
        if len(self.seeds) == 1:
            return f"one run at seed {self.seeds[0]}"
        return f"one run per seed, seeds {_and(map(str, self.seeds))}"

    def describe(self) -> str:
        who = self._who() + (" vs plain" if self.against_plain else "")
        on = _and(f"'{w}'" for w in self.workloads)
        return (f"{who}, {mode_words(self.temperature, self.top_k, self.top_p)}, {self.new_tokens} new tokens, "
                f"{self._runs()}{' each' if len(self.settings) > 1 and not self.seeds else ''}, on {on}"
                + (f", on {self.target}" if self.target else ""))
