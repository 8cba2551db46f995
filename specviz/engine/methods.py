"""The method registry: one frozen MethodSpec per method, and prompt encoding. The one place the app, the CLI,
the lessons, the bench, the report and the vLLM export learn what a method is and build it.

Adding a method is one entry in REGISTRY (a builder plus its facts). make_proposer builds any method, and falls
back to the shipped trained drafter for 'draft' when no drafter is given. The trained proposers (Medusa, EAGLE,
the distilled drafter) load from models/ (artifacts.py). The app lists available_methods(); try_methods says
why the others do not build.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import torch

from specviz.core.errors import InputError, check_choice
from specviz.core.suffix import MAX_TREE_DEPTH, MIN_TOKEN_PROB, SUFFIX_FACTOR
from specviz.engine.decode import body_pass
from specviz.engine.models import LoadedModel, check_same_tokenizer, token_id_count
from specviz.proposers.base import Plain, Proposer
from specviz.proposers.draft_model import DraftModel
from specviz.proposers.lookup import (
    FOLLOW,
    K_RULES,
    MATCH_FACTOR,
    MATCH_MIN,
    MAX_MATCH,
    RULES as LOOKUP_RULES,
    PromptLookup,
    sole_pays,
)
from specviz.proposers.recycle import TREE_NODES

DEFAULT_K_RULE = "match"   # lookup drafts as far as the match goes (issue 23 §1); "fixed" is the k/n sweep's rule
SELF_SIZED_CAP = MAX_MATCH  # their most tokens per step: vLLM's suffix_decoding_max_tree_depth default (24)
COPY, DRAFT_MODEL, HEADS, NONE = "copy", "draft model", "heads", "none"   # MethodSpec.family


@dataclass(frozen=True, eq=False)
class MethodSpec:
    """Everything specviz knows about one method. `defaults` are its settings when none are given (k: the draft
    length, or a self-sized method's ceiling, or a tree's depth); `vllm` the method it exports to (None: none)."""
    name: str
    label: str                       # one line, for menus and the CLI's help
    family: str                      # COPY | DRAFT_MODEL | HEADS | NONE (plain)
    build: Callable = field(repr=False)   # (target, options dict) -> Proposer
    tree: bool = False               # drafts a tree (one pass verifies every node) rather than a chain
    trained: bool = False            # needs trained weights (a drafter or heads)
    artifact: str | None = None      # its file in models/ (artifacts.NAMES), if any
    self_sized: bool = False         # sizes its own drafts at its default settings: k is only a ceiling
    defaults: Mapping = field(default_factory=lambda: MappingProxyType({}))
    vllm: str | None = None          # vLLM's speculative method it exports to
    vllm_keys: tuple[str, ...] = ()  # the keys of --speculative-config it fills
    chain: str | None = None         # a tree: the chain method of the same drafter (the Trees page's pair)
    bench: bool = False              # the bench runs it (copying methods untuned, trained chains tuned, trees fixed)
    offered: bool = True             # the app's method menus offer it (False: run by name, by a lab or the CLI)

    @property
    def k(self) -> int:
        """Its default k (a self-sized method's ceiling, a tree's depth)."""
        return int(self.defaults.get("k", 1))

    def sizes_own_drafts(self, k_rule: str = DEFAULT_K_RULE) -> bool:
        """Whether a run sizes its own drafts: lookup only under the match rule, suffix always."""
        return self.self_sized and ("k_rule" not in self.defaults or k_rule == "match")


def _plain(target, o):
    return Plain()


def _lookup(target, o):
    n, n_min, n_max, k_rule = o.get("n"), o.get("n_min"), o.get("n_max"), o.get("k_rule", DEFAULT_K_RULE)
    rule = o.get("lookup_rule", "recent")
    if n is None:
        n = MATCH_MIN if k_rule == "match" else 3
    lo, hi = ((n_min or 1), (n_max or max(n, n_min or 1))) if (n_min is not None or n_max is not None) else (n, n)
    if lo < 1:
        raise InputError(f"n must be >= 1, got {lo}")
    if lo > hi:
        raise InputError(f"n-min ({lo}) must not exceed n-max ({hi})")
    check_choice("lookup rule", rule, LOOKUP_RULES)
    check_choice("lookup k rule", k_rule, K_RULES)
    if k_rule == "match":  # the shortest match is n (or n-min); the longest counted is n-max, else MAX_MATCH
        factor = o.get("spec_factor")
        sole, why = lookup_sole(target)
        pr = PromptLookup(n_min=n_min or n, n_max=n_max, rule=rule, k_rule="match", sole=sole,
                          follow=o.get("follow", FOLLOW), **({} if factor is None else {"factor": factor}))
        pr.sole_reason = why
        return pr
    return PromptLookup(n_min=lo, n_max=hi, rule=rule)


def lookup_sole(target) -> tuple[bool, str]:
    """Whether the registry's lookup takes the sole rule on this target's machine and dtype, and why: by what a verify
    pass of 1 + 24 rows costs here (LoadedModel.v_wide, autodtype's timing; proposers/lookup.sole_pays)."""
    return sole_pays(target.v_wide() if hasattr(target, "v_wide") else None)


def _suffix(target, o):
    from specviz.proposers.suffix import SuffixProposer
    opts = dict(o.get("suffix") or {})
    if o.get("spec_factor") is not None:
        opts["factor"] = o["spec_factor"]
    return SuffixProposer(**opts)


def _draft(target, o):
    drafter = o.get("drafter") if o.get("drafter") is not None else trained_drafter(target)
    if drafter is None:
        raise InputError("no draft model for this target: none was given and the trained drafter is not "
                         "in models/ (python -m specviz train drafter)")
    check_same_tokenizer(target.tokenizer, drafter.tokenizer, target.vocab_size, drafter.vocab_size)
    greedy = bool(o.get("greedy_draft"))
    if target.vocab_size == drafter.vocab_size:
        return DraftModel(drafter.model, name="draft", greedy_draft=greedy, body=body_of(drafter.model))
    return DraftModel(drafter.model, name="draft", vocab=target.vocab_size, n_ids=token_id_count(target.tokenizer),
                      greedy_draft=greedy, body=body_of(drafter.model))


def _self_draft(target, o):
    """The target's first N layers and its output layer, shared, as an untrained drafter (N: o["layers"], else
    half the target's layers)."""
    from specviz.proposers.draft_model import first_layers
    n = o.get("layers")
    n = max(1, target.model.config.num_hidden_layers // 2) if n is None else n
    model = first_layers(target.model, int(n))
    return DraftModel(model, name="self-draft", greedy_draft=bool(o.get("greedy_draft")), body=body_of(model))


def body_of(model: torch.nn.Module) -> Callable:
    """A draft model's body pass as the decoder runs the target's (decode.body_pass): (1, t) ids, cache -> (1, t, H)."""
    dec = model.get_decoder()
    return lambda x, cache: body_pass(dec, (), input_ids=x, cache=cache, use_cache=True)[0]


def _artifact(name: str):
    from specviz.engine import artifacts
    if not artifacts.available()[name]:
        raise InputError(f"no trained {name} artifact in models/ (python -m specviz train {name})")
    return artifacts


def _medusa(tree: bool):
    return lambda target, o: _artifact("medusa").load_medusa(target, tree=tree)


def _eagle(kind: str, tree: bool):
    return lambda target, o: _artifact(kind).load_eagle(target, tree=tree, kind=kind)


def _hybrid(target, o):
    from specviz.proposers.hybrid import Hybrid
    n = o.get("n")
    return Hybrid(_artifact("eagle").load_eagle(target), n_min=o.get("n_min") or 2,
                  n_max=o.get("n_max") or max(n or 3, 2))


# The registry's default, used where no bench of the machine's kind is committed: copy-recycle met issue 35's rule
# for a training-free default (>= 0.95x plain on every bench workload, >= 0.95x the better of its parts on each kind;
# scripts/default_rule.py, bench/results/cpu-avx512-amx/default_rule.json, 2026-12-04). Where a kind's bench is
# committed, bench/results.default_method reads it instead; Home renders which and why.
DEFAULT_METHOD = "copy-recycle"
# copy-recycle always copies from a match of at least COPY_MIN_MATCH tokens; a one-token match drafts from the part
# that kept more on the request's earlier one-token matches (core/copychoice.py)
COPY_MIN_MATCH = 2


def _recycle(kind: str):
    def build(target, o):
        from specviz.proposers.recycle import Recycle
        vocab = 1 if target is None else target.vocab_size   # no target: check_settings checks the settings only
        rec = Recycle(vocab, chain=kind == "chain", **(o.get("recycle") or {}))
        if kind != "copy":
            return rec
        from specviz.proposers.copy_recycle import CopyRecycle
        union = {"union": o["union"]} if o.get("union") else {}     # None: CopyRecycle's default
        return CopyRecycle(_suffix(target, o), rec, always_copy=COPY_MIN_MATCH, **union)
    return build


def _spec(name, label, family, build, **facts) -> MethodSpec:
    facts["defaults"] = MappingProxyType(dict(facts.get("defaults", {})))
    return MethodSpec(name, label, family, build, **facts)


_HEAD_KEYS = ("model", "num_speculative_tokens")
REGISTRY: dict[str, MethodSpec] = {s.name: s for s in (
    _spec("plain", "plain decoding (no draft)", NONE, _plain),
    _spec("lookup", "n-gram prompt lookup", COPY, _lookup, self_sized=True, bench=True,
          defaults={"k": SELF_SIZED_CAP, "n": MATCH_MIN, "k_rule": "match", "factor": MATCH_FACTOR,
                    "rule": "recent"},
          vllm="ngram", vllm_keys=("num_speculative_tokens", "prompt_lookup_min", "prompt_lookup_max")),
    _spec("suffix", "suffix decoding: a tree of the most frequent continuations, this request and earlier ones",
          COPY, _suffix, tree=True, self_sized=True, bench=True,
          defaults={"k": SELF_SIZED_CAP, "factor": SUFFIX_FACTOR, "max_depth": MAX_TREE_DEPTH,
                    "min_prob": MIN_TOKEN_PROB},
          vllm="suffix", vllm_keys=("num_speculative_tokens", "suffix_decoding_max_tree_depth",
                                    "suffix_decoding_max_cached_requests", "suffix_decoding_max_spec_factor",
                                    "suffix_decoding_min_token_prob")),
    _spec("draft", "separate draft model", DRAFT_MODEL, _draft, trained=True, artifact="drafter", bench=True,
          defaults={"k": 4}, vllm="draft_model", vllm_keys=_HEAD_KEYS),
    # self-speculation by cutting the target short: no weights to train or load, no menu (Break-even's drafter lab)
    _spec("self-draft", "the target's own first N layers and its output layer as an untrained drafter (layer "
          "truncation; N = half the layers unless given)", DRAFT_MODEL, _self_draft, offered=False,
          defaults={"k": 4}),
    _spec("medusa", "Medusa heads (trained for the default model)", HEADS, _medusa(False), trained=True,
          artifact="medusa", bench=True, defaults={"k": 4}, vllm="medusa", vllm_keys=_HEAD_KEYS),
    _spec("eagle", "EAGLE-style head (trained for the default model)", HEADS, _eagle("eagle", False), trained=True,
          artifact="eagle", bench=True, defaults={"k": 4}, vllm="eagle", vllm_keys=_HEAD_KEYS),
    # the trees run at one fixed shape (k = their depth): Medusa's 8-node static tree (depth <= 4, one level per
    # head); EAGLE-2's dynamic tree of 12 nodes, depth <= 5, width 3 (chosen by scripts/tree_shape.py)
    _spec("medusa-tree", "Medusa heads drafting a sparse tree of candidates", HEADS, _medusa(True), tree=True,
          trained=True, artifact="medusa", chain="medusa", bench=True, defaults={"k": 4}),
    _spec("eagle-tree", "EAGLE head drafting EAGLE-2's dynamic tree", HEADS, _eagle("eagle", True), tree=True,
          trained=True, artifact="eagle", chain="eagle", bench=True, defaults={"k": 5}),
    _spec("hybrid", "prompt lookup when the context has a match, else the EAGLE head", HEADS, _hybrid,
          trained=True, artifact="eagle", defaults={"k": 4, "n_min": 2, "n_max": 3}),
    _spec("eagle3", "EAGLE-3-style head reading a low, a middle and a high layer of the target", HEADS,
          _eagle("eagle3", False), trained=True, artifact="eagle3", bench=True, defaults={"k": 4}, vllm="eagle3",
          vllm_keys=_HEAD_KEYS),
    _spec("eagle3-tree", "EAGLE-3-style head drafting EAGLE-2's dynamic tree", HEADS, _eagle("eagle3", True),
          tree=True, trained=True, artifact="eagle3", chain="eagle3", bench=True, defaults={"k": 5}),
    # token recycling (Luo et al. 2024): no weights, the target's own discarded candidates; vLLM 0.33 has none
    _spec("recycle", "token recycling: a static tree from the target's own discarded candidates (no weights)",
          COPY, _recycle("tree"), tree=True, self_sized=True, bench=True,
          defaults={"k": SELF_SIZED_CAP, "nodes": TREE_NODES}),
    _spec("recycle-chain", "token recycling as a chain: the target's top candidate after each token, k deep",
          COPY, _recycle("chain"), defaults={"k": 4}),
    _spec("copy-recycle", "suffix decoding's tree when the context offers a match, else the recycling tree "
          "(no weights)", COPY, _recycle("copy"), tree=True, self_sized=True, bench=True,
          defaults={"k": SELF_SIZED_CAP, "nodes": TREE_NODES}),
)}


def spec(method: str) -> MethodSpec:
    """The registry's entry for `method`; InputError naming the choices for an unknown one."""
    check_choice("method", method, REGISTRY)
    return REGISTRY[method]


def names(**facts) -> list[str]:
    """The methods whose facts match, in registry order: names(tree=True), names(family=COPY, bench=True)."""
    return [m for m, s in REGISTRY.items() if all(getattr(s, f) == v for f, v in facts.items())]


def tree_pairs() -> dict[str, tuple[str, str]]:
    """{chain: (chain, its tree)} for the drafters that draft both ways (the Trees page, its script)."""
    return {s.chain: (s.chain, s.name) for s in REGISTRY.values() if s.tree and s.chain}


def to_vllm() -> dict[str, str]:
    """{specviz method: vLLM speculative method} for the methods that export."""
    return {m: s.vllm for m, s in REGISTRY.items() if s.vllm}


def self_sized(method: str, k_rule: str = DEFAULT_K_RULE) -> bool:
    """Methods that size their own drafts (lookup's match rule, suffix): k is only their ceiling."""
    return method in REGISTRY and REGISTRY[method].sizes_own_drafts(k_rule)


def draft_cap(method: str, k: int, k_rule: str = DEFAULT_K_RULE) -> int:
    """The k a run of `method` is given: SELF_SIZED_CAP for methods that size their own drafts (a page's or
    a sweep's k applies to the fixed rules), else k."""
    return SELF_SIZED_CAP if self_sized(method, k_rule) else k


def trained_available() -> dict:
    """Which trained artefacts ship in models/ (artifacts.available, the one place that knows)."""
    from specviz.engine import artifacts

    return dict(artifacts.available())


def trained_drafter(target: LoadedModel) -> LoadedModel | None:
    """The shipped distilled drafter loaded for `target`; None when models/ has none.

    The loader warns when the drafter was trained for another checkpoint and refuses another
    hidden size (artifacts.load_drafter)."""
    from specviz.engine import artifacts

    if not artifacts.available().get("drafter"):
        return None
    return artifacts.load_drafter(target)


def available_methods(drafter_available: bool = True) -> list[str]:
    """The registry's methods whose artifact ships ('draft' also when a drafter can be given)."""
    from specviz.engine import artifacts

    shipped = dict(artifacts.available())
    return [m for m, s in REGISTRY.items() if s.offered and (s.artifact is None or shipped.get(s.artifact)
            or (s.family == DRAFT_MODEL and drafter_available))]


def make_proposer(method: str, target: LoadedModel, n: int | None = None, n_min: int | None = None,
                  n_max: int | None = None, drafter: LoadedModel | None = None,
                  lookup_rule: str = "recent", k_rule: str = DEFAULT_K_RULE, spec_factor: float | None = None,
                  suffix: dict | None = None, greedy_draft: bool = False, recycle: dict | None = None,
                  gate=None, layers: int | None = None, union: str | None = None) -> Proposer:
    """The proposer of `method` for `target`, built by its registry entry. 'draft' uses `drafter`, else the
    shipped trained drafter (greedy_draft: it drafts its argmax even when sampling, vLLM's greedy
    draft_sample_method).

    lookup_rule (method lookup): 'recent' = specviz's most recent match, 'earliest' = vLLM's rule.
    k_rule (lookup): 'match' (the default) = as many as the match length justifies (spec_factor x match
    length, at most k: give it draft_cap()'s k), 'fixed' = k tokens per match. n (lookup): the tail matched
    (fixed, default 3) or the shortest match that drafts (match, default MATCH_MIN). suffix (method suffix):
    SuffixProposer's settings (max_depth, min_prob, min_match, cache: a SessionCache shared by a session's
    requests); spec_factor too. recycle (recycle, recycle-chain, copy-recycle): Recycle's settings (nodes: the
    tree's size, top_k, dynamic). union (copy-recycle): when a one-token match drafts both parts' trees
    merged instead of the rule's choice: 'never' (None: the default), 'greedy', 'always' (docs/recycling.md).
    gate (a proposers.gated.Gate): no draft while
    the method's running α̂ is below the gate's threshold (the capstone's gated lookup). layers (self-draft): how
    many of the target's first layers draft."""
    built = spec(method).build(target, dict(n=n, n_min=n_min, n_max=n_max, drafter=drafter, lookup_rule=lookup_rule,
                                            k_rule=k_rule, spec_factor=spec_factor, suffix=suffix,
                                            greedy_draft=greedy_draft, recycle=recycle, layers=layers,
                                            union=union))
    if gate is None or method == "plain":
        return built
    from specviz.proposers.gated import Gated
    return Gated(built, gate)


def check_verify(method: str, verify: str) -> None:
    """Block verification takes chains (core/block.py); a tree method, or an unknown mode, is refused."""
    from specviz.engine.decode import VERIFY_MODES

    check_choice("verify mode", verify, VERIFY_MODES)
    if verify == "block" and spec(method).tree:
        raise InputError(f"block verification takes a chain of drafts, and {method} drafts a tree: use token-wise "
                         "verification with it (--verify token)")


def check_settings(method: str, **settings) -> None:
    """Refuse an unknown method or bad settings before any model loads (the CLI): a copying method is built
    without a target, which raises the same InputError make_proposer would."""
    s = spec(method)
    if s.family in (COPY, NONE):
        s.build(None, dict(dict(lookup_rule="recent", k_rule=DEFAULT_K_RULE), **settings))


def try_methods(target: LoadedModel, drafter: LoadedModel | None, n: int | None = None) -> tuple[list[str], dict]:
    """(methods that build a proposer for this target, {method: why not} for the others): the offered ones."""
    ok, why = [], {}
    for m, s in REGISTRY.items():
        if m == "plain" or not s.offered:
            continue
        try:
            make_proposer(m, target, n=n, drafter=drafter)
            ok.append(m)
        except Exception as e:  # noqa: BLE001 - shown to the user as the reason
            why[m] = str(e) or type(e).__name__
    return ok, why


def encode_prompt(tokenizer, text: str, chat: bool) -> list[int]:
    """Text -> token ids; with chat=True, wrapped in the model's chat template."""
    if not text or not text.strip():
        raise InputError("the prompt is empty")
    if chat:
        out = tokenizer.apply_chat_template([{"role": "user", "content": text}],
                                            add_generation_prompt=True, return_tensors="pt")
        ids = out["input_ids"] if not torch.is_tensor(out) else out
        return ids[0].tolist()
    return tokenizer(text)["input_ids"]
