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
from specviz.proposers import recycle as RC, suffix as S


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
    knobs: tuple[tuple[str, float], ...] = ()   # other settings a run changed (suffix's depth cap, recycle's nodes)
    verify: str = "token"           # "token" (token by token) or "block" (the chain verified jointly)

    @property
    def nodes(self) -> int | None:
        """Token recycling's tree size (a knob), None for other methods."""
        got = dict(self.knobs).get("nodes")
        return None if got is None else int(got)

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
        nodes = (("nodes", d.get("nodes") or RC.TREE_NODES),) if method in ("recycle", "copy-recycle") else ()
        return cls(method, k, None, None, d.get("factor"), adaptive, knobs=nodes, verify=verify)

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
        return cls(name, cfg.k, None, None, getattr(proposer, "factor", None), cfg.adaptive,
                   knobs=_knobs(proposer), verify=getattr(cfg, "verify", "token"))

    def describe(self, short: bool = False) -> str:
        """The settings in words; short=True: the same facts for a table cell or a chart's axis."""
        if self.gate is not None:
            plain = replace(self, gate=None).describe(short)
            return f"{plain} gated" if short else f"{plain}, gated: {self.gate.words()}"
        return self._short() if short else self._long()

    def _short(self) -> str:
        return self._short_settings() + (", block" if self.verify == "block" else "")

    def _short_settings(self) -> str:
        m, k, spec = self.method, self.k, M.REGISTRY.get(self.method)
        knobs = "".join(f", {name} {v:g}" for name, v in self.knobs)
        if m == "plain":
            return "plain"
        if m == "lookup" and self.k_rule == "match":
            return f"lookup n={self.n} ≤{k}"
        if m == "lookup":
            return f"lookup k≤{k} n={self.n} adaptive" if self.adaptive else f"lookup k={k} n={self.n}"
        if spec is not None and spec.self_sized:
            default = spec.defaults.get("factor")
            return f"{m} ≤{k}" + (f", factor {self.factor:g}" if self.factor not in (None, default) else "") + knobs
        if spec is not None and spec.tree:
            return f"{m} depth {k}" + knobs
        return (f"{m} k≤{k} adaptive" if self.adaptive else f"{m} k={k}") + knobs

    def _long(self) -> str:
        return self._long_settings() + (", verified as one block" if self.verify == "block" else "")

    def _long_settings(self) -> str:
        m, k = self.method, self.k
        if m == "plain":
            return "plain decoding"
        if m == "lookup" and self.k_rule == "match":
            return (f"lookup drafting as far as the match goes ({self.factor:g} × the matched length, at most {k} "
                    f"tokens, from a {self.n}-token match)")   # its sole rule is the machine's, said beside the dtype
        if m == "lookup":
            return f"lookup k = {k}, n = {self.n}" + (" (adaptive)" if self.adaptive else "")
        if m in ("recycle", "copy-recycle"):
            return (f"{m} (a static tree of up to {self.nodes} nodes read from the target's discarded candidates"
                    + (", or suffix's tree on a match of 2 tokens or more, and on a one-token match the part that "
                       "has kept more on this request" if m == "copy-recycle" else "") + ")")
        if M.REGISTRY.get(m) is not None and M.REGISTRY[m].self_sized:
            at_most = f"at most {self.factor:g} × the matched length, " if self.factor is not None else ""
            knobs = "".join(f", {name} {v:g}" for name, v in self.knobs)
            return f"{m} ({at_most}up to {k} nodes{knobs})"
        if M.REGISTRY.get(m) is not None and M.REGISTRY[m].tree:
            return f"{m} (tree, depth ≤ {k})"
        return f"{m} k ≤ {k} (adaptive)" if self.adaptive else f"{m} k = {k}"


SUFFIX_KNOBS = (("depth cap", "max_depth", S.MAX_TREE_DEPTH), ("min prob", "min_prob", S.MIN_TOKEN_PROB))


def suffix_knobs(**values) -> tuple[tuple[str, float], ...]:
    """A suffix tree's depth cap and minimum probability in a Setting's knobs, where they differ from the default."""
    return tuple((name, values[attr]) for name, attr, default in SUFFIX_KNOBS
                 if isinstance(values.get(attr), (int, float)) and values[attr] != default)


def _knobs(proposer) -> tuple[tuple[str, float], ...]:
    """The knobs a run changed: a suffix tree's depth cap and minimum probability, a recycled tree's nodes."""
    sfx = getattr(proposer, "copy", proposer)       # copy-recycle holds a suffix proposer and a recycled tree
    out = suffix_knobs(**{attr: getattr(sfx, attr, None) for _, attr, _ in SUFFIX_KNOBS})
    rec = getattr(proposer, "recycle", proposer)
    if getattr(rec, "name", None) == "recycle":     # (a tree of heads' max_nodes is its shape, not a setting)
        out += (("nodes", rec.nodes),)
    return out


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
    return "nothing" if not xs else xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


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

    def _grid(self) -> str | None:
        """One method over a grid of settings: 'lookup at k = 1, 2 and 3 × n = 1 and 2' (None: not a grid)."""
        ss = self.settings
        flat = lambda s: replace(s, k=0, n=None, factor=None, knobs=())  # noqa: E731
        if len(ss) < 2 or any(flat(s) != flat(ss[0]) for s in ss):
            return None
        names = dict.fromkeys(name for s in ss for name, _ in s.knobs)
        axes = [("k", [s.k for s in ss]), ("n", [s.n for s in ss]), ("factor", [s.factor for s in ss])]
        axes += [(name, [dict(s.knobs).get(name) for s in ss]) for name in names]
        axes = [(a, list(dict.fromkeys(vs))) for a, vs in axes if any(v is not None for v in vs)]
        fixed = [f"{a} = {vs[0]:g}" for a, vs in axes if len(vs) == 1]
        swept = [f"{a} = " + _and(f"{v:g}" for v in vs) for a, vs in axes if len(vs) > 1]
        if not swept:
            return None
        return " ".join([ss[0].method, *([", ".join(fixed)] if fixed else []), "at", " × ".join(swept)])

    def _who(self) -> str:
        s0 = self.settings[0]
        if len(self.settings) > 1 and all(replace(s, verify="token") == replace(s0, verify="token")
                                          for s in self.settings):   # one method, verified two ways
            ways = {"token": "token by token", "block": "as one block"}
            return f"{replace(s0, verify='token').describe()} verified " + _and([ways[s.verify] for s in self.settings])
        return self._grid() or _and(s.describe() for s in self.settings)

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
