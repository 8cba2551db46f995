"""Method names -> proposers, and prompt encoding: the one place the app, CLI, lessons and bench build a run.

The trained proposers (Medusa, EAGLE, the distilled drafter) load from models/ (artifacts.py);
make_proposer builds any method, and falls back to the shipped trained drafter for 'draft' when no
drafter is given. The app lists available_methods(); try_methods says why the others do not build.
"""
from __future__ import annotations

import torch

from specviz.core.errors import InputError
from specviz.engine.models import LoadedModel, check_same_tokenizer, token_id_count
from specviz.proposers.base import Plain, Proposer
from specviz.proposers.draft_model import DraftModel
from specviz.proposers.lookup import K_RULES, MATCH_FACTOR, MATCH_MIN, MAX_MATCH, RULES as LOOKUP_RULES, PromptLookup

METHODS = {
    "plain": "plain decoding (no draft)",
    "lookup": "n-gram prompt lookup",
    "suffix": "suffix decoding: a tree of the most frequent continuations, this request and earlier ones",
    "draft": "separate draft model",
    "medusa": "Medusa heads (trained for the default model)",
    "eagle": "EAGLE-style head (trained for the default model)",
    "medusa-tree": "Medusa heads drafting a sparse tree of candidates",
    "eagle-tree": "EAGLE head drafting EAGLE-2's dynamic tree",
    "hybrid": "prompt lookup when the context has a match, else the EAGLE head",
    "eagle3": "EAGLE-3-style head reading a low, a middle and a high layer of the target",
    "eagle3-tree": "EAGLE-3-style head drafting EAGLE-2's dynamic tree",
    "recycle": "token recycling: a static tree from the target's own discarded candidates (no weights)",
    "recycle-chain": "token recycling as a chain: the target's top candidate after each token, k deep",
    "copy-recycle": "suffix decoding's tree when the context offers a match, else the recycling tree (no weights)",
}
# methods that draft a tree: token-wise verification only (block verification takes chains)
TREE_METHODS = {"suffix", "medusa-tree", "eagle-tree", "eagle3-tree", "recycle", "copy-recycle"}
NEEDS_ARTIFACT = {"medusa", "eagle", "hybrid", "medusa-tree", "eagle-tree", "eagle3", "eagle3-tree"}  # need models/
ARTIFACT = {"hybrid": "eagle", "medusa-tree": "medusa", "eagle-tree": "eagle",
            "eagle3-tree": "eagle3"}  # method -> artifact, where they differ


DEFAULT_K_RULE = "match"   # lookup drafts as far as the match goes (issue 23 §1); "fixed" is the k/n sweep's rule
SELF_SIZED_CAP = MAX_MATCH  # their most tokens per step: vLLM's suffix_decoding_max_tree_depth default (24)
LOOKUP_DEFAULT = (f"as far as the match goes: {MATCH_FACTOR:g} × the matched length, at most {SELF_SIZED_CAP} "
                  f"tokens, from a {MATCH_MIN}-token match on")   # the default lookup's rule, in words


COPY_MIN_MATCH = 2   # copy-recycle copies from a match of at least 2 tokens; shorter ones are left to recycling


def check_verify(method: str, verify: str) -> None:
    """Block verification takes chains (core/block.py); a tree method, or an unknown mode, is refused."""
    from specviz.engine.decode import VERIFY_MODES

    if verify not in VERIFY_MODES:
        raise InputError(f"unknown verify mode '{verify}' (choose from: {', '.join(VERIFY_MODES)})")
    if verify == "block" and method in TREE_METHODS:
        raise InputError(f"block verification takes a chain of drafts, and {method} drafts a tree: use token-wise "
                         "verification with it (--verify token)")


def self_sized(method: str, k_rule: str = DEFAULT_K_RULE) -> bool:
    """Methods that size their own drafts (lookup's match rule, suffix): k is only their ceiling."""
    return method in ("suffix", "recycle", "copy-recycle") or (method == "lookup" and k_rule == "match")


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
    from specviz.engine import artifacts

    shipped = dict(artifacts.available())
    shipped.update({m: shipped[a] for m, a in ARTIFACT.items()})
    return [m for m in METHODS if (m != "draft" or drafter_available or shipped["drafter"])
            and (m not in NEEDS_ARTIFACT or shipped[m])]


def make_proposer(method: str, target: LoadedModel, n: int | None = None, n_min: int | None = None,
                  n_max: int | None = None, drafter: LoadedModel | None = None,
                  lookup_rule: str = "recent", k_rule: str = DEFAULT_K_RULE, spec_factor: float | None = None,
                  suffix: dict | None = None, recycle: dict | None = None) -> Proposer:
    """The proposer of `method` for `target`. 'draft' uses `drafter`, else the shipped trained drafter.

    lookup_rule (method lookup): 'recent' = specviz's most recent match, 'earliest' = vLLM's rule.
    k_rule (lookup): 'match' (the default) = as many as the match length justifies (spec_factor x match
    length, at most k: give it draft_cap()'s k), 'fixed' = k tokens per match. n (lookup): the tail matched
    (fixed, default 3) or the shortest match that drafts (match, default MATCH_MIN). suffix (method suffix):
    SuffixProposer's settings (max_depth, min_prob, min_match, cache: a SessionCache shared by a session's
    requests); spec_factor too. recycle (recycle, recycle-chain, copy-recycle): Recycle's settings (nodes: the
    tree's size, top_k)."""
    if method == "plain":
        return Plain()
    if method in ("recycle", "recycle-chain", "copy-recycle"):
        from specviz.proposers.recycle import Recycle
        rec = Recycle(target.vocab_size, chain=method == "recycle-chain", **(recycle or {}))
        if method != "copy-recycle":
            return rec
        from specviz.proposers.copy_recycle import CopyRecycle
        from specviz.proposers.suffix import SuffixProposer
        opts = dict(min_match=COPY_MIN_MATCH, **(suffix or {}))
        if spec_factor is not None:
            opts["factor"] = spec_factor
        return CopyRecycle(SuffixProposer(**opts), rec)
    if method == "suffix":
        from specviz.proposers.suffix import SuffixProposer
        opts = dict(suffix or {})
        if spec_factor is not None:
            opts["factor"] = spec_factor
        return SuffixProposer(**opts)
    if method == "lookup":
        if n is None:
            n = MATCH_MIN if k_rule == "match" else 3
        if n_min is not None or n_max is not None:
            lo, hi = (n_min or 1), (n_max or max(n, n_min or 1))
        else:
            lo = hi = n
        if lo < 1:
            raise InputError(f"n must be >= 1, got {lo}")
        if lo > hi:
            raise InputError(f"n-min ({lo}) must not exceed n-max ({hi})")
        if lookup_rule not in LOOKUP_RULES:
            raise InputError(f"unknown lookup rule '{lookup_rule}' (choose from: {', '.join(LOOKUP_RULES)})")
        if k_rule not in K_RULES:
            raise InputError(f"unknown lookup k rule '{k_rule}' (choose from: {', '.join(K_RULES)})")
        if k_rule == "match":  # the shortest match is n (or n-min); the longest counted is n-max, else MAX_MATCH
            return PromptLookup(n_min=n_min or n, n_max=n_max, rule=lookup_rule, k_rule="match",
                                **({} if spec_factor is None else {"factor": spec_factor}))
        return PromptLookup(n_min=lo, n_max=hi, rule=lookup_rule)
    if method == "draft":
        if drafter is None:
            drafter = trained_drafter(target)
        if drafter is None:
            raise InputError("no draft model for this target: none was given and the trained drafter is not "
                             "in models/ (python -m specviz train drafter)")
        check_same_tokenizer(target.tokenizer, drafter.tokenizer, target.vocab_size, drafter.vocab_size)
        if target.vocab_size == drafter.vocab_size:
            return DraftModel(drafter.model, name="draft")
        return DraftModel(drafter.model, name="draft", vocab=target.vocab_size,
                          n_ids=token_id_count(target.tokenizer))
    if method in NEEDS_ARTIFACT:
        from specviz.engine import artifacts
        name = ARTIFACT.get(method, method)
        if not artifacts.available()[name]:
            raise InputError(f"no trained {name} artifact in models/ (python -m specviz train {name})")
        if method == "hybrid":
            from specviz.proposers.hybrid import Hybrid
            return Hybrid(artifacts.load_eagle(target), n_min=n_min or 2, n_max=n_max or max(n or 3, 2))
        if name == "medusa":
            return artifacts.load_medusa(target, tree=method.endswith("-tree"))
        return artifacts.load_eagle(target, tree=method.endswith("-tree"), kind=name)
    raise InputError(f"unknown method '{method}' (choose from: {', '.join(METHODS)})")


def try_methods(target: LoadedModel, drafter: LoadedModel | None, n: int | None = None) -> tuple[list[str], dict]:
    """(methods that build a proposer for this target, {method: why not} for the others)."""
    ok, why = [], {}
    for m in METHODS:
        if m == "plain":
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
